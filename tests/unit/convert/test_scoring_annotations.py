"""A pod's resource-strategy-fit annotations: read into `TaskFacts.scoring` when well formed (as
Go's json.Unmarshal into map[ResourceName]int reads them); a malformed pair is reported on the
pod (a Warning Event; a line of simulate's stderr) and ignored."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, strategies as st

from vscheduler.convert.pod import convert_pod
from vscheduler.model.facts import UNUSUAL_VALUE, FieldWarning, ScoringOverride, TaskFacts
from vscheduler.testing.strategies import scoring_annotations

TYPE = "volcano.sh/resource-strategy-scoring-type"
WEIGHT = "volcano.sh/resource-strategy-weight"
IGNORED = "both annotations are ignored (the policy's resource-strategy-fit resources apply)"


def convert(annotations: dict[str, str]) -> TaskFacts:
    raw: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "uid": "u", "annotations": annotations},
        "spec": {"schedulerName": "vscheduler", "containers": [{"name": "c"}]},
        "status": {"phase": "Pending"},
    }
    task = convert_pod(raw, priority_classes={}, scheduler_name="vscheduler")
    assert task is not None
    return task


def test_a_well_formed_pair_is_the_pods_scoring() -> None:
    task = convert({TYPE: "MostAllocated", WEIGHT: '{"nvidia.com/gpu": 3, "cpu": -1, "x": 0}'})
    assert task.scoring == ScoringOverride(
        "MostAllocated", (("cpu", -1), ("nvidia.com/gpu", 3), ("x", 0))
    )
    assert task.warnings == ()


def test_no_annotations_no_scoring() -> None:
    task = convert({})
    assert task.scoring is None
    assert task.warnings == ()


def test_the_scoring_is_part_of_the_pods_template() -> None:
    plain = convert({})
    own = convert({TYPE: "LeastAllocated", WEIGHT: '{"cpu": 1}'})
    assert plain.template_key() != own.template_key()


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        pytest.param(
            {TYPE: "LeastAllocated"},
            f"Pod ns/p: metadata.annotations[{WEIGHT}]: missing, though {TYPE} is set: {IGNORED}",
            id="weight missing",
        ),
        pytest.param(
            {TYPE: "LeastAllocated", WEIGHT: "invalid-json"},
            f"Pod ns/p: metadata.annotations[{WEIGHT}]: must be a JSON object of resource name"
            ' to integer weight like {"cpu": 1, "nvidia.com/gpu": 2}, got'
            f" 'invalid-json': {IGNORED}",
            id="not JSON",
        ),
        pytest.param(
            {TYPE: "MostAllocated", WEIGHT: '{"cpu": 1.5}'},
            f"Pod ns/p: metadata.annotations[{WEIGHT}]: must be a JSON object of resource name"
            ' to integer weight like {"cpu": 1, "nvidia.com/gpu": 2}, got'
            f""" '{{"cpu": 1.5}}': {IGNORED}""",
            id="not an integer",
        ),
        pytest.param(
            {TYPE: "mostallocated", WEIGHT: '{"cpu": 1}'},
            f"Pod ns/p: metadata.annotations[{TYPE}]: must be MostAllocated or LeastAllocated,"
            f" got 'mostallocated': {IGNORED}",
            id="unknown strategy",
        ),
        pytest.param(
            {WEIGHT: '{"cpu": 1}'},
            f"Pod ns/p: metadata.annotations[{WEIGHT}]: ignored without {TYPE}",
            id="weight without a strategy",
        ),
        pytest.param(
            {TYPE: "MostAllocated", WEIGHT: "x" * 100},
            f"Pod ns/p: metadata.annotations[{WEIGHT}]: must be a JSON object of resource name"
            ' to integer weight like {"cpu": 1, "nvidia.com/gpu": 2}, got'
            f" '{'x' * 77}...': {IGNORED}",
            id="a long value is cut",
        ),
    ],
)
def test_a_malformed_pair_is_reported_on_the_pod_and_ignored(
    annotations: dict[str, str], message: str
) -> None:
    task = convert(annotations)
    assert task.scoring is None
    assert task.problem == ""
    assert task.warnings == (FieldWarning(UNUSUAL_VALUE, message),)


@pytest.mark.parametrize(
    "weights",
    [
        '{"cpu": 1e2}',
        '{"cpu": true}',
        '{"cpu": 9223372036854775808}',
        '{"cpu": NaN}',
        "null",
        "[1]",
    ],
)
def test_what_go_cannot_read_into_map_of_int_is_malformed(weights: str) -> None:
    task = convert({TYPE: "MostAllocated", WEIGHT: weights})
    assert task.scoring is None
    assert len(task.warnings) == 1


@given(scoring_annotations(), st.text(max_size=30))
def test_any_annotation_values_convert(annotations: dict[str, str], extra: str) -> None:
    task = convert({**annotations, "example.com/x": extra})
    assert (task.scoring is None) or (task.scoring.strategy in ("MostAllocated", "LeastAllocated"))
    assert len(task.warnings) <= 1
