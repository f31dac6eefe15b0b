"""gangreclaim: across queues, a starving job takes whole bundles back from other queues.

Volcano v1.15's gang-aware reclaim (`actions/gangreclaim`). Askers are the admitted jobs (as
allocate admits them) that the jobStarving point calls starving. Queues are taken in queue
order, an overused one (the overused point) passed over, each queue's askers in job order. For
each asker, the queue's preemptive point is asked once for the job's pending demand (Volcano
sums the pending tasks' requests into one question: here one stand-in task of the job's first
pending task carrying the summed request); then `GangEvictor` (actions/gangevict.py) looks for
the cheapest set of victim bundles that lets the whole job run, and commits it with the job's
pending tasks pipelined onto their nodes. Candidates are the Running tasks (not Bound ones) of
jobs of *other queues* that are reclaimable (`spec.reclaimable`, default true), not opted out
(the pod's or the PodGroup's `volcano.sh/preemptable` set and not true), not in eviction backoff.

Bundles are ordered safe before whole, then by the reverse of the queue order across queues
(Volcano's victim queue order falls back to it), then by efficiency within a queue. The
plugins' say is the unifiedEvictable point: with Volcano's plugins, capacity keeps the
candidates above their queue's guarantee and deserved, conformance drops critical pods,
priority and gang allow all; proportion and drf do not take part (they register no such
function in Volcano either), so with proportion any reclaimable queue may lose its pods.

Reclaim never binds: what it places is pipelined and nominated, and a later allocate binds it.
Evictions carry the action `gangreclaim` and the reason
`gangreclaim by <namespace/podgroup> of queue <q>`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Final

from vscheduler.actions.askers import askers
from vscheduler.actions.bundles import Order
from vscheduler.actions.gangevict import Arguments, GangEvictor, read_arguments
from vscheduler.actions.ordering import PriorityQueue
from vscheduler.conf.arguments import ArgumentReader
from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState, QueueState, TaskState
from vscheduler.model.resources import EMPTY
from vscheduler.model.status import TaskStatus

NAME: Final = "gangreclaim"


class GangReclaim:
    """The gangreclaim action."""

    name = NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments

    def execute(self, session: Session) -> None:
        """Reclaim for every starving job of every queue that is not overused."""
        by_queue = askers(session)
        if not by_queue:
            return
        dispatch = session.dispatch
        evictor = GangEvictor(
            session,
            kind=NAME,
            arguments=self.arguments,
            scope=lambda asker, task: _reclaimable(session, asker, task),
            order=lambda _job: _reverse_queue_order(session),
            reason=lambda job, q: f"{NAME} by {job.key} of queue {q.name}",
        )
        queues = PriorityQueue(
            dispatch.compare_queues, (session.queues[n] for n in sorted(by_queue))
        )
        while queues:
            queue = queues.pop()
            if dispatch.is_overused(queue):
                continue
            for job in by_queue[queue.name]:
                evictor.run(queue, job, gate=lambda q, pending: _preemptive(session, q, pending))


def _reclaimable(session: Session, asker: JobState, task: TaskState) -> bool:
    """A Running task of a job of another, reclaimable queue."""
    victim = task.job
    if victim is None or victim.queue == asker.queue or task.status is not TaskStatus.RUNNING:
        return False
    theirs = session.queues.get(victim.queue)
    return theirs is not None and theirs.facts.reclaimable


def _reverse_queue_order(session: Session) -> Order:
    compare = session.dispatch.compare_queues

    def order(a: JobState, b: JobState) -> int:
        if a.queue == b.queue:
            return 0
        qa, qb = session.queues.get(a.queue), session.queues.get(b.queue)
        return 0 if qa is None or qb is None else compare(qb, qa)

    return order


def _preemptive(session: Session, queue: QueueState, pending: Sequence[TaskState]) -> bool:
    """The preemptive point asked once for the job's pending demand (Volcano's `Preemptive`
    with the pending tasks as candidates, whose requests its plugins sum)."""
    first = pending[0]
    total = EMPTY
    for task in pending:
        total = total + task.resreq
    stand_in = TaskState(dataclasses.replace(first.facts, resreq=total), first.job, first.class_id)
    return session.dispatch.allows_reclaim(queue, stand_in)


def build(arguments: Mapping[str, object]) -> GangReclaim:
    """The gangreclaim action, with Volcano's arguments `maxDomains` (read; one domain here, so
    nothing to cap) and `allowWholeBundle` (default true)."""
    reader = ArgumentReader(arguments, owner=f"action {NAME}")
    parsed = read_arguments(reader)
    reader.finish()
    return GangReclaim(parsed)
