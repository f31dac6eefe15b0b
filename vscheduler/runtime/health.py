"""CycleHealth: whether the scheduling cycles keep failing, for `/readyz`, a metric and an Event.

Owns: counting consecutive failed cycles (a cycle that raised; a skipped cycle changes nothing,
a cycle that ran resets the count), the readiness answer (unready once `threshold` cycles in a
row failed, ready again after the next cycle that runs), and telling its listeners when the
count changes and when a streak starts or ends being reported (once per streak each way).
Must not: run cycles, write to the cluster or log more than once per streak boundary (the loop
logs every failure itself); the app's listeners post the Event and set the gauge.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Final

logger = logging.getLogger(__name__)

DEFAULT_THRESHOLD: Final = 3
"""Consecutive failed cycles after which `/readyz` answers 503 (`--unready-after-failed-cycles`)."""


def _ignore(*_args: object) -> None:
    return None


class CycleHealth:
    """Counts consecutive failed cycles; thread-safe (the HTTP server reads it)."""

    def __init__(
        self,
        threshold: int = DEFAULT_THRESHOLD,
        *,
        on_count: Callable[[int], None] = _ignore,
        on_failing: Callable[[str], None] = _ignore,
        on_recovered: Callable[[str], None] = _ignore,
    ) -> None:
        """`threshold` >= 1. `on_count(n)` hears every change of the count; `on_failing(message)`
        is told once when the count reaches `threshold`, `on_recovered(message)` once when a
        cycle runs after that."""
        if threshold < 1:
            raise ValueError(f"the failed-cycle threshold must be at least 1, got {threshold}")
        self.threshold = threshold
        self._on_count, self._on_failing, self._on_recovered = on_count, on_failing, on_recovered
        self._lock = threading.Lock()
        self._count = 0
        self._last_error = ""

    @property
    def consecutive_failures(self) -> int:
        """Cycles that failed since the last one that ran."""
        with self._lock:
            return self._count

    def failed(self, error: str) -> None:
        """A cycle raised `error` (`Type: message`)."""
        with self._lock:
            self._count += 1
            self._last_error = error
            count = self._count
        self._on_count(count)
        if count == self.threshold:
            message = self._failing_message(count, error)
            logger.error("%s", message)
            self._on_failing(message)

    def succeeded(self) -> None:
        """A cycle ran to its end."""
        with self._lock:
            count, self._count = self._count, 0
        if count:
            self._on_count(0)
        if count >= self.threshold:
            message = f"scheduling cycles run again after {count} consecutive failed cycles"
            logger.warning("%s", message)
            self._on_recovered(message)

    def readiness(self) -> tuple[bool, str]:
        """(False, why) once `threshold` cycles in a row failed; (True, "ok") otherwise."""
        with self._lock:
            count, error = self._count, self._last_error
        if count >= self.threshold:
            return False, self._failing_message(count, error)
        return True, "ok"

    @staticmethod
    def _failing_message(count: int, error: str) -> str:
        return f"{count} consecutive scheduling cycles failed; the last with {error}"
