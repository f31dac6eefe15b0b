"""A scheduler whose cycles keep failing says so: /readyz answers 503 after N failed cycles in a
row (and 200 after the next cycle that runs), a gauge counts them, the streak is told once."""

from __future__ import annotations

import datetime as dt
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry

from vscheduler import cli
from vscheduler.clock import FixedClock
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult
from vscheduler.obs.http import ObsServer
from vscheduler.obs.metrics import SchedulerMetrics
from vscheduler.runtime.health import CycleHealth
from vscheduler.runtime.policy import PolicyHolder
from vscheduler.runtime.scheduler import Scheduler
from vscheduler.testing.builders import START, node, pod, snapshot

FAILING = "3 consecutive scheduling cycles failed; the last with OverflowError: too large"


class BrokenCache:
    """A cache whose snapshot raises while `broken`; every call is a change."""

    def __init__(self) -> None:
        self.broken = True
        self._generation = 0
        self.quiet_generation = 0
        self.gang_arrival: dt.datetime | None = None
        self.changed = threading.Event()
        self.complete = threading.Event()

    @property
    def generation(self) -> int:
        self._generation += 1
        return self._generation

    def snapshot(self) -> ClusterSnapshot:
        if self.broken:
            raise OverflowError("too large")
        return snapshot(node("n1"), pod("p1").requests(cpu="1"))


class NoEffects:
    def stream(self, bind: Bind, snapshot: ClusterSnapshot) -> None:
        pass

    def submit(self, result: CycleResult, snapshot: ClusterSnapshot) -> None:
        pass

    def busy(self) -> bool:
        return False


class Told:
    def __init__(self) -> None:
        self.failing: list[str] = []
        self.recovered: list[str] = []


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def told() -> Told:
    return Told()


@pytest.fixture
def health(registry: CollectorRegistry, told: Told) -> CycleHealth:
    metrics = SchedulerMetrics(registry)
    return CycleHealth(
        3,
        on_count=metrics.set_consecutive_failed_cycles,
        on_failing=told.failing.append,
        on_recovered=told.recovered.append,
    )


@pytest.fixture
def cache() -> BrokenCache:
    return BrokenCache()


@pytest.fixture
def scheduler(cache: BrokenCache, health: CycleHealth, registry: CollectorRegistry) -> Scheduler:
    return Scheduler(
        cache=cache,
        policy=PolicyHolder(),
        effects=NoEffects(),
        clock=FixedClock(START),
        observer=SchedulerMetrics(CollectorRegistry()),
        is_synced=lambda: True,
        health=health,
    )


@pytest.fixture
def readyz(health: CycleHealth, registry: CollectorRegistry) -> Iterator[str]:
    server = ObsServer(
        "127.0.0.1:0", registry=registry, is_healthy=lambda: True, is_ready=health.readiness
    )
    port = server.start()
    yield f"http://127.0.0.1:{port}/readyz"
    server.stop()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.read().decode()


def fail(scheduler: Scheduler, times: int) -> None:
    for _ in range(times):
        with pytest.raises(OverflowError):
            scheduler.run_once()


def test_readyz_answers_503_after_three_failed_cycles_and_200_after_one_that_runs(
    scheduler: Scheduler, cache: BrokenCache, readyz: str, told: Told
) -> None:
    fail(scheduler, 2)
    assert get(readyz) == (200, "ok")
    fail(scheduler, 1)
    assert get(readyz) == (503, FAILING)
    assert told.failing == [FAILING]
    cache.broken = False
    assert scheduler.run_once() is not None
    assert get(readyz) == (200, "ok")
    assert told.recovered == [
        "scheduling cycles run again after 3 consecutive failed cycles",
    ]


def test_a_long_streak_is_told_once_and_the_gauge_counts_every_failure(
    scheduler: Scheduler, cache: BrokenCache, registry: CollectorRegistry, told: Told
) -> None:
    fail(scheduler, 5)
    assert registry.get_sample_value("vscheduler_consecutive_failed_cycles") == 5
    assert told.failing == [FAILING]
    cache.broken = False
    scheduler.run_once()
    assert registry.get_sample_value("vscheduler_consecutive_failed_cycles") == 0


def test_a_short_streak_is_not_told_at_all(
    scheduler: Scheduler, cache: BrokenCache, told: Told
) -> None:
    fail(scheduler, 2)
    cache.broken = False
    scheduler.run_once()
    assert (told.failing, told.recovered) == ([], [])


def test_the_threshold_defaults_to_3_and_is_set_by_a_run_flag() -> None:
    default = cli._settings(cli._parser().parse_args(["run"]))
    set_ = cli._settings(cli._parser().parse_args(["run", "--unready-after-failed-cycles", "5"]))
    assert (default.unready_after_failed_cycles, set_.unready_after_failed_cycles) == (3, 5)


def test_a_threshold_below_1_is_a_one_line_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["run", "--unready-after-failed-cycles", "0"]) == 2
    assert capsys.readouterr().err == (
        "vscheduler run: error: argument --unready-after-failed-cycles: must be at least 1, "
        "got '0' (see vscheduler run --help)\n"
    )
