"""tdm's window parsing as Volcano's `Test_parseRevocableZone` (`pkg/scheduler/plugins/tdm/
tdm_test.go`) checks it: every case.

The Go test calls `parseRevocableZone(rz)` and checks whether it fails and, when it does not, the
seconds from the window's start to its end (`delta`). Only a function shows this, so it is
checked on ours (`tdm.parse_window`) through the policy: each window is the argument
`tdm.revocable-zone.rz1` of a policy, which loads or is refused with parse_window's message.
The window's length is the number of minutes of one day the loaded window is open, asked at
each minute from midnight: Volcano's `delta` over 60. (Volcano's window includes its end
second, ours ends at the end minute: the counts agree.)

The 9 cases, all as Volcano expects.
"""

from __future__ import annotations

import datetime as dt

import pytest

from vscheduler import catalog
from vscheduler.errors import PolicyError
from vscheduler.plugins import tdm
from vscheduler.testing.builders import START

MINUTES_A_DAY = 24 * 60


def policy(window: str) -> str:
    return (
        'actions: "allocate"\ntiers:\n- plugins:\n  - name: tdm\n    arguments:\n'
        f'      tdm.revocable-zone.rz1: "{window}"\n'
    )


def open_minutes(window: str) -> int:
    """How many minutes of a day zone rz1 is open, its window read by the loaded policy."""
    pipeline = catalog.load_pipeline(policy(window))
    [factory] = [e.factory for tier in pipeline.tiers for e in tier if e.factory.name == "tdm"]
    assert isinstance(factory, tdm.Factory)
    rz1 = factory.windows["rz1"]
    return sum(rz1.is_open(START + dt.timedelta(minutes=m)) for m in range(MINUTES_A_DAY))


@pytest.mark.parametrize(
    ("window", "minutes"),
    [
        pytest.param("00:00-01:00", 60, id="case-1"),
        pytest.param("0:00-23:59", 23 * 60 + 59, id="case-2-one-digit-hour"),
        pytest.param("1:00-0:00", 23 * 60, id="case-4-past-midnight"),
        pytest.param("   1:00-0:00    ", 23 * 60, id="case-6-spaces-around"),
        pytest.param("23:59-23:59", MINUTES_A_DAY, id="case-7-equal-ends-all-day"),
    ],
)
def test_a_window_is_open_from_its_start_to_its_end(window: str, minutes: int) -> None:
    """Test_parseRevocableZone: no error, `delta` = `minutes` × 60 s."""
    assert open_minutes(window) == minutes


WRONG_SHAPE = "must be a time window like '10:00-21:00'"


@pytest.mark.parametrize(
    ("window", "message"),
    [
        pytest.param("00:00_01:00", WRONG_SHAPE, id="case-0-no-dash"),
        pytest.param("0:00", WRONG_SHAPE, id="case-3-one-time"),
        pytest.param("1:0-0:0", WRONG_SHAPE, id="case-5-one-digit-minutes"),
        pytest.param("63:59-23:59", "must hold times from 00:00 to 23:59", id="case-8-hour-63"),
    ],
)
def test_a_malformed_window_is_refused(window: str, message: str) -> None:
    """Test_parseRevocableZone: an error (Volcano's predicate then fails every node of the zone;
    ours refuses the policy, docs/policy.md §5.15)."""
    with pytest.raises(PolicyError) as refused:
        catalog.load_pipeline(policy(window))

    assert f"tdm.revocable-zone.rz1: {message}, got '{window}'" in str(refused.value)
