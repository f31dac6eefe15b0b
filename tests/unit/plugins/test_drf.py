from __future__ import annotations

import pytest

from vscheduler.errors import PluginArgsError
from vscheduler.framework.session import Session
from vscheduler.plugins import drf
from vscheduler.plugins.drf import Drf, HierarchicalDrf
from vscheduler.testing import scenario, sessions
from vscheduler.testing.builders import Buildable, node, pod, podgroup, queue, res, snapshot

POLICY = """\
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: drf
"""

HIERARCHICAL = """\
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: drf
    enableHierarchy: true
"""


def open_session(*items: Buildable, policy: str = POLICY) -> tuple[Session, Drf]:
    session = sessions.open_session(snapshot(*items), policy=policy)
    plugin = session.plugins["drf"]
    assert isinstance(plugin, Drf)
    return session, plugin


def cluster() -> Buildable:
    """8 CPUs and 16Gi on one Ready node."""
    return node("n1").resources(cpu="8", memory="16Gi")


def job(
    name: str, *, running: int = 0, pending: int = 0, cpu: str = "1", memory: str = "0"
) -> list[Buildable]:
    """An Inqueue job with `running` tasks on n1 and `pending` ones, each asking cpu and memory."""
    items: list[Buildable] = [podgroup(name).inqueue()]
    for i in range(running + pending):
        task = pod(f"{name}-{i}").group(name).requests(cpu=cpu, memory=memory)
        items.append(task.on("n1") if i < running else task)
    return items


# --- dominant share and job order ----------------------------------------------------------------
def test_a_jobs_share_is_its_largest_fraction_of_any_cluster_resource() -> None:
    session, plugin = open_session(
        cluster(),
        *job("cpu-heavy", running=2, cpu="1", memory="1Gi"),
        *job("memory-heavy", running=1, cpu="1", memory="8Gi"),
    )

    assert plugin.total == res(cpu="8", memory="16Gi")
    assert plugin._share_of(session.jobs["default/cpu-heavy"]) == 0.25
    assert plugin._share_of(session.jobs["default/memory-heavy"]) == 0.5


def test_the_job_of_lower_dominant_share_comes_first() -> None:
    session, plugin = open_session(
        cluster(),
        *job("cpu-heavy", running=2, cpu="1", memory="1Gi"),
        *job("memory-heavy", running=1, cpu="1", memory="8Gi"),
    )
    light, heavy = session.jobs["default/cpu-heavy"], session.jobs["default/memory-heavy"]

    assert plugin.compare_jobs(light, heavy) == -1
    assert plugin.compare_jobs(heavy, light) == 1
    assert [j.key for j in session.ordered_jobs([heavy, light])] == [
        "default/cpu-heavy",
        "default/memory-heavy",
    ]


def test_jobs_of_equal_share_are_left_to_the_next_order() -> None:
    session, plugin = open_session(cluster(), *job("a", running=2), *job("b", running=2))

    assert plugin.compare_jobs(session.jobs["default/a"], session.jobs["default/b"]) == 0


def test_allocations_and_their_undoing_keep_the_order_in_step() -> None:
    session, plugin = open_session(cluster(), *job("a", running=1, pending=3), *job("b", running=2))
    a, b = session.jobs["default/a"], session.jobs["default/b"]
    stmt = session.statement()

    stmt.allocate(session.tasks["default/a-1"], 0)
    stmt.allocate(session.tasks["default/a-2"], 0)
    assert plugin._share_of(a) == 0.375
    assert session.dispatch.compare_jobs(b, a) == -1

    stmt.discard()
    assert plugin._share_of(a) == 0.125
    assert session.dispatch.compare_jobs(a, b) == -1


def test_only_ready_nodes_make_the_cluster_total() -> None:
    session, plugin = open_session(
        cluster(), node("down").resources(cpu="8", memory="16Gi").not_ready(), *job("a", running=2)
    )

    assert plugin.total == res(cpu="8", memory="16Gi")
    assert plugin._share_of(session.jobs["default/a"]) == 0.25


# --- preemptees ----------------------------------------------------------------------------------
def test_victims_are_tasks_whose_job_keeps_at_least_the_preemptors_share_once_they_leave() -> None:
    # The preemptor's job would hold 2 of 8 CPUs (0.25). Job x holds 4: losing x-0 leaves 0.375,
    # losing x-1 too leaves 0.25 (equal: a victim), losing x-2 too would leave 0.125 (kept).
    session, plugin = open_session(
        cluster(), *job("p", running=1, pending=1), *job("x", running=4), *job("y", running=2)
    )
    candidates = [session.tasks[k] for k in ("default/x-0", "default/x-1", "default/x-2")]
    candidates.append(session.tasks["default/y-0"])

    victims = plugin.select_preemptees(session.tasks["default/p-1"], candidates)

    assert [t.key for t in victims] == ["default/x-0", "default/x-1"]


def test_no_task_is_a_victim_of_a_preemptor_whose_job_already_holds_more() -> None:
    session, plugin = open_session(cluster(), *job("p", running=4, pending=1), *job("x", running=2))
    candidates = [session.tasks["default/x-0"], session.tasks["default/x-1"]]

    assert plugin.select_preemptees(session.tasks["default/p-4"], candidates) == ()


# --- what drf registers, its flags and arguments -------------------------------------------------
def test_drf_orders_jobs_and_chooses_preemptees_but_orders_no_queues() -> None:
    session, _ = open_session(cluster())

    assert session.dispatch.has("jobOrder")
    assert session.dispatch.has("preemptable")
    assert not session.dispatch.has("queueOrder")
    assert not session.dispatch.has("reclaimable")


def test_enable_hierarchy_adds_a_queue_order_reclaim_and_event_handlers() -> None:
    session, plugin = open_session(
        cluster(), *job("a", running=1), *job("b", running=2), policy=HIERARCHICAL
    )

    assert isinstance(plugin, HierarchicalDrf)
    assert session.dispatch.has("queueOrder")
    assert session.dispatch.has("reclaimable")
    assert plugin.compare_jobs(session.jobs["default/a"], session.jobs["default/b"]) == -1


def test_without_hierarchy_annotations_every_queue_ties() -> None:
    """Every queue's jobs hang from the root (Volcano's queue without the annotations): the
    root is the only level two such queues share, so drf leaves their order to the next rule."""
    session, plugin = open_session(
        cluster(),
        queue("q1"),
        queue("q2"),
        podgroup("a").queue("q1").inqueue(),
        pod("a-0").group("a").requests(cpu="4").on("n1"),
        podgroup("b").queue("q2").inqueue(),
        pod("b-0").group("b").requests(cpu="1"),
        policy=HIERARCHICAL,
    )

    assert isinstance(plugin, HierarchicalDrf)
    assert plugin.compare_queues(session.queues["q1"], session.queues["q2"]) == 0


def test_drf_takes_no_arguments() -> None:
    assert isinstance(drf.build({}), drf.Factory)
    with pytest.raises(PluginArgsError, match=r"plugin drf: arguments\.weight: unknown"):
        drf.build({"weight": 2})


def test_a_cycle_places_the_job_of_lower_share_first() -> None:
    outcome = scenario.run(
        snapshot(
            node("n1").resources(cpu="4"),
            *job("busy", running=2, pending=1),
            *job("idle", pending=1, cpu="2"),
        ),
        policy=POLICY,
    )[0]

    assert outcome.binds == {"default/idle-0": "n1"}
