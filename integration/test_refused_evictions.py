"""A PodDisruptionBudget that refuses every eviction, and no `pdb` plugin in the policy to foresee
it: on a real API server the Eviction API answers 429. Preemption must then take the victims that
can go, evict nothing it cannot complete, back off from the protected pods without flooding the
log, and resolve at once when the budget goes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from integration import harness
from integration.test_preemption import POLICY, priority_class

TIMEOUT = 60.0
WINDOW = 10.0
"""Seconds of steady state over which the scheduler's log growth is counted."""
MAX_LINES = 20
"""Log lines allowed over WINDOW while a protected victim blocks a waiting gang."""


def low_pod(name: str, app: str, priority: str) -> dict[str, Any]:
    """A 1-CPU pod of PodGroup `low` and PriorityClass `priority`, labelled `app`."""
    pod = harness.pod(name, "test", cpu="1", group="low")
    pod["metadata"]["labels"] = {"app": app}
    pod["spec"]["priorityClassName"] = priority
    return pod


def gang(cluster: harness.ScopedCluster, name: str, priority: str, members: int) -> None:
    """A PodGroup of `members` (minMember too) bare 1-CPU pods of PriorityClass `priority`."""
    group = harness.podgroup(name, "test", min_member=members)
    group["spec"]["priorityClassName"] = priority
    harness.create(cluster, group)
    for i in range(members):
        pod = harness.pod(f"{name}-{i}", "test", cpu="1", group=name)
        pod["spec"]["priorityClassName"] = priority
        harness.create(cluster, pod)


def budget(name: str) -> dict[str, Any]:
    """A policy/v1 PodDisruptionBudget allowing no disruption of the `app: protected` pods."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "test"},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "protected"}}},
    }


def names(pods: list[dict[str, Any]], prefix: str) -> set[str]:
    return {p["metadata"]["name"] for p in pods if p["metadata"]["name"].startswith(prefix)}


def bound(cluster: harness.ScopedCluster, prefix: str) -> set[str]:
    """The names starting with `prefix` of the pods bound and not being deleted."""
    return names(
        [
            p
            for p in harness.pods(cluster, "test")
            if p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")
        ],
        prefix,
    )


def events(cluster: harness.ScopedCluster, reason: str) -> list[dict[str, Any]]:
    return [e for e in harness.events(cluster, "test") if e.get("reason") == reason]


def involved(found: list[dict[str, Any]]) -> set[str]:
    return {e["involvedObject"]["name"] for e in found}


def log_lines(scheduler: harness.Scheduler) -> int:
    scheduler.log(1)  # flushes
    return len(scheduler.log_path.read_text().splitlines())


def test_a_budget_refusing_every_eviction_is_passed_over_then_resolved_when_it_goes(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    tmp_path: Path,
) -> None:
    namespace = harness.namespace_of(cluster)
    low, high = f"{namespace}-low", f"{namespace}-high"
    for name, value in ((low, 10), (high, 1000)):
        cluster.request(
            "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", priority_class(name, value)
        )
    cluster.add_node("node-0", cpu="5", memory="8Gi")
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)  # no pdb plugin: only the Eviction API knows the budget
    scheduler = start_scheduler(args=[f"--policy-file={policy}"])
    scheduler.wait_ready()

    # Five low-priority pods of one elastic gang (minMember 1) fill the node; the three created
    # last (the cheapest victims) are protected by a budget that allows no disruption.
    group = harness.podgroup("low", "test", min_member=1)
    group["spec"]["priorityClassName"] = low
    harness.create(cluster, group)
    for i in range(2):
        harness.create(cluster, low_pod(f"free-{i}", "free", low))
    cluster.wait_for("the free pods bound", lambda: len(bound(cluster, "free-")) == 2, TIMEOUT)
    time.sleep(1.1)  # a later creation second: the protected pods come first as victims
    cluster.request(
        "POST", "/apis/policy/v1/namespaces/test/poddisruptionbudgets", budget("protect")
    )
    for i in range(3):
        harness.create(cluster, low_pod(f"protected-{i}", "protected", low))
    cluster.wait_for(
        "the protected pods bound", lambda: len(bound(cluster, "protected-")) == 3, TIMEOUT
    )
    protected = {"protected-0", "protected-1", "protected-2"}

    # A high-priority gang of two: refused on the protected pods, it takes the free ones.
    gang(cluster, "urgent", high, 2)
    cluster.wait_for("the urgent gang bound", lambda: len(bound(cluster, "urgent-")) == 2, TIMEOUT)
    assert involved(events(cluster, "Evicted")) == {"free-0", "free-1"}, scheduler.log()
    assert involved(events(cluster, "EvictionBlocked")) <= protected
    assert bound(cluster, "protected-") == protected

    # A second gang can only have the protected pods' room: while the budget holds, the
    # scheduler backs off from them and the log grows by a bounded number of lines.
    gang(cluster, "later", high, 2)
    cluster.wait_for(
        "an EvictionBlocked event naming a pod of gang later",
        lambda: any(
            f"preempt by {namespace}/later-" in e.get("message", "")
            for e in events(cluster, "EvictionBlocked")
        ),
        TIMEOUT,
    )
    told = cluster.wait_for(
        "later-0's pending message naming the pods passed over",
        lambda: (
            "whose eviction a PodDisruptionBudget refused lately"
            in ((harness.pod_condition(cluster, "test", "later-0") or {}).get("message", ""))
        ),
        TIMEOUT,
    )
    assert told
    before = log_lines(scheduler)
    time.sleep(WINDOW)
    grown = log_lines(scheduler) - before
    assert grown < MAX_LINES, scheduler.log(grown + 5)
    assert bound(cluster, "protected-") == protected
    assert bound(cluster, "later-") == set()
    evicted = harness.scrape(
        scheduler, "vscheduler_evictions_total", action="preempt", result="success"
    )
    assert evicted == 2.0, scheduler.log()

    # The budget goes: two protected pods are evicted (one stays: minMember) and the gang binds.
    cluster.request("DELETE", "/apis/policy/v1/namespaces/test/poddisruptionbudgets/protect")
    cluster.wait_for("the later gang bound", lambda: len(bound(cluster, "later-")) == 2, TIMEOUT)
    evicted_pods = involved(events(cluster, "Evicted"))
    assert {"free-0", "free-1"} < evicted_pods, harness.dump(sorted(evicted_pods))
    assert len(evicted_pods & protected) == 2, harness.dump(sorted(evicted_pods))
    assert len(bound(cluster, "protected-")) == 1
    assert bound(cluster, "urgent-") == {"urgent-0", "urgent-1"}
    assert scheduler.stop() == 0
