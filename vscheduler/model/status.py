"""Task statuses, their legal transitions, and PodGroup phases (Volcano's names).

A task's status changes only through `check_transition`, which the session's Statement calls;
an illegal change is a framework bug and raises `InvariantError`.
"""

from __future__ import annotations

import enum
from typing import Final

from vscheduler.errors import InvariantError


class TaskStatus(enum.Enum):
    """Where a pod stands, as the scheduler sees it (Volcano's TaskStatus)."""

    PENDING = "Pending"
    ALLOCATED = "Allocated"
    PIPELINED = "Pipelined"
    BINDING = "Binding"
    BOUND = "Bound"
    RUNNING = "Running"
    RELEASING = "Releasing"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"

    __hash__ = object.__hash__
    """Members are singletons compared by identity: hashed by identity too, in C, not by
    `Enum.__hash__`'s Python-level hash of the name (every task's status is looked up in a
    status set several times a cycle)."""


S = TaskStatus

#: Statuses whose resources count against a node (Volcano's AllocatedStatus).
OCCUPYING: Final = frozenset({S.ALLOCATED, S.BINDING, S.BOUND, S.RUNNING})
#: Statuses that count toward a gang's readiness (placed this cycle or before).
READY_FOR_GANG: Final = frozenset({S.ALLOCATED, S.BINDING, S.BOUND, S.RUNNING, S.SUCCEEDED})
#: Statuses of tasks that are finished.
TERMINATED: Final = frozenset({S.SUCCEEDED, S.FAILED})

_LEGAL: Final[dict[TaskStatus, frozenset[TaskStatus]]] = {
    S.PENDING: frozenset({S.ALLOCATED, S.PIPELINED}),
    S.ALLOCATED: frozenset({S.PENDING, S.BINDING}),
    S.PIPELINED: frozenset({S.PENDING}),
    S.BINDING: frozenset({S.BOUND, S.PENDING}),
    S.BOUND: frozenset({S.RUNNING, S.RELEASING}),
    S.RUNNING: frozenset({S.RELEASING, S.SUCCEEDED, S.FAILED}),
    S.RELEASING: frozenset({S.RUNNING, S.BOUND}),
    S.SUCCEEDED: frozenset(),
    S.FAILED: frozenset(),
    S.UNKNOWN: frozenset(),
}


def is_legal(old: TaskStatus, new: TaskStatus) -> bool:
    """Whether a task may move from `old` to `new` inside a session."""
    return new in _LEGAL[old]


def check_transition(task: str, old: TaskStatus, new: TaskStatus) -> None:
    """Raise `InvariantError` unless `old -> new` is legal (RELEASING -> RUNNING undoes evict)."""
    if not is_legal(old, new):
        raise InvariantError(f"task {task}: illegal status change {old.value} -> {new.value}")


class PodGroupPhase(enum.Enum):
    """A PodGroup's `status.phase` (Volcano's names)."""

    PENDING = "Pending"
    INQUEUE = "Inqueue"
    RUNNING = "Running"
    UNKNOWN = "Unknown"
    COMPLETED = "Completed"


class QoSClass(enum.Enum):
    """A pod's quality-of-service class, as Kubernetes computes it."""

    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"
