from __future__ import annotations

import datetime as dt

import pytest

from vscheduler.errors import PolicyError
from vscheduler.framework.results import Code, Status, Vote
from vscheduler.framework.session import Session
from vscheduler.plugins import sla
from vscheduler.plugins.sla import Sla
from vscheduler.testing import sessions
from vscheduler.testing.builders import START, Item, at, node, pod, podgroup, snapshot


def policy(waiting_time: str | None = "10m") -> str:
    text = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: sla\n'
    if waiting_time is not None:
        text += f"    arguments:\n      sla-waiting-time: {waiting_time}\n"
    return text


def open_session(
    *items: Item, now: dt.datetime = START, waiting_time: str | None = "10m"
) -> tuple[Session, Sla]:
    session = sessions.open_session(
        snapshot(node("n1"), *items), policy=policy(waiting_time), now=now
    )
    plugin = session.plugins["sla"]
    assert isinstance(plugin, Sla)
    return session, plugin


# --- deadlines and job order ----------------------------------------------------------------------
def test_the_deadline_is_creation_plus_the_global_waiting_time() -> None:
    _, plugin = open_session(podgroup("a").created(30))

    assert plugin.deadlines == {"default/a": at(630)}


def test_a_job_annotation_overrides_the_global_waiting_time() -> None:
    own = podgroup("own").created(30).annotate("sla-waiting-time", "1h30m")
    _, plugin = open_session(own)

    assert plugin.deadlines == {"default/own": at(30 + 5400)}


def test_the_volcano_prefixed_annotation_comes_first() -> None:
    both = (
        podgroup("both")
        .annotate("volcano.sh/sla-waiting-time", "1m")
        .annotate("sla-waiting-time", "1h")
    )
    _, plugin = open_session(both)

    assert plugin.deadlines == {"default/both": at(60)}


def test_a_lone_pod_reads_its_own_annotation() -> None:
    _, plugin = open_session(pod("solo").annotate("sla-waiting-time", "2m"), waiting_time=None)

    assert plugin.deadlines == {"default/podgroup-default/solo": at(120)}


def test_the_earlier_deadline_goes_first_and_jobs_without_one_last() -> None:
    late = podgroup("late").created(0).annotate("sla-waiting-time", "10m")  # deadline 600
    early = podgroup("early").created(100).annotate("sla-waiting-time", "1m")  # deadline 160
    none = podgroup("a-none").created(0)  # first by creation and uid, but has no deadline
    session, plugin = open_session(late, early, none, waiting_time=None)
    jobs = session.jobs

    assert plugin.compare_jobs(jobs["default/early"], jobs["default/late"]) == -1
    assert plugin.compare_jobs(jobs["default/late"], jobs["default/early"]) == 1
    assert plugin.compare_jobs(jobs["default/late"], jobs["default/a-none"]) == -1
    assert plugin.compare_jobs(jobs["default/a-none"], jobs["default/late"]) == 1
    assert [j.key for j in session.ordered_jobs(jobs.values())] == [
        "default/early",
        "default/late",
        "default/a-none",
    ]


def test_jobs_without_a_waiting_time_are_equal_to_it() -> None:
    session, plugin = open_session(podgroup("a"), podgroup("b"), waiting_time=None)

    assert plugin.deadlines == {"default/a": None, "default/b": None}
    assert plugin.compare_jobs(session.jobs["default/a"], session.jobs["default/b"]) == 0


# --- the votes ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("now", "expected"),
    [
        pytest.param(at(599), Vote.ABSTAIN, id="before"),
        pytest.param(at(600), Vote.PERMIT, id="at-the-deadline"),
        pytest.param(at(3600), Vote.PERMIT, id="after"),
    ],
)
def test_a_job_past_its_deadline_is_permitted_to_enqueue_and_pipeline(
    now: dt.datetime, expected: Vote
) -> None:
    session, plugin = open_session(podgroup("a").created(0), now=now)
    job = session.jobs["default/a"]

    assert plugin.vote_enqueue(job) is expected
    assert plugin.vote_pipelined(job) is expected


def test_a_job_without_a_waiting_time_abstains_however_long_it_waited() -> None:
    session, plugin = open_session(podgroup("a"), now=at(10**6), waiting_time=None)
    job = session.jobs["default/a"]

    assert plugin.vote_enqueue(job) is Vote.ABSTAIN
    assert plugin.vote_pipelined(job) is Vote.ABSTAIN


# --- a malformed annotation -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(
            "1hr",
            "annotation sla-waiting-time: must be a Go duration like '1h30m', got '1hr'",
            id="not-a-duration",
        ),
        pytest.param(
            "0s", "annotation sla-waiting-time: must be a positive duration, got '0s'", id="zero"
        ),
        pytest.param(
            "-5m",
            "annotation sla-waiting-time: must be a positive duration, got '-5m'",
            id="negative",
        ),
    ],
)
def test_a_bad_annotation_makes_the_job_invalid_with_a_clear_message(
    value: str, problem: str
) -> None:
    session, plugin = open_session(podgroup("bad").annotate("sla-waiting-time", value))
    job = session.jobs["default/bad"]

    assert plugin.validate_job(job) == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, problem)
    assert plugin.vote_enqueue(job) is Vote.REJECT
    assert session.findings.job_notes["default/bad"] == (
        f"podgroup default/bad is not valid: {problem}"
    )


def test_a_good_annotation_leaves_the_job_valid() -> None:
    session, plugin = open_session(podgroup("ok").annotate("sla-waiting-time", "5m"))

    assert plugin.validate_job(session.jobs["default/ok"]) is None


# --- arguments ------------------------------------------------------------------------------------
def test_the_argument_is_a_go_duration() -> None:
    factory = sla.build({"sla-waiting-time": "1h2m3s4ms5µs6ns"})

    assert factory.default == dt.timedelta(seconds=3723, microseconds=4005)


def test_without_the_argument_there_is_no_global_waiting_time() -> None:
    assert sla.build({}).default is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(
            "soon",
            "plugin sla: arguments.sla-waiting-time: must be a duration like '30s', '5m', "
            "'1h30m' or '500ms', got 'soon'",
            id="malformed",
        ),
        pytest.param(
            "0s",
            "plugin sla: arguments.sla-waiting-time: must be a positive duration, got '0s'",
            id="zero",
        ),
        pytest.param(
            "-1h",
            "plugin sla: arguments.sla-waiting-time: must not be negative, got '-1h'",
            id="negative",
        ),
    ],
)
def test_a_bad_argument_is_a_policy_error_naming_plugin_and_argument(
    value: str, message: str
) -> None:
    with pytest.raises(PolicyError) as caught:
        sessions.open_session(snapshot(), policy=policy(value))

    assert message in str(caught.value)


def test_an_unknown_argument_is_reported_with_a_zero_waiting_time() -> None:
    with pytest.raises(PolicyError) as caught:
        sessions.open_session(snapshot(), policy=policy("0s") + "      sla-wait: 1m\n")

    assert "arguments.sla-wait: unknown argument" in str(caught.value)
    assert "arguments.sla-waiting-time: must be a positive duration" in str(caught.value)
