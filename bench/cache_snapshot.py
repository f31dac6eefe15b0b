"""The scheduler cache at scale: relist, watch events and snapshots, printed as JSON.

    python -m bench.cache_snapshot                      # 5,000 nodes, 50,000 pods
    python -m bench.cache_snapshot --nodes 1000 --pods 10000
    python -m bench.cache_snapshot --served              # pods as the API server sends them

Half the pods run on the nodes, half are pending pods of this scheduler in gangs of 10 with a
PodGroup each. Reported (seconds, medians of `--repeat` runs where repeated): the relist
(`replace`) of each kind, watch events applied per second, and a snapshot when nothing changed,
after 1,000 pod updates and 200 assumed binds, and right after a relist delivered in shuffled
order (the one snapshot that restores the task order), and a relist of pods that did not change
(same resourceVersions: not converted again). With `--served` each pod is shaped as the API server
sends it after admission: its defaults, a managed-fields entry, and the service account token's
volume (and its mount) named anew for every pod, so no two specs are equal as written.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.informer.kinds import NODE, POD, PODGROUP, PRIORITY_CLASS, QUEUE
from vscheduler.informer.ports import WatchEvent

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def node(i: int) -> dict[str, Any]:
    """A 32-CPU node."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"node-{i:05d}", "uid": f"n-{i}", "labels": {"zone": f"z{i % 3}"}},
        "status": {
            "allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
            "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(i: int, nodes: int, running: bool) -> dict[str, Any]:
    """A pod: running on a node, or pending in gang i // 10."""
    created = (START + dt.timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
    spec: dict[str, Any] = {
        "schedulerName": "vscheduler",
        "priority": 0,
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
            }
        ],
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
        ],
    }
    meta: dict[str, Any] = {
        "name": f"pod-{i:06d}",
        "namespace": "bench",
        "uid": f"u-{i}",
        "resourceVersion": str(1000 + i),
        "creationTimestamp": created,
        "labels": {"app": "bench"},
        "annotations": {"scheduling.k8s.io/group-name": f"pg-{i // 10}"},
    }
    if running:
        spec["nodeName"] = f"node-{i % nodes:05d}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Running" if running else "Pending"},
    }


_TOKEN_CHARS = "bcdfghjklmnpqrstvwxz2456789"


def served(obj: dict[str, Any], i: int) -> dict[str, Any]:
    """`obj` as the API server sends it: admission's defaults and token volume, managed fields."""
    volume = "kube-api-access-" + "".join(_TOKEN_CHARS[(i // 27**k) % 27] for k in range(5))
    spec = obj["spec"]
    spec.update(
        restartPolicy="Always",
        terminationGracePeriodSeconds=30,
        dnsPolicy="ClusterFirst",
        serviceAccountName="default",
        serviceAccount="default",
        securityContext={},
        enableServiceLinks=True,
        preemptionPolicy="PreemptLowerPriority",
        volumes=[
            {
                "name": volume,
                "projected": {
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}
                    ],
                    "defaultMode": 420,
                },
            }
        ],
    )
    for container in spec["containers"]:
        container.update(
            volumeMounts=[
                {
                    "name": volume,
                    "readOnly": True,
                    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                }
            ],
            terminationMessagePath="/dev/termination-log",
            terminationMessagePolicy="File",
            imagePullPolicy="Always",
        )
    obj["metadata"]["managedFields"] = [
        {
            "manager": "bench",
            "operation": "Update",
            "apiVersion": "v1",
            "time": obj["metadata"]["creationTimestamp"],
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:containers": {'k:{"name":"main"}': {".": {}}}}},
        }
    ]
    return obj


def podgroup(g: int) -> dict[str, Any]:
    """A gang of 10."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": f"pg-{g}", "namespace": "bench", "uid": f"pg-{g}"},
        "spec": {"minMember": 10, "queue": "default"},
        "status": {"phase": "Inqueue"},
    }


def timed(fn: Callable[[], object], repeat: int = 1) -> float:
    """Median seconds of `repeat` calls."""
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def run(nodes: int, pods: int, repeat: int, *, as_served: bool = False) -> dict[str, object]:
    """Build the cache and measure."""
    clock = FixedClock(START)
    cache = SchedulerCache(clock=clock)
    node_objs = [node(i) for i in range(nodes)]
    pod_objs = [pod(i, nodes, running=i < pods // 2) for i in range(pods)]
    if as_served:
        pod_objs = [served(obj, i) for i, obj in enumerate(pod_objs)]
    group_objs = [podgroup(g) for g in range(pods // 20, pods // 10 + 1)]
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue"}
    out: dict[str, object] = {"benchmark": "cache_snapshot", "nodes": nodes, "pods": pods}
    out["served"] = as_served
    cache.replace(PRIORITY_CLASS, [])
    cache.replace(QUEUE, [{**queue, "metadata": {"name": "default"}, "spec": {"weight": 1}}])
    out["replaceNodesSeconds"] = round(timed(lambda: cache.replace(NODE, node_objs)), 4)
    out["replacePodGroupsSeconds"] = round(timed(lambda: cache.replace(PODGROUP, group_objs)), 4)
    out["replacePodsSeconds"] = round(timed(lambda: cache.replace(POD, pod_objs)), 4)
    relist = copy.deepcopy(pod_objs)
    out["relistUnchangedPodsSeconds"] = round(timed(lambda: cache.replace(POD, relist)), 4)
    cache.snapshot()
    out["snapshotIdleSeconds"] = round(timed(cache.snapshot, repeat), 4)
    updates = [copy.deepcopy(pod_objs[i]) for i in range(pods // 2, pods // 2 + 1000)]
    for obj in updates:
        obj["metadata"]["labels"]["touched"] = "yes"
        obj["metadata"]["resourceVersion"] += "-2"
    t0 = time.perf_counter()
    for obj in updates:
        cache.apply(POD, WatchEvent("MODIFIED", obj))
    out["eventsPerSecond"] = round(len(updates) / (time.perf_counter() - t0))
    for i in range(pods // 2, pods // 2 + 200):
        cache.assume_bind(f"u-{i}", f"node-{i % nodes:05d}")
    out["snapshotAfterUpdatesSeconds"] = round(timed(cache.snapshot, repeat), 4)
    shuffled = list(pod_objs)
    random.Random(1).shuffle(shuffled)
    fresh = SchedulerCache(clock=clock)
    fresh.replace(NODE, node_objs)
    fresh.replace(POD, shuffled)
    out["snapshotAfterShuffledRelistSeconds"] = round(timed(fresh.snapshot), 4)
    snap = cache.snapshot()
    out["snapshotTasks"] = len(snap.tasks)
    out["snapshotJobs"] = len(snap.jobs)
    return out


def main() -> None:
    """CLI."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument(
        "--served", action="store_true", help="pods shaped as the API server sends them"
    )
    args = parser.parse_args()
    print(json.dumps(run(args.nodes, args.pods, args.repeat, as_served=args.served), indent=2))


if __name__ == "__main__":
    main()
