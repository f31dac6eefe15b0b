"""SentLog: what was last written to each object, so a write is not repeated while in flight.

The cache shows a write only once the watch delivers it; until then the next cycles would ask
for the same write again. A claim for the same value within `resend_after` seconds is refused;
a failed write releases its claim so the next cycle tries again; entries of objects that no
longer need writing are pruned, so the log stays as large as the current work.

Owns: that bookkeeping, thread-safe (claims come from the loop, releases from workers).
Must not: decide what to write (see `status`).
"""

from __future__ import annotations

import threading
from collections.abc import Collection

from vscheduler.clock import Clock


class SentLog:
    """Values written (or being written) per key, with the time of the write."""

    def __init__(self, clock: Clock, resend_after: float) -> None:
        self._clock = clock
        self._resend_after = resend_after
        self._lock = threading.Lock()
        self._sent: dict[str, tuple[object, float]] = {}

    def claim(self, key: str, value: object) -> bool:
        """Whether to write `value` to `key` now (then it is recorded as sent)."""
        now = self._clock.monotonic()
        with self._lock:
            last = self._sent.get(key)
            if last is not None and last[0] == value and now - last[1] < self._resend_after:
                return False
            self._sent[key] = (value, now)
            return True

    def release(self, key: str, value: object) -> None:
        """The write of `value` failed: let the next claim through."""
        with self._lock:
            last = self._sent.get(key)
            if last is not None and last[0] == value:
                del self._sent[key]

    def discard(self, key: str) -> None:
        """`key` holds what was wanted: nothing to remember."""
        with self._lock:
            self._sent.pop(key, None)

    def prune(self, keep: Collection[str]) -> None:
        """Forget every key not in `keep`."""
        with self._lock:
            for key in [k for k in self._sent if k not in keep]:
                del self._sent[key]

    def expire(self) -> None:
        """Forget every entry older than `resend_after` (for logs no prune would bound)."""
        oldest = self._clock.monotonic() - self._resend_after
        with self._lock:
            for key in [k for k, (_, at) in self._sent.items() if at <= oldest]:
                del self._sent[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._sent)
