from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from vscheduler.errors import PluginArgsError
from vscheduler.framework import quota
from vscheduler.framework.results import Refusal, Vote
from vscheduler.framework.session import Session
from vscheduler.model.facts import QueueFacts
from vscheduler.model.resources import Resources
from vscheduler.model.status import PodGroupPhase
from vscheduler.plugins import proportion
from vscheduler.plugins.proportion import Proportion
from vscheduler.testing import scenario, sessions
from vscheduler.testing.builders import (
    Buildable,
    Fact,
    QueueBuilder,
    node,
    pod,
    podgroup,
    queue,
    res,
    snapshot,
)

POLICY = """\
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: proportion
"""


def open_session(*items: Buildable | Fact) -> tuple[Session, Proportion]:
    session = sessions.open_session(snapshot(*items), policy=POLICY)
    plugin = session.plugins["proportion"]
    assert isinstance(plugin, Proportion)
    return session, plugin


def cpus(n: int) -> Buildable:
    """One Ready node with `n` CPUs and 64Gi."""
    return node("n1").resources(cpu=str(n), memory="64Gi")


def demand(q: str, pending: int, *, running: int = 0, cpu: str = "1") -> list[Buildable]:
    """An Inqueue job of queue `q` with `running` tasks on n1 and `pending` tasks to place."""
    group = f"{q}-job"
    items: list[Buildable] = [podgroup(group).queue(q).inqueue()]
    for i in range(running + pending):
        task = pod(f"{group}-{i}").group(group).requests(cpu=cpu)
        items.append(task.on("n1") if i < running else task)
    return items


def deserved(plugin: Proportion) -> dict[str, Resources]:
    return {name: attr.deserved for name, attr in plugin.accounts.holding_jobs().items()}


def with_priority(builder: QueueBuilder, priority: int) -> QueueFacts:
    return dataclasses.replace(builder.build(), priority=priority)


# --- deserved: Volcano's weighted water-filling --------------------------------------------------
def test_two_queues_weighted_one_to_three_deserve_two_and_six_of_eight_cpus() -> None:
    _, plugin = open_session(
        cpus(8), queue("a").weight(1), queue("b").weight(3), *demand("a", 8), *demand("b", 8)
    )

    assert deserved(plugin) == {"a": res(cpu="2"), "b": res(cpu="6")}


def test_three_queues_weighted_one_two_one_deserve_two_four_and_two_cpus() -> None:
    _, plugin = open_session(
        cpus(8),
        *(queue(name).weight(w) for name, w in (("a", 1), ("b", 2), ("c", 1))),
        *demand("a", 8),
        *demand("b", 8),
        *demand("c", 8),
    )

    assert deserved(plugin) == {"a": res(cpu="2"), "b": res(cpu="4"), "c": res(cpu="2")}


def test_a_queue_asking_less_than_its_part_leaves_the_rest_to_the_others_by_weight() -> None:
    _, plugin = open_session(
        cpus(12),
        *(queue(name) for name in ("a", "b", "c")),
        *demand("a", 2),
        *demand("b", 10),
        *demand("c", 10),
    )

    assert deserved(plugin) == {"a": res(cpu="2"), "b": res(cpu="5"), "c": res(cpu="5")}


def test_capability_caps_a_queue_and_the_remainder_goes_to_the_other() -> None:
    _, plugin = open_session(
        cpus(8),
        queue("a").weight(1),
        queue("b").weight(3).capability(cpu="4"),
        *demand("a", 8),
        *demand("b", 8),
    )

    assert deserved(plugin) == {"a": res(cpu="4"), "b": res(cpu="4")}
    assert plugin.accounts["b"].real_capability == res(cpu="4", memory="64Gi")


def test_a_guarantee_is_honoured_against_a_heavier_queue() -> None:
    _, plugin = open_session(
        cpus(8),
        queue("a").weight(1).guarantee(cpu="4"),
        queue("b").weight(3),
        *demand("a", 8),
        *demand("b", 8),
    )

    assert deserved(plugin) == {"a": res(cpu="4"), "b": res(cpu="4")}
    assert plugin.accounts["b"].real_capability == res(cpu="4", memory="64Gi")


def test_the_guarantees_of_queues_without_jobs_shrink_the_others_real_capability() -> None:
    _, plugin = open_session(cpus(8), queue("kept").guarantee(cpu="3"), queue("a"), *demand("a", 8))

    assert set(plugin.accounts.holding_jobs()) == {"a"}
    assert plugin.accounts["a"].real_capability == res(cpu="5", memory="64Gi")
    assert deserved(plugin) == {"a": res(cpu="5")}


def test_a_resource_all_guaranteed_elsewhere_does_not_cap_deserved_but_blocks_admission() -> None:
    # Volcano's realCapability leaves out a resource with nothing spare, and deserved treats a
    # resource left out as unlimited, while admission treats it as zero.
    session, plugin = open_session(
        node("n1").resources(cpu="8", nvidia_com_gpu=4),
        queue("gpus").guarantee(nvidia_com_gpu=4),
        queue("a"),
        podgroup("train").queue("a").inqueue(),
        pod("train-0").group("train").requests(cpu="1", nvidia_com_gpu=2),
        podgroup("more").queue("a").min_resources(nvidia_com_gpu=1),
    )

    assert plugin.accounts["a"].real_capability == res(cpu="8")
    assert deserved(plugin) == {"a": res(cpu="1", nvidia_com_gpu=2)}
    assert plugin.vote_enqueue(session.jobs["default/more"]) == Refusal(
        reason="minResources nvidia.com/gpu 1 + what the queue holds and has admitted (nvidia.com/gpu 0) exceed what the other queues' guarantees leave it (nvidia.com/gpu 0)",
        headline="has no room left for this pod",
    )


def test_only_ready_nodes_make_the_cluster_total() -> None:
    _, plugin = open_session(
        cpus(8), node("down").resources(cpu="8").not_ready(), queue("a"), *demand("a", 16)
    )

    assert plugin.accounts.total == res(cpu="8", memory="64Gi")
    assert deserved(plugin) == {"a": res(cpu="8")}


def test_pending_tasks_of_jobs_not_yet_admitted_count_in_the_request() -> None:
    _, plugin = open_session(
        cpus(8),
        queue("a"),
        podgroup("waiting").queue("a"),
        pod("waiting-0").group("waiting").requests(cpu="3"),
    )

    assert plugin.accounts["a"].request == res(cpu="3")
    assert deserved(plugin) == {"a": res(cpu="3")}


# --- queue order and overused --------------------------------------------------------------------
def test_the_queue_of_lower_share_comes_first() -> None:
    session, plugin = open_session(
        cpus(8), queue("a"), queue("b"), *demand("a", 4, running=1), *demand("b", 4, running=3)
    )
    a, b = session.queues["a"], session.queues["b"]

    assert (plugin.accounts["a"].share, plugin.accounts["b"].share) == (0.25, 0.75)
    assert plugin.compare_queues(a, b) == -1
    assert plugin.compare_queues(b, a) == 1
    assert session.dispatch.compare_queues(b, a) == 1


def test_a_queue_of_higher_priority_comes_first_whatever_its_share() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("a"),
        with_priority(queue("b"), 10),
        *demand("a", 4, running=1),
        *demand("b", 4, running=3),
    )

    assert plugin.compare_queues(session.queues["b"], session.queues["a"]) == -1


def test_a_queue_is_overused_once_its_allocation_reaches_what_it_deserves() -> None:
    session, plugin = open_session(
        cpus(8), queue("a"), queue("b"), *demand("a", 4, running=4), *demand("b", 7, running=1)
    )

    assert deserved(plugin) == {"a": res(cpu="4"), "b": res(cpu="4")}
    assert plugin.is_overused(session.queues["a"])
    assert not plugin.is_overused(session.queues["b"])
    assert session.dispatch.is_overused(session.queues["a"])


def test_a_queue_short_in_one_deserved_resource_is_not_overused() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("a"),
        podgroup("j").queue("a").inqueue(),
        pod("j-0").group("j").requests(cpu="2", memory="1Gi").on("n1"),
        pod("j-1").group("j").requests(memory="1Gi"),
    )

    assert deserved(plugin) == {"a": res(cpu="2", memory="2Gi")}
    assert not plugin.is_overused(session.queues["a"])


# --- allocatable ---------------------------------------------------------------------------------
def test_a_task_is_allocatable_while_the_queue_stays_within_what_it_deserves() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("a"),
        queue("b"),
        *demand("a", 5, running=3),
        *demand("b", 8),
        podgroup("big").queue("a").inqueue(),
        pod("big-0").group("big").requests(cpu="2"),
    )
    a = session.queues["a"]

    assert deserved(plugin)["a"] == res(cpu="4")
    assert plugin.allows_allocation(a, session.tasks["default/a-job-3"])
    assert not plugin.allows_allocation(a, session.tasks["default/big-0"])
    assert not session.dispatch.allows_allocation(a, session.tasks["default/big-0"])


def test_only_the_resources_a_task_requests_are_compared() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("a"),
        podgroup("j").queue("a").inqueue(),
        pod("j-0").group("j").requests(cpu="2").on("n1"),
        pod("j-1").group("j").requests(memory="1Gi"),
    )
    a, task = session.queues["a"], session.tasks["default/j-1"]

    assert plugin.is_overused(a) is False
    assert plugin.accounts["a"].allocated == res(cpu="2")
    assert plugin.allows_allocation(a, task)
    assert plugin.allows_reclaim(a, task)


def test_a_closed_queue_allocates_nothing() -> None:
    session, plugin = open_session(cpus(8), queue("a").state("Closed"), *demand("a", 2))

    assert not plugin.allows_allocation(session.queues["a"], session.tasks["default/a-job-0"])


# --- enqueue -------------------------------------------------------------------------------------
def test_a_job_whose_min_resources_fit_the_queue_capability_is_permitted() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("a").capability(cpu="4"),
        podgroup("held").queue("a").min_resources(cpu="2").phase(PodGroupPhase.RUNNING),
        *(pod(f"held-{i}").group("held").requests(cpu="1").on("n1") for i in range(2)),
        podgroup("fits").queue("a").min_resources(cpu="2"),
        podgroup("too-big").queue("a").min_resources(cpu="3"),
    )

    assert plugin.vote_enqueue(session.jobs["default/fits"]) is Vote.PERMIT
    assert plugin.vote_enqueue(session.jobs["default/too-big"]) == Refusal(
        reason="minResources cpu 3 + what the queue holds and has admitted (cpu 2) exceed its capability (cpu 4)",
        headline="has no room left for this pod",
    )
    assert not session.dispatch.is_job_enqueueable(session.jobs["default/too-big"])


def test_an_admitted_job_reserves_its_min_resources_for_later_votes() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("a").capability(cpu="4"),
        podgroup("first").queue("a").min_resources(cpu="3"),
        podgroup("second").queue("a").min_resources(cpu="3"),
    )
    first, second = session.jobs["default/first"], session.jobs["default/second"]

    assert plugin.vote_enqueue(second) is Vote.PERMIT
    assert plugin.vote_enqueue(first) is Vote.PERMIT
    session.dispatch.job_enqueued(first)

    assert plugin.accounts["a"].inqueue == res(cpu="3")
    assert plugin.vote_enqueue(second) == Refusal(
        reason="minResources cpu 3 + what the queue holds and has admitted (cpu 3) exceed its capability (cpu 4)",
        headline="has no room left for this pod",
    )


def test_inqueue_podgroups_and_running_gangs_reserve_what_they_have_not_yet_allocated() -> None:
    _, plugin = open_session(
        cpus(8),
        queue("a"),
        podgroup("admitted").queue("a").inqueue().min_resources(cpu="2"),
        podgroup("gang").queue("a").min_member(1).min_resources(cpu="3"),
        pod("gang-0").group("gang").requests(cpu="1").on("n1"),
    )
    assert plugin.accounts["a"].inqueue == res(cpu="2")

    _, plugin = open_session(
        cpus(8),
        queue("a"),
        podgroup("gang").queue("a").min_resources(cpu="3").phase(PodGroupPhase.RUNNING),
        pod("gang-0").group("gang").requests(cpu="1").on("n1"),
    )
    assert plugin.accounts["a"].inqueue == res(cpu="2")


def test_what_jobs_hold_beyond_their_min_resources_is_elastic_and_leaves_room() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("a").capability(cpu="4"),
        podgroup("elastic").queue("a").min_resources(cpu="1").phase(PodGroupPhase.RUNNING),
        *(pod(f"elastic-{i}").group("elastic").requests(cpu="1").on("n1") for i in range(3)),
        podgroup("next").queue("a").min_resources(cpu="3"),
    )

    assert plugin.accounts["a"].elastic == res(cpu="2")
    assert plugin.vote_enqueue(session.jobs["default/next"]) is Vote.PERMIT


def test_a_closed_queue_admits_nothing_and_a_job_without_min_resources_is_permitted() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("shut").state("Closed"),
        queue("a"),
        podgroup("blocked").queue("shut"),
        podgroup("free").queue("a"),
    )

    assert plugin.vote_enqueue(session.jobs["default/blocked"]) == Refusal(
        reason="its pods are not placed while its status.state is Closed, only when it is Open",
        headline="is Closed",
    )
    assert plugin.vote_enqueue(session.jobs["default/free"]) is Vote.PERMIT


def test_names_volcano_does_not_count_are_left_out_of_min_resources() -> None:
    sloppy = podgroup("quota-style").queue("a").build()
    minimum = Resources({"cpu": 2000, "pods": 2, "count/pods": 2, "requests.cpu": 2000})
    session, plugin = open_session(
        cpus(8), queue("a"), dataclasses.replace(sloppy, min_resources=minimum)
    )

    assert plugin.vote_enqueue(session.jobs["default/quota-style"]) is Vote.PERMIT
    assert quota.counted(minimum) == res(cpu="2")


# --- events and reclaim --------------------------------------------------------------------------
def test_allocations_and_their_undoing_keep_allocated_and_share_in_step() -> None:
    session, plugin = open_session(
        cpus(8), queue("a"), queue("b"), *demand("a", 4), *demand("b", 4)
    )
    attr = plugin.accounts["a"]
    stmt = session.statement()

    stmt.allocate(session.tasks["default/a-job-0"], 0)
    stmt.pipeline(session.tasks["default/a-job-1"], 0)
    assert (attr.allocated, attr.share) == (res(cpu="2"), 0.5)

    stmt.discard()
    assert (attr.allocated, attr.share) == (res(), 0.0)


def test_reclaim_takes_from_a_queue_over_what_it_deserves_until_it_is_back_within() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("a"),
        queue("b"),
        *demand("a", 0, running=6),
        *demand("b", 4),
    )
    victims = plugin.select_reclaimees(
        session.tasks["default/b-job-0"],
        [session.tasks[f"default/a-job-{i}"] for i in range(6)],
    )

    assert deserved(plugin) == {"a": res(cpu="4"), "b": res(cpu="4")}
    assert [t.key for t in victims] == ["default/a-job-0", "default/a-job-1"]


def test_a_queue_that_is_not_reclaimable_gives_nothing_back() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("a").reclaimable(False),
        queue("b"),
        *demand("a", 0, running=6),
        *demand("b", 4),
    )
    candidates = [session.tasks[f"default/a-job-{i}"] for i in range(6)]

    assert plugin.select_reclaimees(session.tasks["default/b-job-0"], candidates) == ()


# --- arguments and a whole cycle -----------------------------------------------------------------
def test_proportion_takes_no_arguments() -> None:
    assert isinstance(proportion.build({}), proportion.Factory)
    with pytest.raises(PluginArgsError, match=r"plugin proportion: arguments\.weight: unknown"):
        proportion.build({"weight": 1})


def test_a_cycle_splits_eight_cpus_one_to_three_between_queues() -> None:
    items: list[Buildable] = [cpus(8), queue("a").weight(1), queue("b").weight(3)]
    for q in ("a", "b"):
        for i in range(8):
            items += [
                podgroup(f"{q}{i}").queue(q),
                pod(f"{q}{i}-0").group(f"{q}{i}").requests(cpu="1"),
            ]

    outcome = scenario.run(snapshot(*items), policy=POLICY)[0]

    assert Counter(key.split("/")[1][0] for key in outcome.binds) == Counter({"a": 2, "b": 6})
    assert outcome.result.podgroups["default/a0"].phase is PodGroupPhase.RUNNING


def test_a_queue_that_deserves_nothing_has_share_zero_as_in_volcano() -> None:
    from vscheduler.framework import quota
    from vscheduler.testing.builders import res

    assert quota.share_of(res(cpu="1"), res(), if_nothing_deserved=0.0) == 0.0
    assert quota.share_of(res(cpu="1"), res(cpu="2"), if_nothing_deserved=0.0) == 0.5
