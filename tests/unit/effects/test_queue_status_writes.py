"""A Queue's `status.allocated`, as Volcano's scheduler writes it: a merge patch of the amounts the
cycle hands (`CycleResult.queue_allocated`) in the text Kubernetes writes, sent only where the
watched Queue shows other amounts (compared as numbers), not while in flight, at most once per
`queue_hold` per Queue (a change within it is written when the hold ends, though no cycle comes),
and dropped without a storm when the Queue is gone."""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any, Literal

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects import queue_status as qs
from vscheduler.effects.executor import EffectsExecutor
from vscheduler.effects.ports import ObjectRef
from vscheduler.errors import NotFoundError
from vscheduler.informer.kinds import QUEUE
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.commands import CycleResult
from vscheduler.model.resources import Resources
from vscheduler.testing.builders import res
from vscheduler.testing.executors import WAIT, running_executor
from vscheduler.testing.writers import RefusingWriter

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
HOLD = 0.05


class FakeWriter(RefusingWriter):
    """Records Queue status patches; fails the next ones with `errors`."""

    def __init__(self) -> None:
        self.patches: list[tuple[str, dict[str, Any]]] = []
        self.errors: list[Exception] = []
        self._lock = threading.Lock()

    def patch_queue_status(self, name: str, status: Mapping[str, object]) -> None:
        with self._lock:
            self.patches.append((name, dict(status)))
            error = self.errors.pop(0) if self.errors else None
        if error is not None:
            raise error

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        pass


def raw_queue(name: str, allocated: dict[str, Any] | None = None) -> dict[str, Any]:
    queue: dict[str, Any] = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": "1"},
        "spec": {"weight": 1},
    }
    if allocated is not None:
        queue["status"] = {"allocated": allocated, "state": "Open"}
    return queue


def watched(cache: SchedulerCache, name: str, allocated: dict[str, Any], version: str) -> None:
    """The watch shows Queue `name` with this `status.allocated`."""
    queue = raw_queue(name, allocated)
    queue["metadata"]["resourceVersion"] = version
    cache.apply(QUEUE, WatchEvent("MODIFIED", queue))


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def cache(clock: FixedClock) -> SchedulerCache:
    cache = SchedulerCache(clock=clock)
    cache.replace(QUEUE, [raw_queue("q"), raw_queue("shown", {"cpu": "1", "memory": "0"})])
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
        writer, cache, clock, outcomes, workers=2, attempts=1, queue_hold=HOLD
    ) as effects:
        yield effects


def carry_out(effects: EffectsExecutor, cache: SchedulerCache, **allocated: Resources) -> None:
    effects.submit(CycleResult(queue_allocated=allocated), cache.snapshot())
    assert effects.drain(WAIT)


def test_the_allocated_is_written_in_the_text_kubernetes_writes_cpu_and_memory_always() -> None:
    amounts = res(cpu="1500m", memory="1Gi", **{"nvidia.com/gpu": 2})

    assert qs.allocated_list(amounts) == {"cpu": "1500m", "memory": "1Gi", "nvidia.com/gpu": "2"}
    assert qs.allocated_list(res(cpu=2000, memory="2Ti")) == {"cpu": "2k", "memory": "2Ti"}
    assert qs.allocated_list(Resources()) == {"cpu": "0", "memory": "0"}


@pytest.mark.parametrize(
    ("shown", "patch"),
    [
        pytest.param(
            {"cpu": "1.5", "memory": "1073741824"}, None, id="same-amounts-spelt-otherwise"
        ),
        pytest.param({"cpu": "1500m"}, {"cpu": "1500m", "memory": "1Gi"}, id="memory-missing"),
        pytest.param({"cpu": "2", "memory": "1Gi"}, {"cpu": "1500m", "memory": "1Gi"}, id="cpu"),
        pytest.param(
            {"cpu": "1500m", "memory": "1Gi", "nvidia.com/gpu": "1"},
            {"cpu": "1500m", "memory": "1Gi", "nvidia.com/gpu": None},
            id="a-resource-no-longer-held-is-removed",
        ),
        pytest.param({"cpu": "many", "memory": "1Gi"}, {"cpu": "1500m", "memory": "1Gi"}, id="bad"),
    ],
)
def test_the_patch_is_made_only_where_the_watched_amounts_differ_as_numbers(
    shown: dict[str, Any], patch: dict[str, Any] | None
) -> None:
    made = qs.allocated_patch(res(cpu="1500m", memory="1Gi"), raw_queue("q", shown))

    assert made == (None if patch is None else {"allocated": patch})


def test_a_queue_is_written_once_and_not_while_in_flight_nor_where_it_shows_the_amounts(
    effects: EffectsExecutor,
    writer: FakeWriter,
    cache: SchedulerCache,
    clock: FixedClock,
    outcomes: list[tuple[str, str]],
) -> None:
    carry_out(effects, cache, q=res(cpu=1, memory="1Gi"), shown=res(cpu=1), default=res(cpu=1))
    clock.advance(1)
    carry_out(effects, cache, q=res(cpu=1, memory="1Gi"), shown=res(cpu=1), default=res(cpu=1))

    # `shown` shows it already; `default` has no Queue object (the queue vscheduler assumes)
    assert writer.patches == [("q", {"allocated": {"cpu": "1", "memory": "1Gi"}})]
    assert outcomes == [("queue_status", "success")]


def test_a_change_within_the_hold_waits_for_it_and_is_written_though_no_cycle_comes(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache, clock: FixedClock
) -> None:
    carry_out(effects, cache, q=res(cpu=1))
    watched(cache, "q", {"cpu": "1", "memory": "0"}, "2")
    carry_out(effects, cache, q=res(cpu=2))
    carry_out(effects, cache, q=res(cpu=3))
    assert [p["allocated"]["cpu"] for _, p in writer.patches] == ["1"]

    clock.advance(HOLD)
    deadline = time.monotonic() + WAIT
    while len(writer.patches) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert effects.drain(WAIT)
    assert [p["allocated"]["cpu"] for _, p in writer.patches] == ["1", "3"]


def test_past_the_hold_the_next_cycle_writes_the_change(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache, clock: FixedClock
) -> None:
    carry_out(effects, cache, q=res(cpu=1))
    clock.advance(HOLD)
    carry_out(effects, cache, q=res(cpu=2))

    assert [p["allocated"]["cpu"] for _, p in writer.patches] == ["1", "2"]


def test_a_queue_deleted_meanwhile_is_dropped_once_and_not_retried_within_the_hold(
    effects: EffectsExecutor,
    writer: FakeWriter,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    writer.errors.append(NotFoundError('queues "q" not found', status=404))
    carry_out(effects, cache, q=res(cpu=1))
    carry_out(effects, cache, q=res(cpu=1))

    assert len(writer.patches) == 1
    assert outcomes == [("queue_status", "dropped")]
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
