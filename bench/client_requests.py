"""Our API client's CPU per write, against a real API server; print JSON.

    python -m bench.client_requests                  # 1,000 binds, then 1,000 Events
    python -m bench.client_requests --requests 3000 --batch 32

A local control plane (integration/controlplane.py) holds twice `--requests` pods of no
scheduler; one thread then binds the first half one by one (`KubeWriter.bind`, POST
pods/binding) and posts one Event about each (`KubeWriter.record_event`), one request after
another through the client `vscheduler run` uses (`kube.client.connect`: keep-alive HTTPS, the
token bucket, the fence), then binds the second half and posts one Event about each again,
`--batch` at a time written together on one connection (`KubeWriter.bind_many`,
`KubeWriter.record_events`, HTTP/1.1 pipelining). Reported per request:
the calling thread's CPU (user + system, `RUSAGE_THREAD`: our side of a write, TLS included)
and the wall time (the API server's side is most of it). Every scheduled pod costs one bind and
one Event, so their CPU is a floor under our CPU per pod that the cycles do not touch.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from collections.abc import Callable
from typing import Literal

from integration.controlplane import LocalControlPlane
from vscheduler.clock import SystemClock
from vscheduler.effects.ports import ObjectRef
from vscheduler.kube.client import ClientSettings, connect
from vscheduler.kube.writers import KubeWriter

NAMESPACE = "default"


def _thread_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_THREAD)
    return usage.ru_utime + usage.ru_stime


def _timed(count: int, write: Callable[[int], None]) -> dict[str, float]:
    cpu, wall = _thread_cpu(), time.monotonic()
    for i in range(count):
        write(i)
    return {
        "cpuMicrosecondsPerRequest": round((_thread_cpu() - cpu) / count * 1e6, 1),
        "wallMillisecondsPerRequest": round((time.monotonic() - wall) / count * 1e3, 3),
    }


def measure(count: int, size: int) -> dict[str, object]:
    """Bind `count` pods and post an Event about each one by one, then bind `count` more and
    post an Event about each again, `size` at a time on one connection
    (`KubeWriter.bind_many`, `KubeWriter.record_events`); CPU and wall per request."""
    with LocalControlPlane() as cp:
        uids: list[str] = []
        for i in range(2 * count):
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}"},
                "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "x"}]},
            }
            made = cp.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", pod)
            uids.append(made["metadata"]["uid"])
        settings = ClientSettings(kubeconfig=str(cp.kubeconfig_path), qps=5000, burst=5000)
        clock = SystemClock()
        writer = KubeWriter(connect(settings, clock=clock), clock=clock)
        binds = _timed(count, lambda i: writer.bind(NAMESPACE, f"p{i}", uids[i], "node-x"))
        events = _timed(
            count,
            lambda i: writer.record_event(
                ObjectRef("Pod", "v1", NAMESPACE, f"p{i}", uids[i]),
                "Normal",
                "Scheduled",
                f"Successfully assigned {NAMESPACE}/p{i} to node-x",
            ),
        )

        def ref(i: int) -> ObjectRef:
            return ObjectRef("Pod", "v1", NAMESPACE, f"p{i}", uids[i])

        def batch(i: int) -> None:
            events: list[tuple[ObjectRef, Literal["Normal", "Warning"], str, str]] = [
                (ref(j), "Normal", "Scheduled", f"Successfully assigned {NAMESPACE}/p{j} to x")
                for j in range(i * size, min(count, (i + 1) * size))
            ]
            failed = [e for e in writer.record_events(events) if e is not None]
            if failed:
                raise RuntimeError(f"{len(failed)} pipelined Events failed: {failed[0]}")

        def bind_batch(i: int) -> None:
            binds = [
                (NAMESPACE, f"p{j}", uids[j], "node-x")
                for j in range(count + i * size, count + min(count, (i + 1) * size))
            ]
            failed = [e for e in writer.bind_many(binds) if e is not None]
            if failed:
                raise RuntimeError(f"{len(failed)} pipelined binds failed: {failed[0]}")

        batches = (count + size - 1) // size
        binds_pipelined = _per_request(_timed(batches, bind_batch), batches, count)
        pipelined = _per_request(_timed(batches, batch), batches, count)
    return {
        "benchmark": "client_requests",
        "requests": count,
        "bind": binds,
        "event": events,
        "bindPipelined": {"batch": size, **binds_pipelined},
        "eventPipelined": {"batch": size, **pipelined},
    }


def _per_request(per_batch: dict[str, float], batches: int, count: int) -> dict[str, float]:
    """`_timed`'s figures per batch, as per request."""
    return {
        "cpuMicrosecondsPerRequest": round(
            per_batch["cpuMicrosecondsPerRequest"] * batches / count, 1
        ),
        "wallMillisecondsPerRequest": round(
            per_batch["wallMillisecondsPerRequest"] * batches / count, 3
        ),
    }


def main() -> None:
    """CLI."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=16, help="binds and Events pipelined at once")
    args = parser.parse_args()
    print(json.dumps(measure(args.requests, max(1, args.batch)), indent=2))


if __name__ == "__main__":
    main()
