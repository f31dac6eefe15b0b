"""The executor's Events: each recorded best effort, and a bind's `Scheduled` Event waiting its
turn while binds wait for a worker.

Owns: recording an Event through the writer under the Event retry rules (its message cut to
the port's `EVENT_MESSAGE_LIMIT`), the bind-backlog turn rule (`EVENTS_IN_BACKLOG` `Scheduled`
Events at once while binds wait for a worker, each waiting at most its turn wait), the count of
those being sent (under the lock the workers' `idle` and `turns` share), and the shutdown's hold
on them while it drains binds (`hold`, `release`).
Must not: raise (a failure is logged), hold an Event without end, or queue anything itself (the
callers queue Events on the workers' `event_pool`).
"""

from __future__ import annotations

import threading
from typing import Final

from vscheduler.clock import Clock
from vscheduler.effects import status as st
from vscheduler.effects.outcomes import log_failure
from vscheduler.effects.ports import EVENT_MESSAGE_LIMIT, ClusterWriter, ObjectRef
from vscheduler.effects.retry import RetryPolicy, call_with_retry
from vscheduler.effects.workers import Workers

EVENTS_IN_BACKLOG: Final = 1
"""`Scheduled` Events sent at once while binds wait for a worker (a bind backlog); otherwise as
many as the Event pool has workers. An Event is a write to the API server like a bind, and in a
backlog the API server is what the binds wait for: kube-scheduler's recorder sends its Events
one at a time, from one goroutine. Here they go one at a time while binds wait, and catch up
when the binds are done."""
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
    ) -> None:
        self._writer, self._clock, self._retry = writer, clock, retry
        self._workers = workers
        self._turn_wait = turn_wait
        self._sending = 0
        """`Scheduled` Events being sent (see `EVENTS_IN_BACKLOG`), under the lock the
        workers' `idle` and `turns` share."""
        self._go = threading.Event()
        self._go.set()

    def send(self, ref: ObjectRef, type_: st.EventType, reason: str, message: str) -> None:
        """Record an Event, best effort: a failure is logged, never raised."""
        text = (
            message
            if len(message) <= EVENT_MESSAGE_LIMIT
            else message[: EVENT_MESSAGE_LIMIT - 3] + "..."
        )
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

    def scheduled(self, ref: ObjectRef, message: str) -> None:
        """The `Scheduled` Event of a bind; while a shutdown drains binds it waits for them,
        and while binds wait for a worker it waits its turn (`EVENTS_IN_BACKLOG`)."""
        self._go.wait()
        turns = self._workers.turns
        with turns:
            turns.wait_for(self._turn, self._turn_wait)
            self._sending += 1
        try:
            self.send(ref, "Normal", "Scheduled", message)
        finally:
            with turns:
                self._sending -= 1
                turns.notify()

    def _turn(self) -> bool:
        """A `Scheduled` Event may go now: no bind waits for a worker, or fewer than
        `EVENTS_IN_BACKLOG` Events are being sent, or the executor stops (under the lock)."""
        workers = self._workers
        return (
            workers.decisions_left() <= workers.size
            or self._sending < EVENTS_IN_BACKLOG
            or workers.stop.is_set()
        )

    # --- shutdown -----------------------------------------------------------------------------
    def hold(self) -> None:
        """Events wait (a shutdown sends the binds and evictions first)."""
        self._go.clear()

    def release(self) -> None:
        """Events go again."""
        self._go.set()

    def wake(self) -> None:
        """The executor stops: every Event waiting, to be held or for its turn, goes now."""
        self._go.set()
        with self._workers.turns:
            self._workers.turns.notify_all()
