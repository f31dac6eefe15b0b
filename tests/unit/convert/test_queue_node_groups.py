"""A Queue's node-group fields: `spec.affinity` and the `volcano.sh/nodegroup-resource-limits`
annotation (read by the nodegroup plugin)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from vscheduler.convert.queue import convert_queue
from vscheduler.errors import InputError
from vscheduler.model.facts import UNUSUAL_VALUE, FieldWarning, NodeGroupAffinity, NodeGroupLimit
from vscheduler.model.resources import Resources
from vscheduler.testing import strategies

LIMITS = "volcano.sh/nodegroup-resource-limits"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def raw_queue(spec: dict[str, Any] | None = None, limits: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "q1"}
    if limits is not None:
        meta["annotations"] = {LIMITS: limits}
    return {"kind": "Queue", "metadata": meta, "spec": spec or {}}


def test_without_affinity_the_queue_has_none() -> None:
    facts = convert_queue(raw_queue())
    assert facts.node_group_affinity is None
    assert facts.node_group_limits == ()
    assert facts.node_group_limits_problem == ""
    assert convert_queue(raw_queue({"affinity": None})).node_group_affinity is None


def test_an_empty_affinity_is_kept_as_the_queues_own() -> None:
    assert convert_queue(raw_queue({"affinity": {}})).node_group_affinity == NodeGroupAffinity()


def test_the_four_lists_are_read_in_order_as_written() -> None:
    spec = {
        "affinity": {
            "nodeGroupAffinity": {REQUIRED: ["g1", "g3"], PREFERRED: ["g3", "g1", "g3"]},
            "nodeGroupAntiAffinity": {REQUIRED: ["g2"], PREFERRED: ["g4"]},
        }
    }
    assert convert_queue(raw_queue(spec)).node_group_affinity == NodeGroupAffinity(
        required=("g1", "g3"),
        preferred=("g3", "g1", "g3"),
        anti_required=("g2",),
        anti_preferred=("g4",),
    )


@pytest.mark.parametrize(
    ("affinity", "message"),
    [
        ("g1", "spec.affinity: must be a mapping, got 'g1'"),
        (
            {"nodeGroupAffinity": ["g1"]},
            "spec.affinity.nodeGroupAffinity: must be a mapping, got a list",
        ),
        (
            {"nodeGroupAffinity": {REQUIRED: "g1"}},
            f"spec.affinity.nodeGroupAffinity.{REQUIRED}: must be a list, got 'g1'",
        ),
        (
            {"nodeGroupAntiAffinity": {PREFERRED: ["g1", 2]}},
            f"spec.affinity.nodeGroupAntiAffinity.{PREFERRED}[1]: must be a string, got 2",
        ),
    ],
)
def test_a_malformed_affinity_is_an_error_naming_the_field(affinity: object, message: str) -> None:
    with pytest.raises(InputError) as caught:
        convert_queue(raw_queue({"affinity": affinity}))
    assert str(caught.value) == "Queue q1: " + message


def test_limits_list_only_the_resources_named_per_group() -> None:
    facts = convert_queue(
        raw_queue(limits='{"g2": {"cpu": 50}, "g1": {"cpu": "3", "memory": "8Gi", "pods": null}}')
    )
    assert facts.node_group_limits == (
        NodeGroupLimit(
            group="g1",
            names=("cpu", "memory", "pods"),
            amounts=Resources(cpu=3000, memory=8 * 2**30),
        ),
        NodeGroupLimit(group="g2", names=("cpu",), amounts=Resources(cpu=50_000)),
    )
    assert facts.warnings == ()


@pytest.mark.parametrize("text", ["", "null", "{}"])
def test_an_empty_limits_annotation_limits_nothing(text: str) -> None:
    facts = convert_queue(raw_queue(limits=text))
    assert (facts.node_group_limits, facts.node_group_limits_problem) == ((), "")


WHERE = f"Queue q1: metadata.annotations.{LIMITS}"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"group1":{"cpu":', f"{WHERE}: not JSON: Expecting value: line 1 column 18 (char 17)"),
        ("[1]", f"{WHERE}: must be a JSON object of node group to resource list"),
        (
            '{"g": ["cpu"]}',
            f"{WHERE}.g: must be a mapping of resource name to quantity, got a list",
        ),
        ('{"g": {"cpu": "lots"}}', f"{WHERE}.g.cpu: invalid quantity 'lots': no digits"),
    ],
)
def test_a_malformed_limits_annotation_is_a_warning_and_the_queues_problem_for_nodegroup(
    text: str, problem: str
) -> None:
    facts = convert_queue(raw_queue(limits=text))
    assert facts.node_group_limits == ()
    assert facts.node_group_limits_problem == problem
    assert facts.problem == ""  # the queue still takes jobs (without the nodegroup plugin)
    assert facts.warnings == (
        FieldWarning(
            UNUSUAL_VALUE,
            problem + " (the nodegroup plugin keeps the queue's pods off every node)",
        ),
    )


def test_a_negative_limit_is_read_as_0_with_a_warning() -> None:
    facts = convert_queue(raw_queue(limits='{"g": {"cpu": "-1"}}'))
    assert facts.node_group_limits == (
        NodeGroupLimit(group="g", names=("cpu",), amounts=Resources()),
    )
    assert facts.warnings == (
        FieldWarning(UNUSUAL_VALUE, f"{WHERE}.g.cpu: '-1' is negative; it is read as 0"),
    )


@given(strategies.queues())
def test_any_generated_queue_converts_or_fails_with_an_input_error(obj: dict[str, Any]) -> None:
    obj = {**obj, "metadata": {**obj["metadata"], "name": "q"}}
    try:
        facts = convert_queue(obj)
    except InputError:
        return
    assert facts.node_group_limits_problem == "" or facts.warnings
