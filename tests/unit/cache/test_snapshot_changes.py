"""Each snapshot names the tasks that may differ from the cache's previous snapshot
(`ClusterSnapshot.changes`): a session opened on that previous snapshot reads only these. Under
any sequence of watch events, assumptions, refusals, expiries and priority class changes, every
task whose facts object is not the previous snapshot's very one is named."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from vscheduler.cache.cache import SchedulerCache
from vscheduler.cache.tables import PodTable
from vscheduler.clock import FixedClock
from vscheduler.informer.kinds import NODE, POD, PODGROUP, PRIORITY_CLASS, QUEUE
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.testing.builders import START

NAMES = [f"p{i}" for i in range(6)]


def raw_pod(
    name: str,
    *,
    node: str | None = None,
    phase: str = "Pending",
    priority_class: str | None = None,
    created: int = 0,
    version: str = "",
) -> dict[str, Any]:
    """A pod of ours (uid `uid-{name}`), its class named when `priority_class` is given."""
    spec: dict[str, Any] = {"schedulerName": "vscheduler", "containers": [{"name": "c"}]}
    spec |= {"nodeName": node} if node else {}
    spec |= {"priorityClassName": priority_class} if priority_class else {}
    when = f"2026-01-01T00:00:0{created}Z"
    meta = {"name": name, "namespace": "ns", "uid": f"uid-{name}", "creationTimestamp": when}
    meta |= {"resourceVersion": version} if version else {}
    return {"kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase}}


def raw_class(name: str, value: int) -> dict[str, Any]:
    return {"kind": "PriorityClass", "metadata": {"name": name}, "value": value}


step = st.one_of(
    st.tuples(
        st.just("pod"),
        st.sampled_from(NAMES),
        st.sampled_from([None, "n1", "n2"]),
        st.sampled_from(["Pending", "Running", "Succeeded"]),
        st.sampled_from([None, "hi"]),
        st.integers(0, 3),  # the creation second: pods created together in any uid order
    ),
    st.tuples(st.just("delete"), st.sampled_from(NAMES)),
    st.tuples(st.just("bind"), st.sampled_from(NAMES), st.sampled_from(["n1", "n2"])),
    st.tuples(st.just("sent"), st.sampled_from(NAMES)),
    st.tuples(st.just("evict"), st.sampled_from(NAMES)),
    st.tuples(st.just("refuse"), st.sampled_from(NAMES)),
    st.tuples(st.just("forget"), st.sampled_from(NAMES)),
    st.tuples(st.just("class"), st.integers(0, 100)),
    st.tuples(st.just("time"), st.sampled_from([1, 31, 600])),
    st.tuples(
        st.just("snapshot"),
    ),
)


def named_between(before: ClusterSnapshot, after: ClusterSnapshot) -> None:
    assert after.changes is not None
    assert after.changes.since == before.serial != after.serial
    differ = {
        uid
        for uid in before.tasks.keys() | after.tasks.keys()
        if before.tasks.get(uid) is not after.tasks.get(uid)
    }
    assert differ <= after.changes.uids


@settings(max_examples=300, deadline=None)
@given(st.lists(step, max_size=30))
def test_every_task_that_differs_from_the_last_snapshot_is_named(steps: list[Any]) -> None:
    clock = FixedClock(START)
    cache = SchedulerCache(clock=clock)
    for kind in (NODE, PODGROUP, QUEUE, PRIORITY_CLASS):
        cache.replace(kind, [])
    cache.replace(POD, [raw_pod("p0"), raw_pod("p1", node="n1", phase="Running")])
    last = cache.snapshot()
    assert last.changes is None  # the cache's first: nothing to tell it from
    version = 0
    for kind, *args in steps:
        if kind == "pod":
            name, node, phase, priority_class, created = args
            version += 1
            obj = raw_pod(
                name,
                node=node,
                phase=phase,
                priority_class=priority_class,
                created=created,
                version=str(version),
            )
            cache.apply(POD, WatchEvent("MODIFIED", obj))
        elif kind == "delete":
            cache.apply(POD, WatchEvent("DELETED", raw_pod(args[0])))
        elif kind == "bind":
            cache.assume_binds([(f"uid-{args[0]}", args[1])], held=True)
        elif kind == "sent":
            cache.bind_sent(f"uid-{args[0]}")
        elif kind == "evict":
            cache.assume_evicts([f"uid-{args[0]}"])
        elif kind == "refuse":
            cache.refuse_evict(f"uid-{args[0]}", 30.0)
        elif kind == "forget":
            cache.forget_evict(f"uid-{args[0]}")
        elif kind == "class":
            cache.apply(PRIORITY_CLASS, WatchEvent("MODIFIED", raw_class("hi", args[0])))
        elif kind == "time":
            clock.advance(args[0])
        else:
            snap = cache.snapshot()
            named_between(last, snap)
            last = snap
    named_between(last, cache.snapshot())


def test_two_caches_never_pass_for_each_other() -> None:
    one, other = (SchedulerCache(clock=FixedClock(START)) for _ in range(2))
    first = one.snapshot()
    other.snapshot()
    nxt = other.snapshot()
    assert nxt.changes is not None
    assert nxt.changes.since != first.serial


def test_a_cache_that_takes_no_snapshot_forgets_what_changed_past_a_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A standby replica watches without taking snapshots: the uids it would name are bounded
    (past the bound the next snapshot names nothing: its session compares every task)."""
    monkeypatch.setattr(PodTable, "TOUCHED_HELD", 3)
    cache = SchedulerCache(clock=FixedClock(START))
    for kind in (NODE, PODGROUP, QUEUE, PRIORITY_CLASS, POD):
        cache.replace(kind, [])
    first = cache.snapshot()
    for i in range(4):  # pods come and go: none is held, their uids would pile up
        cache.apply(POD, WatchEvent("ADDED", raw_pod(f"p{i}")))
        cache.apply(POD, WatchEvent("DELETED", raw_pod(f"p{i}")))
    second = cache.snapshot()
    assert second.changes is None
    cache.apply(POD, WatchEvent("ADDED", raw_pod("again")))
    third = cache.snapshot()
    assert third.changes is not None
    assert third.changes.since == second.serial
    assert third.changes.uids == {"uid-again"}
    assert first.serial < second.serial < third.serial
