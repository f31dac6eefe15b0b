"""What an idle `vscheduler run` costs: CPU and wakeups a second; print JSON.

    python -m bench.idle                     # 50 KWOK nodes, 30 s measured
    python -m bench.idle --nodes 500 --seconds 60

A local control plane with `--nodes` KWOK nodes (their heartbeats are the cluster's only
changes) and no pod; `vscheduler run` is started as the other benches start it, and once it is
ready and `--settle` seconds have passed its process is read from /proc at the start and the
end of `--seconds`: CPU (user + system) in milliseconds a second, and the voluntary context
switches a second of all its threads together, with the busiest threads' (each a wakeup: a
thread that blocked and was woken). A scheduler with nothing to do should cost next to nothing.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.apiclient import Api
from bench.cluster import NAMESPACE, add_nodes, install_crds
from bench.observe import SchedulerProcess, process_cpu, wait_until
from integration.controlplane import LocalControlPlane


def _switches(pid: int) -> dict[int, int]:
    """Voluntary context switches per thread id."""
    out: dict[int, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                out[int(task.name)] = int(line.split()[1])
    return out


def _ready(scheduler: SchedulerProcess) -> bool:
    scheduler.alive()  # raises with the log's tail if it died
    return scheduler.get("/readyz")[0] == 200


def measure(nodes: int, seconds: float, settle: float, extra: list[str]) -> dict[str, object]:
    """Start the control plane and the scheduler; its idle figures."""
    with (
        tempfile.TemporaryDirectory(prefix="vscheduler-idle-") as tmp,
        LocalControlPlane(build=False) as cp,
    ):
        install_crds(cp)
        cp.create_namespace(NAMESPACE)
        api = Api(cp)
        add_nodes(cp, api, nodes, 8, untaint=True)
        scheduler = SchedulerProcess(cp, Path(tmp), 1.0, None, extra)
        try:
            if not wait_until("/readyz", lambda: _ready(scheduler), 120, every=0.2):
                raise TimeoutError("vscheduler was not ready within 120 s")
            time.sleep(settle)
            pid = scheduler.proc.pid
            cpu, before, started = process_cpu(pid), _switches(pid), time.monotonic()
            time.sleep(seconds)
            cpu_after, after, lasted = process_cpu(pid), _switches(pid), time.monotonic()
            lasted -= started
        finally:
            scheduler.stop()
    rates = {tid: (n - before.get(tid, 0)) / lasted for tid, n in after.items()}
    busiest = sorted(rates.values(), reverse=True)[:8]
    return {
        "benchmark": "idle",
        "nodes": nodes,
        "seconds": round(lasted, 1),
        "threads": len(after),
        "cpuMillisecondsPerSecond": round((cpu_after - cpu) / lasted * 1000, 2),
        "wakeupsPerSecond": round(sum(rates.values()), 1),
        "busiestThreadsWakeupsPerSecond": [round(r, 1) for r in busiest],
    }


def main() -> None:
    """CLI."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--scheduler-arg", action="append", default=[])
    args = parser.parse_args()
    print(json.dumps(measure(args.nodes, args.seconds, args.settle, args.scheduler_arg)))


if __name__ == "__main__":
    main()
