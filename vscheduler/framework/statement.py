"""Statement: the only way session state changes, all-or-nothing per job.

`allocate`, `pipeline` and `evict` apply at once to the session view (ledger, job indexes) and
tell every plugin's event handlers; `commit` turns them into decisions (binds, evictions), and
`discard` undoes them in reverse order, telling the handlers again. Gang scheduling is:
allocate a job's tasks in a statement, commit if the job is ready, keep it if the job is
pipelined, discard otherwise.
"""

from __future__ import annotations

import enum
from typing import Protocol

from vscheduler.framework.state import TaskState
from vscheduler.model.status import TaskStatus


class Changes(Protocol):
    """The session's Statement-only mutators (`framework.session.Session` has them)."""

    def apply_allocate(self, task: TaskState, node: int, /) -> None: ...
    def apply_pipeline(self, task: TaskState, node: int, /) -> None: ...
    def apply_evict(self, task: TaskState, /) -> None: ...
    def undo_allocate(self, task: TaskState, /) -> None: ...
    def undo_pipeline(self, task: TaskState, /) -> None: ...
    def undo_evict(self, task: TaskState, /) -> None: ...
    def record_bind(self, task: TaskState, /) -> None: ...
    def record_evict(
        self, task: TaskState, reason: str, *, action: str, strategy: str, plan: str
    ) -> None: ...


_NO_REASON = ("", "", "", "")


class Op(enum.Enum):
    """What a statement did to a task."""

    ALLOCATE = "allocate"
    PIPELINE = "pipeline"
    EVICT = "evict"


class Statement:
    """A group of operations on one job's tasks, committed or discarded together."""

    __slots__ = ("_done", "_ops", "_ssn")

    def __init__(self, session: Changes) -> None:
        self._ssn = session
        self._ops: list[tuple[Op, TaskState, tuple[str, str, str, str]]] = []
        self._done = False

    def __len__(self) -> int:
        return len(self._ops)

    def allocate(self, task: TaskState, node: int) -> None:
        """Place `task` on node index `node`, using the node's idle resources."""
        self._ssn.apply_allocate(task, node)
        self._ops.append((Op.ALLOCATE, task, _NO_REASON))

    def pipeline(self, task: TaskState, node: int) -> None:
        """Place `task` on node `node`, waiting for resources being released there."""
        self._ssn.apply_pipeline(task, node)
        self._ops.append((Op.PIPELINE, task, _NO_REASON))

    def evict(
        self, task: TaskState, reason: str, *, action: str = "", strategy: str = "", plan: str = ""
    ) -> None:
        """Mark a running task for eviction; its resources become releasing. `action` and
        `strategy` (who asked, which rule chose it) travel with the decision to the metrics;
        `plan` groups the evictions carried out all or none (`Evict.plan`)."""
        self._ssn.apply_evict(task)
        self._ops.append((Op.EVICT, task, (reason, action, strategy, plan)))

    def commit(self) -> None:
        """Make every operation a decision: allocations become binds, evictions become evicts."""
        self._finish()
        for op, task, (reason, action, strategy, plan) in self._ops:
            if op is Op.ALLOCATE:
                self._ssn.record_bind(task)
            elif op is Op.EVICT:
                self._ssn.record_evict(task, reason, action=action, strategy=strategy, plan=plan)

    def discard(self) -> None:
        """Undo every operation, last first."""
        self._finish()
        for op, task, _ in reversed(self._ops):
            if op is Op.ALLOCATE:
                self._ssn.undo_allocate(task)
            elif op is Op.PIPELINE:
                self._ssn.undo_pipeline(task)
            else:
                self._ssn.undo_evict(task)

    def keep(self) -> None:
        """Neither commit nor discard: a pipelined gang keeps its places in this session (they
        become neither binds nor evictions, and are reported as pipelined)."""
        self._finish()

    def _finish(self) -> None:
        if self._done:
            msg = "statement already committed or discarded"
            raise RuntimeError(msg)
        self._done = True


def placed(task: TaskState) -> bool:
    """Whether a statement has placed `task` this session (allocated or pipelined)."""
    return task.status in (TaskStatus.ALLOCATED, TaskStatus.PIPELINED)
