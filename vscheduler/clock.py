"""Time, injected: the only module that reads the system clock.

The pure core (model, framework, actions, plugins) sees time only through a `Clock` handed to it,
so a snapshot and a policy (and `--now`) decide every outcome.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Protocol


class Clock(Protocol):
    """Wall and monotonic time."""

    def now(self) -> dt.datetime:
        """The wall clock, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin, never going back."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC)

    def monotonic(self) -> float:
        return time.monotonic()


class FixedClock:
    """A clock stopped at one instant (what `simulate --now` uses); `advance` moves it."""

    def __init__(self, now: dt.datetime) -> None:
        self._now = now
        self._mono = 0.0

    def now(self) -> dt.datetime:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float) -> None:
        self._now += dt.timedelta(seconds=seconds)
        self._mono += seconds


def perf_counter() -> float:
    """A high-resolution timer for measuring durations (stats, metrics), never for decisions."""
    return time.perf_counter()
