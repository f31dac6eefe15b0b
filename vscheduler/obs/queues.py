"""Volcano's queue gauges (`pkg/scheduler/metrics/queue.go`), fed from a cycle's queue figures.

`QueueMetrics` registers every `vscheduler_queue_*` gauge on the registry it is handed, sets one
queue's figures from a `QueueReading`, and, from the `QueueFigures` a cycle's queue plugin
reported, sets the reported queues and drops the series of the queues no longer reported.
`SchedulerMetrics` owns an instance and is what callers use.

This module owns the queue metric definitions and the queue names it has set (to delete them).
It must not read a clock or touch the global `prometheus_client.REGISTRY`.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from typing import Final

from prometheus_client import CollectorRegistry, Gauge

from vscheduler.model.commands import QueueFigures
from vscheduler.model.resources import Resources

_P: Final = "vscheduler_"
_NOT_SCALAR: Final = frozenset({"cpu", "memory"})
"""Everything else is a scalar resource, in milli-units (Volcano's `MilliValue()`), except `pods`,
which Volcano's `NewResource` adds as a plain count."""
_FIGURES: Final = (
    ("allocated", "Allocated"),
    ("request", "Request"),
    ("inqueue", "Inqueue"),
    ("deserved", "Deserved"),
    ("capacity", "Capacity"),
    ("real_capacity", "Real capacity"),
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class QueueReading:
    """One queue's figures, as plain numbers in the model's units (cpu in millicores, memory in
    bytes, other resources in their base unit; absent means zero). A `capacity` or
    `real_capacity` of None means the queue has no such figure: its series are not exported."""

    name: str
    allocated: Mapping[str, int]
    request: Mapping[str, int]
    deserved: Mapping[str, int]
    inqueue: Mapping[str, int] = dataclasses.field(default_factory=dict)
    capacity: Mapping[str, int] | None = dataclasses.field(default_factory=dict)
    real_capacity: Mapping[str, int] | None = dataclasses.field(default_factory=dict)
    share: float = 0.0
    weight: int = 1
    overused: bool = False
    guarantee_unsatisfiable: bool = False


def reading_of(figures: QueueFigures) -> QueueReading:
    """The reading for a queue plugin's figures (a missing capability has no series)."""
    return QueueReading(
        name=figures.name,
        allocated=figures.allocated.as_dict(),
        request=figures.request.as_dict(),
        deserved=figures.deserved.as_dict(),
        inqueue=figures.inqueue.as_dict(),
        capacity=_amounts(figures.capability),
        real_capacity=_amounts(figures.real_capability),
        share=figures.share,
        weight=figures.weight,
        overused=figures.overused,
        guarantee_unsatisfiable=bool(figures.warning)
        and figures.warning_reason == "GuaranteeUnsatisfiable",
    )


def _amounts(res: Resources | None) -> dict[str, int] | None:
    return None if res is None else res.as_dict()


def _gauge(r: CollectorRegistry, name: str, doc: str, *labels: str) -> Gauge:
    return Gauge(_P + name, doc, labels, registry=r)


class _QueueResource:
    """Volcano's three gauges for one queue figure: milli-cpu, memory bytes, scalar resources."""

    def __init__(self, r: CollectorRegistry, figure: str, what: str) -> None:
        name = f"queue_{figure}"
        self.cpu = _gauge(r, f"{name}_milli_cpu", f"{what} CPU count for one queue", "queue_name")
        self.memory = _gauge(
            r, f"{name}_memory_bytes", f"{what} memory for one queue", "queue_name"
        )
        self.scalar = _gauge(
            r,
            f"{name}_scalar_resources",
            f"{what} scalar resources for one queue (milli-units)",
            "queue_name",
            "resource",
        )
        self._known: dict[str, set[str]] = {}

    def set(self, queue: str, amounts: Mapping[str, int]) -> None:
        """Set the three gauges; a scalar resource that disappeared reads zero, as in Volcano."""
        self.cpu.labels(queue).set(amounts.get("cpu", 0))
        self.memory.labels(queue).set(amounts.get("memory", 0))
        known = self._known.setdefault(queue, set())
        known.update(r for r in amounts if r not in _NOT_SCALAR)
        for resource in sorted(known):
            scale = 1 if resource == "pods" else 1000
            self.scalar.labels(queue, resource).set(amounts.get(resource, 0) * scale)

    def delete(self, queue: str) -> None:
        """Forget `queue`'s series."""
        self.cpu.remove(queue)
        self.memory.remove(queue)
        for resource in self._known.pop(queue, set()):
            self.scalar.remove(queue, resource)


class QueueMetrics:
    """Every queue gauge, and the queues the last cycle reported."""

    def __init__(self, r: CollectorRegistry) -> None:
        self._lock = threading.Lock()
        self.figures = {f: _QueueResource(r, f, what) for f, what in _FIGURES}
        self.share = _gauge(r, "queue_share", "Share for one queue", "queue_name")
        self.weight = _gauge(r, "queue_weight", "Weight for one queue", "queue_name")
        self.overused = _gauge(r, "queue_overused", "If one queue is overused", "queue_name")
        self.unsatisfiable = _gauge(
            r,
            "queue_guarantee_unsatisfiable",
            "If one queue's guarantee is part of more than the cluster holds (the queues'"
            " guarantees add up to more than the Ready nodes' allocatable)",
            "queue_name",
        )
        self._reported: frozenset[str] = frozenset()
        self._set: dict[str, QueueReading] = {}
        """The reading each queue's series hold: the same again sets nothing (every cycle
        reports every queue, most often as it was)."""

    def set(self, reading: QueueReading) -> None:
        """Record every figure of one queue (a figure that is None drops its series)."""
        name = reading.name
        with self._lock:
            if self._set.get(name) == reading:
                return
            self._set[name] = reading
            for figure, _ in _FIGURES:
                amounts: Mapping[str, int] | None = getattr(reading, figure)
                if amounts is None:
                    self.figures[figure].delete(name)
                else:
                    self.figures[figure].set(name, amounts)
            self.share.labels(name).set(reading.share)
            self.weight.labels(name).set(reading.weight)
            self.overused.labels(name).set(1 if reading.overused else 0)
            self.unsatisfiable.labels(name).set(1 if reading.guarantee_unsatisfiable else 0)

    def delete(self, name: str) -> None:
        """Forget a deleted queue."""
        with self._lock:
            self._set.pop(name, None)
            for figure in self.figures.values():
                figure.delete(name)
            for gauge in (self.share, self.weight, self.overused, self.unsatisfiable):
                gauge.remove(name)

    def observe(self, queues: Mapping[str, QueueFigures]) -> None:
        """A cycle's queue figures: set every reported queue, in name order, and drop the
        series of the queues the previous cycle reported and this one does not."""
        for name in sorted(queues):
            self.set(reading_of(queues[name]))
        for name in sorted(self._reported - queues.keys()):
            self.delete(name)
        self._reported = frozenset(queues)
