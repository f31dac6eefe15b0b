"""Volcano's `pkg/scheduler/actions/utils/simulate_test.go`, transcribed onto `GangEvictor`'s
trial (Volcano's `BuildNominationPlanInDomain`: evict the victims, place every pending task in
one statement, keep it only if the job is then ready or pipelined) and the placer it asks
(`prioritizeNodesForSimulate`).

Volcano's cases set a node's `Idle` and `Releasing` by hand; here a node has allocatable
resources and its pods use them: a node with idle room is an empty one, a node whose room is
only future room is filled by a Releasing pod, a node with no room is filled by a Running pod
of a job the trial does not evict. Volcano's `plan.Operations()` are the statement's operations
(`len(stmt)`). The domain is always the whole cluster here (vscheduler has no HyperNodes).

Not transcribed:
- `TestBuildNominationPlanInDomain_Guards`: nil session, job or domain (Go's nil checks; here
  the types leave none of them absent, and the domain is always the cluster);
- `TestCollectPendingTasksForJobStartup_WorksheetOrder` and
  `TestCollectPendingTasksForRunningJob_FirstWorksheetSubJobOnly`: the order of sub-jobs in the
  worksheet, and a ready job asking only for its first sub-job's pending tasks (no sub-jobs
  here: a job's pending tasks are all asked for, in task order, as Volcano's one sub-job of a
  job without sub-groups);
- `TestBuildNominationPlanInDomain_IgnoresNominatedNodeOutsideDomain`: a HyperNode domain that
  leaves out the nominated node.
"""

from __future__ import annotations

import numpy as np

from vscheduler.actions.bundles import Order
from vscheduler.actions.gangevict import Arguments, GangEvictor
from vscheduler.framework.placement import Choice
from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState, TaskState
from vscheduler.model.status import TaskStatus
from vscheduler.testing import sessions
from vscheduler.testing.builders import (
    Item,
    NodeBuilder,
    PodBuilder,
    expr,
    node,
    pod,
    podgroup,
    snapshot,
    term,
)

POLICY = """\
actions: ""
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: nodeorder
"""
"""nodeorder's least-requested score: the emptier node wins."""
ASKER = "default/job"


def cpus(name: str, n: int) -> NodeBuilder:
    return node(name).resources(cpu=n, memory="16Gi")


def task(name: str, group: str = "job") -> PodBuilder:
    """One cpu (Volcano's `makeTask`: `Resreq` and `InitResreq` 1000m)."""
    return pod(name).group(group).requests(cpu=1, memory="1Gi")


def open_session(*items: Item) -> Session:
    """The asker `job` (priority 10, minMember 1), a `victim` job (priority 1) and a `keeper`
    job (priority 100, never a victim here), with `items`."""
    return sessions.open_session(
        snapshot(
            podgroup("job").priority(10).inqueue(),
            podgroup("victim").priority(1).inqueue(),
            podgroup("keeper").priority(100).inqueue(),
            *items,
        ),
        policy=POLICY,
    )


def no_order(_a: JobState, _b: JobState) -> int:
    return 0


def evictor(session: Session) -> GangEvictor:
    """gangpreempt's kind, any candidate of another job a victim."""
    order: Order = no_order
    return GangEvictor(
        session,
        kind="gangpreempt",
        arguments=Arguments(),
        scope=lambda _asker, candidate: candidate.job is not None and candidate.job.key != ASKER,
        order=lambda _job: order,
        reason=lambda job, _queue: f"test by {job.key}",
    )


def trial(session: Session, *victims: str) -> tuple[bool, int]:
    """Whether the trial for the asker with `victims` holds, and its operation count."""
    job = session.jobs[ASKER]
    stmt = session.statement()
    held = evictor(session).trial(
        stmt,
        session.queues[job.queue],
        job,
        session.pending_tasks(job, best_effort=False),
        [session.tasks[f"default/{v}"] for v in victims],
    )
    count = len(stmt)
    if not held:
        stmt.discard()
    return held, count


def where(session: Session, name: str) -> tuple[TaskStatus, str | None]:
    t: TaskState = session.tasks[f"default/{name}"]
    return t.status, t.node


def test_a_job_with_nothing_pending_asks_for_nothing() -> None:
    """TestCollectPendingTasksForJobStartup_EmptyWorksheetReturnsNil: a job without a pending
    task gets no plan, though a victim is there to take."""
    session = open_session(cpus("n1", 2), task("t0").on("n1"), task("v1", "victim").on("n1"))
    job = session.jobs[ASKER]

    assert not evictor(session).run(session.queues[job.queue], job)
    assert session.decisions.evictions == ()
    assert where(session, "v1") == (TaskStatus.RUNNING, "n1")


def test_without_victims_the_trial_places_a_task_that_fits() -> None:
    """TestBuildNominationPlanInDomain_Success: one pending task, a node with two idle cpus: one
    operation, the task pipelined there. (The actions never try without a victim: a job that
    fits as the cluster stands is allocate's.)"""
    session = open_session(cpus("n1", 2), task("t1"))

    assert trial(session) == (True, 1)
    assert where(session, "t1") == (TaskStatus.PIPELINED, "n1")


def test_with_a_victim_the_trial_evicts_it_and_places_the_task() -> None:
    """TestBuildNominationPlanInDomain_WithVictimIncludesEvictAndPipeline: a victim on n1 (three
    cpus): two operations, the eviction and the placement."""
    session = open_session(cpus("n1", 3), task("t1"), task("v1", "victim").on("n1"))

    assert trial(session, "v1") == (True, 2)
    assert where(session, "v1") == (TaskStatus.RELEASING, "n1")
    assert where(session, "t1") == (TaskStatus.PIPELINED, "n1")


def test_the_trial_fails_when_no_node_has_room() -> None:
    """TestBuildNominationPlanInDomain_NoFeasibleNode: the one node has no room (a pod of a job
    that is not a victim fills it): no plan, nothing left placed."""
    session = open_session(cpus("n1", 1), task("t1"), task("k1", "keeper").on("n1"))

    held, _ = trial(session)

    assert not held
    assert where(session, "t1") == (TaskStatus.PENDING, None)


def test_a_failed_placement_rolls_back_the_eviction() -> None:
    """TestBuildNominationPlanInDomain_PipelineFailureRollsBackEviction: the victim's room
    covers the need, so the trial evicts it, but the task may not go there (Volcano's: the
    domain's only node is not in the session; here: n1's taint, which the task does not
    tolerate): the job gets nothing, the victim stays Running on n1, the node's room is as it
    was, the task pending and nothing pipelined."""
    session = open_session(
        cpus("n1", 1).taint("dedicated", "other"), task("t1"), task("v1", "victim").on("n1")
    )
    ledger = session.ledger
    idle, releasing = ledger.idle.copy(), ledger.releasing.copy()
    job = session.jobs[ASKER]

    assert not evictor(session).run(session.queues[job.queue], job)
    assert session.decisions.evictions == ()
    assert where(session, "v1") == (TaskStatus.RUNNING, "n1")
    assert where(session, "t1") == (TaskStatus.PENDING, None)
    assert job.count(TaskStatus.PIPELINED) == 0
    assert np.array_equal(ledger.idle, idle)
    assert np.array_equal(ledger.releasing, releasing)


def test_a_node_with_idle_room_is_taken_before_one_with_future_room() -> None:
    """TestBuildNominationPlanInDomain_PrefersIdleNodeOverFutureIdle: n-future's two cpus are
    being released, n-idle's are idle: the task goes to n-idle, though it prefers n-future's
    zone (node affinity) and so scores n-future higher."""
    session = open_session(
        cpus("n-future", 2).label("zone", "a"),
        cpus("n-idle", 2),
        task("t1").prefer(100, term(expr("zone", "In", "a"))),
        pod("r1")
        .group("keeper")
        .requests(cpu=2, memory="1Gi")
        .on("n-future", TaskStatus.RELEASING),
    )
    scores = session.placer.feasible(session.tasks["default/t1"])[0].future_score
    assert scores[0] > scores[1]  # n-future, n-idle

    assert trial(session) == (True, 1)
    assert where(session, "t1") == (TaskStatus.PIPELINED, "n-idle")


def test_a_nominated_node_is_no_shortcut_the_scores_decide() -> None:
    """TestBuildNominationPlanInDomain_NominatedHintDoesNotShortCircuitPredicate: t1 nominated
    to n-nominated (two idle cpus), n-other has three: Volcano asserts only that t1 lands on
    exactly one of them (its simulation reads no nomination). Here, exactly: n-other, the
    least requested; the nomination is not preferred in the trial (vscheduler's allocate
    prefers it, and the trial did too before this was transcribed)."""
    session = open_session(
        cpus("n-nominated", 2), cpus("n-other", 3), task("t1").nominated("n-nominated")
    )
    assert session.nominations  # the nomination is honoured: the trial passes over it

    assert trial(session) == (True, 1)
    assert where(session, "t1") == (TaskStatus.PIPELINED, "n-other")


def test_a_nomination_to_a_missing_node_does_not_stop_the_trial() -> None:
    """TestBuildNominationPlanInDomain_FallbackWhenNominatedMissing: t1 nominated to n-missing,
    not a node: it is placed on n1."""
    session = open_session(cpus("n1", 2), task("t1").nominated("n-missing"))

    assert trial(session) == (True, 1)
    assert where(session, "t1") == (TaskStatus.PIPELINED, "n1")


def test_a_nomination_to_a_node_without_room_falls_back_to_another() -> None:
    """TestBuildNominationPlanInDomain_FallbackWhenNominatedInfeasible: n-nominated has no room
    (filled by a keeper pod), n-other two idle cpus: t1 goes to n-other."""
    session = open_session(
        cpus("n-nominated", 1),
        cpus("n-other", 2),
        task("k1", "keeper").on("n-nominated"),
        task("t1").nominated("n-nominated"),
    )

    assert trial(session) == (True, 1)
    assert where(session, "t1") == (TaskStatus.PIPELINED, "n-other")


def choose(session: Session) -> tuple[str, bool]:
    choice = session.placer.choose(session.tasks["default/t1"])
    assert isinstance(choice, Choice)
    return session.ledger.names[choice.node], choice.fits_idle


def test_the_placer_takes_the_idle_group_first() -> None:
    """TestPickBestNodeForTask_PrefersIdleGroup: n-future (three cpus being released) and n-idle
    (two idle): n-idle, fitting now."""
    session = open_session(
        cpus("n-future", 3),
        cpus("n-idle", 2),
        task("t1"),
        pod("r1")
        .group("keeper")
        .requests(cpu=3, memory="1Gi")
        .on("n-future", TaskStatus.RELEASING),
    )

    assert choose(session) == ("n-idle", True)


def test_the_placer_falls_back_to_the_future_idle_group() -> None:
    """TestPickBestNodeForTask_FallsBackFutureIdleGroup: only n-future (two cpus being
    released): n-future, fitting after the releases."""
    session = open_session(
        cpus("n-future", 2),
        task("t1"),
        pod("r1")
        .group("keeper")
        .requests(cpu=2, memory="1Gi")
        .on("n-future", TaskStatus.RELEASING),
    )

    assert choose(session) == ("n-future", False)
