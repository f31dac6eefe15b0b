"""Decisions: what one cycle decided, and the PodGroup statuses it ends with.

Owns: the binds and evictions committed Statements recorded, the reservation releases and queue
figures plugins reported, each PodGroup's end-of-session status (Volcano's phase rule), and
assembling them with the pending messages into the `CycleResult`.
Must not: change task state (the session moves a task to Binding before recording its bind) or
be written by anything but the session, for a committed Statement or a plugin's report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from vscheduler.framework.findings import Findings
from vscheduler.framework.state import JobState, TaskState
from vscheduler.model import status as st
from vscheduler.model.commands import (
    Bind,
    CycleResult,
    Evict,
    PodGroupStatus,
    QueueFigures,
    ReservationRelease,
)
from vscheduler.model.facts import PodGroupCondition, says_unschedulable
from vscheduler.model.resources import Resources
from vscheduler.model.status import PodGroupPhase, TaskStatus


class Decisions:
    """One session's decisions, in the order they were made."""

    __slots__ = ("_binds", "_evictions", "_queue_figures", "_releases")

    def __init__(self) -> None:
        self._binds: list[Bind] = []
        self._evictions: list[Evict] = []
        self._releases: list[ReservationRelease] = []
        self._queue_figures: dict[str, QueueFigures] = {}

    def bind(self, task: TaskState) -> Bind:
        """A committed allocation of `task` to its node (the Bind recorded)."""
        bind = Bind(task_uid=task.uid, pod=task.key, node=task.node or "")
        self._binds.append(bind)
        return bind

    def evict(self, task: TaskState, reason: str, *, action: str, strategy: str, plan: str) -> None:
        """A committed eviction (`plan`: see `Evict`)."""
        self._evictions.append(
            Evict(
                task_uid=task.uid,
                pod=task.key,
                node=task.node or "",
                reason=reason,
                action=action,
                strategy=strategy,
                plan=plan,
            )
        )

    def release(self, release: ReservationRelease) -> None:
        """A reservation is done (its pod placed, or expired): its ConfigMap key goes."""
        self._releases.append(release)

    def report_queue(self, figures: QueueFigures) -> None:
        """A queue's figures; a later report of the same queue replaces an earlier one."""
        self._queue_figures[figures.name] = figures

    @property
    def evictions(self) -> tuple[Evict, ...]:
        """The evictions committed so far."""
        return tuple(self._evictions)

    def result(
        self,
        pipelined: dict[str, str],
        nominated: dict[str, str],
        podgroups: dict[str, PodGroupStatus],
        unschedulable: dict[str, str],
        queue_allocated: Mapping[str, Resources] | None = None,
        *,
        waiting: Mapping[str, str] | None = None,
    ) -> CycleResult:
        """The cycle's result: these decisions, with the session's closing findings."""
        figures = self._queue_figures
        return CycleResult(
            binds=tuple(self._binds),
            evictions=tuple(self._evictions),
            pipelined=pipelined,
            waiting=waiting or {},
            nominated=nominated,
            podgroups=podgroups,
            unschedulable=unschedulable,
            reservations_released=tuple(self._releases),
            queues={name: figures[name] for name in sorted(figures)},
            queue_allocated=queue_allocated or {},
        )


def podgroup_statuses(
    jobs: Iterable[JobState],
    findings: Findings,
    session_uid: str,
    reuse: Mapping[str, PodGroupStatus] | None = None,
) -> tuple[dict[str, PodGroupStatus], dict[str, PodGroupStatus]]:
    """Each real PodGroup's status at session close: its conditions (those set this session
    replace the old by type), counts, and phase. Also returns the statuses made from the job
    alone (no condition set this session, none `Unschedulable=True` on the PodGroup), which a
    later session may take again from `reuse` for a job whose record and facts it took
    unchanged and did not change (the same inputs make the same status)."""
    out: dict[str, PodGroupStatus] = {}
    plain: dict[str, PodGroupStatus] = {}
    reuse = reuse or {}
    found = findings.job_conditions
    for job in jobs:
        if job.facts.synthetic:
            continue
        key = job.key
        set_now = found.get(key)
        if not set_now:
            kept = reuse.get(key)
            if kept is not None:
                out[key] = plain[key] = kept
                continue
        conditions = {c.type: c for c in job.facts.conditions}
        if set_now:
            conditions.update(set_now)
        status = out[key] = PodGroupStatus(
            phase=end_phase(job, conditions, session_uid),
            conditions=tuple(conditions[k] for k in sorted(conditions)),
            running=job.count(TaskStatus.RUNNING),
            succeeded=job.count(TaskStatus.SUCCEEDED),
            failed=job.count(TaskStatus.FAILED),
            starting=job.count(TaskStatus.ALLOCATED, TaskStatus.BINDING, TaskStatus.BOUND),
        )
        if not set_now and not says_unschedulable(job.facts.conditions):
            plain[key] = status
    return out, plain


def end_phase(
    job: JobState, conditions: Mapping[str, PodGroupCondition], session_uid: str
) -> PodGroupPhase:
    """Volcano's end-of-session phase rule (`getPodGroupPhase`): Running once the placed pods
    (bound, running, releasing, succeeded or failed) reach minMember, Completed when every one
    of them has finished. Pods placed this cycle (allocated, binding) count already, where
    Volcano waits for the next session to see them bound."""
    unsched = conditions.get("Unschedulable")
    if (
        job.count(TaskStatus.RUNNING)
        and unsched is not None
        and unsched.status == "True"
        and unsched.transition_id == session_uid
    ):
        return PodGroupPhase.UNKNOWN
    # releasing pods are still on their nodes: a gang whose pods terminate stays Running;
    # finished pods, failed as well as succeeded, were placed (Volcano 9ac1c8c4f)
    finished = job.count(*st.TERMINATED)
    allocated = job.count(*st.OCCUPYING, TaskStatus.RELEASING) + finished
    if allocated >= job.min_member and allocated > 0:
        if finished == allocated:
            return PodGroupPhase.COMPLETED
        return PodGroupPhase.RUNNING
    if job.phase is not PodGroupPhase.INQUEUE:
        return PodGroupPhase.PENDING
    return job.phase
