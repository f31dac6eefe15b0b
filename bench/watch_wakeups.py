"""Our watch's CPU per event against a real API server, read as the events come or as a burst;
print JSON.

    python -m bench.watch_wakeups                    # 3,000 pods per run
    python -m bench.watch_wakeups --pods 5000

A local control plane (integration/controlplane.py). Each run creates `--pods` pods of no
scheduler from another process (`--creators` threads) while one thread of this process watches
pods through the lister `vscheduler run` uses (`KubeLister.watch`: read, split, decoded) and
counts the events; the watching thread's CPU (user and system, `RUSAGE_THREAD`) per event is
reported. Runs:

- `trickle-gather-0`: the events read as they come, no pause (`gather=0`).
- `trickle`: the same with the lister's pause after a read that waited (`--gather`, by
  default `WATCH_GATHER`).
- `burst`: the pods created first, then watched from the resourceVersion before them: the API
  server sends every event at once, so the reads never wait. What an event costs when no wakeup
  is paid for it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time

from integration.controlplane import LocalControlPlane
from vscheduler.clock import SystemClock
from vscheduler.informer.kinds import POD
from vscheduler.kube.client import ClientSettings, connect
from vscheduler.kube.lister import WATCH_GATHER, KubeLister

_CREATOR = """
import json, ssl, sys, urllib.request
from concurrent.futures import ThreadPoolExecutor
server, token, ca, prefix, count, threads = sys.argv[1:7]
context = ssl.create_default_context(cafile=ca)
def create(i):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{prefix}{i}"},
           "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "x"}]}}
    request = urllib.request.Request(
        server + "/api/v1/namespaces/default/pods", data=json.dumps(pod).encode(),
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    urllib.request.urlopen(request, context=context).read()
with ThreadPoolExecutor(int(threads)) as pool:
    list(pool.map(create, range(int(count))))
"""


def _thread_cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_THREAD)
    return usage.ru_utime, usage.ru_stime


def _create(cp: LocalControlPlane, prefix: str, count: int, creators: int) -> float:
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-c",
            _CREATOR,
            cp.server_url,
            cp.admin_token,
            str(cp.ca_path),
            prefix,
            str(count),
            str(creators),
        ],
        check=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    return time.monotonic() - started


def _watch(lister: KubeLister, version: str, count: int, out: dict[str, float]) -> None:
    stop = threading.Event()
    user, system = _thread_cpu()
    seen = 0
    for _event in lister.watch(POD, version, timeout_seconds=600, stop=stop):
        seen += 1
        if seen == count:
            break
    after = _thread_cpu()
    out.update(events=seen, user=after[0] - user, system=after[1] - system)


def run(
    cp: LocalControlPlane, index: int, name: str, pods: int, creators: int, gather: float
) -> dict[str, object]:
    """One run (see the module's docstring); its figures."""
    settings = ClientSettings(kubeconfig=str(cp.kubeconfig_path), qps=5000, burst=5000)
    gather = 0.0 if name == "trickle-gather-0" else gather
    lister = KubeLister(connect(settings, clock=SystemClock()), gather=gather)
    version = lister.list(POD).resource_version
    out: dict[str, float] = {}
    created = 0.0
    if name == "burst":
        created = _create(cp, f"run{index}-", pods, creators)
    watcher = threading.Thread(target=_watch, args=(lister, version, pods, out))
    watcher.start()
    if name != "burst":
        time.sleep(0.5)
        created = _create(cp, f"run{index}-", pods, creators)
    watcher.join(120)
    events = int(out.get("events", 0))
    per = 1e6 / max(events, 1)
    return {
        "run": name,
        "gatherSeconds": gather,
        "events": events,
        "createdPerSecond": round(pods / created, 1) if created else None,
        "userMicrosecondsPerEvent": round(out.get("user", 0.0) * per, 1),
        "systemMicrosecondsPerEvent": round(out.get("system", 0.0) * per, 1),
    }


def main() -> None:
    """CLI."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--creators", type=int, default=8)
    parser.add_argument("--gather", type=float, default=WATCH_GATHER)
    args = parser.parse_args()
    with LocalControlPlane() as cp:
        runs = ("trickle-gather-0", "trickle", "burst", "trickle-gather-0", "trickle")
        for index, name in enumerate(runs):
            figures = run(cp, index, name, args.pods, args.creators, args.gather)
            print(json.dumps({"benchmark": "watch_wakeups", **figures}), flush=True)


if __name__ == "__main__":
    main()
