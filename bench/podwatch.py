"""The pod watch's cost per event, in process: protobuf frames as the API server sends them,
read by `vscheduler run`'s own informer, lister and cache; print JSON.

    python -m bench.podwatch                         # 300 gangs of 10, as W3 makes them
    python -m bench.podwatch --pods 3000 --gang 1    # lone pods, as W1
    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python -m bench.podwatch --pods 1000   # and 3000: instructions by difference

What W3 brings each of the scheduler's pods (`bench.compare`: the pod informer's thread held a
third of the scheduler's CPU there): its creation (ADDED, pending), the API server's echo of its
bind (MODIFIED: the node and PodScheduled=True), kwok's report of it running (MODIFIED: phase,
conditions, start time, IPs). A gang's ten pods come, the ten are bound (each assumed in the
cache first, as the loop does when it decides them), then the ten run. The cache holds
`--nodes` nodes, `--running` running pods and the gangs' PodGroups before the stream starts.

The frames are written by `kube.podencode` from a pod as the API server returns a W3 pod
(defaulted spec, projected token volume named anew per pod, default tolerations; kwok's running
status), with opaque bytes of a real W3 pod's sizes where `kube.podschema` skips fields (the
creator's and kwok's managedFields, kwok's addresses and container status): a real running pod
is 1,979 bytes in protobuf, its frame here 1,873 (a pending one 955; `frameBytes` sums the three
events of each pod). They are streamed to the real
`KubeLister.watch` through a stand-in HTTP response (one chunk a frame, as the API server sends
them), and the informer delivers each event to the cache and the metrics, as in `vscheduler run`.
Printed: CPU microseconds per event and per pod (`time.process_time`, the whole process, after
the cache was filled); under callgrind, the difference of two runs' instruction counts divided
by the difference of their events is the cost of one event without the start.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import hashlib
import json
import random
import threading
import time
from collections.abc import Iterator
from typing import Any, Final

from prometheus_client import CollectorRegistry

from bench import list_decode
from bench.stream import node
from vscheduler.app import GC_THRESHOLDS
from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.informer.informer import Informer
from vscheduler.informer.kinds import NODE, POD, PODGROUP, PRIORITY_CLASS, QUEUE, Kind
from vscheduler.informer.ports import Listing, WatchEvent
from vscheduler.kube import podencode, protobuf, protowatch
from vscheduler.kube.lister import KubeLister
from vscheduler.obs.metrics import SchedulerMetrics

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
NAMESPACE = "bench"


def stamp(seconds: float) -> str:
    """RFC 3339 of `seconds` after START."""
    return (START + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def uid(i: int) -> str:
    """Pod i's uid, random-looking as the API server's, the same every run."""
    h = hashlib.blake2b(str(i).encode(), digest_size=16).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def podgroup(g: int, gang: int) -> dict[str, Any]:
    """Gang g's PodGroup, Pending."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": f"job-{g:05d}", "namespace": NAMESPACE, "uid": f"g-{g}"},
        "spec": {"minMember": gang, "queue": "default"},
        "status": {"phase": "Pending"},
    }


PROJECTED: Final = {
    "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {
            "downwardAPI": {
                "items": [
                    {
                        "path": "namespace",
                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                    }
                ]
            }
        },
    ],
    "defaultMode": 420,
}
"""The service account token's volume, as the API server's admission adds it."""


def pod(i: int, gang: int, version: int) -> dict[str, Any]:
    """Pod i of gang `i // gang` as the API server returns it once created (pending): the pod
    of `bench.list_decode` with its token volume, named anew for each pod, and its mount."""
    made = list_decode.pod(i)
    meta = made["metadata"]
    meta.update(
        name=f"job-{i // gang:05d}-{i % gang}",
        uid=uid(i),
        resourceVersion=str(version),
        generation=1,
        creationTimestamp=stamp(i / 80),
    )
    if gang > 1:
        meta["annotations"] = {"scheduling.k8s.io/group-name": f"job-{i // gang:05d}"}
    token = f"kube-api-access-{hashlib.blake2b(str(i).encode(), digest_size=3).hexdigest()[:5]}"
    spec = made["spec"]
    spec["volumes"] = [{"name": token, "projected": PROJECTED}]
    spec["containers"][0]["volumeMounts"] = [
        {
            "name": token,
            "readOnly": True,
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
        }
    ]
    return made


def bound(obj: dict[str, Any], node_name: str, at: float, version: int) -> dict[str, Any]:
    """`obj` as the API server's echo of its Binding shows it."""
    condition = {"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp(at)}
    return {
        "metadata": {**obj["metadata"], "resourceVersion": str(version)},
        "spec": {**obj["spec"], "nodeName": node_name},
        "status": {**obj["status"], "conditions": [condition]},
    }


def running(obj: dict[str, Any], at: float, version: int) -> dict[str, Any]:
    """`obj` (bound) as kwok reports it running."""
    when = stamp(at)
    conditions = [
        {"type": kind, "status": "True", "lastTransitionTime": when}
        for kind in ("Initialized", "Ready", "ContainersReady")
    ]
    return {
        "metadata": {**obj["metadata"], "resourceVersion": str(version)},
        "spec": obj["spec"],
        "status": {
            **obj["status"],
            "phase": "Running",
            "conditions": [*conditions, *obj["status"]["conditions"]],
            "startTime": when,
        },
    }


def managed(manager: str, fields: int, subresource: str = "") -> bytes:
    """One managedFields entry (ObjectMeta field 17) with `fields` bytes of fieldsV1, as the
    API server writes them (no fact reads them: the reader skips them)."""
    t = podencode.tagged
    entry = (
        t(1, manager.encode())
        + t(2, b"Update")
        + t(3, b"v1")
        + t(4, b"\x08\x80\xa5\xd5\xd9\x06")
        + t(6, b"FieldsV1")
        + t(7, t(1, b"{" + b"x" * (fields - 2) + b"}"))
    )
    return t(17, entry + (t(8, subresource.encode()) if subresource else b""))


CREATED: Final = managed("unknown", 387)
"""The creating client's entry, as on a W3 pod."""
KWOK: Final = managed("kwok", 533, "status")
"""kwok's entry once it reports the pod running."""
RUNNING_EXTRA: Final = b"".join(
    podencode.tagged(number, payload)
    for number, payload in (
        (5, b"127.0.0.1"),  # hostIP
        (6, b"10.244.0.19"),  # podIP
        (8, b"\x0a\x04main" + b"\x00" * 110),  # containerStatuses, read past whole
        (12, podencode.tagged(1, b"10.244.0.19")),  # podIPs
        (16, podencode.tagged(1, b"127.0.0.1")),  # hostIPs
    )
)
"""What kwok's running status has that the reader skips (addresses, the container's status)."""


def pod_frame(type_: str, obj: dict[str, Any], *, running: bool = False) -> bytes:
    """A watch frame of `obj`, with the bytes the schema's writer leaves out that a real pod
    carries (managedFields; when running, kwok's entry and the skipped status fields)."""
    t = podencode.tagged
    meta = podencode.encode(obj["metadata"], "meta.v1.ObjectMeta") + CREATED
    status = podencode.encode(obj["status"], "core.v1.PodStatus")
    if running:
        meta, status = meta + KWOK, status + RUNNING_EXTRA
    body = t(1, meta) + t(2, podencode.encode(obj["spec"], "core.v1.PodSpec")) + t(3, status)
    envelope = protobuf.MAGIC + t(1, t(1, b"v1") + t(2, b"Pod")) + t(2, body)
    return podencode.frame(type_, envelope)


def stream(pods: int, gang: int, nodes: int) -> Iterator[tuple[str, str, str, bytes]]:
    """(pod uid, node, event type, frame) in W3's order: a gang's pods created, bound, run."""
    version = 1_000_000
    for first in range(0, pods, gang):
        members = range(first, min(first + gang, pods))
        made = {}
        for i in members:
            version += 1
            made[i] = pod(i, gang, version)
            yield uid(i), "", "ADDED", pod_frame("ADDED", made[i])
        for i in members:
            version += 1
            at = i / 80 + 0.1
            made[i] = bound(made[i], f"node-{i % nodes:04d}", at, version)
            frame = pod_frame("MODIFIED", made[i])
            yield uid(i), made[i]["spec"]["nodeName"], "bound", frame
        for i in members:
            version += 1
            made[i] = running(made[i], i / 80 + 0.5, version)
            yield uid(i), "", "MODIFIED", pod_frame("MODIFIED", made[i], running=True)


class Response:
    """What `KubeLister.watch` reads of a chunked watch response: the frames, one a chunk; the
    cache assumes each bind just before its echo comes, as the loop would have."""

    chunked = True

    def __init__(self, frames: list[tuple[str, str, str, bytes]], cache: SchedulerCache) -> None:
        self._frames, self._cache = frames, cache
        self.headers = {"Content-Type": protowatch.WATCH}

    def stream(self, _amount: object = None) -> Iterator[bytes]:
        for task_uid, node_name, what, frame in self._frames:
            if what == "bound":
                self._cache.assume_bind(task_uid, node_name)
            yield frame

    def close(self) -> None:
        """Nothing to close."""

    def shutdown(self) -> None:
        """Nothing to interrupt."""


class Api:
    """The one request the watch makes."""

    def __init__(self, response: Response) -> None:
        self._response = response

    def open(self, method: str, path: str, **_: object) -> Response:
        return self._response


class Lister:
    """The pods listed as none; their watch read by the real lister from `api`, once: the
    informer is stopped when the stream ends."""

    def __init__(self, api: Api, stop: threading.Event) -> None:
        self._lister = KubeLister(api, gather=0.0)  # type: ignore[arg-type]
        self._stop = stop

    def list(self, kind: Kind, *, resource_version: str = "") -> Listing:
        return Listing(items=[], resource_version="1")

    def watch(
        self, kind: Kind, resource_version: str, *, timeout_seconds: int, stop: threading.Event
    ) -> Iterator[WatchEvent]:
        yield from self._lister.watch(
            kind, resource_version, timeout_seconds=timeout_seconds, stop=stop
        )
        self._stop.set()


def running_pod(i: int, nodes: int) -> dict[str, Any]:
    """One of the pods already running when the stream starts (as a list gives it)."""
    done = running(bound(pod(-1 - i, 1, 10 + i), f"node-{i % nodes:04d}", 0, 0), 0, 0)
    done["metadata"]["name"] = f"running-{i:06d}"
    return {"apiVersion": "v1", "kind": "Pod", **done}


def run(pods: int, gang: int, nodes: int, already: int) -> dict[str, object]:
    """Fill the cache, stream the pods' events through the informer, report."""
    cache = SchedulerCache(clock=FixedClock(START))
    cache.replace(PRIORITY_CLASS, [])
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue"}
    cache.replace(QUEUE, [{**queue, "metadata": {"name": "default"}, "spec": {"weight": 1}}])
    cache.replace(NODE, [node(i) for i in range(nodes)])
    cache.replace(POD, [running_pod(i, nodes) for i in range(already)])
    groups = [podgroup(g, gang) for g in range((pods + gang - 1) // gang)] if gang > 1 else []
    cache.replace(PODGROUP, groups)
    frames = list(stream(pods, gang, nodes))
    stop = threading.Event()
    metrics = SchedulerMetrics(CollectorRegistry())
    informer = Informer(
        POD,
        Lister(Api(Response(frames, cache)), stop),
        cache,
        clock=FixedClock(START),
        rng=random.Random(0),
        stop=stop,
        observe=metrics.observe_informer,
    )
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    began = time.process_time()
    informer.run()
    cpu = time.process_time() - began
    snap = cache.snapshot()
    placed = sum(1 for t in snap.tasks.values() if t.node_name)
    return {
        "benchmark": "podwatch",
        "pods": pods,
        "gang": gang,
        "nodes": nodes,
        "running": already,
        "events": len(frames),
        "frameBytes": sum(len(f) for *_, f in frames),
        "placedInCache": placed,
        "cpuSeconds": round(cpu, 3),
        "cpuMicrosecondsPerEvent": round(cpu / len(frames) * 1e6, 2),
        "cpuMicrosecondsPerPod": round(cpu / pods * 1e6, 2),
    }


def main() -> None:
    """CLI."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--gang", type=int, default=10, help="pods per PodGroup (1: lone pods)")
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--running", type=int, default=0, help="pods running before the stream")
    args = parser.parse_args()
    print(json.dumps(run(args.pods, max(1, args.gang), args.nodes, args.running), indent=2))


if __name__ == "__main__":
    main()
