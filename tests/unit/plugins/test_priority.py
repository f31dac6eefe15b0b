from __future__ import annotations

import pytest

from vscheduler.errors import PluginArgsError
from vscheduler.framework.session import Session
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.status import TaskStatus
from vscheduler.plugins import priority
from vscheduler.plugins.priority import Priority
from vscheduler.testing import sessions
from vscheduler.testing.builders import Buildable, node, pod, podgroup, snapshot

POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
"""


def open_session(snap: ClusterSnapshot) -> tuple[Session, Priority]:
    session = sessions.open_session(snap, policy=POLICY)
    plugin = session.plugins["priority"]
    assert isinstance(plugin, Priority)
    return session, plugin


# --- job order -----------------------------------------------------------------------------------
def test_the_job_of_higher_priority_comes_first() -> None:
    session, plugin = open_session(
        snapshot(
            podgroup("low").priority(10).created(0),
            podgroup("high").priority(100).created(5),
        )
    )
    low, high = session.jobs["default/low"], session.jobs["default/high"]

    assert plugin.compare_jobs(high, low) == -1
    assert plugin.compare_jobs(low, high) == 1
    assert [j.key for j in session.ordered_jobs([low, high])] == ["default/high", "default/low"]


def test_jobs_of_equal_priority_are_left_to_creation_time() -> None:
    session, plugin = open_session(
        snapshot(
            podgroup("later").priority(7).created(9),
            podgroup("earlier").priority(7).created(1),
        )
    )
    later, earlier = session.jobs["default/later"], session.jobs["default/earlier"]

    assert plugin.compare_jobs(later, earlier) == 0
    assert [j.key for j in session.ordered_jobs([later, earlier])] == [
        "default/earlier",
        "default/later",
    ]


# --- task order ----------------------------------------------------------------------------------
def test_the_pod_of_higher_priority_comes_first() -> None:
    session, plugin = open_session(
        snapshot(
            podgroup("pg"),
            pod("p-low").group("pg").requests(cpu="1").priority(1).created(0),
            pod("p-high").group("pg").requests(cpu="1").priority(50).created(3),
            pod("p-mid").group("pg").requests(cpu="1").priority(20).created(1),
        )
    )
    low, high = session.tasks["default/p-low"], session.tasks["default/p-high"]

    assert plugin.compare_tasks(high, low) == -1
    assert plugin.compare_tasks(low, high) == 1
    assert plugin.compare_tasks(low, low) == 0
    pending = session.pending_tasks(session.jobs["default/pg"], best_effort=False)
    assert [t.key for t in pending] == ["default/p-high", "default/p-mid", "default/p-low"]


# --- preemptable ---------------------------------------------------------------------------------
def preemption_session() -> tuple[Session, Priority]:
    return open_session(
        snapshot(
            node("n1"),
            podgroup("boss").priority(100).inqueue(),
            podgroup("peer").priority(100).inqueue(),
            podgroup("minion").priority(10).inqueue(),
            pod("boss-0").group("boss").requests(cpu="1").priority(5),
            pod("boss-1").group("boss").requests(cpu="1").priority(1).on("n1"),
            pod("boss-2").group("boss").requests(cpu="1").priority(5).on("n1"),
            pod("boss-3").group("boss").requests(cpu="1").priority(9).on("n1"),
            pod("peer-0").group("peer").requests(cpu="1").priority(0).on("n1"),
            pod("minion-0").group("minion").requests(cpu="1").priority(1000).on("n1"),
        )
    )


@pytest.mark.parametrize(
    ("candidate", "victim"),
    [
        pytest.param("minion-0", True, id="other-job-of-lower-priority"),
        pytest.param("peer-0", False, id="other-job-of-equal-priority"),
        pytest.param("boss-1", True, id="same-job-lower-pod-priority"),
        pytest.param("boss-2", False, id="same-job-equal-pod-priority"),
        pytest.param("boss-3", False, id="same-job-higher-pod-priority"),
    ],
)
def test_a_preemptor_takes_only_what_it_outranks(candidate: str, victim: bool) -> None:
    session, plugin = preemption_session()
    preemptor = session.tasks["default/boss-0"]
    task = session.tasks[f"default/{candidate}"]

    assert plugin.select_preemptees(preemptor, [task]) == ((task,) if victim else ())


def test_a_job_of_lower_priority_cannot_preempt_a_higher_one_whatever_the_pod_priorities() -> None:
    session, plugin = preemption_session()
    preemptor = session.tasks["default/minion-0"]  # pod priority 1000, job priority 10
    candidates = [session.tasks["default/boss-1"], session.tasks["default/peer-0"]]

    assert plugin.select_preemptees(preemptor, candidates) == ()


def test_victims_keep_the_candidates_order() -> None:
    session, plugin = preemption_session()
    preemptor = session.tasks["default/boss-0"]
    names = ["minion-0", "boss-3", "boss-1", "peer-0"]
    candidates = [session.tasks[f"default/{n}"] for n in names]

    victims = plugin.select_preemptees(preemptor, candidates)

    assert [t.key for t in victims] == ["default/minion-0", "default/boss-1"]


def test_the_session_asks_priority_for_preemptees_together_with_its_tier() -> None:
    session, _ = preemption_session()
    preemptor = session.tasks["default/boss-0"]
    candidates = [session.tasks[f"default/{n}"] for n in ("minion-0", "peer-0", "boss-1")]

    victims = session.dispatch.select_preemptees(preemptor, candidates)

    # priority passes over peer-0 (its job's priority is boss's); gang lets minion's only pod go
    # (a job of minMember 1 is no gang)
    assert [t.key for t in victims] == ["default/minion-0", "default/boss-1"]


def test_priority_leaves_reclaim_to_other_plugins() -> None:
    _, plugin = preemption_session()

    assert not hasattr(plugin, "select_reclaimees")


# --- starving ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("statuses", "starving"),
    [
        pytest.param((TaskStatus.RUNNING, TaskStatus.RUNNING), False, id="all-running"),
        pytest.param((TaskStatus.RUNNING, TaskStatus.PENDING), True, id="one-pending"),
        pytest.param((TaskStatus.RUNNING, TaskStatus.PIPELINED), False, id="one-pipelined"),
        pytest.param((TaskStatus.ALLOCATED, TaskStatus.SUCCEEDED), False, id="allocated-done"),
        pytest.param((TaskStatus.RUNNING, TaskStatus.FAILED), True, id="one-failed"),
        pytest.param((TaskStatus.RUNNING, TaskStatus.RELEASING), True, id="one-releasing"),
    ],
)
def test_a_job_starves_while_any_of_its_tasks_is_not_placed(
    statuses: tuple[TaskStatus, ...], starving: bool
) -> None:
    items: list[Buildable] = [node("n1"), podgroup("pg").min_member(1).inqueue()]
    for i, status in enumerate(statuses):
        p = pod(f"p-{i}").group("pg").requests(cpu="1")
        items.append(p if status is TaskStatus.PENDING else p.on("n1", status))
    session, plugin = open_session(snapshot(*items))

    assert plugin.is_job_starving(session.jobs["default/pg"]) is starving


# --- arguments -----------------------------------------------------------------------------------
def test_priority_takes_no_arguments() -> None:
    assert priority.build({}).name == "priority"
    with pytest.raises(PluginArgsError, match="plugin priority"):
        priority.build({"priority.weight": 1})
