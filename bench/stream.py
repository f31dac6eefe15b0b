"""A steady stream's cycles, in process: what one cycle costs beside many running pods.

    python -m bench.stream                           # 500 nodes, 3,000 running pods, 6 new a cycle
    python -m bench.stream --running 10000 --new 1 --cycles 400
    python -m bench.stream --gang 10                 # the new pods come as gangs of 10

The cache is filled as `vscheduler run` fills it (nodes and pods through its watch path):
`--running` lone pods already running, then, `--cycles` times, `--new` pending pods come (ADDED),
a cycle runs on the cache's snapshot with the last cycle's carried records (as the live loop
does), each bind is assumed at once, the bound pod arrives Running before the next cycle (as
from a kubelet) and each PodGroup status the cycle wrote comes back as the watch would bring it.
W1 of `bench.compare` is such a stream (about 6 pods a cycle at its pace) over up to 3,000 pods:
every cycle's fixed cost there is paid hundreds of times. Printed (one JSON object): CPU
milliseconds per cycle (median, p90) for the whole step and each part: the snapshot, the session's
opening, the actions, the close; and decisions per CPU second.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import gc
import hashlib
import json
import statistics
import time
from typing import Any

from vscheduler import catalog, cycle
from vscheduler.app import GC_THRESHOLDS
from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects.status import podgroup_status_patch
from vscheduler.informer.kinds import NODE, POD, PODGROUP, PRIORITY_CLASS, QUEUE
from vscheduler.informer.ports import WatchEvent

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def node(i: int) -> dict[str, Any]:
    """A 32-CPU node, as in `bench.compare`."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"node-{i:04d}", "uid": f"n-{i}", "resourceVersion": "1"},
        "status": {
            "allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
            "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


PER_SECOND = 80
"""Pods created in one second (W1 and W3 create about 80 a second): their uids, random as the
API server's, order them within the second, so a new pod often comes before pods held."""


def uid(i: int) -> str:
    """Pod i's uid: random-looking, the same every run."""
    return hashlib.blake2b(str(i).encode(), digest_size=8).hexdigest()


def pod(i: int, node_name: str | None, gang: int) -> dict[str, Any]:
    """Pod i (100m / 256Mi): pending, or running on `node_name`; of PodGroup `g-<i // gang>`
    when `gang`."""
    created = START + dt.timedelta(seconds=i // PER_SECOND)
    meta: dict[str, Any] = {
        "name": f"p-{i:06d}",
        "namespace": "bench",
        "uid": uid(i),
        "resourceVersion": str(10 * i + (2 if node_name else 1)),
        "creationTimestamp": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if gang:
        meta["annotations"] = {"scheduling.k8s.io/group-name": f"g-{i // gang}"}
    spec: dict[str, Any] = {
        "schedulerName": "vscheduler",
        "containers": [
            {
                "name": "c",
                "image": "busybox",
                "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}},
            }
        ],
    }
    status: dict[str, Any] = {"phase": "Pending"}
    if node_name is not None:
        spec["nodeName"] = node_name
        status = {
            "phase": "Running",
            "conditions": [{"type": "PodScheduled", "status": "True"}],
        }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def podgroup(g: int, gang: int) -> dict[str, Any]:
    """Gang g's PodGroup."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": f"g-{g}", "namespace": "bench", "uid": f"g-{g}"},
        "spec": {"minMember": gang, "queue": "default"},
        "status": {"phase": "Pending"},
    }


def run(nodes: int, running: int, new: int, cycles: int, gang: int) -> dict[str, object]:
    """Fill the cache, run the stream, report."""
    cache = SchedulerCache(clock=FixedClock(START))
    cache.replace(PRIORITY_CLASS, [])
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue"}
    cache.replace(QUEUE, [{**queue, "metadata": {"name": "default"}, "spec": {"weight": 1}}])
    cache.replace(NODE, [node(i) for i in range(nodes)])
    cache.replace(POD, [pod(i, f"node-{i % nodes:04d}", 0) for i in range(running)])
    cache.replace(PODGROUP, [])
    pipeline = catalog.load_pipeline(None)
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    clock = FixedClock(START)
    carried = None
    parts: dict[str, list[float]] = {
        "step": [],
        "snapshot": [],
        "open": [],
        "actions": [],
        "close": [],
    }
    decided, next_pod = 0, running
    groups: dict[str, dict[str, Any]] = {}
    bound: list[tuple[int, str]] = []
    index: dict[str, int] = {}
    cpu = time.process_time
    for _ in range(cycles):
        for i, node_name in bound:  # the kubelet's Running, as the watch brings it
            cache.apply(POD, WatchEvent("MODIFIED", pod(i, node_name, gang)))
        bound = []
        for i in range(next_pod, next_pod + new):
            if gang and (i - running) % gang == 0:
                groups[f"bench/g-{i // gang}"] = group = podgroup(i // gang, gang)
                cache.apply(PODGROUP, WatchEvent("ADDED", group))
            cache.apply(POD, WatchEvent("ADDED", pod(i, None, gang)))
            index[uid(i)] = i
        next_pod += new
        t0 = cpu()
        snap = cache.snapshot()
        t1 = cpu()
        report = cycle.run_cycle(snap, pipeline, clock=clock, carried=carried)
        carried = report.carried
        for bind in report.result.binds:
            cache.assume_bind(bind.task_uid, bind.node)
            bound.append((index[bind.task_uid], bind.node))
        decided += len(report.result.binds)
        t3 = cpu()
        for key, status in report.result.podgroups.items():  # the status writes, as watched
            patch = podgroup_status_patch(status, groups[key])
            if not patch:
                continue
            groups[key] = group = copy.deepcopy(groups[key])  # a new object, as watched
            group.setdefault("status", {}).update(patch)
            version = int(group["metadata"].get("resourceVersion", "1")) + 1
            group["metadata"]["resourceVersion"] = str(version)
            cache.apply(PODGROUP, WatchEvent("MODIFIED", group))
        timings = report.action_seconds
        actions = sum(v for k, v in timings.items() if k not in ("openSession", "closeSession"))
        parts["step"].append(t3 - t0)
        parts["snapshot"].append(t1 - t0)
        parts["open"].append(timings["openSession"])
        parts["actions"].append(actions)
        parts["close"].append(timings["closeSession"])
    total = sum(parts["step"])

    def ms(values: list[float]) -> dict[str, float]:
        ordered = sorted(values)
        return {
            "median": round(statistics.median(ordered) * 1000, 3),
            "p90": round(ordered[int(len(ordered) * 0.9)] * 1000, 3),
        }

    return {
        "benchmark": "stream",
        "nodes": nodes,
        "running": running,
        "newPerCycle": new,
        "gang": gang,
        "cycles": cycles,
        "decided": decided,
        "cpuMsPerCycle": {name: ms(values) for name, values in parts.items()},
        "decisionsPerCpuSecond": round(decided / total) if total else None,
    }


def main() -> None:
    """CLI."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--running", type=int, default=3000, help="pods running at the start")
    parser.add_argument("--new", type=int, default=6, help="pending pods coming each cycle")
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--gang", type=int, default=0, help="new pods in gangs of this size")
    args = parser.parse_args()
    print(json.dumps(run(args.nodes, args.running, args.new, args.cycles, args.gang)))


if __name__ == "__main__":
    main()
