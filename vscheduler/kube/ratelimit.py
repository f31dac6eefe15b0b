"""A client-side token bucket (QPS and burst), as client-go's `flowcontrol` limiter.

The Python kubernetes client has none; every request `vscheduler.kube` makes takes a token
first. Volcano's defaults are 2000 QPS with a burst of 2000. Thread-safe: callers reserve a
token under a lock (so concurrent callers queue in arrival order) and then wait outside it.
Time comes from an injected clock and the wait from an injected `sleep`, so tests never sleep.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from vscheduler.clock import Clock

DEFAULT_QPS = 2000.0
DEFAULT_BURST = 2000


class TokenBucket:
    """`qps` tokens per second, at most `burst` saved up; `qps <= 0` or infinite disables it."""

    def __init__(
        self,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
        *,
        clock: Clock,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        if burst < 1 and 0 < qps < math.inf:
            raise ValueError(f"burst must be at least 1 when qps is limited, got {burst}")
        self._qps = float(qps)
        self._burst = float(burst)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock.monotonic()

    @property
    def unlimited(self) -> bool:
        """True when the bucket never waits."""
        return self._qps <= 0 or math.isinf(self._qps)

    def reserve(self) -> float:
        """Take one token now, possibly on credit; returns the seconds the caller must wait."""
        if self.unlimited:
            return 0.0
        with self._lock:
            self._refill()
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self._qps

    def take(self, most: int) -> int:
        """Take up to `most` tokens there now, never on credit (nothing waits); how many."""
        if self.unlimited:
            return max(0, most)
        with self._lock:
            self._refill()
            taken = max(0, min(most, math.floor(self._tokens)))
            self._tokens -= taken
            return taken

    def _refill(self) -> None:
        """Under the lock: the tokens earned since the last call, up to the burst."""
        now = self._clock.monotonic()
        elapsed = max(0.0, now - self._last)
        self._last = now
        self._tokens = min(self._burst, self._tokens + elapsed * self._qps)

    def acquire(self) -> float:
        """Wait for a token; returns the seconds waited."""
        delay = self.reserve()
        if delay > 0:
            self._sleep(delay)
        return delay
