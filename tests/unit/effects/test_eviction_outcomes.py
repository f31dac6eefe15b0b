"""The effects executor tells `on_eviction` of every eviction's outcome, with the eviction itself,
so metrics can be labelled by the asking action and the strategy that chose the victim."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any, Literal

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects.executor import EffectsExecutor
from vscheduler.effects.ports import ObjectRef
from vscheduler.effects.retry import RetryPolicy
from vscheduler.errors import DisruptionBudgetError, NotFoundError
from vscheduler.informer.kinds import POD
from vscheduler.model.commands import CycleResult, Evict
from vscheduler.testing.executors import carry_out
from vscheduler.testing.writers import RefusingWriter

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
EVICT = Evict(
    task_uid="uid-r1",
    pod="ns/r1",
    node="n1",
    reason="shuffle: node n1 is above its target thresholds",
    action="shuffle",
    strategy="lowNodeUtilization",
)


class EvictingWriter(RefusingWriter):
    """Records evictions and Events; `error` is raised by the next eviction."""

    def __init__(self) -> None:
        self.evicted: list[str] = []
        self.events: list[str] = []
        self.error: Exception | None = None

    def evict(self, namespace: str, name: str, uid: str, *, dry_run: bool = False) -> None:
        self.evicted.append(f"{namespace}/{name}")
        error, self.error = self.error, None
        if error is not None:
            raise error

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        self.events.append(f"{type_} {reason}")


def raw_running_pod(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"schedulerName": "vscheduler", "nodeName": "n1", "containers": []},
        "status": {"phase": "Running"},
    }


@pytest.fixture
def writer() -> EvictingWriter:
    return EvictingWriter()


@pytest.fixture
def seen() -> list[tuple[str, str, str, str]]:
    return []


@pytest.fixture
def effects(
    writer: EvictingWriter, seen: list[tuple[str, str, str, str]]
) -> Iterator[EffectsExecutor]:
    clock = FixedClock(START)
    cache = SchedulerCache(clock=clock)
    cache.replace(POD, [raw_running_pod("r1")])
    effects = EffectsExecutor(
        writer,
        cache,
        clock=clock,
        workers=2,
        on_eviction=lambda e, outcome: seen.append((e.pod, e.action, e.strategy, outcome)),
        retry=RetryPolicy(initial_backoff=0, max_attempts=2),
    )
    yield effects
    effects.close()


def test_a_successful_eviction_is_reported_with_its_action_and_strategy(
    effects: EffectsExecutor, writer: EvictingWriter, seen: list[tuple[str, str, str, str]]
) -> None:
    carry_out(effects, CycleResult(evictions=(EVICT,)))
    assert writer.evicted == ["ns/r1"]
    assert seen == [("ns/r1", "shuffle", "lowNodeUtilization", "success")]


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (DisruptionBudgetError("Cannot evict pod as it would violate the budget."), "blocked"),
        (NotFoundError("gone"), "conflict"),
        (RuntimeError("boom"), "error"),
    ],
)
def test_a_failed_eviction_is_reported_with_the_same_outcome_as_on_outcome(
    effects: EffectsExecutor,
    writer: EvictingWriter,
    seen: list[tuple[str, str, str, str]],
    error: Exception,
    outcome: str,
) -> None:
    writer.error = error
    carry_out(effects, CycleResult(evictions=(EVICT,)))
    assert seen == [("ns/r1", "shuffle", "lowNodeUtilization", outcome)]


def test_an_eviction_callback_that_raises_changes_nothing_else(writer: EvictingWriter) -> None:
    outcomes: list[tuple[str, str]] = []

    def broken(_evict: Evict, _outcome: str) -> None:
        raise RuntimeError("metrics are down")

    clock = FixedClock(START)
    cache = SchedulerCache(clock=clock)
    cache.replace(POD, [raw_running_pod("r1")])
    effects = EffectsExecutor(
        writer,
        cache,
        clock=clock,
        workers=1,
        on_outcome=lambda action, outcome: outcomes.append((action, outcome)),
        on_eviction=broken,
    )
    try:
        carry_out(effects, CycleResult(evictions=(EVICT,)))
    finally:
        effects.close()
    assert (outcomes, writer.events) == ([("evict", "success")], ["Normal Evicted"])


def test_a_refused_eviction_puts_the_pod_in_backoff_for_the_wait_the_api_server_asked(
    writer: EvictingWriter,
) -> None:
    clock = FixedClock(START)
    cache = SchedulerCache(clock=clock)
    cache.replace(POD, [raw_running_pod("r1")])
    effects = EffectsExecutor(writer, cache, clock=clock, workers=1)
    writer.error = DisruptionBudgetError("Cannot evict pod.", status=429, retry_after=60.0)
    try:
        carry_out(effects, CycleResult(evictions=(EVICT,)))
    finally:
        effects.close()
    assert writer.events == ["Warning EvictionBlocked"]
    task = cache.snapshot().tasks["uid-r1"]
    assert (task.status.name, task.eviction_refused) == ("RUNNING", True)
    clock.advance(59)
    assert cache.snapshot().tasks["uid-r1"].eviction_refused
    clock.advance(1)
    assert not cache.snapshot().tasks["uid-r1"].eviction_refused
