"""Evictions are counted by the asking action, the strategy that chose the victim, and outcome."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from vscheduler.obs.metrics import EVICTION_RESULTS, SchedulerMetrics


def count(registry: CollectorRegistry, action: str, strategy: str, result: str) -> float | None:
    return registry.get_sample_value(
        "vscheduler_evictions_total", {"action": action, "strategy": strategy, "result": result}
    )


def test_evictions_are_counted_by_action_strategy_and_result() -> None:
    registry = CollectorRegistry()
    metrics = SchedulerMetrics(registry)
    metrics.observe_eviction("shuffle", "lowNodeUtilization", "success")
    metrics.observe_eviction("shuffle", "lowNodeUtilization", "success")
    metrics.observe_eviction("shuffle", "lowNodeUtilization", "blocked")
    metrics.observe_eviction("shuffle", "", "success")

    assert count(registry, "shuffle", "lowNodeUtilization", "success") == 2
    assert count(registry, "shuffle", "lowNodeUtilization", "blocked") == 1
    assert count(registry, "shuffle", "", "success") == 1
    assert count(registry, "shuffle", "offlineOnly", "success") is None


def test_the_eviction_results_are_the_executors_outcomes() -> None:
    assert EVICTION_RESULTS == ("success", "blocked", "conflict", "error", "dropped")


def test_an_eviction_result_outside_the_vocabulary_is_refused() -> None:
    metrics = SchedulerMetrics(CollectorRegistry())
    with pytest.raises(ValueError, match="eviction result 'evicted': expected one of success"):
        metrics.observe_eviction("shuffle", "", "evicted")
