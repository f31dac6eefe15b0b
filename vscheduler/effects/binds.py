"""The executor's binds: each pod's Binding, after the writes that bind its volumes and the
wait for the PV controller to bind them.

Owns: queueing the binds of a cycle (each already assumed in the cache and holding its ticket,
`terms.QueuedBind`), each bind's send and outcome (a conflict or a missing pod forgets the
assumption; other failures also get a Warning `FailedScheduling`; an answer lost keeps it,
`unconfirmed`; success a Normal `Scheduled` Event, queued on the Event pool), the time a bind
took (`on_duration("bind")`, and `task` since the pod's creation); before the Binding, when the
policy binds volumes (`volume_binding`), the writes that bind its volumes to the node
(`effects.volumes`), each checked and retried as the bind, and the binds waiting until the
cache shows their claims bound (`effects.volume_wait`: a waiting set checked on the dispatcher
when a claim or volume changes and every `volume_poll` seconds; a wait that fails tells the
pod as kube-scheduler does); the drops of queued and waiting binds (a node deleted, a
step-down, a shutdown).
Must not: assume binds in the cache (the executor does, before queueing), retry but through
the workers' `call`, or raise out of a worker or the dispatcher.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Callable, Iterable, Mapping

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import Clock
from vscheduler.effects import status as st
from vscheduler.effects.events import EventSender
from vscheduler.effects.outcomes import Outcomes, log_failure
from vscheduler.effects.ports import ClusterWriter, ObjectRef
from vscheduler.effects.terms import Check, QueuedBind, Terms
from vscheduler.effects.volume_wait import (
    DEADLINE_EXCEEDED,
    Bound,
    Failed,
    VolumeWaits,
    WaitingBind,
    check,
)
from vscheduler.effects.volumes import (
    Claimed,
    Plan,
    Refusal,
    SelectNode,
    VolumeWrite,
    volume_writes,
)
from vscheduler.effects.workers import Workers
from vscheduler.errors import ConflictError, NotFoundError, NotSentError, TransientClusterError
from vscheduler.model.commands import Bind

# the executor's one logger, whichever of its modules writes the line
logger = logging.getLogger("vscheduler.effects.executor")


class Binder:
    """Sends the binds of the cycles through `writer`, on the bind workers."""

    def __init__(
        self,
        writer: ClusterWriter,
        cache: SchedulerCache,
        *,
        clock: Clock,
        terms: Terms,
        workers: Workers,
        events: EventSender,
        outcomes: Outcomes,
        write_condition: Callable[[str, st.Raw, Mapping[str, str]], None],
        volume_binding: Callable[[], bool],
        volume_bind_timeout: Callable[[], float],
        volume_poll: float,
    ) -> None:
        self._writer, self._cache, self._clock = writer, cache, clock
        self._terms, self._workers = terms, workers
        self._events, self._outcomes = events, outcomes
        self._write_condition = write_condition
        """A pod's PodScheduled=False condition written (`PodStatusWriter.write_condition`)."""
        self._volume_binding = volume_binding
        """Whether a bind binds its pod's volumes first (read as the bind begins: the policy's,
        `Pipeline.volume_binding`)."""
        # seconds a bind waits for its volumes (read as it begins to wait: the policy's), and
        # between two checks of the waiting binds
        self._bind_timeout, self._volume_poll = volume_bind_timeout, volume_poll
        self._waits = VolumeWaits()

    # --- drops --------------------------------------------------------------------------------
    def node_deleted(self, node: str) -> None:
        """The binds to `node` still queued, or waiting for their volumes, are dropped."""
        self.drop_queued(self._terms.drop_node(node), f"node {node} was deleted")
        self._drop_waiting(self._waits.drop_node(node), f"node {node} was deleted")

    def step_down(self) -> None:
        """Every bind still queued, or waiting for its volumes, is dropped."""
        self.drop_queued(self._terms.step_down(), "this replica stopped leading")
        self._drop_waiting(self._waits.drop_all(), "this replica stopped leading")

    def close(self) -> None:
        """The waiting binds are checked no more (see `unsent_waits`)."""
        self._waits.close()

    def drop_queued(self, tickets: Iterable[QueuedBind], why: str) -> None:
        """The queued binds of `tickets` are not sent: their assumptions go (outcome `dropped`)."""
        dropped = 0
        for ticket in tickets:
            self._cache.forget_bind(ticket.bind.task_uid)
            self._outcomes.outcome("bind", "dropped")
            dropped += 1
        if dropped:
            logger.info("%d queued binds dropped: %s", dropped, why)

    def unsent_waits(self) -> None:
        """The binds still waiting for their volumes are not sent: their assumptions go and
        they count as binds not sent (the volume writes made stay: the next leader finds the
        claims annotated, or bound, and places the pods again)."""
        dropped = self._waits.drop_all()
        for waiting in dropped:
            self._cache.forget_bind(waiting.bind.task_uid)
        if dropped:
            self._workers.count_not_sent("binds", len(dropped))

    # --- binds -------------------------------------------------------------------------------
    def submit(self, tickets: list[QueuedBind], created: Mapping[str, dt.datetime]) -> None:
        for ticket in tickets:
            born = created.get(ticket.bind.task_uid)
            queued = self._workers.spawn(f"bind {ticket.bind.pod}", self._bind, ticket, born)
            if not queued and self._terms.take(ticket):
                self._cache.forget_bind(ticket.bind.task_uid)

    def _bind(self, ticket: QueuedBind, created: dt.datetime | None = None) -> None:
        bind = ticket.bind
        ref = st.pod_ref(bind.pod, bind.task_uid)
        what = f"bind {bind.pod} to {bind.node}"
        if not self._terms.take(ticket):
            return
        plan = self._bind_volumes(bind, ref, what)
        if plan is None:
            return
        if plan.waits:
            self._wait_for_volumes(bind, plan, created, what)
            return
        self.send_binding(bind, created)

    def send_binding(self, bind: Bind, created: dt.datetime | None = None) -> None:
        """POST the pod's Binding (its volumes bound, or none to bind)."""
        ref = st.pod_ref(bind.pod, bind.task_uid)
        what = f"bind {bind.pod} to {bind.node}"
        lost: list[TransientClusterError] = []

        def send() -> None:
            try:
                self._writer.bind(ref.namespace, ref.name, ref.uid, bind.node)
            except TransientClusterError as err:
                if err.maybe_applied:
                    lost.append(err)  # it may have been bound: only the watch can tell
                raise

        try:
            self._timed(what, send, lambda: self._cache.bind_problem(ref.uid, bind.node))
        except NotSentError as err:
            self._cache.forget_bind(bind.task_uid)
            self._outcomes.outcome("bind", "dropped")
            logger.info("%s not sent: %s", what, err)
            return
        except ConflictError as err:
            if lost:  # most likely our own earlier attempt, whose answer was lost
                self._unconfirmed(bind, what, err)
                return
            self._cache.forget_bind(bind.task_uid)
            self._outcomes.outcome("bind", "conflict")
            logger.info("%s dropped: %s", what, err)
            return
        except NotFoundError as err:
            self._cache.forget_bind(bind.task_uid)
            self._outcomes.outcome("bind", "conflict")
            logger.info("%s dropped: %s", what, err)
            return
        except Exception as err:
            if lost:
                self._unconfirmed(bind, what, err)
                return
            self._cache.forget_bind(bind.task_uid)
            self._outcomes.outcome("bind", "error")
            log_failure(f"{what} failed: %s", err)
            if not self._workers.stop.is_set():  # a bind cut short by shutdown was not rejected
                self._events.send(ref, "Warning", "FailedScheduling", f"Binding rejected: {err}")
            return
        self._cache.bind_sent(bind.task_uid)
        self._outcomes.outcome("bind", "success")
        self._outcomes.since("task", created)
        logger.info("bound %s to %s", bind.pod, bind.node)
        message = f"Successfully assigned {bind.pod} to {bind.node}"
        # the Event goes to its own small pool: the next bind does not wait for it
        self._workers.queue(
            f"event Scheduled on {bind.pod}",
            lambda: self._events.scheduled(ref, message),
            self._workers.event_pool,
        )

    def _bind_volumes(self, bind: Bind, ref: ObjectRef, what: str) -> Plan | None:
        """The writes that bind the pod's volumes to the bind's node, sent before its Binding
        (kube-scheduler's VolumeBinding PreBind, `effects.volumes`): the plan, whose `waits`
        the Binding then waits for, once they are sent. Else (None) its assumption is forgotten
        and the pod is placed again next cycle: a claim not ready for this node (outcome
        `dropped`), a write that failed (`conflict`, `error` with a Warning `FailedScheduling`,
        as a failed Binding). With volume binding off (the policy's: Volcano's predicates
        without `predicate.VolumeBindingEnable`), nothing is written or waited for."""
        if not self._volume_binding():
            return Plan()
        pod = self._cache.pod_volumes(bind.task_uid, bind.node)
        if pod is None:
            return Plan()
        plan = volume_writes(pod)
        if isinstance(plan, Refusal):
            self._cache.forget_bind(bind.task_uid)
            self._outcomes.outcome("bind", "dropped")
            logger.info("%s not sent: %s", what, plan.reason)
            return None
        for write in plan.writes:
            try:
                self._workers.call(
                    f"{what}: {write}",
                    functools.partial(self._send_volume_write, write),
                    check=lambda: self._cache.bind_problem(ref.uid, bind.node),
                )
            except Exception as err:
                self._cache.forget_bind(bind.task_uid)
                self._volume_write_failed(ref, f"{what} not sent: {write}", err)
                return None
            logger.info("%s: %s", what, write)
        return plan

    # --- binds waiting for their volumes (`effects.volume_wait`) ------------------------------
    def volumes_changed(self) -> None:
        """The cache saw a claim or a volume change (its `on_volumes_changed` listener): the
        binds waiting for their volumes are checked (never raises)."""
        if len(self._waits):
            self._queue_wait_check()

    def _wait_for_volumes(
        self, bind: Bind, plan: Plan, created: dt.datetime | None, what: str
    ) -> None:
        """The volume writes of `bind` are sent: it waits, off the workers and still assumed
        on its node, until the cache shows its claims bound (`_check_volume_waits`)."""
        timeout = self._bind_timeout()
        term = self._terms.thread_term()
        self._waits.add(
            WaitingBind(
                bind=bind,
                waits=plan.waits,
                deadline=self._clock.monotonic() + timeout,
                timeout=timeout,
                term=self._terms.current if term is None else term,
                created=created,
            )
        )
        claims = ", ".join(w.key for w in plan.waits)
        logger.info("%s: waiting for its volumes to be bound (%s)", what, claims)
        self._queue_wait_check()

    def _queue_wait_check(self) -> None:
        """One dispatcher turn checking the waiting binds (none queued twice)."""
        if self._waits.want_check() and not self._workers.queue(
            "dispatch volume waits", self._check_volume_waits, self._workers.dispatcher
        ):
            self._waits.check_begins()

    def _check_volume_waits(self) -> None:
        """The dispatcher's turn: each waiting bind checked against the cache (kube's
        `checkBindings`): its Binding queued once its claims are bound, failed when they cannot
        be, or at its deadline; dropped when the decision no longer holds."""
        self._waits.check_begins()
        now = self._clock.monotonic()
        for waiting in self._waits.all():
            try:
                self._check_wait(waiting, now)
            except Exception:
                logger.exception("checking the volumes of %s failed", waiting.bind.pod)
        # the next poll (the timeouts; a pod or node gone), while some bind waits
        self._waits.arm(self._volume_poll, self._queue_wait_check)

    def _check_wait(self, waiting: WaitingBind, now: float) -> None:
        bind = waiting.bind
        what = f"bind {bind.pod} to {bind.node}"
        problem = self._cache.bind_problem(bind.task_uid, bind.node)
        if waiting.term != self._terms.current:
            problem = "this replica stopped leading"
        if problem is not None:
            if self._waits.take(waiting):
                self._cache.forget_bind(bind.task_uid)
                self._outcomes.outcome("bind", "dropped")
                logger.info("%s not sent: %s", what, problem)
            return
        claims = [w.key for w in waiting.waits]
        volumes = [w.volume for w in waiting.waits if isinstance(w, Claimed)]
        held = self._cache.held_binding(claims, volumes, bind.node)
        verdict = check(waiting.waits, held, bind.node) if held is not None else None
        if isinstance(verdict, Bound):
            if self._waits.take(waiting):
                logger.info("%s: its volumes are bound", what)
                queued = self._workers.spawn(what, self.send_binding, bind, waiting.created)
                if not queued:
                    self._cache.forget_bind(bind.task_uid)
        elif isinstance(verdict, Failed):
            self._volumes_failed(waiting, verdict.reason)
        elif now >= waiting.deadline:
            self._volumes_failed(waiting, DEADLINE_EXCEEDED)

    def _volumes_failed(self, waiting: WaitingBind, reason: str) -> None:
        """The pod's volumes will not be bound (or not in time): its Binding is not sent, its
        assumption goes (the next cycle places it again), and it is told as kube-scheduler
        tells a failed PreBind: PodScheduled=False (SchedulerError) and a Warning
        `FailedScheduling`, in kube's words."""
        if not self._waits.take(waiting):
            return
        bind = waiting.bind
        self._cache.forget_bind(bind.task_uid)
        self._outcomes.outcome("bind", "error")
        message = f'running PreBind plugin "VolumeBinding": binding volumes: {reason}'
        logger.warning(
            "bind %s to %s not sent: its volumes were not bound (timeout %.0fs): %s",
            bind.pod,
            bind.node,
            waiting.timeout,
            message,
        )
        raw = self._cache.object_raw("Pod", bind.pod)
        now = self._clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        condition = (
            None
            if raw is None
            else st.pod_scheduled_condition(message, raw, now, reason=st.SCHEDULER_ERROR)
        )
        if raw is not None and condition is not None:
            self._workers.spawn_status(
                f"condition of {bind.pod}", self._write_condition, bind.pod, raw, condition
            )

    def _drop_waiting(self, dropped: list[WaitingBind], why: str) -> None:
        for waiting in dropped:
            self._cache.forget_bind(waiting.bind.task_uid)
            self._outcomes.outcome("bind", "dropped")
        if dropped:
            logger.info("%d binds waiting for their volumes dropped: %s", len(dropped), why)

    def _send_volume_write(self, write: VolumeWrite) -> None:
        if isinstance(write, SelectNode):
            self._writer.set_claim_selected_node(
                write.namespace, write.name, write.node, write.resource_version
            )
        else:
            self._writer.set_volume_claim_ref(
                write.volume, write.namespace, write.name, write.uid, write.resource_version
            )

    def _volume_write_failed(self, ref: ObjectRef, what: str, err: Exception) -> None:
        """A write binding a pod's volumes did not apply: the bind's outcome, logged."""
        if isinstance(err, NotSentError):
            self._outcomes.outcome("bind", "dropped")
            logger.info("%s: %s", what, err)
        elif isinstance(err, ConflictError | NotFoundError):  # the claim or volume changed
            self._outcomes.outcome("bind", "conflict")
            logger.info("%s: %s", what, err)
        else:
            self._outcomes.outcome("bind", "error")
            log_failure(f"{what}: %s", err)
            if not self._workers.stop.is_set():
                message = f'running PreBind plugin "VolumeBinding": {err}'
                self._events.send(ref, "Warning", "FailedScheduling", message)

    def _timed(self, what: str, send: Callable[[], None], check: Check) -> None:
        """`_call` for a bind: the time from its first attempt to its answer is told to
        `on_duration("bind", ...)`; a bind never attempted is not timed."""
        started: list[float] = []

        def attempt() -> None:
            if not started:
                started.append(self._clock.monotonic())
            send()

        try:
            self._workers.call(what, attempt, check=check)
        finally:
            if started:
                self._outcomes.duration("bind", self._clock.monotonic() - started[0])

    def _unconfirmed(self, bind: Bind, what: str, err: Exception) -> None:
        """An attempt of `bind` may have bound the pod but its answer was lost: the pod stays
        assumed bound until the watch shows it placed, or the assume TTL (from now) expires;
        only then is it decided again."""
        self._cache.bind_sent(bind.task_uid)
        self._outcomes.outcome("bind", "unconfirmed")
        logger.info(
            "%s: an answer was lost (%s); the watch decides whether it bound the pod", what, err
        )
