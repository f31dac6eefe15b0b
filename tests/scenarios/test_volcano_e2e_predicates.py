"""Volcano's e2e predicates tests, transcribed from `test/e2e/schedulingaction/predicates.go`
("Predicates E2E Test"): every `It`.

**The cluster.** These tests ask for no node limit: they run on the whole kind cluster and size
their jobs from it (`ClusterNodeNumber`: the untainted nodes; `ComputeNode(ctx, slot)`: the
first untainted node with room and how many slots fit on it). Here the cluster is two nodes,
`node-1` and `node-2`, of 2 cpu and 4Gi each, labelled with their hostname, and nothing else:
two nodes, `ComputeNode` of one cpu is (node-1, 2), of half a cpu (node-1, 4).

**The jobs** are what Volcano's job controller and webhook make of the e2e `JobSpec` (one
task, `<job>-task-0`): one PodGroup (`minMember` the task's `Min`, `minTaskMember` the
replicas, `minResources` the first `minMember` pods' requests) and one pod per replica,
`<job>-<task>-<i>`. "Wait until ready/pending" is the scheduler's decision over the cycles
(bound pods run in the next); removing the taints is a change between cycles.

**The policy** is the e2e chart's `volcano-scheduler-ci.conf` (its `network-topology-aware` a
no-op without HyperNodes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from vscheduler.model.cluster import ClusterSnapshot, complete_jobs
from vscheduler.testing.builders import (
    Item,
    PodBuilder,
    expr,
    node,
    pod,
    pod_term,
    podgroup,
    snapshot,
    term,
)
from vscheduler.testing.kind_e2e import CI_POLICY as POLICY
from vscheduler.testing.scenario import Outcome, run

HOSTNAME = "kubernetes.io/hostname"
TAINT = ("test-taint-key", "test-taint-val")


def nodes(*, tainted: bool = False) -> list[Item]:
    """Two nodes of 2 cpu and 4Gi (tainted test-taint-key=test-taint-val:NoSchedule)."""
    out: list[Item] = []
    for i in (1, 2):
        built = node(f"node-{i}").resources(cpu="2", memory="4Gi").label(HOSTNAME, f"node-{i}")
        out.append(built.taint(*TAINT) if tainted else built)
    return out


def vcjob(
    name: str,
    *,
    millicpu: int,
    replicas: int = 1,
    minimum: int = 1,
    shape: Callable[[PodBuilder], PodBuilder] = lambda p: p,
) -> list[Item]:
    """The PodGroup and pods Volcano's job controller makes of a one-task e2e JobSpec."""
    task = f"{name}-task-0"
    group = (
        podgroup(name)
        .controlled()
        .min_member(minimum)
        .min_task_member(**{task: replicas})
        .min_resources(cpu=f"{millicpu * minimum}m")
    )
    pods = [
        shape(pod(f"{name}-{task}-{i}").group(name).role(task)).requests(cpu=f"{millicpu}m")
        for i in range(replicas)
    ]
    return [group, *pods]


def joined(snap: ClusterSnapshot, *items: Item) -> ClusterSnapshot:
    """The cluster with the objects of `items` created."""
    more = snapshot(*items)
    tasks = {**snap.tasks, **more.tasks}
    jobs = {**snap.jobs, **more.jobs}
    return dataclasses.replace(snap, tasks=tasks, jobs=complete_jobs(tasks, jobs))


def untainted(snap: ClusterSnapshot) -> ClusterSnapshot:
    """The cluster with the test's taint removed from every node."""
    nodes = tuple(dataclasses.replace(n, taints=()) for n in snap.nodes)
    return dataclasses.replace(snap, nodes=nodes)


def once(*items: Item) -> Outcome:
    [outcome] = run(snapshot(*items), policy=POLICY)
    return outcome


def test_pods_sharing_a_host_port_take_one_node_each() -> None:
    """ "Hostport": a job of 2 x 2 pods (nn = 2 nodes) of one cpu, all publishing host port
    28080, minAvailable 2: nn pods run, one per node, and nn stay pending."""
    outcome = once(
        *nodes(),
        *vcjob("hp-spec", millicpu=1000, replicas=4, minimum=2, shape=lambda p: p.host_port(28080)),
    )

    assert sorted(outcome.binds.values()) == ["node-1", "node-2"]
    assert len(outcome.unschedulable) == 2


def test_a_job_required_on_one_node_by_name_runs_there() -> None:
    """ "NodeAffinity": as many one-cpu pods as fit on node-1 (2), minAvailable 1, required
    there by a matchFields term on `metadata.name`: all run, on node-1."""

    def on_node_1(built: PodBuilder) -> PodBuilder:
        return built.require(
            dataclasses.replace(term(), match_fields=(expr("metadata.name", "In", "node-1"),))
        )

    outcome = once(*nodes(), *vcjob("na-job", millicpu=1000, replicas=2, shape=on_node_1))

    assert outcome.binds == {
        "default/na-job-na-job-task-0-0": "node-1",
        "default/na-job-na-job-task-0-1": "node-1",
    }


def test_pods_with_affinity_to_each_other_share_a_node() -> None:
    """ "Pod Affinity": half as many half-cpu pods as fit on one node (4 / 2), labelled
    foo=bar and required by hostname next to foo=bar pods, all required: they all run, on
    one node."""

    def together(built: PodBuilder) -> PodBuilder:
        return built.label("foo", "bar").affinity(pod_term(HOSTNAME, foo="bar"))

    outcome = once(*nodes(), *vcjob("pa-job", millicpu=500, replicas=2, minimum=2, shape=together))

    assert len(outcome.binds) == 2
    assert len(set(outcome.binds.values())) == 1


def test_pods_with_anti_affinity_to_each_other_take_different_nodes() -> None:
    """ "Pod Anti-Affinity": two one-cpu pods labelled foo=bar, required away by hostname from
    foo=bar pods, both required: both run, on different nodes."""

    def apart(built: PodBuilder) -> PodBuilder:
        return built.label("foo", "bar").anti_affinity(pod_term(HOSTNAME, foo="bar"))

    outcome = once(*nodes(), *vcjob("pa-job", millicpu=1000, replicas=2, minimum=2, shape=apart))

    assert sorted(outcome.binds.values()) == ["node-1", "node-2"]


def test_a_pod_waits_while_every_node_is_tainted_and_runs_once_the_taints_are_gone() -> None:
    """ "Taints": every node tainted test-taint-key=test-taint-val:NoSchedule; a one-cpu job
    stays pending; with the taints removed it runs."""
    tainted, cleared = run(
        snapshot(*nodes(tainted=True), *vcjob("tt-job", millicpu=1000)),
        policy=POLICY,
        cycles=2,
        between=lambda _, snap: untainted(snap),
    )

    assert tainted.binds == {}
    assert list(cleared.binds) == ["default/tt-job-tt-job-task-0-0"]


def test_only_the_tolerating_job_runs_on_tainted_nodes_the_other_once_they_are_cleared() -> None:
    """ "Taints and Tolerations": every node tainted; tt-job, tolerating the taint, runs; then
    tt-job-no-toleration stays pending; with the taints removed it runs."""

    def tolerating(built: PodBuilder) -> PodBuilder:
        return built.tolerate(*TAINT, effect="NoSchedule")

    second_job = vcjob("tt-job-no-toleration", millicpu=1000)
    steps = {1: lambda snap: joined(snap, *second_job), 2: untainted}
    first, second, third = run(
        snapshot(*nodes(tainted=True), *vcjob("tt-job", millicpu=1000, shape=tolerating)),
        policy=POLICY,
        cycles=3,
        between=lambda i, snap: steps[i](snap),
    )

    assert list(first.binds) == ["default/tt-job-tt-job-task-0-0"]
    assert second.binds == {}
    assert list(third.binds) == ["default/tt-job-no-toleration-tt-job-no-toleration-task-0-0"]
