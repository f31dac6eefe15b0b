"""observe_cycle sets Volcano's queue gauges from the cycle's queue figures and drops gone queues."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest

from vscheduler.cycle import CycleReport
from vscheduler.model.commands import CycleResult, QueueFigures
from vscheduler.model.resources import Resources
from vscheduler.obs.metrics import SchedulerMetrics
from vscheduler.obs.queues import QueueReading, reading_of

GI = 1 << 30


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def metrics(registry: CollectorRegistry) -> SchedulerMetrics:
    return SchedulerMetrics(registry)


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def cycle(*queues: QueueFigures) -> CycleReport:
    return CycleReport(CycleResult(queues={q.name: q for q in queues}), 0.1, {}, ())


RESEARCH = QueueFigures(
    name="research",
    allocated=Resources({"cpu": 1500, "memory": 2 * GI, "nvidia.com/gpu": 1}),
    request=Resources(cpu=4000),
    deserved=Resources(cpu=2000, memory=4 * GI),
    inqueue=Resources({"cpu": 500, "nvidia.com/gpu": 2}),
    capability=Resources(cpu=6000),
    real_capability=Resources(cpu=6000, memory=64 * GI),
    share=0.75,
    weight=3,
    overused=True,
)


def test_a_queue_figures_reading_holds_the_plain_amounts() -> None:
    assert reading_of(RESEARCH) == QueueReading(
        name="research",
        allocated={"cpu": 1500, "memory": 2 * GI, "nvidia.com/gpu": 1},
        request={"cpu": 4000},
        deserved={"cpu": 2000, "memory": 4 * GI},
        inqueue={"cpu": 500, "nvidia.com/gpu": 2},
        capacity={"cpu": 6000},
        real_capacity={"cpu": 6000, "memory": 64 * GI},
        share=0.75,
        weight=3,
        overused=True,
    )


def test_a_cycle_sets_every_gauge_of_each_reported_queue(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    metrics.observe_cycle(cycle(RESEARCH))

    q = {"queue_name": "research"}
    gpu = {**q, "resource": "nvidia.com/gpu"}
    assert value(registry, "vscheduler_queue_allocated_milli_cpu", **q) == 1500
    assert value(registry, "vscheduler_queue_allocated_memory_bytes", **q) == 2 * GI
    assert value(registry, "vscheduler_queue_allocated_scalar_resources", **gpu) == 1000
    assert value(registry, "vscheduler_queue_request_milli_cpu", **q) == 4000
    assert value(registry, "vscheduler_queue_request_memory_bytes", **q) == 0
    assert value(registry, "vscheduler_queue_deserved_memory_bytes", **q) == 4 * GI
    assert value(registry, "vscheduler_queue_inqueue_milli_cpu", **q) == 500
    assert value(registry, "vscheduler_queue_inqueue_memory_bytes", **q) == 0
    assert value(registry, "vscheduler_queue_inqueue_scalar_resources", **gpu) == 2000
    assert value(registry, "vscheduler_queue_capacity_milli_cpu", **q) == 6000
    assert value(registry, "vscheduler_queue_real_capacity_memory_bytes", **q) == 64 * GI
    assert value(registry, "vscheduler_queue_share", **q) == 0.75
    assert value(registry, "vscheduler_queue_weight", **q) == 3
    assert value(registry, "vscheduler_queue_overused", **q) == 1


def test_a_queue_without_a_capability_has_no_capacity_series(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    metrics.observe_cycle(cycle(RESEARCH))
    uncapped = QueueFigures(name="research", real_capability=Resources(cpu=8000))

    metrics.observe_cycle(cycle(uncapped))

    q = {"queue_name": "research"}
    assert value(registry, "vscheduler_queue_capacity_milli_cpu", **q) is None
    assert value(registry, "vscheduler_queue_capacity_memory_bytes", **q) is None
    assert value(registry, "vscheduler_queue_real_capacity_milli_cpu", **q) == 8000
    assert value(registry, "vscheduler_queue_overused", **q) == 0


def test_a_queue_no_longer_reported_loses_its_series_and_the_others_stay(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    other = QueueFigures(name="prod", allocated=Resources(cpu=1000), weight=2)
    metrics.observe_cycle(cycle(RESEARCH, other))

    metrics.observe_cycle(cycle(other))

    text = generate_latest(registry).decode()
    assert 'queue_name="research"' not in text
    assert value(registry, "vscheduler_queue_allocated_milli_cpu", queue_name="prod") == 1000
    assert value(registry, "vscheduler_queue_weight", queue_name="prod") == 2


def test_a_cycle_without_queue_figures_drops_every_queue_series(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    metrics.observe_cycle(cycle(RESEARCH))

    metrics.observe_cycle(cycle())

    assert "queue_name=" not in generate_latest(registry).decode()


def test_skipped_and_failed_cycles_leave_the_queue_gauges_as_they_were(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    metrics.observe_cycle(cycle(RESEARCH))

    metrics.observe_skip()
    metrics.observe_cycle_failed(pending_pods=2)

    assert value(registry, "vscheduler_queue_share", queue_name="research") == 0.75


def test_a_queue_whose_guarantee_cannot_be_met_reads_one_until_the_warning_goes(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    warned = QueueFigures(
        name="big", warning="queue big's guarantee (cpu 100) exceeds the cluster's allocatable"
    )
    q = {"queue_name": "big"}

    metrics.observe_cycle(cycle(warned))
    assert value(registry, "vscheduler_queue_guarantee_unsatisfiable", **q) == 1
    metrics.observe_cycle(cycle(QueueFigures(name="big")))
    assert value(registry, "vscheduler_queue_guarantee_unsatisfiable", **q) == 0
    metrics.observe_cycle(cycle())
    assert value(registry, "vscheduler_queue_guarantee_unsatisfiable", **q) is None
