"""A Queue's `volcano.sh/hierarchy` and `volcano.sh/hierarchy-weights` annotations (read by drf
with `enableHierarchy`): the levels below the root, and a warning for each malformed part."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from vscheduler.convert.queue import convert_queue
from vscheduler.model.facts import UNUSUAL_VALUE, FieldWarning, HierarchyLevel
from vscheduler.testing import strategies

WHERE = "Queue q1: metadata.annotations.volcano.sh/hierarchy-weights: "


def raw_queue(path: str | None, weights: str | None) -> dict[str, Any]:
    annotations = {}
    if path is not None:
        annotations["volcano.sh/hierarchy"] = path
    if weights is not None:
        annotations["volcano.sh/hierarchy-weights"] = weights
    return {"kind": "Queue", "metadata": {"name": "q1", "annotations": annotations}}


def read(path: str | None, weights: str | None) -> tuple[tuple[HierarchyLevel, ...], list[str]]:
    facts = convert_queue(raw_queue(path, weights))
    assert all(warning.reason == UNUSUAL_VALUE for warning in facts.warnings)
    return facts.hierarchy, [warning.message for warning in facts.warnings]


def test_without_the_annotations_the_queue_hangs_from_the_root() -> None:
    assert read(None, None) == ((), [])
    assert read("root", "1") == ((), [])


def test_the_levels_below_the_root_take_their_weights() -> None:
    assert read("root/eng/prod", "1/2/8") == (
        (HierarchyLevel("eng", 2.0), HierarchyLevel("prod", 8.0)),
        [],
    )
    assert read("root/sci", "100/2.5e1") == ((HierarchyLevel("sci", 25.0),), [])


def test_a_path_not_starting_with_root_is_read_as_volcanos_admission_rewrites_it() -> None:
    levels, warnings = read("eng/prod", "2/8")

    assert levels == (HierarchyLevel("eng", 2.0), HierarchyLevel("prod", 8.0))
    assert warnings == [
        "Queue q1: metadata.annotations.volcano.sh/hierarchy: 'eng/prod' does not start with"
        " root: read as 'root/eng/prod' with weights '1/2/8', as Volcano's admission rewrites"
        " them"
    ]


@pytest.mark.parametrize(
    ("weights", "read_as", "message"),
    [
        ("1/x/8", (1.0, 8.0), "'x' is not a number: read as 1"),
        ("1/0/-2", (1.0, 1.0), "'0' is not above 0, '-2' is not above 0: read as 1"),
        ("1/0.5/8", (1.0, 8.0), "'0.5' is below 1: read as 1"),
        (
            "1/NaN/inf",
            (1.0, 1.0),
            "'NaN' is not a finite number, 'inf' is not a finite number: read as 1",
        ),
        ("1/ 2/8", (1.0, 8.0), "' 2' is not a number: read as 1"),
    ],
)
def test_a_malformed_weight_is_read_as_1_with_a_warning(
    weights: str, read_as: tuple[float, ...], message: str
) -> None:
    levels, warnings = read("root/eng/prod", weights)

    assert tuple(level.weight for level in levels) == read_as
    assert warnings == [WHERE + message]


def test_too_few_weights_leave_the_lower_levels_at_1() -> None:
    levels, warnings = read("root/eng/prod", "1/2")

    assert levels == (HierarchyLevel("eng", 2.0), HierarchyLevel("prod", 1.0))
    assert warnings == [
        WHERE + "2 weights for the 3 names of volcano.sh/hierarchy 'root/eng/prod': a level"
        " without a weight weighs 1, a weight without a level is ignored"
    ]


def test_extra_weights_are_ignored() -> None:
    levels, warnings = read("root/eng", "1/2/8")

    assert levels == (HierarchyLevel("eng", 2.0),)
    assert len(warnings) == 1


def test_a_path_without_weights_weighs_1_everywhere() -> None:
    levels, warnings = read("root/eng/prod", None)

    assert levels == (HierarchyLevel("eng", 1.0), HierarchyLevel("prod", 1.0))
    assert warnings == [
        WHERE + "not set for volcano.sh/hierarchy 'root/eng/prod': every level weighs 1"
    ]


def test_weights_without_a_path_are_ignored() -> None:
    assert read(None, "1/2") == (
        (),
        [WHERE + "set without volcano.sh/hierarchy: ignored (the queue's jobs hang from the root)"],
    )


@given(strategies.queues())
def test_any_queue_annotations_give_levels_of_weight_at_least_1(raw: dict[str, Any]) -> None:
    facts = convert_queue({**raw, "metadata": {**raw["metadata"], "name": "q1"}})

    assert all(level.weight >= 1 for level in facts.hierarchy)
    assert all(isinstance(warning, FieldWarning) for warning in facts.warnings)
