"""The shipped Grafana dashboard: a Prometheus data-source variable, the panels operators need,
and PromQL that names only metrics and labels vscheduler exposes (and parses, where promtool is
installed)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from vscheduler.obs.metrics import SchedulerMetrics

ROOT = Path(__file__).resolve().parents[3]
DASHBOARD = ROOT / "docs" / "grafana" / "vscheduler-dashboard.json"
METRICS_DOC = ROOT / "docs" / "metrics.md"
DATASOURCE = "${datasource}"
SERIES_SUFFIXES = ("_bucket", "_count", "_sum")
TARGET_LABELS = {"job", "instance", "namespace", "pod", "service", "endpoint", "container"}
"""Labels Prometheus (or the Prometheus operator) adds to every scraped series."""
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$job": ".+", "$queue": ".*"}


def load() -> dict[str, Any]:
    dashboard: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return dashboard


def graph_panels() -> list[dict[str, Any]]:
    return [p for p in load()["panels"] if p["type"] != "row"]


def expressions() -> list[str]:
    return [t["expr"] for p in graph_panels() for t in p["targets"]]


def metric_names(expr: str) -> set[str]:
    return set(re.findall(r"\bvscheduler_[a-z0-9_]+", expr))


def documented_metrics() -> set[str]:
    text = METRICS_DOC.read_text(encoding="utf-8")
    return set(re.findall(r"^\| `(vscheduler_[a-z0-9_]+)`", text, re.MULTILINE))


def exposed_label_names() -> dict[str, set[str]]:
    """Metric name (as documented: counters with `_total`) -> its label names."""
    registry = CollectorRegistry()
    SchedulerMetrics(registry)
    out: dict[str, set[str]] = {}
    # prometheus_client keeps each metric's label names on the metric object; the registry's
    # collector table is the only way to reach every metric it holds.
    for collector in list(registry._collector_to_names):
        labels = set(getattr(collector, "_labelnames", ()))
        for family in collector.collect():
            name = family.name + ("_total" if family.type == "counter" else "")
            out[name] = labels | ({"le"} if family.type == "histogram" else set())
    return out


def base_name(series: str, known: set[str]) -> str:
    if series in known:
        return series
    for suffix in SERIES_SUFFIXES:
        if series.endswith(suffix) and series.removesuffix(suffix) in known:
            return series.removesuffix(suffix)
    return series


def test_the_dashboard_is_a_current_grafana_dashboard_with_a_prometheus_datasource_variable() -> (
    None
):
    dashboard = load()
    assert dashboard["schemaVersion"] >= 36
    assert dashboard["uid"] == "vscheduler"
    [variable] = [v for v in dashboard["templating"]["list"] if v["name"] == "datasource"]
    assert variable["type"] == "datasource"
    assert variable["query"] == "prometheus"


def test_every_panel_and_query_reads_the_datasource_variable() -> None:
    for panel in graph_panels():
        assert panel["datasource"] == {"type": "prometheus", "uid": DATASOURCE}, panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == {"type": "prometheus", "uid": DATASOURCE}


def test_panel_ids_are_unique_and_panels_do_not_overlap() -> None:
    panels = load()["panels"]
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids))
    taken: set[tuple[int, int]] = set()
    for panel in panels:
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24
        cells = {
            (x, y)
            for x in range(pos["x"], pos["x"] + pos["w"])
            for y in range(pos["y"], pos["y"] + pos["h"])
        }
        assert not cells & taken, panel["title"]
        taken |= cells


def test_the_panels_operators_asked_for_are_there() -> None:
    titles = [p["title"] for p in graph_panels()]
    assert titles == [
        "Cycle latency (p50, p99)",
        "Action latency (p99)",
        "Cycles per second",
        "Pods bound per second",
        "Schedule attempts per second",
        "Pending pods and PodGroups",
        "Queue share",
        "Queue CPU: allocated and deserved",
        "Queue memory: allocated and deserved",
        "Evictions by action, strategy and result",
        "Preemption",
        "Node usage data age",
        "Node usage collections",
        "Policy reloads",
        "Leader",
        "Since the last good policy",
        "Informer relists",
    ]


def test_cycle_latency_is_read_from_the_e2e_histogram_at_p50_and_p99() -> None:
    [panel] = [p for p in graph_panels() if p["title"] == "Cycle latency (p50, p99)"]
    exprs = [t["expr"] for t in panel["targets"]]
    assert [e.split(",")[0] for e in exprs] == [
        "histogram_quantile(0.5",
        "histogram_quantile(0.99",
    ]
    assert all("vscheduler_e2e_scheduling_latency_milliseconds_bucket" in e for e in exprs)


def test_every_metric_a_query_names_is_documented_in_metrics_md() -> None:
    documented = documented_metrics()
    named = {base_name(n, documented) for e in expressions() for n in metric_names(e)}
    assert named <= documented, sorted(named - documented)
    assert named == {
        "vscheduler_action_scheduling_latency_milliseconds",
        "vscheduler_bind_failures_total",
        "vscheduler_config_last_reload_success_timestamp_seconds",
        "vscheduler_config_reloads_total",
        "vscheduler_cycle_skipped_total",
        "vscheduler_cycles_total",
        "vscheduler_e2e_scheduling_latency_milliseconds",
        "vscheduler_evictions_total",
        "vscheduler_informer_relists_total",
        "vscheduler_is_leader",
        "vscheduler_pod_preemption_victims",
        "vscheduler_pods_bound_total",
        "vscheduler_queue_allocated_memory_bytes",
        "vscheduler_queue_allocated_milli_cpu",
        "vscheduler_queue_deserved_memory_bytes",
        "vscheduler_queue_deserved_milli_cpu",
        "vscheduler_queue_share",
        "vscheduler_schedule_attempts_total",
        "vscheduler_total_preemption_attempts",
        "vscheduler_unschedule_job_count",
        "vscheduler_unschedule_task_count",
        "vscheduler_usage_collection_failures_total",
        "vscheduler_usage_data_age_seconds",
        "vscheduler_usage_fresh_nodes",
    }


def test_every_label_a_query_selects_or_groups_by_exists_on_its_metrics() -> None:
    exposed = exposed_label_names()
    for expr in expressions():
        metrics = {base_name(n, set(exposed)) for n in metric_names(expr)}
        allowed = set().union(*(exposed[m] for m in metrics)) | TARGET_LABELS
        selected = set(re.findall(r"([a-z_]+)\s*(?:=~|!~|!=|=)\s*\"", expr))
        grouped = {
            label.strip()
            for group in re.findall(r"\b(?:by|on)\s*\(([^)]*)\)", expr)
            for label in group.split(",")
            if label.strip()
        }
        assert selected | grouped <= allowed, (expr, sorted((selected | grouped) - allowed))


def substituted(expr: str) -> str:
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    assert "$" not in expr, expr
    return expr


def test_every_query_uses_only_the_dashboards_variables() -> None:
    for expr in expressions():
        substituted(expr)


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed")
def test_promtool_parses_every_query(tmp_path: Path) -> None:
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [
                    {"record": f"dashboard:query_{i}", "expr": substituted(expr)}
                    for i, expr in enumerate(expressions())
                ],
            }
        ]
    }
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules))
    promtool = shutil.which("promtool")
    assert promtool is not None
    done = subprocess.run(
        [promtool, "check", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(expressions())} rules found" in done.stdout
