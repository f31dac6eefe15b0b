"""The effects executor: a cycle's `CycleResult` carried out on the cluster, off the cycle thread.

Owns: turning decisions into `ClusterWriter` calls on bounded worker pools (binds and evictions
on one, each bind queued as its statement commits when the loop streams it (`stream`), else with
its cycle's `submit`; status writes and reservation releases on a smaller one of their own, so
they never delay a later cycle's binds; Events on a third, whose `Scheduled` Events go one at a
time while binds wait for a worker: `EVENTS_IN_BACKLOG`), in this order per submit: binds
(assumed in the cache before they are queued, so the next cycle never binds a pod twice; a
conflict or a missing pod forgets the assumption, other failures also get a Warning
`FailedScheduling`; success a Normal `Scheduled`), evictions (assumed releasing; a disruption
budget's refusal puts the pod in backoff as a victim, honouring the API server's Retry-After
(`SchedulerCache.refuse_evict`), with a Warning `EvictionBlocked`, never retried within the
cycle; success a Normal `Evicted`; the evictions of one plan, `Evict.plan`, all or none: each is
dry-run first, then the plan is counted against the PodDisruptionBudgets the cache holds (two
victims of a budget allowing one pass their dry runs alone), and one refusal sends none of
them), pods' PodScheduled=False conditions (those left pending and those pipelined) and
PodGroup statuses (written only when they differ from the watched objects and are not already in
flight, with Events when they change; one queued write per object, the newest, so a backlog never
sends what a later cycle replaced: `sent.Newest`; a PodGroup's change of counts alone waits
`COUNT_HOLD` after its last write while some of its placed pods are still to start; a gang still
arriving has nothing written, but a move of its phase when it has no pod yet or minResources),
and the reservations released (their keys removed from their ConfigMap, one patch per
ConfigMap, through the optional `config_maps` writer; not repeated while the watch still shows a
key, unless `RESEND_AFTER` passed: after a failure, too),
pods' `status.nominatedNodeName` (`result.nominated` set where the watched pod shows another
node, and cleared on every pod of the snapshot carrying one that is no longer nominated: bound,
or its nomination dropped; through the optional `nominations` writer, not repeated while in
flight), and a Warning Event on each Queue whose figures carry a warning
(`GuaranteeUnsatisfiable`, or the figures' own `warning_reason`: `InvalidQueueHierarchy`), once
per change, and each Queue's `status.allocated` (`CycleResult.queue_allocated`, Volcano's
`updateQueueStatus`) where it differs from the watched Queue (`queue_status`), the newest per
Queue, not while in flight, at most once per `QUEUE_HOLD` per Queue (a change within it is
written when the hold ends, by a dispatcher turn of its own if no cycle comes), checked against
the Queue's uid before it is sent like the writes below.

Before a pod's Binding, the writes that bind its volumes to the node (`effects.volumes`:
a WaitForFirstConsumer claim annotated with the node to provision for, or a pre-made volume's
claimRef set), each checked and retried as the bind; a claim not ready for the node drops the
bind (outcome `dropped`), a write that fails fails it (`conflict`, or `error` with a Warning
`FailedScheduling`), and the Binding is not sent. Then, as kube's PreBind waits for the PV
controller, the Binding waits until the cache shows the pod's claims bound (`effects.volume_wait`:
a waiting set, not a pool: the bind leaves its worker, stays assumed on its node, and is checked
on the dispatcher when a claim or volume changes, `volumes_changed`, and every `volume_poll`
seconds; once bound its Binding is queued on the pool like any bind). A wait that fails (the
selected-node annotation removed, a claim or volume gone, a volume bound elsewhere, past the
policy's `volume_bind_timeout`) sends no Binding, forgets the assumption (outcome `error`) and
tells the pod as kube-scheduler does: PodScheduled=False `SchedulerError` and a Warning
`FailedScheduling`, `running PreBind plugin "VolumeBinding": binding volumes: ...`. A node
deletion, a step-down, a pod gone drop a waiting bind (`dropped`).

Checked just before sending, not when queued: every bind, eviction and status write is checked
against the cache before each attempt and, through `check_send` (which the composition root
wires into the API client's fence), again right before its bytes leave. A bind needs its node
to exist and not be cordoned (unless the pod tolerates it) and its pod to hold the decided uid,
pending and unplaced; an eviction its pod's uid; a condition its pod unplaced; a PodGroup status
its PodGroup's uid. A decision that no longer holds is not sent (outcome `dropped`, assumption
forgotten): the pod goes back to the next cycle. `node_deleted` (the cache's node-deletion
listener) drops the binds queued to that node at once; `step_down` drops every queued bind at
once and every other write queued before it when a worker reaches it (even if this replica
leads again by then). A bind whose answer was lost (an attempt that may have applied, then a
conflict or no answer) keeps its assumption, its TTL starting then (outcome `unconfirmed`): the
watch shows it bound, or the TTL expires and it is decided again. Failures of an unreachable API
server are logged at info level (the client reports the outage once). `shutdown(grace)` sends
queued binds and evictions first (status writes not started are skipped, Events wait), then as
many Events as the grace leaves time for, and logs what was not sent (the binds still waiting
for their volumes among them: they are not sent, and the next leader decides those pods).
Must not: raise out of a worker or out of `submit`, retry anything but through `retry`, import
`kube` (the writer is a port), or report the cache's `problems()` (the runtime's reporter does).

`submit` is called from one thread (the loop); `on_outcome(action, outcome)` is told of every write
(`bind`: success | conflict | error | dropped | unconfirmed; `evict`: success | blocked | conflict |
error | dropped; `pod_condition`, `pod_nomination`: success | error | dropped; `podgroup_status`:
success | conflict (the PodGroup is gone) | error | dropped; `reservation_release`: success | error
| dropped; `queue_status`: success | error | dropped (not sent, or the Queue is gone)) for
metrics, and `on_eviction(evict, outcome)` of every eviction again with its
`Evict` (the asking action and the strategy that chose the victim label the eviction metrics).
`on_duration(kind, seconds)` times, for metrics: `bind` (one bind sent, retries included,
whatever its outcome; not for a bind dropped before it was sent), `task` (a pod bound, `seconds`
after its creation) and `job` (a PodGroup's status written Running, `seconds` after its
creation); creation times come from the snapshot the decisions were made on.
"""

from __future__ import annotations

import collections
import datetime as dt
import functools
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Final

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import Clock
from vscheduler.effects import status as st
from vscheduler.effects.events import (
    EVENT_MESSAGE_LIMIT,
    EVENT_TURN_WAIT,
    EVENTS_IN_BACKLOG,
    EventSender,
)
from vscheduler.effects.evictions import Evictor
from vscheduler.effects.outcomes import Outcomes, log_failure
from vscheduler.effects.pod_writes import PodStatusWriter
from vscheduler.effects.podgroup_writes import COUNT_HOLD, PodGroupStatusWriter
from vscheduler.effects.ports import ClusterWriter, ConfigMapWriter, NominationWriter, ObjectRef
from vscheduler.effects.queue_writes import QUEUE_HOLD, QueueWriter
from vscheduler.effects.releases import ReservationReleaser
from vscheduler.effects.retry import RetryPolicy
from vscheduler.effects.sent import Newest
from vscheduler.effects.terms import Check, QueuedBind, Terms
from vscheduler.effects.volume_wait import (
    DEADLINE_EXCEEDED,
    DEFAULT_BIND_TIMEOUT,
    VOLUME_POLL,
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
from vscheduler.errors import (
    ConflictError,
    NotFoundError,
    NotSentError,
    TransientClusterError,
)
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import (
    Bind,
    CycleResult,
    Evict,
    PodGroupStatus,
)

logger = logging.getLogger(__name__)

__all__ = [
    "COUNT_HOLD",
    "EVENTS_IN_BACKLOG",
    "EVENT_MESSAGE_LIMIT",
    "EVENT_TURN_WAIT",
    "QUEUE_HOLD",
    "RESEND_AFTER",
    "EffectsExecutor",
]
"""The executor and the constants its parts take (importable from here, where they were)."""

RESEND_AFTER: Final = 30.0
"""Seconds after which a condition or status write still not seen by the watch is sent again."""


def _no_outcome(_action: str, _outcome: str) -> None:
    """The default `on_outcome`: nothing."""


def _no_eviction(_evict: Evict, _outcome: str) -> None:
    """The default `on_eviction`: nothing."""


def _no_duration(_kind: str, _seconds: float) -> None:
    """The default `on_duration`: nothing."""


class EffectsExecutor:
    """Carries cycle results out through a `ClusterWriter` on a pool of `workers` threads."""

    def __init__(
        self,
        writer: ClusterWriter,
        cache: SchedulerCache,
        *,
        clock: Clock,
        workers: int = 16,
        on_outcome: Callable[[str, str], None] = _no_outcome,
        on_eviction: Callable[[Evict, str], None] = _no_eviction,
        on_duration: Callable[[str, float], None] = _no_duration,
        retry: RetryPolicy | None = None,
        may_write: Callable[[], bool] = lambda: True,
        config_maps: ConfigMapWriter | None = None,
        nominations: NominationWriter | None = None,
        queue_hold: float = QUEUE_HOLD,
        volume_bind_timeout: Callable[[], float] = lambda: DEFAULT_BIND_TIMEOUT,
        volume_poll: float = VOLUME_POLL,
    ) -> None:
        self._writer, self._cache, self._clock = writer, cache, clock
        self._outcomes = Outcomes(
            clock=clock, on_outcome=on_outcome, on_eviction=on_eviction, on_duration=on_duration
        )
        self._terms = Terms()
        retry = retry or RetryPolicy()
        self._workers = Workers(
            workers=workers, clock=clock, terms=self._terms, retry=retry, may_write=may_write
        )
        self._events = EventSender(  # the turn wait read here, as built: a test may shorten it
            writer,
            clock=clock,
            retry=retry.events(),
            workers=self._workers,
            turn_wait=EVENT_TURN_WAIT,
        )
        self._evictor = Evictor(
            writer,
            cache,
            clock=clock,
            resend_after=RESEND_AFTER,
            workers=self._workers,
            events=self._events,
            outcomes=self._outcomes,
        )
        self._pods = PodStatusWriter(
            writer,
            cache,
            clock=clock,
            resend_after=RESEND_AFTER,
            workers=self._workers,
            events=self._events,
            outcomes=self._outcomes,
            nominations=nominations,
        )
        self._podgroups = PodGroupStatusWriter(
            writer,
            cache,
            clock=clock,
            resend_after=RESEND_AFTER,
            workers=self._workers,
            events=self._events,
            outcomes=self._outcomes,
        )
        self._releases = ReservationReleaser(
            config_maps,
            clock=clock,
            resend_after=RESEND_AFTER,
            workers=self._workers,
            outcomes=self._outcomes,
        )
        self._queues = QueueWriter(
            writer,
            cache,
            clock=clock,
            resend_after=RESEND_AFTER,
            hold=queue_hold,
            workers=self._workers,
            events=self._events,
            outcomes=self._outcomes,
        )
        # seconds a bind waits for its volumes (read as it begins to wait: the policy's), and
        # between two checks of the waiting binds
        self._bind_timeout, self._volume_poll = volume_bind_timeout, volume_poll
        self._waits = VolumeWaits()
        self._streamed: tuple[ClusterSnapshot | None, set[str]] = (None, set())
        """The snapshot of the cycle `stream` last queued binds for, and their pods (the loop
        thread's only): a cycle that failed or lost the lease never submits, and the binds it
        streamed must not be left out of a later cycle's submit."""

    # --- what the tests watch of the workers' progress ---------------------------------------
    @property
    def _status_pool(self) -> ThreadPoolExecutor:
        return self._workers.status_pool

    @property
    def _pending(self) -> collections.Counter[str]:
        return self._workers.pending

    @property
    def _draining(self) -> bool:
        return self._workers.draining

    @property
    def _stop(self) -> threading.Event:
        return self._workers.stop

    @property
    def _groups_wanted(self) -> Newest[tuple[PodGroupStatus, st.Raw, dt.datetime | None, bool]]:
        return self._podgroups.wanted

    # --- the public face ----------------------------------------------------------------------
    def stream(self, bind: Bind, snapshot: ClusterSnapshot) -> None:
        """One bind of a cycle still running (its statement committed): assumed in the cache
        and queued on the pool at once (never raises); that cycle's `submit` leaves it out.
        Called from the loop's thread, like `submit`."""
        task = snapshot.tasks.get(bind.task_uid)
        try:
            self._cache.assume_binds(((bind.task_uid, bind.node),), held=True)
        except Exception:
            logger.exception("assuming the bind of %s failed", bind.pod)
        taken, streamed = self._streamed
        if taken is not snapshot:
            self._streamed = (snapshot, streamed := set())
        streamed.add(bind.task_uid)
        tickets = self._terms.queue((bind,))  # from now on a node deletion drops it
        self._submit_binds(tickets, {} if task is None else {bind.task_uid: task.created})

    def submit(self, result: CycleResult, snapshot: ClusterSnapshot) -> None:
        """Assume the binds (but those streamed) and evictions in the cache, queue the rest,
        and return (never raises). Submits are carried out in order by one dispatcher thread,
        which diffs and queues the writes on the pool."""
        created = _created(result, snapshot)  # the raw objects are diffed from the cache
        taken, streamed = self._streamed
        self._streamed = (None, set())
        if taken is not snapshot:
            streamed = set()
        binds = tuple(b for b in result.binds if b.task_uid not in streamed)
        try:
            self._cache.assume_binds(((b.task_uid, b.node) for b in binds), held=True)
            self._cache.assume_evicts(e.task_uid for e in result.evictions)
        except Exception:
            logger.exception("assuming the cycle's decisions failed")
        tickets = self._terms.queue(binds)  # from now on a node deletion drops them
        dispatch = functools.partial(self._dispatch, result, snapshot, tickets, created)
        if not self._workers.queue("dispatch", dispatch, self._workers.dispatcher):
            for ticket in tickets:
                self._terms.take(ticket)
            self._forget_all(binds, result.evictions)

    def node_deleted(self, node: str) -> None:
        """The watch saw `node` deleted: the binds to it still queued are dropped now (their
        assumptions forgotten, so the next cycle places those pods again); a bind already being
        sent is stopped by its check right before it leaves."""
        self._drop_queued(self._terms.drop_node(node), f"node {node} was deleted")
        self._drop_waiting(self._waits.drop_node(node), f"node {node} was deleted")

    def step_down(self) -> None:
        """This replica stopped leading: every queued bind is dropped now, and any other work
        queued before this moment is dropped when a worker reaches it, even if this replica
        leads again by then (the decisions of an earlier term are not sent)."""
        self._drop_queued(self._terms.step_down(), "this replica stopped leading")
        self._drop_waiting(self._waits.drop_all(), "this replica stopped leading")

    def check_send(self) -> None:
        """Raise `NotSentError` when the write the calling worker thread is about to send must
        not leave: it was queued before a step-down (`FencedError`), or its decision no longer
        holds against the cache (`StaleDecisionError`). A no-op on other threads. Called before
        every attempt, and (wired by the composition root) by the API client right before the
        request's bytes leave, after its rate limiter."""
        self._terms.check_send()

    def _drop_queued(self, tickets: Iterable[QueuedBind], why: str) -> None:
        dropped = 0
        for ticket in tickets:
            self._cache.forget_bind(ticket.bind.task_uid)
            self._outcomes.outcome("bind", "dropped")
            dropped += 1
        if dropped:
            logger.info("%d queued binds dropped: %s", dropped, why)

    def busy(self) -> bool:
        """Whether API calls of earlier cycles are still queued or in flight."""
        return self._workers.busy()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until no work is queued or running; False if `timeout` seconds passed first."""
        return self._workers.drain(timeout)

    def close(self) -> None:
        """Stop at once: cut retries short, drop queued work (its assumptions expire with their
        TTL), wait for the calls already in progress."""
        self._queues.close()
        self._waits.close()
        self._workers.cancel()  # queued work first, so none starts once retries are cut short
        self._events.wake()
        self._workers.join()
        self._unsent_waits()

    def _unsent_waits(self) -> None:
        """The binds still waiting for their volumes are not sent: their assumptions go and
        they count as binds not sent (the volume writes made stay: the next leader finds the
        claims annotated, or bound, and places the pods again)."""
        dropped = self._waits.drop_all()
        for waiting in dropped:
            self._cache.forget_bind(waiting.bind.task_uid)
        if dropped:
            self._workers.count_not_sent("binds", len(dropped))

    def shutdown(self, grace: float) -> dict[str, int]:
        """Stop within `grace` seconds (SIGTERM): binds and evictions first (status writes not
        started yet are skipped, Events wait), then as many Events as the time left allows,
        then `close`. Logs, and returns, how many of each kind were not sent."""
        deadline = self._clock.monotonic() + grace
        self._workers.draining = True
        self._unsent_waits()  # waiting up to their bind timeout would outlast any grace
        self._events.hold()
        try:
            with self._workers.idle:
                self._workers.idle.wait_for(self._workers.decisions_done, grace)
        finally:
            self._events.release()
        self.drain(max(0.0, deadline - self._clock.monotonic()))
        self.close()
        dropped = self._workers.unsent()
        order = ("binds", "evictions", "Events", "status writes")
        dropped = dict(sorted(dropped.items(), key=lambda kv: (_rank(order, kv[0]), kv[0])))
        if dropped:
            summary = ", ".join(f"{n} {kind}" for kind, n in dropped.items())
            logger.warning("shutdown after %.0fs of grace: not sent: %s", grace, summary)
        else:
            logger.info("shutdown: every queued write was sent")
        return dropped

    def _dispatch(
        self,
        result: CycleResult,
        snapshot: ClusterSnapshot,
        tickets: list[QueuedBind],
        created: Mapping[str, dt.datetime],
    ) -> None:
        if self._terms.thread_term() != self._terms.current:  # submitted before a step-down
            for evict in result.evictions:  # its binds were dropped by the step-down
                self._cache.forget_evict(evict.task_uid)
                self._outcomes.evicted(evict, "dropped")
            logger.info("a cycle's decisions dropped: this replica stopped leading since")
            return
        steps: tuple[tuple[str, Callable[[], None]], ...] = (
            ("binds", lambda: self._submit_binds(tickets, created)),
            ("evictions", lambda: self._evictor.submit(result.evictions)),
            (
                "pod conditions",
                lambda: self._pods.update_conditions(
                    {**result.unschedulable, **result.waiting}, result.arriving
                ),
            ),
            ("nominations", lambda: self._pods.update_nominations(result, snapshot)),
            (
                "podgroup statuses",
                lambda: self._podgroups.update(
                    result.podgroups, created, result.arriving_groups, result.phased_groups
                ),
            ),
            ("reservation releases", lambda: self._releases.release(result.reservations_released)),
            ("queue warnings", lambda: self._queues.warn(result.queues)),
            ("queue statuses", lambda: self._queues.update(result.queue_allocated)),
            ("housekeeping", self._evictor.expire),
        )
        for what, step in steps:
            try:
                step()
            except Exception:
                logger.exception("queueing %s failed", what)

    def _forget_all(self, binds: Iterable[Bind], evictions: Iterable[Evict]) -> None:
        for bind in binds:
            self._cache.forget_bind(bind.task_uid)
        for evict in evictions:
            self._cache.forget_evict(evict.task_uid)

    # --- binds and evictions ------------------------------------------------------------------
    def _submit_binds(self, tickets: list[QueuedBind], created: Mapping[str, dt.datetime]) -> None:
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
        self._send_binding(bind, created)

    def _send_binding(self, bind: Bind, created: dt.datetime | None = None) -> None:
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
        as a failed Binding)."""
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
                queued = self._workers.spawn(what, self._send_binding, bind, waiting.created)
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
                f"condition of {bind.pod}", self._pods.write_condition, bind.pod, raw, condition
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


def _created(result: CycleResult, snapshot: ClusterSnapshot) -> dict[str, dt.datetime]:
    """Creation times of the pods to bind (by uid) and of the PodGroups (by key)."""
    out = {b.task_uid: t.created for b in result.binds if (t := snapshot.tasks.get(b.task_uid))}
    out.update({k: j.created for k in result.podgroups if (j := snapshot.jobs.get(k))})
    return out


def _rank(order: tuple[str, ...], kind: str) -> int:
    return order.index(kind) if kind in order else len(order)
