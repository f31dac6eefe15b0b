"""Effects remove released reservations from their ConfigMap: one patch per ConfigMap, not
repeated while sent (a failed one is sent again after the resend time), fenced on leadership."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator, Sequence

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects.executor import RESEND_AFTER, EffectsExecutor
from vscheduler.errors import NotFoundError, TransientClusterError
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import CycleResult, ReservationRelease
from vscheduler.testing.executors import WAIT, running_executor
from vscheduler.testing.writers import RefusingWriter

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


class FakeWriter(RefusingWriter):
    """A cluster writer that records ConfigMap patches (and fails them on request)."""

    def __init__(self) -> None:
        self.patches: list[tuple[str, str, tuple[str, ...]]] = []
        self.errors: list[Exception] = []
        self._lock = threading.Lock()

    def remove_config_map_keys(self, namespace: str, name: str, keys: Sequence[str]) -> None:
        with self._lock:
            self.patches.append((namespace, name, tuple(keys)))
            error = self.errors.pop(0) if self.errors else None
        if error is not None:
            raise error


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def writer() -> FakeWriter:
    return FakeWriter()


@pytest.fixture
def outcomes() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def leading() -> threading.Event:
    event = threading.Event()
    event.set()
    return event


@pytest.fixture
def effects(
    writer: FakeWriter,
    clock: FixedClock,
    outcomes: list[tuple[str, str]],
    leading: threading.Event,
) -> Iterator[EffectsExecutor]:
    with running_executor(
        writer,
        SchedulerCache(clock=clock),
        clock,
        outcomes,
        workers=2,
        attempts=2,
        may_write=leading.is_set,
        config_maps=writer,
    ) as effects:
        yield effects


def release(key: str, config_map: str = "kube-system/holds") -> ReservationRelease:
    return ReservationRelease(config_map=config_map, key=key, pod="team/a", node="n1", reason="x")


def carry_out(effects: EffectsExecutor, *releases: ReservationRelease) -> None:
    effects.submit(CycleResult(reservations_released=releases), ClusterSnapshot())
    assert effects.drain(WAIT)


def test_each_config_map_gets_one_patch_removing_its_released_keys(
    effects: EffectsExecutor, writer: FakeWriter, outcomes: list[tuple[str, str]]
) -> None:
    carry_out(effects, release("b"), release("a"), release("c", "team/other"))

    assert sorted(writer.patches) == [
        ("kube-system", "holds", ("b", "a")),
        ("team", "other", ("c",)),
    ]
    assert outcomes == [("reservation_release", "success")] * 2


def test_a_key_sent_is_not_sent_again_until_the_resend_time(
    effects: EffectsExecutor, writer: FakeWriter, clock: FixedClock
) -> None:
    carry_out(effects, release("a"))
    carry_out(effects, release("a"))

    assert writer.patches == [("kube-system", "holds", ("a",))]

    clock.advance(RESEND_AFTER)
    carry_out(effects, release("a"))

    assert writer.patches == [("kube-system", "holds", ("a",))] * 2


def test_a_failed_patch_is_sent_again_after_the_resend_time(
    effects: EffectsExecutor, writer: FakeWriter, outcomes: list[tuple[str, str]], clock: FixedClock
) -> None:
    writer.errors = [TransientClusterError("503"), TransientClusterError("503")]
    carry_out(effects, release("a"))
    carry_out(effects, release("a"))

    assert writer.patches == [("kube-system", "holds", ("a",))] * 2  # one call, retried once
    assert outcomes == [("reservation_release", "error")]

    clock.advance(RESEND_AFTER)
    carry_out(effects, release("a"))

    assert writer.patches == [("kube-system", "holds", ("a",))] * 3
    assert outcomes == [("reservation_release", "error"), ("reservation_release", "success")]


def test_a_config_map_already_gone_needs_nothing_more(
    effects: EffectsExecutor, writer: FakeWriter, outcomes: list[tuple[str, str]]
) -> None:
    writer.errors = [NotFoundError("configmaps holds not found")]
    carry_out(effects, release("a"))
    carry_out(effects, release("a"))

    assert writer.patches == [("kube-system", "holds", ("a",))]
    assert outcomes == [("reservation_release", "success")]


def test_a_replica_that_does_not_lead_removes_nothing_until_it_leads(
    effects: EffectsExecutor,
    writer: FakeWriter,
    leading: threading.Event,
    outcomes: list[tuple[str, str]],
) -> None:
    leading.clear()
    carry_out(effects, release("a"))
    leading.set()
    carry_out(effects, release("a"))

    assert writer.patches == [("kube-system", "holds", ("a",))]
    assert outcomes == [("reservation_release", "dropped"), ("reservation_release", "success")]


def test_without_a_config_map_writer_releases_are_only_dropped(
    writer: FakeWriter, clock: FixedClock
) -> None:
    effects = EffectsExecutor(writer, SchedulerCache(clock=clock), clock=clock, workers=1)
    try:
        carry_out(effects, release("a"))
    finally:
        effects.close()

    assert writer.patches == []
