"""The node-usage collector's loop: when it collects, what it hands the cache, how it follows the
policy, what it logs (once per change of state) and the metrics it keeps."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterator, Mapping

import pytest
from prometheus_client import CollectorRegistry

from vscheduler.clock import FixedClock, SystemClock
from vscheduler.conf.schema import MetricsConfig
from vscheduler.model.facts import NodeUsage
from vscheduler.obs.metrics import SchedulerMetrics
from vscheduler.obs.prometheus import QueryRequest
from vscheduler.obs.usage import UsageLoop
from vscheduler.testing.builders import START
from vscheduler.testing.prometheus import FakePrometheus

AT = START.timestamp()
PERIODS = ("10m",)


class Cache:
    """Stands in for `SchedulerCache.set_usage`; `handed` fires at each call."""

    def __init__(self) -> None:
        self.calls: list[dict[str, NodeUsage]] = []
        self.handed = threading.Event()

    def set_usage(self, usage: Mapping[str, NodeUsage]) -> None:
        self.calls.append(dict(usage))
        self.handed.set()

    def last(self) -> dict[str, NodeUsage]:
        return self.calls[-1]


class Rig:
    def __init__(self, prometheus: FakePrometheus) -> None:
        self.prometheus = prometheus
        self.clock = FixedClock(START)
        self.registry = CollectorRegistry()
        self.metrics = SchedulerMetrics(self.registry)
        self.cache = Cache()
        self.loop = UsageLoop(self.cache.set_usage, clock=self.clock, observer=self.metrics)
        self.config = MetricsConfig(address=prometheus.address)

    def measure(self, cpu: float, memory: float) -> None:
        fake = self.prometheus
        fake.answer({
            "node_cpu": fake.ok(fake.vector({"n1:9100": cpu}, AT)),
            "node_memory": fake.ok(fake.vector({"n1:9100": memory}, AT)),
        })  # fmt: skip

    def fail(self) -> None:
        self.prometheus.respond = lambda _query: (503, b"")

    def sample(self, name: str) -> float | None:
        return self.registry.get_sample_value(f"vscheduler_usage_{name}")


@pytest.fixture
def prometheus() -> Iterator[FakePrometheus]:
    fake = FakePrometheus()
    yield fake
    fake.close()


@pytest.fixture
def rig(prometheus: FakePrometheus) -> Rig:
    return Rig(prometheus)


def test_a_new_metrics_block_is_collected_from_at_once_and_handed_to_the_cache(rig: Rig) -> None:
    rig.measure(25.0, 70.0)
    rig.loop.configure(rig.config, PERIODS)
    rig.loop.step()
    assert list(rig.cache.last()) == ["n1"]
    assert rig.cache.last()["n1"].usage == {"cpu": {"10m": 25.0}, "memory": {"10m": 70.0}}
    assert len(rig.prometheus.received) == 2


def test_the_next_collection_waits_for_the_interval(rig: Rig) -> None:
    rig.loop.configure(
        MetricsConfig(address=rig.prometheus.address, interval_seconds=30.0), PERIODS
    )
    rig.loop.step()
    rig.clock.advance(29.0)
    rig.loop.step()
    assert len(rig.prometheus.received) == 2
    rig.clock.advance(1.0)
    rig.loop.step()
    assert len(rig.prometheus.received) == 4


def test_loading_the_same_block_again_changes_nothing(rig: Rig) -> None:
    rig.loop.configure(rig.config, PERIODS)
    rig.loop.step()
    rig.loop.configure(MetricsConfig(address=rig.prometheus.address), ("10m",))
    rig.loop.step()
    assert len(rig.prometheus.received) == 2


def test_a_changed_block_is_collected_from_at_once_keeping_the_last_values(rig: Rig) -> None:
    rig.measure(25.0, 70.0)
    rig.loop.configure(rig.config, PERIODS)
    rig.loop.step()
    rig.fail()
    rig.loop.configure(rig.config, ("10m", "1h"))
    rig.loop.step()
    assert len(rig.prometheus.received) == 3
    entry = rig.cache.last()["n1"]
    assert (entry.usage["cpu"], entry.stale) == ({"10m": 25.0}, True)


def test_without_a_metrics_block_the_collector_is_idle_and_usage_is_cleared(rig: Rig) -> None:
    rig.measure(25.0, 70.0)
    rig.loop.configure(rig.config, PERIODS)
    rig.loop.step()
    rig.loop.configure(None, PERIODS)
    rig.loop.step()
    rig.clock.advance(3600.0)
    rig.loop.step()
    assert rig.cache.last() == {}
    assert len(rig.prometheus.received) == 2
    assert rig.sample("fresh_nodes") == 0.0
    assert math.isnan(rig.loop.age())


def test_a_metrics_type_other_than_prometheus_is_not_collected(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    config = MetricsConfig(type="elasticsearch", address=rig.prometheus.address)
    rig.loop.configure(config, PERIODS)
    with caplog.at_level(logging.INFO, logger="vscheduler.obs.usage"):
        rig.loop.step()
    assert rig.cache.calls == [{}]
    assert rig.prometheus.received == []
    assert caplog.messages == [
        "metrics type 'elasticsearch' is not collected by vscheduler (only 'prometheus'): "
        "node usage is not collected"
    ]


def test_the_data_age_counts_from_the_last_successful_collection(rig: Rig) -> None:
    before = rig.sample("data_age_seconds")
    assert before is not None
    assert math.isnan(before)
    rig.measure(25.0, 70.0)
    rig.loop.configure(rig.config, PERIODS)
    rig.loop.step()
    assert rig.sample("data_age_seconds") == 0.0
    rig.fail()
    rig.clock.advance(30.0)
    rig.loop.step()
    rig.clock.advance(15.0)
    assert rig.sample("data_age_seconds") == 45.0
    assert rig.cache.last()["n1"].metrics_time == START


def test_the_fresh_nodes_gauge_counts_the_nodes_measured(rig: Rig) -> None:
    rig.measure(25.0, 70.0)
    rig.loop.configure(rig.config, PERIODS)
    rig.loop.step()
    assert rig.sample("fresh_nodes") == 1.0
    rig.fail()
    rig.clock.advance(30.0)
    rig.loop.step()
    assert rig.sample("fresh_nodes") == 0.0


def test_a_failure_is_logged_once_and_so_is_the_recovery(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    address = rig.prometheus.address
    rig.measure(25.0, 70.0)
    rig.loop.configure(rig.config, PERIODS)
    with caplog.at_level(logging.INFO, logger="vscheduler.obs.usage"):
        rig.loop.step()
        rig.fail()
        for _ in range(3):
            rig.clock.advance(30.0)
            rig.loop.step()
        rig.measure(26.0, 71.0)
        for _ in range(2):
            rig.clock.advance(30.0)
            rig.loop.step()
    assert caplog.messages == [
        f"collecting node usage from {address} every 30s (periods 10m, nodes by label 'instance')",
        f"node usage from {address}: 1 nodes measured",
        f"node usage from {address}: collection failed (http: HTTP 503); "
        "1 nodes keep their last values, marked stale",
        f"node usage from {address}: collection works again, 1 nodes measured",
    ]
    assert (
        rig.registry.get_sample_value(
            "vscheduler_usage_collection_failures_total", {"reason": "http"}
        )
        == 3.0
    )


def test_an_unexpected_error_keeps_the_data_stale_and_never_leaves_the_loop(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[QueryRequest] = []

    def broken(request: QueryRequest) -> bytes:
        calls.append(request)
        if len(calls) > 2:
            raise RuntimeError("bug")
        return rig.prometheus.vector({"n1": 5.0}, AT)

    loop = UsageLoop(
        rig.cache.set_usage,
        clock=rig.clock,
        observer=rig.metrics,
        fetch=broken,
    )
    loop.configure(rig.config, PERIODS)
    loop.step()
    rig.clock.advance(30.0)
    with caplog.at_level(logging.WARNING, logger="vscheduler.obs.usage"):
        loop.step()
        rig.clock.advance(30.0)
        loop.step()
    assert rig.cache.last()["n1"].stale is True
    assert rig.cache.last()["n1"].usage == {"cpu": {"10m": 5.0}, "memory": {"10m": 5.0}}
    [record] = caplog.records
    assert record.getMessage().startswith(
        f"node usage from {rig.prometheus.address}: collection failed (error: unexpected "
        "RuntimeError: bug)"
    )
    assert record.exc_info is not None


def test_the_thread_collects_once_configured_and_stops_promptly(rig: Rig) -> None:
    rig.measure(25.0, 70.0)
    rig.loop.start()
    assert rig.cache.handed.wait(5.0)  # the policy without metrics: usage cleared
    rig.cache.handed.clear()
    rig.loop.configure(rig.config, PERIODS)
    assert rig.cache.handed.wait(5.0)
    rig.loop.stop(timeout=5.0)
    assert [list(usage) for usage in rig.cache.calls] == [[], ["n1"]]


def test_the_thread_collects_again_every_interval(prometheus: FakePrometheus) -> None:
    cache = Cache()
    done = threading.Event()

    def count(usage: Mapping[str, NodeUsage]) -> None:
        cache.set_usage(usage)
        if len(cache.calls) >= 4:
            done.set()

    loop = UsageLoop(count, clock=SystemClock(), observer=SchedulerMetrics(CollectorRegistry()))
    loop.configure(MetricsConfig(address=prometheus.address, interval_seconds=0.02), PERIODS)
    loop.start()
    try:
        assert done.wait(5.0)
    finally:
        loop.stop(timeout=5.0)
    assert len(prometheus.received) >= 6
