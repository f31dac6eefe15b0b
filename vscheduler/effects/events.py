"""The executor's Events: each recorded best effort, and the `Scheduled` Events queued,
waiting their turn while binds wait for a worker, and sent together.

Owns: recording an Event through the writer under the Event retry rules (its message cut to
the port's `EVENT_MESSAGE_LIMIT`); the `Scheduled` Events (a bind's, a PodGroup's going
Running): queued on the workers' `event_pool` (`queue_scheduled`), held per term until a call
of their term sends them, at most `EVENT_BATCH` at once and through the writer's
`record_events` when it has it (one alone again under the retry rules when the batch could not
record it), the first waiting at most `EVENT_GATHER` for others to go with it; the bind-backlog
turn rule (`EVENTS_IN_BACKLOG` sends at once while binds wait for a worker, each waiting at
most its turn wait), the count of those being sent (under the lock the workers' `idle` and
`turns` share), and the shutdown's hold on them while it drains binds (`hold`, `release`).
Must not: raise (a failure is logged), hold an Event without end, or send an Event under a term
other than the one it was queued in.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Final

from vscheduler.clock import Clock
from vscheduler.effects import status as st
from vscheduler.effects.outcomes import log_failure
from vscheduler.effects.ports import (
    EVENT_MESSAGE_LIMIT,
    ClusterWriter,
    EventBatchWriter,
    EventRecord,
    ObjectRef,
)
from vscheduler.effects.retry import RetryPolicy, call_with_retry
from vscheduler.effects.workers import Workers
from vscheduler.errors import NotSentError

# the executor's one logger, whichever of its modules writes the line
logger = logging.getLogger("vscheduler.effects.executor")

EVENTS_IN_BACKLOG: Final = 1
"""`Scheduled` Events sent at once while binds wait for a worker (a bind backlog); otherwise as
many as the Event pool has workers. An Event is a write to the API server like a bind, and in a
backlog the API server is what the binds wait for: kube-scheduler's recorder sends its Events
one at a time, from one goroutine. Here they go one at a time while binds wait, and catch up
when the binds are done."""
EVENT_BATCH: Final = 8
"""`Scheduled` Events sent together at most, written at once on one connection when the writer
can (`EventBatchWriter`): a batch of 16 cost about half the CPU per Event of sending each alone
(`bench.client_requests`: 257 against 541 µs), paying the syscalls, the TLS records and the
GIL hand-offs once. The API server answers a connection's requests one after another, so a
batch takes its size times the API server's latency: with four workers sending 16 at a time a
W1 stream's batches took 0.79 s each (45 ms an Event) and the Events fell 500 behind the binds,
catching up only after the last bind; eight workers sending 8 kept up (docs/design.md)."""
EVENT_GATHER: Final = 0.25
"""Seconds at most the first of the `Scheduled` Events waiting to go waits for others to go with
it, when no bind waits for a worker (a stream of lone pods): `EVENT_BATCH` of them go at once,
else what came by then. Sent as each bind ends, a stream's Events went alone, at the CPU of an
Event alone; the wait is a quarter of a second a user reading `kubectl describe` never sees.
kube-scheduler's recorder, too, hands its Events to a goroutine that sends them later."""
EVENT_TURN_WAIT: Final = 1.0
"""Seconds at most a `Scheduled` Event waits for its turn in a bind backlog before it goes anyway
(an Event is never held without end)."""


class EventSender:
    """Records the executor's Events through `writer`, on the threads of `workers`."""

    def __init__(
        self,
        writer: ClusterWriter,
        *,
        clock: Clock,
        retry: RetryPolicy,
        workers: Workers,
        turn_wait: float = EVENT_TURN_WAIT,
        gather: float = EVENT_GATHER,
    ) -> None:
        self._writer, self._clock, self._retry = writer, clock, retry
        self._workers = workers
        self._turn_wait, self._gather = turn_wait, gather
        self._sending = 0
        """`Scheduled` Events being sent (see `EVENTS_IN_BACKLOG`), under the lock the
        workers' `idle` and `turns` share."""
        self._go = threading.Event()
        self._go.set()
        self._waiting: dict[int | None, list[tuple[ObjectRef, str, float]]] = {}
        """Per term, the `Scheduled` Events waiting to be sent, each with when it was queued
        (`clock.monotonic`; see `queue_scheduled`)."""
        self._waiting_lock = threading.Lock()
        self._gathered = threading.Condition(self._waiting_lock)
        """Told when a term has `EVENT_BATCH` Events waiting, a shutdown's drain lets the
        Events go (`release`), or the executor stops (`wake`)."""
        self._together = writer if isinstance(writer, EventBatchWriter) else None
        """The writer, when it records Events together."""

    def send(self, ref: ObjectRef, type_: st.EventType, reason: str, message: str) -> None:
        """Record an Event, best effort: a failure is logged, never raised."""
        text = _cut(message)
        stop = self._workers.stop
        try:
            call_with_retry(
                self._retry,
                lambda: self._writer.record_event(ref, type_, reason, text),
                what=f"event {reason} on {ref.kind} {ref.namespace}/{ref.name}",
                clock=self._clock,
                sleep=stop.wait,
                stopping=stop.is_set,
            )
        except Exception as err:
            log_failure(f"event {reason} on {ref.kind} {ref.name} not recorded: %s", err)

    def queue_scheduled(self, ref: ObjectRef, message: str, what: str) -> None:
        """Queue the `Scheduled` Event of a bind, or of a PodGroup going Running, on the Event
        pool (the next bind or status write does not wait for it). It joins the Events of its
        term waiting to go; the call queued with it waits until a shutdown has drained the
        binds and, while binds wait for a worker, its turn (`EVENTS_IN_BACKLOG`), then sends
        what of its term waits (at most `EVENT_BATCH`, together when the writer can,
        `EventBatchWriter`, after up to `EVENT_GATHER` for others to come): the calls that find
        theirs sent with another's have nothing left to do."""
        term = self._workers.queue_term()
        entry = (ref, message, self._clock.monotonic())
        with self._waiting_lock:
            waiting = self._waiting.setdefault(term, [])
            waiting.append(entry)
            if len(waiting) >= EVENT_BATCH:
                self._gathered.notify_all()
        queued = self._workers.queue(
            what, self._send_in_turn, self._workers.event_pool, cancel_unsent=False
        )
        if not queued:
            with self._waiting_lock:  # shutting down: it will not be sent, unless taken already
                waiting = self._waiting.get(term, [])
                dropped = entry in waiting
                if dropped:
                    waiting.remove(entry)
            if dropped:
                self._workers.count_not_sent("Events", 1)

    def _send_in_turn(self) -> None:
        self._go.wait()
        turns = self._workers.turns
        with turns:
            turns.wait_for(self._turn, self._turn_wait)
            self._sending += 1
            backlog = self._workers.decisions_left() > self._workers.size
        try:  # in a bind backlog one at a time, as ever: a batch would hold the API server longer
            self._send_waiting(self._workers.thread_term(), 1 if backlog else EVENT_BATCH)
        finally:
            with turns:
                self._sending -= 1
                turns.notify()

    def _send_waiting(self, term: int | None, most: int) -> None:
        """Send up to `most` of the `Scheduled` Events of `term` waiting to go: together
        through the batch writer (else the first alone); one the batch could not record is
        sent again alone, under the retry rules. Once the executor stops, one: as many as
        the calls already running, the rest are not sent."""
        writer = self._together
        size = most if writer is not None and not self._workers.stop.is_set() else 1
        with self._waiting_lock:
            if size > 1:
                self._wait_for_others(term, size)
            waiting = self._waiting.get(term, [])
            batch, self._waiting[term] = waiting[:size], waiting[size:]
            if not self._waiting[term]:
                del self._waiting[term]
        if not batch:
            return  # sent with another's
        if len(batch) == 1 or writer is None:
            self.send(batch[0][0], "Normal", "Scheduled", batch[0][1])
            return
        records: list[EventRecord] = [
            (ref, "Normal", "Scheduled", _cut(message)) for ref, message, _ in batch
        ]
        outcomes: Sequence[Exception | None]
        try:
            outcomes = writer.record_events(records)
        except NotSentError as err:  # refused before anything left (the fence): as one alone
            log_failure(f"{len(batch)} Scheduled events not recorded: %s", err)
            return
        except Exception as err:  # the batch as a whole failed: each goes alone
            logger.info("%d Scheduled events not recorded together: %s", len(batch), err)
            outcomes = [err] * len(batch)
        for (ref, message, _), outcome in zip(batch, outcomes, strict=True):
            if outcome is not None:
                self.send(ref, "Normal", "Scheduled", message)

    def _wait_for_others(self, term: int | None, most: int) -> None:
        """Under the waiting lock: wait until `most` Events of `term` wait, the first of them
        has waited `EVENT_GATHER`, or the executor drains for a shutdown or stops (`wake`)."""
        waiting = self._waiting.get(term)
        if not waiting:
            return
        workers = self._workers

        def gathered() -> bool:
            waiting = self._waiting.get(term)
            return not waiting or len(waiting) >= most or workers.ending()

        left = waiting[0][2] + self._gather - self._clock.monotonic()
        if left > 0:
            self._gathered.wait_for(gathered, left)

    def _turn(self) -> bool:
        """A `Scheduled` Event may go now: no bind waits for a worker, or fewer than
        `EVENTS_IN_BACKLOG` Events are being sent, or the executor stops (under the lock)."""
        workers = self._workers
        return (
            workers.decisions_left() <= workers.size
            or self._sending < EVENTS_IN_BACKLOG
            or workers.stop.is_set()
        )

    def unsent(self) -> int:
        """Forget the `Scheduled` Events still waiting (the executor has stopped: their calls
        were dropped); how many there were."""
        with self._waiting_lock:
            left = sum(len(waiting) for waiting in self._waiting.values())
            self._waiting.clear()
        return left

    # --- shutdown -----------------------------------------------------------------------------
    def hold(self) -> None:
        """Events wait (a shutdown sends the binds and evictions first)."""
        self._go.clear()

    def release(self) -> None:
        """Events go again (in a shutdown's drain, those gathering at once: `_wait_for_others`)."""
        self._go.set()
        with self._gathered:
            self._gathered.notify_all()

    def wake(self) -> None:
        """The executor stops: every Event waiting, to be held or for its turn, goes now."""
        self._go.set()
        with self._workers.turns:
            self._workers.turns.notify_all()
        with self._gathered:
            self._gathered.notify_all()


def _cut(message: str) -> str:
    """`message` cut to the port's `EVENT_MESSAGE_LIMIT`."""
    if len(message) <= EVENT_MESSAGE_LIMIT:
        return message
    return message[: EVENT_MESSAGE_LIMIT - 3] + "..."
