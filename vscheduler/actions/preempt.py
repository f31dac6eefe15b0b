"""preempt: within a queue, starving jobs take room from running work of lower priority.

Askers are the admitted jobs (as allocate admits them) that the jobStarving point calls
starving; queues are taken in queue order, each queue's askers in job order. For each asker, its
pending tasks in task order while the job is still starving (a pod whose `preemptionPolicy` is
`Never`, its own or else its PriorityClass's, is skipped): the task is pipelined onto the
best-scored node where it already fits (nothing is evicted then), else the `Evictor`
(actions/eviction.py) finds the cheapest sufficient victims on one node among the running tasks
of *other jobs of the same queue* that the preemptable point allows (by default: of a lower job
priority, never breaking a gang below minMember, never a critical pod), evicts them and
pipelines the task there. The job's placements and evictions are one transaction: committed
when the job is ready or pipelined, discarded otherwise, so a job that still cannot run evicts
nothing.

Then, for each asker of the queue, preemption among its own tasks (Volcano's second phase): each
pending task in task order is pipelined where it fits, else may evict running tasks *of its own
job* that the preemptable point allows (by default only those of lower pod priority, and not
below minMember), one transaction per task, committed when the task is placed; the first task
that cannot be placed this way ends the job's turn.

A BestEffort pending task (requesting nothing) may preempt too, but takes only BestEffort victims
(Volcano's preempt filters): it needs a pod slot, or a node whose resolvable predicates pass.

What the predicates count of other pods (inter-pod anti-affinity, a topology spread skew) is
resolved by evicting only with `enableTopologyAwarePreemption: true` and only for a plugin
whose entry enables preemptable or allocatable (defaults: off, and on), as Volcano: its normal
preemption re-runs the filters over the PreFilter state taken before the evictions, so such a
conflict stays; its topology-aware one tells a plugin of the pods it removes (SimulateRemoveTask)
only under those two flags. A full pod count and host ports are resolved either way.

Preempt never binds: what it places is pipelined, and a later allocate binds it (Volcano's
`normalPreempt`).

Evictions carry the action `preempt` and the reason `preempt by <namespace/pod>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from vscheduler.actions.askers import (
    PlaceOne,
    askers,
    never_preempts,
    pending_tasks,
    read_limits,
    run_job,
)
from vscheduler.actions.eviction import Evictor, Limits, Transaction
from vscheduler.conf.arguments import ArgumentReader
from vscheduler.framework.ledger import BoolArray
from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState, QueueState, TaskState

NAME: Final = "preempt"


class Preempt:
    """The preempt action."""

    name = NAME

    def __init__(self, limits: Limits, *, topology_aware: bool = False) -> None:
        self._limits = limits
        self._topology_aware = topology_aware

    def execute(self, session: Session) -> None:
        """Preempt for every starving job, queue by queue."""
        by_queue = askers(session)
        if not by_queue:
            return
        evictor = Evictor(session, action=NAME, limits=self._limits, simulate=self._topology_aware)
        for queue in session.ordered_queues(session.queues[name] for name in by_queue):
            in_queue = evictor.table.queue_mask(queue.name)
            for job in by_queue[queue.name]:
                mask = in_queue & ~evictor.table.job_mask(job.key)
                run_job(evictor, job, _placer(evictor, queue, mask, memo="between"))
            for job in by_queue[queue.name]:
                _within_job(evictor, job, queue)


def _within_job(evictor: Evictor, job: JobState, queue: QueueState) -> None:
    """Volcano's second phase: the job's pending tasks evict its own running tasks."""
    session = evictor.session
    place = _placer(evictor, queue, evictor.table.job_mask(job.key), memo="within")
    open_txn: list[Transaction] = []

    def undo() -> None:
        for txn in open_txn:
            txn.discard()

    with session.contained(NAME, job, undo):
        for task in pending_tasks(session, job):
            if never_preempts(session, task):
                continue
            open_txn[:] = [Transaction(evictor.table)]
            if not place(open_txn[0], task):
                return
            open_txn[0].settle(ready=True, pipelined=True)
            open_txn.clear()


def _placer(evictor: Evictor, queue: QueueState, mask: BoolArray, *, memo: str) -> PlaceOne:
    session = evictor.session

    def place(txn: Transaction, task: TaskState) -> bool:
        return evictor.place(
            txn,
            task,
            queue,
            mask=mask & evictor.table.best_effort if task.facts.best_effort else mask,
            select=session.dispatch.select_preemptees,
            reason=f"preempt by {task.key}",
            memo=memo,
        )

    return place


def build(arguments: Mapping[str, object]) -> Preempt:
    """The preempt action, with Volcano's arguments: the candidate-node bounds are honoured (as
    the number of viable plans compared); `enableTopologyAwarePreemption` decides whether
    evicting pods may resolve what counts other pods (module docstring);
    `enablePredicateErrorCache` and `topologyAwarePreemptWorkerNum` are accepted without
    effect."""
    reader = ArgumentReader(arguments, owner=f"action {NAME}")
    reader.bool("enablePredicateErrorCache", True)
    topology_aware = reader.bool("enableTopologyAwarePreemption", False)
    reader.int("topologyAwarePreemptWorkerNum", 16, minimum=1)
    limits = read_limits(reader)
    reader.finish()
    return Preempt(limits, topology_aware=topology_aware)
