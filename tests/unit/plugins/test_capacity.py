from __future__ import annotations

import dataclasses

import pytest

from vscheduler.errors import PluginArgsError
from vscheduler.framework.results import Refusal, Vote
from vscheduler.framework.session import Session
from vscheduler.model.facts import QueueFacts
from vscheduler.model.resources import Resources
from vscheduler.model.status import PodGroupPhase
from vscheduler.plugins import capacity
from vscheduler.plugins.capacity import Capacity
from vscheduler.plugins.proportion import Proportion
from vscheduler.testing import sessions
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
  - name: capacity
"""


def open_session(*items: Buildable | Fact, policy: str = POLICY) -> tuple[Session, Capacity]:
    session = sessions.open_session(snapshot(*items), policy=policy)
    plugin = session.plugins["capacity"]
    assert isinstance(plugin, Capacity)
    return session, plugin


def cpus(n: int) -> Buildable:
    """One Ready node with `n` CPUs and 64Gi."""
    return node("n1").resources(cpu=str(n), memory="64Gi")


def deserving(builder: QueueBuilder, **amounts: str | int) -> QueueFacts:
    """The queue with `spec.deserved` set."""
    return dataclasses.replace(builder.build(), deserved=res(**amounts))


def demand(q: str, pending: int, *, running: int = 0, cpu: str = "1") -> list[Buildable]:
    """An Inqueue job of queue `q` with `running` tasks on n1 and `pending` tasks to place."""
    group = f"{q}-job"
    items: list[Buildable] = [podgroup(group).queue(q).inqueue()]
    for i in range(running + pending):
        task = pod(f"{group}-{i}").group(group).requests(cpu=cpu)
        items.append(task.on("n1") if i < running else task)
    return items


def deserved(plugin: Capacity) -> dict[str, Resources]:
    return {name: attr.deserved for name, attr in plugin.accounts.holding_jobs().items()}


# --- deserved and share --------------------------------------------------------------------------
def test_deserved_is_the_queue_spec_and_share_is_allocated_over_it() -> None:
    _, plugin = open_session(
        cpus(16),
        deserving(queue("a"), cpu="4"),
        deserving(queue("b"), cpu="12"),
        *demand("a", 6, running=2),
        *demand("b", 6, running=3),
    )

    assert deserved(plugin) == {"a": res(cpu="4"), "b": res(cpu="12")}
    assert (plugin.accounts["a"].share, plugin.accounts["b"].share) == (0.5, 0.25)


def test_deserved_is_capped_by_the_real_capability_and_raised_to_the_guarantee() -> None:
    _, plugin = open_session(
        cpus(16),
        deserving(queue("a").capability(cpu="6"), cpu="20"),
        deserving(queue("b").guarantee(cpu="2"), cpu="1"),
        *demand("a", 1),
        *demand("b", 1),
    )

    assert deserved(plugin) == {"a": res(cpu="6"), "b": res(cpu="2")}
    assert plugin.accounts["a"].real_capability == res(cpu="6", memory="64Gi")
    assert plugin.accounts["b"].real_capability == res(cpu="16", memory="64Gi")


def test_a_queue_that_deserves_nothing_is_best_effort_with_share_one() -> None:
    _, plugin = open_session(cpus(8), queue("free"), *demand("free", 4))

    assert deserved(plugin) == {"free": res()}
    assert plugin.accounts["free"].share == 1.0


def test_only_ready_nodes_make_the_cluster_total() -> None:
    _, plugin = open_session(
        cpus(8), node("down").resources(cpu="8").not_ready(), queue("a"), *demand("a", 16)
    )

    assert plugin.accounts.total == res(cpu="8", memory="64Gi")
    assert plugin.accounts["a"].real_capability == res(cpu="8", memory="64Gi")


# --- queue order ---------------------------------------------------------------------------------
def test_the_queue_of_lower_share_comes_first() -> None:
    session, plugin = open_session(
        cpus(16),
        deserving(queue("a"), cpu="4"),
        deserving(queue("b"), cpu="12"),
        *demand("a", 6, running=2),
        *demand("b", 6, running=3),
    )
    a, b = session.queues["a"], session.queues["b"]

    assert plugin.compare_queues(b, a) == -1
    assert plugin.compare_queues(a, b) == 1
    assert session.dispatch.compare_queues(b, a) == -1


def test_on_equal_shares_a_queue_that_deserves_something_comes_before_a_best_effort_one() -> None:
    session, plugin = open_session(
        cpus(8),
        deserving(queue("a"), cpu="4"),
        queue("best-effort"),
        *demand("a", 2, running=4),
        *demand("best-effort", 2),
    )
    a, free = session.queues["a"], session.queues["best-effort"]

    assert (plugin.accounts["a"].share, plugin.accounts["best-effort"].share) == (1.0, 1.0)
    assert plugin.compare_queues(a, free) == -1
    assert plugin.compare_queues(free, a) == 1


def test_a_queue_of_higher_priority_comes_first_whatever_its_share() -> None:
    session, plugin = open_session(
        cpus(16),
        deserving(queue("a"), cpu="4"),
        dataclasses.replace(deserving(queue("b"), cpu="4"), priority=10),
        *demand("a", 4, running=1),
        *demand("b", 4, running=3),
    )

    assert plugin.compare_queues(session.queues["b"], session.queues["a"]) == -1


# --- allocatable and overused --------------------------------------------------------------------
def test_a_queue_may_borrow_beyond_its_deserved_up_to_its_real_capability() -> None:
    session, plugin = open_session(
        cpus(8),
        deserving(queue("a"), cpu="2"),
        queue("kept").guarantee(cpu="2"),
        *demand("a", 2, running=5),
        podgroup("big").queue("a").inqueue(),
        pod("big-0").group("big").requests(cpu="2"),
    )
    a = session.queues["a"]

    assert plugin.accounts["a"].real_capability == res(cpu="6", memory="64Gi")
    assert plugin.allows_allocation(a, session.tasks["default/a-job-5"])
    assert not plugin.allows_allocation(a, session.tasks["default/big-0"])
    assert not session.dispatch.allows_allocation(a, session.tasks["default/big-0"])


def test_capability_caps_what_a_queue_may_allocate() -> None:
    session, plugin = open_session(
        cpus(16), deserving(queue("a").capability(cpu="2"), cpu="8"), *demand("a", 2, running=2)
    )

    assert plugin.accounts["a"].real_capability == res(cpu="2", memory="64Gi")
    assert not plugin.allows_allocation(session.queues["a"], session.tasks["default/a-job-2"])


def test_only_the_resources_a_task_requests_are_compared_against_the_real_capability() -> None:
    session, plugin = open_session(
        cpus(16),
        deserving(queue("a").capability(cpu="2"), cpu="2"),
        podgroup("j").queue("a").inqueue(),
        pod("j-0").group("j").requests(cpu="2").on("n1"),
        pod("j-1").group("j").requests(memory="1Gi"),
    )

    assert plugin.allows_allocation(session.queues["a"], session.tasks["default/j-1"])


def test_a_closed_queue_allocates_and_admits_nothing() -> None:
    session, plugin = open_session(
        cpus(8),
        deserving(queue("a").state("Closed"), cpu="4"),
        *demand("a", 2),
        podgroup("later").queue("a"),
    )

    assert not plugin.allows_allocation(session.queues["a"], session.tasks["default/a-job-0"])
    assert plugin.vote_enqueue(session.jobs["default/later"]) == Refusal(
        reason="its pods are not placed while its status.state is Closed, only when it is Open",
        headline="is Closed",
    )


def test_capacity_never_reports_a_queue_overused_even_beyond_its_deserved() -> None:
    session, plugin = open_session(
        cpus(8), deserving(queue("a"), cpu="2"), *demand("a", 2, running=4)
    )

    assert plugin.accounts["a"].share == 2.0
    assert not hasattr(plugin, "is_overused")
    assert session.dispatch.is_overused(session.queues["a"]) is False


# --- enqueue -------------------------------------------------------------------------------------
def test_a_job_whose_min_resources_fit_the_real_capability_is_permitted_else_rejected() -> None:
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


def test_a_job_without_min_resources_is_permitted() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("a").capability(cpu="1"),
        *demand("a", 0, running=1),
        podgroup("free").queue("a"),
    )

    assert plugin.vote_enqueue(session.jobs["default/free"]) is Vote.PERMIT


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


def test_an_inqueue_job_reserves_only_the_part_of_its_min_resources_it_has_not_allocated() -> None:
    _, plugin = open_session(
        cpus(8),
        queue("a"),
        podgroup("admitted").queue("a").inqueue().min_resources(cpu="3"),
        pod("admitted-0").group("admitted").requests(cpu="1").on("n1"),
    )

    assert plugin.accounts["a"].inqueue == res(cpu="2")
    assert plugin.accounts["a"].allocated == res(cpu="1")


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


# --- reclaim -------------------------------------------------------------------------------------
def test_reclaim_takes_from_a_queue_above_its_deserved_until_it_is_back_within() -> None:
    session, plugin = open_session(
        cpus(8),
        deserving(queue("a"), cpu="2"),
        deserving(queue("b"), cpu="6"),
        *demand("a", 0, running=5),
        *demand("b", 4),
    )
    victims = plugin.select_reclaimees(
        session.tasks["default/b-job-0"], [session.tasks[f"default/a-job-{i}"] for i in range(5)]
    )

    assert [t.key for t in victims] == ["default/a-job-0", "default/a-job-1", "default/a-job-2"]


def test_reclaim_leaves_a_queue_its_guarantee() -> None:
    session, plugin = open_session(
        cpus(8),
        deserving(queue("a").guarantee(cpu="4"), cpu="4"),
        deserving(queue("b"), cpu="4"),
        podgroup("a-job").queue("a").inqueue(),
        pod("a-big").group("a-job").requests(cpu="2").on("n1"),
        *(pod(f"a-small-{i}").group("a-job").requests(cpu="1").on("n1") for i in range(3)),
        *demand("b", 2),
    )
    candidates = [session.tasks[f"default/{name}"] for name in ("a-big", "a-small-0", "a-small-1")]

    victims = plugin.select_reclaimees(session.tasks["default/b-job-0"], candidates)

    assert plugin.accounts["a"].allocated == res(cpu="5")
    assert [t.key for t in victims] == ["default/a-small-0"]


def test_a_candidate_requesting_nothing_its_queue_deserves_is_always_a_victim() -> None:
    session, plugin = open_session(
        cpus(8),
        deserving(queue("a"), cpu="4"),
        queue("b"),
        podgroup("a-job").queue("a").inqueue(),
        pod("a-cpu").group("a-job").requests(cpu="1").on("n1"),
        pod("a-mem").group("a-job").requests(memory="1Gi").on("n1"),
        podgroup("b-job").queue("b").inqueue(),
        pod("b-0").group("b-job").requests(cpu="1", memory="1Gi"),
    )
    candidates = [session.tasks["default/a-cpu"], session.tasks["default/a-mem"]]

    victims = plugin.select_reclaimees(session.tasks["default/b-0"], candidates)

    assert [t.key for t in victims] == ["default/a-mem"]


def test_a_candidate_sharing_no_resource_with_the_reclaimer_is_skipped() -> None:
    session, plugin = open_session(
        node("n1").resources(cpu="8", memory="64Gi", nvidia_com_gpu=4),
        deserving(queue("a"), cpu="1"),
        deserving(queue("b"), nvidia_com_gpu=4),
        *demand("a", 0, running=4),
        podgroup("b-job").queue("b").inqueue(),
        pod("b-0").group("b-job").requests(nvidia_com_gpu=1),
    )
    candidates = [session.tasks[f"default/a-job-{i}"] for i in range(4)]

    assert plugin.select_reclaimees(session.tasks["default/b-0"], candidates) == ()


def test_a_queue_that_is_not_reclaimable_gives_nothing_back() -> None:
    session, plugin = open_session(
        cpus(8),
        deserving(queue("a").reclaimable(False), cpu="2"),
        deserving(queue("b"), cpu="6"),
        *demand("a", 0, running=5),
        *demand("b", 4),
    )
    candidates = [session.tasks[f"default/a-job-{i}"] for i in range(5)]

    assert plugin.select_reclaimees(session.tasks["default/b-job-0"], candidates) == ()


def test_a_queue_may_reclaim_only_while_the_task_keeps_it_within_its_deserved() -> None:
    session, plugin = open_session(
        cpus(16),
        deserving(queue("a"), cpu="4"),
        deserving(queue("b").capability(cpu="3"), cpu="4"),
        *demand("a", 2, running=3),
        *demand("b", 2, running=3),
    )
    a, b = session.queues["a"], session.queues["b"]

    assert plugin.allows_reclaim(a, session.tasks["default/a-job-3"])
    session.statement().allocate(session.tasks["default/a-job-3"], 0)
    assert not plugin.allows_reclaim(a, session.tasks["default/a-job-4"])
    assert not plugin.allows_reclaim(b, session.tasks["default/b-job-3"])  # capability 3
    assert not session.dispatch.allows_reclaim(b, session.tasks["default/b-job-3"])


# --- events, arguments, hierarchy ----------------------------------------------------------------
def test_allocations_and_their_undoing_keep_allocated_and_share_in_step() -> None:
    session, plugin = open_session(cpus(8), deserving(queue("a"), cpu="4"), *demand("a", 4))
    attr = plugin.accounts["a"]
    stmt = session.statement()

    stmt.allocate(session.tasks["default/a-job-0"], 0)
    stmt.pipeline(session.tasks["default/a-job-1"], 0)
    assert (attr.allocated, attr.share) == (res(cpu="2"), 0.5)

    stmt.discard()
    assert (attr.allocated, attr.share) == (res(), 0.0)


def test_capacity_accepts_volcanos_arguments_and_rejects_others() -> None:
    accepted = {
        "ancestorReclaimLevel": 1,
        "capacity.DynamicResourceAllocationEnable": True,
        "capacity.DRAConsumableCapacityEnable": "false",
    }
    assert isinstance(capacity.build(accepted), capacity.Factory)
    with pytest.raises(PluginArgsError, match=r"plugin capacity: arguments\.weight: unknown"):
        capacity.build({"weight": 1})
    with pytest.raises(PluginArgsError, match=r"arguments\.ancestorReclaimLevel: must be an"):
        capacity.build({"ancestorReclaimLevel": "two"})


def test_enable_hierarchy_hangs_queues_below_their_parent() -> None:
    policy = POLICY + "    enableHierarchy: true\n"
    child = dataclasses.replace(
        deserving(queue("child").capability(cpu="2"), cpu="2"), parent="org"
    )
    session, plugin = open_session(
        cpus(8), deserving(queue("org"), cpu="1"), child, *demand("child", 3), policy=policy
    )

    accounts = plugin.accounts
    assert accounts["child"].parent is accounts["org"]
    assert accounts["org"].allocated == accounts["child"].allocated
    assert accounts["child"].real_capability == res(cpu="2")
    assert plugin.allows_allocation(session.queues["child"], session.tasks["default/child-job-0"])
    assert not plugin.allows_allocation(session.queues["org"], session.tasks["default/child-job-0"])


HIERARCHY = POLICY + "    enableHierarchy: true\n"


def test_a_missing_parent_is_reported_on_the_queue_and_only_that_queue_runs_nothing() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("lost").parent("nowhere"),
        queue("fine"),
        *demand("lost", 1),
        *demand("fine", 1),
        policy=HIERARCHY,
    )

    problem = "the queue lost has invalid parent queue nowhere"
    assert plugin.accounts.problems == {"lost": [problem]}
    assert not plugin.allows_allocation(session.queues["lost"], session.tasks["default/lost-job-0"])
    assert plugin.allows_allocation(session.queues["fine"], session.tasks["default/fine-job-0"])
    assert session.queue_note("lost") == f": {problem}"


def test_a_cycle_of_parents_is_reported_on_every_queue_in_it() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("a").parent("b"),
        queue("b").parent("a"),
        queue("c").parent("a"),
        *demand("c", 1),
        policy=HIERARCHY,
    )

    assert plugin.accounts.problems == {
        "a": ["cycle detected in queue hierarchy for queue a"],
        "b": ["cycle detected in queue hierarchy for queue b"],
        "c": ["cycle detected in queue hierarchy for queue a"],
    }
    assert plugin.vote_enqueue(session.jobs["default/c-job"]) == Refusal(
        reason="its place in the queue tree is invalid", headline="runs no pod"
    )


def test_a_guarantee_above_the_parents_capability_is_reported_on_the_child() -> None:
    _, plugin = open_session(
        cpus(8),
        queue("org").capability(cpu="2"),
        queue("team").parent("org").guarantee(cpu="3"),
        policy=HIERARCHY,
    )

    assert plugin.accounts.problems["team"] == [
        "queue team's guarantee (cpu 3) exceeds its parent queue org's capability (cpu 2)"
    ]


def test_an_ancestors_capability_bounds_its_leaves_together() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("org").capability(cpu="2"),
        queue("a").parent("org"),
        queue("b").parent("org"),
        *demand("a", 1, running=2),
        *demand("b", 1),
        policy=HIERARCHY,
    )

    task = session.tasks["default/b-job-0"]
    assert plugin.accounts["org"].allocated == res(cpu="2")
    assert not plugin.allows_allocation(session.queues["b"], task)


def test_proportion_ignores_enable_hierarchy_and_parents() -> None:
    policy = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: proportion\n'
    session = sessions.open_session(
        snapshot(cpus(8), queue("org"), queue("child").parent("org"), *demand("org", 1)),
        policy=policy + "    enableHierarchy: true\n",
    )
    plugin = session.plugins["proportion"]
    assert isinstance(plugin, Proportion)
    accounts = plugin.accounts

    assert not accounts.hierarchy
    assert accounts["child"].parent is accounts.root
    assert accounts["org"].children == []


def test_with_hierarchy_two_leaves_are_ordered_by_their_ancestors_below_the_shared_one() -> None:
    session, plugin = open_session(
        cpus(8),
        deserving(queue("busy"), cpu="2"),
        deserving(queue("idle"), cpu="2"),
        dataclasses.replace(deserving(queue("b1"), cpu="1"), parent="busy"),
        dataclasses.replace(deserving(queue("i1"), cpu="1"), parent="idle"),
        dataclasses.replace(deserving(queue("i2"), cpu="1"), parent="idle"),
        *demand("b1", 1),
        *demand("i1", 1, running=2),
        policy=HIERARCHY,
    )
    queues = session.queues

    # i1 holds 2 of its 1 (share 2) but its parent idle only 2 of 2 (share 1); busy holds nothing
    assert plugin.compare_queues(queues["b1"], queues["i1"]) < 0
    assert plugin.compare_queues(queues["i2"], queues["i1"]) < 0  # siblings: their own shares
    assert plugin.compare_queues(queues["i2"], queues["idle"]) < 0  # a leaf first


def test_with_hierarchy_an_allocation_moves_the_leafs_share_and_not_its_ancestors() -> None:
    """As Volcano's AllocateFunc: the leaf's share is updated, an ancestor's allocated grows
    but its share stays as the session opened with it, whenever it is first read."""
    session, plugin = open_session(
        cpus(8),
        deserving(queue("org"), cpu="4"),
        dataclasses.replace(deserving(queue("leaf"), cpu="2"), parent="org"),
        *demand("leaf", 2),
        policy=HIERARCHY,
    )
    accounts = plugin.accounts
    stmt = session.statement()

    stmt.allocate(session.tasks["default/leaf-job-0"], 0)

    assert (accounts["leaf"].allocated, accounts["leaf"].share) == (res(cpu="1"), 0.5)
    assert (accounts["org"].allocated, accounts["org"].share) == (res(cpu="1"), 0.0)
    stmt.allocate(session.tasks["default/leaf-job-1"], 0)
    assert (accounts["leaf"].share, accounts["org"].share) == (1.0, 0.0)


def test_with_hierarchy_every_queue_reports_its_figures() -> None:
    session, plugin = open_session(
        cpus(8),
        queue("org").capability(cpu="4"),
        queue("team").parent("org"),
        *demand("team", 0, running=1),
        policy=HIERARCHY,
    )
    plugin.on_session_close()

    figures = session.decisions.result({}, {}, {}, {}).queues
    assert sorted(figures) == ["default", "org", "team"]
    assert figures["org"].allocated == res(cpu="1")
    assert figures["team"].capability == res(cpu="4")
    assert figures["team"].real_capability == res(cpu="4")
