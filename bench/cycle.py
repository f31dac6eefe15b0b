"""One scheduling cycle at scale: load a snapshot from JSON, run the policy, print JSON.

    python -m bench.cycle --nodes 5000 --pods 10000 --gang 10
    python -m bench.cycle --matrix            # 1k/5k nodes x 10k/50k pods, one process each
    python -m bench.cycle --anti-affinity 0.1 # every 10th gang's pods repel each other per host

The snapshot is generated (nodes 4 CPU / 32Gi / 110 pods; pending pods 100m / 500Mi in gangs
with a PodGroup each, minMember = gang size), written as one JSON `List`, then loaded and
scheduled in a fresh process so peak memory (ru_maxrss) is the scheduler's own; the cyclic
garbage collector is set as `vscheduler run` sets it (the loaded objects frozen, its thresholds).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

from vscheduler import catalog, cycle
from vscheduler.app import GC_THRESHOLDS
from vscheduler.clock import FixedClock
from vscheduler.convert.files import load_objects
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.model.facts import EPOCH

HOSTNAME = "kubernetes.io/hostname"


def objects(
    nodes: int, pods: int, gang: int, anti_affinity: float = 0.0, queues: int = 1
) -> Iterator[dict[str, object]]:
    """The benchmark cluster as Kubernetes objects. A fraction `anti_affinity` of the gangs
    (evenly spread) have pods with required anti-affinity to their gang's pods per host. With
    `queues` > 1 the gangs go round-robin to queues `q0`.. of weights 1, 2, ..."""
    every = round(1 / anti_affinity) if anti_affinity else 0
    for q in range(queues if queues > 1 else 0):
        yield {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": f"q{q}"},
            "spec": {"weight": q + 1, "reclaimable": True},
        }
    for i in range(nodes):
        labels = {"zone": f"z{i % 3}", "kubernetes.io/hostname": f"node-{i:05d}"}
        yield {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"node-{i:05d}", "labels": labels},
            "status": {
                "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
    for g in range(pods // gang):
        name = f"job-{g:05d}"
        yield {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "bench", "uid": f"pg-{g}"},
            "spec": {"minMember": gang, "queue": f"q{g % queues}" if queues > 1 else "default"},
            "status": {"phase": "Inqueue"},
        }
        spec: dict[str, object] = {}
        if every and g % every == 0:
            term = {"labelSelector": {"matchLabels": {"job": name}}, "topologyKey": HOSTNAME}
            spec["affinity"] = {
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
            }
        for t in range(gang):
            yield {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{name}-worker-{t}",
                    "namespace": "bench",
                    "uid": f"pod-{g}-{t}",
                    "labels": {"job": name},
                    "annotations": {"scheduling.k8s.io/group-name": name},
                },
                "spec": {
                    **spec,
                    "schedulerName": "vscheduler",
                    "containers": [
                        {
                            "name": "main",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
                        }
                    ],
                },
                "status": {"phase": "Pending"},
            }


def write_snapshot(
    path: str, nodes: int, pods: int, gang: int, anti: float = 0.0, queues: int = 1
) -> None:
    """Writes the cluster as one JSON List."""
    items = list(objects(nodes, pods, gang, anti, queues))
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, handle)


def measure(path: str, policy: str | None) -> dict[str, object]:
    """Load `path`, run one cycle, report."""
    text = None
    if policy:
        with open(policy, encoding="utf-8") as handle:
            text = handle.read()
    pipeline = catalog.load_pipeline(text)
    t0 = time.perf_counter()
    snap = build_snapshot(load_objects([path]))
    load = time.perf_counter() - t0
    gc.freeze()  # as `vscheduler run` does once its first lists are in (app.py)
    gc.set_threshold(*GC_THRESHOLDS)
    report = cycle.run_cycle(snap, pipeline, clock=FixedClock(EPOCH))
    placed = len(report.result.binds)
    return {
        "nodes": len(snap.nodes),
        "pods": len(snap.tasks),
        "loadSeconds": round(load, 3),
        "cycleSeconds": round(report.seconds, 3),
        "bound": placed,
        "unschedulable": len(report.result.unschedulable),
        "decisionsPerSecond": round(placed / report.seconds) if report.seconds else None,
        "actionSeconds": {k: round(v, 3) for k, v in report.action_seconds.items()},
        "peakRssMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def run_one(
    nodes: int, pods: int, gang: int, policy: str | None, anti: float = 0.0, queues: int = 1
) -> dict[str, object]:
    """Generate, then measure in a fresh interpreter."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "snapshot.json")
        write_snapshot(path, nodes, pods, gang, anti, queues)
        cmd = [sys.executable, "-m", "bench.cycle", "--measure", path]
        if policy:
            cmd += ["--policy", policy]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        result: dict[str, object] = json.loads(out)
        result["queues"] = queues
        return result


def main() -> None:
    """CLI."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--gang", type=int, default=10)
    parser.add_argument("--policy", default=None, help="policy file (default: built-in)")
    parser.add_argument("--matrix", action="store_true", help="1k/5k nodes x 10k/50k pods")
    parser.add_argument(
        "--anti-affinity",
        type=float,
        default=0.0,
        metavar="FRACTION",
        help="fraction of gangs whose pods repel each other per host (required anti-affinity)",
    )
    parser.add_argument("--queues", type=int, default=1, help="queues q0.. of weights 1, 2, ...")
    parser.add_argument("--measure", metavar="SNAPSHOT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.policy)))
        return
    if args.matrix:
        runs = [
            run_one(n, p, args.gang, args.policy, queues=args.queues)
            for n in (1000, 5000)
            for p in (10000, 50000)
        ]
        print(json.dumps({"benchmark": "cycle", "runs": runs}, indent=2))
        return
    result = run_one(args.nodes, args.pods, args.gang, args.policy, args.anti_affinity, args.queues)
    print(json.dumps({"benchmark": "cycle", **result}, indent=2))


if __name__ == "__main__":
    main()
