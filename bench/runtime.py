"""`vscheduler run` against a real API server with KWOK nodes: throughput and startup, as JSON.

    python -m bench.runtime --scenario throughput         # 500 nodes; 2,000 pods, gangs of 10
    python -m bench.runtime --scenario startup            # 500 nodes; 10,000 pods already there
    python -m bench.runtime --scenario all                # both, each on a fresh control plane
    python -m bench.runtime --scenario startup --profile /tmp/prof   # cProfile, every thread

Each scenario starts its own local control plane (integration/controlplane.py: etcd,
kube-apiserver, kube-controller-manager, kwok), creates KWOK nodes (32 CPU / 128Gi / 110 pods) in
parallel and waits until all are Ready and untainted, and creates PodGroups (minMember = gang
size) and pods (100m / 256Mi) from several threads over keep-alive HTTPS connections. Binds are
observed through one metadata-only watch of the namespace's pods with `spec.nodeName!=` (the
time a pod is first seen bound), cross-checked against the scheduler's
`vscheduler_pods_bound_total`, which is polled every 0.2 s.

- throughput: the scheduler (leader election off, `--schedule-period 1`) is started first and
  ready; then every PodGroup, then every pod, is created as fast as possible. Reported: creation
  time and rate, the pods already bound when the last pod was created, the time from the last
  pod's creation to all bound, pods/s over several windows, cycles run and the longest cycle.
- startup: the nodes, PodGroups and pods exist before the scheduler starts. Reported: process
  start to ready (/readyz), to the first cycle, to the first bind and to all bound (target for
  the first bind: under 10 s).

`cpuSeconds` gives, per phase, the CPU time each process used (from /proc), so the split between
object creation, the API server, etcd, kwok and the scheduler is visible; on a small machine they
all share the same cores. One JSON object is printed per scenario.

This module holds the scenarios and the command line; its parts: `bench.apiclient` (keep-alive
requests, parallel creation), `bench.cluster` (CRDs, KWOK nodes, the workload's objects),
`bench.observe` (the bind watch, the scheduler process, metrics and CPU meters) and
`bench.profiling` (the `--profiled-child` mode `--profile` runs the scheduler in).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.apiclient import Api, create_all
from bench.cluster import NAMESPACE, add_nodes, elapsed, install_crds, workload
from bench.observe import (
    BindWatch,
    CpuMeter,
    MetricsPoller,
    SchedulerProcess,
    peak_rate,
    wait_until,
)
from bench.profiling import profiled_child
from integration.controlplane import ControlPlaneError, LocalControlPlane


# --- scenarios ----------------------------------------------------------------------------------
class Run:
    """One scenario's control plane, client, nodes and (later) scheduler."""

    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args, self.workdir = args, workdir
        self.cp = LocalControlPlane(build=False)
        self.scheduler: SchedulerProcess | None = None

    def __enter__(self) -> Run:
        t = time.monotonic()
        self.cp.start()
        install_crds(self.cp)
        self.cp.create_namespace(NAMESPACE)
        self.api = Api(self.cp)
        self.cpu = CpuMeter(self.cp, self.api)
        self.setup_seconds = round(time.monotonic() - t, 2)
        self.cpu.mark("start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.scheduler is not None:
            self.scheduler.stop()
        self.cp.stop()

    def start_scheduler(self) -> SchedulerProcess:
        """Start `vscheduler run`, its pid joining the CPU meter."""
        profile = (
            Path(self.args.profile) / f"{self.args.current}.prof" if self.args.profile else None
        )
        self.scheduler = SchedulerProcess(
            self.cp, self.workdir, self.args.period, profile, self.args.scheduler_arg
        )
        self.cpu.pids["vscheduler"] = self.scheduler.proc.pid
        return self.scheduler

    def finish(self, result: dict[str, Any], watch: BindWatch, poller: MetricsPoller) -> None:
        """Common tail: stop observing, cross-check, fill in the log summary and CPU phases."""
        assert self.scheduler is not None
        metrics = poller.stop()
        watch.stop()
        api = self.api
        pods_path = f"/api/v1/namespaces/{NAMESPACE}/pods"
        result["check"] = {
            "unboundAtEnd": api.count(pods_path, "spec.nodeName="),
            "runningAtEnd": api.count(pods_path, "status.phase=Running"),
            "podsBoundTotalMetric": metrics.get("vscheduler_pods_bound_total"),
            "bindFailuresMetric": metrics.get("vscheduler_bind_failures_total"),
            "cyclesMetric": metrics.get("vscheduler_cycles_total"),
            "cyclesSkippedMetric": metrics.get("vscheduler_cycle_skipped_total"),
            "watchErrors": watch.errors[:5],
            "watchRestarts": watch.restarts,
        }
        result["schedulerFlags"] = [
            a for a in self.scheduler.argv[1:] if not a.startswith(("--kubeconfig", "--listen"))
        ]
        result["schedulerExitCode"] = self.scheduler.stop()
        result["scheduler"] = self.scheduler.log_summary()
        result["cpuSeconds"] = self.cpu.phases()
        result["apiRequests"] = self.cpu.requests()


def throughput(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """The scheduler runs first; the workload is created as fast as possible."""
    with Run(args, workdir) as run:
        result: dict[str, Any] = {"benchmark": "runtime", "scenario": "throughput"}
        result["sizes"] = {"nodes": args.nodes, "pods": args.pods, "gang": args.gang}
        result["controlPlaneSetupSeconds"] = run.setup_seconds
        result["nodes"] = add_nodes(
            run.cp, run.api, args.nodes, args.threads, untaint=not args.wait_for_controller
        )
        groups, members = workload(args.pods, args.gang)
        run.cpu.mark("nodes")
        scheduler = run.start_scheduler()
        if not wait_until("/readyz", lambda: _ready(scheduler), 120):
            raise ControlPlaneError(f"scheduler not ready:\n{scheduler.tail()}")
        result["schedulerReadySeconds"] = round(time.monotonic() - scheduler.start, 3)
        run.cpu.mark("schedulerStart")
        watch = BindWatch(run.api).start()
        poller = MetricsPoller(scheduler)
        pg = create_all(run.api, groups, args.threads)
        run.cpu.mark("createPodGroups")
        pods = create_all(run.api, members, args.threads)
        run.cpu.mark("createPods")
        last_created = pods["end"]
        bound_at_last = len(watch.bound)
        done = wait_until(
            "all pods bound", lambda: _all_bound(watch, args.pods, scheduler), args.timeout, 0.2
        )
        all_bound = max(watch.bound.values()) if watch.bound else None
        run.cpu.mark("bindAfterLastCreate")
        times = list(watch.bound.values())
        origin = pg["start"]
        window = None if all_bound is None else all_bound - last_created
        result["create"] = {
            "podGroups": _strip(pg),
            "pods": _strip(pods),
            "podsStartAfterFirstPodGroupSeconds": elapsed(pods["start"], origin),
        }
        result["bind"] = {
            "complete": done,
            "bound": len(watch.bound),
            "boundWhenLastPodCreated": bound_at_last,
            "firstBindSeconds": elapsed(min(times, default=None), pods["start"]),
            "lastPodCreatedToAllBoundSeconds": None if window is None else round(window, 3),
            "podsPerSecondLastCreateToAllBound": (
                round((len(times) - bound_at_last) / window, 1) if window else None
            ),
            "podsPerSecondFirstPodCreateToAllBound": (
                round(len(times) / (all_bound - pods["start"]), 1) if all_bound else None
            ),
            "podsPerSecondFirstBindToLastBind": _span_rate(times),
            "peakPodsPerSecond1s": peak_rate(times),
            "boundTimelineFromFirstPodCreate": _timeline(times, pods["start"]),
        }
        run.finish(result, watch, poller)
        return result


def startup(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """The workload exists first; the scheduler starts into it."""
    with Run(args, workdir) as run:
        result: dict[str, Any] = {"benchmark": "runtime", "scenario": "startup"}
        result["sizes"] = {"nodes": args.nodes, "pods": args.pods, "gang": args.gang}
        result["controlPlaneSetupSeconds"] = run.setup_seconds
        result["nodes"] = add_nodes(
            run.cp, run.api, args.nodes, args.threads, untaint=not args.wait_for_controller
        )
        run.cpu.mark("nodes")
        groups, members = workload(args.pods, args.gang)
        pg = create_all(run.api, groups, args.threads)
        pods = create_all(run.api, members, args.threads)
        result["create"] = {"podGroups": _strip(pg), "pods": _strip(pods)}
        run.cpu.mark("createWorkload")
        watch = BindWatch(run.api).start()
        scheduler = run.start_scheduler()
        start = scheduler.start
        poller = MetricsPoller(scheduler, interval=0.1)
        wait_until("/readyz", lambda: _ready(scheduler), 120, 0.05)
        ready_at = time.monotonic()
        run.cpu.mark("processStartToReady")
        wait_until("the first bind", lambda: _all_bound(watch, 1, scheduler), 120, 0.05)
        run.cpu.mark("readyToFirstBind")
        done = wait_until(
            "all pods bound", lambda: _all_bound(watch, args.pods, scheduler), args.timeout, 0.2
        )
        run.cpu.mark("firstBindToAllBound")
        times = list(watch.bound.values())
        first = min(times, default=None)
        last = max(times, default=None)
        result["startup"] = {
            "complete": done,
            "bound": len(times),
            "processStartToReadySeconds": elapsed(ready_at, start),
            "processStartToFirstBindSeconds": elapsed(first, start),
            "processStartToAllBoundSeconds": elapsed(last, start),
            "firstBindUnder10s": first is not None and first - start < 10,
            "podsPerSecondFirstBindToLastBind": _span_rate(times),
            "peakPodsPerSecond1s": peak_rate(times),
            "boundTimelineFromProcessStart": _timeline(times, start),
        }
        run.finish(result, watch, poller)
        return result


def _ready(scheduler: SchedulerProcess) -> bool:
    scheduler.alive()
    return scheduler.get("/readyz")[0] == 200


def _all_bound(watch: BindWatch, pods: int, scheduler: SchedulerProcess) -> bool:
    scheduler.alive()
    return len(watch.bound) >= pods


def _strip(created: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in created.items() if k not in ("start", "end")}


def _span_rate(times: Sequence[float]) -> float | None:
    if len(times) < 2:
        return None
    span = max(times) - min(times)
    return round(len(times) / span, 1) if span else None


def _timeline(times: Sequence[float], origin: float, step: float = 1.0) -> list[int]:
    """Pods bound by the end of each `step` seconds after `origin` (cumulative)."""
    if not times:
        return []
    ordered = sorted(t - origin for t in times)
    out, i, edge = [], 0, step
    while i < len(ordered):
        while i < len(ordered) and ordered[i] <= edge:
            i += 1
        out.append(i)
        edge += step
    return out


# --- the command line -----------------------------------------------------------------------------
SCENARIOS: dict[str, Callable[[argparse.Namespace, Path], dict[str, Any]]] = {
    "throughput": throughput,
    "startup": startup,
}
DEFAULT_PODS = {"throughput": 2000, "startup": 10000}


def main(argv: Sequence[str] | None = None) -> int:
    """CLI."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--profiled-child"]:
        return profiled_child(argv[1], argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=(*SCENARIOS, "all"), default="throughput")
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument(
        "--pods", type=int, default=None, help="default: 2,000 (throughput), 10,000 (startup)"
    )
    parser.add_argument("--gang", type=int, default=10, help="pods per PodGroup (= minMember)")
    parser.add_argument("--threads", type=int, default=8, help="client threads creating objects")
    parser.add_argument("--period", type=float, default=1.0, help="--schedule-period (1)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for all bound")
    parser.add_argument(
        "--wait-for-controller",
        action="store_true",
        help="leave the nodes' not-ready taint to the controller-manager (slow, ~5 nodes/s)",
    )
    parser.add_argument(
        "--scheduler-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="an extra `vscheduler run` argument, e.g. --scheduler-arg=--bind-workers=64",
    )
    parser.add_argument("--profile", metavar="DIR", help="run the scheduler under cProfile")
    parser.add_argument("--keep", metavar="DIR", help="keep the scheduler logs in DIR")
    args = parser.parse_args(argv)
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    pods_flag = args.pods
    for name in names:
        args.current = name
        args.pods = pods_flag or DEFAULT_PODS[name]
        with _workdir(args.keep) as workdir:
            result = SCENARIOS[name](args, workdir)
        if args.profile:
            result["profile"] = str(Path(args.profile) / f"{name}.prof")
        print(json.dumps(result, indent=2), flush=True)
    return 0


@contextlib.contextmanager
def _workdir(keep: str | None) -> Iterator[Path]:
    if keep:
        path = Path(keep)
        path.mkdir(parents=True, exist_ok=True)
        yield Path(tempfile.mkdtemp(prefix="runtime-", dir=path))
        return
    with tempfile.TemporaryDirectory(prefix="vscheduler-bench-") as tmp:
        yield Path(tmp)


if __name__ == "__main__":
    sys.exit(main())
