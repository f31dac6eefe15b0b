"""SchedulerMetrics records each observation under Volcano's names, on the registry it is given."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import prometheus_client
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.cycle import CycleReport
from vscheduler.errors import (
    ClusterError,
    ConflictError,
    NotFoundError,
    TransientClusterError,
)
from vscheduler.informer.informer import OBSERVED
from vscheduler.model.commands import Bind, CycleResult, Evict, PodGroupStatus
from vscheduler.model.facts import PodGroupCondition
from vscheduler.model.status import PodGroupPhase
from vscheduler.obs.metrics import (
    QueueReading,
    SchedulerMetrics,
    bind_failure_reason,
    parse_plugin_error,
)
from vscheduler.testing.builders import START, node, pod, podgroup, snapshot

DOCS = Path(__file__).resolve().parents[3] / "docs" / "metrics.md"
UNSCHEDULABLE = PodGroupCondition(type="Unschedulable", status="True", reason="NotEnoughResources")
SCHEDULED = PodGroupCondition(type="Scheduled", status="True")


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def metrics(registry: CollectorRegistry) -> SchedulerMetrics:
    return SchedulerMetrics(registry)


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def bind(name: str) -> Bind:
    return Bind(task_uid=f"uid-{name}", pod=f"default/{name}", node="n1")


def report(
    result: CycleResult | None = None,
    *,
    seconds: float = 0.25,
    actions: dict[str, float] | None = None,
    plugin_errors: tuple[str, ...] = (),
) -> CycleReport:
    return CycleReport(
        result or CycleResult(),
        seconds,
        actions if actions is not None else {"allocate": 0.1},
        plugin_errors,
    )


# --- the cycle ------------------------------------------------------------------------------------
def test_preempt_and_reclaim_evictions_count_one_attempt_per_preemptor_and_set_the_victims(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    def evict(pod: str, reason: str, action: str) -> Evict:
        return Evict(task_uid=pod, pod=f"default/{pod}", node="n1", reason=reason, action=action)

    metrics.observe_cycle(
        report(
            CycleResult(
                evictions=(
                    evict("a", "preempt by default/hi-0", "preempt"),
                    evict("b", "preempt by default/hi-0", "preempt"),
                    evict("c", "reclaim by default/q-0 of queue q", "reclaim"),
                    evict("d", "shuffle", "shuffle"),
                )
            )
        )
    )
    metrics.observe_cycle(report(CycleResult()))

    assert value(registry, "vscheduler_total_preemption_attempts") == 2
    assert value(registry, "vscheduler_pod_preemption_victims") == 3


def test_eviction_transactions_count_one_per_action_and_preemptor_job(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    def evict(pod: str, action: str, plan: str) -> Evict:
        return Evict(
            task_uid=pod, pod=f"default/{pod}", node="n1", reason="r", action=action, plan=plan
        )

    assert value(registry, "vscheduler_eviction_transactions_total", action="preempt") == 0
    assert value(registry, "vscheduler_eviction_transactions_total", action="reclaim") == 0
    assert value(registry, "vscheduler_eviction_transactions_total", action="gangpreempt") == 0
    assert value(registry, "vscheduler_eviction_transactions_total", action="gangreclaim") == 0
    metrics.observe_cycle(
        report(
            CycleResult(
                evictions=(
                    evict("a", "preempt", "default/hi"),
                    evict("b", "preempt", "default/hi"),
                    evict("c", "preempt", "default/other"),
                    evict("d", "reclaim", "default/q"),
                    evict("e", "shuffle", ""),
                    evict("g", "gangpreempt", "gangpreempt default/hi"),
                    evict("h", "gangpreempt", "gangpreempt default/hi"),
                    evict("i", "gangreclaim", "gangreclaim default/r"),
                )
            )
        )
    )
    metrics.observe_cycle(report(CycleResult(evictions=(evict("f", "preempt", "default/hi"),))))

    assert value(registry, "vscheduler_eviction_transactions_total", action="preempt") == 3
    assert value(registry, "vscheduler_eviction_transactions_total", action="reclaim") == 1
    assert value(registry, "vscheduler_eviction_transactions_total", action="gangpreempt") == 1
    assert value(registry, "vscheduler_eviction_transactions_total", action="gangreclaim") == 1
    assert value(registry, "vscheduler_eviction_transactions_total", action="shuffle") is None


def test_every_pending_pod_of_a_cycle_counts_as_one_attempt_by_result(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    result = CycleResult(
        binds=(bind("a"), bind("b")),
        unschedulable={"default/c": "no node fits", "default/d": "no node fits"},
        pipelined={"default/e": "n1"},
    )
    metrics.observe_cycle(report(result))
    metrics.observe_cycle(report(result))

    assert value(registry, "vscheduler_schedule_attempts_total", result="scheduled") == 4
    assert value(registry, "vscheduler_schedule_attempts_total", result="unschedulable") == 6
    assert value(registry, "vscheduler_schedule_attempts_total", result="error") == 0


def test_cycle_latency_is_recorded_in_milliseconds_and_actions_apart_from_session_steps(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    actions = {"openSession": 0.01, "enqueue": 0.002, "allocate": 0.2, "closeSession": 0.03}
    metrics.observe_cycle(report(seconds=0.25, actions=actions))

    assert value(registry, "vscheduler_e2e_scheduling_latency_milliseconds_sum") == 250
    assert value(registry, "vscheduler_e2e_scheduling_latency_milliseconds_bucket", le="320.0") == 1
    assert value(registry, "vscheduler_e2e_scheduling_latency_milliseconds_bucket", le="160.0") == 0
    assert value(
        registry, "vscheduler_action_scheduling_latency_milliseconds_sum", action="allocate"
    ) == pytest.approx(200)
    assert (
        value(registry, "vscheduler_action_scheduling_latency_milliseconds_count", action="enqueue")
        == 1
    )
    for step in ("openSession", "closeSession"):
        assert (
            value(registry, "vscheduler_action_scheduling_latency_milliseconds_count", action=step)
            is None
        )


def test_unschedulable_tasks_and_waiting_gangs_are_gauges_and_each_waiting_gang_is_a_retry(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    result = CycleResult(
        unschedulable={"default/a-0": "m", "default/a-1": "m", "default/b-0": "m"},
        podgroups={
            "default/a": PodGroupStatus(phase=PodGroupPhase.INQUEUE, conditions=(UNSCHEDULABLE,)),
            "default/b": PodGroupStatus(phase=PodGroupPhase.PENDING, conditions=(UNSCHEDULABLE,)),
            # became ready this cycle: an old Unschedulable condition is still on it
            "default/c": PodGroupStatus(
                phase=PodGroupPhase.RUNNING, conditions=(SCHEDULED, UNSCHEDULABLE)
            ),
            "default/d": PodGroupStatus(phase=PodGroupPhase.INQUEUE),
        },
    )
    metrics.observe_cycle(report(result))
    metrics.observe_cycle(report(result))

    assert value(registry, "vscheduler_unschedule_task_count") == 3
    assert value(registry, "vscheduler_unschedule_job_count") == 2
    assert value(registry, "vscheduler_job_retry_counts") == 4

    metrics.observe_cycle(report(CycleResult()))
    assert value(registry, "vscheduler_unschedule_task_count") == 0
    assert value(registry, "vscheduler_unschedule_job_count") == 0


def test_a_real_gang_cycle_is_counted_as_one_unschedulable_job_then_none_once_it_fits(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    policy = 'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins:\n  - name: gang\n'
    pipeline = catalog.load_pipeline(policy)
    snap = snapshot(
        node("n1").resources(cpu="3", memory="8Gi"),
        podgroup("train").min_member(4),
        *(pod(f"train-{i}").group("train").requests(cpu="1").created(i) for i in range(4)),
    )
    first = cycle.run_cycle(snap, pipeline, clock=FixedClock(START), uid="cycle-1")
    metrics.observe_cycle(first)
    assert value(registry, "vscheduler_unschedule_job_count") == 1
    assert value(registry, "vscheduler_unschedule_task_count") == 4

    bigger = cycle.next_snapshot(snap, first.result)
    bigger = dataclasses.replace(
        bigger, nodes=(*bigger.nodes, node("n2").resources(cpu="2", memory="8Gi").build())
    )
    second = cycle.run_cycle(bigger, pipeline, clock=FixedClock(START), uid="cycle-2")
    metrics.observe_cycle(second)
    assert len(second.result.binds) == 4
    assert value(registry, "vscheduler_unschedule_job_count") == 0
    assert value(registry, "vscheduler_schedule_attempts_total", result="scheduled") == 4
    assert value(registry, "vscheduler_schedule_attempts_total", result="unschedulable") == 4


def test_plugin_errors_in_a_report_are_counted_by_plugin_and_point(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    errors = ("drf jobOrderFn: ZeroDivisionError: division by zero",) * 3
    metrics.observe_cycle(report(plugin_errors=errors))
    metrics.observe_cycle(report())

    assert value(registry, "vscheduler_plugin_errors_total", plugin="drf", point="jobOrderFn") == 3
    assert value(registry, "vscheduler_cycles_total", result="plugin_error") == 1
    assert value(registry, "vscheduler_cycles_total", result="success") == 1


def test_a_plugin_error_text_names_its_plugin_and_point_or_unknown() -> None:
    assert parse_plugin_error("gang jobValidFn: KeyError: 'x'") == ("gang", "jobValidFn")
    assert parse_plugin_error("garbled") == ("unknown", "unknown")


def test_a_failed_cycle_counts_its_pending_pods_as_error_attempts(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    metrics.observe_cycle_failed(pending_pods=7)

    assert value(registry, "vscheduler_cycles_total", result="error") == 1
    assert value(registry, "vscheduler_schedule_attempts_total", result="error") == 7


def test_a_skipped_cycle_is_counted(metrics: SchedulerMetrics, registry: CollectorRegistry) -> None:
    metrics.observe_skip()
    metrics.observe_skip()

    assert value(registry, "vscheduler_cycle_skipped_total") == 2


# --- effects -----------------------------------------------------------------------------------
def test_the_executors_durations_feed_bind_duration_and_task_and_job_latency(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    metrics.observe_duration("bind", 0.004)
    metrics.observe_duration("bind", 0.006)
    metrics.observe_duration("task", 1.5)
    metrics.observe_duration("job", 3.0)

    assert value(registry, "vscheduler_bind_duration_seconds_count") == 2
    assert value(registry, "vscheduler_bind_duration_seconds_sum") == pytest.approx(0.01)
    assert value(registry, "vscheduler_task_scheduling_latency_milliseconds_sum") == 1500
    assert value(registry, "vscheduler_e2e_job_scheduling_latency_milliseconds_sum") == 3000


def test_a_duration_kind_outside_the_vocabulary_is_refused(metrics: SchedulerMetrics) -> None:
    with pytest.raises(ValueError, match="duration kind 'evict': expected one of bind, task, job"):
        metrics.observe_duration("evict", 0.1)


def test_the_executors_bind_outcomes_count_bound_pods_and_failures_and_other_writes_are_ignored(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    for action, outcome in [
        ("bind", "success"),
        ("bind", "success"),
        ("bind", "conflict"),
        ("bind", "error"),
        ("bind", "surprise"),
        ("bind", "dropped"),
        ("bind", "unconfirmed"),
        ("evict", "blocked"),
        ("pod_condition", "success"),
    ]:
        metrics.observe_effect(action, outcome)

    assert value(registry, "vscheduler_pods_bound_total") == 2
    assert value(registry, "vscheduler_bind_failures_total", reason="conflict") == 1
    assert value(registry, "vscheduler_bind_failures_total", reason="error") == 2
    assert value(registry, "vscheduler_bind_failures_total", reason="dropped") == 1
    assert value(registry, "vscheduler_bind_failures_total", reason="unconfirmed") == 1
    assert value(registry, "vscheduler_bind_duration_seconds_count") == 0
    assert "evictions_total{" not in generate_latest(registry).decode()


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (ConflictError("already bound", status=409), "conflict"),
        (NotFoundError("gone", status=404), "not_found"),
        (TransientClusterError("throttled", status=429), "transient"),
        (ClusterError("forbidden", status=403), "error"),
        (RuntimeError("boom"), "error"),
    ],
)
def test_a_bind_error_maps_to_a_bounded_reason(exc: BaseException, reason: str) -> None:
    assert bind_failure_reason(exc) == reason


def test_evictions_preemptions_and_plugin_latency_are_recorded(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    metrics.observe_eviction("preempt", "", "success")
    metrics.observe_preemption(victims=3)
    metrics.observe_plugin_latency("gang", "OnSessionOpen", 0.002)

    assert (
        value(
            registry, "vscheduler_evictions_total", action="preempt", strategy="", result="success"
        )
        == 1
    )
    assert value(registry, "vscheduler_total_preemption_attempts") == 1
    assert value(registry, "vscheduler_pod_preemption_victims") == 3
    assert value(
        registry,
        "vscheduler_plugin_scheduling_latency_milliseconds_sum",
        plugin="gang",
        OnSession="OnSessionOpen",
    ) == pytest.approx(2)


# --- the process --------------------------------------------------------------------------------
def test_a_good_reload_sets_the_timestamp_and_a_bad_one_leaves_it(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    metrics.observe_reload(True, 1_700_000_000.0)
    metrics.observe_reload(False, 1_700_000_100.0)

    assert value(registry, "vscheduler_config_reloads_total", result="success") == 1
    assert value(registry, "vscheduler_config_reloads_total", result="failure") == 1
    assert value(registry, "vscheduler_config_last_reload_success_timestamp_seconds") == (
        1_700_000_000.0
    )


def test_informer_activity_counts_by_kind_and_type_and_relists_by_kind(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    for what in OBSERVED:  # the informer's own vocabulary is accepted as is
        metrics.observe_informer("Pod", what)
    metrics.observe_informer("Pod", "event")
    metrics.observe_informer("Node", "bookmark")

    assert value(registry, "vscheduler_informer_events_total", kind="Pod", type="event") == 2
    assert value(registry, "vscheduler_informer_events_total", kind="Node", type="bookmark") == 1
    assert value(registry, "vscheduler_informer_events_total", kind="Pod", type="relist") is None
    assert value(registry, "vscheduler_informer_relists_total", kind="Pod") == 1
    with pytest.raises(ValueError, match="informer observation 'ADDED'"):
        metrics.observe_informer("Pod", "ADDED")


def test_the_leader_gauge_follows_set_leader(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    assert value(registry, "vscheduler_is_leader") == 0
    metrics.set_leader(True)
    assert value(registry, "vscheduler_is_leader") == 1
    metrics.set_leader(False)
    assert value(registry, "vscheduler_is_leader") == 0


# --- queues and namespaces ----------------------------------------------------------------------
def test_queue_figures_use_volcanos_units_and_a_vanished_scalar_reads_zero(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    metrics.set_queue(
        QueueReading(
            name="research",
            allocated={"cpu": 1500, "memory": 2 * 1024**3, "nvidia.com/gpu": 2, "pods": 3},
            request={"cpu": 4000},
            deserved={"cpu": 2000, "memory": 4 * 1024**3},
            share=0.75,
            weight=3,
            overused=True,
        )
    )
    q = {"queue_name": "research"}
    assert value(registry, "vscheduler_queue_allocated_milli_cpu", **q) == 1500
    assert value(registry, "vscheduler_queue_allocated_memory_bytes", **q) == 2 * 1024**3
    gpu = {**q, "resource": "nvidia.com/gpu"}
    assert value(registry, "vscheduler_queue_allocated_scalar_resources", **gpu) == 2000
    pods = {**q, "resource": "pods"}
    assert value(registry, "vscheduler_queue_allocated_scalar_resources", **pods) == 3
    assert value(registry, "vscheduler_queue_request_milli_cpu", **q) == 4000
    assert value(registry, "vscheduler_queue_deserved_memory_bytes", **q) == 4 * 1024**3
    assert value(registry, "vscheduler_queue_capacity_milli_cpu", **q) == 0
    assert value(registry, "vscheduler_queue_share", **q) == 0.75
    assert value(registry, "vscheduler_queue_weight", **q) == 3
    assert value(registry, "vscheduler_queue_overused", **q) == 1

    metrics.set_queue(QueueReading(name="research", allocated={}, request={}, deserved={}))
    assert value(registry, "vscheduler_queue_allocated_scalar_resources", **gpu) == 0
    assert value(registry, "vscheduler_queue_overused", **q) == 0


def test_deleting_a_queue_drops_its_series(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    metrics.set_queue(
        QueueReading(name="q1", allocated={"nvidia.com/gpu": 1}, request={}, deserved={})
    )
    metrics.set_queue(QueueReading(name="q2", allocated={"cpu": 1}, request={}, deserved={}))
    metrics.delete_queue("q1")
    metrics.delete_queue("never-seen")

    text = generate_latest(registry).decode()
    assert 'queue_name="q1"' not in text
    assert value(registry, "vscheduler_queue_allocated_milli_cpu", queue_name="q2") == 1


def test_a_queue_deleted_and_reported_again_as_it_was_gets_its_series_back(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    """The same reading again sets nothing (`QueueMetrics.set`), but not across a delete."""
    reading = QueueReading(name="q1", allocated={"cpu": 5}, request={}, deserved={})
    metrics.set_queue(reading)
    metrics.set_queue(reading)
    assert value(registry, "vscheduler_queue_allocated_milli_cpu", queue_name="q1") == 5
    metrics.delete_queue("q1")
    metrics.set_queue(reading)
    assert value(registry, "vscheduler_queue_allocated_milli_cpu", queue_name="q1") == 5


# --- the registry ---------------------------------------------------------------------------------
def test_metrics_live_only_on_the_injected_registry_so_two_instances_do_not_collide() -> None:
    first, second = CollectorRegistry(), CollectorRegistry()
    SchedulerMetrics(first).observe_skip()
    SchedulerMetrics(second)

    assert first.get_sample_value("vscheduler_cycle_skipped_total") == 1
    assert second.get_sample_value("vscheduler_cycle_skipped_total") == 0
    assert prometheus_client.REGISTRY.get_sample_value("vscheduler_cycle_skipped_total") is None


def test_volcano_counters_without_total_keep_their_exact_exposed_names(
    registry: CollectorRegistry,
) -> None:
    SchedulerMetrics(registry)
    text = generate_latest(registry).decode()

    assert "\nvscheduler_total_preemption_attempts 0.0\n" in text
    assert "\nvscheduler_job_retry_counts 0.0\n" in text
    assert 'vscheduler_schedule_attempts_total{result="scheduled"} 0.0' in text


def test_every_metric_in_docs_metrics_md_is_exposed_and_every_exposed_one_is_documented(
    registry: CollectorRegistry,
) -> None:
    SchedulerMetrics(registry)
    exposed = set()
    for family in registry.collect():
        if family.name.startswith("vscheduler_"):
            exposed.add(family.name + ("_total" if family.type == "counter" else ""))
    documented = set(
        re.findall(r"^\| `(vscheduler_[a-z0-9_]+)`", DOCS.read_text(encoding="utf-8"), re.MULTILINE)
    )

    assert documented == exposed


def test_queue_status_writes_are_counted_by_result_every_series_from_the_start(
    metrics: SchedulerMetrics, registry: CollectorRegistry
) -> None:
    assert value(registry, "vscheduler_queue_status_writes_total", result="dropped") == 0
    for outcome in ("success", "success", "dropped", "surprise"):
        metrics.observe_effect("queue_status", outcome)

    assert value(registry, "vscheduler_queue_status_writes_total", result="success") == 2
    assert value(registry, "vscheduler_queue_status_writes_total", result="dropped") == 1
    assert value(registry, "vscheduler_queue_status_writes_total", result="error") == 1
    assert value(registry, "vscheduler_pods_bound_total") == 0
