"""Preemption on a real API server: a high-priority Job evicts part of a low-priority workload
through the Eviction API, and binds once its victims are gone.

The low-priority workload is a ReplicaSet: kwok completes the pods of a Job as soon as they run,
so only a workload of long-running pods keeps the node full (its evicted pods come back pending,
as a Job's failed pods would)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from integration import harness

T = TypeVar("T", dict[str, str], list[dict[str, Any]])
TIMEOUT = 60.0
POLICY = """\
actions: "enqueue, allocate, preempt, backfill"
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


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def podgroup(name: str, namespace: str, *, min_member: int, priority: str) -> dict[str, Any]:
    group = harness.podgroup(name, namespace, min_member=min_member)
    group["spec"]["priorityClassName"] = priority
    return group


def template(group: str, namespace: str, priority: str) -> dict[str, Any]:
    """A pod template of 1 CPU, in PodGroup `group`, of PriorityClass `priority`."""
    pod = harness.pod("x", namespace, cpu="1", group=group)
    return {
        "metadata": {"annotations": pod["metadata"]["annotations"], "labels": {"app": group}},
        "spec": {**pod["spec"], "priorityClassName": priority},
    }


def job(name: str, namespace: str, *, pods: int, priority: str) -> dict[str, Any]:
    """A batch/v1 Job whose pods belong to PodGroup `name`."""
    spec = template(name, namespace, priority)
    spec["spec"]["restartPolicy"] = "Never"
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"completions": pods, "parallelism": pods, "template": spec},
    }


def replica_set(name: str, namespace: str, *, pods: int, priority: str) -> dict[str, Any]:
    """An apps/v1 ReplicaSet whose pods belong to PodGroup `name`."""
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": pods,
            "selector": {"matchLabels": {"app": name}},
            "template": template(name, namespace, priority),
        },
    }


def pods_of(cluster: harness.Cluster, namespace: str, app: str) -> list[dict[str, Any]]:
    return [
        p
        for p in harness.pods(cluster, namespace)
        if p["metadata"].get("labels", {}).get("app") == app
    ]


def running(pods: list[dict[str, Any]]) -> list[str]:
    """Names of the pods bound, not being deleted, and Running."""
    return sorted(
        p["metadata"]["name"]
        for p in pods
        if p["spec"].get("nodeName")
        and not p["metadata"].get("deletionTimestamp")
        and p.get("status", {}).get("phase") == "Running"
    )


def bound_to(cluster: harness.Cluster, app: str) -> dict[str, str]:
    """pod name -> node, for the bound pods of `app`."""
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in pods_of(cluster, "test", app)
        if p["spec"].get("nodeName")
    }


def preemption_events(cluster: harness.Cluster) -> list[dict[str, Any]]:
    """The `Evicted` Events that name a preemptor."""
    return [
        e
        for e in harness.events(cluster, "test")
        if e.get("reason") == "Evicted" and "preempt by" in e.get("message", "")
    ]


def at_least(count: int, found: T) -> T | None:
    """`found` when it holds at least `count` items."""
    return found if len(found) >= count else None


def test_a_high_priority_job_preempts_a_low_priority_one_through_the_eviction_api(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    tmp_path: Path,
) -> None:
    namespace = harness.namespace_of(cluster)
    low, high = f"{namespace}-low", f"{namespace}-high"
    cluster.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", priority_class(low, 10))
    cluster.request(
        "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", priority_class(high, 1000)
    )
    cluster.add_node("node-0", cpu="4", memory="8Gi")
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    scheduler = start_scheduler(args=[f"--policy-file={policy}"])
    scheduler.wait_ready()

    # A low-priority workload of four 1-CPU pods fills the node (an elastic gang: minMember 1).
    harness.create(cluster, podgroup("batch", "test", min_member=1, priority=low))
    cluster.request(
        "POST",
        "/apis/apps/v1/namespaces/test/replicasets",
        replica_set("batch", "test", pods=4, priority=low),
    )
    cluster.wait_for(
        "the low-priority pods running on all 4 CPUs",
        lambda: len(running(pods_of(cluster, "test", "batch"))) == 4,
        TIMEOUT,
    )
    before = set(running(pods_of(cluster, "test", "batch")))

    # A high-priority Job, a gang of two, arrives: exactly two low-priority pods must go.
    harness.create(cluster, podgroup("urgent", "test", min_member=2, priority=high))
    harness.create(cluster, job("urgent", "test", pods=2, priority=high))
    placed = cluster.wait_for(
        "both high-priority pods bound",
        lambda: at_least(2, bound_to(cluster, "urgent")),
        TIMEOUT,
    )
    assert set(placed.values()) == {"node-0"}, scheduler.log()
    evicted = cluster.wait_for(
        "two Evicted events naming the preemptors",
        lambda: at_least(2, preemption_events(cluster)),
        TIMEOUT,
    )
    victims = {e["involvedObject"]["name"] for e in evicted}
    assert len(victims) == 2, harness.dump(evicted)
    assert victims <= before, harness.dump(evicted)
    assert all(f"preempt by {namespace}/urgent-" in e["message"] for e in evicted)

    # The victims are gone, the other two still run, and nothing else was evicted. (The Job's
    # pods complete at once under kwok, after which the victims' replacements may run too.)
    left = pods_of(cluster, "test", "batch")
    assert not victims & {p["metadata"]["name"] for p in left}
    assert before - victims <= set(running(left)), harness.dump(left)
    assert harness.scrape(scheduler, "vscheduler_evictions_total", action="preempt") == 2.0
    assert scheduler.stop() == 0
