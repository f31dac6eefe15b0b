"""Which jobs allocate and backfill may place, and how a job's statement is settled.

Shared by the placing actions so both apply the same admission rules: a Pending PodGroup waits for
enqueue (or counts as Inqueue when no enqueue action is configured), a malformed or invalid job or
one whose queue is missing is skipped with a note that its pods will carry.
"""

from __future__ import annotations

from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState
from vscheduler.framework.statement import Statement
from vscheduler.model.cluster import QUEUE_ANNOTATION
from vscheduler.model.status import TaskStatus


def admitted_jobs(session: Session) -> dict[str, list[JobState]]:
    """Jobs with a pending task that allocate and backfill may place, by queue; the others with
    a pending task get a note saying why.

    Jobs without a pending task are left out before they are checked: every caller places only
    pending tasks, and a note reaches only pending pods, so leaving them out changes no decision
    and no message; it keeps an idle cycle's cost in proportion to the pending work, not to the
    jobs running (3,000 lone running pods checked twice a cycle, once by allocate and once by
    backfill, were a third of a cycle that placed one pod)."""
    treat_pending_as_inqueue = "enqueue" not in session.actions
    by_queue: dict[str, list[JobState]] = {}
    jobs = session.jobs.values() if treat_pending_as_inqueue else session.jobs_with_pending
    for job in jobs:
        if job.is_pending():
            if not treat_pending_as_inqueue:
                continue
            session.admit(job)
        if not job.count(TaskStatus.PENDING):
            continue
        if job.facts.problem:
            session.note_job(job, job.facts.problem)
            continue
        invalid = session.dispatch.validate_job(job)
        if invalid is not None:
            session.note_job(job, f"podgroup {job.key} is not valid: {invalid.reason}")
            continue
        problem = queue_problem(session, job)
        if problem:
            session.note_job(job, problem)
            continue
        by_queue.setdefault(job.queue, []).append(job)
    return by_queue


def settle(session: Session, stmt: Statement, job: JobState) -> None:
    """Commit a ready job's statement, keep a pipelined one's, discard the rest."""
    if session.dispatch.is_job_ready(job):
        stmt.commit()
    elif session.dispatch.is_job_pipelined(job):
        stmt.keep()
    else:
        stmt.discard()


def queue_problem(session: Session, job: JobState) -> str:
    """Why `job`'s queue cannot take it (missing, or a malformed Queue), or "". A pod without
    a PodGroup is named as the pod, with the annotation that chose its queue: its implicit
    job's name (`podgroup-<uid>`) is no object the user could look up."""
    queue = session.queue_of(job)
    if queue is None:
        return f"queue {job.queue} of {_owner(job)} not found"
    if queue.facts.problem:
        return f"queue {job.queue} of {_owner(job)} is invalid: {queue.facts.problem}"
    return ""


def _owner(job: JobState) -> str:
    """`podgroup ns/pg`, or for a pod without a PodGroup `pod ns/p (its <annotation>)`."""
    if not job.facts.synthetic or len(job.tasks) != 1:
        return f"podgroup {job.key}"
    (task,) = job.tasks.values()
    return f"pod {task.key} (its {QUEUE_ANNOTATION} annotation)"
