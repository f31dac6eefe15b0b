"""/metrics, /healthz and /readyz of a running scheduler, against a real API server."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

from integration import harness

TIMEOUT = 60.0
NOT_HAPPENING = 3.0
E2E = "vscheduler_e2e_scheduling_latency_milliseconds"
PLUGIN = "vscheduler_plugin_scheduling_latency_milliseconds"


def test_metrics_show_cycle_latency_bound_pods_and_schedule_attempts(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    for i in range(2):
        cluster.add_node(f"node-{i}", cpu="4", memory="8Gi")
    scheduler = start_scheduler()
    scheduler.wait_ready(TIMEOUT)
    assert harness.scrape(scheduler, "vscheduler_pods_bound_total") == 0
    for i in range(5):
        harness.create(cluster, harness.pod(f"p-{i}", "test"))
    harness.create(cluster, harness.pod("too-big", "test", cpu="8"))

    harness.wait_for("5 pods bound", lambda: len(harness.bound(cluster, "test")) == 5, TIMEOUT)
    harness.wait_for(
        "the unplaceable pod's condition",
        lambda: harness.pod_condition(cluster, "test", "too-big"),
        TIMEOUT,
    )
    harness.wait_for(
        "vscheduler_pods_bound_total 5",
        lambda: harness.scrape(scheduler, "vscheduler_pods_bound_total") == 5,
        TIMEOUT,
    )
    # The binds stream while a cycle runs; its attempts are counted when it ends.
    harness.wait_for(
        "5 scheduled attempts",
        lambda: (
            harness.scrape(scheduler, "vscheduler_schedule_attempts_total", result="scheduled") == 5
        ),
        TIMEOUT,
    )

    status, text = scheduler.http("/metrics")
    assert status == 200
    assert harness.metric(text, "vscheduler_pods_bound_total") == len(
        harness.bound(cluster, "test")
    )
    # Every bound pod was decided once; the unplaceable one was attempted and left pending.
    assert harness.metric(text, "vscheduler_schedule_attempts_total", result="scheduled") == 5
    assert (
        harness.metric(text, "vscheduler_schedule_attempts_total", result="unschedulable") or 0
    ) >= 1
    assert harness.metric(text, "vscheduler_schedule_attempts_total", result="error") == 0
    # One latency sample per cycle run.
    cycles = harness.metric(text, "vscheduler_cycles_total")
    samples = harness.metric(text, f"{E2E}_count")
    assert cycles is not None, text
    assert cycles >= 1, text
    assert samples == cycles, text
    assert harness.metric(text, f"{E2E}_bucket", le="+Inf") == samples
    assert (harness.metric(text, f"{E2E}_sum") or 0) > 0
    assert harness.metric(text, "vscheduler_unschedule_task_count") == 1
    assert (harness.metric(text, "vscheduler_bind_failures_total") or 0) == 0
    # Each bind is timed, and each pod's wait from its creation to its bind.
    assert harness.metric(text, "vscheduler_bind_duration_seconds_count") == 5
    assert harness.metric(text, "vscheduler_task_scheduling_latency_milliseconds_count") == 5
    # Every plugin of the policy is timed opening each cycle's session.
    assert (harness.metric(text, f"{PLUGIN}_count", OnSession="OnSessionOpen") or 0) >= cycles
    assert (harness.metric(text, "process_resident_memory_bytes") or 0) > 0
    assert "\nvscheduler_build_info{" in text
    assert "_created" not in text


def test_healthz_and_readyz_answer_200_once_synced(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    cluster.add_node("node-0", cpu="4", memory="8Gi")
    scheduler = start_scheduler()

    scheduler.wait_ready(TIMEOUT)
    assert scheduler.http("/readyz") == (200, "ok")
    assert scheduler.http("/healthz") == (200, "ok")
    assert scheduler.http("/nothing-here")[0] == 404
    # Ready means scheduling: a pod created now is bound.
    harness.create(cluster, harness.pod("p", "test"))
    harness.wait_for("p bound", lambda: "p" in harness.bound(cluster, "test"), TIMEOUT)


def _micro_time(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_readyz_is_503_not_leading_while_another_replica_holds_the_lease(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    cluster.add_node("node-0", cpu="4", memory="8Gi")
    now = dt.datetime.now(dt.UTC)
    lease_ns = harness.lease_namespace_of(cluster)
    cluster.request(
        "POST",
        f"/apis/coordination.k8s.io/v1/namespaces/{lease_ns}/leases",
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "vscheduler", "namespace": lease_ns},
            "spec": {
                "holderIdentity": "someone-else",
                "leaseDurationSeconds": 3600,
                "acquireTime": _micro_time(now),
                "renewTime": _micro_time(now),
            },
        },
    )
    harness.create(cluster, harness.pod("waiting", "test"))
    scheduler = start_scheduler(leader_elect=True, identity="follower")

    def not_leading() -> bool:
        status, body = scheduler.http("/readyz")
        return scheduler.alive() and status == 503 and "not leading" in body

    harness.wait_for("/readyz 503 not leading", not_leading, TIMEOUT)
    assert scheduler.http("/healthz") == (200, "ok")
    assert harness.scrape(scheduler, "vscheduler_is_leader") == 0
    time.sleep(NOT_HAPPENING)
    assert harness.bound(cluster, "test") == {}
    assert not_leading()

    cluster.request(
        "DELETE", f"/apis/coordination.k8s.io/v1/namespaces/{lease_ns}/leases/vscheduler"
    )
    scheduler.wait_ready(TIMEOUT)
    harness.wait_for(
        "the pod bound by the new leader",
        lambda: "waiting" in harness.bound(cluster, "test"),
        TIMEOUT,
    )
    assert harness.scrape(scheduler, "vscheduler_is_leader") == 1
