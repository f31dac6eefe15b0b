"""The kind cluster, scheduler policy and Job controller Volcano's e2e tests run against, for the
`test_volcano_e2e_*` transcriptions.

The cluster (`hack/e2e-kind-config.yaml`): one control-plane node, tainted
`node-role.kubernetes.io/control-plane:NoSchedule` (`util.ClusterSize` skips tainted nodes, and no
test pod tolerates it), and four workers. Kind nodes report the host's CPUs; here every node has
2 CPU and 8Gi, and the workers carry no system pod's request (kindnet's 100m is left out), so
`util.ClusterSize(ctx, oneCPU)` is 8 and `ClusterSize(ctx, halfCPU)` is 16.

The policy is the e2e suite's scheduler ConfigMap, `installer/helm/chart/volcano/config/
volcano-scheduler-ci.conf` (`hack/run-e2e-kind.sh` installs the chart with it), less its last
plugin, `network-topology-aware`, included: with no HyperNode it neither filters nor scores
(its normal-pod HyperNode binpacking has no HyperNode to pack).

A Volcano `Job` (vcjob) is what its job controller makes of it: one PodGroup named after the job
(Volcano's is `<job>-<uid>`), controlled by the job, with `minMember` the job's `minAvailable`
(`util.CreateJob`: the sum of the tasks' `Min`), the job's queue and annotations, and
`minResources` the cpu of the first `minAvailable` pods in task order (`calcPGMinResources`;
every task's `minAvailable` is its replicas, as the webhook sets it; the `pods` and
`count/pods` entries are left out); and one pod per task replica, `<job>-<task>-<i>` (a task
unnamed in the e2e spec is `<job>-task-<n>`), in the PodGroup, with the task's
`volcano.sh/task-spec` annotation. The controller creates the pods only once the PodGroup has
left Pending (`syncJob`), so here they arrive in the cycle after the one that admitted it.
Deleting a job removes its PodGroup and its pods at once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from vscheduler.model.cluster import ClusterSnapshot, complete_jobs
from vscheduler.model.facts import TaskFacts
from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.builders import Item, PodBuilder, node, pod, podgroup, snapshot
from vscheduler.testing.kind_e2e import CI_POLICY
from vscheduler.testing.scenario import Outcome, run

POLICY = CI_POLICY
"""`volcano-scheduler-ci.conf` (`kind_e2e.CI_POLICY`)."""

WORKERS = ("kind-worker", "kind-worker2", "kind-worker3", "kind-worker4")
ONE_CPU_SLOTS = 8
"""`util.ClusterSize(ctx, oneCPU)` on this cluster."""
HALF_CPU_SLOTS = 16
"""`util.ClusterSize(ctx, halfCPU)` on this cluster."""


def cluster() -> list[Item]:
    """The control-plane node (tainted) and the four workers, 2 CPU and 8Gi each."""
    control = node("kind-control-plane").resources(cpu="2", memory="8Gi")
    nodes: list[Item] = [control.taint("node-role.kubernetes.io/control-plane")]
    return nodes + [node(name).resources(cpu="2", memory="8Gi") for name in WORKERS]


@dataclasses.dataclass(frozen=True, slots=True)
class Task:
    """An e2e `TaskSpec`: `replicas` pods requesting `cpu` each (None: no request, BestEffort)."""

    replicas: int
    cpu: str | None = "1"
    name: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class VcJob:
    """An e2e `JobSpec` as its job controller turns it into a PodGroup and pods."""

    name: str
    tasks: tuple[Task, ...]
    min_available: int
    annotations: Mapping[str, str] = dataclasses.field(default_factory=dict)
    queue: str = "default"

    def task_name(self, index: int) -> str:
        return self.tasks[index].name or f"{self.name}-task-{index}"

    def pod_names(self, task: int | None = None) -> list[str]:
        """`<job>-<task>-<i>` for every replica (of one task, or of all)."""
        indexes = range(len(self.tasks)) if task is None else (task,)
        return [
            f"{self.name}-{self.task_name(t)}-{i}"
            for t in indexes
            for i in range(self.tasks[t].replicas)
        ]

    def podgroup(self, created: float) -> Item:
        group = podgroup(self.name).min_member(self.min_available).queue(self.queue)
        group = group.controlled().created(created)
        for key, value in self.annotations.items():
            group = group.annotate(key, value)
        cpu = min_cpu_milli(self)
        return group.min_resources(cpu=f"{cpu}m") if cpu else group

    def pods(self, created: float) -> list[PodBuilder]:
        out: list[PodBuilder] = []
        for t, task in enumerate(self.tasks):
            for name in self.pod_names(t):
                p = pod(name).group(self.name).role(self.task_name(t)).created(created)
                out.append(p.requests(cpu=task.cpu) if task.cpu else p)
        return out


def min_cpu_milli(job: VcJob) -> int:
    """The cpu of the job's first `minAvailable` pods, in task order (`calcPGMinResources`)."""
    left, total = job.min_available, 0
    for task in job.tasks:
        count = min(left, task.replicas)
        if task.cpu:
            total += count * _milli(task.cpu)
        left -= count
    return total


def _milli(cpu: str) -> int:
    return int(cpu[:-1]) if cpu.endswith("m") else int(float(cpu) * 1000)


@dataclasses.dataclass(frozen=True, slots=True)
class Timeline:
    """What happens before each cycle (index from 0, one second apart): vcjobs and other
    objects created, vcjobs or other pods deleted."""

    created: Mapping[int, Sequence[VcJob | Item]]
    deleted: Mapping[int, Sequence[str]] = dataclasses.field(default_factory=dict)

    def play(self, cycles: int, policy: str = POLICY) -> list[Outcome]:
        """Run `cycles` cycles of `policy` on the cluster, with the job controller between."""
        first = self._arrive(snapshot(*cluster()), 0)
        return run(first, policy=policy, cycles=cycles, between=self._between)

    def _between(self, i: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        for name in self.deleted.get(i, ()):
            snap = _delete(snap, name)
        return self._create_pods(self._arrive(snap, i), i)

    def _arrive(self, snap: ClusterSnapshot, i: int) -> ClusterSnapshot:
        items: list[Item] = []
        for thing in self.created.get(i, ()):
            items.append(thing.podgroup(i) if isinstance(thing, VcJob) else thing)
        return _merge(snap, snapshot(*items)) if items else snap

    def _create_pods(self, snap: ClusterSnapshot, i: int) -> ClusterSnapshot:
        """The job controller: pods for each vcjob whose PodGroup left Pending."""
        made: list[Item] = []
        for jobs in self.created.values():
            for job in jobs:
                if not isinstance(job, VcJob):
                    continue
                facts = snap.jobs.get(f"default/{job.name}")
                if facts is None or facts.phase is PodGroupPhase.PENDING:
                    continue
                if not any(t.group_name == job.name for t in snap.tasks.values()):
                    made += job.pods(i)
        return _merge(snap, snapshot(*made)) if made else snap


def _merge(snap: ClusterSnapshot, new: ClusterSnapshot) -> ClusterSnapshot:
    tasks = {**snap.tasks, **new.tasks}
    jobs = {k: j for k, j in {**snap.jobs, **new.jobs}.items() if not j.synthetic}
    queues = {**new.queues, **snap.queues}
    return dataclasses.replace(snap, tasks=tasks, jobs=complete_jobs(tasks, jobs), queues=queues)


def _delete(snap: ClusterSnapshot, name: str) -> ClusterSnapshot:
    """Job `name` (its PodGroup and pods) or the pods named `name-*` of another controller."""
    tasks = {u: t for u, t in snap.tasks.items() if not _owned(t, name)}
    jobs = {k: j for k, j in snap.jobs.items() if k != f"default/{name}" and not j.synthetic}
    return dataclasses.replace(snap, tasks=tasks, jobs=complete_jobs(tasks, jobs))


def _owned(task: TaskFacts, name: str) -> bool:
    return task.group_name == name or task.name.startswith(f"{name}-")


def placed(outcome: Outcome, job: VcJob) -> list[str]:
    """The job's pods on a node after the cycle (bound, running or succeeded)."""
    names = set(job.pod_names())
    tasks = outcome.snapshot_after.tasks.values()
    return sorted(t.name for t in tasks if t.name in names and t.node_name)


def phase(outcome: Outcome, name: str) -> PodGroupPhase:
    """The PodGroup's phase at the end of the cycle."""
    return outcome.result.podgroups[f"default/{name}"].phase
