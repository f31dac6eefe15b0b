"""gang: a job runs only when at least minMember of its tasks (and minTaskMember of each task
role) can run together.

Registers (Volcano's gang plugin):

- `validate_job`: invalid when some task role has fewer tasks that can still run than its
  minTaskMember ("Not enough valid pods of each task for gang-scheduling"), or the job has fewer
  such tasks than minMember ("Not enough valid tasks for gang-scheduling, valid: V, min: M").
- `compare_jobs`: jobs that are not ready first; `job_order_key` the same as a key (jobOrderKey,
  ours: 1 when ready).
- `is_job_ready`: placed tasks plus pending best-effort tasks reach minMember, and each task role
  reaches its minTaskMember.
- `vote_pipelined`: PERMIT when placed plus pipelined (plus pending best-effort) tasks reach
  minMember and each role its minTaskMember; REJECT otherwise.
- `is_job_starving`: placed plus pipelined tasks fall short of minMember.
- `select_preemptees` / `select_reclaimees`: never take a job below minMember: a job with R
  ready tasks gives at most R - minMember victims, in candidate order. Always answers.
- `select_gang_victims` (unifiedEvictable, gangpreempt and gangreclaim): every candidate. Those
  actions keep gangs whole themselves (their safe and whole bundles), as in Volcano.
- `on_session_close`: writes the PodGroup condition Volcano writes (and, unlike Volcano, turns an
  earlier `Unschedulable=True` to False once the gang is ready). An admitted job that is not
  ready gets `Unschedulable` (reason `NotEnoughResources`, message "U/T tasks in gang
  unschedulable: ...", after what held back every one of its pods at its queue, in their words,
  when its queue is not Open: `queue q is Closed (proportion: ...). 1/1 tasks in gang ...`), a
  ready one `Scheduled` (none when its PodGroup says so already: the condition keeps the time it
  last changed); a job that was invalid when the session opened
  gets `Unschedulable` with the validation reason and message, as Volcano's session open does.
  A job not admitted by enqueue (phase Pending) gets `Unschedulable` (`NotEnoughResources`)
  with the reason it was not admitted; one with no reason noted, a valid job without tasks, and
  an unready job whose releasing pods (still on their nodes) make up its gang with nothing left
  to place (`held_while_releasing`, Volcano's shouldSkipUnschedulableForReleasing) get no gang
  condition.

"Placed" means Allocated, Binding, Bound, Running or Succeeded; the minTaskMember checks apply
only when minMember is at least the sum of the minTaskMember values (Volcano's rule), and a task's
role is its `volcano.sh/task-spec` annotation, else label, else "" (so the minTaskMember key ""
counts the pods without a role, as Volcano's `getTaskRole` has it). It takes no arguments.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import (
    ArgumentReader,
    EvictionContext,
    JobOrder,
    JobOrderKey,
    JobPipelined,
    JobReady,
    JobStarving,
    JobState,
    JobValid,
    PluginSession,
    PodGroupCondition,
    PodGroupPhase,
    Preemptable,
    Reclaimable,
    SessionClose,
    Status,
    TaskState,
    TaskStatus,
    UnifiedEvictable,
    Vote,
    gang_shortfall,
    says_unschedulable,
    task_status,
    unresolvable,
)

NAME: Final = "gang"

UNSCHEDULABLE: Final = "Unschedulable"
SCHEDULED: Final = "Scheduled"
NOT_ENOUGH_RESOURCES: Final = "NotEnoughResources"
NOT_ENOUGH_TASKS: Final = "NotEnoughTasks"
NOT_ENOUGH_PODS_OF_TASK: Final = "NotEnoughPodsOfTask"
READY_REASON: Final = "tasks in gang are ready to be scheduled"
ROLES_INVALID: Final = "Not enough valid pods of each task for gang-scheduling"

_PLACED: Final = task_status.READY_FOR_GANG
_VALID: Final = _PLACED | {TaskStatus.PIPELINED, TaskStatus.PENDING}
_PIPELINED: Final = _PLACED | {TaskStatus.PIPELINED}
_SCHEDULED: Final = task_status.TERMINATED | {TaskStatus.RUNNING, TaskStatus.BOUND}


# --- job arithmetic (Volcano's JobInfo.IsReady, IsPipelined, IsStarving, CheckTask*) ------------
def is_ready(job: JobState) -> bool:
    """Placed tasks plus pending best-effort tasks reach minMember."""
    return job.ready_num() + job.pending_best_effort_num() >= job.min_member


def is_pipelined(job: JobState) -> bool:
    """Placed, pipelined and pending best-effort tasks reach minMember."""
    placed = job.ready_num() + job.waiting_num()
    return placed + job.pending_best_effort_num() >= job.min_member


def is_starving(job: JobState) -> bool:
    """Placed and pipelined tasks fall short of minMember."""
    return job.ready_num() + job.waiting_num() < job.min_member


def _role_counts(
    tasks: Iterable[TaskState], statuses: frozenset[TaskStatus], *, best_effort_pending: bool
) -> Counter[str]:
    counts: Counter[str] = Counter()
    for task in tasks:
        if task.status in statuses or (
            best_effort_pending and task.status is TaskStatus.PENDING and task.facts.best_effort
        ):
            counts[task.facts.task_role] += 1
    return counts


def roles_reach(
    job: JobState, statuses: frozenset[TaskStatus], *, best_effort_pending: bool = True
) -> bool:
    """Every task role has at least its minTaskMember tasks in `statuses` (pending best-effort
    tasks counting too when asked). Always true when minMember is below the roles' sum."""
    wanted = job.facts.min_task_member
    if not wanted or job.min_member < sum(wanted.values()):
        return True
    counts = _role_counts(job.tasks.values(), statuses, best_effort_pending=best_effort_pending)
    return all(counts[role] >= n for role, n in wanted.items())


def held_while_releasing(job: JobState) -> bool:
    """Volcano's shouldSkipUnschedulableForReleasing: the job has releasing pods (deleted, still
    on their nodes, so still holding their slots), none pending or pipelined, and its scheduled
    tasks (running, bound, succeeded, failed) with the releasing ones reach minMember."""
    releasing = job.count(TaskStatus.RELEASING)
    if not releasing or job.count(TaskStatus.PENDING, TaskStatus.PIPELINED):
        return False
    scheduled = job.count(*_SCHEDULED)
    return scheduled + releasing >= job.min_member


def invalid_reason(job: JobState) -> tuple[str, str] | None:
    """Volcano's (reason, message) when the job cannot make its gang, or None."""
    if not roles_reach(job, _VALID, best_effort_pending=False):
        return NOT_ENOUGH_PODS_OF_TASK, ROLES_INVALID
    valid = job.valid_num()
    if valid < job.min_member:
        message = (
            f"Not enough valid tasks for gang-scheduling, valid: {valid}, min: {job.min_member}"
        )
        return NOT_ENOUGH_TASKS, message
    return None


def _said_already(job: JobState, wanted: tuple[str, str, str]) -> bool:
    """`wanted` (type, reason, message) is `Scheduled` and the PodGroup carries it already,
    true, with no `Unschedulable=True`: writing it would change nothing but its time."""
    if wanted[0] != SCHEDULED or says_unschedulable(job.facts.conditions):
        return False
    return any(
        (old.type, old.reason, old.message) == wanted and old.status == "True"
        for old in job.facts.conditions
    )


def keep_gangs(candidates: Sequence[TaskState]) -> tuple[TaskState, ...]:
    """The candidates whose eviction leaves each gang at least minMember ready tasks, taken in
    candidate order. A job of minMember 1 (a lone pod's, or a PodGroup's of one) is no gang:
    any of its pods may go, as kube-scheduler lets a lone pod go (Volcano's gang keeps its last
    pod, and the next tier's plugins then decide for it). Tasks without a job are never
    victims."""
    left: dict[str, int] = {}
    victims: list[TaskState] = []
    for task in candidates:
        job = task.job
        if job is None:
            continue
        ready = left.setdefault(job.key, job.ready_num())
        if ready > job.min_member or job.min_member <= 1:
            left[job.key] = ready - 1
            victims.append(task)
    return tuple(victims)


class Gang(
    JobOrder,
    JobOrderKey,
    JobValid,
    JobReady,
    JobPipelined,
    JobStarving,
    Preemptable,
    Reclaimable,
    UnifiedEvictable,
    SessionClose,
):
    """The per-session plugin."""

    def __init__(self, session: PluginSession, quiet: Quiet | None = None) -> None:
        self._session = session
        self._quiet = quiet if quiet is not None else Quiet()
        self._invalid_at_open: dict[str, tuple[str, str]] = {}
        known = self._quiet.jobs
        for job in session.podgroup_jobs:  # read only for the PodGroup's condition
            if known.get(job.key) is job:  # valid then, and the very same record now
                continue
            found = invalid_reason(job)
            if found is not None:
                self._invalid_at_open[job.key] = found

    def validate_job(self, job: JobState) -> Status | None:
        """None when the job can still make its gang."""
        found = invalid_reason(job)
        return None if found is None else unresolvable(found[1])

    def compare_jobs(self, a: JobState, b: JobState) -> int:
        """Jobs that are not ready first."""
        return int(is_ready(a)) - int(is_ready(b))

    def job_order_key(self, job: JobState) -> int:
        """`compare_jobs` as a key: 1 when ready."""
        return int(is_ready(job))

    def is_job_ready(self, job: JobState) -> bool:
        """The gang (and each task role's minimum) is placed."""
        return roles_reach(job, _PLACED) and is_ready(job)

    def vote_pipelined(self, job: JobState) -> Vote:
        """PERMIT when the gang is placed or pipelined, REJECT otherwise."""
        if roles_reach(job, _PIPELINED) and is_pipelined(job):
            return Vote.PERMIT
        return Vote.REJECT

    def is_job_starving(self, job: JobState) -> bool:
        """Placed and pipelined tasks fall short of minMember."""
        return is_starving(job)

    def select_preemptees(
        self, preemptor: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Victims that keep every victim job at minMember."""
        return keep_gangs(candidates)

    def select_reclaimees(
        self, reclaimer: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Victims that keep every victim job at minMember."""
        return keep_gangs(candidates)

    def select_gang_victims(
        self, context: EvictionContext, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Every candidate: the gang-aware actions' bundles keep gangs whole."""
        return tuple(candidates)

    def on_session_close(self) -> None:
        """Write each PodGroup's gang condition (a lone pod's implicit job has no PodGroup to
        carry one, and its minMember of 1 gives its pod no gang message). A ready gang whose
        PodGroup already says so (`Scheduled=True` for the same reason, no `Unschedulable=True`)
        gets none: the status written would keep the one it has (a condition's time is when it
        last changed), so a cluster of running gangs costs no condition per gang per cycle.
        Such a gang's record, or a job's without tasks, kept unchanged into the next session
        (the very same record, `job_changed` false) is not looked at again there (`Quiet`)."""
        session = self._session
        known, quiet = self._quiet.jobs, {}
        for job in session.podgroup_jobs:
            key = job.key
            if known.get(key) is job and not session.job_changed(job):
                quiet[key] = job
                continue
            wanted = self._condition(job)
            if wanted is None or _said_already(job, wanted):
                if key not in self._invalid_at_open and (wanted is not None or not job.tasks):
                    quiet[key] = job  # of the record alone: not of this session's notes
                continue
            session.set_job_condition(job, self._stamp(*wanted))
            if wanted[0] == SCHEDULED:
                self._clear_unschedulable(job)
        self._quiet.jobs = quiet

    def _clear_unschedulable(self, job: JobState) -> None:
        """A gang that became ready no longer carries `Unschedulable=True` from earlier cycles."""
        for old in job.facts.conditions:
            if old.type == UNSCHEDULABLE and old.status == "True":
                self._session.set_job_condition(
                    job,
                    dataclasses.replace(
                        self._stamp(UNSCHEDULABLE, READY_REASON, ""), status="False"
                    ),
                )

    def _condition(self, job: JobState) -> tuple[str, str, str] | None:
        """The gang condition the job's PodGroup should carry: (type, reason, message)."""
        if not is_ready(job) and held_while_releasing(job):
            return None  # its pods are terminating: not a gang that cannot be scheduled
        invalid = self._invalid_at_open.get(job.key)
        if invalid is not None:
            return UNSCHEDULABLE, invalid[0], invalid[1]
        if not job.tasks:
            return None
        if job.phase is PodGroupPhase.PENDING:
            note = self._session.job_note(job)
            return None if note is None else (UNSCHEDULABLE, NOT_ENOUGH_RESOURCES, note)
        if is_ready(job):
            return SCHEDULED, READY_REASON, ""
        session = self._session
        found = session.schedulable_count(job)
        return (
            UNSCHEDULABLE,
            NOT_ENOUGH_RESOURCES,
            gang_shortfall(job, found, session.job_hold(job)),
        )

    def _stamp(self, kind: str, reason: str, message: str) -> PodGroupCondition:
        session = self._session
        return PodGroupCondition(
            type=kind,
            status="True",
            reason=reason,
            message=message,
            transition_id=session.uid,
            last_transition_time=session.now_rfc3339(),
        )


class Quiet:
    """The jobs the last session closed found valid and with nothing to write, from their
    record alone (a ready gang whose PodGroup says so already, a job without tasks), by key:
    the record itself, so a session that takes the very same record, and does not change it,
    knows the answer without asking again (it is asked of every PodGroup every cycle)."""

    __slots__ = ("jobs",)

    def __init__(self) -> None:
        self.jobs: dict[str, JobState] = {}


class Factory:
    """Lives as long as the policy."""

    name = NAME
    plugin = Gang

    def __init__(self) -> None:
        self._quiet = Quiet()

    def open(self, session: PluginSession) -> Gang:
        """A fresh plugin for `session`, with what the last one found quiet."""
        return Gang(session, self._quiet)


def build(arguments: Mapping[str, object]) -> Factory:
    """gang takes no arguments."""
    ArgumentReader(arguments, owner=f"plugin {NAME}").finish()
    return Factory()
