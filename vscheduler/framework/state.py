"""The session's mutable records of tasks, jobs and queues.

Plugins and actions read them; only `Statement` (through the session) changes them, and only
through legal status transitions. Attributes meant to be read are plain; the setters are the
session's business.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Final

from vscheduler.model import status as st
from vscheduler.model.compact import compacted
from vscheduler.model.facts import JobFacts, QueueFacts, TaskFacts
from vscheduler.model.resources import EMPTY, Resources
from vscheduler.model.status import PodGroupPhase, TaskStatus

_NONE: Mapping[str, TaskState] = MappingProxyType({})
_HOLDS: Final = {s: s in st.OCCUPYING or s is TaskStatus.PIPELINED for s in TaskStatus}
"""Per status, whether a task in it counts in its job's `allocated`."""


class TaskState:
    """One task in the session: its facts, its current status and node (index and name)."""

    __slots__ = ("class_id", "facts", "job", "node", "node_index", "status")

    def __init__(self, facts: TaskFacts, job: JobState | None, class_id: int) -> None:
        self.facts = facts
        self.job = job
        self.class_id = class_id
        self.status: TaskStatus = facts.status
        self.node: str | None = facts.node_name
        self.node_index: int = -1

    @property
    def uid(self) -> str:
        """The pod uid."""
        return self.facts.uid

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return self.facts.key

    @property
    def resreq(self) -> Resources:
        """The effective request."""
        return self.facts.resreq

    @property
    def priority(self) -> int:
        """The pod priority."""
        return self.facts.priority

    def __repr__(self) -> str:
        return f"TaskState({self.key}, {self.status.value}, node={self.node})"


class JobState:
    """One job (PodGroup) in the session, with its tasks indexed by status."""

    __slots__ = (
        "_best_effort_pending",
        "_by_status",
        "_ready",
        "allocated",
        "facts",
        "key",
        "pending_request",
        "phase",
        "tasks",
    )

    def __init__(self, facts: JobFacts) -> None:
        self.facts = facts
        self.key = facts.key
        """`namespace/name` of the PodGroup."""
        self.phase: PodGroupPhase = facts.phase
        self.tasks: dict[str, TaskState] = {}
        self._by_status: dict[TaskStatus, dict[str, TaskState]] = {}
        """Only the statuses a task has had (a lone pod's job holds one or two)."""
        self.allocated: Resources = EMPTY
        """The sum of the requests of tasks in OCCUPYING or PIPELINED statuses."""
        self.pending_request: Resources = EMPTY
        """The sum of the requests of its pending tasks."""
        self._ready = 0
        self._best_effort_pending = 0

    def add(self, task: TaskState) -> None:
        """Adds a task at session open."""
        self.tasks[task.uid] = task
        self._by_status.setdefault(task.status, {})[task.uid] = task
        self._count(task, task.status, 1)
        if task.status in st.OCCUPYING or task.status is TaskStatus.PIPELINED:
            self.allocated = self.allocated + task.resreq
        elif task.status is TaskStatus.PENDING:
            self.pending_request = self.pending_request + task.resreq

    def _count(self, task: TaskState, status: TaskStatus, sign: int) -> None:
        if status in st.READY_FOR_GANG:
            self._ready += sign
        elif status is TaskStatus.PENDING and task.facts.best_effort:
            self._best_effort_pending += sign

    def move(self, task: TaskState, new: TaskStatus) -> None:
        """Re-index `task` under `new` (the session has checked the transition)."""
        old, facts = task.status, task.facts
        uid = facts.uid
        del self._by_status[old][uid]
        self._by_status.setdefault(new, {})[uid] = task
        self._count(task, old, -1)
        self._count(task, new, 1)
        was, now = _HOLDS[old], _HOLDS[new]
        if now and not was:
            self.allocated = self.allocated + facts.resreq
        elif was and not now:
            self.allocated = self.allocated - facts.resreq
        if new is TaskStatus.PENDING and old is not TaskStatus.PENDING:
            self.pending_request = self.pending_request + facts.resreq
        elif old is TaskStatus.PENDING and new is not TaskStatus.PENDING:
            self.pending_request = self.pending_request - facts.resreq

    # --- reading ------------------------------------------------------------------------------
    @property
    def uid(self) -> str:
        """The PodGroup uid."""
        return self.facts.uid

    @property
    def queue(self) -> str:
        """The queue name."""
        return self.facts.queue

    @property
    def min_member(self) -> int:
        """The gang's minimum member count (minAvailable)."""
        return self.facts.min_member

    @property
    def priority(self) -> int:
        """The job's priority."""
        return self.facts.priority

    @property
    def created(self) -> dt.datetime:
        """Creation time of the PodGroup."""
        return self.facts.created

    def with_status(self, *statuses: TaskStatus) -> Iterator[TaskState]:
        """The tasks in any of `statuses` (a live view: do not change statuses while iterating)."""
        for status in statuses:
            yield from self._by_status.get(status, _NONE).values()

    def count(self, *statuses: TaskStatus) -> int:
        """How many tasks are in any of `statuses`."""
        by_status, n = self._by_status, 0
        for status in statuses:
            held = by_status.get(status)
            if held:
                n += len(held)
        return n

    def ready_num(self) -> int:
        """Tasks placed (this cycle or before) or finished successfully."""
        return self._ready

    def waiting_num(self) -> int:
        """Tasks pipelined onto resources being released."""
        return len(self._by_status.get(TaskStatus.PIPELINED, _NONE))

    def pending_best_effort_num(self) -> int:
        """Pending tasks that request nothing (they never block a gang)."""
        return self._best_effort_pending

    def valid_num(self) -> int:
        """Tasks that are or can still become ready (Volcano's ValidTaskNum)."""
        return self.ready_num() + self.count(TaskStatus.PENDING, TaskStatus.PIPELINED)

    def is_pending(self) -> bool:
        """The PodGroup has not been admitted yet."""
        return self.phase is PodGroupPhase.PENDING

    def __repr__(self) -> str:
        return f"JobState({self.key}, {self.phase.value}, tasks={len(self.tasks)})"


class QueueState:
    """One queue in the session."""

    __slots__ = ("facts",)

    def __init__(self, facts: QueueFacts) -> None:
        self.facts = facts

    @property
    def name(self) -> str:
        """The queue name."""
        return self.facts.name

    @property
    def weight(self) -> int:
        """The queue weight (>= 1)."""
        return self.facts.weight

    def __repr__(self) -> str:
        return f"QueueState({self.name})"


def occupied_by(job: JobState) -> Resources:
    """The sum of the requests of the job's tasks in OCCUPYING statuses (Allocated, Binding,
    Bound, Running: Volcano's `AllocatedStatus`), pipelined ones left out: its `allocated` less
    its pipelined tasks (few: a job is not walked whole)."""
    pipelined = job.waiting_num()
    if not pipelined:
        return job.allocated
    held = job.allocated
    for task in job.with_status(TaskStatus.PIPELINED):
        held = held - task.resreq
    return held


class QueueTotals:
    """Per queue, as the session opened: the sum of the allocations of its jobs without
    minResources (each holds all of it elastically), the sum of every job's pending
    requests, and the sum of every job's `occupied_by` (what Volcano writes to the Queue's
    `status.allocated`). Carried from one session to the next and patched with only the jobs
    whose records were made anew (`patched`), so a queue of thousands of lone pods' jobs is
    not summed again every cycle."""

    __slots__ = ("_by_job", "_by_queue", "_held", "_holes", "_occupied")

    def __init__(
        self,
        by_job: dict[str, tuple[str, Resources, Resources, Resources]] | None = None,
        by_queue: dict[str, tuple[Resources, Resources]] | None = None,
        held: dict[str, int] | None = None,
        occupied: dict[str, Resources] | None = None,
        holes: int = 0,
    ) -> None:
        self._by_job = by_job if by_job is not None else {}
        """Job key -> (its queue, its plain allocation, its pending request, its `occupied_by`) as
        counted."""
        self._holes = holes
        """Keys popped from `_by_job` since it was built (`model.compact`)."""
        self._by_queue = by_queue if by_queue is not None else {}
        self._held = held if held is not None else {}
        """Queue -> how many jobs name it (queues naming none left out)."""
        self._occupied = occupied if occupied is not None else {}
        """Queue -> the sum of its jobs' `occupied_by`."""

    def patched(self, jobs: Mapping[str, JobState], remade: Iterable[str]) -> QueueTotals:
        """These totals with the jobs `remade` (made anew, or gone from `jobs`) counted again:
        a new object (this one is left as it was)."""
        out = self.copy()
        out.patch(jobs, remade)
        return out

    def copy(self) -> QueueTotals:
        """A copy, to patch (C-level, `model.compact`)."""
        by_job, holes = compacted(self._by_job, self._holes)
        return QueueTotals(
            by_job.copy(), self._by_queue.copy(), self._held.copy(), self._occupied.copy(), holes
        )

    def patch(self, jobs: Mapping[str, JobState], remade: Iterable[str]) -> None:
        """`patched`, in place (on a `copy`)."""
        by_job, by_queue = self._by_job, self._by_queue
        held, occupying = self._held, self._occupied
        for key in remade:
            counted = by_job.get(key)  # replaced in place, not popped: `by_job` stays compact
            if counted is not None:
                queue, plain, pending, occupied_then = counted
                was_plain, was_pending = by_queue[queue]
                by_queue[queue] = (was_plain - plain, was_pending - pending)
                occupying[queue] = occupying[queue] - occupied_then
                if held[queue] == 1:
                    del held[queue]
                else:
                    held[queue] -= 1
            job = jobs.get(key)
            if job is None:
                if counted is not None:
                    del by_job[key]
                    self._holes += 1
                continue
            plain = job.allocated if job.facts.min_resources is None else EMPTY
            queue = job.facts.queue
            held_now = occupied_by(job)
            by_job[key] = (queue, plain, job.pending_request, held_now)
            was_plain, was_pending = by_queue.get(queue, (EMPTY, EMPTY))
            by_queue[queue] = (was_plain + plain, was_pending + job.pending_request)
            occupying[queue] = occupying.get(queue, EMPTY) + held_now
            held[queue] = held.get(queue, 0) + 1

    def held(self) -> frozenset[str]:
        """The queues some job names."""
        return frozenset(self._held)

    def of(self, queue: str) -> tuple[Resources, Resources]:
        """The queue's (plain allocation, pending request) sums."""
        return self._by_queue.get(queue, (EMPTY, EMPTY))

    def occupied(self, queue: str) -> Resources:
        """The sum of the queue's jobs' `occupied_by`, as counted."""
        return self._occupied.get(queue, EMPTY)

    def occupied_of(self, job: str) -> tuple[str, Resources] | None:
        """Job `job`'s queue and `occupied_by` as counted, or None when it was not counted."""
        counted = self._by_job.get(job)
        return None if counted is None else (counted[0], counted[3])
