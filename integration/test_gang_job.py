"""A batch/v1 Job of 4 pods, gang-scheduled through a PodGroup, on a real API server."""

from __future__ import annotations

from collections.abc import Callable

from integration import harness
from integration.controlplane import LocalControlPlane


def job(name: str, namespace: str, *, pods: int, group: str) -> dict[str, object]:
    template = harness.pod("x", namespace, cpu="2", group=group)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "completions": pods,
            "parallelism": pods,
            "template": {
                "metadata": {"annotations": template["metadata"]["annotations"]},
                "spec": {**template["spec"], "restartPolicy": "Never"},
            },
        },
    }


def test_a_job_of_four_binds_all_four_only_once_room_for_four_exists(
    cluster: LocalControlPlane, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    for i in range(3):
        cluster.add_node(f"node-{i}", cpu="2", memory="4Gi")
    harness.create(cluster, harness.podgroup("train", "test", min_member=4))
    harness.create(cluster, job("train", "test", pods=4, group="train"))
    scheduler = start_scheduler()
    scheduler.wait_ready()
    created = harness.wait_for("4 job pods", lambda: len(harness.pods(cluster, "test")) == 4)
    assert created

    def shortfall_on_every_pod() -> bool:
        conditions = [harness.condition(p, "PodScheduled") for p in harness.pods(cluster, "test")]
        return all(c and "tasks in gang unschedulable" in c.get("message", "") for c in conditions)

    harness.wait_for("the gang shortfall on every pod", shortfall_on_every_pod)
    assert harness.bound(cluster, "test") == {}, scheduler.log()

    cluster.add_node("node-3", cpu="2", memory="4Gi")
    harness.wait_for("all 4 bound", lambda: len(harness.bound(cluster, "test")) == 4)
    placed = harness.bound(cluster, "test")
    assert sorted(placed.values()) == ["node-0", "node-1", "node-2", "node-3"]
    group = cluster.request(
        "GET", "/apis/scheduling.volcano.sh/v1beta1/namespaces/test/podgroups/train"
    )
    harness.wait_for(
        "PodGroup Running",
        lambda: (
            cluster.request(
                "GET", "/apis/scheduling.volcano.sh/v1beta1/namespaces/test/podgroups/train"
            )
            .get("status", {})
            .get("phase")
            in ("Running", "Completed")
        ),
    )
    assert group["spec"]["minMember"] == 4
    assert scheduler.stop() == 0
