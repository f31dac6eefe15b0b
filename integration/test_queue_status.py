"""A Queue's `status.allocated`, as Volcano's scheduler writes it, on a real API server.

Pods of queue q bound: `kubectl get queue q -o yaml` shows their cpu and memory under
`status.allocated`, in the text Kubernetes writes; the pods deleted, it goes back to zero. The
write goes through the Queue CRD's status subresource, and the scheduler counts it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from integration import harness

QUEUES = "/apis/scheduling.volcano.sh/v1beta1/queues"


def allocated(cluster: harness.ScopedCluster, name: str) -> Any:
    return cluster.request("GET", f"{QUEUES}/{name}").get("status", {}).get("allocated")


def test_a_queues_status_allocated_shows_its_bound_pods_and_goes_back_when_they_are_deleted(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    cluster.add_node("node-0", cpu="4", memory="8Gi")
    harness.create(cluster, harness.queue("q"))
    harness.create(cluster, harness.podgroup("g", "test", min_member=2, queue="q"))
    for i in range(2):
        pod = harness.pod(f"p-{i}", "test", cpu="750m", memory="512Mi", group="g")
        harness.create(cluster, pod)
    scheduler = start_scheduler()
    scheduler.wait_ready()

    harness.wait_for("both pods bound", lambda: len(harness.bound(cluster, "test")) == 2)
    harness.wait_for(
        "queue q's status.allocated showing the two pods",
        lambda: allocated(cluster, "q") == {"cpu": "1500m", "memory": "1Gi"},
        timeout=10,
    )

    for i in range(2):
        path = f"/api/v1/namespaces/test/pods/p-{i}"
        cluster.request("DELETE", path, {"gracePeriodSeconds": 0})
    harness.wait_for(
        "queue q's status.allocated back to nothing",
        lambda: allocated(cluster, "q") == {"cpu": "0", "memory": "0"},
        timeout=10,
    )

    writes = harness.scrape(scheduler, "vscheduler_queue_status_writes_total", result="success")
    assert (writes or 0) >= 2, scheduler.log()
    assert harness.scrape(scheduler, "vscheduler_queue_status_writes_total", result="error") == 0
    assert scheduler.alive()
    assert scheduler.stop() == 0
