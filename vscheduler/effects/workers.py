"""The executor's workers: the pools its writes run on, each queued call counted and guarded,
and the fence every attempt passes.

Owns: the pools (binds and evictions on `pool`, `size` threads; pod conditions, nominations,
PodGroup and Queue statuses and reservation releases on `status_pool`, so the binds of a later
cycle never queue behind an earlier cycle's status writes; Events on `event_pool`; the submits,
the volume-wait checks and the held Queue statuses, in order, on the one-thread `dispatcher`),
what is queued or running by kind (`pending`: for `drain`, the shutdown's order and the Event
turn rule) and what was not sent (`not_sent`), the lock those counts share with the Event turns
(`idle`, `turns`), the `stop` event that cuts retries short, the shutdown's `draining` flag, and
`call`: a write under the retry rules, the term, the lease and its decision's check asked again
before every attempt.
Must not: decide what to write, know more of a write than the first word of its `what` (its
kind), or let anything raise out of a queued call.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Final, ParamSpec, TypeVar

from vscheduler.clock import Clock
from vscheduler.effects.retry import RetryPolicy, call_with_retry
from vscheduler.effects.terms import Check, Terms
from vscheduler.errors import FencedError

# the executor's one logger, whichever of its modules writes the line
logger = logging.getLogger("vscheduler.effects.executor")

P = ParamSpec("P")
T = TypeVar("T")
_KINDS: Final = {
    "bind": "binds",
    "evict": "evictions",
    "evictions": "evictions",
    "condition": "status writes",
    "status": "status writes",
    "release": "status writes",
    "event": "Events",
}
"""What a queued call is, by the first word of its `what` (shutdown counts what was not sent)."""


class Workers:
    """The pools of an executor of `workers` bind workers, and the bookkeeping of their calls."""

    def __init__(
        self,
        *,
        workers: int,
        clock: Clock,
        terms: Terms,
        retry: RetryPolicy,
        may_write: Callable[[], bool],
    ) -> None:
        self.size = workers
        self._clock, self._terms, self._retry = clock, terms, retry
        self._may_write = may_write
        """Checked before every attempt: a replica that lost the lease sends nothing more, not
        even the binds it had queued (the fence kube-scheduler gets by exiting). The API client
        asks again right before the bytes leave (see `check_send`)."""
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="effects")
        self.status_pool = ThreadPoolExecutor(
            max_workers=max(2, workers // 4), thread_name_prefix="effects-status"
        )
        """Pod conditions, PodGroup statuses and reservation releases: a pool of their own, so
        the binds and evictions of a later cycle never queue behind an earlier cycle's status
        writes (a stream of gangs writes a PodGroup status per gang per cycle)."""
        self.event_pool = ThreadPoolExecutor(
            max_workers=max(2, workers // 2), thread_name_prefix="effects-events"
        )
        """Events: half as many workers as binds. A batch of Events on one connection is
        answered one request after another, each as slow as the API server is busy (45 ms on
        average in a W1 stream on two cores), so it is how many batches go at once, not their
        size, that keeps the Events up with the binds (`events.EVENT_BATCH`)."""
        self.dispatcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="effects-dispatch")
        self.stop = threading.Event()
        lock = threading.RLock()
        self.idle = threading.Condition(lock)
        self.turns = threading.Condition(lock)
        """Told when a `Scheduled` Event may have its turn (see `events.EventSender`)."""
        self._in_flight = 0
        self.not_sent: collections.Counter[str] = collections.Counter()
        self.pending: collections.Counter[str] = collections.Counter()
        """Calls queued or running, by kind (`_KINDS`; "" for the dispatcher's), under `idle`."""
        self.draining = False
        """Shutting down: status writes not started are skipped, binds go first."""

    # --- queueing -----------------------------------------------------------------------------
    def spawn(self, what: str, fn: Callable[P, None], *args: P.args, **kwargs: P.kwargs) -> bool:
        """Queue `fn(*args)` on the worker pool, guarded; False when the pool is closed."""
        return self.queue(what, lambda: fn(*args, **kwargs), self.pool)

    def spawn_status(
        self, what: str, fn: Callable[P, None], *args: P.args, **kwargs: P.kwargs
    ) -> bool:
        """`spawn` on the status pool (status writes never delay binds and evictions)."""
        return self.queue(what, lambda: fn(*args, **kwargs), self.status_pool)

    def queue(
        self,
        what: str,
        call: Callable[[], None],
        pool: ThreadPoolExecutor,
        *,
        cancel_unsent: bool = True,
    ) -> bool:
        """Queue `call` on `pool`, counted for `drain` and guarded: nothing raises out of it.
        It runs under the term it was queued in (see `check_send`). A call dropped unstarted by
        `cancel`, or not queued because the pool is closed, counts as a write of its kind not
        sent, unless `cancel_unsent` is False (its caller counts what was not sent: the Events
        a call may send for others)."""
        kind = _KINDS.get(what.partition(" ")[0], "")
        term = self.queue_term()

        def guarded() -> None:
            with self._terms.running(term):
                try:
                    call()
                except Exception:
                    logger.exception("%s failed unexpectedly", what)

        with self.idle:
            self._in_flight += 1
            self.pending[kind] += 1
        try:
            future = pool.submit(guarded)
        except RuntimeError:
            self._done(kind, None)
            logger.info("%s not carried out: shutting down", what)
            if cancel_unsent:
                with self.idle:
                    self.not_sent[kind or "other"] += 1
            return False
        future.add_done_callback(lambda done: self._done(kind, done if cancel_unsent else None))
        return True

    def _done(self, kind: str, future: Future[None] | None) -> None:
        with self.idle:
            self._in_flight -= 1
            self.pending[kind] -= 1
            if future is not None and future.cancelled():
                self.not_sent[kind or "other"] += 1
            self.idle.notify_all()
            if kind in ("binds", "evictions") and self.decisions_left() == self.size:
                self.turns.notify_all()  # the binds no longer wait: Events may all go

    # --- sending ------------------------------------------------------------------------------
    def call(self, what: str, fn: Callable[[], None], *, check: Check | None = None) -> None:
        """`fn()` under the retry rules; before every attempt (and, through `check_send`, right
        before the request leaves) the term, the lease and `check` are asked again."""

        with self._terms.checking(check):
            call_with_retry(
                self._retry,
                lambda: self._fenced(what, fn),
                what=what,
                clock=self._clock,
                sleep=self.stop.wait,
                stopping=self.stop.is_set,
            )

    def once(self, what: str, fn: Callable[[], T], *, check: Check | None = None) -> T:
        """`fn()` once, asked as each of `call`'s attempts is (no retry: the caller sends again
        what failed); what it returns."""
        with self._terms.checking(check):
            return self._fenced(what, fn)

    def _fenced(self, what: str, fn: Callable[[], T]) -> T:
        """`fn()` unless the term, the lease or the calling thread's check says no."""
        self._terms.check_send()
        if not self._may_write():  # checked before every attempt, retries included
            raise FencedError(f"{what}: this replica no longer leads")
        return fn()

    def queue_term(self) -> int:
        """The term a call queued now from this thread runs under: a worker's own (what it
        queues inherits its term), else the current one."""
        inherited = self._terms.thread_term()
        return self._terms.current if inherited is None else inherited

    def thread_term(self) -> int | None:
        """The term the calling worker's work was queued under (None: not a worker)."""
        return self._terms.thread_term()

    def ending(self) -> bool:
        """A shutdown drains or the executor has stopped: what is left goes one by one, now."""
        return self.draining or self.stop.is_set()

    def skipped_in_shutdown(self) -> bool:
        """While a shutdown drains binds, a status write not started yet is not sent."""
        if not self.draining:
            return False
        with self.idle:
            self.not_sent["status writes"] += 1
        return True

    # --- progress -----------------------------------------------------------------------------
    def decisions_left(self) -> int:
        """Binds and evictions queued or in flight (under `idle`)."""
        return self.pending["binds"] + self.pending["evictions"]

    def decisions_done(self) -> bool:
        """No bind or eviction is queued or in flight (called under `idle`)."""
        return self.decisions_left() + self.pending[""] == 0

    def busy(self) -> bool:
        """Whether calls are still queued or in flight."""
        with self.idle:
            return self._in_flight > 0

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until no call is queued or running; False if `timeout` seconds passed first."""
        with self.idle:
            return self.idle.wait_for(lambda: self._in_flight == 0, timeout)

    def count_not_sent(self, kind: str, count: int) -> None:
        """`count` writes of `kind` not sent though never queued (binds waiting for volumes)."""
        with self.idle:
            self.not_sent[kind] += count

    def unsent(self) -> dict[str, int]:
        """How many of each kind were not sent."""
        with self.idle:
            return {kind: n for kind, n in self.not_sent.items() if n}

    # --- stopping -----------------------------------------------------------------------------
    def cancel(self) -> None:
        """Drop every queued call (none starts once retries are cut short), then cut retries
        short: `stop`."""
        for pool in self._pools():
            pool.shutdown(wait=False, cancel_futures=True)
        self.stop.set()

    def join(self) -> None:
        """Wait for the calls already in progress."""
        for pool in self._pools():
            pool.shutdown(wait=True)

    def _pools(self) -> tuple[ThreadPoolExecutor, ...]:
        return (self.dispatcher, self.pool, self.status_pool, self.event_pool)
