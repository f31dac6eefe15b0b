"""nodegroup in whole cycles: where Volcano's TestNodeGroup cases put the pod, and the limits of
TestNodeGroupResourceLimits / TestNodeGroupResourceLimitAllocationEvent
(pkg/scheduler/plugins/nodegroup/nodegroup_test.go) over a cycle's placements.

Volcano's tables pin each node's score and predicate status for one pod (transcribed in
tests/unit/plugins/test_nodegroup.py); here the same objects run through enqueue and allocate,
and the pod lands on the allowed node with the highest nodegroup score.
"""

from __future__ import annotations

from vscheduler.model.status import TaskStatus
from vscheduler.testing.builders import Item, QueueBuilder, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import run

GROUP = "volcano.sh/nodegroup-name"


def policy(arguments: str = "", *, hierarchy: bool = False) -> str:
    flag = "\n    enableHierarchy: true" if hierarchy else ""
    args = f"\n    arguments: {{{arguments}}}" if arguments else ""
    return f"""\
actions: "enqueue, allocate"
tiers:
- plugins: [{{name: priority}}, {{name: gang}}]
- plugins:
  - name: predicates
  - name: nodegroup{flag}{args}
"""


NODES = (
    node("n1").resources(cpu="2", memory="4Gi").label(GROUP, "group1"),
    node("n2").resources(cpu="4", memory="16Gi").label(GROUP, "group2"),
    node("n3").resources(cpu="4", memory="16Gi").label(GROUP, "group3"),
    node("n4").resources(cpu="4", memory="16Gi").label(GROUP, "group4"),
    node("n5").resources(cpu="4", memory="16Gi"),
)


def full_affinity(builder: QueueBuilder) -> QueueBuilder:
    return builder.node_groups(
        required=("group1", "group3"),
        preferred=("group3",),
        anti_required=("group2", "group4"),
        anti_preferred=("group4",),
    )


def one_pod(queue_name: str, *queues: QueueBuilder) -> tuple[Item, ...]:
    return (
        *NODES,
        *queues,
        podgroup("pg", "c1").queue(queue_name),
        pod("p", "c1").requests(cpu="2", memory="4Gi").group("pg"),
    )


def test_the_pod_goes_to_the_required_and_preferred_group() -> None:
    """TestNodeGroup "soft constraints is subset of hard constraints": n3 scores 150."""
    [outcome] = run(snapshot(*one_pod("q1", full_affinity(queue("q1")))), policy=policy())
    assert outcome.binds == {"c1/p": "n3"}


def test_a_required_group_outscores_a_preferred_only_one() -> None:
    """TestNodeGroup "soft constraints is not subset of hard constraints": n1 100, n3 50."""
    q2 = queue("q2").node_groups(
        required=("group1",),
        preferred=("group3",),
        anti_required=("group2",),
        anti_preferred=("group4",),
    )
    [outcome] = run(snapshot(*one_pod("q2", q2)), policy=policy())
    assert outcome.binds == {"c1/p": "n1"}


def test_an_anti_preferred_group_is_the_last_resort() -> None:
    """TestNodeGroup's q2, with the group1 and group3 nodes full: n4 (anti-preferred) takes it."""
    q2 = queue("q2").node_groups(
        required=("group1",),
        preferred=("group3",),
        anti_required=("group2",),
        anti_preferred=("group4",),
    )
    busy = (
        pod("a", "other").requests(cpu="2").on("n1"),
        pod("b", "other").requests(cpu="4").on("n3"),
    )
    [outcome] = run(snapshot(*one_pod("q2", q2), *busy), policy=policy())
    assert outcome.binds == {"c1/p": "n4"}


def test_without_strict_a_queue_without_affinity_uses_unlabelled_nodes() -> None:
    """TestNodeGroup "affinity is not set for the queue ... strict=false": only n5 passes."""
    snap = snapshot(*one_pod("root-no-affinity", queue("root-no-affinity")))
    [outcome] = run(snap, policy=policy("strict: false"))
    assert outcome.binds == {"c1/p": "n5"}


def test_a_queue_without_affinity_fits_no_node_in_strict_mode() -> None:
    """TestNodeGroup "queue without affinity": every node fails; the pending message counts
    Volcano's reasons."""
    [outcome] = run(snapshot(*one_pod("q-no-affinity", queue("q-no-affinity"))), policy=policy())
    assert outcome.binds == {}
    assert outcome.unschedulable == {
        "c1/p": "0/5 nodes are available: 1 node group label not found,"
        " 4 node group affinity not specified."
    }


def test_a_child_queue_inherits_its_ancestors_affinity_with_hierarchy() -> None:
    """TestNodeGroup "affinity inherits from ancestor queue if parent queue has no affinity"."""
    queues = (
        full_affinity(queue("root")),
        queue("q-no-affinity").parent("root"),
        queue("q-no-affinity-child").parent("q-no-affinity"),
    )
    snap = snapshot(*one_pod("q-no-affinity-child", *queues))
    [outcome] = run(snap, policy=policy(hierarchy=True))
    assert outcome.binds == {"c1/p": "n3"}
    [outcome] = run(snap, policy=policy())
    assert outcome.binds == {}


def test_preferred_order_ranks_the_first_preferred_group_highest() -> None:
    """TestNodeGroup "preferred nodegroup priority ordering": n1 50, n3 25."""
    q3 = queue("q3").node_groups(preferred=("group3", "group1"))
    [outcome] = run(snapshot(*one_pod("q3", q3)), policy=policy("enablePreferredOrder: true"))
    assert outcome.binds == {"c1/p": "n3"}
    q3 = queue("q3").node_groups(preferred=("group1", "group3"))
    [outcome] = run(snapshot(*one_pod("q3", q3)), policy=policy("enablePreferredOrder: true"))
    assert outcome.binds == {"c1/p": "n1"}


# --- limits ---------------------------------------------------------------------------------------
LIMIT_NODES = (
    node("n1").resources(cpu="16", memory="64Gi", pods=32).label(GROUP, "group1"),
    node("n2").resources(cpu="16", memory="64Gi", pods=32).label(GROUP, "group2"),
)


def limited(annotation: str) -> QueueBuilder:
    return (
        queue("q")
        .node_groups(required=("group1", "group2"), preferred=("group1",))
        .node_group_limits(annotation)
    )


def pending(*names: str) -> list[Item]:
    items: list[Item] = []
    for name in names:
        items += [
            podgroup(f"pg-{name}", "limit").queue("q"),
            pod(name, "limit").requests(cpu="2", memory="4Gi").group(f"pg-{name}"),
        ]
    return items


def test_over_the_limit_the_pod_falls_back_to_the_other_group() -> None:
    """TestNodeGroupResourceLimits "over nodegroup limit rejects preferred nodegroup and permits
    fallback": 2 cpu used in group1 under a 3 cpu limit; the pending pod goes to n2."""
    used: list[Item] = [
        podgroup("pg-used", "limit").queue("q"),
        pod("used", "limit").requests(cpu="2", memory="4Gi").group("pg-used").on("n1"),
    ]
    annotation = '{"group1":{"cpu":"3","memory":"8Gi"}}'
    snap = snapshot(*LIMIT_NODES, limited(annotation), *used, *pending("pending"))
    [outcome] = run(snap, policy=policy())
    assert outcome.binds == {"limit/pending": "n2"}


def test_the_cycles_own_placements_count_against_the_limit() -> None:
    """TestNodeGroupResourceLimitAllocationEvent, over a cycle: the first pod takes group1's
    room (limit 3 cpu), the second overflows to group2."""
    snap = snapshot(
        *LIMIT_NODES, limited('{"group1":{"cpu":"3"}}'), *pending("pending-1", "pending-2")
    )
    [outcome] = run(snap, policy=policy())
    assert outcome.binds == {"limit/pending-1": "n1", "limit/pending-2": "n2"}


def test_with_the_only_group_full_the_pod_stays_pending_with_volcanos_reason() -> None:
    q = queue("q").node_groups(required=("group1",)).node_group_limits('{"group1":{"cpu":"3"}}')
    snap = snapshot(LIMIT_NODES[0], q, *pending("pending-1", "pending-2"))
    [outcome] = run(snap, policy=policy())
    assert outcome.binds == {"limit/pending-1": "n1"}
    assert outcome.unschedulable == {
        "limit/pending-2": "0/1 nodes are available: 1 node group resource limit exceeded."
    }


def test_a_malformed_limits_annotation_keeps_the_queues_pods_off_every_node() -> None:
    """TestNodeGroupResourceLimits "invalid annotation rejects queue tasks"."""
    snap = snapshot(*LIMIT_NODES, limited('{"group1":{"cpu":'), *pending("pending"))
    [outcome] = run(snap, policy=policy())
    assert outcome.binds == {}
    assert outcome.unschedulable == {
        "limit/pending": "0/2 nodes are available: 2 node group resource limit annotation invalid."
    }


def test_an_evicted_pod_gives_its_groups_room_back() -> None:
    """A Releasing pod does not count (Volcano counts Allocated, Binding, Bound and Running)."""
    gone: list[Item] = [
        podgroup("pg-gone", "limit").queue("q"),
        pod("gone", "limit")
        .requests(cpu="2", memory="4Gi")
        .group("pg-gone")
        .on("n1", TaskStatus.RELEASING),
    ]
    q = queue("q").node_groups(required=("group1",)).node_group_limits('{"group1":{"cpu":"3"}}')
    snap = snapshot(*LIMIT_NODES, q, *gone, *pending("pending"))
    [outcome] = run(snap, policy=policy())
    assert outcome.result.pipelined == {}
    assert outcome.binds == {"limit/pending": "n1"}


# --- preemption -----------------------------------------------------------------------------------
PREEMPTING = """\
actions: "enqueue, allocate, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodegroup}]
"""


def test_preemption_evicts_only_on_nodes_of_an_allowed_group() -> None:
    """A nodegroup refusal is unresolvable: preempt does not look for victims on n1, whose group
    the queue no longer allows (its pods were placed before the queue's affinity changed)."""
    items: list[Item] = [
        node("n1").resources(cpu="4", memory="16Gi").label(GROUP, "a"),
        node("n2").resources(cpu="4", memory="16Gi").label(GROUP, "b"),
        queue("q").node_groups(required=("b",)),
        podgroup("low").queue("q").priority(1).inqueue(),
        podgroup("high").queue("q").priority(100).inqueue(),
        pod("high").group("high").requests(cpu="1").priority(100),
    ]
    items += [
        pod(f"low-{i}").group("low").requests(cpu="1").priority(1).on(f"n{1 + i % 2}")
        for i in range(8)
    ]
    [outcome] = run(snapshot(*items), policy=PREEMPTING)
    # without nodegroup in the policy: low-6 evicted, high pipelined onto n1
    assert outcome.evictions == ["default/low-7"]
    assert outcome.result.pipelined == {"default/high": "n2"}
