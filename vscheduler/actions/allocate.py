"""allocate: place pending tasks of admitted jobs, gang by gang, queue by queue.

Queues are taken in queue order (overused queues are skipped), one job per turn in job order, tasks
in task order. For each task: the queue's allocatable vote, pre-predicates, then the placer
(predicates, resource fit, scores; idle first, then future idle): a task nominated to a node sees
the room held there for it free (`Session.own_room`) and takes that node when it fits there, every
other task sees the room taken. A job's placements form one statement: committed when the job is
ready, kept when it is pipelined, discarded otherwise. A job that becomes ready with tasks left goes
back into its queue, so other jobs get a turn (Volcano's fairness). With no `enqueue` action
configured, Pending jobs are treated as Inqueue.

When a task fits nowhere or fails a prePredicate, its job stops unless tasks of another
template could still make the gang (Volcano's NeedContinueAllocating, by template rather than by
task role; after a prePredicate failure as Volcano since b83a5e7a4, June 2026); later tasks of a
template that already failed are not tried again in this turn. A task a plugin raised about is
skipped alone (`Dispatcher.failed_tasks`); its job goes on with its other tasks. An exception
while placing one job discards that job's statement and reports it (`Session.contained`).

A task its queue refuses (the allocatable vote, or an overused queue) is noted with the plugin's
`Refusal` (the limit and the numbers, or Closed), and is tried on the nodes for its message only
(nothing is placed): when no node would take it either, its message says so first. A queue that
is not Open holds back every pod of its jobs: the job is noted held with that text
(`Session.hold_job`), which its gang message (the PodGroup's, too) then starts with. Each task
decided is told to `Session.decided` (with its queue's verdict) before its nodes are tried, for
`simulate --explain`.

A job with a `spec.networkTopology` (`_within_topology`) is placed whole within one domain:
allocate takes Volcano's gradient of the HyperNodes it may use (`framework.topology.gradient`:
tier by tier from the lowest, up to its `highestTierAllowed`; soft mode up to the cluster's top,
which is every node), scores each tier's HyperNodes by the hyperNodeOrder point and tries them
best first (ties by name), each try a statement of its own: the first that leaves the job ready
(or pipelined) with something placed is kept, the others discarded (Volcano's choice: the best
scored of the HyperNodes that hold it). A job already running keeps to the HyperNode its pods
share, up to its highest allowed tier. When no HyperNode holds it, every pending pod of the job
says so, after the nodes' reasons of the last HyperNode tried (`In hyperNode s3: 0/2 nodes are
available: ...`, Volcano's words), and so does its gang message (`Session.hold_job`).
Every other job takes the plain path: no HyperNode is looked at.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Mapping
from typing import Final

from vscheduler.actions.admission import admitted_jobs, settle
from vscheduler.actions.ordering import PriorityQueue
from vscheduler.conf.arguments import ArgumentReader
from vscheduler.framework.ledger import BoolArray
from vscheduler.framework.placement import FitFailure
from vscheduler.framework.results import Refusal
from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState, QueueState, TaskState
from vscheduler.framework.statement import Statement
from vscheduler.framework.topology import gradient, limit
from vscheduler.model.facts import NetworkTopology
from vscheduler.model.topology import CLUSTER_TOP

NAME: Final = "allocate"


class Allocate:
    """The allocate action."""

    name = NAME

    def execute(self, session: Session) -> None:
        """Place what fits."""
        dispatch = session.dispatch
        by_queue = admitted_jobs(session)
        queues: PriorityQueue[QueueState] = PriorityQueue(
            dispatch.compare_queues, (session.queues[name] for name in sorted(by_queue))
        )
        jobs = {
            name: PriorityQueue(dispatch.compare_jobs, items, key=dispatch.job_key)
            for name, items in by_queue.items()
        }
        pending: dict[str, deque[TaskState]] = {}
        while queues:
            queue = queues.pop()
            waiting = jobs[queue.name]
            if dispatch.is_overused(queue):
                _note_overused(session, queue, _drain(waiting))
                continue
            job = waiting.pop()
            if job.key not in pending:
                pending[job.key] = deque(session.pending_tasks(job, best_effort=False))
            tasks = pending[job.key]
            if tasks and job.facts.network_topology is not None:
                trying: list[Statement] = []
                with session.contained(NAME, job, functools.partial(_discard, trying)):
                    self._within_topology(session, job, tasks, waiting, queue, trying)
            elif tasks:
                stmt = session.statement()
                with session.contained(NAME, job, stmt.discard):
                    self._place(session, stmt, job, tasks, waiting, queue)
                    settle(session, stmt, job)
            if waiting:
                queues.push(queue)

    def _place(
        self,
        session: Session,
        stmt: Statement,
        job: JobState,
        tasks: deque[TaskState],
        waiting: PriorityQueue[JobState],
        queue: QueueState,
        *,
        within: tuple[BoolArray, str] | None = None,
    ) -> bool:
        """Place `job`'s `tasks` (on the nodes of `within` only, a HyperNode's, when given);
        whether its queue refused any of them."""
        dispatch, placer = session.dispatch, session.placer
        failed: set[int] = set()
        unfit: set[int] = set()
        refusals = False
        while tasks:
            task = tasks.popleft()
            refused = dispatch.allocation_refuser(queue, task)
            if refused is not None:
                text = _refusal_text(session, queue, *refused)
                _refused(session, queue, job, task, text, unfit)
                refusals = True
                continue
            session.decided(task, queue)
            if task.class_id in failed and task.uid not in session.nominations:
                session.findings.failed_like_its_class(task)
                continue
            pre = dispatch.prefilter(task)
            if pre is not None:
                session.findings.record_fit_failure(task, placer.failure(task, None, None, pre))
                if _stops(session, job, task, tasks, failed):
                    break
                continue
            with session.own_room(task):
                choice = placer.choose(task, session.nominations.get(task.uid), *within or ())
                if not isinstance(choice, FitFailure):
                    session.findings.record_schedulable(task)
                    if choice.fits_idle:
                        stmt.allocate(task, choice.node)
                    else:
                        stmt.pipeline(task, choice.node)
            if isinstance(choice, FitFailure):
                session.findings.record_fit_failure(task, choice)
                if _stops(session, job, task, tasks, failed):
                    break
                continue
            if tasks and dispatch.is_job_ready(job):
                waiting.push(job)
                break
        return refusals

    def _within_topology(
        self,
        session: Session,
        job: JobState,
        tasks: deque[TaskState],
        waiting: PriorityQueue[JobState],
        queue: QueueState,
        trying: list[Statement],
    ) -> None:
        """Place `job` (with a network topology) whole within one domain, or say why not
        (`trying`: the statement of the try in progress, for `Session.contained` to undo)."""
        wanted = job.facts.network_topology
        assert wanted is not None
        view = session.topology
        bound = limit(wanted, view.tree)
        if bound.problem:
            _hold(session, job, tasks, bound.problem)
            return
        if bound.highest is None:  # no constraint (as Volcano reads the spec)
            stmt = session.statement()
            trying[:] = [stmt]
            self._place(session, stmt, job, tasks, waiting, queue)
            settle(session, stmt, job)
            return
        found = gradient(view, job, bound.highest, view.job_domain(job))
        if found.problem:
            _hold(session, job, tasks, f"{_constraint(wanted, bound.highest)}: {found.problem}")
            return
        dispatch, tried, refusals = session.dispatch, 0, False
        for candidates in found.tiers:
            scores = dispatch.score_hypernodes(job, candidates)
            for k in sorted(range(len(candidates)), key=lambda k: (-scores[k], candidates[k])):
                domain = candidates[k]
                trial = deque(tasks)
                session.findings.forget_tries(t.uid for t in trial)
                stmt = session.statement()
                trying[:] = [stmt]
                where = None if domain == CLUSTER_TOP else (view.mask(domain), domain)
                refusals |= self._place(session, stmt, job, trial, waiting, queue, within=where)
                tried += 1
                if len(stmt) and (dispatch.is_job_ready(job) or dispatch.is_job_pipelined(job)):
                    settle(session, stmt, job)
                    tasks.clear()
                    tasks.extend(trial)
                    return
                stmt.discard()
        trying.clear()
        if refusals:  # its queue held pods back: its pods say so, not the HyperNodes
            return
        if bound.highest < view.tree.top_tier:
            why = f"no HyperNode of tier {bound.highest} or lower holds the job whole"
        else:
            why = "no HyperNode, nor the whole cluster, holds the job"
        _hold(session, job, tasks, f"{_constraint(wanted, bound.highest)}: {why} ({tried} tried)")


def _discard(trying: list[Statement]) -> None:
    for stmt in trying:
        stmt.discard()


def _constraint(wanted: NetworkTopology, highest: int) -> str:
    """`networkTopology hard, highestTierAllowed 1` (or `highestTierName rack (tier 2)`, or
    `soft`)."""
    if wanted.is_soft:
        return "networkTopology soft"
    if wanted.highest_tier is None and wanted.highest_tier_name:
        return f"networkTopology hard, highestTierName {wanted.highest_tier_name} (tier {highest})"
    return f"networkTopology hard, highestTierAllowed {highest}"


def _hold(session: Session, job: JobState, tasks: deque[TaskState], reason: str) -> None:
    """No domain holds `job`: its gang message starts with `reason`, and each of its pending
    pods says it."""
    session.hold_job(job, reason)
    for task in tasks:
        session.note_task(task, reason)


def _refused(
    session: Session,
    queue: QueueState,
    job: JobState,
    task: TaskState,
    refusal: str,
    unfit: set[int],
) -> None:
    """`task`'s queue refused it (`refusal`): noted, with whether a node would take it (`unfit`:
    see `_check_fit`); a queue that is not Open holds back every pod of the job, which its gang
    message then names."""
    if not queue.facts.is_open:
        session.hold_job(job, refusal)
    session.decided(task, queue, refusal)
    _check_fit(session, task, unfit, set())
    session.note_task(task, refusal)


def _check_fit(session: Session, task: TaskState, unfit: set[int], fit: set[int]) -> None:
    """Record whether `task`, refused by its queue, would also find no node, so its message
    names both (node fit first, as kube-scheduler words it). Nothing is placed. `unfit` and
    `fit`: the classes already found to fit no node, or some node, while the nodes stay as they
    are (placements only take room, so a class that fits no node still fits none within a job's
    turn; one that fits may stop fitting: pass a fresh `fit` then)."""
    if task.class_id in unfit:
        session.findings.failed_like_its_class(task)
        return
    if task.class_id in fit:
        return
    placer = session.placer
    pre = session.dispatch.prefilter(task)
    failure = placer.failure(task, None, None, pre) if pre is not None else None
    if failure is None:
        with session.own_room(task):
            choice = placer.choose(task)
        failure = choice if isinstance(choice, FitFailure) else None
    if failure is None:
        fit.add(task.class_id)
        return
    unfit.add(task.class_id)
    session.findings.record_fit_failure(task, failure)


def _refusal_text(session: Session, queue: QueueState, plugin: str, refusal: Refusal) -> str:
    """`queue q has no room left for this pod (proportion: allocated cpu 6 + this pod's cpu 2
    exceed its deserved share cpu 6)`, then the queue's note."""
    reason = refusal.reason or "it refused the pod"
    note = session.queue_note(queue.name)
    return f"queue {queue.name} {refusal.headline} ({plugin}: {reason}){note}"


def _note_overused(session: Session, queue: QueueState, jobs: list[JobState]) -> None:
    """Every pending task of `jobs` in overused `queue` says so, with the numbers of the
    allocatable vote when it refuses too, after its node-fit failure when it has one (each task
    class is tried on the nodes once: nothing is placed meanwhile)."""
    unfit: set[int] = set()
    fit: set[int] = set()
    note = session.queue_note(queue.name)
    tasks = ((j, t) for j in jobs for t in session.pending_tasks(j, best_effort=False))
    for job, task in tasks:
        refused = session.dispatch.allocation_refuser(queue, task)
        if refused is not None and not queue.facts.is_open:
            text = _refusal_text(session, queue, *refused)
            session.hold_job(job, text)
        else:
            why = f" ({refused[0]}: {refused[1].reason})" if refused and refused[1].reason else ""
            text = f"queue {queue.name} is overused{why}{note}"
        session.decided(task, queue, text)
        _check_fit(session, task, unfit, fit)
        session.note_task(task, text)


def _stops(
    session: Session, job: JobState, task: TaskState, tasks: deque[TaskState], failed: set[int]
) -> bool:
    """After `task` fitted nowhere or failed a prePredicate: whether its job stops there (noted
    on the task). A task a plugin raised about is skipped alone; otherwise its template has
    failed, and the job goes on only while the tasks of other templates could make the gang."""
    if task.uid in session.dispatch.failed_tasks:
        return False
    failed.add(task.class_id)
    if _may_continue(job, tasks, failed):
        return False
    session.findings.stop_job(task)
    return True


def _may_continue(job: JobState, tasks: deque[TaskState], failed: set[int]) -> bool:
    """Could the tasks of templates that have not failed still make the gang?"""
    if job.min_member >= len(job.tasks):
        return False
    hopeful = sum(1 for t in tasks if t.class_id not in failed)
    return job.ready_num() + job.waiting_num() + hopeful >= job.min_member


def _drain(queue: PriorityQueue[JobState]) -> list[JobState]:
    out = []
    while queue:
        out.append(queue.pop())
    return out


def build(arguments: Mapping[str, object]) -> Allocate:
    """The allocate action. Volcano's `enablePredicateErrorCache` is accepted (our per-class
    evaluation cache always plays that role)."""
    reader = ArgumentReader(arguments, owner="action allocate")
    reader.bool("enablePredicateErrorCache", True)
    reader.finish()
    return Allocate()
