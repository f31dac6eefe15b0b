"""The default policy plus `usage`: pods avoid nodes measured above the thresholds and prefer the
least loaded ones, using stale-but-recent data, and ignoring data older than five minutes."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from vscheduler import catalog
from vscheduler.conf.default import DEFAULT_POLICY_TEXT
from vscheduler.convert.files import SourcedObject
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import NodeUsage
from vscheduler.testing.builders import START, NodeBuilder, node, pod, snapshot
from vscheduler.testing.scenario import run

POLICY = DEFAULT_POLICY_TEXT + "  - name: usage\n"
NOW = START + dt.timedelta(hours=1)


def measured(
    name: str, cpu: float, memory: float, *, age_s: float, stale: bool = False
) -> NodeUsage:
    return NodeUsage(
        node=name,
        usage={"cpu": {"10m": cpu}, "memory": {"10m": memory}},
        metrics_time=NOW - dt.timedelta(seconds=age_s),
        stale=stale,
    )


def nodes() -> list[NodeBuilder]:
    return [node(f"n{i}").resources(cpu="8", memory="16Gi") for i in (1, 2, 3)]


def test_usage_joins_the_second_tier_of_the_default_policy() -> None:
    pipeline = catalog.load_pipeline(POLICY)
    assert [entry.option.name for entry in pipeline.tiers[1]][-2:] == ["binpack", "usage"]


def test_a_pod_avoids_a_node_over_the_cpu_threshold() -> None:
    snap = snapshot(
        *nodes(),
        measured("n1", 95.0, 40.0, age_s=30),
        measured("n2", 50.0, 50.0, age_s=30),
        measured("n3", 50.0, 50.0, age_s=30),
        pod("p").requests(cpu="1", memory="1Gi"),
    )

    [outcome] = run(snap, policy=POLICY, now=NOW)

    assert outcome.binds == {"default/p": "n2"}


def test_a_pod_goes_to_the_least_loaded_node() -> None:
    snap = snapshot(
        *nodes(),
        measured("n1", 60.0, 60.0, age_s=30),
        measured("n2", 40.0, 40.0, age_s=30),
        measured("n3", 20.0, 30.0, age_s=30),
        pod("p").requests(cpu="1", memory="1Gi"),
    )

    [outcome] = run(snap, policy=POLICY, now=NOW)

    assert outcome.binds == {"default/p": "n3"}


def test_stale_but_recent_usage_is_still_used() -> None:
    snap = snapshot(
        *nodes(),
        measured("n1", 95.0, 40.0, age_s=120, stale=True),
        measured("n2", 99.0, 99.0, age_s=240, stale=True),
        pod("p").requests(cpu="1", memory="1Gi"),
    )

    [outcome] = run(snap, policy=POLICY, now=NOW)

    assert outcome.binds == {"default/p": "n3"}


def test_usage_older_than_five_minutes_is_ignored() -> None:
    snap = snapshot(
        *nodes(),
        measured("n1", 95.0, 95.0, age_s=301, stale=True),
        measured("n2", 10.0, 10.0, age_s=600),
        pod("p").requests(cpu="1", memory="1Gi"),
    )

    [outcome] = run(snap, policy=POLICY, now=NOW)

    # every node scores the same without usage: the first node listed wins
    assert outcome.binds == {"default/p": "n1"}


def test_a_pod_with_every_node_overloaded_stays_pending_with_volcanos_reasons() -> None:
    snap = snapshot(
        *nodes(),
        measured("n1", 95.0, 40.0, age_s=30),
        measured("n2", 40.0, 95.0, age_s=30),
        measured("n3", 85.0, 85.0, age_s=30),
        pod("p").requests(cpu="1", memory="1Gi"),
    )

    [outcome] = run(snap, policy=POLICY, now=NOW)

    assert outcome.binds == {}
    assert outcome.unschedulable == {
        "default/p": "0/3 nodes are available: "
        "1 the memory load of the node exceeds the upper limit., "
        "2 the CPU load of the node exceeds the upper limit.."
    }


def doc(kind: str, api: str, name: str, **rest: Any) -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name}, **rest}


def usage_doc(name: str, cpu: float) -> dict[str, Any]:
    when = (NOW - dt.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    usage = {"cpu": {"10m": cpu}, "memory": {"10m": 20.0}}
    return doc("NodeUsage", "vscheduler.dev/v1alpha1", name, usage=usage, metricsTime=when)


def pod_doc(name: str) -> dict[str, Any]:
    raw = doc("Pod", "v1", name, spec={"schedulerName": "vscheduler"})
    raw["metadata"].update(namespace="default", uid=f"uid-{name}")
    raw["spec"]["containers"] = [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]
    return raw


def test_node_usage_documents_steer_placement_and_a_new_measurement_changes_it() -> None:
    capacity = {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}
    documents = [
        doc("Node", "v1", "n1", status=capacity),
        doc("Node", "v1", "n2", status=capacity),
        usage_doc("n1", 90.0),
        usage_doc("n2", 30.0),
        pod_doc("a"),
        pod_doc("b"),
    ]
    snap = build_snapshot([SourcedObject(f"c.yaml#{i}", d) for i, d in enumerate(documents)])
    later = build_snapshot(
        [SourcedObject("d.yaml#1", d) for d in (usage_doc("n1", 30.0), usage_doc("n2", 90.0))]
        + [SourcedObject("d.yaml#2", pod_doc("c"))]
    )

    def n2_gets_busy(cycle: int, current: ClusterSnapshot) -> ClusterSnapshot:
        tasks, jobs = {**current.tasks, **later.tasks}, {**current.jobs, **later.jobs}
        return dataclasses.replace(current, usage=later.usage, tasks=tasks, jobs=jobs)

    first, second = run(snap, policy=POLICY, now=NOW, cycles=2, between=n2_gets_busy)

    assert first.binds == {"default/a": "n2", "default/b": "n2"}
    assert second.binds == {"default/c": "n1"}
