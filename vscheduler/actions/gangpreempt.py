"""gangpreempt: within a queue, a starving job evicts whole bundles of lower-priority gangs.

Volcano v1.15's gang-aware preemption (`actions/gangpreempt`). Askers are the admitted jobs (as
allocate admits them) that the jobStarving point calls starving; queues are taken in queue order,
each queue's askers in job order. For each asker, `GangEvictor` (actions/gangevict.py) looks for
the cheapest set of victim bundles that lets the whole job run, and commits it with the job's
pending tasks pipelined onto their nodes. Candidates are the Running or Bound tasks of *other jobs
of the same queue* whose job priority is lower than the asker's, not opted out (the pod's or the
PodGroup's `volcano.sh/preemptable` set and not true), not in eviction backoff. A BestEffort
asker is not special here: the plugins decide (Volcano drops legacy preempt's BestEffort rule).

Bundles are ordered safe before whole, then in the reverse of the job order (the job the
scheduler would place last goes first), then by efficiency. The plugins' say is the
unifiedEvictable point: with Volcano's plugins, priority keeps the lower-priority jobs'
candidates, conformance drops critical pods, gang and capacity allow all.

Preempt never binds: what it places is pipelined and nominated, and a later allocate binds it.
Evictions carry the action `gangpreempt` and the reason `gangpreempt by <namespace/podgroup>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from vscheduler.actions.askers import askers
from vscheduler.actions.bundles import Order
from vscheduler.actions.gangevict import Arguments, GangEvictor, read_arguments
from vscheduler.conf.arguments import ArgumentReader
from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState, TaskState

NAME: Final = "gangpreempt"


class GangPreempt:
    """The gangpreempt action."""

    name = NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments

    def execute(self, session: Session) -> None:
        """Preempt for every starving job, queue by queue."""
        by_queue = askers(session)
        if not by_queue:
            return
        evictor = GangEvictor(
            session,
            kind=NAME,
            arguments=self.arguments,
            scope=_same_queue_lower_priority,
            order=lambda _job: _reverse_job_order(session),
            reason=lambda job, _queue: f"{NAME} by {job.key}",
        )
        for queue in session.ordered_queues(session.queues[name] for name in by_queue):
            for job in by_queue[queue.name]:
                evictor.run(queue, job)


def _same_queue_lower_priority(asker: JobState, task: TaskState) -> bool:
    victim = task.job
    return victim is not None and victim.queue == asker.queue and victim.priority < asker.priority


def _reverse_job_order(session: Session) -> Order:
    compare = session.dispatch.compare_jobs

    def order(a: JobState, b: JobState) -> int:
        return compare(b, a)

    return order


def build(arguments: Mapping[str, object]) -> GangPreempt:
    """The gangpreempt action, with Volcano's arguments `maxDomains` (read; one domain here, so
    nothing to cap) and `allowWholeBundle` (default true: a gang may be broken when its
    surplus is not enough)."""
    reader = ArgumentReader(arguments, owner=f"action {NAME}")
    parsed = read_arguments(reader)
    reader.finish()
    return GangPreempt(parsed)
