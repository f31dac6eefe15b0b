"""pdb: victims are kept greedily, in order, only while every budget selecting them allows a
disruption; preempt and reclaim candidates get the same filter; this session's evictions count."""

from __future__ import annotations

import pytest

from vscheduler.conf.parse import parse_policy
from vscheduler.errors import PluginArgsError
from vscheduler.framework.registry import Registry, build
from vscheduler.framework.session import Session
from vscheduler.framework.state import TaskState
from vscheduler.model.selector import EVERYTHING, DisruptionBudget
from vscheduler.plugins import pdb as pdb_plugin
from vscheduler.testing import sessions
from vscheduler.testing.builders import Item, PodBuilder, node, pdb, pod, snapshot

REGISTRY = Registry(plugins={pdb_plugin.NAME: pdb_plugin.build}, actions={})


def running(name: str, namespace: str = "shop", **labels: str) -> PodBuilder:
    return pod(name, namespace).requests(cpu="1").labels(**labels).on("n1")


WEB = [running(f"web-{i}", app="web") for i in range(3)]
API = [running(f"api-{i}", app="api") for i in range(2)]


def open_session(*items: Item, flags: str = "") -> Session:
    text = 'actions: ""\ntiers:\n- plugins:\n  - name: pdb\n'
    text += "".join(f"    {flag}\n" for flag in flags.split(",") if flag)
    built = build(parse_policy(text, known_actions=(), known_plugins=REGISTRY.plugins), REGISTRY)
    snap = snapshot(node("n1").resources(cpu="16", memory="32Gi"), *items)
    return sessions.open_session(snap, built)


def tasks(session: Session, *pods: PodBuilder) -> list[TaskState]:
    return [session.tasks[p.build().uid] for p in pods]


def names(victims: tuple[TaskState, ...]) -> list[str]:
    return [t.facts.name for t in victims]


def plugin(session: Session) -> pdb_plugin.Pdb:
    found = session.plugins[pdb_plugin.NAME]
    assert isinstance(found, pdb_plugin.Pdb)
    return found


# --- the filter ---------------------------------------------------------------------------------
def test_victims_are_kept_in_order_while_their_budget_allows() -> None:
    budget = pdb("web", "shop").selecting(app="web").allowed(1)
    session = open_session(budget, *WEB, *API)

    kept = plugin(session).filter_victims(tasks(session, WEB[0], API[0], WEB[1], WEB[2], API[1]))

    assert names(kept) == ["web-0", "api-0", "api-1"]


def test_a_victim_needs_every_budget_selecting_it_and_a_rejected_one_uses_nothing() -> None:
    web = pdb("web", "shop").selecting(app="web").allowed(1)
    front = pdb("front", "shop").selecting(tier="front").allowed(1)
    both = running("both", app="web", tier="front")
    front_only = running("front-only", tier="front")
    session = open_session(web, front, WEB[0], both, front_only)

    kept = plugin(session).filter_victims(tasks(session, WEB[0], both, front_only))

    # web-0 uses web's only disruption, so `both` is refused and front keeps its one for front-only
    assert names(kept) == ["web-0", "front-only"]


def test_a_budget_of_another_namespace_protects_nothing_here() -> None:
    session = open_session(pdb("web", "other").selecting(app="web"), *WEB)
    assert names(plugin(session).filter_victims(tasks(session, *WEB))) == [
        "web-0",
        "web-1",
        "web-2",
    ]


def test_a_null_selector_protects_nothing_and_an_empty_one_every_pod_of_the_namespace() -> None:
    bare = running("bare")
    elsewhere = running("elsewhere", "lab", app="web")
    null = open_session(pdb("none", "shop").no_selector(), WEB[0], bare)
    empty = open_session(pdb("all", "shop").allowed(1), WEB[0], bare, elsewhere)

    assert names(plugin(null).filter_victims(tasks(null, WEB[0], bare))) == ["web-0", "bare"]
    assert names(plugin(empty).filter_victims(tasks(empty, WEB[0], bare, elsewhere))) == [
        "web-0",
        "elsewhere",
    ]


def test_a_pod_already_listed_as_disrupted_is_not_counted_again() -> None:
    budget = pdb("web", "shop").selecting(app="web").allowed(1).disrupted("web-0")
    session = open_session(budget, *WEB)

    kept = plugin(session).filter_victims(tasks(session, *WEB))

    assert names(kept) == ["web-0", "web-1"]


def test_a_malformed_budget_protects_its_whole_namespace() -> None:
    broken = DisruptionBudget(
        namespace="shop", name="broken", selector=EVERYTHING, problem="spec.selector: bad"
    )
    other = running("other", "lab")
    session = open_session(broken, *API, other)

    assert names(plugin(session).filter_victims(tasks(session, *API, other))) == ["other"]


def test_asking_twice_gives_the_same_answer() -> None:
    session = open_session(pdb("web", "shop").selecting(app="web").allowed(2), *WEB)
    found, victims = plugin(session), tasks(session, *WEB)

    assert names(found.filter_victims(victims)) == ["web-0", "web-1"]
    assert names(found.filter_victims(victims)) == ["web-0", "web-1"]


# --- preempt and reclaim ------------------------------------------------------------------------
def test_preempt_and_reclaim_candidates_get_the_same_filter() -> None:
    urgent = pod("urgent", "shop").requests(cpu="2")
    session = open_session(pdb("web", "shop").selecting(app="web").allowed(1), *WEB, *API, urgent)
    [preemptor] = tasks(session, urgent)
    candidates = tasks(session, *WEB, API[0])

    assert names(session.dispatch.select_preemptees(preemptor, candidates)) == ["web-0", "api-0"]
    assert names(session.dispatch.select_reclaimees(preemptor, candidates)) == ["web-0", "api-0"]


def test_when_every_candidate_is_protected_there_are_no_victims() -> None:
    session = open_session(pdb("web", "shop").selecting(app="web"), *WEB)
    candidates = tasks(session, *WEB)

    assert session.dispatch.select_preemptees(candidates[0], candidates) == ()
    assert session.dispatch.filter_victims(candidates) == ()


# --- evictions in the session -------------------------------------------------------------------
def test_an_eviction_in_this_session_uses_a_disruption_and_a_discarded_one_gives_it_back() -> None:
    session = open_session(pdb("web", "shop").selecting(app="web").allowed(2), *WEB)
    found, victims = plugin(session), tasks(session, *WEB)

    statement = session.statement()
    statement.evict(victims[0], "test")
    assert names(found.filter_victims(victims[1:])) == ["web-1"]

    statement.discard()
    assert names(found.filter_victims(victims[1:])) == ["web-1", "web-2"]

    committed = session.statement()
    committed.evict(victims[0], "test")
    committed.commit()
    assert names(found.filter_victims(victims[1:])) == ["web-1"]


# --- flags and arguments ------------------------------------------------------------------------
def test_the_victim_filter_follows_enabled_victim() -> None:
    budget = pdb("web", "shop").selecting(app="web")
    on = open_session(budget, *WEB)
    off = open_session(budget, *WEB, flags="enabledVictim: false")

    assert on.dispatch.filter_victims(tasks(on, *WEB)) == ()
    assert names(off.dispatch.filter_victims(tasks(off, *WEB))) == ["web-0", "web-1", "web-2"]


def test_pdb_takes_no_arguments() -> None:
    with pytest.raises(PluginArgsError) as caught:
        pdb_plugin.build({"minAvailable": 1})
    assert caught.value.problems == ("plugin pdb: arguments.minAvailable: unknown argument",)
