from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from vscheduler.convert.node import convert_node
from vscheduler.errors import InputError
from vscheduler.model.facts import Taint
from vscheduler.model.resources import Resources

GI = 1024**3


def raw_node(**status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "64"}, **status},
    }


def test_allocatable_is_read_without_the_pods_entry() -> None:
    node = convert_node(raw_node(allocatable={"cpu": "7500m", "memory": "30Gi", "pods": "60"}))
    assert node.allocatable == Resources(cpu=7500, memory=30 * GI)
    assert node.capacity == Resources(cpu=8000, memory=32 * GI)
    assert node.max_pods == 60


def test_allocatable_defaults_to_capacity() -> None:
    node = convert_node(raw_node())
    assert (node.allocatable, node.max_pods) == (Resources(cpu=8000, memory=32 * GI), 64)


def test_a_node_without_a_pod_count_holds_110_pods() -> None:
    obj = raw_node(allocatable={"cpu": "1"})
    del obj["status"]["capacity"]
    node = convert_node(obj)
    assert (node.allocatable, node.capacity, node.max_pods) == (
        Resources(cpu=1000),
        Resources(),
        110,
    )


def test_taints_and_the_unschedulable_flag_are_read() -> None:
    obj = raw_node()
    obj["spec"] = {
        "unschedulable": True,
        "taints": [
            {"key": "gpu", "value": "a100", "effect": "NoSchedule"},
            {"key": "x", "effect": "NoExecute"},
        ],
    }
    node = convert_node(obj)
    assert node.unschedulable is True
    assert node.taints == (
        Taint(key="gpu", value="a100", effect="NoSchedule"),
        Taint(key="x", effect="NoExecute"),
    )


@pytest.mark.parametrize(
    ("conditions", "ready"),
    [
        (None, True),
        ([], True),
        ([{"type": "Ready", "status": "True"}], True),
        ([{"type": "Ready", "status": "False"}], False),
        ([{"type": "Ready", "status": "Unknown"}], False),
        ([{"type": "MemoryPressure", "status": "False"}], True),
    ],
)
def test_only_a_ready_condition_that_is_not_true_makes_a_node_not_ready(
    conditions: list[dict[str, str]] | None, ready: bool
) -> None:
    obj = raw_node()
    if conditions is not None:
        obj["status"]["conditions"] = conditions
    assert convert_node(obj).ready is ready


def test_every_name_of_an_image_maps_to_its_size() -> None:
    images = [{"names": ["nginx:1.25", "nginx@sha256:abc"], "sizeBytes": 70}, {"names": ["pause"]}]
    assert convert_node(raw_node(images=images)).images == {
        "nginx:1.25": 70,
        "nginx@sha256:abc": 70,
        "pause": 0,
    }


def test_labels_annotations_and_creation_time_are_kept() -> None:
    obj = raw_node()
    obj["metadata"].update(
        labels={"zone": "a"}, annotations={"a": "b"}, creationTimestamp="2024-01-02T03:04:05Z"
    )
    node = convert_node(obj)
    assert (node.name, node.labels, node.annotations) == ("n1", {"zone": "a"}, {"a": "b"})
    assert node.created == dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            {"status": {"capacity": {"cpu": "lots"}}},
            "status.capacity.cpu: invalid quantity 'lots': no digits",
        ),
        (
            {"status": {"allocatable": {"memory": "-1"}}},
            "status.allocatable.memory: must not be negative, got '-1'",
        ),
        ({"status": {"conditions": {}}}, "status.conditions: must be a list, got a mapping"),
        (
            {"status": {"images": [{"names": "x"}]}},
            "status.images[0].names: must be a list, got 'x'",
        ),
        (
            {"status": {"images": [{"sizeBytes": -1}]}},
            "status.images[0].sizeBytes: must be an integer >= 0, got -1",
        ),
        (
            {"spec": {"unschedulable": "yes"}},
            "spec.unschedulable: must be true or false, got 'yes'",
        ),
        (
            {"spec": {"taints": [{"key": "a"}]}},
            "spec.taints[0].effect: must be one of NoSchedule, PreferNoSchedule, NoExecute",
        ),
        (
            {"spec": {"taints": [{"key": "a", "effect": "Sometimes"}]}},
            "spec.taints[0].effect: must be one of NoSchedule, PreferNoSchedule, NoExecute,"
            " got 'Sometimes'",
        ),
        (
            {"spec": {"taints": [{"effect": "NoSchedule"}]}},
            "spec.taints[0].key: must be a non-empty string",
        ),
    ],
)
def test_a_malformed_field_is_an_error_naming_the_node_and_the_field(
    patch: dict[str, Any], message: str
) -> None:
    obj = raw_node()
    for section, fields in patch.items():
        obj.setdefault(section, {}).update(fields)
    with pytest.raises(InputError) as caught:
        convert_node(obj)
    assert str(caught.value) == f"Node n1: {message}"
