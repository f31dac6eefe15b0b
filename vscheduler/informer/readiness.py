"""`SyncGate`: no cycle runs before every registered informer has delivered its first list.

Each informer registers its kind when built and marks it synced after its first `replace`.
`is_synced()` is what `/readyz` and the loop ask; `wait(timeout)` blocks until then. A gate
with nothing registered is synced. Thread-safe.
"""

from __future__ import annotations

import threading

from vscheduler.informer.kinds import Kind


class SyncGate:
    """Tracks which watched kinds have been listed at least once."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending: set[Kind] = set()
        self._synced: set[Kind] = set()

    def register(self, kind: Kind) -> None:
        """`kind` must sync before the gate opens (registering a synced kind changes nothing)."""
        with self._cond:
            if kind not in self._synced:
                self._pending.add(kind)

    def mark_synced(self, kind: Kind) -> None:
        """`kind` has been listed; wakes the waiters when it was the last one."""
        with self._cond:
            self._pending.discard(kind)
            self._synced.add(kind)
            if not self._pending:
                self._cond.notify_all()

    def is_synced(self) -> bool:
        """True once every registered kind has synced."""
        with self._cond:
            return not self._pending

    def pending(self) -> tuple[str, ...]:
        """The kinds not synced yet, by name (for logs and /readyz), sorted."""
        with self._cond:
            return tuple(sorted(kind.name for kind in self._pending))

    def wait(self, timeout: float | None = None) -> bool:
        """Block until synced or `timeout` seconds pass; returns `is_synced()`."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending, timeout)
