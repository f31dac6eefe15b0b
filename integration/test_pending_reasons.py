"""Pending reasons that name the real cause, on a real API server (issue 11, part 3): a node
without allocatable, a pod larger than every node, a job in a Closed queue (on its PodGroup too),
and malformed annotations, each told on the pod in the words that send the user to the cause."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from integration import harness

TIMEOUT = 60.0
QUEUE_STATUS = "/apis/scheduling.volcano.sh/v1beta1/queues/{name}/status"


def _merge_patch(cluster: harness.ScopedCluster, path: str, body: dict[str, Any]) -> None:
    cluster.request("PATCH", path, body, content_type="application/merge-patch+json")


def _message(cluster: harness.ScopedCluster, name: str, start: str) -> str:
    """The pod's PodScheduled=False message once it starts with `start`."""

    def found() -> str | None:
        cond = harness.pod_condition(cluster, "test", name) or {}
        message = str(cond.get("message", ""))
        return message if cond.get("status") == "False" and message.startswith(start) else None

    return harness.wait_for(f"{name}'s message starting {start!r}", found, TIMEOUT)


def _podgroup_condition(
    cluster: harness.ScopedCluster, name: str, message: str
) -> dict[str, Any] | None:
    """The PodGroup's Unschedulable condition, once its message is `message`."""
    status = harness.get_podgroup(cluster, "test", name).get("status") or {}
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Unschedulable" and cond.get("message") == message:
            return dict(cond)
    return None


def _unusual(cluster: harness.ScopedCluster, name: str, needle: str) -> str:
    def found() -> str | None:
        for event in harness.events_about(cluster, "test", "Pod", name, reason="UnusualValue"):
            if event["type"] == "Warning" and needle in event["message"]:
                return str(event["message"])
        return None

    return harness.wait_for(f"an UnusualValue event on {name} naming {needle}", found, TIMEOUT)


def test_pending_pods_are_told_the_real_cause(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    if harness.backend() != "local":
        pytest.skip("the messages count every node: the cluster must be the test's alone")
    ns = harness.namespace_of(cluster)
    node = "node-0"
    cluster.add_node("node-0", cpu="4", memory="8Gi")
    # A node without status.allocatable (nor capacity): it holds nothing.
    _merge_patch(
        cluster, f"/api/v1/nodes/{node}/status", {"status": {"allocatable": None, "capacity": None}}
    )
    scheduler = start_scheduler()
    scheduler.wait_ready(TIMEOUT)

    harness.create(cluster, harness.pod("tiny", "test", cpu="100m", memory="64Mi"))
    assert _message(cluster, "tiny", "0/1 nodes") == (
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. queue default is"
        " overused (proportion: allocated cpu 0, memory 0 + this pod's cpu 100m, memory 64Mi"
        " exceed the Ready nodes' allocatable (cpu 0, memory 0))"
    )

    # The node's allocatable back: the pod binds; a pod larger than the node is told so first.
    resources = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    _merge_patch(
        cluster,
        f"/api/v1/nodes/{node}/status",
        {"status": {"allocatable": resources, "capacity": resources}},
    )
    harness.wait_for("tiny bound", lambda: "tiny" in harness.bound(cluster, "test"), TIMEOUT)
    harness.create(cluster, harness.pod("big", "test", cpu="8"))
    assert _message(cluster, "big", "0/1 nodes") == (
        "0/1 nodes are available: 1 Insufficient cpu. queue default has no room left for this"
        " pod (proportion: allocated cpu 100m + this pod's cpu 8 exceed its deserved share"
        " (cpu 4))"
    )

    # A job the cluster cannot admit: the plugin that kept it out says why, with the amounts.
    huge = harness.podgroup("huge", "test", min_member=1)
    huge["spec"]["minResources"] = {"cpu": "100"}
    harness.create(cluster, huge)
    harness.create(cluster, harness.pod("huge-0", "test", group="huge"))
    # the pod's watch event may reach the scheduler before its PodGroup's (two watches): for a
    # cycle in between it is told "podgroup ... not found"; the message then moves on to this
    message = _message(cluster, "huge-0", f"podgroup {ns}/huge is Pending")
    assert message.startswith(
        f"podgroup {ns}/huge is Pending: not admitted to queue default (overcommit: minResources"
        " cpu 100 + what admitted jobs hold (cpu "
    ), message
    assert message.endswith(
        "exceed the Ready nodes' allocatable times the overcommit factor, less what is in use"
        " (cpu 4700m))"
    ), message

    # A Closed queue: a job waiting for admission, and one admitted without minResources.
    harness.create(cluster, harness.queue("shut"))
    _merge_patch(cluster, QUEUE_STATUS.format(name="shut"), {"status": {"state": "Closed"}})
    waiting = harness.podgroup("waiting", "test", min_member=1, queue="shut")
    waiting["spec"]["minResources"] = {"cpu": "1"}
    harness.create(cluster, waiting)
    harness.create(cluster, harness.pod("waiting-0", "test", group="waiting"))
    harness.create(cluster, harness.podgroup("admitted", "test", min_member=1, queue="shut"))
    harness.create(cluster, harness.pod("admitted-0", "test", group="admitted"))
    assert _message(cluster, "waiting-0", f"podgroup {ns}/waiting is Pending") == (
        f"podgroup {ns}/waiting is Pending: queue shut is Closed: no job is admitted to it while"
        " its status.state is not Open"
    )
    closed = (
        "queue shut is Closed (proportion: its pods are not placed while its status.state is"
        " Closed, only when it is Open)"
    )
    assert _message(cluster, "admitted-0", "queue shut") == closed
    # Its PodGroup names the queue too, in its condition and its Warning Event.
    gang = (
        f"{closed}. 1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1"
        " minAvailable; Pending: 1 Unschedulable"
    )
    condition = harness.wait_for(
        "admitted's Unschedulable condition naming the queue",
        lambda: _podgroup_condition(cluster, "admitted", gang),
        TIMEOUT,
    )
    assert (condition["status"], condition["reason"]) == ("True", "NotEnoughResources")
    said = harness.events_about(cluster, "test", "PodGroup", "admitted", reason="Unschedulable")
    assert [e["message"] for e in said] == [gang], harness.dump(said)

    # Malformed annotations: read as Volcano reads them, and the pod is told.
    odd = harness.pod("odd", "test", cpu="100m")
    odd["metadata"]["annotations"] = {
        "volcano.sh/preemptable": "maybe",
        "scheduling.k8s.io/group-name": "",
    }
    harness.create(cluster, odd)
    harness.wait_for("odd bound", lambda: "odd" in harness.bound(cluster, "test"), TIMEOUT)
    assert _unusual(cluster, "odd", "volcano.sh/preemptable") == (
        f"Pod {ns}/odd: metadata.annotations[volcano.sh/preemptable]: 'maybe' is not a boolean"
        " (true or false); it is read as false, as Volcano reads it: the pod is not preemptable,"
        " no preempt or reclaim evicts it"
    )
    assert _unusual(cluster, "odd", "group-name") == (
        f"Pod {ns}/odd: metadata.annotations[scheduling.k8s.io/group-name]: '' is empty; it is"
        " read as absent, as Volcano reads it: the pod is a job of its own (minMember 1), with"
        " no PodGroup"
    )
    assert scheduler.alive()
