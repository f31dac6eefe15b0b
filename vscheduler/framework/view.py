"""What of a session others may see: the read view, and the narrow view plugins are handed.

Owns: `SessionView` (the cycle's clock, snapshot, tasks, jobs, queues and ledger, read-only) and
`PluginSession` (that, plus the findings plugins read, whether a plugin's entry enables
hierarchy, a queue's verdict on whether a job can progress, and the few calls they may make:
report a queue's figures, note a queue, a job or a proposed victim, set a PodGroup condition,
release a reservation, ask for a cycle when an answer changes with time).
`framework.session.Session` satisfies both; a plugin annotates with `PluginSession`, so mypy
stops it calling the Statement-only mutators (`apply_allocate`, ...) or writing the findings
behind the session's back.
Must not: import the session (it is what breaks the session <-> statement <-> messages circle).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Protocol

from vscheduler.clock import Clock
from vscheduler.framework.ledger import IntArray, LedgerView
from vscheduler.framework.state import JobState, QueueState, QueueTotals, TaskState
from vscheduler.framework.topology import SessionTopology
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Evict, QueueFigures, ReservationRelease
from vscheduler.model.facts import PodGroupCondition


class SessionView(Protocol):
    """One cycle's state, to read."""

    @property
    def clock(self) -> Clock:
        """The clock the session was handed (hooks read time only from it, or `now`)."""
        ...

    @property
    def now(self) -> dt.datetime:
        """The session's time, read once at open."""
        ...

    @property
    def uid(self) -> str:
        """The session's id (condition transition ids)."""
        ...

    @property
    def snapshot(self) -> ClusterSnapshot:
        """The cluster as the cycle saw it."""
        ...

    @property
    def tasks(self) -> Mapping[str, TaskState]:
        """Task uid -> its state this session."""
        ...

    @property
    def tasks_with_host_ports(self) -> tuple[TaskState, ...]:
        """The tasks that ask host ports."""
        ...

    @property
    def tasks_with_terms(self) -> tuple[TaskState, ...]:
        """The tasks with inter-pod terms or spread constraints, in task order."""
        ...

    @property
    def jobs(self) -> Mapping[str, JobState]:
        """Job key -> its state this session."""
        ...

    @property
    def podgroup_jobs(self) -> tuple[JobState, ...]:
        """The jobs that are PodGroups (not a lone pod's implicit job), in job order."""
        ...

    @property
    def queues(self) -> Mapping[str, QueueState]:
        """Queue name -> its state this session."""
        ...

    @property
    def queue_totals(self) -> QueueTotals:
        """Per queue, as the session opened: its plain jobs' allocation and every job's pending
        request, summed."""
        ...

    @property
    def ledger(self) -> LedgerView:
        """The nodes' resource accounting (rows = nodes, columns = `ledger.dims`): read only."""
        ...

    @property
    def evictions(self) -> tuple[Evict, ...]:
        """The evictions committed so far this session."""
        ...

    @property
    def topology(self) -> SessionTopology:
        """The HyperNode tree over the session's nodes (made on first use)."""
        ...

    def queue_of(self, job: JobState) -> QueueState | None:
        """The job's queue, or None if it does not exist."""
        ...

    def request_row(self, task: TaskState) -> IntArray:
        """The task's request as a ledger row (shared per class: do not modify)."""
        ...

    def now_rfc3339(self) -> str:
        """The session's clock as RFC3339 (for condition timestamps)."""
        ...


class PluginSession(SessionView, Protocol):
    """What a plugin may read of its session, and the few calls it may make."""

    def hierarchy_enabled(self, plugin: str) -> bool:
        """Whether the policy entry of `plugin` (the first, by that name) sets
        `enableHierarchy: true` (Volcano's `ssn.HierarchyEnabled`)."""
        ...

    def job_note(self, job: JobState) -> str | None:
        """Why the job's tasks were not tried this session (not admitted, invalid), if noted."""
        ...

    def job_changed(self, job: JobState) -> bool:
        """Whether this session changed the job's record (moved one of its tasks, set its
        phase). A record the next session takes again is the very same object only when
        nothing of it changed (`Carried`): a plugin may keep what it read of a record for the
        next session, keyed by the record itself, while this is false."""
        ...

    def schedulable_count(self, job: JobState) -> int:
        """How many of the job's pending tasks found a node this session."""
        ...

    def job_hold(self, job: JobState) -> str | None:
        """Why every one of the job's pods was held back this session, whatever they ask (the
        queue is not Open; no HyperNode holds the job whole), in the words of their pending
        messages (`queue q is Closed (proportion: ...)`), if they were: the job's gang message
        starts with it (`gang_shortfall(job, schedulable, held)`)."""
        ...

    def queue_allows_progress(self, job: JobState) -> bool:
        """Whether the job's queue would let it allocate one of its pending tasks now (the
        allocatable point, as allocate asks it); True for a job without a queue or without a
        pending task. Ask it from a hook, not while opening: the points join after every
        plugin has opened."""
        ...

    def report_queue(self, figures: QueueFigures) -> None:
        """A queue's figures for the metrics (at session close; a later report replaces)."""
        ...

    def note_queue(self, name: str, reason: str) -> None:
        """Why queue `name` has little or no room (the first note stays)."""
        ...

    def note_job(self, job: JobState, reason: str) -> None:
        """Why a job's tasks were not tried (the first note stays)."""
        ...

    def note_victim(
        self, task: TaskState, strategy: str, reason: str, *, budgeted: bool = False
    ) -> None:
        """Why a victim-tasks plugin proposes `task` (shuffle puts it on the eviction).
        `budgeted=True`: the plugin already held its victims to a disruption budget of its own
        (tdm's `jdb-*` annotations), so shuffle's `maxEvictionsPerNode`/`maxEvictionsPerRun`
        caps do not apply to it; its other rails do."""
        ...

    def set_job_condition(self, job: JobState, condition: PodGroupCondition) -> None:
        """Set (replace by type) a condition on the job's PodGroup status."""
        ...

    def record_release(self, release: ReservationRelease) -> None:
        """A reservation is done: its ConfigMap key goes."""
        ...

    def revisit(self, at: dt.datetime) -> None:
        """An answer of this session changes by itself at `at`, nothing else changing (a
        protection that ends): the cycle's result asks for a cycle then (`revisit_at`, the
        earliest asked), so what waited for it is tried again at once."""
        ...
