"""reclaim as Volcano decides, transcribed from Volcano's `pkg/scheduler/actions/reclaim/
reclaim_test.go` (`TestReclaim`): its objects, its single tier (conformance, gang, proportion,
priority, with exactly the points its `conf.PluginOption`s enable, see `go_tiers`), the reclaim
action alone, and its expected evictions; pipelined tasks are counted as its `ExpectPipeLined` counts them and binds stay empty
(reclaim never binds: Volcano's `reclaimForTask` pipelines).

Pods are Volcano's `util.BuildPod`: requests as written ("1G" is 10^9 bytes), the
`volcano.sh/preemptable` label where the case sets it (Volcano's default is preemptable); a
PriorityClass named but not listed in the case gives priority 0.
"""

from __future__ import annotations

import dataclasses

from vscheduler.model.facts import QueueFacts
from vscheduler.model.status import TaskStatus
from vscheduler.testing.builders import Item, PodBuilder, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import Outcome, run
from vscheduler.testing.volcano import go_tiers

POLICY = go_tiers(
    "reclaim",
    conformance=("enableReclaimable",),
    gang=("enableReclaimable", "enableJobStarving"),
    proportion=("enableReclaimable", "enableQueueOrder", "enablePreemptive"),
    priority=("enableReclaimable", "enableJobOrder", "enableTaskOrder"),
)


def build_node(name: str, cpu: str, memory: str, pods: int) -> Item:
    return node(name).resources(cpu=cpu, memory=memory, pods=pods)


def running(
    name: str, group: str, cpu: str, memory: str, *, preemptable: bool | None
) -> PodBuilder:
    built = pod(name).group(group).requests(cpu=cpu, memory=memory).on("n1")
    return built if preemptable is None else built.preemptable(preemptable)


def pending(name: str, group: str, cpu: str, memory: str) -> PodBuilder:
    return pod(name).group(group).requests(cpu=cpu, memory=memory)


def group(name: str, q: str, members: int, *, priority: int = 0) -> Item:
    return podgroup(name).queue(q).min_member(members).priority(priority).inqueue()


def prioritised(name: str, priority: int, weight: int = 1) -> QueueFacts:
    """Volcano's `BuildQueueWithPriorityAndResourcesQuantity`: a queue with `spec.priority`."""
    return dataclasses.replace(queue(name).weight(weight).build(), priority=priority)


def once(*items: Item) -> Outcome:
    (outcome,) = run(snapshot(*items), policy=POLICY)
    return outcome


def c1(*names: str) -> list[str]:
    return [f"default/{n}" for n in names]


def one_queue_overusing(status: TaskStatus = TaskStatus.RUNNING) -> Outcome:
    """TestReclaim's first case, its one preemptable pod (preemptee2) in `status`."""
    return once(
        build_node("n1", "3", "3Gi", 10),
        queue("q1"),
        queue("q2"),
        group("pg1", "q1", 1),
        group("pg2", "q2", 1),
        running("preemptee1", "pg1", "1", "1G", preemptable=False),
        pod("preemptee2")
        .group("pg1")
        .requests(cpu="1", memory="1G")
        .on("n1", status)
        .preemptable(True),
        running("preemptee3", "pg1", "1", "1G", preemptable=False),
        pending("preemptor1", "pg2", "1", "1G"),
    )


def test_two_queues_with_one_overusing_reclaims_its_preemptable_pod() -> None:
    """TestReclaim "Two Queue with one Queue overusing resource, should reclaim"."""
    outcome = one_queue_overusing()

    assert outcome.evictions == c1("preemptee2")
    assert outcome.result.pipelined == {"default/preemptor1": "n1"}
    assert outcome.binds == {}


def test_the_lowest_priority_job_of_the_overusing_queues_gives_way_first() -> None:
    """TestReclaim "sort reclaimees when reclaiming from overusing queue"."""
    outcome = once(
        build_node("n1", "4", "4Gi", 10),
        queue("q1"),
        queue("q2"),
        queue("q3"),
        group("pg1", "q1", 1, priority=500),
        group("pg2", "q2", 1, priority=100),
        group("pg3", "q3", 1, priority=1000),
        running("preemptee1-1", "pg1", "1", "1G", preemptable=True),
        running("preemptee1-2", "pg1", "1", "1G", preemptable=True),
        running("preemptee2-1", "pg2", "1", "1G", preemptable=True),
        running("preemptee2-2", "pg2", "1", "1G", preemptable=False),
        pending("preemptor1", "pg3", "1", "1G"),
    )

    assert outcome.evictions == c1("preemptee2-1")


def test_the_queue_of_lowest_priority_gives_way_first() -> None:
    """TestReclaim "sort reclaimees when reclaiming from overusing queues with different queue
    priority"."""
    outcome = once(
        build_node("n1", "4", "4Gi", 10),
        prioritised("q1", 5),
        prioritised("q2", 10),
        prioritised("q3", 1),
        group("pg1", "q1", 1),
        group("pg2", "q2", 1),
        group("pg3", "q3", 1),
        running("preemptee1-1", "pg1", "1", "1G", preemptable=True),
        running("preemptee1-2", "pg1", "1", "1G", preemptable=False),
        running("preemptee2-1", "pg2", "1", "1G", preemptable=True),
        running("preemptee2-2", "pg2", "1", "1G", preemptable=False),
        pending("preemptor1", "pg3", "1", "1G"),
    )

    assert outcome.evictions == c1("preemptee1-1")


def test_a_pod_that_never_preempts_reclaims_nothing() -> None:
    """TestReclaim "can not reclaim resources when task preemption policy is never"."""
    outcome = once(
        build_node("n1", "1", "1Gi", 1),
        queue("q1"),
        queue("q2"),
        group("pg1", "q1", 0),
        group("pg2", "q2", 1),
        running("preemptee1", "pg1", "1", "1G", preemptable=True),
        pending("preemptor1", "pg2", "1", "1G").preemption_policy("Never"),
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}


def test_a_closed_queue_reclaims_nothing() -> None:
    """TestReclaim "can not reclaim resources when queue is not open(proportion plugin)"."""
    outcome = once(
        build_node("n1", "3", "3Gi", 10),
        queue("q1"),
        queue("q2").state("Closed"),
        group("pg1", "q1", 1),
        group("pg2", "q2", 1),
        running("preemptee1", "pg1", "1", "1G", preemptable=True),
        running("preemptee2", "pg1", "1", "1G", preemptable=True),
        running("preemptee3", "pg1", "1", "1G", preemptable=True),
        pending("preemptor1", "pg2", "1", "1G"),
    )

    assert outcome.evictions == []


def test_the_nodes_idle_resources_count_toward_what_is_reclaimed() -> None:
    """TestReclaim "Node available resources should be included in reclaimed resources": the
    node has CPU to spare but memory for one more pod only, so one victim is enough."""
    outcome = once(
        build_node("n1", "10", "2Gi", 10),
        prioritised("q1", 1),
        prioritised("q2", 2),
        queue("q3").weight(3),
        group("pg1", "q1", 0, priority=500),
        group("pg2", "q2", 0, priority=500),
        group("pg3", "q3", 1, priority=500),
        running("preemptee1-1", "pg1", "1", "1G", preemptable=True),
        running("preemptee2-1", "pg2", "1", "1G", preemptable=True),
        pending("preemptor1", "pg3", "2", "1G"),
    )

    assert outcome.evictions == c1("preemptee1-1")
    assert outcome.result.pipelined == {"default/preemptor1": "n1"}


def test_only_a_pod_that_may_preempt_reclaims() -> None:
    """TestReclaim "Reclaim succeeds for second task when first task has
    PreemptionPolicy=Never"."""
    outcome = once(
        build_node("n1", "2", "2G", 10),
        queue("q1"),
        queue("q2"),
        group("pg-victim", "q1", 1, priority=100),
        group("pg-preemptor", "q2", 2, priority=1000),
        running("victim-pod-no", "pg-victim", "1", "1G", preemptable=False),
        running("victim-pod", "pg-victim", "1", "1G", preemptable=True),
        pending("preemptor-task1-non-preemptable", "pg-preemptor", "1", "1G").preemption_policy(
            "Never"
        ),
        pending("preemptor-task2-preemptable", "pg-preemptor", "1", "1G"),
    )

    assert outcome.evictions == c1("victim-pod")


def test_nothing_is_evicted_where_the_node_already_has_room() -> None:
    """TestReclaim "only commit evictions on the node where reclaim succeeds": the preemptor is
    pipelined beside the reclaimee, nothing evicted."""
    outcome = once(
        build_node("n1", "10", "10G", 10),
        queue("q1"),
        queue("q2").weight(9),
        group("pg-victim", "q1", 0),
        group("pg-preemptor", "q2", 1),
        running("victim-n1", "pg-victim", "2", "2G", preemptable=True),
        pending("preemptor1", "pg-preemptor", "3", "3G"),
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {"default/preemptor1": "n1"}
    assert outcome.binds == {}


def test_a_bound_pod_not_yet_running_is_not_reclaimed() -> None:
    """Volcano's `reclaimForTask` takes only Running tasks (`taskOnNode.Status != api.Running`
    is passed over), where preempt takes Bound ones too: the same case as the first, with
    preemptee2 Bound (placed, not yet started), evicts nothing and pipelines nothing."""
    outcome = one_queue_overusing(TaskStatus.BOUND)

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}
