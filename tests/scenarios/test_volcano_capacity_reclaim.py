"""capacity's queues under allocate and reclaim as Volcano decides, transcribed from Volcano's
`pkg/scheduler/plugins/capacity/capacity_test.go` (`Test_capacityPlugin_OnSessionOpenWithout
Hierarchy`): its objects, its one tier (capacity: allocatable, preemptive, reclaimable, queue
order; predicates: predicate; gang: job starving; nothing else switched on, see `go_tiers`),
the actions `allocate, reclaim`, and its expected binds, evictions and pipelined pods.

Objects are Volcano's test helpers: `BuildQueueWithResourcesQuantity(name, deserved,
capability)` (weight 1), `BuildPodGroup` (no priority), `BuildPod` (requests as written; the
`volcano.sh/preemptable` label where the case sets it; its last argument is the nodeSelector).
"""

from __future__ import annotations

import dataclasses

from vscheduler.model.facts import QueueFacts
from vscheduler.testing.builders import Item, PodBuilder, node, pod, podgroup, queue, res, snapshot
from vscheduler.testing.scenario import Outcome, run
from vscheduler.testing.volcano import go_tiers

POLICY = go_tiers(
    "allocate, reclaim",
    capacity=("enabledAllocatable", "enablePreemptive", "enableReclaimable", "enableQueueOrder"),
    predicates=("enablePredicate",),
    gang=("enableJobStarving",),
)


def quantity_queue(
    name: str,
    deserved: dict[str, str] | None,
    capability: dict[str, str] | None,
    *,
    priority: int = 0,
) -> QueueFacts:
    """`BuildQueueWithResourcesQuantity` (and `...WithPriority...`)."""
    built = queue(name).build()
    return dataclasses.replace(
        built,
        deserved=None if deserved is None else res(**deserved),
        capability=None if capability is None else res(**capability),
        priority=priority,
    )


def running(name: str, on: str, group: str, **requests: str) -> PodBuilder:
    return pod(name).group(group).requests(**requests).on(on)


def pending(name: str, group: str, **requests: str) -> PodBuilder:
    return pod(name).group(group).requests(**requests)


def group(name: str, q: str, *, waiting: bool) -> Item:
    built = podgroup(name).queue(q).min_member(1)
    return built.inqueue() if waiting else built


def two_nodes() -> list[Item]:
    return [
        node("n1").resources(cpu="2", memory="4Gi", pods=10).labels(selector="worker"),
        node("n2").resources(cpu="2", memory="4Gi", pods=10),
    ]


def once(*items: Item) -> Outcome:
    (outcome,) = run(snapshot(*items), policy=POLICY)
    return outcome


def ns1(*names: str) -> list[str]:
    return [f"default/{n}" for n in names]


GPU = "nvidia.com/gpu"
A100 = "nvidia.com/A100"


def test_case0_a_pod_is_allocated_while_its_queue_is_within_capability() -> None:
    """case0: Pod allocatable when queue has not exceed capability."""
    outcome = once(
        *two_nodes(),
        quantity_queue("q1", None, {"cpu": "2", "memory": "2Gi"}),
        group("pg1", "q1", waiting=False),
        group("pg2", "q1", waiting=True),
        running("p1", "n1", "pg1", cpu="1", memory="1Gi"),
        pending("p2", "pg2", cpu="1", memory="1Gi").selector(selector="worker"),
    )

    assert outcome.binds == {"default/p2": "n1"}


def test_case1_a_pod_is_not_allocated_beyond_its_queues_capability() -> None:
    """case1: Pod not allocatable when queue exceed queue capability."""
    outcome = once(
        *two_nodes(),
        quantity_queue("q2", None, {"cpu": "1.5", "memory": "1.5Gi"}),
        group("pg3", "q2", waiting=False),
        group("pg4", "q2", waiting=True),
        running("p3", "n1", "pg3", cpu="1", memory="1Gi"),
        pending("p4", "pg4", cpu="1", memory="1Gi"),
    )

    assert outcome.binds == {}
    assert outcome.evictions == []


def test_case2_a_queue_below_deserved_reclaims_from_another() -> None:
    """case2: Can reclaim from other queues when allocated < deserved."""
    outcome = once(
        *two_nodes(),
        quantity_queue("q3", {"cpu": "2", "memory": "4Gi"}, None),
        quantity_queue("q4", {"cpu": "2", "memory": "4Gi"}, None),
        group("pg5", "q3", waiting=False),
        group("pg6", "q4", waiting=True),
        running("p5", "n1", "pg5", cpu="2", memory="4Gi").preemptable(False),
        running("p6", "n2", "pg5", cpu="2", memory="4Gi"),
        pending("p7", "pg6", cpu="2", memory="4Gi"),
    )

    assert outcome.evictions == ns1("p6")
    assert outcome.result.pipelined == {"default/p7": "n2"}
    assert outcome.binds == {}


def test_case3_a_scalar_only_pod_reclaims_from_a_queue_overusing_cpu_and_memory() -> None:
    """case3: CPU & Memory are overused, scalar resource is not overused, but candidate pod has
    not request CPU & Memory, reclaim should happen."""
    outcome = once(
        node("n3")
        .resources(cpu="2", memory="4Gi", pods=10, **{A100: "10"})
        .labels(selector="worker"),
        node("n4").resources(cpu="2", memory="4Gi", pods=10, **{A100: "10"}),
        quantity_queue("q5", {"cpu": "2", "memory": "4Gi", A100: "10"}, None),
        quantity_queue("q6", {"cpu": "2", "memory": "4Gi", A100: "10"}, None),
        group("pg7", "q5", waiting=False),
        group("pg8", "q6", waiting=False),
        group("pg9", "q6", waiting=True),
        running("p8", "n3", "pg7", **{A100: "10"}).preemptable(False),
        running("p9", "n4", "pg7", **{A100: "10"}),
        running("p10", "n3", "pg8", cpu="2", memory="4Gi"),
        running("p11", "n4", "pg8", cpu="2", memory="4Gi"),
        pending("p12", "pg9", **{A100: "10"}),
    )

    assert outcome.evictions == ns1("p9")
    assert outcome.result.pipelined == {"default/p12": "n4"}


def test_case4_queues_are_served_in_priority_order() -> None:
    """case4: Pods are assigned according to the order of Queue Priority in which PGs are
    placed."""
    cap = {"cpu": "2", "memory": "4Gi"}
    outcome = once(
        node("n5").resources(cpu="2", memory="4Gi", pods=10),
        node("n6").resources(cpu="2", memory="4Gi", pods=10),
        quantity_queue("q7", None, cap, priority=5),
        quantity_queue("q8", None, cap, priority=1),
        quantity_queue("q9", None, cap, priority=10),
        group("pg10", "q7", waiting=False),
        group("pg11", "q8", waiting=True),
        group("pg12", "q9", waiting=True),
        running("p13", "n5", "pg10", cpu="2", memory="4Gi"),
        pending("p14", "pg11", cpu="2", memory="4Gi"),
        pending("p15", "pg12", cpu="2", memory="4Gi"),
    )

    assert outcome.binds == {"default/p15": "n6"}


def test_case5_reclaim_when_within_deserved_in_one_dimension() -> None:
    """case5: Can reclaim from other queues when allocated + req <= deserved on one
    dimension."""
    outcome = once(
        *two_nodes()[:1],
        quantity_queue("q10", {"cpu": "2", "memory": "2Gi"}, {"cpu": "4", "memory": "4Gi"}),
        quantity_queue("q11", {"cpu": "0", "memory": "0Gi"}, {"cpu": "2", "memory": "2Gi"}),
        group("pg16", "q10", waiting=False),
        group("pg17", "q10", waiting=True),
        group("pg18", "q11", waiting=False),
        running("p16", "n1", "pg16", cpu="1", memory="3Gi"),
        pending("p17", "pg17", cpu="1", memory="1Gi"),
        running("p18", "n1", "pg18", cpu="1", memory="1Gi"),
    )

    assert outcome.evictions == ns1("p18")
    assert outcome.result.pipelined == {"default/p17": "n1"}


def test_case6_no_reclaim_beyond_deserved() -> None:
    """case6: Can not reclaim from other queues when allocated + req > deserved."""
    outcome = once(
        *two_nodes()[:1],
        quantity_queue("q12", {"cpu": "1", "memory": "2Gi"}, {"cpu": "4", "memory": "4Gi"}),
        quantity_queue("q13", {"cpu": "0", "memory": "0Gi"}, {"cpu": "2", "memory": "2Gi"}),
        group("pg19", "q12", waiting=False),
        group("pg20", "q12", waiting=True),
        group("pg21", "q13", waiting=False),
        running("p19", "n1", "pg19", cpu="1", memory="1Gi"),
        pending("p20", "pg20", cpu="1", memory="2Gi"),
        running("p21", "n1", "pg21", cpu="1", memory="1Gi"),
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}


def test_case7_no_reclaim_from_a_queue_not_holding_the_deserved_scalar() -> None:
    """case7: allocated does not contain scalar dimension (GPU), deserved does; should not
    reclaim (Volcano #4918 bug 2)."""
    deserved = {"cpu": "2", "memory": "4Gi", GPU: "2"}
    outcome = once(
        node("n7").resources(cpu="4", memory="8Gi", pods=10, **{GPU: "4"}),
        quantity_queue("queue14", deserved, None),
        quantity_queue("queue15", None, None),
        quantity_queue("queue16", deserved, None),
        group("pg22", "queue14", waiting=False),
        group("pg23", "queue15", waiting=False),
        group("pg24", "queue16", waiting=False),
        group("pg25", "queue16", waiting=True),
        running("p22", "n7", "pg22", cpu="2", memory="4Gi"),
        running("p23", "n7", "pg23", **{GPU: "1"}),
        running("p24", "n7", "pg24", cpu="2", memory="1Gi", **{GPU: "1"}),
        pending("p25", "pg25", cpu="2", memory="3Gi", **{GPU: "1"}),
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}


def test_case8_only_the_reclaimers_dimensions_choose_the_victims() -> None:
    """case8: reclaimer dimensions are considered properly while evicting reclaimees (Volcano
    #4918 bug 1)."""
    outcome = once(
        node("n8").resources(cpu="4", memory="8Gi", pods=10, **{GPU: "1"}),
        quantity_queue("queue17", {"cpu": "2", "memory": "2Gi"}, None),
        quantity_queue("queue18", {"cpu": "2", "memory": "4Gi", GPU: "1"}, None),
        group("pg26", "queue17", waiting=False),
        group("pg27", "queue17", waiting=False),
        group("pg28", "queue17", waiting=False),
        group("pg29", "queue18", waiting=False),
        group("pg30", "queue18", waiting=True),
        running("p26", "n8", "pg26", memory="4Gi"),
        running("p27", "n8", "pg27", cpu="1"),
        running("p28", "n8", "pg28", **{GPU: "1"}),
        running("p29", "n8", "pg29", cpu="2", memory="4Gi"),
        pending("p30", "pg30", cpu="1", **{GPU: "1"}),
    )

    assert outcome.evictions == ns1("p28")
    assert outcome.result.pipelined == {"default/p30": "n8"}


def test_case9_a_scalar_only_queue_within_its_deserved_keeps_its_pod() -> None:
    """case9: reclaimee has intersecting scalar dimensions with deserved shouldn't be reclaimed
    on cpu/memory (Volcano #4918)."""
    outcome = once(
        node("n8").resources(cpu="4", memory="8Gi", pods=10, **{GPU: "1"}),
        quantity_queue("queue19", {GPU: "1"}, None),
        quantity_queue("queue20", {"cpu": "2", "memory": "2Gi"}, None),
        group("pg31", "queue19", waiting=False),
        group("pg32", "queue20", waiting=True),
        running("p31", "n8", "pg31", cpu="4", memory="4Gi", **{GPU: "1"}),
        pending("p32", "pg32", cpu="1", memory="1Gi"),
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}


def test_case10_no_reclaim_beyond_capability() -> None:
    """case10: PreemptiveFn respects capability — no reclaim when futureUsed would exceed
    capability (Volcano #5048)."""
    outcome = once(
        node("n9").resources(cpu="8", memory="100Gi", pods=10),
        node("n10").resources(cpu="8", memory="100Gi", pods=10),
        quantity_queue("queue21", {"cpu": "8", "memory": "100Gi"}, {"cpu": "8", "memory": "100Gi"}),
        quantity_queue("queue22", None, {"cpu": "2", "memory": "5Gi"}),
        group("pg33", "queue21", waiting=False),
        group("pg34", "queue21", waiting=True),
        group("pg35", "queue22", waiting=False),
        running("p33", "n9", "pg33", cpu="7", memory="90Gi"),
        pending("p34", "pg34", cpu="2", memory="5Gi"),
        running("p35", "n10", "pg35", cpu="2", memory="5Gi"),
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}
