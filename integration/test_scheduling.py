"""Plain pods, other schedulers' pods, queues sharing by weight and unplaceable pods, on a real
API server with the scheduler as a subprocess."""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable

import pytest

from integration import harness

TIMEOUT = 60.0
MISMATCH = "node(s) didn't match Pod's node affinity/selector"
NOT_HAPPENING = 3.0
"""Seconds to watch for something that must not happen, once a cycle provably ran."""


def _other_nodes(cluster: harness.ScopedCluster, mine: int) -> int:
    """Nodes of the cluster that are not the test's (none on the local backend). On a shared
    cluster the test's pods select the test's nodes, so to them the others are a mismatch."""
    return len(cluster.request("GET", "/api/v1/nodes")["items"]) - mine


def _fit_error(total: int, reasons: dict[str, int]) -> str:
    """kube-scheduler's aggregate: the `<count> <reason>` strings sorted as strings
    (docs/pending.md, "The messages")."""
    parts = sorted(f"{n} {r}" for r, n in reasons.items() if n)
    return f"0/{total} nodes are available: " + ", ".join(parts) + "."


@pytest.mark.parametrize(
    "content_type", ["", "application/json"], ids=["protobuf (default)", "json"]
)
def test_plain_pods_without_a_podgroup_are_scheduled(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    content_type: str,
) -> None:
    """Watched, bound and told so in protobuf, as kube-scheduler does, or all in JSON when
    `--kube-api-content-type` says so."""
    for i in range(2):
        cluster.add_node(f"node-{i}", cpu="2", memory="4Gi")
    flag = [f"--kube-api-content-type={content_type}"] if content_type else []
    scheduler = start_scheduler(args=flag)
    scheduler.wait_ready(TIMEOUT)
    for i in range(3):
        harness.create(cluster, harness.pod(f"plain-{i}", "test"))

    def all_three() -> dict[str, str] | None:
        placed = harness.bound(cluster, "test")
        return placed if len(placed) == 3 else None

    placed = harness.wait_for("3 plain pods bound", all_three, TIMEOUT)

    assert set(placed.values()) <= {"node-0", "node-1"}, harness.dump(placed)
    for name, node in placed.items():
        scheduled = harness.wait_for(
            f"the Scheduled event of {name}",
            functools.partial(
                harness.events_about, cluster, "test", "Pod", name, reason="Scheduled"
            ),
            TIMEOUT,
        )
        assert (
            scheduled[0]["message"]
            == f"Successfully assigned {harness.namespace_of(cluster)}/{name} to {node}"
        )
        assert scheduled[0]["type"] == "Normal"
    assert scheduler.alive()


def test_pods_of_another_scheduler_are_left_alone(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    cluster.add_node("node-0", cpu="4", memory="8Gi")
    strangers = {"other": "other-scheduler", "default": "default-scheduler"}
    for name, scheduler_name in strangers.items():
        harness.create(cluster, harness.pod(name, "test", scheduler=scheduler_name))
    # No schedulerName at all: the API server defaults it to default-scheduler.
    unnamed = harness.pod("unnamed", "test")
    del unnamed["spec"]["schedulerName"]
    harness.create(cluster, unnamed)
    scheduler = start_scheduler()
    scheduler.wait_ready(TIMEOUT)
    # A pod of ours, created after the others: once it is bound, a cycle has seen them all.
    harness.create(cluster, harness.pod("ours", "test"))
    harness.wait_for("our pod bound", lambda: "ours" in harness.bound(cluster, "test"), TIMEOUT)
    time.sleep(NOT_HAPPENING)

    # A backend with a kube-scheduler of its own (kind) may bind the default-scheduler pods:
    # there only the pod of no running scheduler must stay untouched by anyone.
    no_other_scheduler = getattr(cluster, "backend", "local") == "local"
    ours = harness.scheduler_name_of(cluster)
    for name in (*strangers, "unnamed"):
        obj = harness.get_pod(cluster, "test", name)
        if name == "other" or no_other_scheduler:
            assert not obj["spec"].get("nodeName"), harness.dump(obj)
            assert harness.condition(obj, "PodScheduled") is None, harness.dump(obj)
        from_us = [
            e
            for e in harness.events_about(cluster, "test", "Pod", name)
            if ours in (e.get("reportingComponent"), e.get("source", {}).get("component"))
        ]
        assert from_us == [], harness.dump(from_us)
    assert harness.get_pod(cluster, "test", "unnamed")["spec"]["schedulerName"] == (
        "default-scheduler"
    )
    assert scheduler.alive()


def test_two_queues_weighted_one_to_three_share_a_full_cluster_by_weight(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    for i in range(4):
        cluster.add_node(f"node-{i}", cpu="2", memory="8Gi")
    harness.create(cluster, harness.queue("a", weight=1))
    harness.create(cluster, harness.queue("b", weight=3))
    # Far more demand than room in both queues (8 CPUs in all), every job a one-pod gang.
    for queue_name in ("a", "b"):
        for i in range(10):
            name = f"{queue_name}-{i}"
            harness.create(cluster, harness.podgroup(name, "test", min_member=1, queue=queue_name))
            harness.create(cluster, harness.pod(name, "test", group=name))
    scheduler = start_scheduler()
    scheduler.wait_ready(TIMEOUT)

    harness.wait_for(
        "the cluster full (8 pods bound)", lambda: len(harness.bound(cluster, "test")) >= 8, TIMEOUT
    )
    # Every pod of ours still pending carries its reason: the cycles after the binds ran.
    harness.wait_for(
        "12 pending pods with a PodScheduled=False condition",
        lambda: (
            sum(
                1
                for p in harness.pods(cluster, "test")
                if not p["spec"].get("nodeName") and harness.condition(p, "PodScheduled")
            )
            == 12
        ),
        TIMEOUT,
    )
    time.sleep(NOT_HAPPENING)

    per_queue = Counter(name.split("-")[0] for name in harness.bound(cluster, "test"))
    assert sum(per_queue.values()) == 8, per_queue
    if _other_nodes(cluster, 4):
        # On a shared cluster the queues' deserved shares are of every node's capacity, not
        # just the test's 8 CPUs: only the order of the shares can be told.
        assert per_queue["b"] > per_queue["a"], per_queue
    else:
        # deserved: a 8 * 1/4 = 2 CPUs, b 8 * 3/4 = 6 CPUs.
        assert abs(per_queue["a"] - 2) <= 1, per_queue
        assert abs(per_queue["b"] - 6) <= 1, per_queue
    assert scheduler.alive()


def test_an_unplaceable_pod_carries_podscheduled_false_with_the_aggregated_message(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    for i in range(2):
        cluster.add_node(f"node-{i}", cpu="2", memory="4Gi")
    scheduler = start_scheduler()
    scheduler.wait_ready(TIMEOUT)
    harness.create(cluster, harness.pod("picky", "test", extra={"nodeSelector": {"disk": "ssd"}}))
    harness.create(cluster, harness.pod("huge", "test", cpu="3"))
    harness.create(cluster, harness.pod("fine", "test"))
    others = _other_nodes(cluster, 2)
    expected = {
        # 0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.
        "picky": _fit_error(2 + others, {MISMATCH: 2 + others}),
        # 0/2 nodes are available: 2 Insufficient cpu.
        "huge": _fit_error(2 + others, {"Insufficient cpu": 2, MISMATCH: others}),
    }
    if not others:
        assert expected == {
            "picky": f"0/2 nodes are available: 2 {MISMATCH}.",
            "huge": "0/2 nodes are available: 2 Insufficient cpu.",
        }

    harness.wait_for(
        "the placeable pod bound", lambda: "fine" in harness.bound(cluster, "test"), TIMEOUT
    )
    for name, message in expected.items():
        cond = harness.wait_for(
            f"PodScheduled=False on {name}",
            functools.partial(harness.pod_condition, cluster, "test", name),
            TIMEOUT,
        )
        assert cond["status"] == "False", harness.dump(cond)
        assert cond["reason"] == "Unschedulable", harness.dump(cond)
        assert cond["message"] == message, harness.dump(cond)
        warnings = harness.wait_for(
            f"a FailedScheduling event on {name}",
            functools.partial(
                harness.events_about, cluster, "test", "Pod", name, reason="FailedScheduling"
            ),
            TIMEOUT,
        )
        assert warnings[0]["type"] == "Warning"
        assert warnings[0]["message"] == message
    assert set(harness.bound(cluster, "test")) == {"fine"}
    assert scheduler.alive()


def test_an_unplaceable_pod_is_told_every_nodes_reason_counted_most_common_first(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    cluster.add_node("small", cpu="1", memory="4Gi", labels={"zone": "a"})
    cluster.add_node(
        "gpu",
        cpu="4",
        memory="4Gi",
        labels={"zone": "a"},
        taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
    )
    cluster.add_node("far-0", cpu="4", memory="4Gi", labels={"zone": "b"})
    cluster.add_node("far-1", cpu="4", memory="4Gi")
    scheduler = start_scheduler()
    scheduler.wait_ready(TIMEOUT)
    harness.create(
        cluster, harness.pod("mixed", "test", cpu="2", extra={"nodeSelector": {"zone": "a"}})
    )

    cond = harness.wait_for(
        "PodScheduled=False on mixed",
        lambda: harness.pod_condition(cluster, "test", "mixed"),
        TIMEOUT,
    )
    others = _other_nodes(cluster, 4)
    taint = "node(s) had untolerated taint {dedicated: gpu}"
    expected = _fit_error(4 + others, {MISMATCH: 2 + others, "Insufficient cpu": 1, taint: 1})
    if not others:
        assert expected == (
            "0/4 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
            "{dedicated: gpu}, 2 node(s) didn't match Pod's node affinity/selector."
        )
    assert cond["message"] == expected, harness.dump(cond)
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert scheduler.alive()
