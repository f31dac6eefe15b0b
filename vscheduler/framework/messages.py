"""Pending reasons: the message each unscheduled pod carries in its PodScheduled condition.

A pod that found no node gets kube-scheduler's aggregate of its nodes' failures
("0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint {k: v}."),
with reasons ordered by how many nodes gave them (then alphabetically), and, when its job is a
gang that is not ready, the gang's shortfall. A pod that found a node but whose gang could not
start gets the gang's shortfall alone. Reasons found outside node fitting (missing PodGroup or
queue, a job not admitted, a malformed pod) are given as they are. A job's hint (preempt or
reclaim passed over pods whose eviction was refused) ends the message after a `;`.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from vscheduler.framework.placement import FitFailure
from vscheduler.framework.state import JobState, TaskState
from vscheduler.model.status import TaskStatus

if TYPE_CHECKING:
    from vscheduler.framework.session import Session


def fit_error(session: Session, task: TaskState, failure: FitFailure) -> str:
    """kube-scheduler's FitError text for one failed attempt."""
    total = len(session.ledger)
    head = f"0/{total} nodes are available"
    if failure.prefilter is not None:
        return f"{head}: {failure.prefilter.reason}."
    reasons: Counter[str] = Counter()
    for i in np.flatnonzero(~failure.pred_ok):
        status = session.placer.node_status(task, int(i))
        reasons[status.reason if status is not None else "node(s) were unavailable"] += 1
    short = failure.short & failure.pred_ok[:, None]
    for k, name in enumerate(failure.short_names):
        count = int(short[:, k].sum())
        if count:
            reasons[f"Insufficient {name}"] += count
    if not reasons:
        return f"{head}."
    parts = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
    return f"{head}: " + ", ".join(f"{n} {r}" for r, n in parts) + "."


def gang_shortfall(job: JobState, schedulable: int) -> str:
    """Volcano's gang message: `N/M tasks in gang unschedulable: pod group is not ready, ...`."""
    unready = max(job.min_member - job.ready_num() - schedulable, 0)
    counts: Counter[str] = Counter()
    for status in TaskStatus:
        n = job.count(status)
        if n:
            counts[status.value] = n
    counts["minAvailable"] = job.min_member
    histogram = ", ".join(sorted(f"{n} {s}" for s, n in counts.items()))
    pending = job.count(TaskStatus.PENDING)
    detail = ""
    if pending:
        unsched = pending - schedulable
        parts = []
        if schedulable:
            parts.append(f"{schedulable} Schedulable")
        if unsched:
            parts.append(f"{unsched} Unschedulable")
        detail = "; Pending: " + ", ".join(parts)
    return (
        f"{unready}/{len(job.tasks)} tasks in gang unschedulable: "
        f"pod group is not ready, {histogram}{detail}"
    )


def unschedulable(session: Session) -> dict[str, str]:
    """pod key -> message, for every pod of this scheduler still pending at session close."""
    by_class: dict[int, str] = {}
    out: dict[str, str] = {}
    for task in session.tasks.values():
        if task.status is not TaskStatus.PENDING or task.node is not None:
            continue
        if task.facts.scheduler_name != session.snapshot.scheduler_name:
            continue
        message = _message(session, task, by_class)
        hint = session.job_hints.get(task.job.key) if task.job is not None else None
        out[task.key] = f"{message.rstrip('.')}; {hint}" if hint else message
    return out


def _message(session: Session, task: TaskState, by_class: dict[int, str]) -> str:
    if task.facts.problem:
        return task.facts.problem
    job = task.job
    if job is not None and job.key in session.job_notes:
        return session.job_notes[job.key]
    own = session.notes.get(task.uid, "")
    class_id = session.failed_class.get(task.uid)
    if not own and class_id is not None:
        if class_id not in by_class:
            by_class[class_id] = fit_error(session, task, session.fit_failures[class_id])
        own = by_class[class_id]
    gang = ""
    if job is not None and job.min_member > 1 and not session.hooks.is_job_ready(job):
        gang = session.job_conditions_message(job)
    if own and gang:
        return f"{own.rstrip('.')}. {gang}"
    if own or gang:
        return own or gang
    if task.uid in session.schedulable:
        return "pod fits a node but was not placed in this cycle"
    return "pod was not considered in this cycle"
