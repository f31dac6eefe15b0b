"""priority: higher priority first, and only lower priority can be preempted.

Registers (Volcano's priority plugin):

- `compare_jobs`: the job (PodGroup) of higher priority first; `job_order_key` the same as a key
  (jobOrderKey, ours: the priority negated).
- `compare_tasks`: the pod of higher priority first.
- `select_preemptees`: a candidate of another job is a victim only if its job's priority is lower
  than the preemptor's job's; a candidate of the preemptor's own job only if its pod priority is
  lower than the preemptor's. It always answers (never abstains), as Volcano's always permits.
- `select_gang_victims` (unifiedEvictable, gangpreempt and gangreclaim): for gangpreempt, the
  candidates whose job's priority is lower than the preemptor job's; for gangreclaim, every
  candidate (reclaim is decided by fairness, not priority), as Volcano's.
- `is_job_starving`: a job is starving while fewer of its tasks are placed (ready or pipelined)
  than it has tasks.

It registers no reclaimable function: Volcano's priority plugin does not register one either, so
reclaim is decided by the other plugins. It takes no arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import (
    ArgumentReader,
    EvictionContext,
    JobOrder,
    JobOrderKey,
    JobStarving,
    JobState,
    PluginSession,
    Preemptable,
    TaskOrder,
    TaskState,
    UnifiedEvictable,
)

NAME: Final = "priority"


def _higher_first(a: int, b: int) -> int:
    """-1 when `a` is the higher priority, 1 when `b` is, 0 on a tie."""
    if a == b:
        return 0
    return -1 if a > b else 1


def may_preempt(preemptor: TaskState, preemptee: TaskState) -> bool:
    """Whether `preemptor` outranks `preemptee`: by job priority across jobs, by pod priority
    within one job. A task without a job outranks nothing and is outranked by nothing."""
    mine, theirs = preemptor.job, preemptee.job
    if mine is None or theirs is None:
        return False
    if mine.key != theirs.key:
        return theirs.priority < mine.priority
    return preemptee.priority < preemptor.priority


class Priority(JobOrder, JobOrderKey, TaskOrder, JobStarving, Preemptable, UnifiedEvictable):
    """The per-session plugin."""

    def compare_jobs(self, a: JobState, b: JobState) -> int:
        """The job of higher priority first."""
        return _higher_first(a.priority, b.priority)

    def job_order_key(self, job: JobState) -> int:
        """`compare_jobs` as a key: the priority, negated."""
        return -job.priority

    def compare_tasks(self, a: TaskState, b: TaskState) -> int:
        """The pod of higher priority first."""
        return _higher_first(a.priority, b.priority)

    def select_preemptees(
        self, preemptor: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """The candidates `preemptor` outranks."""
        return tuple(t for t in candidates if may_preempt(preemptor, t))

    def select_gang_victims(
        self, context: EvictionContext, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """gangpreempt: the candidates of jobs of lower priority than `context.job`;
        gangreclaim: every candidate."""
        if context.kind == "gangreclaim":
            return tuple(candidates)
        ceiling = context.job.priority
        return tuple(t for t in candidates if t.job is not None and t.job.priority < ceiling)

    def is_job_starving(self, job: JobState) -> bool:
        """Fewer tasks placed (ready or pipelined) than the job has."""
        return job.ready_num() + job.waiting_num() < len(job.tasks)


class Factory:
    """Lives as long as the policy."""

    name = NAME
    plugin = Priority

    def open(self, session: PluginSession) -> Priority:
        """A fresh plugin for `session`."""
        return Priority()


def build(arguments: Mapping[str, object]) -> Factory:
    """priority takes no arguments."""
    ArgumentReader(arguments, owner=f"plugin {NAME}").finish()
    return Factory()
