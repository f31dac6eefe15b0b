"""The nodegroup plugin's hooks, against Volcano's own tables.

`test_volcano_node_group_table` transcribes `TestNodeGroup` (pkg/scheduler/plugins/nodegroup/
nodegroup_test.go): each case's queues, the five nodes n1..n5, and every node's expected score
and predicate status for the case's one pod. `test_volcano_resource_limits_table` transcribes
`TestNodeGroupResourceLimits`, and `test_an_allocation_counts_against_the_limit` its
`TestNodeGroupResourceLimitAllocationEvent`.
"""

from __future__ import annotations

import numpy as np
import pytest

from vscheduler.errors import PolicyError
from vscheduler.framework.session import Session
from vscheduler.framework.state import TaskState
from vscheduler.model.status import TaskStatus
from vscheduler.plugins import nodegroup
from vscheduler.plugins.nodegroup import NodeGroup, ancestors
from vscheduler.testing import sessions
from vscheduler.testing.builders import (
    Item,
    QueueBuilder,
    node,
    pod,
    podgroup,
    queue,
    snapshot,
)

GROUP = "volcano.sh/nodegroup-name"
SUCCESS, UNRESOLVABLE = "Success", "UnschedulableAndUnresolvable"


def policy(*, strict: bool | None = None, ordered: bool = False, hierarchy: bool = False) -> str:
    arguments = []
    if strict is not None:
        arguments.append(f"strict: {str(strict).lower()}")
    if ordered:
        arguments.append("enablePreferredOrder: true")
    text = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: nodegroup\n'
    if hierarchy:
        text += "    enableHierarchy: true\n"
    if arguments:
        text += "    arguments:\n" + "".join(f"      {a}\n" for a in arguments)
    return text


NODES = (
    node("n1").resources(cpu="2", memory="4Gi").label(GROUP, "group1"),
    node("n2").resources(cpu="4", memory="16Gi").label(GROUP, "group2"),
    node("n3").resources(cpu="4", memory="16Gi").label(GROUP, "group3"),
    node("n4").resources(cpu="4", memory="16Gi").label(GROUP, "group4"),
    node("n5").resources(cpu="4", memory="16Gi"),
)


def full_affinity(builder: QueueBuilder) -> QueueBuilder:
    """q1's (and root's) affinity in TestNodeGroup."""
    return builder.node_groups(
        required=("group1", "group3"),
        preferred=("group3",),
        anti_required=("group2", "group4"),
        anti_preferred=("group4",),
    )


ROOT = full_affinity(queue("root"))
Q1 = full_affinity(queue("q1")).parent("root")
Q2 = (
    queue("q2")
    .node_groups(
        required=("group1",),
        preferred=("group3",),
        anti_required=("group2",),
        anti_preferred=("group4",),
    )
    .parent("root")
)
Q3 = queue("q3").node_groups(preferred=("group1", "group3"))
NO_AFFINITY = queue("q-no-affinity").parent("root")
Q1_CHILD = queue("q1-child").parent("q1")
NO_AFFINITY_CHILD = queue("q-no-affinity-child").parent("q-no-affinity")
ROOT_NO_AFFINITY = queue("root-no-affinity")


def one_pod(queue_name: str, *queues: QueueBuilder) -> tuple[Item, ...]:
    return (
        *NODES,
        *queues,
        podgroup("pg", "c1").queue(queue_name),
        pod("p", "c1").requests(cpu="2", memory="4Gi").group("pg"),
    )


def open_plugin(items: tuple[Item, ...], text: str) -> tuple[Session, NodeGroup]:
    session = sessions.open_session(snapshot(*items), policy=text)
    plugin = session.plugins["nodegroup"]
    assert isinstance(plugin, NodeGroup)
    return session, plugin


def task_of(session: Session, key: str) -> TaskState:
    return next(t for t in session.tasks.values() if t.key == key)


def scores(session: Session, plugin: NodeGroup, key: str) -> dict[str, float]:
    idx = np.arange(len(session.ledger.names), dtype=np.int64)
    got = plugin.score_nodes(task_of(session, key), idx)
    values = np.zeros(len(idx)) if got is None else got
    return {n: float(v) for n, v in zip(session.ledger.names, values, strict=True)}


def statuses(session: Session, plugin: NodeGroup, key: str) -> dict[str, str]:
    task = task_of(session, key)
    idx = np.arange(len(session.ledger.names), dtype=np.int64)
    ok = plugin.filter_nodes(task, idx)
    out: dict[str, str] = {}
    for i, name in enumerate(session.ledger.names):
        why = plugin.explain_node(task, i)
        assert (why is None) == bool(ok[i]), name  # the filter and its reason agree
        out[name] = SUCCESS if why is None else why.code.value
    return out


TABLE = [
    pytest.param(
        one_pod("q1", Q1),
        policy(),
        {"n1": 100, "n2": 0, "n3": 150, "n4": -1, "n5": 0},
        [SUCCESS, UNRESOLVABLE, SUCCESS, SUCCESS, UNRESOLVABLE],
        id="soft constraints is subset of hard constraints",
    ),
    pytest.param(
        one_pod("q2", Q2),
        policy(),
        {"n1": 100, "n2": 0, "n3": 50, "n4": -1, "n5": 0},
        [SUCCESS, UNRESOLVABLE, SUCCESS, SUCCESS, UNRESOLVABLE],
        id="soft constraints is not subset of hard constraints",
    ),
    pytest.param(
        one_pod("root-no-affinity", ROOT_NO_AFFINITY),
        policy(strict=False),
        {"n1": 0, "n2": 0, "n3": 0, "n4": 0, "n5": 0},
        [UNRESOLVABLE, UNRESOLVABLE, UNRESOLVABLE, UNRESOLVABLE, SUCCESS],
        id="affinity is not set, strict=false: only nodes without the label",
    ),
    pytest.param(
        one_pod("q1-child", ROOT, Q1, Q1_CHILD),
        policy(hierarchy=True),
        {"n1": 100, "n2": 0, "n3": 150, "n4": -1, "n5": 0},
        [SUCCESS, UNRESOLVABLE, SUCCESS, SUCCESS, UNRESOLVABLE],
        id="affinity inherits from parent queue",
    ),
    pytest.param(
        one_pod("q-no-affinity-child", ROOT, NO_AFFINITY, NO_AFFINITY_CHILD),
        policy(hierarchy=True),
        {"n1": 100, "n2": 0, "n3": 150, "n4": -1, "n5": 0},
        [SUCCESS, UNRESOLVABLE, SUCCESS, SUCCESS, UNRESOLVABLE],
        id="affinity inherits from ancestor queue if parent queue has no affinity",
    ),
    pytest.param(
        one_pod("q-no-affinity", NO_AFFINITY),
        policy(),
        {"n1": 0, "n2": 0, "n3": 0, "n4": 0, "n5": 0},
        [UNRESOLVABLE] * 5,
        id="queue without affinity",
    ),
    pytest.param(
        one_pod("q3", Q3),
        policy(ordered=True),
        {"n1": 50, "n2": 0, "n3": 25, "n4": 0, "n5": 0},
        [SUCCESS, UNRESOLVABLE, SUCCESS, UNRESOLVABLE, UNRESOLVABLE],
        id="preferred nodegroup priority ordering",
    ),
]


@pytest.mark.parametrize(("items", "text", "want_scores", "want_status"), TABLE)
def test_volcano_node_group_table(
    items: tuple[Item, ...], text: str, want_scores: dict[str, float], want_status: list[str]
) -> None:
    session, plugin = open_plugin(items, text)

    assert scores(session, plugin, "c1/p") == want_scores
    assert list(statuses(session, plugin, "c1/p").values()) == want_status


def reasons(session: Session, plugin: NodeGroup, key: str) -> dict[str, str | None]:
    task = task_of(session, key)
    out: dict[str, str | None] = {}
    for i, name in enumerate(session.ledger.names):
        why = plugin.explain_node(task, i)
        out[name] = None if why is None else why.reason
    return out


def test_each_refusal_has_volcanos_words() -> None:
    session, plugin = open_plugin(one_pod("q2", Q2), policy())
    assert reasons(session, plugin, "c1/p") == {
        "n1": None,
        "n2": "node does not satisfy the node group affinity",
        "n3": None,
        "n4": None,
        "n5": "node group label not found",
    }
    session, plugin = open_plugin(one_pod("q-no-affinity", NO_AFFINITY), policy(strict=False))
    assert reasons(session, plugin, "c1/p")["n1"] == "node group affinity not specified"
    assert reasons(session, plugin, "c1/p")["n5"] is None


def test_without_hierarchy_a_queue_does_not_inherit() -> None:
    session, plugin = open_plugin(one_pod("q1-child", ROOT, Q1, Q1_CHILD), policy())
    assert set(statuses(session, plugin, "c1/p").values()) == {UNRESOLVABLE}
    assert scores(session, plugin, "c1/p") == dict.fromkeys(("n1", "n2", "n3", "n4", "n5"), 0)


def test_an_empty_affinity_is_the_queues_own_and_is_not_inherited() -> None:
    empty_child = queue("q1-child").parent("q1").node_groups()
    session, plugin = open_plugin(
        one_pod("q1-child", ROOT, Q1, empty_child), policy(hierarchy=True)
    )
    assert reasons(session, plugin, "c1/p")["n1"] == "node group affinity not specified"


def test_the_ancestor_walk_stops_at_a_cycle_and_at_a_missing_parent() -> None:
    items = (
        queue("a").parent("b"),
        queue("b").parent("a"),
        queue("c").parent("gone"),
        queue("d"),
        queue("root"),
    )
    session = sessions.open_session(snapshot(*items), policy=policy(hierarchy=True))
    assert ancestors(session.queues, "a") == ["b"]
    assert ancestors(session.queues, "c") == []
    assert ancestors(session.queues, "d") == ["root"]
    assert ancestors(session.queues, "root") == []


def test_a_preferred_group_listed_twice_ranks_by_its_last_place() -> None:
    # Volcano's index map keeps the last index; n counts distinct groups: group1 -> 50*(2-2)/2.
    q = queue("q").node_groups(preferred=("group1", "group3", "group1"))
    session, plugin = open_plugin(one_pod("q", q), policy(ordered=True))
    assert scores(session, plugin, "c1/p")["n1"] == 0
    assert scores(session, plugin, "c1/p")["n3"] == 25


# --- TestNodeGroupResourceLimits -----------------------------------------------------------------
LIMIT_NODES = (
    node("n1").resources(cpu="16", memory="64Gi", pods=32).label(GROUP, "group1"),
    node("n2").resources(cpu="16", memory="64Gi", pods=32).label(GROUP, "group2"),
)


def limited(name: str, annotation: str | None) -> QueueBuilder:
    q = queue(name).node_groups(required=("group1", "group2"), preferred=("group1",))
    return q if annotation is None else q.node_group_limits(annotation)


LIMITS = [
    pytest.param(None, False, [SUCCESS, SUCCESS], id="no annotation keeps existing behavior"),
    pytest.param(
        '{"group1":{"cpu":"3","memory":"8Gi"}}',
        False,
        [SUCCESS, SUCCESS],
        id="under nodegroup limit permits preferred nodegroup",
    ),
    pytest.param(
        '{"group1":{"cpu":"3"}}', False, [SUCCESS, SUCCESS], id="omitted resource is unlimited"
    ),
    pytest.param(
        '{"group1":{"cpu":"1"}}',
        False,
        [UNRESOLVABLE, SUCCESS],
        id="specified resource dimension is enforced",
    ),
    pytest.param(
        '{"group1":{"cpu":"3","memory":"8Gi"}}',
        True,
        [UNRESOLVABLE, SUCCESS],
        id="over nodegroup limit rejects preferred nodegroup and permits fallback",
    ),
    pytest.param(
        '{"group1":{"cpu":',
        False,
        [UNRESOLVABLE, UNRESOLVABLE],
        id="invalid annotation rejects queue tasks",
    ),
]


@pytest.mark.parametrize(("annotation", "used", "want"), LIMITS)
def test_volcano_resource_limits_table(annotation: str | None, used: bool, want: list[str]) -> None:
    items: list[Item] = [
        *LIMIT_NODES,
        limited("q", annotation),
        podgroup("pg-pending", "limit").queue("q"),
        pod("pending", "limit").requests(cpu="2", memory="4Gi").group("pg-pending"),
    ]
    if used:
        items += [
            podgroup("pg-used", "limit").queue("q"),
            pod("used", "limit")
            .requests(cpu="2", memory="4Gi")
            .group("pg-used")
            .on("n1", TaskStatus.RUNNING),
        ]
    session, plugin = open_plugin(tuple(items), policy())
    assert list(statuses(session, plugin, "limit/pending").values()) == want


def test_limit_refusals_have_volcanos_words() -> None:
    items: tuple[Item, ...] = (
        *LIMIT_NODES,
        limited("q", '{"group1":{"cpu":"1"}}'),
        limited("bad", "[1]"),
        podgroup("pg", "limit").queue("q"),
        pod("p", "limit").requests(cpu="2", memory="4Gi").group("pg"),
        podgroup("pg-bad", "limit").queue("bad"),
        pod("b", "limit").requests(cpu="2", memory="4Gi").group("pg-bad"),
    )
    session, plugin = open_plugin(items, policy())
    assert reasons(session, plugin, "limit/p") == {
        "n1": "node group resource limit exceeded",
        "n2": None,
    }
    assert reasons(session, plugin, "limit/b") == {
        "n1": "node group resource limit annotation invalid",
        "n2": "node group resource limit annotation invalid",
    }
    assert not plugin.node_local


def test_an_allocation_counts_against_the_limit() -> None:
    """TestNodeGroupResourceLimitAllocationEvent: after the first pod's allocation the second
    no longer fits the group's limit; giving it back frees the room again."""
    items: tuple[Item, ...] = (
        LIMIT_NODES[0],
        queue("q")
        .node_groups(required=("group1",))
        .node_group_limits('{"group1":{"cpu":"3","memory":"8Gi"}}'),
        podgroup("pg-1", "limit").queue("q"),
        podgroup("pg-2", "limit").queue("q"),
        pod("pending-1", "limit").requests(cpu="2", memory="4Gi").group("pg-1"),
        pod("pending-2", "limit").requests(cpu="2", memory="4Gi").group("pg-2"),
    )
    session, plugin = open_plugin(items, policy())
    first, second = task_of(session, "limit/pending-1"), task_of(session, "limit/pending-2")
    one = np.array([0], dtype=np.int64)
    assert plugin.filter_nodes(first, one).tolist() == [True]

    session.apply_allocate(first, 0)
    assert plugin.filter_nodes(second, one).tolist() == [False]

    session.undo_allocate(first)
    assert plugin.filter_nodes(second, one).tolist() == [True]


def test_pending_pods_of_alike_queues_without_limits_are_node_local() -> None:
    _session, plugin = open_plugin(one_pod("q1", Q1, Q2), policy())
    assert plugin.node_local  # q2 (and default) have no pending pod
    items = (*one_pod("q1", Q1, Q2), podgroup("pg2").queue("q2"), pod("p2").group("pg2"))
    _session, plugin = open_plugin(items, policy())
    assert not plugin.node_local


# --- arguments ------------------------------------------------------------------------------------
def test_arguments_default_to_strict_and_unordered() -> None:
    factory = nodegroup.build({})
    assert (factory.strict, factory.ordered) == (True, False)
    factory = nodegroup.build({"strict": False, "enablePreferredOrder": True})
    assert (factory.strict, factory.ordered) == (False, True)


def test_a_bad_argument_is_a_policy_error() -> None:
    text = policy() + "    arguments:\n      strict: maybe\n      enablePreferedOrder: true\n"
    with pytest.raises(PolicyError) as caught:
        sessions.open_session(snapshot(), policy=text)
    assert list(caught.value.errors) == [
        "tiers[0].plugins[0]: plugin nodegroup: arguments.strict: must be true or false,"
        " got 'maybe'",
        "tiers[0].plugins[0]: plugin nodegroup: arguments.enablePreferedOrder: unknown argument;"
        " did you mean 'enablePreferredOrder'?",
    ]
