"""backfill: place best-effort tasks (pods that request nothing) of admitted jobs.

Queues in queue order, within each its jobs in job order (Volcano's `pickUpPendingTasks`); the
orders are taken once, before anything is placed, as Volcano's are. For each best-effort pending
task, the nodes passing every predicate are scored and the best taken. A job's placements are
settled as in allocate (commit when ready).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from vscheduler.actions.admission import admitted_jobs, settle
from vscheduler.conf.arguments import ArgumentReader
from vscheduler.framework.placement import FitFailure
from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState

NAME: Final = "backfill"


class Backfill:
    """The backfill action."""

    name = NAME

    def execute(self, session: Session) -> None:
        """Place best-effort tasks, queue by queue, job by job."""
        by_queue = {
            name: jobs
            for name, group in admitted_jobs(session).items()
            # a job without a best-effort pending task has nothing for backfill
            if (jobs := [job for job in group if job.pending_best_effort_num()])
        }
        for queue in session.ordered_queues(session.queues[name] for name in by_queue):
            for job in session.ordered_jobs(by_queue[queue.name]):
                _place(session, job)


def _place(session: Session, job: JobState) -> None:
    """Place the job's best-effort pending tasks in task order, until one fits nowhere; settle."""
    dispatch, placer = session.dispatch, session.placer
    tasks = session.pending_tasks(job, best_effort=True)
    if not tasks:
        return
    stmt = session.statement()
    with session.contained(NAME, job, stmt.discard):
        for task in tasks:
            pre = dispatch.prefilter(task)
            if pre is not None:
                session.findings.record_fit_failure(task, placer.failure(task, None, None, pre))
                break
            choice = placer.choose(task)
            if isinstance(choice, FitFailure):
                session.findings.record_fit_failure(task, choice)
                break
            session.findings.record_schedulable(task)
            stmt.allocate(task, choice.node)
        settle(session, stmt, job)


def build(arguments: Mapping[str, object]) -> Backfill:
    """The backfill action (it takes no arguments)."""
    ArgumentReader(arguments, owner="action backfill").finish()
    return Backfill()
