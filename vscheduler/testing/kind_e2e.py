"""Volcano's e2e runs as builder items: the kind cluster they run on, the objects Volcano's job
controller makes of an e2e vcjob, and the cluster over time (create, wait, create...).

    cluster = KindCluster(CI_POLICY)
    cluster.create(*vcjob("j1", replicas=2, minimum=1))
    cluster.settle()
    assert cluster.running("j1") == 2

The cluster is `hack/e2e-kind-config.yaml`'s on the CI's `ubuntu-24.04` runner (4 CPUs and
16 GiB, which every kind node reports): `integration-control-plane`, tainted, its system pods
holding 950m and 290Mi (kube-apiserver 250m, kube-controller-manager 200m, kube-scheduler 100m,
etcd 100m and 100Mi, two coredns of 100m and 70Mi, kindnet 100m and 50Mi; Volcano's own pods,
which the chart places there, request nothing), and four workers, `kindnet` holding 100m and
50Mi on each; every node has its `kubernetes.io/hostname` label. The system pods and the e2e's
placeholders are another scheduler's pods: they hold room and are no job's, as the converter
reads such pods (the `pod` builder would give them a job of their own).
Must not: decide anything a scenario asserts; it builds the cluster and runs cycles.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from vscheduler.model.cluster import ClusterSnapshot, complete_jobs
from vscheduler.model.facts import QueueFacts, TaskFacts
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.testing.builders import (
    Item,
    NodeBuilder,
    PodBuilder,
    QueueBuilder,
    node,
    pod,
    podgroup,
    snapshot,
)
from vscheduler.testing.scenario import run

CI_TIERS = """\
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
"""
"""The tiers of `installer/helm/chart/volcano/config/volcano-scheduler-ci.conf` (its
`network-topology-aware` has no opinion in a cluster without HyperNodes)."""
CI_POLICY = 'actions: "enqueue, allocate, backfill, reclaim, preempt"\n' + CI_TIERS
"""The policy of the e2e ConfigMap, `volcano-system/integration-scheduler-configmap`."""

HOST = "kubernetes.io/hostname"
PREEMPTABLE = "volcano.sh/preemptable"
CONTROL_PLANE = "integration-control-plane"
WORKERS = tuple(f"integration-worker{i if i > 1 else ''}" for i in range(1, 5))
NODE_MILLICPU, NODE_MEBIBYTES = 4000, 16 * 1024
KINDNET_MILLICPU, KINDNET_MEBIBYTES = 100, 50


def kind_cluster() -> list[Item]:
    """The kind cluster: a tainted control plane and four workers, the system pods on them."""
    items: list[Item] = [
        kind_node(CONTROL_PLANE).taint("node-role.kubernetes.io/control-plane"),
        system_pod("kube-system", "control-plane-pods", CONTROL_PLANE, 950, 290),
    ]
    for worker in WORKERS:
        items.append(kind_node(worker))
        items.append(
            system_pod(
                "kube-system", f"kindnet-{worker}", worker, KINDNET_MILLICPU, KINDNET_MEBIBYTES
            )
        )
    return items


def kind_node(name: str) -> NodeBuilder:
    return (
        node(name)
        .resources(cpu=f"{NODE_MILLICPU}m", memory=f"{NODE_MEBIBYTES}Mi")
        .label(HOST, name)
    )


def system_pod(namespace: str, name: str, on: str, millicpu: int, mebibytes: int) -> TaskFacts:
    """A running pod of another scheduler: it holds room and is no job's."""
    built = pod(name, namespace).scheduler("default-scheduler")
    built = built.requests(cpu=f"{millicpu}m", memory=f"{mebibytes}Mi").on(on)
    return dataclasses.replace(built.build(), job="")


def placeholders(count: int, millicpu: int, mebibytes: int) -> list[Item]:
    """`InitTestContext`'s placeholders for `NodesNumLimit: count` and `NodesResourceLimit`
    (`util.go` `setPlaceHolderForSchedulerTesting`): a pod on every worker holding all its free
    room but, on the first `count` workers, `millicpu` and `mebibytes`."""
    free_cpu = NODE_MILLICPU - KINDNET_MILLICPU
    free_memory = NODE_MEBIBYTES - KINDNET_MEBIBYTES
    items: list[Item] = []
    for i, worker in enumerate(WORKERS):
        left_cpu, left_memory = (millicpu, mebibytes) if i < count else (0, 0)
        held_cpu, held_memory = free_cpu - left_cpu, free_memory - left_memory
        items.append(system_pod("e2e", f"{worker}-placeholder", worker, held_cpu, held_memory))
    return items


def vcjob(
    name: str,
    *,
    replicas: int,
    minimum: int,
    priority: int = 0,
    q: str = "default",
    millicpu: int = 1000,
    mebibytes: int = 0,
    labels: dict[str, str] | None = None,
    shape: Callable[[PodBuilder], PodBuilder] = lambda p: p,
) -> list[Item]:
    """The PodGroup and pods Volcano's job controller and webhook make of a one-task e2e
    `JobSpec` (task `<job>-task-0`): a PodGroup named as the job, Pending, `minMember` the
    job's `minAvailable`, `minTaskMember` the replicas, `minResources` the first `minMember`
    pods' requests (`calcPGMinResources`), the priority class's value; one pod per replica,
    `<job>-<task>-<i>`, with the task-spec annotation, the task's labels and the job's priority
    (the controller gives a pod without a class the job's). `mebibytes` 0: cpu only."""
    task = f"{name}-task-0"
    request = {"cpu": f"{millicpu}m"}
    total = {"cpu": f"{millicpu * minimum}m"}
    if mebibytes:
        request["memory"], total["memory"] = f"{mebibytes}Mi", f"{mebibytes * minimum}Mi"
    group = (
        podgroup(name)
        .controlled()
        .queue(q)
        .priority(priority)
        .min_member(minimum)
        .min_task_member(**{task: replicas})
        .min_resources(**total)
    )
    pods: list[Item] = []
    for i in range(replicas):
        built = pod(f"{name}-{task}-{i}").group(name).role(task).requests(**request)
        pods.append(shape(built.priority(priority).labels(**(labels or {}))))
    return [group, *pods]


class KindCluster:
    """The e2e cluster over time: objects created between waits, each wait a few cycles, and
    Volcano's job controller recreating (Pending, same name) every pod of a job that went."""

    def __init__(self, policy: str, *items: Item) -> None:
        self.policy = policy
        self.snap = snapshot(*kind_cluster(), *items)
        self.replicas: dict[str, TaskFacts] = {}
        self.evicted: list[str] = []

    def create(self, *items: Item) -> None:
        """The objects of `items` created (a queue given again: updated)."""
        more = snapshot(*items)
        self.replicas.update({uid: t for uid, t in more.tasks.items() if t.group_name})
        tasks = {**self.snap.tasks, **more.tasks}
        jobs = complete_jobs(tasks, {**self.snap.jobs, **more.jobs})
        queues = dict(self.snap.queues)
        for item in items:
            facts = item.build() if isinstance(item, QueueBuilder) else item
            if isinstance(facts, QueueFacts):
                queues[facts.name] = facts
        self.snap = dataclasses.replace(self.snap, tasks=tasks, jobs=jobs, queues=queues)

    def settle(self, cycles: int = 4) -> None:
        """`cycles` cycles: the wait of an e2e step."""
        outcomes = run(self.snap, policy=self.policy, cycles=cycles, between=self._recreate)
        self.evicted += [key for outcome in outcomes for key in outcome.evictions]
        self.snap = self._recreate(cycles, outcomes[-1].snapshot_after)

    def _recreate(self, _: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        gone = {uid: t for uid, t in self.replicas.items() if uid not in snap.tasks}
        if not gone:
            return snap
        tasks = {**snap.tasks, **gone}
        return dataclasses.replace(snap, tasks=tasks, jobs=complete_jobs(tasks, snap.jobs))

    def running(self, job: str) -> int:
        """How many pods of `job` (its PodGroup's name) are Running."""
        return self._count(job, TaskStatus.RUNNING)

    def pending(self, job: str) -> int:
        """How many pods of `job` wait, not placed."""
        return self._count(job, TaskStatus.PENDING)

    def _count(self, job: str, status: TaskStatus) -> int:
        tasks = self.snap.tasks.values()
        return sum(1 for t in tasks if t.group_name == job and t.status is status)

    def evicted_of(self, job: str) -> list[str]:
        """The pods of `job` evicted so far, in order."""
        return [key for key in self.evicted if key.startswith(f"default/{job}-")]

    def phase(self, job: str) -> PodGroupPhase:
        """The PodGroup's phase."""
        return self.snap.jobs[f"default/{job}"].phase

    def podgroups(self, q: str, phase: PodGroupPhase) -> int:
        """How many PodGroups of queue `q` are in `phase` (`GetPodGroupStatistics`)."""
        jobs = self.snap.jobs.values()
        return sum(1 for j in jobs if not j.synthetic and j.queue == q and j.phase is phase)
