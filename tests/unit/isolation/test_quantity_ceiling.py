"""Every quantity the API server accepts is handled: above the ceiling it is read as the ceiling,
the object is warned (naming the field, the amount and the ceiling) and still scheduled."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.convert.node import convert_node
from vscheduler.convert.pod import convert_pod
from vscheduler.convert.podgroup import convert_podgroup
from vscheduler.convert.queue import convert_queue
from vscheduler.informer.kinds import NODE, POD
from vscheduler.model.facts import FieldWarning
from vscheduler.model.quantity import CEILING, over_ceiling, parse_nanos, to_resources
from vscheduler.model.resources import Resources
from vscheduler.simulate import Request, simulate

PREEMPT_POLICY = """\
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""
HUGE_CPU = (
    "Pod default/huge: spec.containers[*].resources.requests.cpu: 1e16 is above "
    "the scheduler's ceiling 35184372088832m (2^45 scheduler units); it is read as "
    "35184372088832m"
)


def raw_node(name: str, **allocatable: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "status": {
            "allocatable": {"pods": "110", **allocatable},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def raw_pod(name: str, priority: int = 0, **requests: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {
            "schedulerName": "vscheduler",
            "priority": priority,
            "containers": [{"name": "m", "image": "i", "resources": {"requests": requests}}],
        },
        "status": {"phase": "Pending"},
    }


def run_simulate(tmp_path: Path, *objects: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(objects))
    policy = tmp_path / "policy.yaml"
    policy.write_text(PREEMPT_POLICY)
    warnings: list[str] = []
    request = Request(snapshots=[str(cluster)], policy_file=str(policy), warn=warnings.append)
    return simulate(request), warnings


def test_an_amount_above_the_ceiling_is_held_at_the_ceiling() -> None:
    nanos = {
        "cpu": parse_nanos("1e16"),
        "memory": parse_nanos("9Ei"),
        "x.io/y": parse_nanos("1e30"),
    }
    assert to_resources(nanos) == Resources({"cpu": CEILING, "memory": CEILING, "x.io/y": CEILING})


def test_an_amount_at_the_ceiling_is_not_warned() -> None:
    assert over_ceiling({"memory": CEILING * 10**9}, where="Node n1: status.allocatable") == ()


def test_the_warning_names_the_field_the_amount_and_the_ceiling() -> None:
    assert over_ceiling({"memory": parse_nanos("9Ei")}, where="Node n1: status.allocatable") == (
        "Node n1: status.allocatable.memory: 9223372036854775807 is above the scheduler's "
        "ceiling 35184372088832 (2^45 scheduler units); it is read as 35184372088832",
    )


def test_a_pod_requesting_1e16_cpu_is_read_at_the_ceiling_and_warned() -> None:
    task = convert_pod(
        raw_pod("huge", cpu="1e16"), priority_classes={}, scheduler_name="vscheduler"
    )
    assert task is not None
    assert task.resreq == Resources(cpu=CEILING)
    assert [w.message for w in task.warnings] == [HUGE_CPU]
    assert task.problem == ""


def test_a_node_with_1e18_cpu_and_9ei_memory_is_read_at_the_ceiling_and_warned() -> None:
    node = convert_node(raw_node("big", cpu="1e18", memory="9Ei", **{"example.com/gpu": "1e20"}))
    assert node.allocatable == Resources(
        {"cpu": CEILING, "memory": CEILING, "example.com/gpu": CEILING}
    )
    assert [w.message.split(" is above")[0] for w in node.warnings] == [
        "Node big: status.allocatable.cpu: 1e18",
        "Node big: status.allocatable.example.com/gpu: 1e20",
        "Node big: status.allocatable.memory: 9223372036854775807",
    ]


def test_a_node_holding_1e18_pods_holds_the_ceiling_of_pods() -> None:
    node = convert_node(raw_node("big", cpu="8", pods="1e18"))
    assert node.max_pods == CEILING
    assert node.warnings[0].message.startswith("Node big: status.allocatable.pods: 1e18 ")


def test_a_queue_and_a_podgroup_above_the_ceiling_are_warned_on_their_fields() -> None:
    queue = convert_queue(
        {
            "metadata": {"name": "q"},
            "spec": {"capability": {"cpu": "1e17"}, "guarantee": {"resource": {"memory": "9Ei"}}},
        }
    )
    assert queue.capability == Resources(cpu=CEILING)
    assert [w.message.split(":")[1] for w in queue.warnings] == [
        " spec.capability.cpu",
        " spec.guarantee.resource.memory",
    ]
    group = convert_podgroup(
        {
            "metadata": {"name": "g", "namespace": "default"},
            "spec": {"minResources": {"nvidia.com/gpu": "1e19"}},
        },
        priority_classes={},
    )
    assert group.warnings[0].message.startswith(
        "PodGroup default/g: spec.minResources.nvidia.com/gpu: "
    )


def test_a_1e16_cpu_pod_under_a_preempt_policy_leaves_the_other_pods_scheduled(
    tmp_path: Path,
) -> None:
    output, warnings = run_simulate(
        tmp_path,
        raw_node("n1", cpu="4", memory="8Gi"),
        raw_pod("running", cpu="1"),
        raw_pod("huge", priority=1000, cpu="1e16"),
        raw_pod("small", cpu="1"),
    )
    assert output["binds"] == {"default/running": "n1", "default/small": "n1"}
    assert list(output["cycles"][0]["unschedulable"]) == ["default/huge"]
    assert warnings == [HUGE_CPU]


def test_a_node_with_1e18_cpu_and_9ei_memory_takes_pods_like_any_node(tmp_path: Path) -> None:
    output, warnings = run_simulate(
        tmp_path,
        raw_node("big", cpu="1e18", memory="9Ei"),
        raw_pod("many-cores", cpu="1e6"),
        raw_pod("much-memory", memory="16Ti"),
    )
    assert output["binds"] == {"default/many-cores": "big", "default/much-memory": "big"}
    assert [w.split(":")[1] for w in warnings] == [
        " status.allocatable.cpu",
        " status.allocatable.memory",
    ]


def test_the_cache_keeps_each_objects_warnings_until_it_is_fixed() -> None:
    cache = SchedulerCache(clock=FixedClock(dt.datetime(2026, 1, 1, tzinfo=dt.UTC)))
    cache.replace(NODE, [raw_node("n1", cpu="1e18")])
    cache.replace(POD, [raw_pod("huge", cpu="1e16")])
    assert cache.warnings() == {
        "Node n1": (
            FieldWarning(
                "QuantityClamped",
                "Node n1: status.allocatable.cpu: 1e18 is above the scheduler's "
                "ceiling 35184372088832m (2^45 scheduler units); it is read as 35184372088832m",
            ),
        ),
        "Pod default/huge": (FieldWarning("QuantityClamped", HUGE_CPU),),
    }
    cache.replace(POD, [raw_pod("huge", cpu="1")])
    assert list(cache.warnings()) == ["Node n1"]


def test_simulate_on_a_1e16_cpu_pod_file_prints_the_warning_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vscheduler import cli

    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        yaml.safe_dump_all([raw_node("n1", cpu="4", memory="8Gi"), raw_pod("huge", cpu="1e16")])
    )
    policy = tmp_path / "policy.yaml"
    policy.write_text(PREEMPT_POLICY)
    code = cli.main(["simulate", str(cluster), "--config", str(policy), "-o", "table"])
    out = capsys.readouterr()
    assert code == 0
    assert out.err == f"vscheduler: warning: {HUGE_CPU}\n"
    assert "pending    default/huge: " in out.out


def test_an_amount_beyond_1e1000_is_warned_as_more_than_that() -> None:
    (warning,) = over_ceiling({"cpu": parse_nanos("1e5000")}, where="Node n: status.allocatable")
    assert warning.startswith("Node n: status.allocatable.cpu: more than 1e991 is above")
