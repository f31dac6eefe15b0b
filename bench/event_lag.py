"""How far our `Scheduled` Events trail our binds in a W1 stream, from the API server's own
request counts; print JSON.

    python -m bench.event_lag                          # 500 nodes, 3,000 pods, this tree
    python -m bench.event_lag --trees /tmp/old,.       # two source trees, one after the other

A local control plane with KWOK nodes (as `bench.compare` makes them); `vscheduler run` (started
as `bench.compare` starts it, from each tree in turn, on a fresh control plane each) while the
benchmark streams W1's pods from `--threads` threads. Every second the API server's
`apiserver_request_total` counts of `POST pods/binding` and `POST events` are read: the lag is
the binds made less the Events posted since the start (every client's Events: kwok's and the
controller-manager's are counted too, so a lag a little below zero is no lag). A line per tree:
the Events posted by the first reading with every pod bound and in all, the largest lag and
the mean, the seconds from the last bind until the Events stopped growing, the API server's
mean latency of each (`apiserver_request_duration_seconds`), and every reading (seconds, binds,
Events).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench import compare
from bench.apiclient import Api
from bench.cluster import NAMESPACE, add_nodes, install_crds
from bench.observe import BindWatch, CpuMeter, wait_until
from integration.controlplane import REPO_ROOT, ControlPlaneError, LocalControlPlane

BINDS, EVENTS = "POST pods/binding", "POST events"


def run_tree(tree: Path, nodes: int, pods: int, threads: int, tail: float) -> dict[str, Any]:
    """One stream under the scheduler of `tree` on a fresh control plane."""
    cp = LocalControlPlane(build=False)
    cp.start()
    sched = None
    try:
        install_crds(cp)
        cp.create_namespace(NAMESPACE)
        api = Api(cp)
        add_nodes(cp, api, nodes, threads, untaint=True)
        meter = CpuMeter(cp, api)
        workdir = Path(tempfile.mkdtemp(prefix="vscheduler-event-lag-"))
        sched = compare.start_vscheduler(cp, workdir, [], root=tree)
        if not wait_until("/readyz", sched.ready, 120):
            raise ControlPlaneError(f"{tree}: not ready")
        watch = BindWatch(api).start()
        meter.mark("start")
        first = meter.counters()
        samples: list[tuple[float, int, int]] = []
        done = threading.Event()

        def poll() -> None:
            t0 = time.monotonic()
            while not done.wait(1.0):
                now = meter.counters()
                binds = now.get(BINDS, (0.0, 0.0))[0] - first.get(BINDS, (0.0, 0.0))[0]
                events = now.get(EVENTS, (0.0, 0.0))[0] - first.get(EVENTS, (0.0, 0.0))[0]
                samples.append((round(time.monotonic() - t0, 1), int(binds), int(events)))

        poller = threading.Thread(target=poll, name="event-lag-poll", daemon=True)
        poller.start()
        w = compare.Workload("w1", nodes, pods, 0, streaming=True)
        compare.create_batches(api, compare.batches(w, "vscheduler"), threads)
        wait_until("all bound", lambda: len(watch.bound) >= pods, 300, 0.05)
        time.sleep(tail)
        done.set()
        poller.join()
        watch.stop()
        meter.mark("end")
        return _summary(tree, samples, meter.requests()["end"])
    finally:
        if sched is not None:
            sched.stop()
        cp.stop()


def _summary(
    tree: Path,
    samples: list[tuple[float, int, int]],
    requests: dict[str, dict[str, float]],
) -> dict[str, Any]:
    lags = [binds - events for _, binds, events in samples if binds]
    total_binds = max((b for _, b, _ in samples), default=0)
    bound_at = next((t for t, b, _ in samples if b >= total_binds), None)
    final_events = max((e for _, _, e in samples), default=0)
    at_bound = next((e for _, b, e in samples if b >= total_binds), 0)
    events_done = next((t for t, _, e in samples if e >= final_events), None)
    latency = {key: requests.get(key, {}).get("meanMs") for key in (BINDS, EVENTS)}
    return {
        "benchmark": "event_lag",
        "tree": str(tree),
        "binds": total_binds,
        "events": final_events,
        "eventsAtLastBind": at_bound,
        "largestLag": max(lags, default=0),
        "meanLag": round(statistics.mean(lags), 1) if lags else 0,
        "eventsDoneAfterLastBindSeconds": (
            round(events_done - bound_at, 1)
            if events_done is not None and bound_at is not None
            else None
        ),
        "apiServerMeanMs": latency,
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--threads", type=int, default=8, help="client threads making objects")
    parser.add_argument("--tail", type=float, default=15.0, help="seconds read after the last bind")
    parser.add_argument(
        "--trees", default=str(REPO_ROOT), help="comma-separated source trees (default: this one)"
    )
    args = parser.parse_args()
    for tree in (Path(t).resolve() for t in args.trees.split(",")):
        result = run_tree(tree, args.nodes, args.pods, args.threads, args.tail)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
