"""One rescheduling run at scale: open a session, run `shuffle` with the `rescheduling` plugin
proposing (lowNodeUtilization), close it; print JSON.

    python -m bench.rescheduling                         # 5,000 nodes, 50,000 running pods
    python -m bench.rescheduling --nodes 1000 --pods-per-node 10 --runs 3
    python -m bench.rescheduling --max-per-run 100000 --max-per-node 1000   # caps lifted

The cluster is built in memory with vscheduler.testing.builders: nodes 32 CPU / 128Gi / 110 pods;
every node runs `--pods-per-node` pods of 500m / 1Gi, each owned by a ReplicaSet (5,000
workloads, spread over the nodes). Node usage (a NodeUsage per node, fresh, with 9 earlier
collections of history so the `consecutiveCollections` hysteresis passes): 10% of the nodes hot
(cpu 90%, memory 60%), 20% cold (cpu 10%, memory 15%), the rest at cpu 50%, memory 45%. The
policy: lowNodeUtilization with thresholds cpu/memory 30, pods 50 and targets cpu/memory 70,
pods 80, and shuffle's default caps (2 per node, 10 per run).

Reported, as the median over `--runs` (each run on a new pipeline, so the plugin's interval and
cooldown memory start empty; the three kinds of run interleaved, so that noise from other
processes on the machine hits them alike) plus the fastest run's seconds: the run's seconds and
its split (openSession, shuffle, closeSession), the victims the plugin proposed (`proposed`,
before shuffle's rails) and those evicted; `baseline` is the same run with the rescheduling
plugin left out of the policy (shuffle then has no proposer), so `run - baseline` is what the
plugin costs; `idle` is a run in which the plugin's interval has not passed (an ordinary
cycle's cost of having it configured).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import resource
import statistics
import time
from collections.abc import Callable

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.framework.registry import Pipeline
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import NodeUsage
from vscheduler.testing import builders

PERIOD = "10m"
POLICY = """\
actions: "shuffle"
configurations:
- name: shuffle
  arguments:
    maxEvictionsPerNode: {per_node}
    maxEvictionsPerRun: {per_run}
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
{rescheduling}"""
RESCHEDULING = """\
  - name: rescheduling
    arguments:
      interval: 5m
      metricsPeriod: 10m
      consecutiveCollections: 3
      strategies:
      - name: lowNodeUtilization
        params:
          thresholds: {cpu: 30, memory: 30, pods: 50}
          targetThresholds: {cpu: 70, memory: 70, pods: 80}
"""


def usage_of(i: int, nodes: int) -> tuple[float, float]:
    """(cpu, memory) percent of node `i`: the first 10% hot, the next 20% cold, the rest warm."""
    if i < nodes // 10:
        return 90.0, 60.0
    if i < nodes // 10 + nodes // 5:
        return 10.0, 15.0
    return 50.0, 45.0


def cluster(nodes: int, pods_per_node: int) -> ClusterSnapshot:
    """The benchmark cluster (see the module docstring)."""
    now = builders.at(3600)
    items: list[builders.Item] = []
    workloads = 5000
    for i in range(nodes):
        name = f"node-{i:05d}"
        items.append(builders.node(name).resources(cpu="32", memory="128Gi", pods=110))
        cpu, memory = usage_of(i, nodes)
        usage = {"cpu": {PERIOD: cpu}, "memory": {PERIOD: memory}}
        items.append(NodeUsage(node=name, usage=usage, metrics_time=now, history=(usage,) * 9))
        for j in range(pods_per_node):
            k = i * pods_per_node + j
            facts = (
                builders.pod(f"app-{k % workloads:04d}-{k:06d}", "bench")
                .requests(cpu="500m", memory="1Gi")
                .on(name)
                .build()
            )
            items.append(dataclasses.replace(facts, owner=f"ReplicaSet/app-{k % workloads:04d}"))
    return builders.snapshot(*items, taken_at=now)


def policy(*, rescheduling: bool, per_node: int, per_run: int) -> str:
    """The policy text, with or without the rescheduling plugin."""
    return POLICY.format(
        per_node=per_node, per_run=per_run, rescheduling=RESCHEDULING if rescheduling else ""
    )


def one_run(
    snap: ClusterSnapshot, make: Callable[[], Pipeline], *, warm: bool = False
) -> dict[str, float]:
    """One cycle on a new pipeline (after a first cycle when `warm`: the interval not passed)."""
    pipeline = make()
    clock = FixedClock(snap.taken_at)
    gc.collect()
    if warm:
        cycle.run_cycle(snap, pipeline, clock=clock, uid="warm-up")
        clock.advance(1.0)
    report = cycle.run_cycle(snap, pipeline, clock=clock)
    if report.plugin_errors:
        raise RuntimeError(f"plugin errors: {report.plugin_errors}")
    return {
        "seconds": report.seconds,
        **{f"{k}Seconds": v for k, v in report.action_seconds.items()},
        "evicted": float(len(report.result.evictions)),
    }


def proposed_count(snap: ClusterSnapshot, pipeline: Pipeline) -> int:
    """How many victims the plugin proposes (before shuffle's rails), from a session's notes."""
    session = cycle.open_session(snap, pipeline, clock=FixedClock(snap.taken_at))
    for action in pipeline.actions:
        action.execute(session)
    proposed = len(session.findings.victim_notes)
    session.close()
    return proposed


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    """The median of each key over the runs (rounded), and the fastest run's seconds."""
    out = {k: round(statistics.median(r[k] for r in runs), 4) for k in runs[0]}
    out["minSeconds"] = round(min(r["seconds"] for r in runs), 4)
    return out


def measure(args: argparse.Namespace) -> dict[str, object]:
    """Build, run, report."""
    t0 = time.perf_counter()
    snap = cluster(args.nodes, args.pods_per_node)
    build_s = time.perf_counter() - t0
    caps = {"per_node": args.max_per_node, "per_run": args.max_per_run}

    def with_plugin() -> Pipeline:
        return catalog.load_pipeline(policy(rescheduling=True, **caps))

    def without_plugin() -> Pipeline:
        return catalog.load_pipeline(policy(rescheduling=False, **caps))

    runs: list[dict[str, float]] = []
    baseline: list[dict[str, float]] = []
    idle: list[dict[str, float]] = []
    for _ in range(args.runs):  # interleaved, so noise from other processes hits all three
        runs.append(one_run(snap, with_plugin))
        baseline.append(one_run(snap, without_plugin))
        idle.append(one_run(snap, with_plugin, warm=True))
    return {
        "benchmark": "rescheduling",
        "nodes": len(snap.nodes),
        "runningPods": len(snap.tasks),
        "hotNodes": args.nodes // 10,
        "coldNodes": args.nodes // 5,
        "caps": {"maxEvictionsPerNode": args.max_per_node, "maxEvictionsPerRun": args.max_per_run},
        "buildSnapshotSeconds": round(build_s, 3),
        "runs": args.runs,
        "run": median_of(runs),
        "proposed": proposed_count(snap, with_plugin()),
        "baseline": median_of(baseline),
        "idle": median_of(idle),
        "peakRssMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    """CLI."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods-per-node", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-per-node", type=int, default=2)
    parser.add_argument("--max-per-run", type=int, default=10)
    args = parser.parse_args()
    print(json.dumps(measure(args), indent=2))


if __name__ == "__main__":
    main()
