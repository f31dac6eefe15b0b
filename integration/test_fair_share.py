"""Queues weighted 1 and 3 split 16 CPU 4 : 12 with the shipped default policy, on a real API
server, although the first queue's surplus jobs are admitted and can never run (issue 11).

Every job is a PodGroup with minResources (as every Volcano Job has) and one 1-CPU pod. Queue a's
20 PodGroups are already admitted (Inqueue), as a scheduler before a restart, or Volcano before a
migration, leaves them: proportion holds a at its deserved 4 CPU, so 16 of them can never
allocate. Volcano's overcommit keeps counting their minResources (20 CPU of a 1.2 x 16 = 19.2
budget) and never admits one of queue b's jobs, with 12 CPU idle. Starting from the admitted
state makes the test deterministic: from nothing, whether a's surplus is admitted before b's jobs
compete depends on when the PodGroup status writes land."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from integration import harness

TIMEOUT = 90.0
SETTLE = 5.0
"""Seconds (ten cycles at the harness's 0.5 s period) in which nothing more may bind."""
PODGROUPS = "/apis/scheduling.volcano.sh/v1beta1/namespaces/test/podgroups"


def per_queue(cluster: harness.ScopedCluster) -> Counter[str]:
    return Counter(name.split("-")[0] for name in harness.bound(cluster, "test"))


def phases(cluster: harness.ScopedCluster) -> Counter[tuple[str, Any]]:
    groups = cluster.request("GET", PODGROUPS)["items"]
    return Counter((g["metadata"]["name"][0], g.get("status", {}).get("phase")) for g in groups)


def test_two_queues_weighted_one_to_three_end_four_to_twelve_with_min_resources(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    for i in range(4):
        cluster.add_node(f"node-{i}", cpu="4", memory="16Gi")
    harness.create(cluster, harness.queue("a", weight=1))
    harness.create(cluster, harness.queue("b", weight=3))
    minimum = {"cpu": "1", "memory": "256Mi"}
    for queue_name in ("a", "b"):
        for i in range(20):
            name = f"{queue_name}-{i:02d}"
            group = harness.podgroup(
                name, "test", min_member=1, queue=queue_name, min_resources=minimum
            )
            harness.create(cluster, group)
            if queue_name == "a":
                cluster.request(
                    "PATCH",
                    f"{PODGROUPS}/{name}/status",
                    {"status": {"phase": "Inqueue"}},
                    content_type="application/merge-patch+json",
                )
            harness.create(cluster, harness.pod(name, "test", cpu="1", group=name))
    assert phases(cluster) == Counter({("a", "Inqueue"): 20, ("b", None): 20})
    scheduler = start_scheduler()  # the shipped default policy
    scheduler.wait_ready(TIMEOUT)

    harness.wait_for(
        "16 pods bound (all 16 CPU in use)",
        lambda: len(harness.bound(cluster, "test")) >= 16,
        TIMEOUT,
    )
    time.sleep(SETTLE)

    # deserved: a 16 * 1/4 = 4 CPU, b 16 * 3/4 = 12 CPU; nothing idle, nothing beyond.
    assert per_queue(cluster) == Counter({"a": 4, "b": 12}), scheduler.log()
    found = phases(cluster)
    assert found[("a", "Running")] == 4, found
    assert found[("a", "Inqueue")] == 16, found
    assert found[("b", "Running")] == 12, found
    assert scheduler.alive()
    assert scheduler.stop() == 0
