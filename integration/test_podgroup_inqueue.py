"""When a PodGroup with no pod yet has its move to Inqueue written, on a real API server.

A controller that owns its PodGroup (a Volcano Job's, a Kubeflow job's) creates the pods only
once the PodGroup is Inqueue: that move is written at once, with no pod at all. A bare PodGroup's
creator makes its pods next: a gang placed within the arrival grace (1 s) goes from Pending to
Running with no Inqueue written between (one status write, not two), and a bare PodGroup that
gets no pod shows Inqueue once the grace is over."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

from integration import harness
from integration.controlplane import ApiError

PODS_AFTER = 0.3
"""Seconds between the bare PodGroup and its pods: long enough for a cycle to see it with no pod
(the move to Inqueue it no longer writes at once), well within the 1 s grace."""


def test_a_podgroup_is_written_inqueue_before_its_pods_only_when_a_controller_waits_for_it(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    cluster.add_node("node-0", cpu="4", memory="8Gi")
    scheduler = start_scheduler()
    scheduler.wait_ready()

    def phase(name: str) -> str | None:
        found: str | None = (
            harness.get_podgroup(cluster, "test", name).get("status", {}).get("phase")
        )
        return found

    owner = harness.create(cluster, harness.configmap("owner", "test", {}))
    owned = harness.podgroup("owned", "test", min_member=2)
    owned["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "owner",
            "uid": owner["metadata"]["uid"],
            "controller": True,
        }
    ]
    harness.create(cluster, owned)
    harness.wait_for("the owned PodGroup Inqueue, with no pod", lambda: phase("owned") == "Inqueue")

    seen: list[str | None] = []
    done = threading.Event()

    def record() -> None:  # every phase the bare gang's PodGroup shows, polled every 10 ms
        while not done.wait(0.01):
            with contextlib.suppress(ApiError):  # not made yet
                seen.append(phase("bare"))

    recorder = threading.Thread(target=record, daemon=True)
    recorder.start()
    harness.create(cluster, harness.podgroup("bare", "test", min_member=2))
    harness.create(cluster, harness.pod("poke", "test", cpu="1"))  # a pod to place: a cycle
    time.sleep(PODS_AFTER)  # which sees the PodGroup with no pod
    for i in range(2):
        harness.create(cluster, harness.pod(f"bare-{i}", "test", cpu="1", group="bare"))
    # waited for through the recorder's own list: the phases it saw are the ones asserted on
    harness.wait_for("the bare gang's PodGroup Running", lambda: "Running" in seen)
    done.set()
    recorder.join()
    assert "Inqueue" not in seen, (seen, scheduler.log())
    harness.wait_for(
        "the gang and the lone pod bound", lambda: len(harness.bound(cluster, "test")) == 3
    )

    harness.create(cluster, harness.podgroup("lonely", "test", min_member=2))
    harness.wait_for("the bare PodGroup with no pod Inqueue", lambda: phase("lonely") == "Inqueue")
    assert scheduler.alive()
    assert scheduler.stop() == 0
