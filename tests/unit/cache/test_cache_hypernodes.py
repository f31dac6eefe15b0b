"""The cache and HyperNodes: watched like any kind, the tree built once per change (of the
HyperNodes, or of the node names and labels their selectors read), and what the tree leaves out
reported as the HyperNode's problem."""

from __future__ import annotations

import datetime as dt
from typing import Any

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.informer.kinds import HYPERNODE, NODE
from vscheduler.informer.ports import WatchEvent

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def hypernode(name: str, tier: int, *members: dict[str, Any], version: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name, "resourceVersion": version},
        "spec": {"tier": tier, "members": list(members)},
    }


def nodes_member(name: str) -> dict[str, Any]:
    return {"type": "Node", "selector": {"exactMatch": {"name": name}}}


def child(name: str) -> dict[str, Any]:
    return {"type": "HyperNode", "selector": {"exactMatch": {"name": name}}}


def raw_node(name: str, labels: dict[str, str] | None = None, version: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}, "resourceVersion": version},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def cache_of(*hypernodes: dict[str, Any], nodes: tuple[dict[str, Any], ...] = ()) -> SchedulerCache:
    cache = SchedulerCache(clock=FixedClock(START))
    cache.replace(NODE, list(nodes))
    cache.replace(HYPERNODE, list(hypernodes))
    return cache


def test_the_tree_is_built_once_until_the_hypernodes_change() -> None:
    cache = cache_of(
        hypernode("s0", 1, nodes_member("n0")),
        hypernode("s1", 2, child("s0")),
        nodes=(raw_node("n0"),),
    )
    first = cache.snapshot().topology
    assert first.domains["s1"].nodes == {"n0"}
    cache.apply(NODE, WatchEvent("MODIFIED", raw_node("n0", {"zone": "a"}, version="2")))
    assert cache.snapshot().topology is first  # exact members read no node
    cache.apply(
        HYPERNODE, WatchEvent("MODIFIED", hypernode("s0", 1, nodes_member("n9"), version="2"))
    )
    second = cache.snapshot().topology
    assert second is not first
    assert second.domains["s1"].nodes == {"n9"}
    cache.apply(HYPERNODE, WatchEvent("DELETED", hypernode("s1", 2)))
    assert list(cache.snapshot().topology.domains) == ["s0"]


def test_a_label_selector_is_read_again_when_a_nodes_labels_change_only() -> None:
    labelled = {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "a"}}}}
    cache = cache_of(hypernode("s0", 1, labelled), nodes=(raw_node("n0"), raw_node("n1")))
    first = cache.snapshot().topology
    assert first.domains["s0"].nodes == frozenset()
    cache.apply(NODE, WatchEvent("MODIFIED", raw_node("n0", {"rack": "a"}, version="2")))
    second = cache.snapshot().topology
    assert second.domains["s0"].nodes == {"n0"}
    node = raw_node("n0", {"rack": "a"}, version="3")
    node["status"]["allocatable"]["cpu"] = "8"  # not a label: the tree stays
    cache.apply(NODE, WatchEvent("MODIFIED", node))
    assert cache.snapshot().topology is second


def test_hypernodes_left_out_are_reported_as_problems_and_odd_ones_as_warnings() -> None:
    cache = cache_of(
        hypernode("bad", 1, {"type": "Node", "selector": {"regexMatch": {"pattern": "["}}}),
        hypernode("loop", 2, child("loop")),
        hypernode("s0", 1, nodes_member("n0")),
        hypernode("s1", 2, child("s0")),
        hypernode("s2", 3, child("s0")),
    )
    snap = cache.snapshot()
    assert list(snap.topology.domains) == ["s0", "s1", "s2"]
    problems = cache.problems()
    assert set(problems) == {"HyperNode bad", "HyperNode loop"}
    assert problems["HyperNode bad"].startswith(
        "HyperNode bad: spec.members[0].selector.regexMatch.pattern: '[' is not a regular"
    )
    assert "makes a membership cycle (loop -> loop)" in problems["HyperNode loop"]
    (warning,) = cache.warnings()["HyperNode s2"]
    assert "HyperNode s0 is a member of HyperNode s1 (tier 2) too" in warning.message
    assert cache.object_raw("HyperNode", "bad") is not None  # the Event's object


def test_no_hypernode_costs_no_tree() -> None:
    cache = cache_of(nodes=(raw_node("n0"),))
    snap = cache.snapshot()
    assert not snap.topology
    assert snap.hypernodes == ()
