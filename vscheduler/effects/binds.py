"""The executor's binds: each pod's Binding, after its volumes are bound (`volume_binds`).

Owns: queueing the binds of a cycle (each already assumed in the cache and holding its ticket,
`terms.QueuedBind`), each bind's send and outcome (a conflict or a missing pod forgets the
assumption; other failures also get a Warning `FailedScheduling`; an answer lost keeps it,
`unconfirmed`; success a Normal `Scheduled` Event, queued on the Event pool), the time a bind
took (`on_duration("bind")`, and `task` since the pod's creation), and the drops of queued binds
(a node deleted, a step-down, a shutdown), with those of the binds waiting for their volumes.
Before the Binding, `volume_binds.VolumeBinder` sends the writes that bind the pod's volumes to
the node and, when the PV controller must finish them, holds the bind until the cache shows its
claims bound, then hands it back (`send_binding`).
Must not: assume binds in the cache (the executor does, before queueing), retry but through
the workers' `call`, or raise out of a worker or the dispatcher.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterable, Mapping

from vscheduler.effects import status as st
from vscheduler.effects.context import EffectsContext
from vscheduler.effects.outcomes import log_failure
from vscheduler.effects.terms import Check, QueuedBind, Terms
from vscheduler.effects.volume_binds import VolumeBinder
from vscheduler.errors import ConflictError, NotFoundError, NotSentError, TransientClusterError
from vscheduler.model.commands import Bind

# the executor's one logger, whichever of its modules writes the line
logger = logging.getLogger("vscheduler.effects.executor")


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
        for ticket in tickets:
            born = created.get(ticket.bind.task_uid)
            queued = self._context.workers.spawn(
                f"bind {ticket.bind.pod}", self._bind, ticket, born
            )
            if not queued and self._terms.take(ticket):
                self._context.cache.forget_bind(ticket.bind.task_uid)

    def _bind(self, ticket: QueuedBind, created: dt.datetime | None = None) -> None:
        bind = ticket.bind
        ref = st.pod_ref(bind.pod, bind.task_uid)
        what = f"bind {bind.pod} to {bind.node}"
        if not self._terms.take(ticket):
            return
        plan = self._volumes.write(bind, ref, what)
        if plan is None:
            return
        if plan.waits:
            self._volumes.wait(bind, plan, created, what)
            return
        self.send_binding(bind, created)

    def send_binding(self, bind: Bind, created: dt.datetime | None = None) -> None:
        """POST the pod's Binding (its volumes bound, or none to bind)."""
        ref = st.pod_ref(bind.pod, bind.task_uid)
        what = f"bind {bind.pod} to {bind.node}"
        lost: list[TransientClusterError] = []

        def send() -> None:
            try:
                self._context.writer.bind(ref.namespace, ref.name, ref.uid, bind.node)
            except TransientClusterError as err:
                if err.maybe_applied:
                    lost.append(err)  # it may have been bound: only the watch can tell
                raise

        try:
            self._timed(what, send, lambda: self._context.cache.bind_problem(ref.uid, bind.node))
        except NotSentError as err:
            self._context.cache.forget_bind(bind.task_uid)
            self._context.outcomes.outcome("bind", "dropped")
            logger.info("%s not sent: %s", what, err)
            return
        except (ConflictError, NotFoundError) as err:
            # a conflict after an answer was lost: most likely that earlier attempt of ours
            if lost and isinstance(err, ConflictError):
                self._unconfirmed(bind, what, err)
                return
            self._context.cache.forget_bind(bind.task_uid)
            self._context.outcomes.outcome("bind", "conflict")
            logger.info("%s dropped: %s", what, err)
            return
        except Exception as err:
            if lost:
                self._unconfirmed(bind, what, err)
                return
            self._context.cache.forget_bind(bind.task_uid)
            self._context.outcomes.outcome("bind", "error")
            log_failure(f"{what} failed: %s", err)
            if not self._context.workers.stop.is_set():  # not rejected: cut short by shutdown
                message = f"Binding rejected: {err}"
                self._context.events.send(ref, "Warning", "FailedScheduling", message)
            return
        self._context.cache.bind_sent(bind.task_uid)
        self._context.outcomes.outcome("bind", "success")
        self._context.outcomes.since("task", created)
        logger.info("bound %s to %s", bind.pod, bind.node)
        message = f"Successfully assigned {bind.pod} to {bind.node}"
        self._context.events.queue_scheduled(ref, message, f"event Scheduled on {bind.pod}")

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
