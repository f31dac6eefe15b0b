"""What the executor's workers may still send: leadership terms, queued binds, the send check.

Owns: the term counter (bumped on every step-down: work queued under an earlier term is never
sent), the binds queued and not yet taken by a worker, by node (so a node's deletion or a
step-down drops them at once), and, per worker thread, the term its work was queued under and the
check of the decision it is sending (`check_send` asks both; the API client asks it again right
before the bytes leave).
Must not: call the API server or the cache, or log: the executor does, with what these return.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterable, Iterator

from vscheduler.errors import FencedError, StaleDecisionError
from vscheduler.model.commands import Bind

Check = Callable[[], "str | None"]
"""Why a decision no longer holds against the cache (None: it still does)."""


@dataclasses.dataclass(slots=True, eq=False)
class QueuedBind:
    """A bind waiting for a worker; `dropped` once a node deletion or a step-down cancelled it."""

    bind: Bind
    dropped: bool = False


class Terms:
    """Thread-safe; one per executor."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._term = 0
        self._queued: dict[str, dict[str, QueuedBind]] = {}
        """node -> task uid -> the bind queued for it, not yet taken by a worker."""
        self._local = threading.local()

    @property
    def current(self) -> int:
        """The term now."""
        return self._term

    # --- queued binds ------------------------------------------------------------------------
    def queue(self, binds: tuple[Bind, ...]) -> list[QueuedBind]:
        """Register `binds` as queued; their tickets."""
        tickets = [QueuedBind(bind) for bind in binds]
        with self._lock:
            for ticket in tickets:
                self._queued.setdefault(ticket.bind.node, {})[ticket.bind.task_uid] = ticket
        return tickets

    def take(self, ticket: QueuedBind) -> bool:
        """A worker takes a queued bind (or it will never run); False when it was dropped."""
        bind = ticket.bind
        with self._lock:
            queued = self._queued.get(bind.node)
            if queued is not None and queued.get(bind.task_uid) is ticket:
                del queued[bind.task_uid]
                if not queued:
                    del self._queued[bind.node]
            return not ticket.dropped

    def drop_node(self, node: str) -> list[QueuedBind]:
        """Drop the binds queued to `node`; the ones dropped."""
        with self._lock:
            return _dropped(self._queued.pop(node, {}).values())

    def step_down(self) -> list[QueuedBind]:
        """A new term: drop every queued bind; the ones dropped."""
        with self._lock:
            self._term += 1
            tickets = [t for queued in self._queued.values() for t in queued.values()]
            self._queued.clear()
            return _dropped(tickets)

    # --- the calling worker's ----------------------------------------------------------------
    def thread_term(self) -> int | None:
        """The term the calling worker's work was queued under (None: not a worker)."""
        term: int | None = getattr(self._local, "term", None)
        return term

    @contextlib.contextmanager
    def running(self, term: int) -> Iterator[None]:
        """The calling thread runs work queued under `term`."""
        self._local.term = term
        try:
            yield
        finally:
            self._local.term = None

    @contextlib.contextmanager
    def checking(self, check: Check | None) -> Iterator[None]:
        """The calling thread is sending a decision that `check` tells still holds."""
        self._local.check = check
        try:
            yield
        finally:
            self._local.check = None

    def check_send(self) -> None:
        """Raise `FencedError` when the calling worker's work was queued under an earlier term,
        `StaleDecisionError` when its decision no longer holds; nothing on other threads."""
        term = self.thread_term()
        if term is not None and term != self._term:
            raise FencedError("queued before this replica stopped leading")
        check: Check | None = getattr(self._local, "check", None)
        problem = check() if check is not None else None
        if problem:
            raise StaleDecisionError(problem)


def _dropped(tickets: Iterable[QueuedBind]) -> list[QueuedBind]:
    out = list(tickets)
    for ticket in out:
        ticket.dropped = True
    return out
