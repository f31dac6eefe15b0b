"""A refused eviction puts the pod in backoff: snapshots show it `eviction_refused` until the
backoff ends, the pod goes, or a budget of its namespace lets a disruption through; a refusal
changes the generation without waking the loop."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.cache.refusals import INITIAL_BACKOFF, MAX_BACKOFF, backoff
from vscheduler.clock import FixedClock
from vscheduler.informer.kinds import PDB, POD
from vscheduler.informer.ports import WatchEvent

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def raw_pod(name: str, namespace: str = "ns") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {"schedulerName": "vscheduler", "nodeName": "n1", "containers": []},
        "status": {"phase": "Running"},
    }


def raw_pdb(allowed: int, version: str, namespace: str = "ns") -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": namespace, "resourceVersion": version},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 0},
        "status": {"disruptionsAllowed": allowed},
    }


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def cache(clock: FixedClock) -> SchedulerCache:
    cache = SchedulerCache(clock=clock)
    cache.replace(POD, [raw_pod("r1"), raw_pod("r2"), raw_pod("o1", namespace="other")])
    cache.replace(PDB, [raw_pdb(0, "1")])
    return cache


def refused(cache: SchedulerCache) -> list[str]:
    return sorted(uid for uid, t in cache.snapshot().tasks.items() if t.eviction_refused)


def test_the_backoff_doubles_from_five_seconds_up_to_two_minutes() -> None:
    assert [backoff(n) for n in range(1, 8)] == [5.0, 10.0, 20.0, 40.0, 80.0, 120.0, 120.0]
    assert backoff(1000) == MAX_BACKOFF


def test_the_backoff_is_never_shorter_than_the_api_servers_retry_after() -> None:
    assert backoff(1, retry_after=30.0) == 30.0
    assert backoff(3, retry_after=1.0) == 20.0


def test_a_refused_pod_is_shown_refused_until_its_backoff_ends(
    cache: SchedulerCache, clock: FixedClock
) -> None:
    cache.assume_evict("uid-r1")
    assert cache.refuse_evict("uid-r1") == INITIAL_BACKOFF
    assert refused(cache) == ["uid-r1"]
    assert cache.snapshot().tasks["uid-r1"].status.name == "RUNNING"  # the assumption is gone
    clock.advance(INITIAL_BACKOFF - 0.5)
    assert refused(cache) == ["uid-r1"]
    clock.advance(0.5)
    assert refused(cache) == []


def test_a_pod_refused_again_backs_off_longer(cache: SchedulerCache, clock: FixedClock) -> None:
    cache.refuse_evict("uid-r1")
    clock.advance(INITIAL_BACKOFF)
    assert cache.refuse_evict("uid-r1") == 2 * INITIAL_BACKOFF


def test_the_retry_after_the_api_server_sent_is_honoured(
    cache: SchedulerCache, clock: FixedClock
) -> None:
    assert cache.refuse_evict("uid-r1", retry_after=30.0) == 30.0
    clock.advance(29)
    assert refused(cache) == ["uid-r1"]
    clock.advance(1)
    assert refused(cache) == []


def test_a_refusal_changes_the_generation_without_waking_the_loop(cache: SchedulerCache) -> None:
    before = cache.generation
    cache.changed.clear()
    cache.refuse_evict("uid-r1")
    assert cache.generation != before
    assert not cache.changed.is_set()


def test_the_end_of_a_backoff_wakes_the_loop(cache: SchedulerCache, clock: FixedClock) -> None:
    cache.refuse_evict("uid-r1")
    before = cache.generation
    cache.changed.clear()
    clock.advance(INITIAL_BACKOFF)
    assert cache.generation != before
    assert cache.changed.is_set()


def test_a_budget_that_allows_a_disruption_again_ends_its_namespaces_backoffs(
    cache: SchedulerCache,
) -> None:
    for uid in ("uid-r1", "uid-o1"):
        cache.refuse_evict(uid)
    cache.apply(PDB, WatchEvent("MODIFIED", raw_pdb(0, "2")))
    assert refused(cache) == ["uid-o1", "uid-r1"]
    cache.changed.clear()
    cache.apply(PDB, WatchEvent("MODIFIED", raw_pdb(1, "3")))
    assert refused(cache) == ["uid-o1"]
    assert cache.changed.is_set()
    assert cache.refuse_evict("uid-r1") == INITIAL_BACKOFF  # the count started over


def test_a_deleted_budget_ends_its_namespaces_backoffs(cache: SchedulerCache) -> None:
    cache.refuse_evict("uid-r1")
    cache.apply(PDB, WatchEvent("DELETED", raw_pdb(0, "1")))
    assert refused(cache) == []


def test_a_deleted_pod_leaves_no_backoff_behind(cache: SchedulerCache) -> None:
    cache.refuse_evict("uid-r1")
    cache.apply(POD, WatchEvent("DELETED", raw_pod("r1")))
    assert refused(cache) == []
    cache.apply(POD, WatchEvent("ADDED", raw_pod("r1")))
    assert refused(cache) == []


def test_a_refusal_for_a_pod_the_cache_does_not_hold_is_ignored(cache: SchedulerCache) -> None:
    assert cache.refuse_evict("uid-gone") == 0.0
    assert refused(cache) == []


def test_a_snapshot_shows_the_same_facts_object_while_nothing_changes(
    cache: SchedulerCache,
) -> None:
    cache.refuse_evict("uid-r1")
    assert cache.snapshot().tasks["uid-r1"] is cache.snapshot().tasks["uid-r1"]


def test_an_eviction_not_sent_can_be_forgotten_without_waking_the_loop(
    cache: SchedulerCache,
) -> None:
    cache.assume_evict("uid-r1")
    before = cache.generation
    cache.changed.clear()
    cache.forget_evict("uid-r1", wake=False)
    assert cache.snapshot().tasks["uid-r1"].status.name == "RUNNING"
    assert cache.generation != before
    assert not cache.changed.is_set()
