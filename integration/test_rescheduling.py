"""Rescheduling on real node usage: a real Prometheus scrapes node series that a test exporter
serves for the KWOK nodes, `vscheduler run` collects them with the shipped default queries, and
the `rescheduling` plugin proposes, through the `shuffle` action and the Eviction API, pods of a
Deployment on an overloaded node; the ReplicaSet's replacements land on cold nodes.

Every test starts the same way: node-hot (95% CPU) and two cold nodes (5%) that are cordoned,
the scheduler running with the rescheduling policy while Prometheus is not up yet (so it has no
usage and places the Deployment's 4 pods on node-hot, the only schedulable node), then
Prometheus starts with 16 minutes of the nodes' history (see integration/prometheus.py on why).
lowNodeUtilization needs 2 low nodes to move pods to, so nothing can move while the cold nodes
are cordoned.

How many pods move: node-hot runs 95% of 8 CPU; its target is 70%, so taking 4 pods of 500m
would be needed, but `maxEvictionsPerNode` lets one run evict 2 and `workloadCooldown` (15m)
then keeps the rest of the Deployment where it is: exactly 2 evictions.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from integration import harness
from integration.exporter import NodeExporter
from integration.prometheus import PrometheusServer

TIMEOUT = 120.0
pytestmark = pytest.mark.timeout(300)
"""Each test here waits on Prometheus scrapes and descheduling runs, step after step (each step
up to `TIMEOUT`): the suite's 60 s per test, a guard against a hang, stopped one on a loaded
machine between two steps that each went as they should."""
"""Generous: CI machines are slow, and the control plane shares them."""
HOT, COLD = "node-hot", ("node-cold-a", "node-cold-b")
NODES = (HOT, *COLD)
REPLICAS = 4
INTERVAL_S = 5.0
"""The rescheduling interval of the policy."""
QUIET = 4 * INTERVAL_S
"""How long "nothing is evicted" is watched: several rescheduling runs on the data at hand."""
HISTORY_S = 16 * 60.0
APP = {"app": "web"}
EVICTIONS = "vscheduler_evictions_total"
WHY = f"shuffle: node {HOT} over target (cpu 95% > 70%)"
"""The eviction's reason: shuffle's, with the rescheduling plugin's note."""


def policy(prometheus_url: str) -> str:
    """Usage-aware placement, lowNodeUtilization through shuffle, the collector every second."""
    return f"""\
actions: "enqueue, allocate, backfill, shuffle"
configurations:
- name: shuffle
  arguments:
    maxEvictionsPerNode: 2
    maxEvictionsPerRun: 10
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: pdb
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: usage
  - name: rescheduling
    arguments:
      interval: {INTERVAL_S:.0f}s
      metricsPeriod: 10m
      consecutiveCollections: 2
      workloadCooldown: 15m
      avoidNodeFor: 10m
      strategies:
      - name: lowNodeUtilization
        params:
          thresholds: {{cpu: 30, memory: 30, pods: 50}}
          targetThresholds: {{cpu: 70, memory: 70, pods: 80}}
metrics:
  type: prometheus
  address: {prometheus_url}
  interval: 1s
  timeout: 5s
"""


def deployment(name: str, replicas: int) -> dict[str, Any]:
    """A Deployment of pods for the scheduler under test, 500m / 256Mi each."""
    template = harness.pod("x", "test", cpu="500m", memory="256Mi")
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "test"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": APP},
            "template": {"metadata": {"labels": APP}, "spec": template["spec"]},
        },
    }


def cordon(cluster: harness.Cluster, node: str, *, on: bool = True) -> None:
    """Set (or clear) the node's spec.unschedulable."""
    cluster.request(
        "PATCH",
        f"/api/v1/nodes/{node}",
        {"spec": {"unschedulable": on}},
        content_type="application/merge-patch+json",
    )


def running_web_pods(cluster: harness.Cluster) -> dict[str, tuple[str, str]]:
    """uid -> (pod name, node) of the Deployment's pods that run and are not being deleted."""
    return {
        p["metadata"]["uid"]: (p["metadata"]["name"], p["spec"].get("nodeName", ""))
        for p in harness.pods(cluster, "test")
        if p["metadata"].get("labels", {}).get("app") == "web"
        and p.get("status", {}).get("phase") == "Running"
        and not p["metadata"].get("deletionTimestamp")
    }


def evicted_events(cluster: harness.Cluster) -> list[dict[str, Any]]:
    """The scheduler's `Evicted` Events about pods."""
    return [
        e
        for e in harness.events(cluster, "test")
        if e.get("reason") == "Evicted" and e.get("involvedObject", {}).get("kind") == "Pod"
    ]


@dataclass
class HotNode:
    """What `hot_node_running_the_deployment` set up."""

    scheduler: harness.Scheduler
    originals: dict[str, tuple[str, str]]
    """uid -> (name, node) of the 4 pods placed on node-hot."""

    def evictions(self) -> float:
        """The scheduler's count of shuffle evictions carried out."""
        found = harness.scrape(
            self.scheduler,
            EVICTIONS,
            action="shuffle",
            strategy="lowNodeUtilization",
            result="success",
        )
        return found or 0.0

    def usage(self, sample: str) -> float | None:
        """One of the collector's metrics (vscheduler_usage_...)."""
        return harness.scrape(self.scheduler, sample)


def hot_node_running_the_deployment(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    prometheus: PrometheusServer,
    exporter: NodeExporter,
    tmp_path: Path,
    *,
    extra: tuple[tuple[str, dict[str, Any]], ...] = (),
) -> HotNode:
    """node-hot runs the Deployment's 4 pods, placed by the scheduler under test, the cold
    nodes are cordoned, and Prometheus (with the nodes' history) is not started yet. `extra`
    objects (`(path, object)`, e.g. a PDB) are created with the Deployment."""
    for name in NODES:
        cluster.add_node(name, cpu="8", memory="32Gi")
    for name in COLD:
        cordon(cluster, name)
    exporter.set_node(HOT, cpu=95, memory=40)
    for name in COLD:
        exporter.set_node(name, cpu=5, memory=10)
    prometheus.set_targets("node", [exporter.address])
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(policy(prometheus.url))
    scheduler = start_scheduler(args=[f"--policy-file={policy_file}"])
    scheduler.wait_ready(TIMEOUT)
    cluster.request("POST", "/apis/apps/v1/namespaces/test/deployments", deployment("web", 4))
    for path, obj in extra:
        cluster.request("POST", path, obj)

    def all_on_hot_node() -> dict[str, tuple[str, str]] | None:
        pods = running_web_pods(cluster)
        on_hot = len(pods) == REPLICAS and all(node == HOT for _, node in pods.values())
        return pods if on_hot else None

    placed = harness.wait_for("the 4 pods running on node-hot", all_on_hot_node, TIMEOUT)
    assert scheduler.alive()
    return HotNode(scheduler, placed)


def start_prometheus_with_history(prometheus: PrometheusServer, exporter: NodeExporter) -> None:
    """Prometheus holding the nodes' last 16 minutes, scraping the exporter from now on."""
    now = time.time()
    prometheus.start(history=exporter.history("node", now - HISTORY_S, now, 15.0))


def wait_fresh(hot: HotNode, count: int) -> None:
    """Until the collector reports `count` nodes with fresh usage."""
    harness.wait_for(
        f"fresh usage of {count} nodes",
        lambda: hot.usage("vscheduler_usage_fresh_nodes") == count,
        TIMEOUT,
    )


def assert_two_moved_to_cold_nodes(cluster: harness.ScopedCluster, hot: HotNode) -> None:
    """Exactly 2 of the originals were evicted through the Eviction API (Events, metric), their
    replacements run on cold nodes, the other 2 stay on node-hot, and no further run moves any
    (the workload's cooldown)."""
    harness.wait_for("2 shuffle evictions", lambda: hot.evictions() >= 2, TIMEOUT)

    def settled() -> dict[str, tuple[str, str]] | None:
        pods = running_web_pods(cluster)
        return pods if len(pods) == REPLICAS and len(set(pods) - set(hot.originals)) == 2 else None

    harness.wait_for("2 replacements running", settled, TIMEOUT)
    time.sleep(QUIET)
    pods = running_web_pods(cluster)
    kept = {uid: pod for uid, pod in pods.items() if uid in hot.originals}
    replacements = {uid: pod for uid, pod in pods.items() if uid not in hot.originals}
    assert hot.evictions() == 2, hot.scheduler.log(100)
    assert sorted(node for _, node in kept.values()) == [HOT, HOT], harness.dump(pods)
    assert len(replacements) == 2, harness.dump(pods)
    assert all(node in COLD for _, node in replacements.values()), harness.dump(pods)
    events = evicted_events(cluster)
    evicted = sorted(e["involvedObject"]["name"] for e in events)
    gone = sorted(name for uid, (name, _) in hot.originals.items() if uid not in kept)
    assert evicted == gone, harness.dump(events)
    assert all(WHY in e["message"] for e in events), harness.dump(events)


def test_pods_of_a_deployment_on_an_overloaded_node_move_to_cold_nodes_through_shuffle(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    prometheus: PrometheusServer,
    node_exporter: NodeExporter,
    tmp_path: Path,
) -> None:
    hot = hot_node_running_the_deployment(
        cluster, start_scheduler, prometheus, node_exporter, tmp_path
    )
    start_prometheus_with_history(prometheus, node_exporter)
    wait_fresh(hot, len(NODES))
    # No low node to move pods to while the cold nodes are cordoned.
    time.sleep(INTERVAL_S)
    assert hot.evictions() == 0
    for name in COLD:
        cordon(cluster, name, on=False)

    assert_two_moved_to_cold_nodes(cluster, hot)
    assert hot.scheduler.alive()


BUDGETS = "/apis/policy/v1/namespaces/test/poddisruptionbudgets"


def pdb(min_available: int) -> dict[str, Any]:
    """A policy/v1 PodDisruptionBudget over the Deployment's pods."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "test"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": APP}},
    }


def test_pods_covered_by_a_budget_that_allows_no_disruption_stay_on_the_overloaded_node(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    prometheus: PrometheusServer,
    node_exporter: NodeExporter,
    tmp_path: Path,
) -> None:
    hot = hot_node_running_the_deployment(
        cluster, start_scheduler, prometheus, node_exporter, tmp_path,
        extra=((BUDGETS, pdb(REPLICAS)),),
    )  # fmt: skip
    budget_path = f"{BUDGETS}/web"

    def budget_counted() -> dict[str, Any] | None:
        status = cluster.request("GET", budget_path).get("status", {})
        done = status.get("currentHealthy") == REPLICAS and status.get("expectedPods") == REPLICAS
        return status if done else None

    # The disruption controller (kube-controller-manager) has counted the pods: none may go.
    status = harness.wait_for("the budget's status", budget_counted, TIMEOUT)
    assert status["disruptionsAllowed"] == 0, harness.dump(status)
    start_prometheus_with_history(prometheus, node_exporter)
    for name in COLD:
        cordon(cluster, name, on=False)
    wait_fresh(hot, len(NODES))

    time.sleep(QUIET)
    assert running_web_pods(cluster) == hot.originals
    assert hot.evictions() == 0, hot.scheduler.log(100)
    assert evicted_events(cluster) == []
    assert harness.scrape(hot.scheduler, EVICTIONS, action="shuffle") in (None, 0.0)

    # The same cluster without the budget: the pods move (so the budget was what kept them).
    cluster.request("DELETE", budget_path)
    assert_two_moved_to_cold_nodes(cluster, hot)


def assert_nothing_moves_on_stale_usage(cluster: harness.ScopedCluster, hot: HotNode) -> None:
    """Over several rescheduling runs on stale data nothing is evicted, while the collector's
    failures and the data's age grow."""
    age = hot.usage("vscheduler_usage_data_age_seconds")
    failed = hot.usage("vscheduler_usage_collection_failures_total")
    time.sleep(QUIET)
    assert running_web_pods(cluster) == hot.originals
    assert hot.evictions() == 0, hot.scheduler.log(100)
    assert evicted_events(cluster) == []
    later_age = hot.usage("vscheduler_usage_data_age_seconds")
    later_failed = hot.usage("vscheduler_usage_collection_failures_total")
    assert age is not None, hot.scheduler.log(100)
    assert later_age is not None, hot.scheduler.log(100)
    assert later_age >= age + QUIET - 2, (age, later_age)
    assert failed is not None, hot.scheduler.log(100)
    assert later_failed is not None, hot.scheduler.log(100)
    assert later_failed >= failed + 3, (failed, later_failed)
    assert hot.scheduler.alive()


def test_with_prometheus_stopped_scheduling_goes_on_and_nothing_is_evicted_on_stale_usage(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    prometheus: PrometheusServer,
    node_exporter: NodeExporter,
    tmp_path: Path,
) -> None:
    hot = hot_node_running_the_deployment(
        cluster, start_scheduler, prometheus, node_exporter, tmp_path
    )
    start_prometheus_with_history(prometheus, node_exporter)
    wait_fresh(hot, len(NODES))
    # The last data says node-hot is at 95%. Prometheus goes away before any low node exists.
    prometheus.stop()
    failures = hot.usage("vscheduler_usage_collection_failures_total") or 0.0
    harness.wait_for(
        "collections failing and usage stale",
        lambda: (
            (hot.usage("vscheduler_usage_collection_failures_total") or 0.0) > failures
            and hot.usage("vscheduler_usage_fresh_nodes") == 0
        ),
        TIMEOUT,
    )
    for name in COLD:
        cordon(cluster, name, on=False)

    # Scheduling goes on: a new pod binds, kept off node-hot by the last (stale, < 5 min) data.
    harness.create(cluster, harness.pod("after", "test", cpu="500m"))
    node = harness.wait_for(
        "the new pod bound", lambda: harness.bound(cluster, "test").get("after"), TIMEOUT
    )
    assert node in COLD, hot.scheduler.log(100)

    assert_nothing_moves_on_stale_usage(cluster, hot)

    # Prometheus back (same port, same data): usage is fresh again and the pods move.
    prometheus.start()
    wait_fresh(hot, len(NODES))
    assert_two_moved_to_cold_nodes(cluster, hot)
