"""rescheduling: selectors, exclusions, the strategy chain, the interval, and the memory across
cycles (cooldown, nodes to avoid), through `propose_victims` on real sessions."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import numpy as np
import pytest
import yaml

from vscheduler import catalog
from vscheduler.actions import shuffle
from vscheduler.clock import FixedClock
from vscheduler.cycle import run_cycle
from vscheduler.framework.registry import Pipeline
from vscheduler.framework.session import Session
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import TaskFacts
from vscheduler.model.status import QoSClass
from vscheduler.plugins import rescheduling
from vscheduler.plugins.rescheduling import Avoiding, Factory, Idle, Proposing, ProposingAvoiding
from vscheduler.plugins.rescheduling.plugin import AVOID_REASON
from vscheduler.testing import sessions
from vscheduler.testing.builders import START, at, node, pod, podgroup, queue, snapshot

MINUTE = dt.timedelta(minutes=1)


def policy(actions: str = "", **arguments: object) -> str:
    entry = {"name": "rescheduling", "enableVictim": True, "arguments": arguments}
    return yaml.safe_dump({"actions": actions, "tiers": [{"plugins": [entry]}]})


def pipeline(actions: str = "", **arguments: object) -> Pipeline:
    return catalog.load_pipeline(policy(actions, **arguments))


def factory_of(pipe: Pipeline) -> Factory:
    found = pipe.tiers[0][0].factory
    assert isinstance(found, Factory)
    return found


def running(
    name: str,
    on: str = "n1",
    *,
    cpu: str = "1",
    owner: str | None = None,
    priority: int = 0,
    started: float | None = 0.0,
    qos: QoSClass = QoSClass.BURSTABLE,
    **changes: Any,
) -> TaskFacts:
    facts = pod(name).requests(cpu=cpu, memory="1Gi").on(on).priority(priority).build()
    return dataclasses.replace(
        facts,
        owner=f"ReplicaSet/{name}" if owner is None else owner,
        started=None if started is None else at(started),
        qos=qos,
        **changes,
    )


def cluster(*tasks: TaskFacts) -> ClusterSnapshot:
    return snapshot(node("n1").resources(cpu="16", memory="64Gi"), *tasks)


def open_at(snap: ClusterSnapshot, pipe: Pipeline, now: dt.datetime = START) -> Session:
    return sessions.open_session(snap, pipe, now=now)


def proposing(session: Session) -> Proposing:
    plugin = session.plugins["rescheduling"]
    assert isinstance(plugin, Proposing)
    return plugin


def propose(snap: ClusterSnapshot, **arguments: Any) -> list[str]:
    """The names proposed, in order, when the plugin runs on `snap` with no selecting strategy
    unless `strategies` says otherwise (so the chain's order is what is seen)."""
    arguments.setdefault("strategies", [{"name": "lowPriorityFirst"}])
    session = open_at(snap, pipeline(**arguments))
    victims = proposing(session).propose_victims(shuffle.candidates(session))
    return [t.facts.name for t in victims]


# --- the chain -----------------------------------------------------------------------------------
def test_without_a_selecting_strategy_every_eligible_pod_is_proposed_in_the_default_order() -> None:
    snap = cluster(
        running("guaranteed", qos=QoSClass.GUARANTEED),
        running("best-effort", qos=QoSClass.BEST_EFFORT),
        running("b-burstable"),
        running("a-burstable"),
        running("important", priority=10, qos=QoSClass.BEST_EFFORT),
    )

    assert propose(snap, strategies=[{"name": "shortLifeTimeFirst"}]) == [
        "best-effort",
        "a-burstable",
        "b-burstable",
        "guaranteed",
        "important",
    ]


def test_offline_only_keeps_only_preemptable_pods() -> None:
    snap = cluster(
        running("online-a"),
        running("offline-b", preemptable=True),
        running("offline-a", preemptable=True, priority=5),
    )

    assert propose(snap, strategies=[{"name": "offlineOnly"}]) == ["offline-b", "offline-a"]


def test_low_priority_first_orders_by_pod_priority_ascending() -> None:
    snap = cluster(running("p100", priority=100), running("p-5", priority=-5), running("p0"))

    assert propose(snap, strategies=[{"name": "lowPriorityFirst"}]) == ["p-5", "p0", "p100"]


def test_short_life_time_first_puts_the_youngest_first_and_pods_not_started_last() -> None:
    snap = cluster(
        running("old", started=0),
        running("unstarted", started=None),
        running("young", started=600),
        running("middle", started=300),
    )

    assert propose(snap, strategies=[{"name": "shortLifeTimeFirst"}]) == [
        "young",
        "middle",
        "old",
        "unstarted",
    ]


def test_big_object_first_puts_the_largest_dominant_share_first() -> None:
    # cluster: 16 CPU, 64Gi. small: 1/16 cpu; wide: 4/16 cpu; fat: 1 cpu but 32Gi = 1/2 memory.
    fat = running("fat")
    fat = dataclasses.replace(fat, resreq=pod("x").requests(cpu="1", memory="32Gi").build().resreq)
    snap = cluster(running("small"), running("wide", cpu="4"), fat)

    assert propose(snap, strategies=[{"name": "bigObjectFirst"}]) == ["fat", "wide", "small"]


def test_more_replicas_first_puts_the_workload_with_most_running_replicas_first() -> None:
    snap = cluster(
        running("solo", priority=-1),
        running("web-1", owner="ReplicaSet/web"),
        running("api-1", owner="ReplicaSet/api"),
        running("web-2", owner="ReplicaSet/web"),
        running("api-2", owner="ReplicaSet/api"),
        running("web-3", owner="ReplicaSet/web"),
    )

    assert propose(snap, strategies=[{"name": "moreReplicasFirst"}]) == [
        "web-1",
        "web-2",
        "web-3",
        "api-1",
        "api-2",
        "solo",
    ]


def test_orderings_compose_with_the_first_configured_as_the_primary_key() -> None:
    snap = cluster(
        running("young-high", started=600, priority=10),
        running("old-low", started=0, priority=0),
        running("young-low", started=600, priority=0),
        running("old-high", started=0, priority=10),
    )
    age_first = [{"name": "shortLifeTimeFirst"}, {"name": "lowPriorityFirst"}]
    priority_first = [{"name": "lowPriorityFirst"}, {"name": "shortLifeTimeFirst"}]

    assert propose(snap, strategies=age_first) == [
        "young-low",
        "young-high",
        "old-low",
        "old-high",
    ]
    assert propose(snap, strategies=priority_first) == [
        "young-low",
        "old-low",
        "young-high",
        "old-high",
    ]


def test_a_filter_and_orderings_chain_whatever_their_positions() -> None:
    snap = cluster(
        running("online", priority=-10),
        running("offline-high", priority=10, preemptable=True),
        running("offline-low", priority=1, preemptable=True),
    )
    chain = [{"name": "lowPriorityFirst"}, {"name": "offlineOnly"}]

    assert propose(snap, strategies=chain) == ["offline-low", "offline-high"]


def test_each_victim_carries_the_chain_as_its_strategy_and_a_reason() -> None:
    snap = cluster(running("a", preemptable=True))
    session = open_at(
        snap, pipeline(strategies=[{"name": "offlineOnly"}, {"name": "lowPriorityFirst"}])
    )
    plugin = proposing(session)

    [victim] = plugin.propose_victims(shuffle.candidates(session))

    assert session.findings.victim_notes == {
        victim.uid: ("offlineOnly+lowPriorityFirst", "chosen by offlineOnly+lowPriorityFirst")
    }
    assert plugin.outcome == "1 pods chosen by offlineOnly+lowPriorityFirst"


# --- selectors and exclusions --------------------------------------------------------------------
def test_queue_selector_keeps_only_pods_of_the_listed_queues() -> None:
    snap = snapshot(
        node("n1").resources(cpu="16", memory="64Gi"),
        queue("batch"),
        queue("prod"),
        podgroup("in-batch").queue("batch").min_member(1),
        podgroup("in-prod").queue("prod").min_member(1),
        dataclasses.replace(running("b"), job="default/in-batch", group_name="in-batch"),
        dataclasses.replace(running("p"), job="default/in-prod", group_name="in-prod"),
        running("d"),
    )

    assert propose(snap, queueSelector=["batch", "default"]) == ["b", "d"]
    assert propose(snap) == ["b", "d", "p"]


def test_label_selector_keeps_only_pods_carrying_every_listed_label() -> None:
    snap = cluster(
        running("both", labels={"business": "offline", "team": "test", "x": "y"}),
        running("one", labels={"business": "offline"}),
        running("other-value", labels={"business": "online", "team": "test"}),
        running("none"),
    )

    assert propose(snap, labelSelector={"business": "offline", "team": "test"}) == ["both"]


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        pytest.param({"owner": ""}, "no owner", id="nothing would recreate it"),
        pytest.param({"owner": "DaemonSet/agent"}, "daemonset", id="a DaemonSet pod"),
        pytest.param(
            {"annotations": {"kubernetes.io/config.mirror": "abc"}}, "mirror", id="a mirror pod"
        ),
        pytest.param({"priority": 2_000_000_000}, "critical", id="system-cluster-critical"),
        pytest.param({"priority": 2_000_001_000}, "critical", id="system-node-critical"),
    ],
)
def test_pods_that_must_never_move_are_never_proposed(changes: dict[str, Any], why: str) -> None:
    snap = cluster(dataclasses.replace(running("keep"), **changes), running("movable"))

    assert propose(snap) == ["movable"], why


def test_a_pod_just_below_system_critical_priority_may_be_proposed() -> None:
    assert propose(cluster(running("high", priority=1_999_999_999))) == ["high"]


def test_candidates_shuffle_did_not_offer_are_never_proposed() -> None:
    snap = cluster(running("offered"), running("other"))
    session = open_at(snap, pipeline(strategies=[{"name": "lowPriorityFirst"}]))
    offered = [t for t in shuffle.candidates(session) if t.facts.name == "offered"]

    victims = proposing(session).propose_victims(offered)

    assert [t.facts.name for t in victims] == ["offered"]


# --- the interval --------------------------------------------------------------------------------
def test_the_first_session_runs_and_the_next_runs_only_once_the_interval_has_passed() -> None:
    snap = cluster(running("a"))
    pipe = pipeline(interval="5m", strategies=[{"name": "lowPriorityFirst"}])
    factory = factory_of(pipe)

    first = open_at(snap, pipe, START)
    assert [t.facts.name for t in proposing(first).propose_victims(shuffle.candidates(first))] == [
        "a"
    ]
    assert factory.last_run == START

    assert isinstance(open_at(snap, pipe, START + 4 * MINUTE).plugins["rescheduling"], Idle)
    assert isinstance(open_at(snap, pipe, START + 5 * MINUTE).plugins["rescheduling"], Proposing)


def test_a_session_that_never_asks_for_victims_does_not_use_up_the_interval() -> None:
    snap = cluster(running("a"))
    pipe = pipeline(strategies=[{"name": "lowPriorityFirst"}])

    open_at(snap, pipe, START)  # e.g. simulate --explain: opened, no action run

    assert factory_of(pipe).last_run is None
    assert isinstance(open_at(snap, pipe, START + MINUTE).plugins["rescheduling"], Proposing)


def test_an_interval_of_zero_runs_every_session() -> None:
    snap = cluster(running("a"))
    pipe = pipeline(interval="0s", strategies=[{"name": "lowPriorityFirst"}])
    session = open_at(snap, pipe)
    proposing(session).propose_victims(shuffle.candidates(session))

    assert isinstance(open_at(snap, pipe).plugins["rescheduling"], Proposing)


# --- memory: cooldown and nodes to avoid ---------------------------------------------------------
def cycle(snap: ClusterSnapshot, pipe: Pipeline, now: dt.datetime) -> list[str]:
    report = run_cycle(snap, pipe, clock=FixedClock(now))
    return [e.pod for e in report.result.evictions]


def web_cluster() -> ClusterSnapshot:
    return snapshot(
        node("n1").resources(cpu="16", memory="64Gi"),
        node("n2").resources(cpu="16", memory="64Gi"),
        running("web-1", owner="ReplicaSet/web"),
        running("web-2", owner="ReplicaSet/web", on="n2"),
        running("api-1", owner="ReplicaSet/api", priority=5),
    )


def one_per_run(**arguments: object) -> Pipeline:
    arguments = {"interval": "0s", "strategies": [{"name": "lowPriorityFirst"}], **arguments}
    text = policy("shuffle", **arguments)
    text += "configurations:\n- name: shuffle\n  arguments: {maxEvictionsPerRun: 1}\n"
    return catalog.load_pipeline(text)


def test_after_shuffle_moves_a_pod_its_workload_cools_down_for_workload_cooldown() -> None:
    pipe = one_per_run(workloadCooldown="15m")
    snap = web_cluster()

    assert cycle(snap, pipe, START) == ["default/web-1"]
    # web-2 is next by the order, but its workload cools down: api-1 goes instead.
    assert cycle(snap, pipe, START + 14 * MINUTE) == ["default/api-1"]
    assert cycle(snap, pipe, START + 16 * MINUTE) == ["default/web-1"]


def test_a_workload_cooldown_of_zero_remembers_nothing() -> None:
    pipe = one_per_run(workloadCooldown="0s", avoidNodeFor="0s")
    snap = web_cluster()

    assert cycle(snap, pipe, START) == ["default/web-1"]
    assert cycle(snap, pipe, START + MINUTE) == ["default/web-1"]
    assert factory_of(pipe).memory.cooldown == {}
    assert factory_of(pipe).memory.avoid == {}


def test_evictions_by_other_actions_or_of_pods_not_proposed_are_not_remembered() -> None:
    pipe = pipeline(strategies=[{"name": "lowPriorityFirst"}])
    snap = web_cluster()
    session = open_at(snap, pipe)
    proposing(session).propose_victims([])
    task = next(t for t in session.tasks.values() if t.facts.name == "web-1")
    stmt = session.statement()
    stmt.evict(task, "preempt: for someone", action="preempt")
    stmt.commit()

    session.close()

    assert factory_of(pipe).memory.cooldown == {}


def replacement(name: str = "web-new", owner: str = "ReplicaSet/web") -> TaskFacts:
    facts = pod(name).requests(cpu="1", memory="1Gi").build()
    return dataclasses.replace(facts, owner=owner)


def test_replacement_pods_avoid_the_node_their_workload_left_for_avoid_node_for() -> None:
    pipe = one_per_run(avoidNodeFor="10m", interval="1h")
    snap = web_cluster()
    assert cycle(snap, pipe, START) == ["default/web-1"]
    later = dataclasses.replace(
        snap,
        tasks={
            **snap.tasks,
            "default/web-new": replacement(),
            "default/other": replacement("other", "ReplicaSet/other"),
        },
    )

    session = open_at(later, pipe, START + 9 * MINUTE)
    plugin = session.plugins["rescheduling"]
    assert isinstance(plugin, Avoiding)
    assert plugin.node_local is False
    web_new, other = session.tasks["default/web-new"], session.tasks["default/other"]
    both = np.arange(2, dtype=np.int64)
    assert plugin.filter_nodes(web_new, both).tolist() == [False, True]
    assert plugin.filter_nodes(other, both).tolist() == [True, True]
    status = plugin.explain_node(web_new, 0)
    assert status is not None
    assert status.reason == AVOID_REASON
    assert plugin.explain_node(web_new, 1) is None

    assert isinstance(open_at(later, pipe, START + 10 * MINUTE).plugins["rescheduling"], Idle)
    assert factory_of(pipe).memory.avoid == {}


def test_a_session_that_runs_while_nodes_are_avoided_gets_both_hooks() -> None:
    pipe = one_per_run(interval="1m")
    snap = web_cluster()
    assert cycle(snap, pipe, START) == ["default/web-1"]

    plugin = open_at(snap, pipe, START + 2 * MINUTE).plugins["rescheduling"]

    assert isinstance(plugin, ProposingAvoiding)
    assert plugin.node_local is False


def test_pods_of_a_real_podgroup_are_one_workload_whatever_their_owner() -> None:
    pipe = one_per_run()
    snap = snapshot(
        node("n1").resources(cpu="16", memory="64Gi"),
        podgroup("train").min_member(1),
        dataclasses.replace(
            running("w-0", owner="Job/train"), job="default/train", group_name="train"
        ),
        dataclasses.replace(
            running("w-1", owner="Job/other"), job="default/train", group_name="train"
        ),
    )

    assert cycle(snap, pipe, START) == ["default/w-0"]
    assert factory_of(pipe).memory.cooldown == {"PodGroup default/train": START + 15 * MINUTE}
    assert factory_of(pipe).memory.avoid == {"PodGroup default/train": {"n1": START + 10 * MINUTE}}
    assert cycle(snap, pipe, START + MINUTE) == []


def test_the_plugin_is_registered_under_its_volcano_name() -> None:
    assert rescheduling.NAME == "rescheduling"
    assert "rescheduling" in catalog.builtin_registry().plugins


def test_a_node_to_avoid_that_left_the_cluster_costs_nothing() -> None:
    pipe = one_per_run(interval="1h")
    snap = web_cluster()
    assert cycle(snap, pipe, START) == ["default/web-1"]
    without_n1 = dataclasses.replace(snap, nodes=snap.nodes[1:])

    assert isinstance(open_at(without_n1, pipe, START + MINUTE).plugins["rescheduling"], Idle)
    assert isinstance(open_at(snap, pipe, START + MINUTE).plugins["rescheduling"], Avoiding)
