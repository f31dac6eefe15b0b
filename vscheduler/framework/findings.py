"""Findings: what one cycle found out about its pods, jobs and queues, written only through
methods.

Owns: why pending tasks were not tried (`note_task`), why jobs were not (`note_job`), what else
held a job back (`hint_job`), what held back every pod of a job at its queue (`hold_job`), why a
queue has less room than its figures say (`note_queue`), the conditions plugins set on PodGroups,
each task class's latest fit failure and which tasks found a node, what preempt or reclaim found
for a task it tried in vain (`note_attempt`), the task allocate stopped a job at (`stop_job`),
why a victim-tasks plugin proposed a victim, and the jobs an action failed on. Each write keeps
the rule it always had (most notes: the first one stays). Reads are methods or read-only views;
`framework.messages` turns findings into the pods' pending messages.
Must not: decide anything, or know the session: it is told about tasks and jobs, by key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from vscheduler.framework.placement import FitFailure
from vscheduler.framework.state import JobState, TaskState
from vscheduler.model.facts import PodGroupCondition
from vscheduler.model.status import TaskStatus


class Findings:
    """One session's findings; every container is private and written through a method."""

    __slots__ = (
        "_action_errors",
        "_attempts",
        "_budgeted",
        "_failed_class",
        "_fit_failures",
        "_job_conditions",
        "_job_hints",
        "_job_holds",
        "_job_notes",
        "_job_stops",
        "_queue_notes",
        "_schedulable",
        "_task_notes",
        "_victim_notes",
    )

    def __init__(self) -> None:
        self._task_notes: dict[str, str] = {}
        self._job_notes: dict[str, str] = {}
        self._job_hints: dict[str, str] = {}
        self._job_holds: dict[str, str] = {}
        self._queue_notes: dict[str, str] = {}
        self._job_conditions: dict[str, dict[str, PodGroupCondition]] = {}
        self._fit_failures: dict[int, FitFailure] = {}
        self._failed_class: dict[str, int] = {}
        self._schedulable: set[str] = set()
        self._action_errors: list[str] = []
        self._victim_notes: dict[str, tuple[str, str]] = {}
        self._budgeted: set[str] = set()
        self._attempts: dict[str, str] = {}
        self._job_stops: dict[str, TaskState] = {}

    # --- tasks --------------------------------------------------------------------------------
    def note_task(self, uid: str, reason: str) -> None:
        """Why pending task `uid` was not tried (missing PodGroup, queue without room, ...)."""
        self._task_notes.setdefault(uid, reason)

    def task_note(self, uid: str) -> str:
        """The task's note, or empty."""
        return self._task_notes.get(uid, "")

    def record_fit_failure(self, task: TaskState, failure: FitFailure) -> None:
        """`task` found no node; keep the (latest) evidence for its class."""
        self._fit_failures[task.class_id] = failure
        self._failed_class[task.uid] = task.class_id
        self._schedulable.discard(task.uid)

    def failed_like_its_class(self, task: TaskState) -> None:
        """`task` was not tried because a task of its class found no node this session."""
        self._failed_class[task.uid] = task.class_id

    def record_schedulable(self, task: TaskState) -> None:
        """`task` found a node (whether or not its job could keep it)."""
        self._schedulable.add(task.uid)
        self._failed_class.pop(task.uid, None)
        self._attempts.pop(task.uid, None)

    def note_attempt(self, uid: str, text: str) -> None:
        """An evicting action (preempt, reclaim) tried task `uid` and found no way to place it,
        as `text` says (the latest attempt stays)."""
        self._attempts[uid] = text

    def attempt(self, uid: str) -> str:
        """What the last evicting action that tried task `uid` in vain found, or empty."""
        return self._attempts.get(uid, "")

    def forget_tries(self, uids: Iterable[str]) -> None:
        """Forget whether the tasks `uids` found a node or failed to (another try of their job,
        in another HyperNode, starts afresh, as Volcano resets a job's fit errors between
        HyperNodes)."""
        for uid in uids:
            self._schedulable.discard(uid)
            self._failed_class.pop(uid, None)

    def fit_failure(self, uid: str) -> tuple[int, FitFailure] | None:
        """The class and failure that kept task `uid` off every node, if it failed to fit."""
        class_id = self._failed_class.get(uid)
        return None if class_id is None else (class_id, self._fit_failures[class_id])

    def is_schedulable(self, uid: str) -> bool:
        """Whether task `uid` found a node this session."""
        return uid in self._schedulable

    def schedulable_count(self, job: JobState) -> int:
        """How many of the job's pending tasks found a node this session."""
        found = self._schedulable
        return sum(1 for t in job.with_status(TaskStatus.PENDING) if t.uid in found)

    # --- jobs ---------------------------------------------------------------------------------
    def note_job(self, key: str, reason: str) -> None:
        """Why job `key`'s tasks were not tried (not admitted, invalid; the first note stays)."""
        self._job_notes.setdefault(key, reason)

    def job_note(self, key: str) -> str | None:
        """The job's note, if any."""
        return self._job_notes.get(key)

    def stop_job(self, task: TaskState) -> None:
        """allocate stopped `task`'s job at `task` (it fits no node, and no other template could
        still make the gang): its later tasks were not tried (the first stop stays)."""
        if task.job is not None:
            self._job_stops.setdefault(task.job.key, task)

    def job_stop(self, key: str) -> TaskState | None:
        """The task allocate stopped job `key` at, if it did."""
        return self._job_stops.get(key)

    def hint_job(self, key: str, hint: str) -> None:
        """Add `hint` to the end of job `key`'s pending pods' messages (the first hint stays)."""
        self._job_hints.setdefault(key, hint)

    def job_hint(self, key: str) -> str | None:
        """The job's hint, if any."""
        return self._job_hints.get(key)

    def hold_job(self, key: str, reason: str) -> None:
        """Something holds back every pod of job `key`, whatever each asks (its queue is not
        Open; no HyperNode holds it whole), for `reason`: the note its pods carry, which its
        gang message starts with (the first stays)."""
        self._job_holds.setdefault(key, reason)

    def job_hold(self, key: str) -> str | None:
        """Why job `key`'s queue holds back every one of its pods, if it does."""
        return self._job_holds.get(key)

    def set_job_condition(self, key: str, condition: PodGroupCondition) -> None:
        """Set (replace by type) a condition on job `key`'s PodGroup status."""
        self._job_conditions.setdefault(key, {})[condition.type] = condition

    def conditions_of(self, key: str) -> Mapping[str, PodGroupCondition]:
        """The conditions set on job `key` this session, by type."""
        return MappingProxyType(self._job_conditions.get(key, {}))

    @property
    def job_conditions(self) -> Mapping[str, Mapping[str, PodGroupCondition]]:
        """Job key -> the conditions set on it this session (read-only)."""
        return MappingProxyType(self._job_conditions)

    @property
    def job_notes(self) -> Mapping[str, str]:
        """Job key -> its note (read-only)."""
        return MappingProxyType(self._job_notes)

    def action_failed(self, key: str, note: str, error: str) -> None:
        """An action failed on job `key`: `note` ends its pods' messages, `error` is listed."""
        self._job_notes[key] = note
        self._action_errors.append(error)

    @property
    def action_errors(self) -> tuple[str, ...]:
        """`action: podgroup ns/name: Type: message (at file:line)`, one per contained failure."""
        return tuple(self._action_errors)

    # --- queues -------------------------------------------------------------------------------
    def note_queue(self, name: str, reason: str) -> None:
        """Why queue `name` has little or no room (the first note stays)."""
        self._queue_notes.setdefault(name, reason)

    def queue_note(self, name: str) -> str:
        """`: <note>` for queue `name`, to end a message with; empty without a note."""
        note = self._queue_notes.get(name)
        return f": {note}" if note else ""

    # --- victims ------------------------------------------------------------------------------
    def note_victim(self, uid: str, strategy: str, reason: str, *, budgeted: bool = False) -> None:
        """Why a victim-tasks plugin proposed task `uid` (a later note replaces an earlier one);
        `budgeted`: the plugin held it to a disruption budget of its own (shuffle's caps then
        leave it alone)."""
        self._victim_notes[uid] = (strategy, reason)
        if budgeted:
            self._budgeted.add(uid)
        else:
            self._budgeted.discard(uid)

    def budgeted(self, uid: str) -> bool:
        """Whether victim `uid` was proposed within its proposer's own disruption budget."""
        return uid in self._budgeted

    @property
    def victim_notes(self) -> Mapping[str, tuple[str, str]]:
        """Task uid -> (strategy, reason) of every proposed victim noted (read-only)."""
        return MappingProxyType(self._victim_notes)

    def victim_note(self, uid: str) -> tuple[str, str]:
        """(strategy, reason) noted for victim `uid`, or two empty strings."""
        return self._victim_notes.get(uid, ("", ""))
