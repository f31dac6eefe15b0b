"""enqueue: admit Pending PodGroups (phase Pending -> Inqueue) when the enqueueable vote allows.

Queues are visited in queue order and each queue's Pending jobs in job order, one job per turn,
so admission interleaves across queues as Volcano's does. A PodGroup without minResources is
always admitted; the implicit job of a pod without a PodGroup is admitted without taking a turn
(it has no minResources, and admitting it changes nothing another job's admission reads), so a
cycle's enqueue costs in proportion to the PodGroups waiting, not to the lone pods. A job not
admitted keeps phase Pending and its pods say why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from vscheduler.actions.admission import queue_problem
from vscheduler.actions.ordering import PriorityQueue
from vscheduler.conf.arguments import ArgumentReader
from vscheduler.framework.results import Refusal
from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState, QueueState

NAME: Final = "enqueue"


class Enqueue:
    """The enqueue action."""

    name = NAME

    def execute(self, session: Session) -> None:
        """Admit what the votes allow."""
        dispatch = session.dispatch
        by_queue: dict[str, list[JobState]] = {}
        lone: list[JobState] = []
        for job in session.pending_jobs:
            if not job.is_pending():
                continue
            problem = job.facts.problem or queue_problem(session, job)
            if problem:
                session.note_job(job, problem)
                continue
            if job.facts.synthetic:
                lone.append(job)
            else:
                by_queue.setdefault(job.queue, []).append(job)
        for job in lone:  # a lone pod's job has no minResources: always admitted, in any order
            dispatch.job_enqueued(job)
            session.admit(job)
        queues: PriorityQueue[QueueState] = PriorityQueue(
            dispatch.compare_queues, (session.queues[name] for name in sorted(by_queue))
        )
        jobs = {
            name: PriorityQueue(dispatch.compare_jobs, items, key=dispatch.job_key)
            for name, items in by_queue.items()
        }
        while queues:
            queue = queues.pop()
            pending = jobs[queue.name]
            job = pending.pop()
            with session.contained(NAME, job):
                refused = None if job.facts.min_resources is None else dispatch.enqueue_refuser(job)
                if refused is None:
                    dispatch.job_enqueued(job)
                    session.admit(job)
                else:
                    note = _not_admitted(job, queue, *refused) + session.queue_note(job.queue)
                    session.note_job(job, note)
            if pending:
                queues.push(queue)


def _not_admitted(job: JobState, queue: QueueState, plugin: str, refusal: Refusal) -> str:
    """Why `job` was kept out: its queue's state, the rejecting plugin's reason (the limit and
    the amounts), or, for a plain REJECT, its minResources."""
    if not queue.facts.is_open:
        return (
            f"podgroup {job.key} is Pending: queue {queue.name} is {queue.facts.state}: no job is"
            " admitted to it while its status.state is not Open"
        )
    head = f"podgroup {job.key} is Pending: not admitted to queue {job.queue}"
    if refusal.reason:
        return f"{head} ({plugin}: {refusal.reason})"
    return (
        f"{head} (minResources {job.facts.min_resources} do not fit what the queue and cluster"
        " allow)"
    )


def build(arguments: Mapping[str, object]) -> Enqueue:
    """The enqueue action (it takes no arguments)."""
    ArgumentReader(arguments, owner="action enqueue").finish()
    return Enqueue()
