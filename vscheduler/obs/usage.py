"""The node-usage collector: node CPU and memory use from Prometheus, into the scheduler cache.

`UsageCollector.collect(previous)` runs one collection: one vector query per metric (cpu,
memory) per period for every node at once (Volcano sends two per node), and returns the new
`{node: NodeUsage}`. `UsageLoop` is the thread that collects every `metrics.interval`, hands each
result to the cache, and is reconfigured when the policy changes (no `metrics` block, or a type
other than `prometheus`: idle, usage cleared).

Staleness (Volcano #5578: never zeros): a collection fails whole if any query fails; every node
then keeps its values and `metrics_time`, becomes `stale`, and loses its `history`. A node that a
successful collection does not measure completely (every metric for every period) is treated the
same way. Owns those rules, the history of consecutive collections, and the collector's log
lines (one per change of state, not one per interval). Must not schedule, and never raises out
of its thread.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import math
import threading
from collections.abc import Callable, Mapping
from typing import Final, Protocol

from vscheduler.clock import Clock, perf_counter
from vscheduler.conf.metrics_block import render_query
from vscheduler.conf.schema import MetricsConfig
from vscheduler.model.facts import NodeUsage
from vscheduler.obs.prometheus import (
    Fetch,
    QueryError,
    QueryRequest,
    Sample,
    auth_headers,
    parse_vector,
    query_url,
    read_text_file,
    ssl_context,
    urllib_fetch,
)

logger = logging.getLogger(__name__)

HISTORY_LIMIT: Final = 9
"""Earlier collections kept per node (so ten consecutive ones are known)."""
FORGET_AFTER: Final = dt.timedelta(hours=1)
"""A node that successful collections stop measuring is dropped once its data is this old."""

Usage = dict[str, dict[str, float]]
"""Percent used, by resource (`cpu`, `memory`) then by period (`10m`)."""


class UsageObserver(Protocol):
    """Where the collector reports (`SchedulerMetrics`)."""

    def observe_usage_query(self, metric: str, seconds: float) -> None: ...

    def observe_usage_failure(self, reason: str) -> None: ...

    def watch_usage_age(self, age: Callable[[], float]) -> None: ...

    def set_usage_fresh_nodes(self, count: int) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Collection:
    """The outcome of one collection: the new usage, and the failure if there was one."""

    usage: dict[str, NodeUsage]
    failure: QueryError | None = None

    @property
    def fresh(self) -> int:
        """Nodes measured by this collection."""
        return sum(1 for entry in self.usage.values() if not entry.stale)


def stale(previous: Mapping[str, NodeUsage]) -> dict[str, NodeUsage]:
    """After a failed collection: every node keeps its values and their time, marked stale."""
    return {
        node: dataclasses.replace(entry, stale=True, history=())
        for node, entry in sorted(previous.items())
    }


def merge(
    previous: Mapping[str, NodeUsage],
    measured: Mapping[str, Usage],
    times: Mapping[str, dt.datetime],
    *,
    expected: frozenset[tuple[str, str]],
    now: dt.datetime,
) -> dict[str, NodeUsage]:
    """After a successful collection. A node measured for every `(resource, period)` of
    `expected` gets the new values at its samples' time, and, if its previous entry was fresh
    and shaped the same, that entry appended to its history (at most `HISTORY_LIMIT`). Other
    nodes keep their previous entry, stale, unless it is older than `FORGET_AFTER`."""
    result: dict[str, NodeUsage] = {}
    for node in sorted(set(previous) | set(measured)):
        usage = measured.get(node)
        before = previous.get(node)
        if usage is not None and _shape(usage) == expected:
            history: tuple[Mapping[str, Mapping[str, float]], ...] = ()
            if before is not None and not before.stale and _shape(before.usage) == expected:
                history = (*before.history, before.usage)[-HISTORY_LIMIT:]
            result[node] = NodeUsage(
                node=node, usage=usage, metrics_time=times[node], history=history
            )
        elif before is not None and now - before.metrics_time <= FORGET_AFTER:
            result[node] = dataclasses.replace(before, stale=True, history=())
    return result


def _shape(usage: Mapping[str, Mapping[str, float]]) -> frozenset[tuple[str, str]]:
    return frozenset(
        (resource, period) for resource, periods in usage.items() for period in periods
    )


class UsageCollector:
    """One configuration of the collector: builds the queries, runs them, merges the answers."""

    def __init__(
        self,
        config: MetricsConfig,
        periods: tuple[str, ...],
        *,
        clock: Clock,
        observer: UsageObserver | None = None,
        fetch: Fetch = urllib_fetch,
        read_text: Callable[[str], str] = read_text_file,
    ) -> None:
        self.config = config
        self.periods = periods or (config.period,)
        self._clock = clock
        self._observer = observer
        self._fetch = fetch
        self._read_text = read_text
        templates = (("cpu", config.cpu_query), ("memory", config.memory_query))
        self.queries: tuple[tuple[str, str, str], ...] = tuple(
            (resource, period, render_query(template, period=period, label=config.node_label))
            for resource, template in templates
            for period in self.periods
        )
        """`(resource, period, PromQL)` for each query of a collection, in order."""

    def collect(self, previous: Mapping[str, NodeUsage]) -> Collection:
        """One collection. Never raises for a failure of Prometheus or the network: the result
        then carries the failure and `previous`, stale."""
        try:
            measured, times = self._measure()
        except QueryError as failure:
            if self._observer is not None:
                self._observer.observe_usage_failure(failure.reason)
            return Collection(stale(previous), failure)
        expected = frozenset((resource, period) for resource, period, _ in self.queries)
        usage = merge(previous, measured, times, expected=expected, now=self._clock.now())
        return Collection(usage)

    def _measure(self) -> tuple[dict[str, Usage], dict[str, dt.datetime]]:
        headers = auth_headers(self.config, self._read_text)
        context = ssl_context(self.config)
        url = query_url(self.config.address)
        measured: dict[str, Usage] = {}
        oldest: dict[str, float] = {}
        for resource, period, promql in self.queries:
            request = QueryRequest(
                url=url,
                query=promql,
                timeout=self.config.timeout_seconds,
                headers=headers,
                context=context,
            )
            started = perf_counter()
            try:
                samples = parse_vector(self._fetch(request), self.config.node_label)
            finally:
                if self._observer is not None:
                    self._observer.observe_usage_query(resource, perf_counter() - started)
            for node, sample in _by_node(samples).items():
                measured.setdefault(node, {}).setdefault(resource, {})[period] = _percent(sample)
                oldest[node] = min(oldest.get(node, math.inf), sample.timestamp)
        times = {node: dt.datetime.fromtimestamp(t, dt.UTC) for node, t in oldest.items()}
        return measured, times


def _by_node(samples: list[Sample]) -> dict[str, Sample]:
    """One sample per node: when two series name one node (two exporters, or `host:9100` and
    `host:9101`), the higher value wins (then the older time), whatever their order."""
    chosen: dict[str, Sample] = {}
    for sample in samples:
        held = chosen.get(sample.node)
        if held is None or (sample.value, -sample.timestamp) > (held.value, -held.timestamp):
            chosen[sample.node] = sample
    return chosen


def _percent(sample: Sample) -> float:
    return min(100.0, max(0.0, sample.value))


@dataclasses.dataclass(frozen=True, slots=True)
class _Wanted:
    """The configuration the policy asks for."""

    config: MetricsConfig | None
    periods: tuple[str, ...]


class UsageLoop:
    """The collector's thread: collects every `metrics.interval` and hands each result to `sink`
    (`SchedulerCache.set_usage`). `configure` is called whenever a policy is loaded; an unchanged
    block changes nothing, a changed one is collected from at once."""

    def __init__(
        self,
        sink: Callable[[Mapping[str, NodeUsage]], None],
        *,
        clock: Clock,
        observer: UsageObserver,
        fetch: Fetch = urllib_fetch,
        read_text: Callable[[str], str] = read_text_file,
    ) -> None:
        self._sink = sink
        self._clock = clock
        self._observer = observer
        self._fetch = fetch
        self._read_text = read_text
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._wanted = _Wanted(None, ())
        self._changed = True
        self._collector: UsageCollector | None = None
        self._usage: dict[str, NodeUsage] = {}
        self._last_success: float | None = None
        self._state: str | None = None
        """`ok`, a failure reason, or None before the first collection of a configuration."""
        self._due = 0.0
        self._thread: threading.Thread | None = None
        observer.watch_usage_age(self.age)

    @property
    def usage(self) -> dict[str, NodeUsage]:
        """What the last collection handed to the sink."""
        return self._usage

    def configure(self, config: MetricsConfig | None, periods: tuple[str, ...]) -> None:
        """The policy's `metrics` block and usage periods (see `conf.metrics_block`)."""
        wanted = _Wanted(config, periods)
        with self._lock:
            if wanted == self._wanted and not self._changed:
                return
            self._wanted, self._changed = wanted, True
        self._wake.set()

    def age(self) -> float:
        """Seconds since the last successful collection; NaN before one (or while idle)."""
        last = self._last_success
        return math.nan if last is None else max(0.0, self._clock.monotonic() - last)

    def start(self) -> None:
        """Run in a daemon thread until `stop`."""
        self._thread = threading.Thread(target=self._run, name="usage-collector", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread (a query in flight is abandoned after `timeout`)."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def step(self) -> None:
        """Apply a new configuration, and collect if it is new or a collection is due: what the
        thread does each time it wakes."""
        with self._lock:
            changed, wanted = self._changed, self._wanted
            self._changed = False
        if changed:
            self._apply(wanted)
        collector = self._collector
        if collector is not None and (changed or self._clock.monotonic() >= self._due):
            self._due = self._clock.monotonic() + collector.config.interval_seconds
            self._collect(collector)

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self.step()
            except Exception:
                logger.exception("node-usage collector: unexpected error; it carries on")
            wait = None
            if self._collector is not None:
                wait = max(0.0, self._due - self._clock.monotonic())
            self._wake.wait(wait)
            self._wake.clear()

    def _apply(self, wanted: _Wanted) -> None:
        config = wanted.config
        self._state = None
        if config is None or config.type != "prometheus":
            self._collector, self._last_success = None, None
            self._usage = {}
            self._observer.set_usage_fresh_nodes(0)
            self._sink({})
            if config is None:
                logger.info("no metrics block in the policy: node usage is not collected")
            else:
                logger.warning(
                    "metrics type %r is not collected by vscheduler (only 'prometheus'): "
                    "node usage is not collected",
                    config.type,
                )
            return
        self._collector = UsageCollector(
            config,
            wanted.periods,
            clock=self._clock,
            observer=self._observer,
            fetch=self._fetch,
            read_text=self._read_text,
        )
        logger.info(
            "collecting node usage from %s every %gs (periods %s, nodes by label %r)",
            config.address,
            config.interval_seconds,
            ", ".join(self._collector.periods),
            config.node_label,
        )

    def _collect(self, collector: UsageCollector) -> None:
        try:
            outcome = collector.collect(self._usage)
        except Exception as exc:  # a bug, not Prometheus: the data is kept, stale, as for one
            self._observer.observe_usage_failure("error")
            failure = QueryError("error", f"unexpected {type(exc).__name__}: {exc}")
            failure.__cause__ = exc
            outcome = Collection(stale(self._usage), failure)
        self._usage = outcome.usage
        if outcome.failure is None:
            self._last_success = self._clock.monotonic()
        self._observer.set_usage_fresh_nodes(outcome.fresh)
        self._report(collector.config.address, outcome)
        self._sink(outcome.usage)

    def _report(self, address: str, outcome: Collection) -> None:
        """Log a change of state only: first success, failure (or a new kind of failure),
        recovery."""
        failure = outcome.failure
        state = "ok" if failure is None else failure.reason
        before, self._state = self._state, state
        if state == before:
            return
        if failure is not None:
            logger.warning(
                "node usage from %s: collection failed (%s: %s); %d nodes keep their last "
                "values, marked stale",
                address,
                failure.reason,
                failure,
                len(outcome.usage),
                exc_info=failure.__cause__ if failure.reason == "error" else None,
            )
        elif before is None:
            logger.info("node usage from %s: %d nodes measured", address, outcome.fresh)
        else:
            logger.info(
                "node usage from %s: collection works again, %d nodes measured",
                address,
                outcome.fresh,
            )
