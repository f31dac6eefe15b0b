"""Pods with scheduling gates on a real API server: vscheduler does not place a gated pod (the API
server would refuse the binding), leaves the `SchedulingGated` condition the API server wrote,
and places the pod once the gate is removed, as kube-scheduler does."""

from __future__ import annotations

from collections.abc import Callable

from integration import harness

TIMEOUT = 60.0
GATE = {"schedulingGates": [{"name": "example.com/admission"}]}


def test_a_gated_pod_waits_for_its_gate_and_is_placed_once_it_is_removed(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    ns = harness.namespace_of(cluster)
    cluster.add_node("node-0", cpu="4", memory="8Gi")
    # Both exist before the scheduler starts: its first cycle sees them together.
    harness.create(cluster, harness.pod("gated", "test", cpu="1", extra=dict(GATE)))
    harness.create(cluster, harness.pod("free", "test", cpu="1"))
    scheduler = start_scheduler()
    scheduler.wait_ready(TIMEOUT)

    harness.wait_for("free bound", lambda: "free" in harness.bound(cluster, "test"), TIMEOUT)
    # A later cycle's status write, as a barrier: a pod too large for the node is told so.
    harness.create(cluster, harness.pod("huge", "test", cpu="64"))

    def told(name: str) -> str | None:
        condition = harness.pod_condition(cluster, "test", name) or {}
        return str(condition.get("message")) if condition.get("reason") == "Unschedulable" else None

    harness.wait_for("huge told it does not fit", lambda: told("huge"), TIMEOUT)

    assert "gated" not in harness.bound(cluster, "test")
    condition = harness.pod_condition(cluster, "test", "gated") or {}
    assert (condition.get("status"), condition.get("reason")) == ("False", "SchedulingGated")
    assert not harness.events_about(cluster, "test", "Pod", "gated", reason="FailedScheduling")
    assert not harness.scrape(scheduler, "vscheduler_bind_failures_total")  # never tried

    cluster.request(
        "PATCH",
        f"/api/v1/namespaces/{ns}/pods/gated",
        {"spec": {"schedulingGates": None}},
        content_type="application/merge-patch+json",
    )
    harness.wait_for("gated bound", lambda: "gated" in harness.bound(cluster, "test"), TIMEOUT)
    assert harness.bound(cluster, "test") == {"free": "node-0", "gated": "node-0"}
    assert told("gated") is None
