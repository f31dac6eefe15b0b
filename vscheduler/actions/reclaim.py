"""reclaim: across queues, a queue below its deserved share takes back what others borrowed.

Askers are the admitted jobs (as allocate admits them) that the jobStarving point calls starving.
Queues are taken in queue order, one job per turn (a queue goes back into the order while it has
askers left, so queues interleave as their shares change); an overused queue is passed over. For
each asker, its pending tasks in task order while the job is still starving: a task its queue may
not reclaim for (the preemptive point: by default proportion's "the queue stays within what it
deserves") is skipped, as is a pod whose `preemptionPolicy` (its own, else its PriorityClass's) is
`Never`. Otherwise the task is pipelined, with nothing evicted, onto a node holding some
reclaimee where it already fits, else the `Evictor` (actions/eviction.py) finds the cheapest
sufficient victims on one node among the Running tasks (not Bound ones, as Volcano's
`reclaimForTask`) of *other queues that are reclaimable*
(`spec.reclaimable`, default true) that the reclaimable point allows, evicts them and pipelines
the task there. Reclaim never binds: a later allocate does (Volcano's `reclaimForTask`). The job's
placements and evictions are one transaction, committed only when the job is ready or pipelined:
a job that still cannot run evicts nothing (Volcano #3673).

Reclaim is gated as in Volcano: by the reclaiming queue (overused, preemptive) and the victims
the reclaimable point allows. Whether the victim's queue could *allocate* the victim back is not
asked: a queue borrowing beyond its deserved share may lose what it borrowed, and may borrow it
again while room is idle (ordinary borrowing, Volcano's behaviour).

The settling rail kept (no evict-and-return loop, Volcano #561, #4947, #4949): a plan is taken
only if, after its evictions and the asker's placement (and every other victim taken this
cycle), no victim could be reclaimed back: its job starving (jobStarving point, so an asker of
the next cycle's reclaim: a lone pod's job always is once evicted, a gang left at its
minMember is not) and its queue allowed to *reclaim* it (preemptive point). Otherwise the next
cycle's reclaim would evict the asker's pods to return the victim, and so on every cycle. With
proportion this never binds (its reclaimable rule takes victims only from a queue above its
deserved share, and it could not reclaim them back without going above it again); it matters
where a reclaimable answer and a preemptive answer disagree (capacity's per-resource rules,
hierarchical queues, other tiers deciding the victims).

Evictions carry the action `reclaim` and the reason `reclaim by <namespace/pod> of queue <q>`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from vscheduler.actions.askers import PlaceOne, askers, read_limits, run_job
from vscheduler.actions.eviction import Evictor, Limits, Transaction
from vscheduler.actions.ordering import PriorityQueue
from vscheduler.conf.arguments import ArgumentReader
from vscheduler.framework.ledger import BoolArray
from vscheduler.framework.session import Session
from vscheduler.framework.state import QueueState, TaskState

NAME: Final = "reclaim"


class Settling:
    """The settling rail: remembers the victims taken this cycle, and checks that none of them
    could be won back by its job through its queue."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._taken: dict[tuple[str, int, int], TaskState] = {}

    def remember(self, victims: Sequence[TaskState]) -> None:
        """Victims committed this cycle."""
        for victim in victims:
            if victim.job is not None:
                self._taken.setdefault(_kind_of(victim), victim)

    def __call__(self, asker: TaskState, victims: Sequence[TaskState]) -> bool:
        """True when no victim (one per queue, job and template) could be reclaimed back: its
        job, with every eviction so far applied, is not starving (so it asks nothing back: a
        gang still at its minMember), or its queue may not reclaim it (preemptive point)."""
        session, dispatch = self._session, self._session.dispatch
        shown = dict(self._taken)
        for victim in victims:
            if victim.job is not None:
                shown.setdefault(_kind_of(victim), victim)
        starving: dict[int, bool] = {}
        for (name, _, _), victim in shown.items():
            job = victim.job
            theirs = session.queues.get(name)
            if job is None or theirs is None:
                continue
            if id(job) not in starving:
                starving[id(job)] = dispatch.is_job_starving(job)
            if starving[id(job)] and dispatch.allows_reclaim(theirs, victim):
                return False
        return True


def _kind_of(victim: TaskState) -> tuple[str, int, int]:
    """A victim's queue, template and job: victims alike in all three are asked about once."""
    job = victim.job
    return ("" if job is None else job.queue, victim.class_id, id(job))


class Reclaim:
    """The reclaim action."""

    name = NAME

    def __init__(self, limits: Limits) -> None:
        self._limits = limits

    def execute(self, session: Session) -> None:
        """Reclaim for every starving job of every queue that is not overused."""
        by_queue = askers(session)
        if not by_queue:
            return
        dispatch = session.dispatch
        evictor = Evictor(session, action=NAME, limits=self._limits)
        settling = Settling(session)
        lendable = _reclaimable_rows(session, evictor)
        waiting = {name: list(jobs) for name, jobs in by_queue.items()}
        queues = PriorityQueue(
            dispatch.compare_queues, (session.queues[n] for n in sorted(waiting))
        )
        while queues:
            queue = queues.pop()
            if dispatch.is_overused(queue):
                continue
            job = waiting[queue.name].pop(0)
            mask = lendable & ~evictor.table.queue_mask(queue.name)
            settling.remember(run_job(evictor, job, _placer(evictor, queue, mask, settling)))
            if waiting[queue.name]:
                queues.push(queue)


def _reclaimable_rows(session: Session, evictor: Evictor) -> BoolArray:
    """Candidate rows whose queue is reclaimable, of Running tasks only (Volcano's reclaim
    passes over a Bound task, which preempt may take)."""
    table = evictor.table
    rows = np.zeros(len(table), dtype=np.bool_)
    for name in table.queue_names:
        queue = session.queues.get(name)
        if queue is not None and queue.facts.reclaimable:
            rows |= table.queue_mask(name)
    return rows & table.running


def _placer(evictor: Evictor, queue: QueueState, mask: BoolArray, settling: Settling) -> PlaceOne:
    dispatch = evictor.session.dispatch

    def place(txn: Transaction, task: TaskState) -> bool:
        if not dispatch.allows_reclaim(queue, task):
            return False
        return evictor.place(
            txn,
            task,
            queue,
            mask=mask,
            select=dispatch.select_reclaimees,
            reason=f"reclaim by {task.key} of queue {queue.name}",
            rail=settling,
            held_only=True,
            memo=NAME,
        )

    return place


def build(arguments: Mapping[str, object]) -> Reclaim:
    """The reclaim action. Accepts Volcano's `enablePredicateErrorCache` (no effect) and, as
    preempt does, `minCandidateNodesPercentage`, `minCandidateNodesAbsolute` and
    `maxCandidateNodesAbsolute` (the number of viable plans compared)."""
    reader = ArgumentReader(arguments, owner=f"action {NAME}")
    reader.bool("enablePredicateErrorCache", True)
    limits = read_limits(reader)
    reader.finish()
    return Reclaim(limits)
