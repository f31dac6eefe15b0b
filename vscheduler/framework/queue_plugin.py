"""The queue points of a plugin that keeps queue accounts: each maps onto `QueueAccounts`.

Owns: `QueuePlugin`, the per-session plugin base of proportion and capacity. A subclass names
its `rules` (Volcano's differences between the two, `queue_accounts.Rules`) and adds the points
only it serves (proportion's `is_overused`). Must not: hold figures of its own or decide
anything the accounts do not: every answer is the accounts'.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from vscheduler.framework.protocols import (
    Allocatable,
    AllocateEvent,
    DeallocateEvent,
    JobEnqueueable,
    JobEnqueued,
    Preemptive,
    QueueOrder,
    Reclaimable,
    SessionClose,
)
from vscheduler.framework.queue_accounts import QueueAccounts, Rules

if TYPE_CHECKING:
    from vscheduler.framework.results import Refusal, Vote
    from vscheduler.framework.state import JobState, QueueState, TaskState
    from vscheduler.framework.view import PluginSession


class QueuePlugin(
    QueueOrder,
    JobEnqueueable,
    JobEnqueued,
    Allocatable,
    Preemptive,
    Reclaimable,
    AllocateEvent,
    DeallocateEvent,
    SessionClose,
):
    """Queue order, allocatable, preemptive, enqueue, reclaim, allocation events and the
    session-close report, each answered by the session's queue accounts under `rules`."""

    rules: ClassVar[Rules]

    def __init__(self, session: PluginSession) -> None:
        self.accounts = QueueAccounts(session, self.rules)

    def compare_queues(self, a: QueueState, b: QueueState) -> int:
        """Higher `spec.priority` first, then the lower share (best-effort last, by rule)."""
        return self.accounts.compare(a, b)

    def allows_allocation(self, queue: QueueState, task: TaskState) -> bool | Refusal:
        """The queue is Open and the task fits within the rule's limit; else a `Refusal` naming
        the limit (deserved, capability, the other queues' guarantees, Closed) and the numbers."""
        return self.accounts.allows_allocation(queue, task)

    def allows_reclaim(self, queue: QueueState, task: TaskState) -> bool:
        """Volcano's preemptive function, by the rule."""
        return self.accounts.allows_reclaim(queue, task)

    def vote_enqueue(self, job: JobState) -> Vote | Refusal:
        """PERMIT when the job's minResources fit in its queue's realCapability beside what the
        queue holds and has admitted (less its elastic part); else a `Refusal` naming the limit
        and the amounts."""
        return self.accounts.vote_enqueue(job)

    def on_enqueued(self, job: JobState) -> None:
        """The admitted job's minResources now count as its queue's inqueue."""
        self.accounts.enqueued(job)

    def select_reclaimees(
        self, reclaimer: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Candidates of reclaimable queues, taken while their queue stays above its deserved."""
        return self.accounts.reclaimees(reclaimer, candidates)

    def on_allocate(self, task: TaskState) -> None:
        """The task's queue holds its request."""
        self.accounts.change(task, task.resreq)

    def on_deallocate(self, task: TaskState) -> None:
        """The task's queue gives its request back."""
        self.accounts.change(task, -task.resreq)

    def on_session_close(self) -> None:
        """Report every queue's figures, in name order, for the queue metrics."""
        self.accounts.report()
