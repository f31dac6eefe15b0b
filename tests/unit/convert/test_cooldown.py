"""A pod's cooldown (`volcano.sh/cooldown-time`: the label, else the annotation, a Go duration)
and its PodScheduled time, as the pod converter reads them for cdp; the warnings of a value that
is no duration (unprotected, as Volcano) or is negative (read as written, as Volcano)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from vscheduler.convert.cooldown import cooldown, scheduled_at
from vscheduler.convert.pod import convert_pod
from vscheduler.errors import InputError
from vscheduler.model.facts import UNUSUAL_VALUE, FieldWarning, TaskFacts

KEY = "volcano.sh/cooldown-time"
LABEL = "Pod ns/p"
NOT_A_DURATION = (
    "is not a duration like '600s', '10m' or '1h30m'; it is read as absent, as Volcano reads"
    " it: cdp does not protect the pod from preempt or reclaim"
)


def test_the_label_comes_first_and_the_annotation_serves_without_it() -> None:
    assert cooldown({KEY: "1m"}, {KEY: "2m"}, LABEL) == (dt.timedelta(minutes=2), ())
    assert cooldown({KEY: "1m"}, {}, LABEL) == (dt.timedelta(minutes=1), ())
    assert cooldown({}, {}, LABEL) == (None, ())


def test_a_label_that_is_no_duration_is_not_replaced_by_the_annotation() -> None:
    """Volcano's `podCooldownTime` takes the label's value when the key is there, and does not
    look at the annotation again when it does not parse."""
    assert cooldown({KEY: "1m"}, {KEY: "ten"}, LABEL) == (
        None,
        (
            FieldWarning(
                UNUSUAL_VALUE,
                f"Pod ns/p: metadata.labels[volcano.sh/cooldown-time]: 'ten' {NOT_A_DURATION}",
            ),
        ),
    )


def test_an_empty_or_long_value_is_no_duration_and_the_warning_quotes_it_short() -> None:
    [empty] = cooldown({KEY: ""}, {}, LABEL)[1]
    [long] = cooldown({KEY: "x" * 100}, {}, LABEL)[1]

    assert (
        empty.message
        == f"Pod ns/p: metadata.annotations[volcano.sh/cooldown-time]: '' {NOT_A_DURATION}"
    )
    assert long.message == (
        f"Pod ns/p: metadata.annotations[volcano.sh/cooldown-time]: '{'x' * 77}...' {NOT_A_DURATION}"
    )


def test_a_negative_cooldown_is_read_as_written_with_a_warning() -> None:
    """Go's ParseDuration accepts `-10m`; `scheduled + (-10m)` is after now only for a pod
    scheduled more than ten minutes ahead of the clock, so it protects (almost) nothing."""
    assert cooldown({KEY: "-10m"}, {}, LABEL) == (
        dt.timedelta(minutes=-10),
        (
            FieldWarning(
                UNUSUAL_VALUE,
                "Pod ns/p: metadata.annotations[volcano.sh/cooldown-time]: '-10m' is negative;"
                " it is read as written, as Volcano reads it: cdp protects the pod only while"
                " its PodScheduled time is further ahead of the scheduler's clock than that",
            ),
        ),
    )


@pytest.mark.parametrize(
    ("text", "micro"),
    [("1ns", 1), ("1001ns", 2), ("1000ns", 1), ("-1ns", 0), ("-1500ns", -1), ("0", 0)],
)
def test_nanoseconds_round_up_to_the_clocks_microseconds(text: str, micro: int) -> None:
    """`scheduled + d > now` with `now` in microseconds decides as Go's nanoseconds do when `d`
    is rounded up."""
    assert cooldown({KEY: text}, {}, LABEL)[0] == dt.timedelta(microseconds=micro)


def condition(kind: str, status: str, when: str | None) -> dict[str, Any]:
    return {"type": kind, "status": status, "lastTransitionTime": when}


def test_the_scheduled_time_is_that_of_the_first_podscheduled_true_condition() -> None:
    conditions = [
        condition("Ready", "True", "2026-01-01T00:00:01Z"),
        condition("PodScheduled", "False", "2026-01-01T00:00:02Z"),
        condition("PodScheduled", "True", "2026-01-01T00:00:03Z"),
        condition("PodScheduled", "True", "2026-01-01T00:00:04Z"),
    ]
    assert scheduled_at({"conditions": conditions}, LABEL) == dt.datetime(
        2026, 1, 1, 0, 0, 3, tzinfo=dt.UTC
    )


@pytest.mark.parametrize(
    "status",
    [
        {},
        {"conditions": None},
        {"conditions": [condition("PodScheduled", "False", "2026-01-01T00:00:02Z")]},
        {"conditions": [condition("PodScheduled", "True", None)]},  # Go's zero time
        {"conditions": ["PodScheduled"]},
    ],
)
def test_without_a_podscheduled_true_time_there_is_none(status: dict[str, Any]) -> None:
    assert scheduled_at(status, LABEL) is None


def test_a_malformed_podscheduled_time_names_the_field() -> None:
    status = {"conditions": [condition("PodScheduled", "True", "yesterday")]}
    with pytest.raises(
        InputError, match=r"status\.conditions\[type=PodScheduled\]\.lastTransitionTime"
    ):
        scheduled_at(status, LABEL)


def raw_pod(scheduler: str, annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "uid": "u", "annotations": annotations},
        "spec": {"schedulerName": scheduler, "nodeName": "n1", "containers": [{"name": "c"}]},
        "status": {
            "phase": "Running",
            "conditions": [condition("PodScheduled", "True", "2026-01-01T00:00:03Z")],
        },
    }


def convert(scheduler: str, annotations: dict[str, str]) -> TaskFacts:
    facts = convert_pod(
        raw_pod(scheduler, annotations), priority_classes={}, scheduler_name="vscheduler"
    )
    assert facts is not None
    return facts


def test_the_pod_converter_reads_both_facts_and_warns_only_on_its_own_pods() -> None:
    ours = convert("vscheduler", {KEY: "5m"})
    bad = convert("vscheduler", {KEY: "5 minutes"})
    theirs = convert("default-scheduler", {KEY: "5 minutes"})

    assert (ours.cooldown, ours.scheduled_at) == (
        dt.timedelta(minutes=5),
        dt.datetime(2026, 1, 1, 0, 0, 3, tzinfo=dt.UTC),
    )
    assert [w.message for w in bad.warnings] == [
        f"Pod ns/p: metadata.annotations[volcano.sh/cooldown-time]: '5 minutes' {NOT_A_DURATION}"
    ]
    assert (theirs.cooldown, theirs.warnings) == (None, ())


def test_neither_fact_is_part_of_the_pods_template() -> None:
    """Pods of one template with different cooldowns and times share their class: cdp reads
    them per pod, placement never does."""
    one, other = convert("vscheduler", {KEY: "5m"}), convert("vscheduler", {})
    assert one.template_key() == other.template_key()
