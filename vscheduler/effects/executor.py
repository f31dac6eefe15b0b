"""The effects executor: a cycle's `CycleResult` carried out on the cluster, off the cycle thread.

This module is the composition: it builds the parts below, assumes a cycle's decisions in the
cache before they are queued, orders each submit's steps on the dispatcher, and carries the
public face (`stream`, `submit`, `node_deleted`, `step_down`, `check_send`, `volumes_changed`,
`busy`, `drain`, `close`, `shutdown`). The parts, each saying what it owns and must not do:
`workers` (the pools, each queued call counted and guarded, the fence of every attempt),
`outcomes` (the callbacks, a failure's log line), `events` (Events, the bind-backlog turn),
`binds` (Bindings, the drops of queued binds) with `volume_binds` (the volume writes and waits
before a Binding), `evictions` (plans all or none), `pod_writes` (PodScheduled conditions,
nominations), `podgroup_writes` (PodGroup statuses), `releases` (reservations released) and
`queue_writes` (Queue warnings, Queue statuses and their hold); these last seven each take the
one `context` (`EffectsContext`: the writer, cache, clock, resend interval, workers, Events and
outcomes they share), built here. What the executor as a whole does:

Owns: turning decisions into `ClusterWriter` calls on bounded worker pools (binds and evictions
on one, each bind queued as its statement commits when the loop streams it (`stream`), else with
its cycle's `submit`; status writes and reservation releases on a smaller one of their own, so
they never delay a later cycle's binds; Events on a third, whose `Scheduled` Events go one at a
time while binds wait for a worker, `EVENTS_IN_BACKLOG`, and otherwise up to `EVENT_BATCH` at
once on one connection, gathered for up to `EVENT_GATHER`), in this order per submit: binds
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
`COUNT_HOLD` from the cycle that first found it while some of its placed pods are still to
start; a gang still arriving has nothing written, but a move of its phase when it has no pod
yet or minResources),
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

Before a pod's Binding, when the policy binds volumes (`volume_binding`: the pipeline's
`volume_binding`, read as the bind begins; off, the Binding goes at once, as Volcano's without its
VolumeBinding plugin), the writes that bind its volumes to the node (`effects.volume_binds`, as
`effects.volumes` decides them: a WaitForFirstConsumer claim annotated with the node to provision
for, or a pre-made volume's claimRef set), each checked and retried as the bind; a claim not ready
for the node drops the bind (outcome `dropped`), a write that fails fails it (`conflict`, or `error`
with a Warning `FailedScheduling`), and the Binding is not sent. Then, as kube's PreBind waits for
the PV controller, the Binding waits until the cache shows the pod's claims bound
(`effects.volume_wait`: a waiting set, not a pool: the bind leaves its worker, stays assumed on its
node, and is checked on the dispatcher when a claim or volume changes, `volumes_changed`, and every
`volume_poll` seconds; once bound its Binding is queued on the pool like any bind). A wait that
fails (the selected-node annotation removed, a claim or volume gone, a volume bound elsewhere, past
the policy's `volume_bind_timeout`) sends no Binding, forgets the assumption (outcome `error`) and
tells the pod as kube-scheduler does: PodScheduled=False `SchedulerError` and a Warning
`FailedScheduling`, `running PreBind plugin "VolumeBinding": binding volumes: ...`. A node deletion,
a step-down, a pod gone drop a waiting bind (`dropped`).

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
from vscheduler.effects.binds import Binder
from vscheduler.effects.context import EffectsContext
from vscheduler.effects.events import (
    EVENT_GATHER,
    EVENT_TURN_WAIT,
    EVENTS_IN_BACKLOG,
    EventSender,
)
from vscheduler.effects.evictions import Evictor
from vscheduler.effects.outcomes import Outcomes
from vscheduler.effects.pod_writes import PodStatusWriter
from vscheduler.effects.podgroup_writes import COUNT_HOLD, PodGroupStatusWriter
from vscheduler.effects.ports import (
    EVENT_MESSAGE_LIMIT,
    ClusterWriter,
    ConfigMapWriter,
    NominationWriter,
)
from vscheduler.effects.queue_writes import QUEUE_HOLD, QueueWriter
from vscheduler.effects.releases import ReservationReleaser
from vscheduler.effects.retry import RetryPolicy
from vscheduler.effects.terms import QueuedBind, Terms
from vscheduler.effects.volume_wait import DEFAULT_BIND_TIMEOUT, VOLUME_POLL
from vscheduler.effects.workers import Workers
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult, Evict

logger = logging.getLogger(__name__)

__all__ = [
    "COUNT_HOLD",
    "EVENTS_IN_BACKLOG",
    "EVENT_GATHER",
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
        volume_binding: Callable[[], bool] = lambda: True,
        volume_bind_timeout: Callable[[], float] = lambda: DEFAULT_BIND_TIMEOUT,
        volume_poll: float = VOLUME_POLL,
    ) -> None:
        self._cache, self._clock = cache, clock
        self._outcomes = Outcomes(
            clock=clock, on_outcome=on_outcome, on_eviction=on_eviction, on_duration=on_duration
        )
        self._terms = Terms()
        retry = retry or RetryPolicy()
        self._workers = Workers(
            workers=workers, clock=clock, terms=self._terms, retry=retry, may_write=may_write
        )
        self._events = EventSender(  # the waits read here, as built: a test may shorten them
            writer,
            clock=clock,
            retry=retry.events(),
            workers=self._workers,
            turn_wait=EVENT_TURN_WAIT,
            gather=EVENT_GATHER,
        )
        context = EffectsContext(
            writer=writer,
            cache=cache,
            clock=clock,
            resend_after=RESEND_AFTER,
            workers=self._workers,
            events=self._events,
            outcomes=self._outcomes,
        )
        self._evictor = Evictor(context)
        self._pods = PodStatusWriter(context, nominations=nominations)
        self._podgroups = PodGroupStatusWriter(context)
        self._releases = ReservationReleaser(context, config_maps=config_maps)
        self._queues = QueueWriter(context, hold=queue_hold)
        self._binder = Binder(
            context,
            terms=self._terms,
            write_condition=self._pods.write_condition,
            volume_binding=volume_binding,
            volume_bind_timeout=volume_bind_timeout,
            volume_poll=volume_poll,
        )
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
        self._binder.submit(tickets, {} if task is None else {bind.task_uid: task.created})

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
        self._binder.node_deleted(node)

    def step_down(self) -> None:
        """This replica stopped leading: every queued bind is dropped now, and any other work
        queued before this moment is dropped when a worker reaches it, even if this replica
        leads again by then (the decisions of an earlier term are not sent)."""
        self._binder.step_down()

    def check_send(self) -> None:
        """Raise `NotSentError` when the write the calling worker thread is about to send must
        not leave: it was queued before a step-down (`FencedError`), or its decision no longer
        holds against the cache (`StaleDecisionError`). A no-op on other threads. Called before
        every attempt, and (wired by the composition root) by the API client right before the
        request's bytes leave, after its rate limiter."""
        self._terms.check_send()

    def volumes_changed(self) -> None:
        """The cache saw a claim or a volume change (its `on_volumes_changed` listener): the
        binds waiting for their volumes are checked (never raises)."""
        self._binder.volumes_changed()

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
        self._binder.close()
        self._workers.cancel()  # queued work first, so none starts once retries are cut short
        self._events.wake()
        self._workers.join()
        self._binder.unsent_waits()
        binds = self._binder.unsent()
        if binds:
            self._workers.count_not_sent("binds", binds)
        left = self._events.unsent()
        if left:
            self._workers.count_not_sent("Events", left)

    def shutdown(self, grace: float) -> dict[str, int]:
        """Stop within `grace` seconds (SIGTERM): binds and evictions first (status writes not
        started yet are skipped, Events wait), then as many Events as the time left allows,
        then `close`. Logs, and returns, how many of each kind were not sent."""
        deadline = self._clock.monotonic() + grace
        self._workers.draining = True
        self._binder.unsent_waits()  # waiting up to their bind timeout would outlast any grace
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
            ("binds", lambda: self._binder.submit(tickets, created)),
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


def _created(result: CycleResult, snapshot: ClusterSnapshot) -> dict[str, dt.datetime]:
    """Creation times of the pods to bind (by uid) and of the PodGroups (by key)."""
    out = {b.task_uid: t.created for b in result.binds if (t := snapshot.tasks.get(b.task_uid))}
    out.update({k: j.created for k in result.podgroups if (j := snapshot.jobs.get(k))})
    return out


def _rank(order: tuple[str, ...], kind: str) -> int:
    return order.index(kind) if kind in order else len(order)
