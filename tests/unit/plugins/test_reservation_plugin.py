from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from vscheduler import catalog
from vscheduler.errors import PolicyError
from vscheduler.framework.results import Code, Status
from vscheduler.framework.session import Session
from vscheduler.model.commands import ReservationRelease
from vscheduler.model.status import TaskStatus
from vscheduler.plugins import reservation
from vscheduler.plugins.reservation import Inert, Releases, Reserved
from vscheduler.testing import scenario, sessions
from vscheduler.testing.builders import START, Item, at, node, pod, snapshot
from vscheduler.testing.reservations import ReservationsBuilder, reservations

POLICY = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: reservation\n'
BOOK = "kube-system/vscheduler-reservations"


def policy(**arguments: str) -> str:
    if not arguments:
        return POLICY
    lines = "".join(f"      {k}: {v}\n" for k, v in arguments.items())
    return f"{POLICY}    arguments:\n{lines}"


def nodes() -> tuple[Item, ...]:
    return (
        node("n1").resources(cpu="4", memory="8Gi"),
        node("n2").resources(cpu="4", memory="8Gi"),
    )


def held(until: float = 600) -> ReservationsBuilder:
    """3 CPU of n1 held for team/train-0."""
    return reservations().reserve("train-0", node="n1", pod="team/train-0", until=until, cpu="3")


def open_session(
    *items: Item, book: ReservationsBuilder | None = None, now: dt.datetime = START
) -> tuple[Session, object]:
    extra = (book.build(),) if book is not None else ()
    session = sessions.open_session(snapshot(*nodes(), *items, *extra), policy=POLICY, now=now)
    return session, session.plugins["reservation"]


def reserved(*items: Item, book: ReservationsBuilder | None = None) -> tuple[Session, Reserved]:
    session, plugin = open_session(*items, book=book or held())
    assert isinstance(plugin, Reserved)
    return session, plugin


def passes(session: Session, plugin: Reserved, key: str) -> list[bool]:
    task = next(t for t in session.tasks.values() if t.key == key)
    return [bool(b) for b in plugin.filter_nodes(task, np.arange(len(session.ledger)))]


# --- arguments ------------------------------------------------------------------------------------
def test_the_default_config_map_is_kube_system_vscheduler_reservations() -> None:
    factory = reservation.build({})

    assert factory.needs.config_maps == (("kube-system", "vscheduler-reservations"),)


def test_the_arguments_name_the_config_map() -> None:
    factory = reservation.build({"configMapNamespace": "batch", "configMapName": "holds.v1"})

    assert factory.needs.config_maps == (("batch", "holds.v1"),)


def test_bad_arguments_are_all_reported_naming_plugin_and_argument() -> None:
    text = policy(configMapNamespace="Team_A", configMapName="''", configmapName="x")

    with pytest.raises(PolicyError) as caught:
        catalog.load_pipeline(text)

    assert caught.value.errors == (
        "tiers[0].plugins[0]: plugin reservation: arguments.configMapNamespace: must be a "
        "namespace name (at most 63 lowercase letters, digits and '-'), got 'Team_A'",
        "tiers[0].plugins[0]: plugin reservation: arguments.configMapName: must be a ConfigMap "
        "name (at most 253 lowercase letters, digits, '-' and '.'), got ''",
        "tiers[0].plugins[0]: plugin reservation: arguments.configmapName: unknown argument; "
        "did you mean 'configMapName'?",
    )


def test_an_argument_that_is_not_a_string_is_an_error() -> None:
    with pytest.raises(PolicyError) as caught:
        catalog.load_pipeline(policy(configMapName="3"))

    assert caught.value.errors == (
        "tiers[0].plugins[0]: plugin reservation: arguments.configMapName: must be a string, got 3",
    )


# --- what a session opens -------------------------------------------------------------------------
def test_without_its_config_map_the_plugin_has_no_hooks() -> None:
    other = reservations("other").reserve("r", node="n1", pod="team/x", until=600, cpu="3")
    _, plugin = open_session(book=other)

    assert isinstance(plugin, Inert)


def test_with_only_expired_reservations_the_plugin_only_reports_at_close() -> None:
    _, plugin = open_session(book=held(until=0))

    assert type(plugin) is Releases
    assert not hasattr(plugin, "filter_nodes")


def test_a_reservation_on_a_node_outside_the_snapshot_filters_nothing() -> None:
    book = reservations().reserve("r", node="gone", pod="team/x", until=600, cpu="3")
    _, plugin = open_session(book=book)

    assert type(plugin) is Releases


def test_the_session_caches_per_class_unless_a_reserved_pod_is_pending() -> None:
    _, without = reserved(pod("p", "other").requests(cpu="1"))
    _, with_pending = reserved(pod("train-0", "team").requests(cpu="3"))

    assert without.node_local is True
    assert with_pending.node_local is False


# --- the predicate --------------------------------------------------------------------------------
def test_other_pods_reservations_keep_a_pod_off_a_node_it_would_fit() -> None:
    session, plugin = reserved(pod("p", "other").requests(cpu="2"))

    assert passes(session, plugin, "other/p") == [False, True]


def test_a_pod_fitting_beside_the_reservations_passes() -> None:
    session, plugin = reserved(pod("p", "other").requests(cpu="1"))

    assert passes(session, plugin, "other/p") == [True, True]


def test_a_node_the_pod_does_not_fit_anyway_is_left_to_the_fit_check() -> None:
    session, plugin = reserved(pod("p", "other").requests(cpu="5"))

    assert passes(session, plugin, "other/p") == [True, True]


def test_only_the_resources_the_pod_requests_count() -> None:
    book = reservations().reserve("r", node="n1", pod="team/x", until=600, memory="8Gi")
    session, plugin = reserved(pod("p", "other").requests(cpu="4"), book=book)

    assert passes(session, plugin, "other/p") == [True, True]


def test_a_best_effort_pod_is_never_kept_off() -> None:
    book = reservations().reserve("r", node="n1", pod="team/x", until=600, cpu="4", memory="8Gi")
    session, plugin = reserved(pod("be", "other"), book=book)

    assert passes(session, plugin, "other/be") == [True, True]


def test_a_pods_own_reservation_does_not_count_against_it() -> None:
    session, plugin = reserved(pod("train-0", "team").requests(cpu="4"))

    assert passes(session, plugin, "team/train-0") == [True, True]


def test_reservations_on_one_node_add_up() -> None:
    book = held().reserve("train-1", node="n1", pod="team/train-1", until=600, cpu="1")
    session, plugin = reserved(pod("p", "other").requests(cpu="1"), book=book)

    assert passes(session, plugin, "other/p") == [False, True]


def test_a_pod_waiting_for_releases_must_fit_what_they_free_beside_the_reservations() -> None:
    leaving = pod("old", "other").on("n1", TaskStatus.RELEASING).requests(cpu="4")
    book = reservations().reserve("r", node="n1", pod="team/x", until=600, cpu="1")
    session, plugin = reserved(
        leaving, pod("fits", "other").requests(cpu="3"), pod("big", "other").requests(cpu="4"),
        book=book,
    )  # fmt: skip

    assert passes(session, plugin, "other/fits") == [True, True]
    assert passes(session, plugin, "other/big") == [False, True]


def test_the_reason_gives_free_reserved_and_requested_amounts_and_the_holders() -> None:
    book = held().reserve("train-1", node="n1", pod="team/train-1", until=90, cpu="500m")
    session, plugin = reserved(pod("p", "other").requests(cpu="1", memory="1Gi"), book=book)
    task = next(t for t in session.tasks.values() if t.key == "other/p")

    assert plugin.explain_node(task, 0) == Status(
        Code.UNSCHEDULABLE,
        "node(s) reserved for other pods: cpu 4 free, 3500m reserved, 1 requested; "
        "for team/train-0 until 2026-01-01T00:10:00Z, team/train-1 until 2026-01-01T00:01:30Z",
    )


def test_a_reserved_pod_placed_in_the_session_stops_holding_its_reservation() -> None:
    book = (
        reservations()
        .reserve("train-0", node="n1", pod="team/train-0", until=600, cpu="2")
        .reserve("train-1", node="n1", pod="team/train-1", until=600, cpu="1")
    )
    session, plugin = reserved(
        pod("train-0", "team").requests(cpu="2"), pod("p", "other").requests(cpu="3"), book=book
    )
    train_0 = next(t for t in session.tasks.values() if t.key == "team/train-0")

    assert passes(session, plugin, "other/p") == [False, True]
    session.apply_allocate(train_0, 1)  # it took 2 CPU of n2: only train-1's CPU is held on n1
    assert passes(session, plugin, "other/p") == [True, True]
    session.undo_allocate(train_0)
    assert passes(session, plugin, "other/p") == [False, True]


# --- releases -------------------------------------------------------------------------------------
def test_done_reservations_are_released_at_close_in_key_order() -> None:
    book = (
        reservations()
        .reserve("c-expired", node="n2", pod="team/late", until=0, cpu="1")
        .reserve("a-running", node="n1", pod="team/running", until=600, cpu="1")
        .reserve("b-waiting", node="n1", pod="team/waiting", until=600, cpu="1")
    )
    running = pod("running", "team").on("n2").requests(cpu="1")
    session, _ = open_session(running, book=book)

    result = session.close()

    assert result.reservations_released == (
        ReservationRelease(
            config_map=BOOK, key="a-running", pod="team/running", node="n1", reason="placed"
        ),
        ReservationRelease(
            config_map=BOOK, key="c-expired", pod="team/late", node="n2", reason="expired"
        ),
    )


def test_a_reservation_whose_pod_is_bound_in_the_cycle_is_released() -> None:
    outcome = scenario.run(
        snapshot(*nodes(), pod("train-0", "team").requests(cpu="3"), held().build()),
        policy=POLICY,
    )[0]

    assert outcome.binds == {"team/train-0": "n1"}
    assert outcome.result.reservations_released == (
        ReservationRelease(
            config_map=BOOK, key="train-0", pod="team/train-0", node="n1", reason="placed"
        ),
    )


def test_a_reservation_still_waiting_for_its_pod_is_kept() -> None:
    session, _ = open_session(book=held(until=600), now=at(599))

    assert session.close().reservations_released == ()
