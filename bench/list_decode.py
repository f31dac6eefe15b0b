"""A pod list's body decoded as the lister decodes it, with the standard library and with
`kube.jsondecode` (orjson); print JSON.

    python -m bench.list_decode                  # 50,000 pods
    python -m bench.list_decode --pods 10000 --repeat 5

The body is made here: pods shaped as the API server sends a pending pod (managed fields, the
default tolerations, status), one JSON list without spaces, read through `ListBody` in the
lister's 256 KiB pieces. Reported: the CPU seconds (`time.process_time`, the collector paused as
`vscheduler run` pauses it during the first lists) to read every item, the median of `--repeat`
runs of each decoder, taken in turns; and a watch line's decode in µs.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from vscheduler.kube import jsondecode
from vscheduler.kube.listbody import ListBody
from vscheduler.kube.lister import LIST_READ_SIZE

_FIELDS: dict[str, Any] = {
    "f:spec": {
        "f:containers": {
            'k:{"name":"main"}': {
                ".": {},
                "f:image": {},
                "f:name": {},
                "f:resources": {".": {}, "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}}},
            }
        },
        "f:schedulerName": {},
    }
}


def pod(i: int) -> dict[str, Any]:
    """A pending pod as the API server sends it."""
    return {
        "metadata": {
            "name": f"pod-{i:05d}",
            "namespace": "bench",
            "uid": f"5f1c6c3e-1111-2222-3333-{i:012d}",
            "resourceVersion": str(1000 + i),
            "creationTimestamp": "2026-11-30T00:00:00Z",
            "managedFields": [
                {
                    "manager": "python",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-11-30T00:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": _FIELDS,
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "Always",
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "securityContext": {},
            "schedulerName": "vscheduler",
            "tolerations": [
                {
                    "key": f"node.kubernetes.io/{taint}",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
                for taint in ("not-ready", "unreachable")
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }


def body(pods: int) -> bytes:
    """One PodList, as compact as the API server writes it."""
    doc = {
        "kind": "PodList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "5"},
        "items": [pod(i) for i in range(pods)],
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def read_all(data: bytes, loads: Callable[[str], Any]) -> tuple[float, int]:
    """CPU seconds to read every item of `data` through `ListBody`, and the item count."""
    pieces = iter([data[i : i + LIST_READ_SIZE] for i in range(0, len(data), LIST_READ_SIZE)])
    reader = ListBody(lambda: next(pieces, b""), "/api/v1/pods", loads=loads)
    started = time.process_time()
    count = sum(1 for _ in reader.items())
    return time.process_time() - started, count


def per_call_us(decode: Callable[[bytes], Any], line: bytes, calls: int) -> float:
    """µs of CPU a call of `decode(line)` takes."""
    started = time.process_time()
    for _ in range(calls):
        decode(line)
    return (time.process_time() - started) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = body(args.pods)
    line = json.dumps({"type": "MODIFIED", "object": pod(0)}, separators=(",", ":")).encode()
    decoders: dict[str, Callable[[Any], Any]] = {"json": json.loads, "orjson": jsondecode.loads}
    seconds: dict[str, list[float]] = {name: [] for name in decoders}
    gc.disable()
    try:
        for _ in range(args.repeat):
            for name, decode in decoders.items():
                spent, count = read_all(data, decode)
                if count != args.pods:
                    raise SystemExit(f"read {count} items of {args.pods}")
                seconds[name].append(spent)
    finally:
        gc.enable()
    out = {
        "benchmark": "list_decode",
        "pods": args.pods,
        "bodyMB": round(len(data) / 1e6, 1),
        "listCpuSeconds": {n: round(statistics.median(s), 3) for n, s in seconds.items()},
        "listCpuSecondsEach": {n: [round(x, 3) for x in s] for n, s in seconds.items()},
        "watchLineBytes": len(line),
        "watchLineMicros": {n: round(per_call_us(d, line, 20000), 2) for n, d in decoders.items()},
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
