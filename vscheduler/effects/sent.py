"""SentLog: what was last written to each object, so a write is not repeated while in flight;
Newest: per object, only the newest write wanted, so a write queued behind a newer one for the
same object is never sent.

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
from typing import Generic, TypeVar

from vscheduler.clock import Clock

V = TypeVar("V")


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

    def note(self, key: str, value: object) -> None:
        """`value` is being written to `key` now (what a later release names)."""
        with self._lock:
            self._sent[key] = (value, self._clock.monotonic())

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


class Newest(Generic[V]):
    """Per key, the newest value wanted written, and whether a worker is on that key: a status
    or condition wanted while an older one for the same object still waits in the queue
    replaces it, so a backlog holds at most one write per object and never sends a stale one,
    and one object's writes never race each other (one worker at a time per key)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wanted: dict[str, V] = {}
        self._busy: set[str] = set()

    def want(self, key: str, value: V) -> bool:
        """`value` is now the one to write to `key`; True when the caller must start a worker
        for `key` (none is on it)."""
        with self._lock:
            self._wanted[key] = value
            if key in self._busy:
                return False
            self._busy.add(key)
            return True

    def take(self, key: str) -> V | None:
        """For the worker on `key`: the newest value wanted, or None when there is none (the
        worker is then done, and the next `want` starts another)."""
        with self._lock:
            value = self._wanted.pop(key, None)
            if value is None:
                self._busy.discard(key)
            return value

    def forget(self, key: str) -> None:
        """No worker could be started for `key`: drop what it wanted."""
        with self._lock:
            self._wanted.pop(key, None)
            self._busy.discard(key)

    def __len__(self) -> int:
        with self._lock:
            return len(self._wanted)
