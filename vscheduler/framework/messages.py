"""Pending reasons: the message each unscheduled pod carries in its PodScheduled condition.

A pod that found no node gets kube-scheduler's aggregate of its nodes' failures
("0/5 nodes are available: 2 node(s) had untolerated taint {k: v}, 3 Insufficient cpu."),
each `<count> <reason>` sorted as a string as kube-scheduler sorts them, and, when its job is a
gang that is not ready, the gang's shortfall. A pod that found a node but whose gang could not
start gets the gang's shortfall alone. Reasons found outside node fitting (missing PodGroup or
queue, a job not admitted, a malformed pod, a plugin that raised about the pod) are given as they
are. A pod its queue refused (no room, overused, Closed) that would also find no node gets both,
the nodes' aggregate first (kube-scheduler's words), then the queue's reason. A job's hint
(preempt or reclaim passed over pods whose eviction was refused) ends the message after a `;`.
A pod pipelined on a node (waiting for room being released there: the victims preempt or reclaim
evicted for it) gets Volcano's `Pod ns/p can possibly be assigned to n, once resource is
released and minAvailable is satisfied` (`waiting`). A pod that keeps its nomination to a node
but was not tried in the cycle, with nothing else to say, says so (`nominated_untried`). A pod
allocate did not try because it stopped the pod's job at an earlier pod that fits no node names
that pod and its nodes' aggregate (`job_stopped`), when nothing more specific applies. A pod that
preempt or reclaim tried in vain, with nothing more specific to say, gets what the action found
in kube-scheduler's words for a failed preemption (`reclaim: 0/3 nodes are available: 3 No
preemption victims found for incoming pod.`), after the stop when there was one. A pod
with a scheduling gate is not tried; its message is the API server's (`SCHEDULING_GATED`), and
the condition the API server wrote is left as it is (`effects.status`).

Reads the session's findings (`framework.findings`), its read view, the dispatcher (the tasks a
plugin raised about, whether a gang is ready) and the placer (each node's reason); never the
session itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Final

import numpy as np

from vscheduler.framework.dispatch import Dispatcher
from vscheduler.framework.findings import Findings
from vscheduler.framework.ledger import BoolArray
from vscheduler.framework.placement import FitFailure, Placer
from vscheduler.framework.state import JobState, TaskState
from vscheduler.framework.view import SessionView
from vscheduler.model.status import TaskStatus


def waiting(task: TaskState) -> str:
    """Volcano's message for a pipelined task (`TaskSchedulingReason`, reason Unschedulable)."""
    return (
        f"Pod {task.key} can possibly be assigned to {task.node}, "
        "once resource is released and minAvailable is satisfied"
    )


def nominated_untried(task: TaskState, node: str, stopped: str = "") -> str:
    """The message of a pending pod that keeps its nomination (`status.nominatedNodeName`) to
    `node`, its room held there, but that no action tried in this cycle (its job stopped at an
    earlier pod, `stopped` as `job_stopped` says it, or no action reached it): kube-scheduler
    would keep the message of its last attempt, Volcano would give its job's generic one."""
    why = f": {stopped}" if stopped else ""
    return (
        f"Pod {task.key} waits for its nominated node {node}, where its room is held;"
        f" it was not tried in this cycle{why}"
    )


def job_stopped(stop: TaskState, reason: str) -> str:
    """Why a later pod of `stop`'s job was not tried: allocate stopped the job at `stop`, which
    fits no node for `reason` (its nodes' aggregate), as Volcano stops a job at its first task
    that fits nowhere when no other task could still make the gang."""
    return f"allocate stopped its job at pod {stop.key} ({reason.rstrip('.')})"


def fit_error(placer: Placer, task: TaskState, failure: FitFailure) -> str:
    """kube-scheduler's FitError text for one failed attempt; for one within a HyperNode,
    counting its nodes only, after Volcano's `In hyperNode <name>: `."""
    within = failure.within
    text = _fit_error(placer, task, failure, within)
    return f"In hyperNode {failure.domain}: {text}" if failure.domain else text


def _fit_error(
    placer: Placer, task: TaskState, failure: FitFailure, within: BoolArray | None
) -> str:
    total = len(placer.ledger) if within is None else int(within.sum())
    if not total:
        return "no nodes available to schedule pods"  # kube-scheduler's ErrNoNodesAvailable
    head = f"0/{total} nodes are available"
    if failure.prefilter is not None:
        return f"{head}: {failure.prefilter.reason}."
    reasons: Counter[str] = Counter()
    failing = ~failure.pred_ok if within is None else ~failure.pred_ok & within
    for i in np.flatnonzero(failing):
        status = placer.node_status(task, int(i))
        reasons[status.reason if status is not None else "node(s) were unavailable"] += 1
    passing = failure.pred_ok if within is None else failure.pred_ok & within
    short = failure.short & passing[:, None]
    for k, name in enumerate(failure.short_names):
        count = int(short[:, k].sum())
        if count:
            reasons[f"Insufficient {name}"] += count
    if not reasons:
        return f"{head}."
    # kube-scheduler's order: the "<count> <reason>" strings sorted as strings (Go's sort.Strings)
    return f"{head}: " + ", ".join(sorted(f"{n} {r}" for r, n in reasons.items())) + "."


def gang_shortfall(job: JobState, schedulable: int, held: str | None = None) -> str:
    """Volcano's gang message: `N/M tasks in gang unschedulable: pod group is not ready, ...`,
    after `held` when given (what held back every pod of the job at its queue, as its pods'
    messages say it: `queue q is Closed (proportion: ...). 1/1 tasks in gang ...`)."""
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
    cause = f"{held.rstrip('.')}. " if held else ""
    return (
        f"{cause}{unready}/{len(job.tasks)} tasks in gang unschedulable: "
        f"pod group is not ready, {histogram}{detail}"
    )


def gang_message(findings: Findings, job: JobState) -> str:
    """The gang shortfall for `job`: its Unschedulable condition message if a plugin set one,
    else computed from the job's task counts (after what held back all of its pods at its
    queue, if anything did)."""
    cond = findings.conditions_of(job.key).get("Unschedulable")
    if cond is not None and cond.status == "True":
        return cond.message
    return gang_shortfall(job, findings.schedulable_count(job), findings.job_hold(job.key))


def unschedulable(
    view: SessionView,
    pending_at_open: Iterable[TaskState],
    findings: Findings,
    dispatch: Dispatcher,
    placer: Placer,
    nominated: Mapping[str, str],
) -> dict[str, str]:
    """pod key -> message, for every pod of this scheduler still pending at session close, in
    task order (`pending_at_open`: the tasks pending as the session opened, in task order; no
    task becomes pending in a session unless it was then). `nominated`: pod key -> node, the
    pods that keep an honoured nomination without having been tried (`nominated_untried`, in
    place of the generic message)."""
    by_class: dict[int, str] = {}
    out: dict[str, str] = {}
    sources = _Sources(findings, dispatch, placer, nominated)
    for task in pending_at_open:
        if task.status is not TaskStatus.PENDING or task.node is not None:
            continue
        if task.facts.scheduler_name != view.snapshot.scheduler_name:
            continue
        message = _message(sources, task, by_class)
        hint = findings.job_hint(task.job.key) if task.job is not None else None
        out[task.key] = f"{message.rstrip('.')}; {hint}" if hint else message
    return out


class _Sources:
    __slots__ = ("dispatch", "findings", "nominated", "placer")

    def __init__(
        self,
        findings: Findings,
        dispatch: Dispatcher,
        placer: Placer,
        nominated: Mapping[str, str],
    ) -> None:
        self.findings, self.dispatch, self.placer = findings, dispatch, placer
        self.nominated = nominated


def _own_and_gang(sources: _Sources, task: TaskState) -> tuple[str, str]:
    """The task's own note, and its job's gang message when the job is a gang that is not
    ready. A note that says what held back every pod of the job (its queue not Open) is left
    to the gang message, which starts with it."""
    findings, job = sources.findings, task.job
    own = findings.task_note(task.uid)
    if job is None or job.min_member <= 1 or sources.dispatch.is_job_ready(job):
        return own, ""
    gang = gang_message(findings, job)
    held = findings.job_hold(job.key)
    if held and own == held and gang.startswith(held):
        return "", gang
    return own, gang


SCHEDULING_GATED: Final = "Scheduling is blocked due to non-empty scheduling gates"
"""The API server's message on a gated pod's PodScheduled condition (reason SchedulingGated),
which is left as it is."""


def _message(sources: _Sources, task: TaskState, by_class: dict[int, str]) -> str:
    if task.facts.problem:
        return task.facts.problem
    if task.facts.scheduling_gated:
        return SCHEDULING_GATED
    findings, dispatch = sources.findings, sources.dispatch
    failed = dispatch.failed_tasks.get(task.uid)
    if failed is not None:
        return failed
    job = task.job
    if job is not None:
        note = findings.job_note(job.key)
        if note is not None:
            return note
    own, gang = _own_and_gang(sources, task)
    fit = findings.fit_failure(task.uid)
    if fit is not None:
        class_id, failure = fit
        if class_id not in by_class:
            by_class[class_id] = fit_error(sources.placer, task, failure)
        own = f"{by_class[class_id].rstrip('.')}. {own}" if own else by_class[class_id]
    if own and gang:
        return f"{own.rstrip('.')}. {gang}"
    if own or gang:
        return own or gang
    return _fallback(sources, task, by_class)


def _fallback(sources: _Sources, task: TaskState, by_class: dict[int, str]) -> str:
    """The message of a pod with no reason of its own or of its gang: what preempt or reclaim
    found trying it, why allocate did not try it, that it keeps its nomination, or the generic
    words."""
    findings = sources.findings
    stopped = _stopped(sources, task, by_class)
    attempt = findings.attempt(task.uid)
    if attempt:
        return f"{stopped}. {attempt}" if stopped else attempt
    node = sources.nominated.get(task.key)
    if node is not None:
        return nominated_untried(task, node, stopped)
    if stopped:
        return f"pod was not tried in this cycle: {stopped}"
    if findings.is_schedulable(task.uid):
        return "pod fits a node but was not placed in this cycle"
    return "pod was not considered in this cycle"


def _stopped(sources: _Sources, task: TaskState, by_class: dict[int, str]) -> str:
    """`job_stopped` for a pod allocate did not try because it stopped the pod's job at an
    earlier pod, or empty."""
    findings = sources.findings
    stop = findings.job_stop(task.job.key) if task.job is not None else None
    if stop is None or stop is task or findings.is_schedulable(task.uid):
        return ""
    fit = findings.fit_failure(stop.uid)
    if fit is None:
        return ""
    class_id, failure = fit
    if class_id not in by_class:
        by_class[class_id] = fit_error(sources.placer, stop, failure)
    return job_stopped(stop, by_class[class_id])
