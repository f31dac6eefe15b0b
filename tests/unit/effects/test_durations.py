"""The executor times what the metrics need (`on_duration`): a bind from its first attempt to its
answer, a pod's wait from its creation to its bind, a PodGroup's from its creation to Running."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects.executor import EffectsExecutor
from vscheduler.informer.kinds import NODE, POD, PODGROUP
from vscheduler.model.commands import Bind, CycleResult, PodGroupStatus
from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.executors import WAIT
from vscheduler.testing.writers import RecordingWriter

pytestmark = pytest.mark.timeout(30)

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
BIND_TAKES = 0.25


class Writer(RecordingWriter):
    """Records the writes (`RecordingWriter`); a bind takes `BIND_TAKES` seconds of the clock
    and is recorded without its node."""

    def __init__(self, clock: FixedClock) -> None:
        super().__init__()
        self.clock = clock

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        self.clock.advance(BIND_TAKES)
        self.calls.append(f"bind {namespace}/{name}")


def meta(name: str, created: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "uid": f"uid-{name}", "creationTimestamp": created, **extra}


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def cache(clock: FixedClock) -> SchedulerCache:
    cache = SchedulerCache(clock=clock)
    cache.replace(NODE, [{"metadata": meta("n1", "2025-12-01T00:00:00Z"), "status": {}}])
    pod = {
        "metadata": meta(
            "p1",
            "2025-12-31T23:59:30Z",
            namespace="ns",
            annotations={"scheduling.k8s.io/group-name": "pg1"},
        ),
        "spec": {"schedulerName": "vscheduler", "containers": []},
        "status": {"phase": "Pending"},
    }
    cache.replace(POD, [pod])
    podgroup = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": meta("pg1", "2025-12-31T23:59:00Z", namespace="ns"),
        "spec": {"minMember": 1},
        "status": {"phase": "Inqueue"},
    }
    cache.replace(PODGROUP, [podgroup])
    return cache


@pytest.fixture
def durations() -> list[tuple[str, float]]:
    return []


@pytest.fixture
def effects(
    cache: SchedulerCache, clock: FixedClock, durations: list[tuple[str, float]]
) -> Iterator[EffectsExecutor]:
    effects = EffectsExecutor(
        Writer(clock),
        cache,
        clock=clock,
        workers=1,
        on_duration=lambda kind, seconds: durations.append((kind, seconds)),
    )
    yield effects
    effects.close()


def test_a_bind_is_timed_and_its_pod_waited_from_its_creation(
    effects: EffectsExecutor, cache: SchedulerCache, durations: list[tuple[str, float]]
) -> None:
    effects.submit(
        CycleResult(binds=(Bind(task_uid="uid-p1", pod="ns/p1", node="n1"),)), cache.snapshot()
    )
    assert effects.drain(WAIT)

    assert durations == [("bind", BIND_TAKES), ("task", 30 + BIND_TAKES)]


def test_a_bind_dropped_before_it_was_sent_is_not_timed(
    effects: EffectsExecutor, cache: SchedulerCache, durations: list[tuple[str, float]]
) -> None:
    effects.submit(
        CycleResult(binds=(Bind(task_uid="uid-p1", pod="ns/p1", node="gone"),)), cache.snapshot()
    )
    assert effects.drain(WAIT)

    assert durations == []


def test_a_podgroup_written_running_waited_from_its_creation_and_other_phases_are_not_timed(
    effects: EffectsExecutor, cache: SchedulerCache, durations: list[tuple[str, float]]
) -> None:
    pending = CycleResult(podgroups={"ns/pg1": PodGroupStatus(phase=PodGroupPhase.PENDING)})
    effects.submit(pending, cache.snapshot())
    assert effects.drain(WAIT)
    assert durations == []

    running = CycleResult(podgroups={"ns/pg1": PodGroupStatus(phase=PodGroupPhase.RUNNING)})
    effects.submit(running, cache.snapshot())
    assert effects.drain(WAIT)
    assert durations == [("job", 60.0)]
