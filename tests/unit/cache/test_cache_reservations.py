"""The cache carries the watched reservation ConfigMaps as books of reservations; an unreadable
entry is a problem of its ConfigMap; a list of one ConfigMap leaves the others alone."""

from __future__ import annotations

import datetime as dt

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.informer.kinds import config_map as config_map_kind
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.reservation import Reservation
from vscheduler.model.resources import Resources
from vscheduler.testing.reservations import config_map, entry

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
NOON = dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)
HOLDS = config_map_kind("kube-system", "vscheduler-reservations")
OTHER = config_map_kind("team", "holds")
BOOK = "kube-system/vscheduler-reservations"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def cache(clock: FixedClock) -> SchedulerCache:
    return SchedulerCache(clock=clock)


def holds(version: str, **data: str) -> dict[str, object]:
    return config_map(data, resource_version=version)


def test_a_snapshot_carries_the_book_of_a_watched_config_map(cache: SchedulerCache) -> None:
    cache.replace(HOLDS, [holds("1", r1=entry("n1", "team/a", NOON, cpu="2"))])

    book = cache.snapshot().reservations[BOOK]

    assert book.entries == (
        Reservation(
            key="r1", node="n1", pod="team/a", resources=Resources(cpu=2000), expires_at=NOON
        ),
    )
    assert cache.problems() == {}


def test_an_unreadable_entry_is_a_problem_of_its_config_map_and_the_rest_is_kept(
    cache: SchedulerCache,
) -> None:
    cache.replace(HOLDS, [holds("1", bad="{", good=entry("n1", "team/a", NOON, cpu="2"))])

    assert [r.key for r in cache.snapshot().reservations[BOOK].entries] == ["good"]
    assert cache.problems() == {
        f"ConfigMap {BOOK}": f"ConfigMap {BOOK}: data.bad: not JSON: Expecting property name "
        "enclosed in double quotes: line 1 column 2 (char 1)"
    }


def test_watch_events_change_and_remove_the_book(cache: SchedulerCache) -> None:
    cache.replace(HOLDS, [holds("1", r1=entry("n1", "team/a", NOON, cpu="2"))])
    cache.apply(HOLDS, WatchEvent("MODIFIED", holds("2")))

    assert cache.snapshot().reservations[BOOK].entries == ()

    cache.apply(HOLDS, WatchEvent("DELETED", holds("3")))

    assert cache.snapshot().reservations == {}


def test_an_unchanged_config_map_is_not_read_again(cache: SchedulerCache) -> None:
    cache.replace(HOLDS, [holds("1", r1=entry("n1", "team/a", NOON, cpu="2"))])
    first = cache.snapshot().reservations[BOOK]

    assert cache.snapshot().reservations[BOOK] is first


def test_a_list_of_one_config_map_leaves_the_other_watched_config_maps(
    cache: SchedulerCache,
) -> None:
    other = config_map({}, name="holds", namespace="team", resource_version="1")
    cache.replace(OTHER, [other])
    cache.replace(HOLDS, [holds("1")])

    assert list(cache.snapshot().reservations) == [BOOK, "team/holds"]

    cache.replace(HOLDS, [])

    assert list(cache.snapshot().reservations) == ["team/holds"]


def test_a_reservation_expiring_is_a_change_the_next_cycle_sees(
    cache: SchedulerCache, clock: FixedClock
) -> None:
    soon = START + dt.timedelta(seconds=30)
    cache.replace(HOLDS, [holds("1", r1=entry("n1", "team/a", soon, cpu="2"))])
    seen = cache.generation
    cache.changed.clear()
    clock.advance(29)

    assert cache.generation == seen

    clock.advance(1)

    assert cache.generation == seen + 1
    assert cache.changed.is_set()
    clock.advance(60)
    assert cache.generation == seen + 1
