"""A bind's volumes: the writes that bind them to the node before its Binding, and the wait for
the PV controller to bind them (kube-scheduler's VolumeBinding PreBind).

Owns: sending a bind's volume writes (`effects.volumes` decides them; none when the policy
binds no volumes, `volume_binding`), each checked and retried
as the bind (a claim not ready for the node drops the bind, outcome `dropped`; a write that
fails fails it: `conflict`, or `error` with a Warning `FailedScheduling`); the binds waiting
until the cache shows their claims bound (`effects.volume_wait`: a waiting set checked on the
dispatcher when a claim or volume changes, `changed`, and every `volume_poll` seconds), each
handed back to the Binding's send once bound, or failed as kube-scheduler tells a failed PreBind
(PodScheduled=False `SchedulerError` and a Warning `FailedScheduling`) when it cannot be or at
its deadline; and the drops of waiting binds (a node deleted, a step-down, a shutdown).
Must not: send a Binding (the `binds` part does, through `send_binding`), assume binds in the
cache, retry but through the workers' `call`, or raise out of a worker or the dispatcher.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Callable, Mapping

from vscheduler.effects import status as st
from vscheduler.effects.context import EffectsContext
from vscheduler.effects.outcomes import log_failure
from vscheduler.effects.ports import ObjectRef
from vscheduler.effects.terms import Terms
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
from vscheduler.errors import ConflictError, NotFoundError, NotSentError
from vscheduler.model.commands import Bind

# the executor's one logger, whichever of its modules writes the line
logger = logging.getLogger("vscheduler.effects.executor")


class VolumeBinder:
    """Binds a pod's volumes before its Binding, on the bind workers, and holds the binds that
    wait for them, checked on the dispatcher."""

    def __init__(
        self,
        context: EffectsContext,
        *,
        terms: Terms,
        send_binding: Callable[[Bind, dt.datetime | None], None],
        write_condition: Callable[[str, st.Raw, Mapping[str, str]], None],
        volume_binding: Callable[[], bool],
        volume_bind_timeout: Callable[[], float],
        volume_poll: float,
    ) -> None:
        self._context, self._terms = context, terms
        self._volume_binding = volume_binding
        """Whether a bind binds its pod's volumes first (read as the bind begins: the policy's,
        `Pipeline.volume_binding`)."""
        self._send_binding = send_binding
        """A bind's Binding sent, its volumes bound (`Binder.send_binding`)."""
        self._write_condition = write_condition
        """A pod's PodScheduled=False condition written (`PodStatusWriter.write_condition`)."""
        # seconds a bind waits for its volumes (read as it begins to wait: the policy's), and
        # between two checks of the waiting binds
        self._bind_timeout, self._volume_poll = volume_bind_timeout, volume_poll
        self._waits = VolumeWaits()

    # --- the writes before the Binding --------------------------------------------------------
    def write(self, bind: Bind, ref: ObjectRef, what: str) -> Plan | None:
        """The writes that bind the pod's volumes to the bind's node, sent before its Binding
        (kube-scheduler's VolumeBinding PreBind, `effects.volumes`): the plan, whose `waits`
        the Binding then waits for, once they are sent. Else (None) its assumption is forgotten
        and the pod is placed again next cycle: a claim not ready for this node (outcome
        `dropped`), a write that failed (`conflict`, `error` with a Warning `FailedScheduling`,
        as a failed Binding). With volume binding off (the policy's: Volcano's predicates
        without `predicate.VolumeBindingEnable`), nothing is written or waited for."""
        if not self._volume_binding():
            return Plan()
        pod = self._context.cache.pod_volumes(bind.task_uid, bind.node)
        if pod is None:
            return Plan()
        plan = volume_writes(pod)
        if isinstance(plan, Refusal):
            self._context.cache.forget_bind(bind.task_uid)
            self._context.outcomes.outcome("bind", "dropped")
            logger.info("%s not sent: %s", what, plan.reason)
            return None
        for write in plan.writes:
            try:
                self._context.workers.call(
                    f"{what}: {write}",
                    functools.partial(self._send_volume_write, write),
                    check=lambda: self._context.cache.bind_problem(ref.uid, bind.node),
                )
            except Exception as err:
                self._context.cache.forget_bind(bind.task_uid)
                self._volume_write_failed(ref, f"{what} not sent: {write}", err)
                return None
            logger.info("%s: %s", what, write)
        return plan

    def _send_volume_write(self, write: VolumeWrite) -> None:
        if isinstance(write, SelectNode):
            self._context.writer.set_claim_selected_node(
                write.namespace, write.name, write.node, write.resource_version
            )
        else:
            self._context.writer.set_volume_claim_ref(
                write.volume, write.namespace, write.name, write.uid, write.resource_version
            )

    def _volume_write_failed(self, ref: ObjectRef, what: str, err: Exception) -> None:
        """A write binding a pod's volumes did not apply: the bind's outcome, logged."""
        if isinstance(err, NotSentError):
            self._context.outcomes.outcome("bind", "dropped")
            logger.info("%s: %s", what, err)
        elif isinstance(err, ConflictError | NotFoundError):  # the claim or volume changed
            self._context.outcomes.outcome("bind", "conflict")
            logger.info("%s: %s", what, err)
        else:
            self._context.outcomes.outcome("bind", "error")
            log_failure(f"{what}: %s", err)
            if not self._context.workers.stop.is_set():
                message = f'running PreBind plugin "VolumeBinding": {err}'
                self._context.events.send(ref, "Warning", "FailedScheduling", message)

    # --- binds waiting for their volumes (`effects.volume_wait`) ------------------------------
    def wait(self, bind: Bind, plan: Plan, created: dt.datetime | None, what: str) -> None:
        """The volume writes of `bind` are sent: it waits, off the workers and still assumed
        on its node, until the cache shows its claims bound (`_check_waits`)."""
        timeout = self._bind_timeout()
        term = self._terms.thread_term()
        self._waits.add(
            WaitingBind(
                bind=bind,
                waits=plan.waits,
                deadline=self._context.clock.monotonic() + timeout,
                timeout=timeout,
                term=self._terms.current if term is None else term,
                created=created,
            )
        )
        claims = ", ".join(w.key for w in plan.waits)
        logger.info("%s: waiting for its volumes to be bound (%s)", what, claims)
        self._queue_check()

    def changed(self) -> None:
        """The cache saw a claim or a volume change: the waiting binds are checked (never
        raises)."""
        if len(self._waits):
            self._queue_check()

    def _queue_check(self) -> None:
        """One dispatcher turn checking the waiting binds (none queued twice)."""
        if self._waits.want_check() and not self._context.workers.queue(
            "dispatch volume waits", self._check_waits, self._context.workers.dispatcher
        ):
            self._waits.check_begins()

    def _check_waits(self) -> None:
        """The dispatcher's turn: each waiting bind checked against the cache (kube's
        `checkBindings`): its Binding queued once its claims are bound, failed when they cannot
        be, or at its deadline; dropped when the decision no longer holds."""
        self._waits.check_begins()
        now = self._context.clock.monotonic()
        for waiting in self._waits.all():
            try:
                self._check_wait(waiting, now)
            except Exception:
                logger.exception("checking the volumes of %s failed", waiting.bind.pod)
        # the next poll (the timeouts; a pod or node gone), while some bind waits
        self._waits.arm(self._volume_poll, self._queue_check)

    def _check_wait(self, waiting: WaitingBind, now: float) -> None:
        bind = waiting.bind
        what = f"bind {bind.pod} to {bind.node}"
        problem = self._context.cache.bind_problem(bind.task_uid, bind.node)
        if waiting.term != self._terms.current:
            problem = "this replica stopped leading"
        if problem is not None:
            if self._waits.take(waiting):
                self._context.cache.forget_bind(bind.task_uid)
                self._context.outcomes.outcome("bind", "dropped")
                logger.info("%s not sent: %s", what, problem)
            return
        claims = [w.key for w in waiting.waits]
        volumes = [w.volume for w in waiting.waits if isinstance(w, Claimed)]
        held = self._context.cache.held_binding(claims, volumes, bind.node)
        verdict = check(waiting.waits, held, bind.node) if held is not None else None
        if isinstance(verdict, Bound):
            if self._waits.take(waiting):
                logger.info("%s: its volumes are bound", what)
                queued = self._context.workers.spawn(
                    what, self._send_binding, bind, waiting.created
                )
                if not queued:
                    self._context.cache.forget_bind(bind.task_uid)
        elif isinstance(verdict, Failed):
            self._failed(waiting, verdict.reason)
        elif now >= waiting.deadline:
            self._failed(waiting, DEADLINE_EXCEEDED)

    def _failed(self, waiting: WaitingBind, reason: str) -> None:
        """The pod's volumes will not be bound (or not in time): its Binding is not sent, its
        assumption goes (the next cycle places it again), and it is told as kube-scheduler
        tells a failed PreBind: PodScheduled=False (SchedulerError) and a Warning
        `FailedScheduling`, in kube's words."""
        if not self._waits.take(waiting):
            return
        bind = waiting.bind
        self._context.cache.forget_bind(bind.task_uid)
        self._context.outcomes.outcome("bind", "error")
        message = f'running PreBind plugin "VolumeBinding": binding volumes: {reason}'
        logger.warning(
            "bind %s to %s not sent: its volumes were not bound (timeout %.0fs): %s",
            bind.pod,
            bind.node,
            waiting.timeout,
            message,
        )
        raw = self._context.cache.object_raw("Pod", bind.pod)
        now = self._context.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        condition = (
            None
            if raw is None
            else st.pod_scheduled_condition(message, raw, now, reason=st.SCHEDULER_ERROR)
        )
        if raw is not None and condition is not None:
            self._context.workers.spawn_status(
                f"condition of {bind.pod}", self._write_condition, bind.pod, raw, condition
            )

    # --- drops --------------------------------------------------------------------------------
    def drop_node(self, node: str) -> None:
        """The binds to `node` waiting for their volumes are dropped."""
        self._drop(self._waits.drop_node(node), f"node {node} was deleted")

    def drop_all(self, why: str) -> None:
        """Every bind waiting for its volumes is dropped (outcome `dropped`)."""
        self._drop(self._waits.drop_all(), why)

    def close(self) -> None:
        """The waiting binds are checked no more (see `unsent`)."""
        self._waits.close()

    def unsent(self) -> None:
        """The binds still waiting for their volumes are not sent: their assumptions go and
        they count as binds not sent (the volume writes made stay: the next leader finds the
        claims annotated, or bound, and places the pods again)."""
        dropped = self._waits.drop_all()
        for waiting in dropped:
            self._context.cache.forget_bind(waiting.bind.task_uid)
        if dropped:
            self._context.workers.count_not_sent("binds", len(dropped))

    def _drop(self, dropped: list[WaitingBind], why: str) -> None:
        for waiting in dropped:
            self._context.cache.forget_bind(waiting.bind.task_uid)
            self._context.outcomes.outcome("bind", "dropped")
        if dropped:
            logger.info("%d binds waiting for their volumes dropped: %s", len(dropped), why)
