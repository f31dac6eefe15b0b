"""A queue whose figures carry a warning (its guarantee is part of more than the cluster holds)
gets a Warning `GuaranteeUnsatisfiable` Event, once per change of the warning."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects.executor import EffectsExecutor
from vscheduler.effects.ports import ObjectRef
from vscheduler.informer.kinds import QUEUE
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import CycleResult, QueueFigures
from vscheduler.testing.writers import RefusingWriter

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
WARNING = "queue big's guarantee (cpu 100) exceeds the cluster's allocatable (cpu 16)"


class EventWriter(RefusingWriter):
    """Records Events; nothing else is expected."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str, str, str]] = []

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        self.events.append((ref.kind, ref.name, type_, reason, message))


def raw_queue(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": {"weight": 1, "guarantee": {"resource": {"cpu": "100"}}},
    }


def warned(warning: str) -> CycleResult:
    return CycleResult(queues={"big": QueueFigures(name="big", warning=warning)})


@pytest.mark.timeout(10)
def test_a_warning_is_reported_on_the_queue_once_per_change() -> None:
    writer = EventWriter()
    cache = SchedulerCache(clock=FixedClock(START))
    cache.replace(QUEUE, [raw_queue("big")])
    effects = EffectsExecutor(writer, cache, clock=FixedClock(START), workers=1)
    try:
        for result in (warned(WARNING), warned(WARNING), warned(""), warned(WARNING)):
            effects.submit(result, ClusterSnapshot())
            assert effects.drain(5.0)
    finally:
        effects.close()
    event = ("Queue", "big", "Warning", "GuaranteeUnsatisfiable", WARNING)
    assert writer.events == [event, event]


@pytest.mark.timeout(10)
def test_a_queue_the_cache_does_not_hold_gets_no_event() -> None:
    writer = EventWriter()
    effects = EffectsExecutor(
        writer, SchedulerCache(clock=FixedClock(START)), clock=FixedClock(START)
    )
    try:
        effects.submit(warned(WARNING), ClusterSnapshot())
        assert effects.drain(5.0)
    finally:
        effects.close()
    assert writer.events == []


@pytest.mark.timeout(10)
def test_a_hierarchy_warning_carries_its_own_reason() -> None:
    writer = EventWriter()
    cache = SchedulerCache(clock=FixedClock(START))
    cache.replace(QUEUE, [raw_queue("big")])
    effects = EffectsExecutor(writer, cache, clock=FixedClock(START), workers=1)
    problem = "the queue big has invalid parent queue nowhere"
    figures = QueueFigures(name="big", warning=problem, warning_reason="InvalidQueueHierarchy")
    try:
        effects.submit(CycleResult(queues={"big": figures}), ClusterSnapshot())
        assert effects.drain(5.0)
    finally:
        effects.close()
    assert writer.events == [("Queue", "big", "Warning", "InvalidQueueHierarchy", problem)]
