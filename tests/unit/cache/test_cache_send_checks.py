"""The cache answers, just before a write is sent, whether its decision still holds (and why
not, in words the log shows), and tells listeners of every node deleted, after its lock."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.informer.kinds import NODE, POD
from vscheduler.informer.ports import WatchEvent

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def raw_pod(name: str, *, uid: str = "", node: str | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"schedulerName": "vscheduler", "containers": [], **spec}
    if node is not None:
        body["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": uid or f"uid-{name}"},
        "spec": body,
        "status": {"phase": "Running" if node else "Pending"},
    }


def raw_node(name: str, *, unschedulable: bool = False) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": {"unschedulable": unschedulable},
        "status": {"allocatable": {"cpu": "4", "pods": "10"}},
    }


@pytest.fixture
def cache() -> SchedulerCache:
    cache = SchedulerCache(clock=FixedClock(START))
    cache.replace(NODE, [raw_node("n1"), raw_node("n2", unschedulable=True)])
    cache.replace(POD, [raw_pod("p1"), raw_pod("r1", node="n1")])
    return cache


def test_a_bind_holds_while_its_node_is_there_and_its_pod_pending_and_unplaced(
    cache: SchedulerCache,
) -> None:
    assert cache.bind_problem("uid-p1", "n1") is None


@pytest.mark.parametrize(
    ("uid", "node", "problem"),
    [
        ("uid-p1", "n9", "node n9 is gone"),
        ("uid-p1", "n2", "node n2 is cordoned (spec.unschedulable)"),
        (
            "uid-gone",
            "n1",
            "the pod with uid uid-gone is gone (deleted, or replaced under the same name)",
        ),
        ("uid-r1", "n1", "pod ns/r1 is Running on node n1 already"),
    ],
)
def test_a_bind_that_no_longer_holds_says_why(
    cache: SchedulerCache, uid: str, node: str, problem: str
) -> None:
    assert cache.bind_problem(uid, node) == problem


def test_a_pod_recreated_under_its_name_is_another_pod(cache: SchedulerCache) -> None:
    cache.apply(POD, WatchEvent("ADDED", raw_pod("p1", uid="uid-p1-again")))
    assert cache.bind_problem("uid-p1", "n1") == (
        "the pod with uid uid-p1 is gone (deleted, or replaced under the same name)"
    )
    assert (
        cache.condition_problem("ns/p1", "uid-p1")
        == "pod ns/p1 (uid uid-p1) is gone or was replaced"
    )
    assert cache.evict_problem("uid-p1") is not None


def test_a_pod_that_tolerates_the_cordon_may_still_be_bound_to_a_cordoned_node(
    cache: SchedulerCache,
) -> None:
    tolerating = raw_pod(
        "ds",
        tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}],
    )
    cache.apply(POD, WatchEvent("ADDED", tolerating))
    assert cache.bind_problem("uid-ds", "n2") is None


def test_a_condition_holds_only_on_an_unplaced_pod(cache: SchedulerCache) -> None:
    assert cache.condition_problem("ns/p1", "uid-p1") is None
    assert cache.condition_problem("ns/r1", "uid-r1") == "pod ns/r1 is on node n1 already"


def test_listeners_hear_of_each_node_deleted_by_an_event_or_a_relist_and_a_failing_one_is_logged(
    cache: SchedulerCache, caplog: pytest.LogCaptureFixture
) -> None:
    heard: list[str] = []

    def broken(_name: str) -> None:
        raise RuntimeError("listener bug")

    cache.on_node_deleted(broken)
    cache.on_node_deleted(heard.append)
    with caplog.at_level(logging.ERROR, logger="vscheduler.cache.cache"):
        cache.apply(NODE, WatchEvent("DELETED", raw_node("n2")))
        cache.replace(NODE, [])
    assert heard == ["n2", "n1"]
    assert caplog.messages == [
        "a listener of node n2's deletion failed",
        "a listener of node n1's deletion failed",
    ]
    assert cache.bind_problem("uid-p1", "n1") == "node n1 is gone"
