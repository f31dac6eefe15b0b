"""SchedulerMetrics: every metric vscheduler exposes, on a CollectorRegistry handed in.

Volcano's scheduler metrics (`pkg/scheduler/metrics/{metrics,queue,job,namespace}.go`) keep their
names with `vscheduler_` for `volcano_`, and their types, units (milliseconds where Volcano says
milliseconds) and buckets, so dashboards carry over; labels that name a single job are dropped
(docs/metrics.md says which and why). Our own metrics use base units. One method per
observation; the callers (the loop, the effects, the informers, the elector) stay unaware of
prometheus_client. The queue gauges are defined in `vscheduler.obs.queues`. Volcano families
whose data vscheduler does not have are not registered (job succeeded/failed counts, namespace
shares; docs/metrics.md says why). The registry also gets prometheus_client's process, platform
and garbage-collector collectors (memory, CPU, file descriptors, collections) and
`vscheduler_build_info`.

This module owns metric definitions and label vocabularies. It must not read a clock, touch the
global `prometheus_client.REGISTRY`, or hold state beyond the metrics themselves.
"""

from __future__ import annotations

import importlib.metadata
import math
import platform
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)

from vscheduler.errors import ConflictError, NotFoundError, TransientClusterError
from vscheduler.model.facts import says_unschedulable
from vscheduler.obs.queues import QueueMetrics, QueueReading as QueueReading

if TYPE_CHECKING:
    from vscheduler.cycle import CycleReport
    from vscheduler.model.commands import CycleResult


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Prometheus' `ExponentialBuckets(start, factor, count)`."""
    return tuple(start * factor**i for i in range(count))


LATENCY_BUCKETS_MS: Final = exponential_buckets(5, 2, 15)
"""Volcano's e2e/action/plugin/task latency buckets: 5 ms .. 81.92 s."""
JOB_LATENCY_BUCKETS_MS: Final = exponential_buckets(32, 2, 10)
"""Volcano's e2e job scheduling latency buckets: 32 ms .. 16.4 s."""
BIND_BUCKETS_S: Final = exponential_buckets(0.001, 2, 15)
"""kube-scheduler's binding-duration buckets: 1 ms .. 16.4 s."""

SESSION_STEPS: Final = frozenset({"openSession", "closeSession"})
"""Entries of `CycleReport.action_seconds` that are not actions (Volcano times actions only)."""
PREEMPTING_ACTIONS: Final = ("preempt", "reclaim")
"""Evictions by these actions are preemption victims and attempts (Volcano counts reclaim's
too, not its gang-aware actions')."""
TRANSACTION_ACTIONS: Final = (*PREEMPTING_ACTIONS, "gangpreempt", "gangreclaim")
"""The actions whose committed evictions count as eviction transactions (Volcano's
`RegisterEvictionTransaction` labels)."""
ATTEMPT_RESULTS: Final = ("scheduled", "unschedulable", "error")
CYCLE_RESULTS: Final = ("success", "plugin_error", "error")
RELOAD_RESULTS: Final = ("success", "failure")
EVICTION_RESULTS: Final = ("success", "blocked", "conflict", "error", "dropped")
QUEUE_STATUS_RESULTS: Final = ("success", "error", "dropped")
"""The effects executor's outcomes of a Queue `status.allocated` write."""
"""The effects executor's eviction outcomes (see `vscheduler.effects.executor`)."""
BIND_FAILURE_REASONS: Final = (
    "conflict",
    "not_found",
    "transient",
    "not_leading",
    "dropped",
    "unconfirmed",
    "error",
)
DURATION_KINDS: Final = ("bind", "task", "job")
"""What the effects executor times (`vscheduler.effects.executor`'s `on_duration`)."""
INFORMER_ACTIVITY: Final = ("list", "watch", "event", "bookmark", "expired", "error")
"""`vscheduler.informer.informer.OBSERVED` apart from `relist`, which has a counter of its own."""
RELIST: Final = "relist"
ON_SESSION_OPEN: Final = "OnSessionOpen"
ON_SESSION_CLOSE: Final = "OnSessionClose"
USAGE_METRICS: Final = ("cpu", "memory")
"""The `metric` label of the node-usage query histogram: one query per metric per period."""
USAGE_FAILURE_REASONS: Final = (
    "connection", "timeout", "tls", "credentials", "http", "query", "response", "error",
)  # fmt: skip
"""Why a node-usage collection failed (`vscheduler.obs.usage` says what each one means)."""
USAGE_BUCKETS_S: Final = exponential_buckets(0.005, 2, 13)
"""Node-usage query durations: 5 ms .. 20.48 s."""
_WAITING_PHASES: Final = frozenset({"Pending", "Inqueue", "Unknown"})
_P: Final = "vscheduler_"


def bind_failure_reason(exc: BaseException) -> str:
    """The `reason` label for a bind that raised `exc` (a bounded vocabulary)."""
    if isinstance(exc, ConflictError):
        return "conflict"
    if isinstance(exc, NotFoundError):
        return "not_found"
    if isinstance(exc, TransientClusterError):
        return "transient"
    return "error"


def parse_plugin_error(text: str) -> tuple[str, str]:
    """`(plugin, point)` from a `CycleReport.plugin_errors` entry ("plugin point: message")."""
    head = text.split(":", 1)[0].split()
    if len(head) != 2:
        return "unknown", "unknown"
    return head[0], head[1]


def unschedulable_jobs(result: CycleResult) -> int:
    """PodGroups left waiting with `Unschedulable=True` (what Volcano's gang plugin counts)."""
    count = 0
    for status in result.podgroups.values():
        if status.phase.value not in _WAITING_PHASES:
            continue
        if says_unschedulable(status.conditions):
            count += 1
    return count


def attempt_counts(result: CycleResult) -> dict[str, int]:
    """One attempt per pending pod of this scheduler: bound, or still waiting (pipelined too)."""
    waiting = len(result.unschedulable) + len(result.pipelined)
    return {"scheduled": len(result.binds), "unschedulable": waiting}


_HELP: Final = {
    # Volcano's scheduler metrics
    "e2e_scheduling_latency_milliseconds": (
        "E2e scheduling latency in milliseconds (one cycle: open session, actions, close session)"
    ),
    "e2e_job_scheduling_latency_milliseconds": "E2e job scheduling latency in milliseconds",
    "plugin_scheduling_latency_milliseconds": "Plugin scheduling latency in milliseconds",
    "action_scheduling_latency_milliseconds": "Action scheduling latency in milliseconds",
    "task_scheduling_latency_milliseconds": (
        "Task scheduling latency in milliseconds (task create to task bound to a node)"
    ),
    "schedule_attempts": (
        "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
        "not be scheduled, while 'error' means an internal scheduler problem."
    ),
    "pod_preemption_victims": "Number of selected preemption victims",
    "total_preemption_attempts": "Total preemption attempts in the cluster till now",
    "eviction_transactions": "Total number of committed eviction transactions, by action",
    "unschedule_task_count": "Number of tasks could not be scheduled",
    "unschedule_job_count": "Number of jobs could not be scheduled",
    "job_retry_counts": "Number of retry counts, all jobs together",
    # ours
    "pods_bound": "Pods bound successfully (its rate is pods/s)",
    "bind_failures": "Binds that failed, by reason",
    "bind_duration_seconds": "Duration of one bind sent to the API server, retries included",
    "build_info": "1, labelled with the version of vscheduler, Python and the kubernetes client",
    "cycles": "Scheduling cycles run, by result",
    "consecutive_failed_cycles": (
        "Scheduling cycles that failed in a row since the last one that ran (0 when the last ran)"
    ),
    "cycle_skipped": "Cycles skipped because nothing changed",
    "config_reloads": "Policy reloads, by result",
    "config_last_reload_success_timestamp_seconds": "Unix time of the last good policy reload",
    "plugin_errors": "Plugin hooks that raised, by plugin and extension point",
    "informer_events": "Informer activity (lists, watches, events, bookmarks, 410s, errors)",
    "informer_relists": "Full lists made, by kind",
    "is_leader": "1 while this replica holds the leader lease",
    "usage_query_duration_seconds": "Duration of one node-usage query to Prometheus, by metric",
    "usage_collection_failures": "Node-usage collections that failed, by reason",
    "usage_data_age_seconds": (
        "Seconds since the last successful node-usage collection (NaN before the first)"
    ),
    "usage_fresh_nodes": "Nodes whose usage the last collection measured (not stale)",
    "evictions": "Evictions requested, by action, strategy and result",
    "queue_status_writes": "Queue status.allocated writes, by result",
}
"""Help text by metric name (without the prefix, and without `_total` for counters)."""


def _counter(r: CollectorRegistry, name: str, *labels: str) -> Counter:
    """A counter; prometheus_client exposes it as `vscheduler_<name>_total`."""
    return Counter(_P + name, _HELP[name], labels, registry=r)


def _gauge(r: CollectorRegistry, name: str, *labels: str, doc: str = "") -> Gauge:
    return Gauge(_P + name, doc or _HELP[name], labels, registry=r)


def _histogram(
    r: CollectorRegistry, name: str, buckets: tuple[float, ...], *labels: str
) -> Histogram:
    return Histogram(_P + name, _HELP[name], labels, registry=r, buckets=buckets)


class _VolcanoMetrics:
    """Volcano's `metrics.go`, `job.go` and `namespace.go`, with per-job labels dropped.

    Volcano's counters whose names lack `_total` are gauges that only rise here:
    prometheus_client appends `_total` to every Counter, which would rename them.
    """

    def __init__(self, r: CollectorRegistry) -> None:
        ms = LATENCY_BUCKETS_MS
        self.e2e = _histogram(r, "e2e_scheduling_latency_milliseconds", ms)
        self.e2e_job = _histogram(
            r, "e2e_job_scheduling_latency_milliseconds", JOB_LATENCY_BUCKETS_MS
        )
        self.plugin = _histogram(
            r, "plugin_scheduling_latency_milliseconds", ms, "plugin", "OnSession"
        )
        self.action = _histogram(r, "action_scheduling_latency_milliseconds", ms, "action")
        self.task = _histogram(r, "task_scheduling_latency_milliseconds", ms)
        self.attempts = _counter(r, "schedule_attempts", "result")
        self.victims = _gauge(r, "pod_preemption_victims")
        self.preemptions = _gauge(r, "total_preemption_attempts")
        self.eviction_transactions = _counter(r, "eviction_transactions", "action")
        self.unsched_tasks = _gauge(r, "unschedule_task_count")
        self.unsched_jobs = _gauge(r, "unschedule_job_count")
        self.job_retries = _gauge(r, "job_retry_counts")
        for result in ATTEMPT_RESULTS:
            self.attempts.labels(result)
        for action in TRANSACTION_ACTIONS:
            self.eviction_transactions.labels(action)


class _OwnMetrics:
    """vscheduler's own metrics, in base units."""

    def __init__(self, r: CollectorRegistry) -> None:
        self.bound = _counter(r, "pods_bound")
        self.bind_failures = _counter(r, "bind_failures", "reason")
        self.bind_duration = _histogram(r, "bind_duration_seconds", BIND_BUCKETS_S)
        self.cycles = _counter(r, "cycles", "result")
        self.skipped = _counter(r, "cycle_skipped")
        self.failing = _gauge(r, "consecutive_failed_cycles")
        self.reloads = _counter(r, "config_reloads", "result")
        self.reload_time = _gauge(r, "config_last_reload_success_timestamp_seconds")
        self.plugin_errors = _counter(r, "plugin_errors", "plugin", "point")
        self.events = _counter(r, "informer_events", "kind", "type")
        self.relists = _counter(r, "informer_relists", "kind")
        self.leader = _gauge(r, "is_leader")
        self.evictions = _counter(r, "evictions", "action", "strategy", "result")
        self.queue_status_writes = _counter(r, "queue_status_writes", "result")
        for counter, values in (
            (self.cycles, CYCLE_RESULTS),
            (self.reloads, RELOAD_RESULTS),
            (self.bind_failures, BIND_FAILURE_REASONS),
            (self.queue_status_writes, QUEUE_STATUS_RESULTS),
        ):
            for value in values:
                counter.labels(value)


class _UsageMetrics:
    """The node-usage collector's metrics (Volcano has none)."""

    def __init__(self, r: CollectorRegistry) -> None:
        self.query = _histogram(r, "usage_query_duration_seconds", USAGE_BUCKETS_S, "metric")
        self.failures = _counter(r, "usage_collection_failures", "reason")
        self.age = _gauge(r, "usage_data_age_seconds")
        self.age.set_function(lambda: math.nan)
        self.fresh = _gauge(r, "usage_fresh_nodes")
        for metric in USAGE_METRICS:
            self.query.labels(metric)
        for reason in USAGE_FAILURE_REASONS:
            self.failures.labels(reason)


def _version(package: str) -> str:
    """The installed version of `package` (read from its metadata, not imported), or ""."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return ""


def _build_info(r: CollectorRegistry) -> None:
    info = Gauge(
        _P + "build_info",
        _HELP["build_info"],
        ("version", "python", "kubernetes_client"),
        registry=r,
    )
    info.labels(_version("vscheduler"), platform.python_version(), _version("kubernetes")).set(1)


class SchedulerMetrics:
    """Every vscheduler metric, registered on `registry`; one method per observation.

    Thread-safe: the loop, the bind workers, the informers and the elector call it concurrently.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self._volcano = _VolcanoMetrics(registry)
        self._queues = QueueMetrics(registry)
        self._own = _OwnMetrics(registry)
        self._usage = _UsageMetrics(registry)
        self._informer_events: dict[tuple[str, str], Counter] = {}
        """The informer event counter's child per (kind, activity): `labels()` checks and locks
        on every call, and the pod informer counts each of its events."""
        _build_info(registry)
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)

    # --- the cycle ----------------------------------------------------------------------------
    def observe_cycle(self, report: CycleReport) -> None:
        """A cycle ran: e2e and per-action latency, schedule attempts by result, unschedulable
        tasks and jobs, job retries, plugin errors, the cycle's result, and the queue figures
        its queue plugin reported (the series of queues no longer reported are dropped)."""
        v = self._volcano
        v.e2e.observe(report.seconds * 1000)
        for action, seconds in report.action_seconds.items():
            if action not in SESSION_STEPS:
                v.action.labels(action).observe(seconds * 1000)
        for plugin, on_session, seconds in report.plugin_seconds:
            v.plugin.labels(plugin, on_session).observe(seconds * 1000)
        for result, count in attempt_counts(report.result).items():
            v.attempts.labels(result).inc(count)
        jobs = unschedulable_jobs(report.result)
        v.unsched_tasks.set(len(report.result.unschedulable))
        v.unsched_jobs.set(jobs)
        v.job_retries.inc(jobs)
        for text in report.plugin_errors:
            self.observe_plugin_error(*parse_plugin_error(text))
        victims = [e for e in report.result.evictions if e.action in PREEMPTING_ACTIONS]
        if victims:  # one attempt per preemptor: the reason names it ("preempt by ns/pod")
            v.preemptions.inc(len({e.reason for e in victims}))
            v.victims.set(len(victims))
        evicted = [e for e in report.result.evictions if e.action in TRANSACTION_ACTIONS]
        # one transaction per plan (the asking job) an action evicted for
        for action, _ in sorted({(e.action, e.plan or e.reason) for e in evicted}):
            v.eviction_transactions.labels(action).inc()
        contained = report.plugin_errors or report.action_errors
        self._own.cycles.labels("plugin_error" if contained else "success").inc()
        self._queues.observe(report.result.queues)

    def observe_cycle_failed(self, pending_pods: int) -> None:
        """A cycle raised (nothing of it was carried out): each of its pending pods counts as
        an attempt with result `error`."""
        self._own.cycles.labels("error").inc()
        self._volcano.attempts.labels("error").inc(pending_pods)

    def set_consecutive_failed_cycles(self, count: int) -> None:
        """Cycles that failed in a row since the last one that ran."""
        self._own.failing.set(count)

    def observe_skip(self) -> None:
        """A cycle was skipped because nothing changed."""
        self._own.skipped.inc()

    def observe_plugin_error(self, plugin: str, point: str) -> None:
        """A plugin hook raised at an extension point (`observe_cycle` counts a report's own)."""
        self._own.plugin_errors.labels(plugin, point).inc()

    def observe_plugin_latency(self, plugin: str, on_session: str, seconds: float) -> None:
        """A plugin's `OnSessionOpen` / `OnSessionClose` took `seconds`."""
        self._volcano.plugin.labels(plugin, on_session).observe(seconds * 1000)

    def observe_preemption(self, victims: int) -> None:
        """One preemption attempt that selected `victims` pods."""
        self._volcano.preemptions.inc()
        self._volcano.victims.set(victims)

    # --- effects ------------------------------------------------------------------------------
    def observe_effect(self, action: str, outcome: str) -> None:
        """The effects executor's `on_outcome(action, outcome)`: a bind's `success` counts a bound
        pod, any other outcome a bind failure (`conflict`, `dropped`: not sent, the decision no
        longer held or this replica no longer leads, `unconfirmed`: the answer was lost and the
        watch decides, else `error`); a Queue status write (`queue_status`) counts by its
        outcome; other writes are not counted here (evictions go through `observe_eviction`,
        which knows the asking action)."""
        if action == "queue_status":
            result = outcome if outcome in QUEUE_STATUS_RESULTS else "error"
            self._own.queue_status_writes.labels(result).inc()
            return
        if action != "bind":
            return
        if outcome == "success":
            self._own.bound.inc()
        else:
            reason = outcome if outcome in BIND_FAILURE_REASONS else "error"
            self._own.bind_failures.labels(reason).inc()

    def observe_duration(self, kind: str, seconds: float) -> None:
        """The effects executor's `on_duration(kind, seconds)`: `bind` (one bind sent, retries
        included), `task` (a pod bound, `seconds` after its creation) or `job` (a PodGroup's
        status written Running, `seconds` after its creation); see `DURATION_KINDS`."""
        if kind == "bind":
            self._own.bind_duration.observe(seconds)
        elif kind == "task":
            self._volcano.task.observe(seconds * 1000)
        elif kind == "job":
            self._volcano.e2e_job.observe(seconds * 1000)
        else:
            raise ValueError(f"duration kind {kind!r}: expected one of {', '.join(DURATION_KINDS)}")

    def observe_eviction(self, action: str, strategy: str, result: str) -> None:
        """An eviction asked by `action` (preempt, reclaim, shuffle), its victim chosen by
        `strategy` (empty when no named strategy chose it), ended with `result`, one of
        `EVICTION_RESULTS`."""
        if result not in EVICTION_RESULTS:
            raise ValueError(
                f"eviction result {result!r}: expected one of {', '.join(EVICTION_RESULTS)}"
            )
        self._own.evictions.labels(action, strategy, result).inc()

    # --- the rest of the process --------------------------------------------------------------
    def observe_reload(self, ok: bool, when: float) -> None:
        """A policy reload succeeded or failed at Unix time `when`."""
        self._own.reloads.labels("success" if ok else "failure").inc()
        if ok:
            self._own.reload_time.set(when)

    def observe_informer(self, kind: str, what: str) -> None:
        """The informer of `kind` did `what`: `RELIST` (a full list after the first) or one of
        `INFORMER_ACTIVITY` (the informer's own `OBSERVED` vocabulary, so it can call this)."""
        counter = self._informer_events.get((kind, what))
        if counter is not None:
            counter.inc()
        elif what == RELIST:
            self._own.relists.labels(kind).inc()
        elif what in INFORMER_ACTIVITY:
            counter = self._informer_events[kind, what] = self._own.events.labels(kind, what)
            counter.inc()
        else:
            raise ValueError(
                f"informer observation {what!r}: expected {RELIST!r} or one of "
                f"{', '.join(INFORMER_ACTIVITY)}"
            )

    def set_leader(self, leading: bool) -> None:
        """Whether this replica holds the lease."""
        self._own.leader.set(1 if leading else 0)

    def set_queue(self, reading: QueueReading) -> None:
        """One queue's allocated / request / deserved / capacity figures, share, weight."""
        self._queues.set(reading)

    def delete_queue(self, name: str) -> None:
        """A queue is gone: drop its series."""
        self._queues.delete(name)

    # --- the node-usage collector -------------------------------------------------------------
    def observe_usage_query(self, metric: str, seconds: float) -> None:
        """One node-usage query (`metric` from `USAGE_METRICS`) took `seconds`."""
        self._usage.query.labels(metric).observe(seconds)

    def observe_usage_failure(self, reason: str) -> None:
        """A node-usage collection failed for `reason` (one of `USAGE_FAILURE_REASONS`)."""
        if reason not in USAGE_FAILURE_REASONS:
            expected = ", ".join(USAGE_FAILURE_REASONS)
            raise ValueError(f"usage failure reason {reason!r}: expected one of {expected}")
        self._usage.failures.labels(reason).inc()

    def watch_usage_age(self, age: Callable[[], float]) -> None:
        """Read the data age gauge from `age()` at each scrape (seconds, NaN when unknown)."""
        self._usage.age.set_function(age)

    def set_usage_fresh_nodes(self, count: int) -> None:
        """How many nodes the last node-usage collection measured."""
        self._usage.fresh.set(count)
