"""A pod's `status.nominatedNodeName`: written where the cycle nominates a node the watched pod
does not show, cleared where the snapshot's pod carries one the cycle no longer wants (bound, or
the nomination dropped), not repeated while in flight; read back by the converter for pods of
this scheduler only, so a restarted scheduler keeps its nominations."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Literal

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.convert.pod import convert_pod
from vscheduler.effects import status as st
from vscheduler.effects.executor import EffectsExecutor
from vscheduler.effects.ports import ObjectRef
from vscheduler.errors import TransientClusterError
from vscheduler.informer.kinds import NODE, POD
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.commands import Bind, CycleResult
from vscheduler.testing.executors import carry_out, running_executor
from vscheduler.testing.writers import RefusingWriter

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


class FakeWriter(RefusingWriter):
    """Records nominations (and binds); fails the next nominations with `errors`."""

    def __init__(self) -> None:
        self.nominations: list[tuple[str, str | None]] = []
        self.errors: list[Exception] = []
        self._lock = threading.Lock()

    def set_nominated_node(self, namespace: str, name: str, node: str | None) -> None:
        with self._lock:
            self.nominations.append((f"{namespace}/{name}", node))
            error = self.errors.pop(0) if self.errors else None
        if error is not None:
            raise error

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        pass

    def set_pod_condition(self, namespace: str, name: str, condition: Mapping[str, str]) -> None:
        pass

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        pass


def raw_pod(
    name: str, *, nominated: str | None = None, scheduler: str = "vscheduler", node: str = ""
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Pending"}
    if nominated is not None:
        status["nominatedNodeName"] = nominated
    spec: dict[str, Any] = {"schedulerName": scheduler, "containers": []}
    if node:
        spec["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": spec,
        "status": status,
    }


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def cache(clock: FixedClock) -> SchedulerCache:
    cache = SchedulerCache(clock=clock)
    node = {"metadata": {"name": "n1", "uid": "uid-n1"}, "status": {"allocatable": {"cpu": "4"}}}
    cache.replace(NODE, [node])
    cache.replace(POD, [raw_pod("p1"), raw_pod("p2", nominated="n1")])
    return cache


@pytest.fixture
def writer() -> FakeWriter:
    return FakeWriter()


@pytest.fixture
def outcomes() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def effects(
    writer: FakeWriter, cache: SchedulerCache, clock: FixedClock, outcomes: list[tuple[str, str]]
) -> Iterator[EffectsExecutor]:
    with running_executor(
        writer, cache, clock, outcomes, workers=2, attempts=1, nominations=writer
    ) as effects:
        yield effects


def test_a_nomination_is_written_once_and_not_while_the_pod_shows_it(
    effects: EffectsExecutor,
    writer: FakeWriter,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
) -> None:
    snap = cache.snapshot()
    result = CycleResult(pipelined={"ns/p1": "n1"}, nominated={"ns/p1": "n1", "ns/p2": "n1"})
    carry_out(effects, result, snap)
    carry_out(effects, result, snap)  # in flight: not sent again

    assert writer.nominations == [("ns/p1", "n1")]  # p2 shows n1 already
    assert outcomes == [("pod_nomination", "success")]

    cache.apply(POD, WatchEvent("MODIFIED", raw_pod("p1", nominated="n1")))
    carry_out(effects, result, cache.snapshot())
    assert writer.nominations == [("ns/p1", "n1")]


def test_a_nomination_no_longer_wanted_is_cleared(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    carry_out(effects, CycleResult(), cache.snapshot())

    assert writer.nominations == [("ns/p2", None)]


def test_a_pod_bound_on_its_nominated_node_has_the_nomination_cleared(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    bind = Bind(task_uid="uid-p2", pod="ns/p2", node="n1")
    carry_out(effects, CycleResult(binds=(bind,)), cache.snapshot())

    assert writer.nominations == [("ns/p2", None)]


def test_a_failed_write_is_tried_again_next_cycle(
    effects: EffectsExecutor,
    writer: FakeWriter,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
) -> None:
    writer.errors.append(TransientClusterError("down"))
    result = CycleResult(nominated={"ns/p1": "n1", "ns/p2": "n1"})
    carry_out(effects, result, cache.snapshot())
    carry_out(effects, result, cache.snapshot())

    assert writer.nominations == [("ns/p1", "n1")] * 2
    assert outcomes == [("pod_nomination", "error"), ("pod_nomination", "success")]


def test_without_a_nomination_writer_nothing_is_written(
    writer: FakeWriter, cache: SchedulerCache, clock: FixedClock
) -> None:
    effects = EffectsExecutor(writer, cache, clock=clock, workers=1)
    try:
        carry_out(effects, CycleResult(nominated={"ns/p1": "n1"}), cache.snapshot())
    finally:
        effects.close()
    assert writer.nominations == []


def test_a_pod_of_another_scheduler_keeps_its_nomination_unread() -> None:
    ours = convert_pod(
        raw_pod("p", nominated="n1"), priority_classes={}, scheduler_name="vscheduler"
    )
    theirs = raw_pod("q", nominated="n1", scheduler="default-scheduler", node="n1")
    other = convert_pod(theirs, priority_classes={}, scheduler_name="vscheduler")

    assert ours is not None
    assert ours.nominated_node == "n1"
    assert other is not None
    assert other.nominated_node is None


@pytest.mark.parametrize("value", ["", 7, None])
def test_an_empty_or_malformed_nomination_reads_as_none(value: object) -> None:
    raw = raw_pod("p")
    raw["status"]["nominatedNodeName"] = value
    task = convert_pod(raw, priority_classes={}, scheduler_name="vscheduler")

    assert task is not None
    assert task.nominated_node is None
    assert st.nominated_node(raw) is None


def test_a_placed_pods_leftover_nomination_is_read_and_cleared(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    """A pod bound while its clear was lost still shows the field: it is read (so the effects
    clear it) but holds nothing, the pod being placed."""
    raw = raw_pod("p1", nominated="n1", node="n1")
    task = convert_pod(raw, priority_classes={}, scheduler_name="vscheduler")
    assert task is not None
    assert task.nominated_node == "n1"

    cache.apply(POD, WatchEvent("MODIFIED", raw))
    result = CycleResult(nominated={"ns/p2": "n1"})
    carry_out(effects, result, cache.snapshot())

    assert writer.nominations == [("ns/p1", None)]
