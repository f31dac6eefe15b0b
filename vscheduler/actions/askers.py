"""Which jobs ask preempt and reclaim for room, and how one asking job's attempts settle.

Shared by the two actions: the askers (admitted, valid, starving jobs by queue), their pending
tasks (BestEffort ones included), the candidate-node arguments both read, the
`preemptionPolicy: Never` check, and `run_job`, the loop over one job's pending tasks whose
placements and evictions settle as one transaction.
Must not: choose victims or nodes (`eviction.Evictor` does).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from vscheduler.actions.admission import admitted_jobs
from vscheduler.actions.eviction import Evictor, Limits, Transaction
from vscheduler.conf.arguments import ArgumentReader
from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState, TaskState

PlaceOne = Callable[[Transaction, TaskState], bool]


def askers(session: Session) -> dict[str, list[JobState]]:
    """The admitted jobs (as allocate admits them) the jobStarving point calls starving, by
    queue, in job order. A job with a `spec.networkTopology` asks no eviction: Volcano's
    preempt leaves such jobs out ("jobs containing networkTopology do not support
    preemption"), and here reclaim, gangpreempt and gangreclaim do too, as they would free room
    with no regard to its HyperNode; allocate places it when room frees in one."""
    dispatch = session.dispatch
    return {
        name: session.ordered_jobs(starving)
        for name, jobs in sorted(admitted_jobs(session).items())
        if (
            starving := [
                job
                for job in jobs
                if job.facts.network_topology is None and dispatch.is_job_starving(job)
            ]
        )
    }


def read_limits(reader: ArgumentReader) -> Limits:
    """Volcano's preempt arguments bounding the candidate nodes, read as `Limits`."""
    return Limits(
        percentage=reader.int("minCandidateNodesPercentage", 10, minimum=0, maximum=100),
        minimum=reader.int("minCandidateNodesAbsolute", 1, minimum=0),
        maximum=reader.int("maxCandidateNodesAbsolute", 100, minimum=1),
    )


def pending_tasks(session: Session, job: JobState) -> list[TaskState]:
    """The job's pending tasks in task order, BestEffort ones included (Volcano's preempt and
    reclaim take every pending task; a BestEffort one may take only BestEffort victims)."""
    tasks = session.pending_tasks(job, best_effort=False)
    tasks += session.pending_tasks(job, best_effort=True)
    return sorted(tasks, key=functools.cmp_to_key(session.dispatch.compare_tasks))


def never_preempts(session: Session, task: TaskState) -> bool:
    """The pod's `spec.preemptionPolicy` is `Never` (as Volcano and kube-scheduler read it); a
    pod without the field takes its PriorityClass's, as admission would have set it."""
    policy = task.facts.preemption_policy
    if not policy:
        found = session.snapshot.priority_classes.get(task.facts.priority_class_name)
        policy = "" if found is None else found.preemption_policy
    return policy == "Never"


def run_job(evictor: Evictor, job: JobState, place_one: PlaceOne) -> list[TaskState]:
    """Try the job's pending tasks in task order while it is starving; settle them together:
    committed when the job is pipelined, discarded otherwise. A task of a template that just
    failed is not tried again until something is placed. Returns the victims committed. An
    exception on the way discards the job's transaction and reports the job
    (`Session.contained`)."""
    session = evictor.session
    dispatch = session.dispatch
    txn = Transaction(evictor.table)
    failed: set[int] = set()
    with session.contained(evictor.action, job, txn.discard):
        for task in pending_tasks(session, job):
            if not dispatch.is_job_starving(job):
                break
            if task.class_id in failed or never_preempts(session, task):
                continue
            if place_one(txn, task):
                failed.clear()
            else:
                failed.add(task.class_id)
        ready = dispatch.is_job_ready(job)
        if txn.settle(ready=ready, pipelined=ready or dispatch.is_job_pipelined(job)):
            return txn.victims
        evictor.explain_refusals(job)
    return []
