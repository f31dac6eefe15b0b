"""The executor's binds: each pod's Binding, after its volumes are bound (`volume_binds`).

Owns: queueing the binds of a cycle (each already assumed in the cache and holding its ticket,
`terms.QueuedBind`) in a list per term, from which each call on the bind pool takes its share
(`share`, at most `BIND_BATCH`) and sends them together when the writer can (`BindBatchWriter`);
each bind's send and outcome (a conflict or a missing pod forgets the assumption; other failures
also get a Warning `FailedScheduling`; an answer lost keeps it, `unconfirmed`; success a Normal
`Scheduled` Event, queued on the Event pool), the time a bind took (`on_duration("bind")`, and
`task` since the pod's creation), and the drops of queued binds (a node deleted, a step-down, a
shutdown), with those of the binds waiting for their volumes.
Before the Binding, `volume_binds.VolumeBinder` sends the writes that bind the pod's volumes to
the node and, when the PV controller must finish them, holds the bind until the cache shows its
claims bound, then hands it back (`send_binding`).
Must not: assume binds in the cache (the executor does, before queueing), retry but through
the workers' `call` (a batch is one attempt, `once`; what it could not bind goes again alone),
send a bind under a term other than the one it was queued in, or raise out of a worker or the
dispatcher.
"""

from __future__ import annotations

import collections
import datetime as dt
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from vscheduler.effects import status as st
from vscheduler.effects.context import EffectsContext
from vscheduler.effects.outcomes import log_failure
from vscheduler.effects.ports import BindBatchWriter, BindRecord
from vscheduler.effects.terms import Check, QueuedBind, Terms
from vscheduler.effects.volume_binds import VolumeBinder
from vscheduler.errors import ConflictError, NotFoundError, NotSentError, TransientClusterError
from vscheduler.model.commands import Bind

# the executor's one logger, whichever of its modules writes the line
logger = logging.getLogger("vscheduler.effects.executor")

BIND_BATCH: Final = 16
"""Bindings sent together at most, written at once on one connection when the writer can
(`BindBatchWriter`): one such batch cost about 60 % of the client CPU per write of sending each
alone (`bench.client_requests`: 411 against 688 µs), paying the syscalls, the TLS records and
the GIL hand-offs once. A call takes its share of the binds waiting (`share`): while no more
wait than there are workers each goes alone, on a connection of its own, because one
connection's requests are answered one after another (a gang of ten bound in one batch waited
for ten Bindings in turn: W3's gang latency rose from 0.24 to 0.91 s, kube-scheduler's 0.24 s);
in a backlog every worker is busy anyway and the batches save the CPU."""


def share(waiting: int, workers: int, most: int) -> int:
    """How many of `waiting` binds a call takes: an even share among `workers`, at least one,
    at most `most` (`BIND_BATCH`)."""
    return max(1, min(most, -(-waiting // max(1, workers))))


_Waiting = tuple[QueuedBind, "dt.datetime | None"]
"""A bind waiting for a call of its term: its ticket and its pod's creation time."""


class Binder:
    """Sends the binds of the cycles through the context's writer, on the bind workers."""

    def __init__(
        self,
        context: EffectsContext,
        *,
        terms: Terms,
        write_condition: Callable[[str, st.Raw, Mapping[str, str]], None],
        volume_binding: Callable[[], bool],
        volume_bind_timeout: Callable[[], float],
        volume_poll: float,
    ) -> None:
        self._context, self._terms = context, terms
        self._waiting: dict[int, collections.deque[_Waiting]] = {}
        """Per term, the binds waiting to be sent (see `submit`)."""
        self._waiting_lock = threading.Lock()
        writer = context.writer
        self._together = writer if isinstance(writer, BindBatchWriter) else None
        """The writer, when it binds several pods at once."""
        self._volumes = VolumeBinder(
            context,
            terms=terms,
            send_binding=self.send_binding,
            write_condition=write_condition,
            volume_binding=volume_binding,
            volume_bind_timeout=volume_bind_timeout,
            volume_poll=volume_poll,
        )

    # --- drops --------------------------------------------------------------------------------
    def node_deleted(self, node: str) -> None:
        """The binds to `node` still queued, or waiting for their volumes, are dropped."""
        self.drop_queued(self._terms.drop_node(node), f"node {node} was deleted")
        self._volumes.drop_node(node)

    def step_down(self) -> None:
        """Every bind still queued, or waiting for its volumes, is dropped."""
        self.drop_queued(self._terms.step_down(), "this replica stopped leading")
        self._volumes.drop_all("this replica stopped leading")

    def close(self) -> None:
        """The waiting binds are checked no more (see `unsent_waits`)."""
        self._volumes.close()

    def drop_queued(self, tickets: Iterable[QueuedBind], why: str) -> None:
        """The queued binds of `tickets` are not sent: their assumptions go (outcome `dropped`)."""
        dropped = 0
        for ticket in tickets:
            self._context.cache.forget_bind(ticket.bind.task_uid)
            self._context.outcomes.outcome("bind", "dropped")
            dropped += 1
        if dropped:
            logger.info("%d queued binds dropped: %s", dropped, why)

    def unsent_waits(self) -> None:
        """The binds still waiting for their volumes are not sent (`VolumeBinder.unsent`)."""
        self._volumes.unsent()

    def volumes_changed(self) -> None:
        """The cache saw a claim or a volume change (its `on_volumes_changed` listener): the
        binds waiting for their volumes are checked (never raises)."""
        self._volumes.changed()

    # --- binds -------------------------------------------------------------------------------
    def submit(self, tickets: list[QueuedBind], created: Mapping[str, dt.datetime]) -> None:
        """Queue the binds of `tickets`: each joins the binds of its term waiting to go, and a
        call on the bind pool is queued with it; the call, in its turn, sends what of its
        term waits (at most `BIND_BATCH`, together when the writer can, `BindBatchWriter`):
        the calls that find theirs sent with another's have nothing left to do."""
        workers = self._context.workers
        term = workers.queue_term()
        for ticket in tickets:
            entry = (ticket, created.get(ticket.bind.task_uid))
            with self._waiting_lock:
                self._waiting.setdefault(term, collections.deque()).append(entry)
            queued = workers.queue(
                f"bind {ticket.bind.pod}", self._bind_waiting, workers.pool, cancel_unsent=False
            )
            if not queued and self._unqueue(term, entry):  # shutting down: not sent
                workers.count_not_sent("binds", 1)
                if self._terms.take(ticket):
                    self._context.cache.forget_bind(ticket.bind.task_uid)

    def _unqueue(self, term: int, entry: _Waiting) -> bool:
        """Take `entry` out of its term's waiting binds; False when a call took it first."""
        with self._waiting_lock:
            waiting = self._waiting.get(term)
            if waiting is None or entry not in waiting:
                return False
            waiting.remove(entry)
            if not waiting:
                del self._waiting[term]
            return True

    def unsent(self) -> int:
        """Forget the binds still waiting (the executor has stopped: their calls were
        dropped; their assumptions expire with their TTL); how many there were."""
        with self._waiting_lock:
            left = sum(len(waiting) for waiting in self._waiting.values())
            self._waiting.clear()
        return left

    def _bind_waiting(self) -> None:
        """Send this call's share of the binds of its term waiting to go (`share`; one once a
        shutdown drains or the executor stops: a batch still in flight when the grace ends
        would hold the exit for every one of its binds' rate-limiter tokens), each once its
        volumes are bound: together through the batch writer when more than one is ready, else
        alone."""
        workers = self._context.workers
        alone = self._together is None or workers.ending()
        most = 1 if alone else BIND_BATCH
        term = workers.thread_term()
        with self._waiting_lock:
            waiting = self._waiting.get(term) if term is not None else None
            if term is None or not waiting:
                return  # sent with another's
            batch = [waiting.popleft() for _ in range(share(len(waiting), workers.size, most))]
            if not waiting:
                del self._waiting[term]
        ready = [(bind, born) for ticket, born in batch if (bind := self._ready(ticket, born))]
        if len(ready) == 1:
            self.send_binding(*ready[0])
        elif ready:
            self._send_together(ready)

    def _ready(self, ticket: QueuedBind, created: dt.datetime | None) -> Bind | None:
        """The bind of `ticket` when its Binding may go now: taken (not dropped), its volume
        writes sent and nothing to wait for (else it waits for its claims, or is dropped)."""
        bind = ticket.bind
        if not self._terms.take(ticket):
            return None
        ref = st.pod_ref(bind.pod, bind.task_uid)
        what = f"bind {bind.pod} to {bind.node}"
        plan = self._volumes.write(bind, ref, what)
        if plan is None:
            return None
        if plan.waits:
            self._volumes.wait(bind, plan, created, what)
            return None
        return bind

    def _send_together(self, ready: list[tuple[Bind, dt.datetime | None]]) -> None:
        """POST the Bindings of `ready` at once (`BindBatchWriter`), each asked its check right
        before (all of them again right before the batch leaves: one turned stale sends each
        alone); a conflict or a missing pod drops its bind as alone, any other failure sends it
        again alone (under the retry rules, a lost answer remembered)."""
        writer, cache = self._together, self._context.cache
        assert writer is not None
        sendable: list[tuple[Bind, dt.datetime | None]] = []
        for bind, born in ready:
            problem = cache.bind_problem(bind.task_uid, bind.node)
            if problem:
                self._not_sent(bind, f"bind {bind.pod} to {bind.node}", problem)
            else:
                sendable.append((bind, born))
        if len(sendable) <= 1:
            for bind, born in sendable:
                self.send_binding(bind, born)
            return

        def stale() -> str | None:
            return next(
                (p for b, _ in sendable if (p := cache.bind_problem(b.task_uid, b.node))), None
            )

        records: list[BindRecord] = []
        for bind, _ in sendable:
            ref = st.pod_ref(bind.pod, bind.task_uid)
            records.append((ref.namespace, ref.name, ref.uid, bind.node))
        started = self._context.clock.monotonic()
        outcomes: Sequence[Exception | None]
        try:
            outcomes = self._context.workers.once(
                f"{len(sendable)} binds", lambda: writer.bind_many(records), check=stale
            )
        except Exception as err:  # refused before anything left, or failed as a whole
            logger.info("%d binds not sent together: %s", len(sendable), err)
            outcomes = [err] * len(sendable)
        took = self._context.clock.monotonic() - started
        for (bind, born), outcome in zip(sendable, outcomes, strict=True):
            if outcome is None:
                self._context.outcomes.duration("bind", took)
                self._bound(bind, born)
            elif isinstance(outcome, (ConflictError, NotFoundError)):
                self._context.outcomes.duration("bind", took)
                self._conflict(bind, f"bind {bind.pod} to {bind.node}", outcome)
            else:
                lost = isinstance(outcome, TransientClusterError) and outcome.maybe_applied
                self.send_binding(bind, born, lost=lost)

    def send_binding(
        self, bind: Bind, created: dt.datetime | None = None, *, lost: bool = False
    ) -> None:
        """POST the pod's Binding (its volumes bound, or none to bind), under the retry rules;
        `lost`: an earlier attempt's answer was lost (it may have bound the pod)."""
        ref = st.pod_ref(bind.pod, bind.task_uid)
        what = f"bind {bind.pod} to {bind.node}"
        answer_lost = lost

        def send() -> None:
            nonlocal answer_lost
            try:
                self._context.writer.bind(ref.namespace, ref.name, ref.uid, bind.node)
            except TransientClusterError as err:
                if err.maybe_applied:
                    answer_lost = True  # it may have been bound: only the watch can tell
                raise

        try:
            self._timed(what, send, lambda: self._context.cache.bind_problem(ref.uid, bind.node))
        except NotSentError as err:
            self._not_sent(bind, what, err)
            return
        except (ConflictError, NotFoundError) as err:
            # a conflict after an answer was lost: most likely that earlier attempt of ours
            if answer_lost and isinstance(err, ConflictError):
                self._unconfirmed(bind, what, err)
                return
            self._conflict(bind, what, err)
            return
        except Exception as err:
            if answer_lost:
                self._unconfirmed(bind, what, err)
                return
            self._context.cache.forget_bind(bind.task_uid)
            self._context.outcomes.outcome("bind", "error")
            log_failure(f"{what} failed: %s", err)
            if not self._context.workers.stop.is_set():  # not rejected: cut short by shutdown
                message = f"Binding rejected: {err}"
                self._context.events.send(ref, "Warning", "FailedScheduling", message)
            return
        self._bound(bind, created)

    def _bound(self, bind: Bind, created: dt.datetime | None) -> None:
        """The Binding was accepted: the cache told, the outcome counted and logged, and the
        `Scheduled` Event queued."""
        self._context.cache.bind_sent(bind.task_uid)
        self._context.outcomes.outcome("bind", "success")
        self._context.outcomes.since("task", created)
        logger.info("bound %s to %s", bind.pod, bind.node)
        message = f"Successfully assigned {bind.pod} to {bind.node}"
        ref = st.pod_ref(bind.pod, bind.task_uid)
        self._context.events.queue_scheduled(ref, message, f"event Scheduled on {bind.pod}")

    def _not_sent(self, bind: Bind, what: str, why: object) -> None:
        """The Binding was not sent (the fence, the decision stale): its assumption goes."""
        self._context.cache.forget_bind(bind.task_uid)
        self._context.outcomes.outcome("bind", "dropped")
        logger.info("%s not sent: %s", what, why)

    def _conflict(self, bind: Bind, what: str, err: Exception) -> None:
        """The API server refused the Binding (the pod is bound already, replaced or gone):
        its assumption goes, the next cycle sees the pod as it is."""
        self._context.cache.forget_bind(bind.task_uid)
        self._context.outcomes.outcome("bind", "conflict")
        logger.info("%s dropped: %s", what, err)

    def _timed(self, what: str, send: Callable[[], None], check: Check) -> None:
        """`_call` for a bind: the time from its first attempt to its answer is told to
        `on_duration("bind", ...)`; a bind never attempted is not timed."""
        started: list[float] = []

        def attempt() -> None:
            if not started:
                started.append(self._context.clock.monotonic())
            send()

        try:
            self._context.workers.call(what, attempt, check=check)
        finally:
            if started:
                self._context.outcomes.duration(
                    "bind", self._context.clock.monotonic() - started[0]
                )

    def _unconfirmed(self, bind: Bind, what: str, err: Exception) -> None:
        """An attempt of `bind` may have bound the pod but its answer was lost: the pod stays
        assumed bound until the watch shows it placed, or the assume TTL (from now) expires;
        only then is it decided again."""
        self._context.cache.bind_sent(bind.task_uid)
        self._context.outcomes.outcome("bind", "unconfirmed")
        logger.info(
            "%s: an answer was lost (%s); the watch decides whether it bound the pod", what, err
        )
