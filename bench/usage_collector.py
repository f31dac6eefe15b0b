"""The node-usage collector's cost at scale, against a real Prometheus; print JSON.

    python -m bench.usage_collector                          # 5,000 nodes, 15 min of history
    python -m bench.usage_collector --nodes 1000 --collections 5
    python -m bench.usage_collector --history 0              # no backfill: only live scrapes

A NodeExporter (integration/exporter.py) serves node_exporter-style series for `--nodes` nodes
(4 series each: the idle and user CPU counters, MemTotal, MemAvailable; CPU and memory percent
spread over 5..95), and a real Prometheus (integration/prometheus.py, Debian's package) scrapes it
every `--scrape-interval` seconds. So that the queries meet what a Prometheus that has watched
the nodes for a while holds, `--history` seconds of the series are backfilled first (at the
scrape interval; the default queries read 10m of 5m rates, so 15m covers all they touch); the
bench then waits for `--scrapes` live scrapes.

The collector is vscheduler's own (`vscheduler.obs.usage.UsageCollector`, configured from a
policy's `metrics` block with the shipped default queries and period: two queries per
collection), its HTTP client wrapped to time each query and count its bytes. Reported:

- `collection`: per collection (median, min, max of `--collections`): wall seconds, the CPU
  seconds of the collecting thread (HTTP, JSON parsing, merging: the scheduler side), nodes
  parsed;
- `queries`: per query (cpu, memory): wall seconds (median), response bytes, and Prometheus'
  own timings and samples (`/api/v1/query?stats=all`: evalTotalTime, execTotalTime,
  totalQueryableSamples, peakSamples);
- `prometheus`: its CPU seconds per collection (from /proc, less the CPU of an equally long
  quiet window, which is scraping), its RSS, the backfill and startup seconds, and the scrape of
  the exporter (`scrape_duration_seconds`, `scrape_samples_scraped`);
- `volcanoStyle`: Volcano's way (two queries per node, `instance="<node>"`) measured on
  `--per-node-sample` nodes and scaled to all nodes, for comparison.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.observe import process_cpu
from integration.exporter import PORT_SUFFIX, NodeExporter
from integration.prometheus import PrometheusServer
from vscheduler import catalog
from vscheduler.clock import SystemClock
from vscheduler.model.facts import NodeUsage
from vscheduler.obs.prometheus import QueryRequest, urllib_fetch
from vscheduler.obs.usage import UsageCollector

JOB = "node"
VOLCANO_CPU = (
    'avg_over_time((100 - (avg by (instance) (rate(node_cpu_seconds_total{{mode="idle",'
    'instance="{node}"}}[5m])) * 100))[10m:30s])'
)
VOLCANO_MEMORY = (
    '100*avg_over_time(((1-node_memory_MemAvailable_bytes{{instance="{node}"}}'
    '/node_memory_MemTotal_bytes{{instance="{node}"}}))[10m:30s])'
)


def percents(i: int) -> tuple[float, float]:
    """(cpu, memory) percent of node `i`, spread over 5..95."""
    return 5.0 + (i * 37) % 91, 5.0 + (i * 53) % 91


class TimedFetch:
    """The collector's HTTP client, timing each query and counting its bytes."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float, int]] = []
        """(query, wall seconds, response bytes) per call."""

    def __call__(self, request: QueryRequest) -> bytes:
        started = time.perf_counter()
        body = urllib_fetch(request)
        self.calls.append((request.query, time.perf_counter() - started, len(body)))
        return body


def process_rss_mib(pid: int) -> float:
    """Resident memory of process `pid` in MiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def stats(values: Sequence[float], digits: int = 4) -> dict[str, float]:
    """Median, min and max."""
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def start_prometheus(args: argparse.Namespace, workdir: Path) -> tuple[PrometheusServer, Any]:
    """The exporter with `args.nodes` nodes, and Prometheus with their history, scraped."""
    exporter = NodeExporter().start()
    for i in range(args.nodes):
        cpu, memory = percents(i)
        exporter.set_node(f"node-{i:05d}", cpu=cpu, memory=memory)
    server = PrometheusServer(
        workdir / "prometheus",
        jobs={JOB: True},
        scrape_interval=f"{round(args.scrape_interval * 1000)}ms",
    )
    server.set_targets(JOB, [exporter.address])
    now = time.time()
    history = exporter.history(JOB, now - args.history, now, args.scrape_interval)
    server.start(history=history if args.history > 0 else ())
    deadline = time.monotonic() + 60 + args.scrapes * args.scrape_interval * 3
    while exporter.scrapes < args.scrapes + 1:  # the last one finished
        if time.monotonic() > deadline:
            raise RuntimeError(f"Prometheus did not scrape the exporter:\n{server.logs()}")
        time.sleep(0.5)
    return server, exporter


def collector_for(server: PrometheusServer, fetch: TimedFetch) -> UsageCollector:
    """vscheduler's collector, configured as a policy with a default metrics block does."""
    text = f"""\
actions: "allocate"
tiers:
- plugins:
  - name: usage
metrics:
  type: prometheus
  address: {server.url}
  timeout: 60s
"""
    pipeline = catalog.load_pipeline(text)
    if pipeline.metrics is None:
        raise RuntimeError("the policy has no metrics block")
    return UsageCollector(
        pipeline.metrics, pipeline.usage_periods, clock=SystemClock(), fetch=fetch
    )


def run_collections(
    collector: UsageCollector, fetch: TimedFetch, count: int
) -> tuple[list[dict[str, float]], dict[str, NodeUsage]]:
    """`count` collections back to back, each on the previous one's result."""
    usage: dict[str, NodeUsage] = {}
    runs: list[dict[str, float]] = []
    for _ in range(count):
        fetch.calls.clear()
        wall, cpu = time.perf_counter(), time.thread_time()
        outcome = collector.collect(usage)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        if outcome.failure is not None:
            raise RuntimeError(f"collection failed: {outcome.failure}")
        usage = outcome.usage
        runs.append(
            {
                "wall": wall,
                "cpu": cpu,
                "fresh": float(outcome.fresh),
                **{f"q{i}": c[1] for i, c in enumerate(fetch.calls)},
                **{f"b{i}": float(c[2]) for i, c in enumerate(fetch.calls)},
            }
        )
    return runs, usage


def server_side(server: PrometheusServer, promql: str, repeat: int = 3) -> dict[str, float]:
    """Prometheus' own timings and sample counts for one query (`stats=all`), medians."""
    seen: list[dict[str, float]] = []
    for _ in range(repeat):
        data = server.api("query", query=promql, stats="all")
        timings, samples = data["stats"]["timings"], data["stats"]["samples"]
        seen.append(
            {
                "evalTotalTime": timings["evalTotalTime"],
                "execTotalTime": timings["execTotalTime"],
                "totalQueryableSamples": float(samples["totalQueryableSamples"]),
                "peakSamples": float(samples["peakSamples"]),
            }
        )
    return {k: round(statistics.median(s[k] for s in seen), 4) for k in seen[0]}


def volcano_style(server: PrometheusServer, nodes: int, sample: int) -> dict[str, float]:
    """Two per-node queries (Volcano's) for `sample` nodes, timed, scaled to `nodes`."""
    if sample <= 0:
        return {}
    walls: list[float] = []
    step = max(1, nodes // sample)
    for i in range(0, step * sample, step):
        node = f"node-{i % nodes:05d}{PORT_SUFFIX}"
        for template in (VOLCANO_CPU, VOLCANO_MEMORY):
            request = QueryRequest(
                url=server.url + "/api/v1/query", query=template.format(node=node), timeout=60.0
            )
            started = time.perf_counter()
            urllib_fetch(request)
            walls.append(time.perf_counter() - started)
    per_query = statistics.median(walls)
    return {
        "nodesSampled": float(sample),
        "querySecondsMedian": round(per_query, 5),
        "queriesPerCollection": float(2 * nodes),
        "collectionSecondsEstimate": round(per_query * 2 * nodes, 2),
    }


def quiet_cpu(pid: int, seconds: float) -> float:
    """Prometheus' CPU seconds over a window without queries (scraping and housekeeping)."""
    before = process_cpu(pid)
    time.sleep(seconds)
    return process_cpu(pid) - before


def queries_report(
    server: PrometheusServer, collector: UsageCollector, runs: list[dict[str, float]]
) -> list[dict[str, object]]:
    """Per query of a collection: wall time, response bytes, Prometheus' own stats."""
    return [
        {
            "metric": resource_name,
            "period": period,
            "promql": promql,
            "wallSeconds": stats([r[f"q{i}"] for r in runs]),
            "responseBytes": int(statistics.median(r[f"b{i}"] for r in runs)),
            "prometheus": server_side(server, promql),
        }
        for i, (resource_name, period, promql) in enumerate(collector.queries)
    ]


def measure(args: argparse.Namespace, workdir: Path) -> dict[str, object]:
    """Everything, as one JSON-able dict."""
    server, exporter = start_prometheus(args, workdir)
    try:
        fetch = TimedFetch()
        collector = collector_for(server, fetch)
        pid = server.pid or 0
        cpu_before, started = process_cpu(pid), time.perf_counter()
        runs, usage = run_collections(collector, fetch, args.collections)
        busy_cpu, elapsed = process_cpu(pid) - cpu_before, time.perf_counter() - started
        idle_cpu = quiet_cpu(pid, elapsed)
        queries = queries_report(server, collector, runs)
        scrape = {
            "durationSeconds": _scalar(server, f'scrape_duration_seconds{{job="{JOB}"}}'),
            "samples": _scalar(server, f'scrape_samples_scraped{{job="{JOB}"}}'),
        }
        return {
            "benchmark": "usage_collector",
            "nodes": args.nodes,
            "seriesPerNode": 4,
            "scrapeIntervalSeconds": args.scrape_interval,
            "historySeconds": args.history,
            "collections": args.collections,
            "collection": {
                "wallSeconds": stats([r["wall"] for r in runs]),
                "schedulerCpuSeconds": stats([r["cpu"] for r in runs]),
                "nodesParsed": int(min(r["fresh"] for r in runs)),
                "nodesInResult": len(usage),
            },
            "queries": queries,
            "prometheus": {
                "cpuSecondsPerCollection": round((busy_cpu - idle_cpu) / args.collections, 4),
                "cpuSecondsQuietWindow": round(idle_cpu, 3),
                "rssMiB": process_rss_mib(pid),
                "backfillSeconds": server.backfill_seconds,
                "startupSeconds": server.startup_seconds,
                "exporterScrape": scrape,
            },
            "volcanoStyle": volcano_style(server, args.nodes, args.per_node_sample),
            "benchPeakRssMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        }
    finally:
        server.stop()
        exporter.stop()


def _scalar(server: PrometheusServer, promql: str) -> float | None:
    result = server.query(promql)
    return round(float(result[0]["value"][1]), 4) if result else None


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> None:
    """CLI."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--collections", type=int, default=7)
    parser.add_argument("--scrape-interval", type=float, default=15.0)
    parser.add_argument("--scrapes", type=int, default=2, help="live scrapes before measuring")
    parser.add_argument("--history", type=float, default=900.0, help="seconds to backfill")
    parser.add_argument("--per-node-sample", type=int, default=50)
    parser.add_argument("--keep", metavar="DIR", help="keep Prometheus' files and log here")
    args = parser.parse_args(argv)
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        out(json.dumps(measure(args, Path(args.keep)), indent=2))
        return
    with tempfile.TemporaryDirectory(prefix="vscheduler-bench-usage-") as tmp:
        out(json.dumps(measure(args, Path(tmp)), indent=2))


if __name__ == "__main__":
    main()
