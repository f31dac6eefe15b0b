"""rescheduling's lowNodeUtilization: node classification, hysteresis, fresh data only, the room
of the cold nodes, and the exact victims, through `propose_victims` on real sessions.

Nodes have 10 CPU and 10Gi unless said otherwise; thresholds are cpu/memory 20%, targets 50%
(pods keep Volcano's 100/100 unless a test sets them)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from vscheduler.actions import shuffle
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import NodeFacts, NodeUsage, TaskFacts
from vscheduler.model.status import QoSClass
from vscheduler.plugins.rescheduling import Proposing
from vscheduler.testing import sessions
from vscheduler.testing.builders import START, node, pod, snapshot

LNU: dict[str, object] = {
    "name": "lowNodeUtilization",
    "params": {
        "thresholds": {"cpu": 20, "memory": 20},
        "targetThresholds": {"cpu": 50, "memory": 50},
    },
}


def usage(
    name: str,
    cpu: float,
    memory: float,
    *,
    earlier: int = 2,
    past: tuple[tuple[float, float], ...] | None = None,
    period: str = "10m",
    age: float = 0.0,
    stale: bool = False,
) -> NodeUsage:
    """Usage measured `age` seconds before START; `earlier` identical earlier collections unless
    `past` gives them (cpu, memory), oldest first."""

    def shaped(c: float, m: float) -> Mapping[str, Mapping[str, float]]:
        return {"cpu": {period: c}, "memory": {period: m}}

    history = (
        tuple(shaped(c, m) for c, m in past)
        if past is not None
        else (shaped(cpu, memory),) * earlier
    )
    return NodeUsage(
        node=name,
        usage=shaped(cpu, memory),
        metrics_time=START - dt.timedelta(seconds=age),
        stale=stale,
        history=history,
    )


def box(name: str, pods: int = 110) -> NodeFacts:
    return node(name).resources(cpu="10", memory="10Gi", pods=pods).build()


def running(
    name: str,
    on: str = "n1",
    *,
    cpu: str = "1",
    priority: int = 0,
    qos: QoSClass = QoSClass.BURSTABLE,
    **changes: Any,
) -> TaskFacts:
    facts = pod(name).requests(cpu=cpu, memory="1Gi").on(on).priority(priority).build()
    return dataclasses.replace(facts, owner=f"ReplicaSet/{name}", qos=qos, **changes)


def hot_n1_pods() -> tuple[TaskFacts, ...]:
    return (
        running("a"),
        running("b", cpu="2", qos=QoSClass.GUARANTEED),
        running("c", priority=5),
        running("d", priority=-1),
    )


def three_nodes(
    *items: NodeUsage | TaskFacts | NodeFacts, n1: NodeFacts | None = None
) -> ClusterSnapshot:
    """n1 (pods a-d), n2, n3; usage from `items`."""
    return snapshot(n1 or box("n1"), box("n2"), box("n3"), *hot_n1_pods(), *items)


def run_plugin(
    snap: ClusterSnapshot, *strategies: dict[str, object], **arguments: object
) -> tuple[list[str], Proposing, dict[str, tuple[str, str]]]:
    entry = {
        "name": "rescheduling",
        "arguments": {"strategies": list(strategies) or [LNU], **arguments},
    }
    text = yaml.safe_dump({"actions": "", "tiers": [{"plugins": [entry]}]})
    session = sessions.open_session(snap, text)
    plugin = session.plugins["rescheduling"]
    assert isinstance(plugin, Proposing)
    victims = plugin.propose_victims(shuffle.candidates(session))
    notes = {
        session.tasks[uid].facts.name: note for uid, note in session.findings.victim_notes.items()
    }
    return [t.facts.name for t in victims], plugin, notes


def victims(
    snap: ClusterSnapshot, *strategies: dict[str, object], **arguments: object
) -> list[str]:
    return run_plugin(snap, *strategies, **arguments)[0]


def outcome(snap: ClusterSnapshot, *strategies: dict[str, object]) -> str:
    return run_plugin(snap, *strategies)[1].outcome


HOT = usage("n1", 90, 40)
COLD = usage("n2", 10, 10)
NORMAL = usage("n3", 40, 40)


# --- choosing victims ----------------------------------------------------------------------------
def test_pods_leave_the_hot_node_lowest_priority_first_until_it_is_back_at_target() -> None:
    # n1 uses 9000m of 10000m; the target is 5000m. d (-1), a (0, Burstable), b (0, Guaranteed,
    # 2 CPU) bring it to 8000, 7000, 5000m = exactly 50%: no longer over, so c stays.
    names, plugin, notes = run_plugin(three_nodes(HOT, COLD, NORMAL))

    assert names == ["d", "a", "b"]
    reason = "node n1 over target (cpu 90% > 50%)"
    assert notes == dict.fromkeys(("d", "a", "b"), ("lowNodeUtilization", reason))
    assert plugin.outcome == "3 pods from 1 hot nodes"


def test_the_room_left_on_cold_nodes_bounds_how_many_pods_leave() -> None:
    # A 2-CPU cold node at 10% has 50% x 2000m - 200m = 800m of room: d takes 1000m of it and
    # leaves it below zero, so a stays although n1 is still over target. Two such nodes: 1600m.
    small = [node(n).resources(cpu="2", memory="10Gi").build() for n in ("n2", "n3")]
    one_cold = snapshot(box("n1"), small[0], box("n3"), *hot_n1_pods(), HOT, COLD, NORMAL)
    two_cold = snapshot(box("n1"), *small, *hot_n1_pods(), HOT, COLD, usage("n3", 10, 10))

    assert victims(one_cold) == ["d"]
    assert victims(two_cold) == ["d", "a"]


def test_the_hottest_node_gives_first_and_the_room_it_uses_is_gone_for_the_others() -> None:
    # n3 at 70% + 70% = 140 is hotter than n1 at 90% + 40% = 130. n2 at 15%/15% has 3500m and
    # 3.5Gi of room. n3 gives e and f (70% -> 60% -> 50%: at target), n1 then d (room 500m left)
    # and a (room gone).
    n3_pods = (running("e", on="n3"), running("f", on="n3"), running("g", on="n3"))
    snap = three_nodes(usage("n1", 90, 40), usage("n2", 15, 15), usage("n3", 70, 70), *n3_pods)

    assert victims(snap) == ["e", "f", "d", "a"]


def test_two_hot_nodes_with_the_same_load_go_by_name() -> None:
    n3_pods = (running("e", on="n3"),)
    snap = three_nodes(usage("n1", 60, 40), usage("n2", 10, 10), usage("n3", 60, 40), *n3_pods)

    assert victims(snap) == ["d", "e"]


def test_a_pod_whose_request_would_not_cool_the_node_is_passed_over() -> None:
    best_effort = dataclasses.replace(
        pod("be").on("n1").priority(-5).build(), owner="ReplicaSet/be", qos=QoSClass.BEST_EFFORT
    )
    snap = three_nodes(HOT, COLD, NORMAL, best_effort)

    assert victims(snap) == ["d", "a", "b"]


def test_every_resource_over_target_is_named_in_the_reason() -> None:
    _, _, notes = run_plugin(three_nodes(usage("n1", 90, 72.4), COLD, NORMAL))

    reason = "node n1 over target (cpu 90% > 50%, memory 72.4% > 50%)"
    assert notes["d"] == ("lowNodeUtilization", reason)


def test_pods_count_against_the_pods_thresholds_without_history() -> None:
    # n1 holds 4 pods of at most 4: 100% > 80%. One leaves: 3/4 = 75%, back under.
    pods_lnu: dict[str, object] = {
        "name": "lowNodeUtilization",
        "params": {
            "thresholds": {"cpu": 20, "memory": 20, "pods": 50},
            "targetThresholds": {"cpu": 50, "memory": 50, "pods": 80},
        },
    }
    snap = three_nodes(usage("n1", 30, 30, earlier=0), COLD, NORMAL, n1=box("n1", pods=4))
    names, _, notes = run_plugin(snap, pods_lnu)

    assert names == ["d"]
    assert notes["d"][1] == "node n1 over target (pods 100% > 80%)"


def test_the_chain_filters_and_orders_what_lownodeutilization_takes() -> None:
    snap = three_nodes(HOT, COLD, NORMAL)
    offline = dataclasses.replace(running("z-offline", priority=9), preemptable=True)
    snap_offline = three_nodes(HOT, COLD, NORMAL, offline)

    assert victims(snap_offline, {"name": "offlineOnly"}, LNU) == ["z-offline"]
    assert victims(snap, {"name": "bigObjectFirst"}, LNU) == ["b", "d", "a"]


def test_pods_on_nodes_that_are_not_hot_are_never_taken() -> None:
    snap = three_nodes(
        HOT,
        COLD,
        NORMAL,
        running("x", on="n3", priority=-100),
        running("y", on="n2", priority=-100),
    )

    assert victims(snap) == ["d", "a", "b"]


def test_the_same_cluster_policy_and_time_give_the_same_victims() -> None:
    snap = three_nodes(HOT, COLD, NORMAL)

    assert victims(snap) == victims(snap) == ["d", "a", "b"]


# --- when it stops -------------------------------------------------------------------------------
def test_volcanos_default_thresholds_of_100_move_nothing() -> None:
    snap = three_nodes(usage("n1", 99, 99), COLD, NORMAL)

    assert victims(snap, {"name": "lowNodeUtilization"}) == []
    assert outcome(snap, {"name": "lowNodeUtilization"}) == "every node is below thresholds"


@pytest.mark.parametrize(
    ("n1", "n2", "n3", "said"),
    [
        pytest.param(
            HOT, usage("n2", 25, 10), NORMAL, "no node is below thresholds", id="no low node"
        ),
        pytest.param(
            usage("n1", 10, 10),
            COLD,
            usage("n3", 5, 5),
            "every node is below thresholds",
            id="every node low",
        ),
        pytest.param(
            usage("n1", 50, 50),
            COLD,
            NORMAL,
            "no node stays above targetThresholds",
            id="no high node",
        ),
    ],
)
def test_nothing_moves_without_both_cold_and_hot_nodes(
    n1: NodeUsage, n2: NodeUsage, n3: NodeUsage, said: str
) -> None:
    snap = three_nodes(n1, n2, n3)

    assert victims(snap) == []
    assert outcome(snap) == said


# --- hysteresis and fresh data -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("hot", "arguments", "moved"),
    [
        pytest.param(usage("n1", 90, 40, earlier=1), {}, [], id="two collections of three"),
        pytest.param(usage("n1", 90, 40, earlier=0), {}, [], id="a first collection"),
        pytest.param(usage("n1", 90, 40, past=((90, 40), (45, 40))), {}, [], id="a dip last time"),
        pytest.param(
            usage("n1", 90, 40, past=((10, 40), (95, 40), (91, 40))),
            {},
            ["d", "a", "b"],
            id="older dips do not count",
        ),
        pytest.param(
            usage("n1", 90, 40, earlier=0),
            {"consecutiveCollections": 1},
            ["d", "a", "b"],
            id="one collection when asked",
        ),
        pytest.param(
            usage("n1", 90, 40, earlier=3),
            {"consecutiveCollections": 5},
            [],
            id="five asked, four known",
        ),
    ],
)
def test_a_node_gives_up_pods_only_after_staying_over_target_for_consecutive_collections(
    hot: NodeUsage, arguments: dict[str, object], moved: list[str]
) -> None:
    assert victims(three_nodes(hot, COLD, NORMAL), **arguments) == moved


@pytest.mark.parametrize(
    "hot",
    [
        pytest.param(usage("n1", 90, 40, stale=True), id="stale: the last collection failed"),
        pytest.param(usage("n1", 90, 40, age=301), id="measured over 5 minutes ago"),
        pytest.param(usage("n1", 90, 40, period="5m"), id="without the metrics period"),
        pytest.param(None, id="no usage at all"),
    ],
)
def test_a_node_without_fresh_usage_is_left_alone(hot: NodeUsage | None) -> None:
    items = (COLD, NORMAL) if hot is None else (hot, COLD, NORMAL)

    assert victims(three_nodes(*items)) == []


def test_usage_measured_exactly_5_minutes_ago_is_still_fresh() -> None:
    assert victims(three_nodes(usage("n1", 90, 40, age=300), COLD, NORMAL)) == ["d", "a", "b"]


def test_metrics_period_names_the_usage_key_read() -> None:
    snap = three_nodes(
        usage("n1", 90, 40, period="5m"),
        usage("n2", 10, 10, period="5m"),
        usage("n3", 40, 40, period="5m"),
    )

    assert victims(snap, metricsPeriod="5m") == ["d", "a", "b"]


@pytest.mark.parametrize(
    ("n1", "n2"),
    [
        pytest.param(
            box("n1"),
            dataclasses.replace(box("n2"), unschedulable=True),
            id="the cold node is cordoned",
        ),
        pytest.param(
            box("n1"), dataclasses.replace(box("n2"), ready=False), id="the cold node is not ready"
        ),
        pytest.param(
            dataclasses.replace(box("n1"), unschedulable=True),
            box("n2"),
            id="the hot node is cordoned",
        ),
    ],
)
def test_cordoned_and_unready_nodes_take_no_part(n1: NodeFacts, n2: NodeFacts) -> None:
    snap = snapshot(n1, n2, box("n3"), *hot_n1_pods(), HOT, COLD, NORMAL)

    assert victims(snap) == []
