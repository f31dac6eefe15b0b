from __future__ import annotations

import dataclasses

import pytest

from vscheduler.errors import PluginArgsError
from vscheduler.framework.results import Code, Status, Vote
from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import PodGroupCondition, TaskFacts
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.plugins import gang
from vscheduler.plugins.gang import Gang
from vscheduler.testing import sessions
from vscheduler.testing.builders import PodBuilder, node, pod, podgroup, snapshot

POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
"""

S = TaskStatus


def open_session(snap: ClusterSnapshot) -> tuple[Session, Gang]:
    session = sessions.open_session(snap, policy=POLICY)
    plugin = session.plugins["gang"]
    assert isinstance(plugin, Gang)
    return session, plugin


def member(name: str, status: TaskStatus = S.PENDING, *, group: str = "pg") -> PodBuilder:
    """A task of `group` requesting 1 CPU, on n1 unless pending."""
    p = pod(name).group(group).requests(cpu="1")
    return p if status is S.PENDING else p.on("n1", status)


def best_effort(name: str, *, group: str = "pg") -> PodBuilder:
    """A pending task of `group` that requests nothing."""
    return pod(name).group(group)


def with_role(builder: PodBuilder, role: str) -> TaskFacts:
    """The pod with a `volcano.sh/task-spec` role."""
    return dataclasses.replace(builder.build(), task_role=role)


def gang_of(
    min_member: int, *tasks: PodBuilder | TaskFacts, **min_task_member: int
) -> tuple[Session, Gang, JobState]:
    """A session holding node n1 and PodGroup pg (Inqueue) with `tasks`."""
    group = podgroup("pg").min_member(min_member).inqueue()
    if min_task_member:
        group = group.min_task_member(**min_task_member)
    session, plugin = open_session(snapshot(node("n1").resources(cpu="64"), group, *tasks))
    return session, plugin, session.jobs["default/pg"]


# --- validity ------------------------------------------------------------------------------------
def test_a_gang_with_too_few_tasks_is_invalid_with_volcanos_reason() -> None:
    session, plugin, job = gang_of(3, member("a"), member("b", S.RUNNING), member("c", S.FAILED))

    assert plugin.validate_job(job) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "Not enough valid tasks for gang-scheduling, valid: 2, min: 3",
    )
    invalid = session.dispatch.validate_job(job)
    assert invalid is not None
    assert invalid.plugin == "gang"


@pytest.mark.parametrize(
    "statuses",
    [
        pytest.param((S.PENDING, S.PENDING, S.PENDING), id="all-pending"),
        pytest.param((S.RUNNING, S.PIPELINED, S.SUCCEEDED), id="placed-pipelined-done"),
        pytest.param((S.ALLOCATED, S.BINDING, S.BOUND, S.FAILED), id="one-failed-of-four"),
    ],
)
def test_a_gang_whose_tasks_can_still_make_min_member_is_valid(
    statuses: tuple[TaskStatus, ...],
) -> None:
    _, plugin, job = gang_of(3, *(member(f"t{i}", s) for i, s in enumerate(statuses)))

    assert plugin.validate_job(job) is None


def test_a_task_role_below_its_min_task_member_makes_the_job_invalid() -> None:
    _, plugin, job = gang_of(
        3,
        with_role(member("ps-0"), "ps"),
        with_role(member("worker-0"), "worker"),
        with_role(member("worker-1", S.FAILED), "worker"),
        with_role(member("ps-1"), "ps"),
        ps=1,
        worker=2,
    )

    assert plugin.validate_job(job) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "Not enough valid pods of each task for gang-scheduling",
    )


def test_task_roles_are_not_checked_when_min_member_is_below_their_sum() -> None:
    _, plugin, job = gang_of(
        2,
        with_role(member("ps-0"), "ps"),
        with_role(member("ps-1"), "ps"),
        ps=1,
        worker=2,
    )

    assert plugin.validate_job(job) is None
    assert plugin.is_job_ready(job) is False  # 0 placed of minMember 2


# --- job order -----------------------------------------------------------------------------------
def test_jobs_that_are_not_ready_come_first() -> None:
    session, plugin = open_session(
        snapshot(
            node("n1"),
            podgroup("ready").min_member(1).inqueue().created(0),
            podgroup("waiting").min_member(2).inqueue().created(5),
            podgroup("also-ready").min_member(1).inqueue().created(1),
            member("r-0", S.RUNNING, group="ready"),
            member("w-0", S.RUNNING, group="waiting"),
            member("w-1", group="waiting"),
            member("a-0", S.RUNNING, group="also-ready"),
        )
    )
    ready, waiting = session.jobs["default/ready"], session.jobs["default/waiting"]
    also_ready = session.jobs["default/also-ready"]

    assert plugin.compare_jobs(waiting, ready) == -1
    assert plugin.compare_jobs(ready, waiting) == 1
    assert plugin.compare_jobs(ready, also_ready) == 0
    ordered = session.ordered_jobs([ready, also_ready, waiting])
    assert [j.key for j in ordered] == ["default/waiting", "default/ready", "default/also-ready"]


# --- ready / pipelined / starving ----------------------------------------------------------------
PERMIT, REJECT = Vote.PERMIT, Vote.REJECT


@pytest.mark.parametrize(
    ("statuses", "best_efforts", "ready", "pipelined", "starving"),
    [
        pytest.param((S.RUNNING,) * 3, 0, True, PERMIT, False, id="3-running"),
        pytest.param((S.RUNNING, S.ALLOCATED, S.PENDING), 0, False, REJECT, True, id="2-placed"),
        pytest.param((S.BINDING, S.BOUND, S.SUCCEEDED), 0, True, PERMIT, False, id="bound-done"),
        pytest.param((S.RUNNING, S.RUNNING, S.PIPELINED), 0, False, PERMIT, False, id="pipelined"),
        pytest.param((S.PIPELINED,) * 3, 0, False, PERMIT, False, id="all-pipelined"),
        pytest.param((S.RUNNING, S.RUNNING), 1, True, PERMIT, True, id="best-effort-pending"),
        pytest.param((S.RUNNING, S.PIPELINED), 1, False, PERMIT, True, id="pipelined+best-effort"),
        pytest.param((S.RUNNING, S.RUNNING, S.FAILED), 0, False, REJECT, True, id="failed"),
        pytest.param((S.RUNNING, S.RUNNING, S.RELEASING), 0, False, REJECT, True, id="releasing"),
    ],
)
def test_readiness_pipelining_and_starving_count_against_min_member(
    statuses: tuple[TaskStatus, ...],
    best_efforts: int,
    ready: bool,
    pipelined: Vote,
    starving: bool,
) -> None:
    tasks = [member(f"t{i}", s) for i, s in enumerate(statuses)]
    tasks += [best_effort(f"be{i}") for i in range(best_efforts)]
    session, plugin, job = gang_of(3, *tasks)

    assert plugin.is_job_ready(job) is ready
    assert plugin.vote_pipelined(job) is pipelined
    assert plugin.is_job_starving(job) is starving
    assert session.dispatch.is_job_ready(job) is ready
    assert session.dispatch.is_job_pipelined(job) is (pipelined is Vote.PERMIT)
    assert session.dispatch.is_job_starving(job) is starving


def test_a_gang_is_not_ready_until_each_task_role_reaches_its_minimum() -> None:
    _, plugin, job = gang_of(
        3,
        with_role(member("worker-0", S.RUNNING), "worker"),
        with_role(member("worker-1", S.RUNNING), "worker"),
        with_role(member("worker-2", S.RUNNING), "worker"),
        with_role(member("ps-0"), "ps"),
        ps=1,
        worker=2,
    )

    assert plugin.is_job_ready(job) is False
    assert plugin.vote_pipelined(job) is Vote.REJECT
    assert plugin.is_job_starving(job) is False  # Volcano's IsStarving counts minMember only


@pytest.mark.parametrize(
    ("ps_status", "ready", "pipelined"),
    [
        pytest.param(S.RUNNING, True, Vote.PERMIT, id="ps-running"),
        pytest.param(S.PIPELINED, False, Vote.PERMIT, id="ps-pipelined"),
        pytest.param(S.SUCCEEDED, True, Vote.PERMIT, id="ps-succeeded"),
    ],
)
def test_a_task_role_counts_its_placed_and_pipelined_tasks(
    ps_status: TaskStatus, ready: bool, pipelined: Vote
) -> None:
    _, plugin, job = gang_of(
        3,
        with_role(member("worker-0", S.RUNNING), "worker"),
        with_role(member("worker-1", S.RUNNING), "worker"),
        with_role(member("ps-0", ps_status), "ps"),
        ps=1,
        worker=2,
    )

    assert plugin.is_job_ready(job) is ready
    assert plugin.vote_pipelined(job) is pipelined


def test_a_pending_best_effort_task_fills_its_role() -> None:
    _, plugin, job = gang_of(
        2,
        with_role(member("worker-0", S.RUNNING), "worker"),
        with_role(best_effort("launcher-0"), "launcher"),
        launcher=1,
        worker=1,
    )

    assert plugin.is_job_ready(job) is True


# --- preemptable / reclaimable -------------------------------------------------------------------
def test_a_job_gives_at_most_its_ready_tasks_above_min_member() -> None:
    session, plugin, _ = gang_of(3, *(member(f"t{i}", S.RUNNING) for i in range(5)))
    candidates = [session.tasks[f"default/t{i}"] for i in (4, 0, 3, 1, 2)]
    preemptor = session.tasks["default/t0"]

    victims = plugin.select_preemptees(preemptor, candidates)

    assert [t.key for t in victims] == ["default/t4", "default/t0"]
    assert plugin.select_reclaimees(preemptor, candidates) == victims


def test_a_job_at_its_min_member_gives_no_victims() -> None:
    session, plugin, _ = gang_of(3, *(member(f"t{i}", S.RUNNING) for i in range(3)))
    candidates = [session.tasks[f"default/t{i}"] for i in range(3)]

    assert plugin.select_preemptees(candidates[0], candidates) == ()
    assert plugin.select_reclaimees(candidates[0], candidates) == ()


def keys(*names: str) -> list[str]:
    return [f"default/{n}" for n in names]


def test_each_victim_gang_keeps_its_min_member_and_a_job_of_one_is_no_gang() -> None:
    session, plugin = open_session(
        snapshot(
            node("n1").resources(cpu="64"),
            podgroup("big").min_member(2).inqueue(),
            podgroup("single").min_member(1).inqueue(),
            podgroup("lone").min_member(1).inqueue(),
            *(member(f"big-{i}", S.RUNNING, group="big") for i in range(4)),
            member("single-0", S.RUNNING, group="single"),
            member("single-1", S.RUNNING, group="single"),
            member("lone-0", S.RUNNING, group="lone"),
        )
    )
    names = ["big-0", "single-0", "lone-0", "big-1", "single-1", "big-2"]
    candidates = [session.tasks[f"default/{n}"] for n in names]

    victims = plugin.select_preemptees(session.tasks["default/big-3"], candidates)

    assert [t.key for t in victims] == keys("big-0", "single-0", "lone-0", "big-1", "single-1")


def test_a_pod_without_a_job_is_never_a_victim() -> None:
    foreign = dataclasses.replace(pod("foreign").requests(cpu="1").on("n1").build(), job="")
    session, plugin = open_session(snapshot(node("n1"), foreign))
    task = session.tasks["default/foreign"]
    assert task.job is None

    assert plugin.select_preemptees(task, [task]) == ()


# --- session close -------------------------------------------------------------------------------
def condition(session: Session, kind: str) -> PodGroupCondition | None:
    return session.findings.job_conditions.get("default/pg", {}).get(kind)


def test_an_admitted_gang_that_is_not_ready_is_marked_unschedulable_at_close() -> None:
    session, _, job = gang_of(3, member("a", S.RUNNING), member("b"), member("c"))
    session.findings.record_schedulable(session.tasks["default/b"])

    result = session.close()

    expected = PodGroupCondition(
        type="Unschedulable",
        status="True",
        reason="NotEnoughResources",
        message="1/3 tasks in gang unschedulable: pod group is not ready, "
        "1 Running, 2 Pending, 3 minAvailable; Pending: 1 Schedulable, 1 Unschedulable",
        transition_id="cycle-1",
        last_transition_time="2026-01-01T00:00:00Z",
    )
    assert condition(session, "Unschedulable") == expected
    assert condition(session, "Scheduled") is None
    assert result.podgroups["default/pg"].conditions == (expected,)
    # running tasks and an Unschedulable condition of this session: Volcano's phase Unknown
    assert result.podgroups["default/pg"].phase is PodGroupPhase.UNKNOWN
    assert job.phase is PodGroupPhase.INQUEUE


def test_a_ready_gang_is_marked_scheduled_at_close() -> None:
    session, _, _ = gang_of(2, member("a", S.RUNNING), member("b", S.RUNNING), member("c"))

    session.close()

    assert condition(session, "Scheduled") == PodGroupCondition(
        type="Scheduled",
        status="True",
        reason="tasks in gang are ready to be scheduled",
        message="",
        transition_id="cycle-1",
        last_transition_time="2026-01-01T00:00:00Z",
    )
    assert condition(session, "Unschedulable") is None


def test_a_gang_not_yet_admitted_gets_no_condition() -> None:
    session, _ = open_session(
        snapshot(node("n1"), podgroup("pg").min_member(2), member("a"), member("b"))
    )

    result = session.close()

    assert session.findings.job_conditions == {}
    assert result.podgroups["default/pg"].conditions == ()


def test_a_gang_invalid_at_open_carries_the_validation_reason() -> None:
    session, _, _ = gang_of(3, member("a"), member("b"))

    session.close()

    assert condition(session, "Unschedulable") == PodGroupCondition(
        type="Unschedulable",
        status="True",
        reason="NotEnoughTasks",
        message="Not enough valid tasks for gang-scheduling, valid: 2, min: 3",
        transition_id="cycle-1",
        last_transition_time="2026-01-01T00:00:00Z",
    )


def test_a_podgroup_without_pods_is_invalid_like_in_volcano() -> None:
    session, _ = open_session(snapshot(podgroup("pg").min_member(1).inqueue()))

    session.close()

    found = condition(session, "Unschedulable")
    assert found is not None
    assert (found.reason, found.message) == (
        "NotEnoughTasks",
        "Not enough valid tasks for gang-scheduling, valid: 0, min: 1",
    )


# --- arguments -----------------------------------------------------------------------------------
def test_gang_takes_no_arguments() -> None:
    assert gang.build({}).name == "gang"
    with pytest.raises(PluginArgsError, match="plugin gang"):
        gang.build({"gang.minMember": 2})


def test_a_gang_that_becomes_ready_turns_its_earlier_unschedulable_condition_false() -> None:
    from vscheduler.model.facts import PodGroupCondition
    from vscheduler.testing.builders import node, pod, podgroup, snapshot
    from vscheduler.testing.scenario import run

    stale = PodGroupCondition(
        type="Unschedulable",
        status="True",
        reason="NotEnoughResources",
        message="1/2 tasks in gang unschedulable",
        transition_id="cycle-0",
    )
    group = podgroup("pg").min_member(2).inqueue().build()
    group = dataclasses.replace(group, conditions=(stale,))
    snap = snapshot(
        node("n1"),
        group,
        pod("a").group("pg").requests(cpu="1"),
        pod("b").group("pg").requests(cpu="1"),
    )
    status = run(snap)[0].result.podgroups["default/pg"]
    by_type = {c.type: c for c in status.conditions}
    assert by_type["Scheduled"].status == "True"
    assert by_type["Unschedulable"].status == "False"
    assert by_type["Unschedulable"].reason == "tasks in gang are ready to be scheduled"


# --- what one session keeps for the next -------------------------------------------------------
def test_a_ready_gang_said_already_is_not_asked_again_until_a_session_changes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ready gang whose PodGroup says Scheduled already gets no condition; the next session
    that takes its very same record does not ask again (`gang.Quiet`). A session that evicts one
    of its tasks changes the record: the gang is asked again and is short of minMember (its
    third pod, too big for the node, still to place: the releasing one does not hold the gang
    while a pod is pending, `gang.held_while_releasing`)."""
    from vscheduler import catalog, cycle
    from vscheduler.clock import FixedClock
    from vscheduler.testing.builders import START

    said = PodGroupCondition(
        type=gang.SCHEDULED, status="True", reason=gang.READY_REASON, transition_id="cycle-0"
    )
    group = dataclasses.replace(
        podgroup("pg").min_member(2).phase(PodGroupPhase.RUNNING).build(), conditions=(said,)
    )
    snap = snapshot(
        node("n1").resources(cpu="64"),
        group,
        member("a", S.RUNNING),
        member("b", S.RUNNING),
        pod("c").group("pg").requests(cpu="65"),
    )
    pipeline, clock = catalog.load_pipeline(POLICY), FixedClock(START)
    asked: list[str] = []
    condition_of = Gang._condition

    def counting(self: Gang, job: JobState) -> tuple[str, str, str] | None:
        asked.append(job.key)
        return condition_of(self, job)

    monkeypatch.setattr(Gang, "_condition", counting)
    first = cycle.run_cycle(snap, pipeline, clock=clock, uid="cycle-1")
    again = cycle.run_cycle(snap, pipeline, clock=clock, uid="cycle-2", carried=first.carried)
    assert asked == ["default/pg"]  # the first session only
    assert again.result.podgroups["default/pg"].conditions == (said,)

    opened = cycle.open_session(snap, pipeline, clock=clock, uid="cycle-3", carried=again.carried)
    statement = opened.statement()
    statement.evict(opened.tasks["default/a"], "test", action="preempt", strategy="", plan="")
    statement.commit()
    kinds = {c.type: c.status for c in opened.close().podgroups["default/pg"].conditions}
    assert asked == ["default/pg", "default/pg"]
    assert kinds == {"Scheduled": "True", "Unschedulable": "True"}
