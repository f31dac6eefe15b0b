"""A plugin whose answer changes by itself at a known time (cdp's protection ending) asks the
session for a cycle then (`PluginSession.revisit`): the result's `revisit_at` is the earliest
time asked that is after the session's, or an arriving gang's when that is sooner (the live loop
runs a cycle at `revisit_at`: `tests/unit/runtime/test_scheduler_loop.py`)."""

from __future__ import annotations

from vscheduler.clock import FixedClock
from vscheduler.framework.session import Session
from vscheduler.testing.builders import at, node, pod, podgroup, snapshot
from vscheduler.testing.sessions import open_session_on_tiers

NOW = at(10)


def test_the_earliest_time_asked_after_now_is_the_results_revisit() -> None:
    session = open_session_on_tiers(snapshot(node("n1")), [], now=NOW)
    for seconds in (40, 15, 10, 5, 25):  # 10 (now) and 5 (past) are ignored
        session.revisit(at(seconds))

    assert session.close().revisit_at == at(15)


def test_without_an_ask_there_is_no_revisit() -> None:
    assert open_session_on_tiers(snapshot(node("n1")), [], now=NOW).close().revisit_at is None


def test_an_arriving_gang_falling_due_sooner_comes_first_and_a_later_one_second() -> None:
    gang = snapshot(
        node("n1").resources(cpu="4"),
        podgroup("g").min_member(3),
        pod("g-0").group("g").requests(cpu="1").created(9.5),
        taken_at=NOW,
    )
    results = []
    for asked in (at(10.2), at(12)):
        session = Session(gang, [], clock=FixedClock(NOW), arrival_grace=1.0)
        session.revisit(asked)
        results.append(session.close().revisit_at)

    assert results == [at(10.2), at(10.5)]
