"""Usage-aware placement on real node usage, and vscheduler's own metrics in Prometheus.

A real Prometheus scrapes node series that a test exporter serves for the KWOK nodes
(integration/exporter.py, `instance="<node>:9100"`, kept with honor_labels) and holds 16
minutes of their history (integration/prometheus.py says why); `vscheduler run` collects usage
from it with the shipped default queries (policy `metrics` block, every second).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from integration import harness
from integration.exporter import NodeExporter
from integration.prometheus import PrometheusServer

TIMEOUT = 120.0
"""Generous: CI machines are slow, and the control plane shares them."""
HISTORY_S = 16 * 60.0
CPU_BOUND = "the CPU load of the node exceeds the upper limit."


def policy(prometheus_url: str) -> str:
    """binpack first (it prefers the fuller node), usage as a filter only (usage.weight 0)."""
    return f"""\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: proportion
  - name: binpack
    arguments:
      binpack.weight: 10
  - name: usage
    arguments:
      usage.weight: 0
      thresholds: {{cpu: 80, mem: 80}}
metrics:
  type: prometheus
  address: {prometheus_url}
  interval: 1s
"""


def start_prometheus_with_history(prometheus: PrometheusServer, exporter: NodeExporter) -> None:
    """Prometheus holding the nodes' last 16 minutes, scraping the exporter from now on."""
    prometheus.set_targets("node", [exporter.address])
    now = time.time()
    prometheus.start(history=exporter.history("node", now - HISTORY_S, now, 15.0))


def start_with_usage(
    start_scheduler: Callable[..., harness.Scheduler],
    prometheus: PrometheusServer,
    tmp_path: Path,
    nodes: int,
) -> harness.Scheduler:
    """The scheduler with `policy`, once its collector has fresh usage of `nodes` nodes."""
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(policy(prometheus.url))
    scheduler = start_scheduler(args=[f"--policy-file={policy_file}"])
    scheduler.wait_ready(TIMEOUT)
    harness.wait_for(
        f"fresh usage of {nodes} nodes",
        lambda: harness.scrape(scheduler, "vscheduler_usage_fresh_nodes") == nodes,
        TIMEOUT,
    )
    return scheduler


def test_the_usage_plugin_keeps_new_pods_off_a_node_reported_at_95_percent_cpu(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    prometheus: PrometheusServer,
    node_exporter: NodeExporter,
    tmp_path: Path,
) -> None:
    cluster.add_node("node-hot", cpu="8", memory="32Gi", labels={"role": "hot"})
    cluster.add_node("node-cool", cpu="8", memory="32Gi")
    # binpack alone would pick node-hot: it already runs 2 CPU of work.
    harness.create(cluster, harness.pod("ballast", "test", cpu="2", scheduler="nobody"))
    cluster.bind_pod("test", "ballast", "node-hot")
    node_exporter.set_node("node-hot", cpu=95, memory=40)
    node_exporter.set_node("node-cool", cpu=20, memory=30)
    start_prometheus_with_history(prometheus, node_exporter)
    scheduler = start_with_usage(start_scheduler, prometheus, tmp_path, nodes=2)

    for i in range(3):
        harness.create(cluster, harness.pod(f"p-{i}", "test", cpu="1"))
    harness.wait_for(
        "3 pods bound",
        lambda: len(set(harness.bound(cluster, "test")) - {"ballast"}) == 3,
        TIMEOUT,
    )
    placed = harness.bound(cluster, "test")
    assert placed == {
        "ballast": "node-hot",
        "p-0": "node-cool",
        "p-1": "node-cool",
        "p-2": "node-cool",
    }, scheduler.log(100)

    # A pod that may only run on node-hot stays pending, and says why.
    pinned = harness.pod("pinned", "test", cpu="1", extra={"nodeSelector": {"role": "hot"}})
    harness.create(cluster, pinned)
    cond = harness.wait_for(
        "the pinned pod's PodScheduled condition",
        lambda: harness.pod_condition(cluster, "test", "pinned"),
        TIMEOUT,
    )
    assert cond["status"] == "False", harness.dump(cond)
    assert CPU_BOUND in cond.get("message", ""), harness.dump(cond)
    assert "pinned" not in harness.bound(cluster, "test")
    assert scheduler.alive()


def test_prometheus_scrapes_the_scheduler_and_promql_over_its_metrics_returns_data(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    prometheus: PrometheusServer,
    node_exporter: NodeExporter,
    tmp_path: Path,
) -> None:
    for name in ("node-a", "node-b"):
        cluster.add_node(name, cpu="4", memory="8Gi")
        node_exporter.set_node(name, cpu=10, memory=10)
    start_prometheus_with_history(prometheus, node_exporter)
    scheduler = start_with_usage(start_scheduler, prometheus, tmp_path, nodes=2)
    prometheus.set_targets("vscheduler", [f"127.0.0.1:{scheduler.port}"])
    harness.create(cluster, harness.pod("p", "test"))
    harness.wait_for("p bound", lambda: "p" in harness.bound(cluster, "test"), TIMEOUT)

    def scraped(promql: str, value: float) -> list[dict[str, object]] | None:
        result = prometheus.query(promql)
        return result if [float(r["value"][1]) for r in result] == [value] else None

    fresh = harness.wait_for(
        "vscheduler_usage_fresh_nodes in Prometheus",
        lambda: scraped('vscheduler_usage_fresh_nodes{job="vscheduler"}', 2.0),
        TIMEOUT,
    )
    assert fresh[0]["metric"] == {
        "__name__": "vscheduler_usage_fresh_nodes",
        "instance": f"127.0.0.1:{scheduler.port}",
        "job": "vscheduler",
    }
    harness.wait_for(
        "vscheduler_pods_bound_total 1 in Prometheus",
        lambda: scraped('sum(vscheduler_pods_bound_total{job="vscheduler"})', 1.0),
        TIMEOUT,
    )
    queries = prometheus.query(
        'sum by (metric) (vscheduler_usage_query_duration_seconds_count{job="vscheduler"})'
    )
    assert sorted(r["metric"]["metric"] for r in queries) == ["cpu", "memory"], queries
    assert all(float(r["value"][1]) >= 1 for r in queries), queries
    assert scheduler.alive()
