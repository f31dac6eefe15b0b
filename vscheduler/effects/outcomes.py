"""What the executor tells of its writes: each write's outcome, every eviction's again with its
`Evict`, and the durations it times, to the callbacks the composition root wires to metrics;
and the log line of a failed write.

Owns: calling `on_outcome`, `on_eviction` and `on_duration` guarded (a failing callback is
logged, never raised into a worker), the seconds since a creation time of the snapshot, and the
level of a failure's log line (`log_failure`).
Must not: write to the cluster, or decide what an outcome is.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

from vscheduler.clock import Clock
from vscheduler.errors import NotSentError, UnreachableError
from vscheduler.model.commands import Evict
from vscheduler.model.facts import EPOCH

# the executor's one logger, whichever of its modules writes the line
logger = logging.getLogger("vscheduler.effects.executor")


class Outcomes:
    """The executor's callbacks, guarded."""

    def __init__(
        self,
        *,
        clock: Clock,
        on_outcome: Callable[[str, str], None],
        on_eviction: Callable[[Evict, str], None],
        on_duration: Callable[[str, float], None],
    ) -> None:
        self._clock = clock
        self._on_outcome = on_outcome
        self._on_eviction = on_eviction
        self._on_duration = on_duration

    def outcome(self, action: str, outcome: str) -> None:
        try:
            self._on_outcome(action, outcome)
        except Exception:
            logger.exception("on_outcome(%s, %s) failed", action, outcome)

    def duration(self, kind: str, seconds: float) -> None:
        try:
            self._on_duration(kind, seconds)
        except Exception:
            logger.exception("on_duration(%s, %s) failed", kind, seconds)

    def since(self, kind: str, created: dt.datetime | None) -> None:
        """`on_duration(kind, seconds since created)`, when the creation time is known."""
        if created is not None and created > EPOCH:
            self.duration(kind, max(0.0, (self._clock.now() - created).total_seconds()))

    def evicted(self, evict: Evict, outcome: str) -> None:
        self.outcome("evict", outcome)
        try:
            self._on_eviction(evict, outcome)
        except Exception:
            logger.exception("on_eviction(%s, %s) failed", evict.pod, outcome)


def log_failure(message: str, err: Exception) -> None:
    """A failed write: a warning, unless the API server was unreachable (an outage, which the
    client reports once when it ends: one line per call would bury it) or the write was not
    sent on purpose (a step-down, a decision gone stale)."""
    level = logging.INFO if isinstance(err, UnreachableError | NotSentError) else logging.WARNING
    logger.log(level, message, err)
