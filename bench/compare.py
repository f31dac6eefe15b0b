"""vscheduler and kube-scheduler side by side: the same workloads, alternately, each on a fresh
control plane.

    python -m bench.compare                                  # W1, W2, W3; 3 pairs; 500 nodes
    python -m bench.compare --workloads w1 --pairs 5
    python -m bench.compare --workloads w4,w5 --pairs 1      # the scale runs (long)
    python -m bench.compare --scheduler-arg=--bind-workers=64

Every run starts its own local control plane (etcd, kube-apiserver, kube-controller-manager, kwok;
`scripts/controlplane build` builds them and kube-scheduler from the same pinned Go modules),
creates KWOK nodes of 32 CPU / 128Gi / 110 pods, and pods of 100m / 256Mi, so every pod fits.
Objects are created from `--threads` client threads over keep-alive HTTPS. A pod counts as bound
when a metadata-only watch (`spec.nodeName!=`) first shows it bound.

Workloads (`kube` = kube-scheduler v1.34 at QPS/burst 2000, leader election off; `ours` =
`vscheduler run --leader-elect=false --kube-api-qps 2000 --kube-api-burst 2000`, default policy):
- w1 (stream): the scheduler is ready first; 3,000 plain pods are created while it runs. Per pod,
  creation (the POST's answer) to bound: p50, p90, p99, max.
- w2 (backlog): 10,000 plain pods exist before the scheduler process starts. Process start to
  ready, to the first bind, to all bound.
- w3 (gangs): as w1 with 300 gangs of 10 (a PodGroup with minMember 10, then its 10 pods). A
  gang's latency runs from its last member's creation to its last member bound. kube-scheduler
  has no gangs: it places the same pods one by one (their PodGroups exist and it ignores them),
  which is the anchor for "as fast as the default scheduler places 10 pods".
- w4, w5 (scale): the backlog shape at 2,000 nodes / 20,000 pods and 5,000 nodes / 50,000 pods,
  with the scheduler's peak RSS.

Each run prints one JSON object (one line) as it finishes; at the end a table gives, per workload
and measure, ours / kube's ratio for every pair and their median (below 1 is better for times
and CPU, above 1 for rates). CPU per 1,000 pods, for the scheduler and the API server, is read from
/proc over two windows: `toBound` (scheduler start, or the first creation in streaming, to the
last bind) and `settled` (to the moment every pod is Running, as a watch of the Running pods saw
them, and `--settle` more seconds passed).
`cpuSeconds` gives every process's CPU seconds in each window (etcd, kwok, the
controller-manager and this benchmark's client too: kwok's share shows whether it ran beside the
binds or waited). `apiWrites` counts the API server's writes in the `toBound` window by verb
and resource (its apiserver_request_duration_seconds counts; the benchmark's own creates are in
it for both); `apiWatchEvents` the watch events it sent in that window, count and bytes, by
resource (apiserver_watch_events_total and _sizes); `apiWritesSettled` and
`apiWatchEventsSettled` the same from the last bind to settled; `podWatches` the pod watches
open on the API server at each mark (every client's: a client that opens a second one makes
every pod change cost the API server another watch event); `watchersTerminated` the watchers the
API server closed in each window for not reading their events fast enough, by resource (a
client then watches again from where it was, and the events it had not read are sent anew;
looked for after runs where kwok took twice its CPU and the pod watch events rose by ~26,000
with the same writes). `benchClientCpuSeconds` is this benchmark's client's CPU over both
windows: it does the same work under either scheduler, so its row in the table (ours / kube per
pair) says how much slower the machine ran one side of a pair than the other (a fifth, on some
days), which moves every other ratio of that pair with it.
Every run checks correctness: every pod bound, no node holding more than its allocatable, no
watch error (the binding subresource itself refuses a second bind of a pod); a run that fails a
check says so in its JSON (`check.ok: false`) and in the table.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import functools
import json
import math
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.apiclient import Api
from bench.cluster import NAMESPACE, add_nodes, install_crds, podgroup
from bench.observe import BindWatch, CpuMeter, wait_until
from integration.controlplane import REPO_ROOT, ControlPlaneError, LocalControlPlane, free_port

KUBE = "kube"
OURS = "ours"
POD_PATH = f"/api/v1/namespaces/{NAMESPACE}/pods"
PG_PATH = f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{NAMESPACE}/podgroups"


@dataclass(frozen=True)
class Workload:
    """One workload's shape."""

    name: str
    nodes: int
    pods: int
    gang: int  # 0: plain pods
    streaming: bool  # created while the scheduler runs (else: before it starts)


WORKLOADS: dict[str, Workload] = {
    "w1": Workload("w1", 500, 3000, 0, streaming=True),
    "w2": Workload("w2", 500, 10000, 0, streaming=False),
    "w3": Workload("w3", 500, 3000, 10, streaming=True),
    "w4": Workload("w4", 2000, 20000, 0, streaming=False),
    "w5": Workload("w5", 5000, 50000, 0, streaming=False),
}


# --- objects ------------------------------------------------------------------------------------
def pod(name: str, scheduler: str | None, group: str | None) -> dict[str, Any]:
    """A pending pod for `scheduler` (None: the default scheduler), in PodGroup `group`."""
    meta: dict[str, Any] = {"name": name, "namespace": NAMESPACE}
    if group is not None:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}},
            }
        ]
    }
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def batches(w: Workload, scheduler: str | None) -> list[list[tuple[str, dict[str, Any]]]]:
    """The creates in order, grouped: a gang's PodGroup and pods form one batch, created in
    order by one thread; a plain pod is a batch of one."""
    if not w.gang:
        return [[(POD_PATH, pod(f"pod-{i:05d}", scheduler, None))] for i in range(w.pods)]
    out = []
    for g in range(w.pods // w.gang):
        name = f"job-{g:05d}"
        items: list[tuple[str, dict[str, Any]]] = [(PG_PATH, podgroup(name, w.gang))]
        items += [(POD_PATH, pod(f"{name}-{t}", scheduler, name)) for t in range(w.gang)]
        out.append(items)
    return out


def create_batches(
    api: Api, work: Sequence[Sequence[tuple[str, dict[str, Any]]]], threads: int
) -> dict[str, float]:
    """Create every batch from `threads` threads; the monotonic time each pod's POST answered."""
    created: dict[str, float] = {}
    lock = threading.Lock()
    failures: list[str] = []
    it = iter(work)

    def worker() -> None:
        while True:
            with lock:
                batch = next(it, None)
            if batch is None:
                return
            for path, body in batch:
                for attempt in range(20):
                    try:
                        status, doc = api.request("POST", path, body)
                    except OSError as exc:
                        status, doc = 0, str(exc)
                    if status in (200, 201, 409):
                        break
                    if (status not in (0, 429) and status < 500) or attempt == 19:
                        with lock:
                            failures.append(f"POST {path}: HTTP {status}: {str(doc)[:200]}")
                        break
                    time.sleep(0.05 * (attempt + 1))
                if path == POD_PATH:
                    created[body["metadata"]["name"]] = time.monotonic()

    with ThreadPoolExecutor(max_workers=threads) as pool:
        for future in [pool.submit(worker) for _ in range(threads)]:
            future.result()
    if failures:
        raise ControlPlaneError(f"{len(failures)} creates failed, e.g. {failures[:3]}")
    return created


# --- the schedulers -----------------------------------------------------------------------------
class Process:
    """A scheduler process under test: its readiness, its CPU and peak memory."""

    def __init__(
        self, argv: Sequence[str], log: Path, ready_url: str, root: Path = REPO_ROOT
    ) -> None:
        self.log_path = log
        self._log = log.open("w")
        self.ready_url = ready_url
        self.start = time.monotonic()
        self.proc = subprocess.Popen(
            list(argv),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=root,
            start_new_session=True,
        )
        self._ssl = ssl.create_default_context()
        self._ssl.check_hostname = False
        self._ssl.verify_mode = ssl.CERT_NONE

    def ready(self) -> bool:
        """/readyz answers 200 (raises with the log's tail if the process died)."""
        if self.proc.poll() is not None:
            tail = self.log_path.read_text(errors="replace").splitlines()[-30:]
            raise ControlPlaneError(f"{self.proc.args!r} exited:\n" + "\n".join(tail))
        try:
            with urllib.request.urlopen(self.ready_url, timeout=2, context=self._ssl) as r:
                return bool(r.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def peak_rss_mib(self) -> float | None:
        """VmHWM of the process, in MiB."""
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            return None
        return None

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 30 s."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def start_kube_scheduler(cp: LocalControlPlane, workdir: Path) -> Process:
    """kube-scheduler from the control plane's bin dir, QPS/burst 2000, no leader election."""
    config = workdir / "kube-scheduler.yaml"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "clientConnection": {
                    "kubeconfig": str(cp.kubeconfig_path),
                    "qps": 2000,
                    "burst": 2000,
                },
                "leaderElection": {"leaderElect": False},
            }
        )
    )
    port = free_port()
    argv = [
        str(cp.bin_dir / "kube-scheduler"),
        f"--config={config}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        f"--cert-dir={workdir / 'kube-scheduler-certs'}",
        "--v=0",
    ]
    return Process(argv, workdir / "kube-scheduler.log", f"https://127.0.0.1:{port}/readyz")


def start_vscheduler(
    cp: LocalControlPlane,
    workdir: Path,
    extra: Sequence[str],
    profile: str | None = None,
    root: Path = REPO_ROOT,
) -> Process:
    """`vscheduler run` with the same client limits, no leader election, default policy;
    under cProfile (every thread, bench.runtime's profiled child) when `profile` names a file;
    the `vscheduler` package of the source tree `root` (its working directory)."""
    _compiled(root)
    port = free_port()
    head = [sys.executable, "-m", "vscheduler"]
    if profile:
        head = [sys.executable, "-m", "bench.runtime", "--profiled-child", profile, "--"]
    argv = [
        *head,
        "run",
        f"--kubeconfig={cp.kubeconfig_path}",
        f"--listen-address=127.0.0.1:{port}",
        "--leader-elect=false",
        "--kube-api-qps=2000",
        "--kube-api-burst=2000",
        *extra,
    ]
    return Process(argv, workdir / "vscheduler.log", f"http://127.0.0.1:{port}/readyz", root)


@functools.cache
def _compiled(root: Path = REPO_ROOT) -> None:
    """vscheduler's modules compiled to bytecode, as an installed package has them: with
    PYTHONDONTWRITEBYTECODE set, a source checkout would otherwise be compiled again at every
    start (about 0.25 s of CPU before the first list, counted against us)."""
    compileall.compile_dir(root / "vscheduler", quiet=1)


# --- one run ------------------------------------------------------------------------------------
def run_one(w: Workload, who: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """One workload under one scheduler on a fresh control plane: the run's JSON object."""
    cp = LocalControlPlane(build=False, profiling=bool(args.apiserver_profile))
    cp.start()
    sched: Process | None = None
    profiler: threading.Thread | None = None
    try:
        install_crds(cp)
        cp.create_namespace(NAMESPACE)
        api = Api(cp)
        cpu = CpuMeter(cp, api)
        nodes = add_nodes(cp, api, w.nodes, args.threads, untaint=True)
        scheduler_name = None if who == KUBE else "vscheduler"
        work = batches(w, scheduler_name)

        def start() -> Process:
            made = (
                start_kube_scheduler(cp, workdir)
                if who == KUBE
                else start_vscheduler(cp, workdir, args.scheduler_arg, _profile(args, w))
            )
            cpu.pids["scheduler"] = made.proc.pid
            return made

        watch = BindWatch(api).start()
        running = BindWatch(api, "status.phase=Running").start()
        result: dict[str, Any] = {
            "benchmark": "compare",
            "workload": w.name,
            "scheduler": who,
            "sizes": {"nodes": w.nodes, "pods": w.pods, "gang": w.gang},
            "nodes": nodes,
        }
        if w.streaming:
            sched = start()
            if not wait_until("/readyz", sched.ready, 120):
                raise ControlPlaneError(f"{who} not ready")
            cpu.mark("start")
            profiler = _apiserver_profile(api, args, f"{w.name}-{who}")
            t0 = time.monotonic()
            created = create_batches(api, work, args.threads)
            result["createSeconds"] = round(time.monotonic() - t0, 3)
        else:
            created = create_batches(api, work, args.threads)
            cpu.mark("start")
            profiler = _apiserver_profile(api, args, f"{w.name}-{who}")
            sched = start()
            wait_until("/readyz", sched.ready, 300, 0.02)
            result["processStartToReadySeconds"] = round(time.monotonic() - sched.start, 3)
        complete = wait_until(
            "all pods bound", lambda: _all_bound(watch, w.pods, sched), args.timeout, 0.05
        )
        cpu.mark("toBound")
        settled_at, all_running = _settle(running, w.pods, args.settle)
        cpu.mark("settled")
        result["peakRssMiB"] = sched.peak_rss_mib()
        watch.stop()
        running.stop()
        times = dict(watch.bound)
        result["complete"] = complete
        result["bound"] = len(times)
        result.update(_latencies(w, created, times, sched.start))
        result["settledSeconds"] = settled_at
        result["settledAllRunning"] = all_running
        result["cpuPer1000Pods"] = _cpu_per_1000(cpu.phases(), len(times))
        result["cpuSeconds"] = cpu.phases()
        result["benchClientCpuSeconds"] = _same_work_cpu(result["cpuSeconds"])
        result.update(
            _api_requests(cpu.requests(), cpu.watches),
            benchWatchRestarts={"bound": watch.restarts, "running": running.restarts},
        )
        result["check"] = _check(api, w, times, watch)
        return result
    finally:
        if profiler is not None:
            profiler.join()
        if sched is not None:
            sched.stop()
        cp.stop()


def _apiserver_profile(api: Api, args: argparse.Namespace, name: str) -> threading.Thread | None:
    """With --apiserver-profile DIR: the API server's Go CPU profile of the next
    --apiserver-profile-seconds, written to DIR/<workload>-<scheduler>-<n>.pprof from a thread
    (read it with `go tool pprof -top <file>`)."""
    if not args.apiserver_profile:
        return None
    out = Path(args.apiserver_profile)
    out.mkdir(parents=True, exist_ok=True)
    n = len(list(out.glob(f"{name}-*.pprof")))
    path = out / f"{name}-{n}.pprof"
    seconds = args.apiserver_profile_seconds

    def fetch() -> None:
        conn = api.connection(timeout=seconds + 60)
        try:
            query = f"/debug/pprof/profile?seconds={seconds}"
            conn.request("GET", query, headers=api.headers("application/octet-stream"))
            response = conn.getresponse()
            body = response.read()
            if response.status == 200:
                path.write_bytes(body)
            else:
                print(f"API server profile: HTTP {response.status}", file=sys.stderr)
        finally:
            conn.close()

    thread = threading.Thread(target=fetch, name="apiserver-profile", daemon=True)
    thread.start()
    return thread


def _profile(args: argparse.Namespace, w: Workload) -> str | None:
    if not args.profile:
        return None
    Path(args.profile).mkdir(parents=True, exist_ok=True)
    return str(Path(args.profile) / f"{w.name}.prof")


def _all_bound(watch: BindWatch, pods: int, sched: Process) -> bool:
    if sched.proc.poll() is not None:
        sched.ready()  # raises with the log
    return len(watch.bound) >= pods


def _settle(running: BindWatch, pods: int, extra: float) -> tuple[float, bool]:
    """Wait until every pod is Running (kwok), as a watch of the Running pods saw them, and
    `extra` seconds more: the seconds it took, and whether every pod was Running (kwok gets
    a second per 100 pods, at least 300 s: W5's 50,000 once took it 287 s and once more). A
    watch, not a count polled: a list of every pod each half second cost the API server in
    proportion to the wait, which was longer for the scheduler whose pods kwok had left to
    start, and was charged to it."""
    t0 = time.monotonic()
    limit = max(300.0, pods / 100)
    done = wait_until("every pod Running", lambda: len(running.bound) >= pods, limit, 0.05)
    time.sleep(extra)
    return round(time.monotonic() - t0, 2), done


def _pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = max(0, math.ceil(q * len(ordered)) - 1)
    return round(ordered[k], 4)


def _latencies(
    w: Workload, created: dict[str, float], bound: dict[str, float], start: float
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if w.streaming:
        if w.gang:
            per: list[float] = []
            for g in range(w.pods // w.gang):
                names = [f"job-{g:05d}-{t}" for t in range(w.gang)]
                if all(n in bound for n in names):
                    per.append(max(bound[n] for n in names) - max(created[n] for n in names))
            key = "gangLatencySeconds"
        else:
            per = [bound[n] - created[n] for n in bound if n in created]
            key = "latencySeconds"
        out[key] = {
            "p50": _pct(per, 0.5),
            "p90": _pct(per, 0.9),
            "p99": _pct(per, 0.99),
            "max": _pct(per, 1.0),
        }
        first = min(created.values())
        last = max(bound.values(), default=first)
        out["podsPerSecond"] = round(len(bound) / (last - first), 1) if last > first else None
    else:
        times = sorted(bound.values())
        out["processStartToFirstBindSeconds"] = round(times[0] - start, 3) if times else None
        out["processStartToAllBoundSeconds"] = round(times[-1] - start, 3) if times else None
        span = times[-1] - start if times else 0
        out["podsPerSecond"] = round(len(times) / span, 1) if span > 0 else None
    return out


def _cpu_per_1000(phases: dict[str, dict[str, float]], pods: int) -> dict[str, Any]:
    if not pods:
        return {}
    to_bound = phases.get("toBound", {})
    settled = phases.get("settled", {})
    out: dict[str, Any] = {}
    for proc in ("scheduler", "kube-apiserver"):
        a = to_bound.get(proc, 0.0)
        b = a + settled.get(proc, 0.0)
        out[proc] = {"toBound": round(a * 1000 / pods, 3), "settled": round(b * 1000 / pods, 3)}
    return out


def _same_work_cpu(phases: dict[str, dict[str, float]]) -> float:
    """This benchmark's client's CPU seconds over both windows: the same work under either
    scheduler (the creates, the watches of bound and Running pods), so its ratio in a pair is
    how much slower the machine ran one side than the other."""
    return round(sum(p.get("bench-client", 0.0) for p in phases.values()), 2)


def _api_requests(
    requests: dict[str, dict[str, dict[str, float]]], watches: dict[str, dict[str, int]]
) -> dict[str, Any]:
    """The API server's writes and watch events of both windows (`_writes`, `_by_resource`),
    the watchers it closed for falling behind, by window and resource, and the pod watches open
    at each mark."""
    return {
        "apiWrites": _writes(requests, "toBound"),
        "apiWritesSettled": _writes(requests, "settled"),
        "apiWatchEvents": _by_resource(requests, "toBound", "EVENTS"),
        "apiWatchEventsSettled": _by_resource(requests, "settled", "EVENTS"),
        "podWatches": {phase: open_.get("pods", 0) for phase, open_ in watches.items()},
        "watchersTerminated": {
            phase: {
                k: int(row["count"])
                for k, row in _by_resource(requests, phase, "TERMINATED").items()
            }
            for phase in ("toBound", "settled")
        },
    }


def _writes(requests: dict[str, dict[str, dict[str, float]]], phase: str) -> dict[str, int]:
    """The API server's writes in one window (`toBound`: from the scheduler's start to the last
    bind; `settled`: from there to settled), by verb and resource (the benchmark's own creates
    included: the same for both schedulers)."""
    rows = requests.get(phase, {})
    return {
        key: int(row["count"])
        for key, row in rows.items()
        if key.split(" ", 1)[0] in {"POST", "PUT", "PATCH", "DELETE"}
    }


def _by_resource(
    requests: dict[str, dict[str, dict[str, float]]], phase: str, kind: str
) -> dict[str, dict[str, float]]:
    """The rows of one kind in one window (as `_writes`), by resource: `EVENTS`, the watch
    events the API server sent, all watchers together (the benchmark's own bind watch included:
    the same for both), count and bytes; `TERMINATED`, the watchers it closed, count."""
    prefix = f"{kind} "
    rows = requests.get(phase, {})
    return {key[len(prefix) :]: row for key, row in rows.items() if key.startswith(prefix)}


def _check(api: Api, w: Workload, bound: dict[str, float], watch: BindWatch) -> dict[str, Any]:
    """Every pod bound; no node holding more than it has; none bound twice. A list the API
    server does not answer is a failed check of this run, not the end of the batch (an
    overloaded API server once left a kube-scheduler W2 run's 10,000 pods unbound after 900 s
    and its list unanswered)."""
    try:
        status, doc = api.request("GET", POD_PATH)
    except OSError as err:  # socket.timeout is an OSError
        return {"ok": False, "error": f"listing pods: {type(err).__name__}: {err}"}
    if status != 200:
        return {"ok": False, "error": f"listing pods: HTTP {status}"}
    per_node: dict[str, int] = {}
    unbound = 0
    for item in doc["items"]:
        node = item["spec"].get("nodeName")
        if node:
            per_node[node] = per_node.get(node, 0) + 1
        else:
            unbound += 1
    # 100m / 256Mi per pod on 32 CPU / 128Gi / 110 pods: the pod count binds first.
    overcommitted = sorted(n for n, c in per_node.items() if c > 110)
    ok = unbound == 0 and not overcommitted and len(bound) == w.pods and not watch.errors
    return {
        "ok": ok,
        "unbound": unbound,
        "overcommittedNodes": overcommitted[:5],
        "watchErrors": watch.errors[:3],
        "nodesUsed": len(per_node),
        "maxPodsOnANode": max(per_node.values(), default=0),
    }


# --- pairs and the table ------------------------------------------------------------------------
MEASURES: dict[str, tuple[tuple[str, ...], bool]] = {
    # name: (path in the run's JSON, lower is better)
    "latency p50": (("latencySeconds", "p50"), True),
    "latency p99": (("latencySeconds", "p99"), True),
    "gang latency p50": (("gangLatencySeconds", "p50"), True),
    "gang latency p99": (("gangLatencySeconds", "p99"), True),
    "first bind": (("processStartToFirstBindSeconds",), True),
    "all bound": (("processStartToAllBoundSeconds",), True),
    "pods/s": (("podsPerSecond",), False),
    "sched CPU/1k toBound": (("cpuPer1000Pods", "scheduler", "toBound"), True),
    "sched CPU/1k settled": (("cpuPer1000Pods", "scheduler", "settled"), True),
    "apiserver CPU/1k toBound": (("cpuPer1000Pods", "kube-apiserver", "toBound"), True),
    "apiserver CPU/1k settled": (("cpuPer1000Pods", "kube-apiserver", "settled"), True),
    "peak RSS MiB": (("peakRssMiB",), True),
    "bench client CPU (same work)": (("benchClientCpuSeconds",), True),
}


def _get(doc: dict[str, Any], path: Sequence[str]) -> float | None:
    cur: Any = doc
    for key in path:
        if not isinstance(cur, dict) or key not in cur:
            return None
        cur = cur[key]
    return float(cur) if isinstance(cur, int | float) else None


def ratios(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per workload and measure: ours / kube per pair, the median, and both sides' medians."""
    rows: list[dict[str, Any]] = []
    for name in sorted({r["workload"] for r in runs}):
        pairs: dict[int, dict[str, dict[str, Any]]] = {}
        for r in runs:
            if r["workload"] == name:
                pairs.setdefault(r["pair"], {})[r["scheduler"]] = r
        for measure, (path, lower_better) in MEASURES.items():
            per: list[float] = []
            kube_values: list[float] = []
            ours_values: list[float] = []
            for pair in pairs.values():
                k = _get(pair.get(KUBE, {}), path)
                o = _get(pair.get(OURS, {}), path)
                if k is not None:
                    kube_values.append(k)
                if o is not None:
                    ours_values.append(o)
                if k and o is not None:
                    per.append(round(o / k, 3))
            if not per:
                continue
            rows.append(
                {
                    "workload": name,
                    "measure": measure,
                    "kube": round(statistics.median(kube_values), 3),
                    "ours": round(statistics.median(ours_values), 3),
                    "ratios": per,
                    "medianRatio": round(statistics.median(per), 3),
                    "lowerIsBetter": lower_better,
                    "checksOk": all(
                        p.get(s, {}).get("check", {}).get("ok", False)
                        for p in pairs.values()
                        for s in (KUBE, OURS)
                        if s in p
                    ),
                }
            )
    return rows


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The ratio rows as a Markdown table."""
    lines = [
        "| workload | measure | kube (median) | ours (median) | ours/kube per pair | median |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        flag = "" if r["checksOk"] else " (a check failed)"
        per = ", ".join(f"{x:g}" for x in r["ratios"])
        lines.append(
            f"| {r['workload']} | {r['measure']} | {r['kube']:g} | {r['ours']:g} | {per} | "
            f"**{r['medianRatio']:g}×**{flag} |"
        )
    return "\n".join(lines)


@contextlib.contextmanager
def _workdir(keep: str | None, prefix: str) -> Iterator[Path]:
    """A temporary directory for one run, kept under `keep` when given."""
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        yield Path(tempfile.mkdtemp(prefix=prefix, dir=keep))
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", default="w1,w2,w3", help="comma-separated: w1..w5")
    parser.add_argument("--pairs", type=int, default=3, help="runs of each scheduler (3)")
    parser.add_argument("--threads", type=int, default=8, help="client threads creating objects")
    parser.add_argument("--timeout", type=float, default=900, help="seconds to wait for all bound")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds after all Running (5)")
    parser.add_argument("--only", choices=(KUBE, OURS), help="run one scheduler only")
    parser.add_argument(
        "--scheduler-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="an extra `vscheduler run` argument (repeatable)",
    )
    parser.add_argument(
        "--profile", metavar="DIR", help="run vscheduler under cProfile: DIR/<workload>.prof(.txt)"
    )
    parser.add_argument(
        "--apiserver-profile",
        metavar="DIR",
        help="the API server's CPU profile from the start mark: DIR/<workload>-<who>-<n>.pprof",
    )
    parser.add_argument(
        "--apiserver-profile-seconds",
        type=int,
        default=20,
        metavar="S",
        help="how long that profile samples, at most 50 (20)",
    )
    parser.add_argument("--keep", metavar="DIR", help="keep each run's scheduler log under DIR")
    parser.add_argument("--out", metavar="FILE", help="also write every run's JSON here")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.workloads.split(",") if n.strip()]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s) {unknown}; choose from {sorted(WORKLOADS)}")
    runs: list[dict[str, Any]] = []
    for name in names:
        for pair in range(args.pairs):
            order = [KUBE, OURS] if pair % 2 == 0 else [OURS, KUBE]  # alternate who goes first
            for who in order:
                if args.only and who != args.only:
                    continue
                with _workdir(args.keep, f"{name}-{who}-{pair}-") as tmp:
                    result = run_one(WORKLOADS[name], who, args, tmp)
                result["pair"] = pair
                runs.append(result)
                print(json.dumps(result), flush=True)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(json.dumps(result) + "\n")
    rows = ratios(runs)
    print(json.dumps({"benchmark": "compare", "ratios": rows}), flush=True)
    print(table(rows), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
