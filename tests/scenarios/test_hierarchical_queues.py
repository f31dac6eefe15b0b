"""capacity with `enableHierarchy`: a queue tree through `spec.parent` under `root`.

Each test transcribes one case of Volcano's `Test_capacityPlugin_OnSessionOpenWithHierarchy`
(`pkg/scheduler/plugins/capacity/capacity_test.go`): its queues, nodes, PodGroups and pods, the
actions `enqueue, reclaim, allocate` and the plugins capacity (hierarchy on), predicates and gang,
and its expected binds, evictions and PodGroup phases. Volcano's pods are in namespace `ns1`.
The test's tiers switch on only the points they name (a flag left nil is off in a Go-built
`conf.Tier`): gang serves only jobStarving, so its reclaimable and ready points are off here.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings, strategies as st

from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.builders import (
    Item,
    PodBuilder,
    PodGroupBuilder,
    QueueBuilder,
    node,
    pod,
    podgroup,
    queue,
    snapshot,
)
from vscheduler.testing.scenario import Outcome, run
from vscheduler.testing.strategies import queue_trees

POLICY = """\
actions: "enqueue, reclaim, allocate"
tiers:
- plugins:
  - name: capacity
    enableHierarchy: true
  - name: predicates
  - name: gang
    enableJobOrder: false
    enableJobReady: false
    enableJobPipelined: false
    enablePreemptable: false
    enableReclaimable: false
"""
NS = "ns1"


def tree(name: str, parent: str, deserved: dict[str, str], cap: dict[str, str]) -> QueueBuilder:
    """Volcano's `buildQueueWithParents(name, parent, deserved, capability)`."""
    built = queue(name)
    if parent:
        built = built.parent(parent)
    if deserved:
        built = built.deserved(**deserved)
    if cap:
        built = built.capability(**cap)
    return built


def group(name: str, q: str, phase: PodGroupPhase, members: int = 1) -> PodGroupBuilder:
    return podgroup(name, NS).queue(q).min_member(members).phase(phase)


def pending(name: str, job: str, **req: str) -> PodBuilder:
    return pod(name, NS).group(job).requests(**req)


def running(name: str, job: str, on: str, **req: str) -> PodBuilder:
    return pod(name, NS).group(job).requests(**req).on(on)


def cycle(*items: Item) -> Outcome:
    return run(snapshot(*items), policy=POLICY)[0]


INQUEUE, PENDING, RUNNING = PodGroupPhase.INQUEUE, PodGroupPhase.PENDING, PodGroupPhase.RUNNING
ROOT = tree("root", "", {}, {})
N1 = node("n1").resources(cpu="8", memory="8Gi", pods=11)
GPU = {"cpu": "8", "memory": "8Gi", "nvidia_com_gpu": "8"}


def case0_queues() -> list[Item]:
    return [
        ROOT,
        tree("q1", "root", {}, {"cpu": "4", "memory": "4Gi"}),
        tree("q2", "root", {}, {"cpu": "4", "memory": "4Gi"}),
        tree("q11", "q1", {}, {"cpu": "1", "memory": "1Gi"}),
        tree("q12", "q1", {}, {"cpu": "3", "memory": "3Gi"}),
    ]


def q3_tree() -> list[Item]:
    four = {"cpu": "4", "memory": "4Gi"}
    return [
        tree("q3", "root", {"cpu": "4", "memory": "4Gi", "pods": "10"}, {**four, "pods": "10"}),
        tree("q31", "q3", {"cpu": "2", "memory": "2Gi", "pods": "2"}, {**four, "pods": "4"}),
        tree("q32", "q3", {"cpu": "2", "memory": "2Gi", "pods": "2"}, {**four, "pods": "4"}),
    ]


def test_case0_a_pod_of_a_leaf_queue_is_allocated() -> None:
    """case0: Pod allocatable when queue is leaf queue."""
    outcome = cycle(
        N1,
        *case0_queues(),
        group("pg1", "q11", INQUEUE),
        pending("p1", "pg1", cpu="1", memory="1Gi"),
    )

    assert outcome.binds == {"ns1/p1": "n1"}


def test_case1_a_pod_of_a_queue_with_children_is_not_allocated_and_the_queue_says_why() -> None:
    """case1: Pod not allocatable when queue is not leaf queue."""
    outcome = cycle(
        N1,
        *case0_queues(),
        group("pg2", "q1", PENDING),
        pending("p2", "pg2", cpu="1", memory="1Gi"),
    )

    assert outcome.binds == {}
    # enqueue admits a PodGroup without minResources unasked, in Volcano as here
    assert outcome.result.podgroups["ns1/pg2"].phase is PodGroupPhase.INQUEUE
    assert (
        outcome.result.queues["q1"].warning == "The Queue <q1> of Job <ns1/pg2> is not leaf queue"
    )


def test_case2_two_pods_within_every_capability_are_allocated() -> None:
    """case2: Pod allocatable when queue has not exceed capability."""
    outcome = cycle(
        N1,
        ROOT,
        *q3_tree(),
        tree(
            "q4", "root", {"cpu": "2", "memory": "2Gi", "pods": "1"}, {"cpu": "4", "memory": "4Gi"}
        ),
        group("pg3", "q31", INQUEUE, members=2),
        pending("p3", "pg3", cpu="2", memory="2Gi"),
        pending("p4", "pg3", cpu="2", memory="2Gi"),
    )

    assert outcome.binds == {"ns1/p3": "n1", "ns1/p4": "n1"}


def test_case3_a_leaf_below_its_deserved_reclaims_from_a_sibling_above_its_own() -> None:
    """case3: Can reclaim from other queues when allocated < deserved. The evictor tries q4's
    pod first (reverse queue order), the ancestors' limits still refuse the pod, so the sibling's
    p7 goes too, and p5 is then spared again (the reprieve): Volcano's answer."""
    outcome = cycle(
        N1,
        ROOT,
        *q3_tree(),
        tree(
            "q4", "root", {"cpu": "2", "memory": "2Gi", "pods": "1"}, {"cpu": "4", "memory": "4Gi"}
        ),
        group("pg4", "q4", RUNNING),
        group("pg5", "q31", RUNNING),
        group("pg6", "q32", INQUEUE),
        running("p5", "pg4", "n1", cpu="4", memory="4Gi"),
        running("p6", "pg5", "n1", cpu="2", memory="2Gi").preemptable(False),
        running("p7", "pg5", "n1", cpu="2", memory="2Gi"),
        pending("p8", "pg6", cpu="2", memory="2Gi"),
    )

    assert outcome.evictions == ["ns1/p7"]
    assert outcome.result.pipelined == {"ns1/p8": "n1"}
    assert outcome.binds == {}


def test_case4_no_pod_is_allocated_beyond_an_ancestors_real_capability() -> None:
    """case4: Pod is not allocatable when ancestor queue's real capability not enough."""
    four = {"cpu": "4", "memory": "4Gi", "pods": "4"}
    outcome = cycle(
        N1,
        ROOT,
        *q3_tree(),
        tree("q33", "q3", {"pods": "2"}, four),
        group("pg5", "q31", RUNNING),
        group("pg7", "q32", RUNNING),
        group("pg8", "q33", INQUEUE),
        running("p6", "pg5", "n1", cpu="2", memory="2Gi").preemptable(False),
        running("p9", "pg7", "n1", cpu="2", memory="2Gi"),
        pending("p10", "pg8", cpu="3", memory="3Gi"),
    )

    assert outcome.binds == {}


def test_case5_an_unset_cpu_capability_is_the_parents() -> None:
    """case5: If the capability cpu or memory is not specified, the value should be inherited
    from parent queue."""
    outcome = cycle(
        N1,
        ROOT,
        tree("q5", "root", {}, {"memory": "4Gi"}),
        tree("q51", "q5", {}, {"memory": "2Gi"}),
        group("pg9", "q51", RUNNING),
        pending("p11", "pg9", cpu="1"),
    )

    assert outcome.binds == {"ns1/p11": "n1"}


def test_case6_a_podgroup_is_not_enqueued_when_an_ancestors_capability_is_used_up() -> None:
    """case6: podgroup can't be enqueued when any ancestor queue's capability is not enough."""
    both = {"cpu": "2", "memory": "4Gi"}
    outcome = cycle(
        N1,
        ROOT,
        tree("q6", "root", {}, both),
        tree("q61", "q6", {}, {}),
        tree("q62", "q6", {}, {}),
        group("pg10", "q61", PENDING).min_resources(**both),
        group("pg11", "q62", PENDING).min_resources(**both),
    )

    phases = {key: status.phase for key, status in outcome.result.podgroups.items()}
    assert phases == {"ns1/pg10": PodGroupPhase.INQUEUE, "ns1/pg11": PodGroupPhase.PENDING}


def test_case7_children_guaranteeing_more_than_their_parent_are_reported_not_fatal() -> None:
    """case7: the sum of sub queue 71 and 72's guarantee exceeds the capacity of queue7, but
    should not panic."""
    six = {"cpu": "6", "memory": "4Gi"}
    outcome = cycle(
        N1,
        ROOT,
        tree("q7", "root", {}, six),
        tree("q71", "q7", {}, six).guarantee(cpu="4", memory="3Gi"),
        tree("q72", "q7", {}, six).guarantee(cpu="4", memory="3Gi"),
    )

    assert outcome.binds == {}
    assert outcome.result.queues["q7"].warning == (
        "Sum of child queue deserved (cpu 8, memory 6Gi) exceeds parent queue q7 deserved "
        "(nothing). This may affect resource distribution during scheduling.; Sum of child "
        "queue guarantees (cpu 8, memory 6Gi) exceeds parent queue q7 guarantee (nothing). Not "
        "all child guarantees can be satisfied simultaneously."
    )


def test_case8_a_deserved_naming_a_scalar_resource_still_allocates() -> None:
    """case8: When the queue's deserved value has a scalar resource set, the check can pass."""
    outcome = cycle(
        node("n-gpu").resources(pods=10, **GPU),
        ROOT,
        tree("q8", "root", {"cpu": "4", "memory": "4Gi", "nvidia_com_gpu": "8"}, {}),
        tree("q81", "q8", {"cpu": "2", "memory": "2Gi", "nvidia_com_gpu": "4"}, {}),
        tree("q82", "q8", {"cpu": "2", "memory": "2Gi", "nvidia_com_gpu": "4"}, {}),
        group("pg12", "q81", INQUEUE),
        pending("p12", "pg12", cpu="2", memory="2Gi", nvidia_com_gpu="1"),
    )

    assert outcome.binds == {"ns1/p12": "n-gpu"}


def test_case9_a_scalar_resource_of_0_in_deserved_still_allocates() -> None:
    """case9: When some scalar resources are 0 in deserved, the check can still pass."""
    zero = {"hugepages_1Gi": "0"}
    outcome = cycle(
        node("n2").resources(pods=10, **GPU, **zero),
        ROOT,
        tree("q9", "root", {"cpu": "2", "memory": "2Gi", "nvidia_com_gpu": "8", **zero}, {}),
        tree("q91", "q9", {"cpu": "2", "memory": "2Gi", "nvidia_com_gpu": "4", **zero}, {}),
        group("pg13", "q91", INQUEUE),
        pending("p13", "pg13", cpu="2", memory="2Gi", nvidia_com_gpu="1"),
    )

    assert outcome.binds == {"ns1/p13": "n2"}


def test_case10_a_root_capability_above_the_cluster_is_accepted() -> None:
    """case10: root queue's capability > cluster total resource, but should not panic."""
    outcome = cycle(
        N1,
        tree("root", "", {}, {"cpu": "16", "memory": "16Gi"}),
        tree("q10", "root", {}, {"cpu": "10", "memory": "4Gi"}),
    )

    assert (outcome.binds, outcome.evictions) == ({}, [])
    assert outcome.result.queues["q10"].real_capability is not None


def test_case11_an_unset_scalar_capability_is_the_parents() -> None:
    """case11: If the capability scalar resources is not specified, the value should be
    inherited from parent queue."""
    cap = {"cpu": "4", "memory": "4Gi", "nvidia_com_gpu": "4"}
    outcome = cycle(
        node("n2").resources(pods=10, **GPU, hugepages_1Gi="0"),
        ROOT,
        tree("case11_queue1", "root", {}, {}),
        tree("case11_queue11", "case11_queue1", {}, cap),
        tree("case11_queue12", "case11_queue1", {}, cap),
        group("pg14", "case11_queue11", INQUEUE),
        group("pg15", "case11_queue12", INQUEUE),
        pending("p14", "pg14", cpu="1", memory="1Gi", nvidia_com_gpu="4"),
        pending("p15", "pg15", cpu="1", memory="1Gi", nvidia_com_gpu="4"),
    )

    assert outcome.binds == {"ns1/p14": "n2", "ns1/p15": "n2"}


def test_case12_a_leaf_reclaims_when_within_deserved_in_one_scalar_resource() -> None:
    """case12: Can reclaim from other queues when allocated <= deserved on a single scalar
    dimension."""
    a100 = {"nvidia_com_a100": "2"}
    each = {"cpu": "1", "memory": "1Gi", "nvidia_com_a100": "2", "rdma_hca": "1"}
    outcome = cycle(
        node("n3").resources(
            cpu="16", memory="16Gi", nvidia_com_a100="5", rdma_hca="1001", pods=11
        ),
        tree(
            "root", "", {"cpu": "16", "memory": "16Gi", "nvidia_com_a100": "4", "rdma": "1000"}, {}
        ),
        tree("case12_queue1", "root", a100, {}),
        tree("case12_queue11", "case12_queue1", a100, {}),
        tree("case12_queue12", "case12_queue1", {}, {}),
        group("pg16", "case12_queue11", INQUEUE),
        group("pg17", "case12_queue12", RUNNING),
        group("pg18", "case12_queue12", RUNNING),
        pending("p16", "pg16", **each),
        running("p17", "pg17", "n3", **each),
        running("p18", "pg18", "n3", **each).preemptable(False),
    )

    assert outcome.evictions == ["ns1/p17"]
    assert outcome.result.pipelined == {"ns1/p16": "n3"}


@settings(max_examples=40, deadline=None)
@given(queue_trees(), st.lists(st.integers(0, 4), min_size=6, max_size=6), st.data())
def test_random_trees_never_fail_the_cycle_and_every_ancestor_capability_holds(
    pairs: list[tuple[str, str]], caps: list[int], data: st.DataObject
) -> None:
    parents = dict(pairs)
    items: list[Item] = [node("n1").resources(cpu="16", memory="64Gi"), ROOT]
    for (name, parent), cap in zip(pairs, caps, strict=False):
        built = queue(name).parent(parent) if parent else queue(name)
        items.append(built.capability(cpu=str(cap)) if cap else built)
    for name, _ in pairs:
        for i in range(data.draw(st.integers(0, 3))):
            items.append(podgroup(f"{name}-{i}", NS).queue(name).inqueue())
            items.append(pending(f"{name}-{i}-0", f"{name}-{i}", cpu="1", memory="1Gi"))

    outcome = cycle(*items)

    def chain(name: str) -> list[str] | None:
        seen: list[str] = []
        while name not in ("", "root"):
            if name in seen or name not in parents:
                return None
            seen.append(name)
            name = parents[name]
        return seen

    bound: Counter[str] = Counter()
    for key in outcome.binds:
        leaf = key.split("/")[1].split("-")[0]
        path = chain(leaf)
        assert path is not None, f"{key} bound in a queue whose parents do not reach root"
        assert leaf not in parents.values(), f"{key} bound in a queue with children"
        bound.update(path)
    for (name, _), cap in zip(pairs, caps, strict=False):
        if cap:
            assert bound[name] <= cap, (name, bound[name], cap)
    for name, _ in pairs:
        if chain(name) is None:
            assert outcome.result.queues[name].warning_reason == "InvalidQueueHierarchy"
            assert outcome.result.queues[name].warning


def test_a_refused_queues_pods_say_what_is_wrong_with_its_place_in_the_tree() -> None:
    outcome = cycle(
        N1,
        *case0_queues(),
        queue("lost").parent("nowhere"),
        group("pg", "lost", INQUEUE),
        pending("p", "pg", cpu="1"),
        group("pg2", "q1", INQUEUE),
        pending("p2", "pg2", cpu="1"),
        group("pg3", "q12", INQUEUE),
        pending("p3", "pg3", cpu="1"),
    )

    off = "runs no pod (capacity: its place in the queue tree is invalid)"
    assert outcome.unschedulable == {
        "ns1/p": f"queue lost {off}: the queue lost has invalid parent queue nowhere",
        "ns1/p2": f"queue q1 {off}: The Queue <q1> of Job <ns1/pg2> is not leaf queue",
    }
    assert outcome.binds == {"ns1/p3": "n1"}


ALLOCATE_ONLY = POLICY.replace('"enqueue, reclaim, allocate"', '"allocate"')


def test_nil_safety_no_queue_at_all_is_no_failure() -> None:
    """Test_buildHierarchicalQueueAttrs_nilSafety: no-panic when root queue is absent (empty
    ssn.Queues). Without a `root` Queue an unbounded root stands in."""
    outcome = run(
        snapshot(node("n1").resources(cpu="4", memory="4Gi", pods=10)), policy=ALLOCATE_ONLY
    )[0]

    assert (outcome.binds, outcome.evictions) == ({}, [])


def test_nil_safety_a_job_of_a_deleted_queue_is_skipped() -> None:
    """Test_buildHierarchicalQueueAttrs_nilSafety: no-panic when job references a deleted
    queue."""
    items: list[Item] = [
        node("n1").resources(cpu="4", memory="4Gi", pods=10),
        ROOT,
        group("pg-orphan", "deleted-queue", INQUEUE),
        pending("orphan", "pg-orphan", cpu="1", memory="1Gi"),
    ]

    outcome = run(snapshot(*items), policy=ALLOCATE_ONLY)[0]

    assert (outcome.binds, outcome.evictions) == ({}, [])
