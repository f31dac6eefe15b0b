from __future__ import annotations

import datetime as dt
import threading
from typing import Any

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.informer.kinds import POD
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.status import TaskStatus

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def raw_pod(
    name: str, *, node: str | None = None, phase: str = "Pending", deleting: bool = False
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:05Z"
    spec: dict[str, Any] = {"schedulerName": "vscheduler", "containers": []}
    if node is not None:
        spec["nodeName"] = node
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def cache(clock: FixedClock) -> SchedulerCache:
    cache = SchedulerCache(clock=clock, assume_ttl=30.0)
    cache.replace(POD, [raw_pod("p1"), raw_pod("r1", node="n1", phase="Running")])
    return cache


def status_of(cache: SchedulerCache, uid: str) -> tuple[TaskStatus, str | None]:
    task = cache.snapshot().tasks[uid]
    return task.status, task.node_name


def test_an_assumed_bind_shows_the_task_bound_on_its_node(cache: SchedulerCache) -> None:
    before = cache.generation
    cache.assume_bind("uid-p1", "n2")
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n2")
    assert cache.generation != before


def test_an_assumed_bind_is_confirmed_by_the_watch_showing_the_node(
    cache: SchedulerCache, clock: FixedClock
) -> None:
    cache.assume_bind("uid-p1", "n2")
    cache.apply(POD, WatchEvent("MODIFIED", raw_pod("p1", node="n2")))
    clock.advance(60)
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n2")
    before = cache.generation
    cache.forget_bind("uid-p1")  # nothing left to forget
    assert cache.generation == before


def test_an_update_without_the_node_keeps_the_assumption(cache: SchedulerCache) -> None:
    cache.assume_bind("uid-p1", "n2")
    changed = raw_pod("p1")
    changed["metadata"]["labels"] = {"a": "b"}
    cache.apply(POD, WatchEvent("MODIFIED", changed))
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n2")


def test_a_forgotten_bind_shows_the_task_as_the_watch_has_it(cache: SchedulerCache) -> None:
    cache.assume_bind("uid-p1", "n2")
    before = cache.generation
    cache.forget_bind("uid-p1")
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)
    assert cache.generation != before


def test_an_assumed_bind_expires_after_its_ttl(cache: SchedulerCache, clock: FixedClock) -> None:
    cache.assume_bind("uid-p1", "n2")
    clock.advance(29)
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n2")
    before = cache.generation
    cache.changed.clear()
    clock.advance(2)
    assert cache.generation != before
    assert cache.changed.is_set()
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)


def test_assuming_again_restarts_the_ttl(cache: SchedulerCache, clock: FixedClock) -> None:
    cache.assume_bind("uid-p1", "n2")
    clock.advance(20)
    cache.assume_bind("uid-p1", "n3")
    clock.advance(20)
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n3")


def test_a_pod_deleted_while_assumed_is_simply_gone(cache: SchedulerCache) -> None:
    cache.assume_bind("uid-p1", "n2")
    cache.apply(POD, WatchEvent("DELETED", raw_pod("p1")))
    assert "uid-p1" not in cache.snapshot().tasks
    cache.apply(POD, WatchEvent("ADDED", raw_pod("p1")))
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)


def test_a_relist_without_the_pod_drops_its_assumption(cache: SchedulerCache) -> None:
    cache.assume_bind("uid-p1", "n2")
    cache.replace(POD, [raw_pod("r1", node="n1", phase="Running")])
    cache.replace(POD, [raw_pod("p1"), raw_pod("r1", node="n1", phase="Running")])
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)


def test_a_pod_the_cache_does_not_hold_is_not_assumed(cache: SchedulerCache) -> None:
    before = cache.generation
    cache.assume_bind("uid-gone", "n1")
    cache.assume_evict("uid-gone")
    assert cache.generation == before


def test_an_assumed_eviction_shows_the_task_releasing(cache: SchedulerCache) -> None:
    cache.assume_evict("uid-r1")
    assert status_of(cache, "uid-r1") == (TaskStatus.RELEASING, "n1")


def test_an_assumed_eviction_ends_when_the_pod_is_deleting(cache: SchedulerCache) -> None:
    cache.assume_evict("uid-r1")
    cache.apply(
        POD, WatchEvent("MODIFIED", raw_pod("r1", node="n1", phase="Running", deleting=True))
    )
    cache.apply(POD, WatchEvent("MODIFIED", raw_pod("r1", node="n1", phase="Running")))
    assert status_of(cache, "uid-r1") == (TaskStatus.RUNNING, "n1")


def test_a_forgotten_or_expired_eviction_shows_the_task_running(
    cache: SchedulerCache, clock: FixedClock
) -> None:
    cache.assume_evict("uid-r1")
    cache.forget_evict("uid-r1")
    assert status_of(cache, "uid-r1") == (TaskStatus.RUNNING, "n1")
    cache.assume_evict("uid-r1")
    clock.advance(31)
    assert status_of(cache, "uid-r1") == (TaskStatus.RUNNING, "n1")


def test_an_assumed_task_is_the_same_facts_object_across_snapshots(cache: SchedulerCache) -> None:
    cache.assume_bind("uid-p1", "n2")
    assert cache.snapshot().tasks["uid-p1"] is cache.snapshot().tasks["uid-p1"]


def test_a_task_bound_then_evicted_before_the_watch_confirms_shows_releasing(
    cache: SchedulerCache,
) -> None:
    cache.assume_bind("uid-p1", "n2")
    cache.assume_evict("uid-p1")
    assert status_of(cache, "uid-p1") == (TaskStatus.RELEASING, "n2")


def watch(cache: SchedulerCache, prefix: str) -> None:
    for i in range(300):
        cache.apply(POD, WatchEvent("ADDED", raw_pod(f"{prefix}{i}")))
        if i % 3 == 0:
            cache.apply(POD, WatchEvent("DELETED", raw_pod(f"{prefix}{i}")))


def assume(cache: SchedulerCache) -> None:
    for i in range(300):
        cache.assume_bind(f"uid-a{i}", "n1")
        cache.forget_bind(f"uid-b{i}")


def snapshots(cache: SchedulerCache) -> None:
    for _ in range(50):
        snap = cache.snapshot()
        assert all(t.uid == uid for uid, t in snap.tasks.items())


def test_events_assumptions_and_snapshots_from_many_threads_keep_the_cache_consistent(
    clock: FixedClock,
) -> None:
    cache = SchedulerCache(clock=clock)
    errors: list[BaseException] = []

    def guarded(fn: Any, *args: Any) -> threading.Thread:
        def run() -> None:
            try:
                fn(*args)
            except BaseException as err:
                errors.append(err)

        return threading.Thread(target=run)

    threads = [
        guarded(watch, cache, "a"),
        guarded(watch, cache, "b"),
        guarded(assume, cache),
        guarded(snapshots, cache),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert errors == []
    assert len(cache.snapshot().tasks) == 400


def test_a_held_bind_does_not_expire_while_its_call_is_queued_and_its_ttl_starts_when_sent(
    cache: SchedulerCache, clock: FixedClock
) -> None:
    cache.assume_binds([("uid-p1", "n2")], held=True)
    clock.advance(600)
    _ = cache.generation  # reading the generation expires what is due
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n2")
    cache.bind_sent("uid-p1")
    clock.advance(29)
    _ = cache.generation
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n2")
    clock.advance(2)
    _ = cache.generation
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)


def test_a_held_bind_is_forgotten_when_its_call_fails(cache: SchedulerCache) -> None:
    cache.assume_binds([("uid-p1", "n2")], held=True)
    cache.forget_bind("uid-p1")
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)
