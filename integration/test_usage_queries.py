"""The shipped CPU query on a real Prometheus, on series that have just appeared (no backfill).

Volcano's CPU query, `100 - avg(rate(idle[5m])) * 100`, divides a young series' increase by the
whole 5-minute window and reads an idle node as busy until the window has filled. The shipped
query divides idle time by all CPU time over the same window, so it reads right from the first
samples. This test needs no control plane: an exporter, a Prometheus, and the rendered queries.
"""

from __future__ import annotations

import time

from vscheduler.conf.metrics_block import render_query
from vscheduler.conf.schema import DEFAULT_CPU_QUERY, DEFAULT_MEMORY_QUERY

from integration import harness
from integration.exporter import NodeExporter
from integration.prometheus import PrometheusServer

VOLCANO_CPU = (
    'avg_over_time((100 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[5m]))'
    " * 100)[10m:30s])"
)
TIMEOUT = 120.0


def test_a_node_whose_exporter_just_started_reads_its_real_cpu_and_memory(
    prometheus: PrometheusServer, node_exporter: NodeExporter
) -> None:
    node_exporter.set_node("node-idle", cpu=5, memory=40)
    node_exporter.set_node("node-busy", cpu=90, memory=70)
    prometheus.set_targets("node", [node_exporter.address])
    prometheus.start()
    started = time.monotonic()
    cpu_query = render_query(DEFAULT_CPU_QUERY, period="10m", label="instance")
    memory_query = render_query(DEFAULT_MEMORY_QUERY, period="10m", label="instance")

    def both_nodes(promql: str) -> dict[str, float] | None:
        values = prometheus.values(promql, "instance")
        return values if len(values) == 2 else None

    cpu = harness.wait_for("CPU for both nodes", lambda: both_nodes(cpu_query), TIMEOUT)
    volcano = prometheus.values(VOLCANO_CPU, "instance")
    memory = harness.wait_for("memory for both nodes", lambda: both_nodes(memory_query), TIMEOUT)
    age = time.monotonic() - started

    assert age < 240, "the series must still be younger than the 5-minute rate window"
    for values, node, expected in (
        (cpu, "node-idle:9100", 5.0),
        (cpu, "node-busy:9100", 90.0),
        (memory, "node-idle:9100", 40.0),
        (memory, "node-busy:9100", 70.0),
    ):
        assert abs(values[node] - expected) <= 1.0, (node, expected, values)
    # Volcano's form on the same young series reads the idle node as far busier than it is.
    assert volcano["node-idle:9100"] > 50.0, volcano
