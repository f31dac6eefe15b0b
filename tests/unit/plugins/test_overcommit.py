from __future__ import annotations

import dataclasses

import pytest

from vscheduler.errors import PluginArgsError, PolicyError
from vscheduler.framework import quota
from vscheduler.framework.results import Vote
from vscheduler.framework.session import Session
from vscheduler.model.resources import Resources
from vscheduler.model.status import PodGroupPhase
from vscheduler.plugins import overcommit
from vscheduler.plugins.overcommit import Overcommit
from vscheduler.testing import scenario, sessions
from vscheduler.testing.builders import Buildable, Fact, node, pod, podgroup, res, snapshot

TWO_NODES = (
    node("n1").resources(cpu="4", memory="8Gi"),
    node("n2").resources(cpu="4", memory="8Gi"),
)


def policy(arguments: str = "") -> str:
    text = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: overcommit\n'
    return text + (f"    arguments:\n{arguments}" if arguments else "")


def open_session(*items: Buildable | Fact, arguments: str = "") -> tuple[Session, Overcommit]:
    session = sessions.open_session(snapshot(*TWO_NODES, *items), policy=policy(arguments))
    plugin = session.plugins["overcommit"]
    assert isinstance(plugin, Overcommit)
    return session, plugin


def vote(cpu: str, *items: Buildable | Fact, arguments: str = "") -> Vote:
    """The vote on a Pending PodGroup `new` asking `cpu` CPUs and 1Gi, beside `items`."""
    new = podgroup("new").min_resources(cpu=cpu, memory="1Gi")
    session, plugin = open_session(new, *items, arguments=arguments)
    return plugin.vote_enqueue(session.jobs["default/new"])


# --- the overcommitted idle resources ------------------------------------------------------------
def test_a_job_that_fits_only_thanks_to_the_factor_of_1_2_is_permitted() -> None:
    # 8 CPUs * 1.2 = 9.6 CPUs.
    assert vote("9") is Vote.PERMIT
    assert vote("9600m") is Vote.PERMIT


def test_a_job_beyond_the_overcommitted_cluster_is_rejected() -> None:
    assert vote("9601m") is Vote.REJECT
    assert vote("10") is Vote.REJECT


def test_with_a_factor_of_one_nothing_beyond_the_cluster_is_permitted() -> None:
    assert vote("8", arguments="      overcommit-factor: 1.0\n") is Vote.PERMIT
    assert vote("9", arguments="      overcommit-factor: 1.0\n") is Vote.REJECT


def test_a_factor_of_one_resource_overrides_the_default_for_that_resource_only() -> None:
    arguments = "      overcommit-factor.cpu: 1.5\n"
    _, plugin = open_session(arguments=arguments)

    assert plugin.idle == Resources(cpu=12000, memory=16 * 2**30 * 6 // 5)
    assert vote("12", arguments=arguments) is Vote.PERMIT
    assert vote("13", arguments=arguments) is Vote.REJECT


def test_a_factor_is_applied_as_written_in_decimal() -> None:
    _, plugin = open_session(arguments="      overcommit-factor: 1.15\n")

    assert plugin.idle.milli_cpu == 9200


def test_what_pods_on_the_nodes_use_is_not_idle() -> None:
    running = pod("busy").requests(cpu="4", memory="1Gi").on("n1")
    _, plugin = open_session(running)

    assert plugin.idle.milli_cpu == 5600
    assert vote("5", running) is Vote.PERMIT
    assert vote("6", running) is Vote.REJECT


def test_only_ready_nodes_count() -> None:
    _, plugin = open_session(node("down").resources(cpu="64").not_ready())

    assert plugin.idle.milli_cpu == 9600


# --- what is already admitted --------------------------------------------------------------------
def test_inqueue_podgroups_hold_their_min_resources() -> None:
    admitted = podgroup("admitted").inqueue().min_resources(cpu="5")

    assert vote("4", admitted) is Vote.PERMIT
    assert vote("5", admitted) is Vote.REJECT


def test_a_running_gang_holds_what_its_min_resources_have_not_yet_allocated() -> None:
    gang = podgroup("gang").min_resources(cpu="6").phase(PodGroupPhase.RUNNING)
    member = pod("gang-0").group("gang").requests(cpu="2").on("n1")
    _, plugin = open_session(gang, member)

    assert plugin.inqueue == res(cpu="4")
    assert plugin.idle.milli_cpu == 7600
    assert vote("3", gang, member) is Vote.PERMIT
    assert vote("4", gang, member) is Vote.REJECT


def test_an_admitted_job_reserves_its_min_resources_for_later_votes() -> None:
    first = podgroup("first").min_resources(cpu="5")
    session, plugin = open_session(first, podgroup("second").min_resources(cpu="5"))
    jobs = session.jobs

    assert plugin.vote_enqueue(jobs["default/first"]) is Vote.PERMIT
    session.dispatch.job_enqueued(jobs["default/first"])

    assert plugin.inqueue == res(cpu="5")
    assert plugin.vote_enqueue(jobs["default/second"]) is Vote.REJECT


# --- which resources are compared ----------------------------------------------------------------
def test_only_the_resources_the_min_resources_name_are_compared() -> None:
    hog = pod("hog").requests(cpu="10").on("n1")
    memory_only = podgroup("memory-only").min_resources(memory="2Gi")
    session, plugin = open_session(hog, memory_only)

    assert plugin.idle.milli_cpu == -400
    assert plugin.vote_enqueue(session.jobs["default/memory-only"]) is Vote.PERMIT


def test_pods_and_quota_style_names_in_min_resources_are_not_compared() -> None:
    quota_style = Resources(
        {"cpu": 2000, "pods": 500, "count/pods": 500, "requests.cpu": 2000, "limits.cpu": 4000}
    )
    group = dataclasses.replace(podgroup("quota").build(), min_resources=quota_style)
    session, plugin = open_session(group)

    assert plugin.vote_enqueue(session.jobs["default/quota"]) is Vote.PERMIT
    assert quota.counted(quota_style) == res(cpu="2")


def test_a_job_without_min_resources_is_permitted() -> None:
    session, plugin = open_session(podgroup("free"), pod("hog").requests(cpu="64").on("n1"))

    assert plugin.vote_enqueue(session.jobs["default/free"]) is Vote.PERMIT


# --- arguments and a whole cycle -----------------------------------------------------------------
def test_factors_below_one_are_refused_when_the_policy_is_loaded() -> None:
    with pytest.raises(
        PluginArgsError, match=r"arguments\.overcommit-factor: must be a number >= 1"
    ):
        overcommit.build({"overcommit-factor": 0.8})
    with pytest.raises(PluginArgsError, match=r"arguments\.overcommit-factor\.cpu: must be"):
        overcommit.build({"overcommit-factor.cpu": 0.5})
    with pytest.raises(PolicyError, match="overcommit-factor"):
        sessions.open_session(snapshot(), policy=policy("      overcommit-factor: ten\n"))


def test_an_unknown_argument_is_refused_with_a_suggestion() -> None:
    with pytest.raises(
        PluginArgsError, match=r"factr: unknown argument; did you mean 'overcommit-"
    ):
        overcommit.build({"overcommit-factr": 1.5})


def test_the_default_factor_is_1_2() -> None:
    factory = overcommit.build({})

    assert factory.factors.scale(res(cpu="10")) == res(cpu="12")


def test_a_cycle_admits_what_fits_the_overcommitted_cluster_and_leaves_the_rest_pending() -> None:
    outcome = scenario.run(
        snapshot(
            *TWO_NODES,
            podgroup("big").min_resources(cpu="9"),
            pod("big-0").group("big").requests(cpu="1"),
            podgroup("more").min_resources(cpu="1").created(1),
            pod("more-0").group("more").requests(cpu="1"),
        ),
        policy=policy(),
    )[0]

    assert outcome.result.podgroups["default/big"].phase is PodGroupPhase.RUNNING
    assert outcome.result.podgroups["default/more"].phase is PodGroupPhase.PENDING
    assert outcome.binds == {"default/big-0": "n1"}
