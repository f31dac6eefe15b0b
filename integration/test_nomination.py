"""Reclaim between two queues on a real API server: the job named in the `Evicted` Events is the
one that binds where its victims were (issue 11, part 2).

Queue a's four 1-CPU pods fill the node; queue b (same weight, so 2 CPUs deserved) submits b-00,
one 2-CPU pod. Reclaim evicts exactly two of a's pods for it. The victims carry a finalizer, so
they stay Terminating (Releasing) as long as the test wants: meanwhile b-00's pod shows
`status.nominatedNodeName`, nothing more is evicted, and b-01, a second job of queue b arriving
then, does not take the room; b-00's PodScheduled=False condition carries Volcano's message for
a pipelined pod, written once. Once the finalizers go, b-00 binds there and its nomination is
cleared."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from integration import harness

TIMEOUT = 60.0
SETTLE = 4.0
"""Seconds (eight cycles at the harness's 0.5 s period) in which nothing more may change."""
HOLD = "vscheduler.test/hold"
POLICY = """\
actions: "enqueue, allocate, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""
MERGE = "application/merge-patch+json"


def held_pod(name: str, group: str) -> dict[str, Any]:
    pod = harness.pod(name, "test", cpu="1", group=group)
    pod["metadata"]["finalizers"] = [HOLD]
    return pod


def release(cluster: harness.ScopedCluster, name: str) -> None:
    """Remove the test's finalizer from pod `name` (gone already: nothing to do)."""
    try:
        cluster.request(
            "PATCH",
            f"/api/v1/namespaces/test/pods/{name}",
            {"metadata": {"finalizers": None}},
            content_type=MERGE,
        )
    except Exception as err:
        if not harness.is_api_error(err, 404):
            raise


def reclaim_events(cluster: harness.ScopedCluster) -> list[dict[str, Any]]:
    return [
        e
        for e in harness.events(cluster, "test")
        if e.get("reason") == "Evicted" and "reclaim by" in e.get("message", "")
    ]


def nominated(cluster: harness.ScopedCluster, name: str) -> str | None:
    node: str | None = (
        harness.get_pod(cluster, "test", name).get("status", {}).get("nominatedNodeName")
    )
    return node


def test_the_reclaimer_named_in_the_evicted_events_binds_where_its_victims_were(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    tmp_path: Path,
) -> None:
    namespace = harness.namespace_of(cluster)
    cluster.add_node("node-0", cpu="4", memory="8Gi")
    harness.create(cluster, harness.queue("a"))
    harness.create(cluster, harness.queue("b"))
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    scheduler = start_scheduler(args=[f"--policy-file={policy}"])
    scheduler.wait_ready()
    held = [f"a-{i}" for i in range(4)]
    try:
        harness.create(cluster, harness.podgroup("a-job", "test", min_member=1, queue="a"))
        for name in held:
            harness.create(cluster, held_pod(name, "a-job"))
        harness.wait_for(
            "queue a's four pods bound",
            lambda: len(harness.bound(cluster, "test")) == 4 or None,
            TIMEOUT,
        )

        harness.create(cluster, harness.podgroup("b-00", "test", min_member=1, queue="b"))
        harness.create(cluster, harness.pod("b-00", "test", cpu="2", group="b-00"))
        evicted = harness.wait_for(
            "two Evicted events naming b-00",
            lambda: ((found := reclaim_events(cluster)) and len(found) >= 2 and found) or None,
            TIMEOUT,
        )
        assert all(f"reclaim by {namespace}/b-00" in e["message"] for e in evicted), harness.dump(
            evicted
        )
        victims = {e["involvedObject"]["name"] for e in evicted}
        assert len(victims) == 2, harness.dump(evicted)
        assert harness.wait_for(
            "b-00 nominated to node-0",
            lambda: nominated(cluster, "b-00") == "node-0" or None,
            TIMEOUT,
        )
        waiting = (
            f"Pod {namespace}/b-00 can possibly be assigned to node-0, once resource is released"
            " and minAvailable is satisfied"
        )
        condition = harness.wait_for(
            "b-00's PodScheduled condition saying it waits for node-0",
            lambda: (
                (
                    (found := harness.pod_condition(cluster, "test", "b-00"))
                    and found.get("message") == waiting
                    and found
                )
                or None
            ),
            TIMEOUT,
        )
        assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")

        # The victims stay Terminating: b-01 of the same queue arrives and must not take the room.
        harness.create(cluster, harness.podgroup("b-01", "test", min_member=1, queue="b"))
        harness.create(cluster, harness.pod("b-01", "test", cpu="2", group="b-01"))
        time.sleep(SETTLE)
        assert len(reclaim_events(cluster)) == 2, harness.dump(reclaim_events(cluster))
        assert nominated(cluster, "b-00") == "node-0"
        said = harness.events_about(cluster, "test", "Pod", "b-00", reason="FailedScheduling")
        written = [e for e in said if e.get("message") == waiting]
        assert len(written) == 1, harness.dump(said)  # once, not once per cycle
        assert written[0].get("count", 1) == 1, harness.dump(said)
        assert harness.pod_condition(cluster, "test", "b-00") == condition
        bound = harness.bound(cluster, "test")
        assert "b-00" not in bound
        assert "b-01" not in bound

        for name in sorted(victims):
            release(cluster, name)
        harness.wait_for(
            "b-00 bound",
            lambda: harness.bound(cluster, "test").get("b-00"),
            TIMEOUT,
        )
        assert harness.bound(cluster, "test")["b-00"] == "node-0"
        harness.wait_for(
            "b-00's nomination cleared", lambda: nominated(cluster, "b-00") is None or None, TIMEOUT
        )
        time.sleep(SETTLE)
        assert "b-01" not in harness.bound(cluster, "test"), scheduler.log()
        assert len(reclaim_events(cluster)) == 2, harness.dump(reclaim_events(cluster))
        assert harness.scrape(scheduler, "vscheduler_evictions_total", action="reclaim") == 2.0
        assert scheduler.stop() == 0
    finally:
        for name in held:
            release(cluster, name)
