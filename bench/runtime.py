"""`vscheduler run` against a real API server with KWOK nodes: throughput and startup, as JSON.

    python -m bench.runtime --scenario throughput         # 500 nodes; 2,000 pods, gangs of 10
    python -m bench.runtime --scenario startup            # 500 nodes; 10,000 pods already there
    python -m bench.runtime --scenario all                # both, each on a fresh control plane
    python -m bench.runtime --scenario startup --profile /tmp/prof   # cProfile, every thread

Each scenario starts its own local control plane (integration/controlplane.py: etcd,
kube-apiserver, kube-controller-manager, kwok), creates KWOK nodes (32 CPU / 128Gi / 110 pods) in
parallel and waits until all are Ready and untainted, and creates PodGroups (minMember = gang
size) and pods (100m / 256Mi) from several threads over keep-alive HTTPS connections. Binds are
observed through one metadata-only watch of the namespace's pods with `spec.nodeName!=` (the
time a pod is first seen bound), cross-checked against the scheduler's
`vscheduler_pods_bound_total`, which is polled every 0.2 s.

- throughput: the scheduler (leader election off, `--schedule-period 1`) is started first and
  ready; then every PodGroup, then every pod, is created as fast as possible. Reported: creation
  time and rate, the pods already bound when the last pod was created, the time from the last
  pod's creation to all bound, pods/s over several windows, cycles run and the longest cycle.
- startup: the nodes, PodGroups and pods exist before the scheduler starts. Reported: process
  start to ready (/readyz), to the first cycle, to the first bind and to all bound (target for
  the first bind: under 10 s).

`cpuSeconds` gives, per phase, the CPU time each process used (from /proc), so the split between
object creation, the API server, etcd, kwok and the scheduler is visible; on a small machine they
all share the same cores. One JSON object is printed per scenario.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import datetime as dt
import http.client
import json
import os
import pstats
import queue
import re
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from integration.controlplane import (
    NOT_READY_TAINT,
    REPO_ROOT,
    ControlPlaneError,
    LocalControlPlane,
    free_port,
)

NAMESPACE = "bench"
SCHEDULER = "vscheduler"
METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
MERGE_PATCH = "application/merge-patch+json"
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
_CYCLE_LINE = re.compile(
    r"^(\S+) +\w+ +\S+: cycle (\d+): (\d+) bound, (\d+) evicted, (\d+) pending in ([\d.]+)s"
)
_BOUND_LINE = re.compile(r"^(\S+) +\w+ +\S+: bound \S+ to \S+")
_METRIC_LINE = re.compile(r"^(vscheduler_[a-z_]+)(\{[^}]*\})? ([0-9.eE+-]+)$")
_APISERVER_DURATION = re.compile(
    r"^apiserver_request_duration_seconds_(count|sum)\{([^}]*)\} ([0-9.eE+-]+)$"
)
_LABEL = re.compile(r'(\w+)="([^"]*)"')
_TICK = os.sysconf("SC_CLK_TCK")


# --- objects (as integration/harness/objects.py builds them; the bench needs controlplane.py only)
CRDS = (
    REPO_ROOT / "deploy" / "crds" / "scheduling.volcano.sh_podgroups.yaml",
    REPO_ROOT / "deploy" / "crds" / "scheduling.volcano.sh_queues.yaml",
)


def install_crds(cp: LocalControlPlane) -> None:
    """The Volcano PodGroup and Queue CRDs, established."""
    for crd in CRDS:
        cp.kubectl("apply", "--server-side", "-f", str(crd))
    cp.kubectl(
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd/podgroups.scheduling.volcano.sh",
        "crd/queues.scheduling.volcano.sh",
    )


def pod(name: str, group: str) -> dict[str, Any]:
    """A pending pod of the scheduler under test in gang `group` (kwok "runs" it once bound)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "annotations": {"scheduling.k8s.io/group-name": group},
        },
        "spec": {
            "schedulerName": SCHEDULER,
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}},
                }
            ],
        },
    }


def podgroup(name: str, min_member: int) -> dict[str, Any]:
    """A Volcano PodGroup in the default queue."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"minMember": min_member, "queue": "default"},
    }


# --- the API, over keep-alive connections ------------------------------------------------------
class Api:
    """Raw JSON requests to the API server as admin, one keep-alive connection per thread."""

    def __init__(self, cp: LocalControlPlane) -> None:
        url = urllib.parse.urlsplit(cp.server_url)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 443
        self.token = cp.admin_token
        self.ssl = ssl.create_default_context(cafile=str(cp.ca_path))
        self._local = threading.local()

    def connection(self, timeout: float = 60.0) -> http.client.HTTPSConnection:
        """A new connection (the caller owns it)."""
        return http.client.HTTPSConnection(self.host, self.port, context=self.ssl, timeout=timeout)

    def headers(
        self, accept: str = "application/json", content_type: str = "application/json"
    ) -> dict[str, str]:
        """Authorization and content negotiation."""
        return {
            "Authorization": f"Bearer {self.token}",
            "Accept": accept,
            "Content-Type": content_type,
        }

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        accept: str = "application/json",
        content_type: str = "application/json",
    ) -> tuple[int, Any]:
        """One request on this thread's connection; (status, decoded JSON or None).

        A dropped connection is reopened and the request sent once more."""
        data = None if body is None else json.dumps(body).encode()
        for attempt in range(2):
            conn: http.client.HTTPSConnection | None = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = self.connection()
            try:
                conn.request(method, path, body=data, headers=self.headers(accept, content_type))
                response = conn.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
                continue
            return response.status, json.loads(raw) if raw else None
        raise AssertionError("unreachable")

    def count(self, path: str, field_selector: str) -> int:
        """How many objects a metadata-only list with this field selector returns."""
        query = urllib.parse.urlencode({"fieldSelector": field_selector})
        status, doc = self.request("GET", f"{path}?{query}", accept=METADATA_LIST)
        if status != 200:
            raise ControlPlaneError(f"GET {path}: HTTP {status}: {doc}")
        return len(doc.get("items") or [])


def create_all(
    api: Api, items: Sequence[tuple[str, dict[str, Any]]], threads: int
) -> dict[str, Any]:
    """POST every (path, body) from `threads` threads; 409 counts as created (a retried POST),
    429/5xx and dropped connections are retried. Returns start/end (monotonic) and counts."""
    work: queue.SimpleQueue[tuple[str, dict[str, Any]]] = queue.SimpleQueue()
    for item in items:
        work.put(item)
    retries = [0]
    failures: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        while True:
            try:
                path, body = work.get_nowait()
            except queue.Empty:
                return
            for attempt in range(20):
                try:
                    status, doc = api.request("POST", path, body)
                except (OSError, http.client.HTTPException) as exc:
                    status, doc = 0, str(exc)
                if status in (200, 201, 409):
                    break
                with lock:
                    retries[0] += 1
                if (status not in (0, 429) and status < 500) or attempt == 19:
                    with lock:
                        failures.append(f"POST {path}: HTTP {status}: {str(doc)[:300]}")
                    break
                time.sleep(0.05 * (attempt + 1))

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for future in [pool.submit(worker) for _ in range(threads)]:
            future.result()
    end = time.monotonic()
    if failures:
        raise ControlPlaneError(f"{len(failures)} creates failed, e.g. {failures[:3]}")
    seconds = end - start
    return {
        "start": start,
        "end": end,
        "count": len(items),
        "seconds": round(seconds, 3),
        "perSecond": round(len(items) / seconds, 1) if seconds else None,
        "retries": retries[0],
    }


# --- the cluster --------------------------------------------------------------------------------
def add_nodes(
    cp: LocalControlPlane, api: Api, count: int, threads: int, *, untaint: bool
) -> dict[str, Any]:
    """Create `count` KWOK nodes in parallel, then wait until every one is Ready (kwok) and
    without the not-ready taint. The controller-manager lifts that taint at ~5 nodes/s (500 nodes:
    ~105 s); with `untaint` the bench lifts it itself from nodes kwok has made Ready."""
    start = time.monotonic()

    def one(i: int) -> None:
        cp.add_node(f"kwok-node-{i:05d}", cpu="32", memory="128Gi", pods=110, wait_ready=False)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(one, range(count)))
    created = time.monotonic()
    all_ready: list[float] = []
    lifted = [0]

    def schedulable() -> bool:
        status, doc = api.request("GET", "/api/v1/nodes?labelSelector=type%3Dkwok")
        if status != 200:
            return False
        ready, tainted = 0, []
        for node in doc["items"]:
            conds = {c["type"]: c["status"] for c in node.get("status", {}).get("conditions", [])}
            taints = node.get("spec", {}).get("taints") or []
            if conds.get("Ready") == "True":
                ready += 1
                if any(t["key"] == NOT_READY_TAINT for t in taints):
                    tainted.append(node)
        if ready == count and not all_ready:
            all_ready.append(time.monotonic())
        if untaint and tainted:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                lifted[0] += sum(pool.map(_lift_not_ready, [api] * len(tainted), tainted))
            return False
        return ready == count and not tainted

    cp.wait_for(f"{count} KWOK nodes Ready and untainted", schedulable, timeout=600)
    done = time.monotonic()
    return {
        "count": count,
        "createSeconds": round(created - start, 2),
        "allReadySeconds": _rel(all_ready[0] if all_ready else None, created),
        "allSchedulableSeconds": round(done - created, 2),
        "notReadyTaintsLiftedByBench": lifted[0],
    }


def _lift_not_ready(api: Api, node: dict[str, Any]) -> int:
    """Remove the not-ready taint from a Ready node (what the node-lifecycle controller does)."""
    keep = [t for t in node["spec"]["taints"] if t["key"] != NOT_READY_TAINT]
    patch = {
        "metadata": {"resourceVersion": node["metadata"]["resourceVersion"]},
        "spec": {"taints": keep or None},
    }
    name = node["metadata"]["name"]
    status, _ = api.request("PATCH", f"/api/v1/nodes/{name}", patch, content_type=MERGE_PATCH)
    return int(status == 200)  # 409: the controller-manager got there first


def workload(pods: int, gang: int) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(PodGroup creates, pod creates): gangs of `gang` pods, each with its PodGroup."""
    groups: list[tuple[str, Any]] = []
    members: list[tuple[str, Any]] = []
    pg_path = f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{NAMESPACE}/podgroups"
    pod_path = f"/api/v1/namespaces/{NAMESPACE}/pods"
    for g in range((pods + gang - 1) // gang):
        name = f"job-{g:05d}"
        size = min(gang, pods - g * gang)
        groups.append((pg_path, podgroup(name, size)))
        members.extend((pod_path, pod(f"{name}-{t}", name)) for t in range(size))
    return groups, members


# --- observing ----------------------------------------------------------------------------------
class BindWatch:
    """A metadata-only watch of the namespace's bound pods: when each was first seen bound."""

    def __init__(self, api: Api) -> None:
        self._api = api
        self.bound: dict[str, float] = {}
        self.errors: list[str] = []
        self.restarts = 0
        self._stop = threading.Event()
        self._conn: http.client.HTTPSConnection | None = None
        self._thread = threading.Thread(target=self._run, name="bind-watch", daemon=True)

    def start(self) -> BindWatch:
        """Open the watch (synchronously, so nothing bound afterwards is missed)."""
        self._response = self._open("")
        self._thread.start()
        return self

    def stop(self) -> None:
        """Close the watch."""
        self._stop.set()
        if self._conn is not None:
            sock = self._conn.sock
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(2)
            self._conn.close()
        self._thread.join(5)

    def _open(self, resource_version: str) -> http.client.HTTPResponse:
        query = {
            "watch": "1",
            "fieldSelector": "spec.nodeName!=",
            "timeoutSeconds": "3600",
            "allowWatchBookmarks": "true",
        }
        if resource_version:
            query["resourceVersion"] = resource_version
        conn = self._conn = self._api.connection(timeout=3600)
        path = f"/api/v1/namespaces/{NAMESPACE}/pods?{urllib.parse.urlencode(query)}"
        conn.request("GET", path, headers=self._api.headers(METADATA_ONLY))
        response = conn.getresponse()
        if response.status != 200:
            raise ControlPlaneError(f"watch: HTTP {response.status}: {response.read()[:300]!r}")
        return response

    def _run(self) -> None:
        rv = ""
        response = self._response
        while not self._stop.is_set():
            try:
                for line in iter(response.readline, b""):
                    event = json.loads(line)
                    meta = event.get("object", {}).get("metadata", {})
                    rv = meta.get("resourceVersion", rv)
                    if event.get("type") in ("ADDED", "MODIFIED"):
                        self.bound.setdefault(meta["name"], time.monotonic())
                    elif event.get("type") == "ERROR":
                        self.errors.append(str(event.get("object"))[:300])
                        rv = ""
                        break
            except Exception as exc:  # a closed socket, a cut stream, bad JSON: reconnect
                if self._stop.is_set():
                    return
                self.errors.append(f"{type(exc).__name__}: {exc}")
            if self._stop.is_set():
                return
            self.restarts += 1
            time.sleep(0.2)
            with contextlib.suppress(OSError, ControlPlaneError, http.client.HTTPException):
                response = self._open(rv)


class SchedulerProcess:
    """`python -m vscheduler run` against the control plane (optionally under cProfile)."""

    def __init__(
        self,
        cp: LocalControlPlane,
        workdir: Path,
        period: float,
        profile: Path | None,
        extra: Sequence[str] = (),
    ) -> None:
        self.port = free_port()
        self.log_path = workdir / "vscheduler.log"
        run_args = [
            "run",
            f"--kubeconfig={cp.kubeconfig_path}",
            f"--scheduler-name={SCHEDULER}",
            f"--listen-address=127.0.0.1:{self.port}",
            f"--schedule-period={period}",
            "--leader-elect=false",
            *extra,
        ]
        self.argv = run_args
        if profile is None:
            argv = [sys.executable, "-m", "vscheduler", *run_args]
        else:
            argv = [sys.executable, "-m", "bench.runtime", "--profiled-child", str(profile)]
            argv += ["--", *run_args]
        self._log = self.log_path.open("w")
        self.wall_start = time.time()
        self.start = time.monotonic()
        self.proc = subprocess.Popen(
            argv, stdout=self._log, stderr=subprocess.STDOUT, cwd=REPO_ROOT, start_new_session=True
        )

    def get(self, path: str) -> tuple[int, str]:
        """GET an observability endpoint; (0, "") when it does not answer."""
        url = f"http://127.0.0.1:{self.port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except OSError:
            return 0, ""

    def metrics(self) -> dict[str, float]:
        """Every vscheduler_* sample, summed over labels."""
        status, text = self.get("/metrics")
        out: dict[str, float] = {}
        if status != 200:
            return out
        for line in text.splitlines():
            m = _METRIC_LINE.match(line)
            if m:
                out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(3))
        return out

    def alive(self) -> None:
        """Raise with the log's tail if the process died."""
        if self.proc.poll() is not None:
            raise ControlPlaneError(
                f"vscheduler exited with {self.proc.returncode}:\n{self.tail()}"
            )

    def tail(self, lines: int = 40) -> str:
        """The end of its log."""
        self._log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> int:
        """SIGTERM, then SIGKILL after 60 s (a profiled run writes its profile on the way out)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode

    def log_summary(self) -> dict[str, Any]:
        """Cycles, their times and the first bind, from the log (times relative to start)."""
        cycles: list[tuple[float, int, int, float]] = []
        first_bind: float | None = None
        serving: float | None = None
        binds_logged = conflicts = 0
        for line in self.log_path.read_text(errors="replace").splitlines():
            conflicts += " dropped: 409 " in line
            if serving is None and "serving /metrics" in line:
                serving = _log_time(line.split(" ", 1)[0]) - self.wall_start
            m = _CYCLE_LINE.match(line)
            if m:
                at = _log_time(m.group(1)) - self.wall_start
                cycles.append((at, int(m.group(2)), int(m.group(3)), float(m.group(6))))
                continue
            b = _BOUND_LINE.match(line)
            if b:
                binds_logged += 1
                if first_bind is None:
                    first_bind = _log_time(b.group(1)) - self.wall_start
        times = [c[3] for c in cycles]
        with_binds = [c for c in cycles if c[2]]
        return {
            "httpServingSeconds": None if serving is None else round(serving, 3),
            "cyclesRun": len(cycles),
            "cyclesWithBinds": len(with_binds),
            "maxCycleSeconds": max(times, default=None),
            "sumCycleSeconds": round(sum(times), 3),
            "firstCycle": _cycle_json(cycles[0]) if cycles else None,
            "slowestCycles": [_cycle_json(c) for c in sorted(cycles, key=lambda c: -c[3])[:5]],
            "bindDecisionsTotal": sum(c[2] for c in cycles),
            "bindDecisionsPerCycle": [c[2] for c in with_binds][:40],
            "firstBindLoggedSeconds": None if first_bind is None else round(first_bind, 3),
            "bindsLogged": binds_logged,
            "bindConflictsLogged": conflicts,
        }


def _log_time(stamp: str) -> float:
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _cycle_json(c: tuple[float, int, int, float]) -> dict[str, Any]:
    return {"atSeconds": round(c[0], 3), "cycle": c[1], "bindDecisions": c[2], "seconds": c[3]}


class MetricsPoller:
    """Samples the scheduler's /metrics every `interval` seconds: (monotonic time, bound total)."""

    def __init__(self, scheduler: SchedulerProcess, interval: float = 0.2) -> None:
        self._scheduler, self._interval = scheduler, interval
        self.samples: list[tuple[float, float]] = []
        self.last: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="metrics-poll", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            metrics = self._scheduler.metrics()
            if metrics:
                self.last = metrics
                self.samples.append(
                    (time.monotonic(), metrics.get("vscheduler_pods_bound_total", 0.0))
                )

    def stop(self) -> dict[str, float]:
        """Stop; the last sample of every metric."""
        self._stop.set()
        self._thread.join(5)
        final = self._scheduler.metrics()
        return final or self.last


class CpuMeter:
    """Per phase: CPU seconds (user + system) of the control-plane processes, the scheduler and
    this process (from /proc), and the API server's own count and mean latency of each kind of
    request (apiserver_request_duration_seconds; WATCH excluded)."""

    def __init__(self, cp: LocalControlPlane, api: Api) -> None:
        self.api = api
        self.pids = {name: proc.popen.pid for name, proc in cp.procs.items()}
        self.marks: list[tuple[str, dict[str, float], dict[str, tuple[float, float]]]] = []

    def mark(self, phase: str) -> None:
        """Record the totals now; a phase's usage is the difference to the previous mark."""
        now: dict[str, float] = {name: _proc_cpu(pid) for name, pid in self.pids.items()}
        times = os.times()
        now["bench-client"] = times.user + times.system
        self.marks.append((phase, now, self._requests()))

    def phases(self) -> dict[str, dict[str, float]]:
        """CPU seconds per process, per phase (the name of the mark ending it)."""
        out: dict[str, dict[str, float]] = {}
        for (_, before, _), (phase, after, _) in zip(self.marks, self.marks[1:], strict=False):
            out[phase] = {k: round(after[k] - before.get(k, 0.0), 2) for k in after}
        return out

    def requests(self) -> dict[str, dict[str, dict[str, float]]]:
        """Per phase: {"VERB resource[/subresource]": {count, meanMs}}, as the API server saw it."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for (_, _, before), (phase, _, after) in zip(self.marks, self.marks[1:], strict=False):
            rows: dict[str, dict[str, float]] = {}
            for key, (count, total) in sorted(after.items()):
                n = count - before.get(key, (0.0, 0.0))[0]
                if n >= 1:
                    spent = total - before.get(key, (0.0, 0.0))[1]
                    rows[key] = {"count": int(n), "meanMs": round(spent / n * 1000, 1)}
            out[phase] = rows
        return out

    def _requests(self) -> dict[str, tuple[float, float]]:
        try:
            conn = self.api.connection(timeout=30)
            conn.request("GET", "/metrics", headers=self.api.headers("text/plain"))
            response = conn.getresponse()
            status, text = response.status, response.read().decode()
            conn.close()
        except (OSError, http.client.HTTPException):
            return {}
        if status != 200:
            return {}
        found: dict[str, list[float]] = {}
        for line in text.splitlines():
            m = _APISERVER_DURATION.match(line)
            if not m or 'verb="WATCH"' in m.group(2):
                continue
            labels = dict(_LABEL.findall(m.group(2)))
            key = f"{labels.get('verb')} {labels.get('resource')}"
            if labels.get("subresource"):
                key += f"/{labels['subresource']}"
            slot = found.setdefault(key, [0.0, 0.0])
            slot[0 if m.group(1) == "count" else 1] += float(m.group(3))
        return {k: (v[0], v[1]) for k, v in found.items()}


def _proc_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (fields 14, 15)


def wait_until(what: str, check: Callable[[], bool], timeout: float, every: float = 0.05) -> bool:
    """Poll `check`; False (not an exception) when `timeout` passes first."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            print(f"bench.runtime: timed out waiting for {what}", file=sys.stderr)
            return False
        time.sleep(every)
    return True


def peak_rate(times: Sequence[float], window: float = 1.0) -> float:
    """The most events seen in any `window` seconds, per second."""
    ordered, best, lo = sorted(times), 0, 0
    for hi, t in enumerate(ordered):
        while t - ordered[lo] > window:
            lo += 1
        best = max(best, hi - lo + 1)
    return round(best / window, 1)


def _rel(t: float | None, origin: float) -> float | None:
    return None if t is None else round(t - origin, 3)


# --- scenarios ----------------------------------------------------------------------------------
class Run:
    """One scenario's control plane, client, nodes and (later) scheduler."""

    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args, self.workdir = args, workdir
        self.cp = LocalControlPlane(build=False)
        self.scheduler: SchedulerProcess | None = None

    def __enter__(self) -> Run:
        t = time.monotonic()
        self.cp.start()
        install_crds(self.cp)
        self.cp.create_namespace(NAMESPACE)
        self.api = Api(self.cp)
        self.cpu = CpuMeter(self.cp, self.api)
        self.setup_seconds = round(time.monotonic() - t, 2)
        self.cpu.mark("start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.scheduler is not None:
            self.scheduler.stop()
        self.cp.stop()

    def start_scheduler(self) -> SchedulerProcess:
        """Start `vscheduler run`, its pid joining the CPU meter."""
        profile = (
            Path(self.args.profile) / f"{self.args.current}.prof" if self.args.profile else None
        )
        self.scheduler = SchedulerProcess(
            self.cp, self.workdir, self.args.period, profile, self.args.scheduler_arg
        )
        self.cpu.pids["vscheduler"] = self.scheduler.proc.pid
        return self.scheduler

    def finish(self, result: dict[str, Any], watch: BindWatch, poller: MetricsPoller) -> None:
        """Common tail: stop observing, cross-check, fill in the log summary and CPU phases."""
        assert self.scheduler is not None
        metrics = poller.stop()
        watch.stop()
        api = self.api
        pods_path = f"/api/v1/namespaces/{NAMESPACE}/pods"
        result["check"] = {
            "unboundAtEnd": api.count(pods_path, "spec.nodeName="),
            "runningAtEnd": api.count(pods_path, "status.phase=Running"),
            "podsBoundTotalMetric": metrics.get("vscheduler_pods_bound_total"),
            "bindFailuresMetric": metrics.get("vscheduler_bind_failures_total"),
            "cyclesMetric": metrics.get("vscheduler_cycles_total"),
            "cyclesSkippedMetric": metrics.get("vscheduler_cycle_skipped_total"),
            "watchErrors": watch.errors[:5],
            "watchRestarts": watch.restarts,
        }
        result["schedulerFlags"] = [
            a for a in self.scheduler.argv[1:] if not a.startswith(("--kubeconfig", "--listen"))
        ]
        result["schedulerExitCode"] = self.scheduler.stop()
        result["scheduler"] = self.scheduler.log_summary()
        result["cpuSeconds"] = self.cpu.phases()
        result["apiRequests"] = self.cpu.requests()


def throughput(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """The scheduler runs first; the workload is created as fast as possible."""
    with Run(args, workdir) as run:
        result: dict[str, Any] = {"benchmark": "runtime", "scenario": "throughput"}
        result["sizes"] = {"nodes": args.nodes, "pods": args.pods, "gang": args.gang}
        result["controlPlaneSetupSeconds"] = run.setup_seconds
        result["nodes"] = add_nodes(
            run.cp, run.api, args.nodes, args.threads, untaint=not args.wait_for_controller
        )
        groups, members = workload(args.pods, args.gang)
        run.cpu.mark("nodes")
        scheduler = run.start_scheduler()
        if not wait_until("/readyz", lambda: _ready(scheduler), 120):
            raise ControlPlaneError(f"scheduler not ready:\n{scheduler.tail()}")
        result["schedulerReadySeconds"] = round(time.monotonic() - scheduler.start, 3)
        run.cpu.mark("schedulerStart")
        watch = BindWatch(run.api).start()
        poller = MetricsPoller(scheduler)
        pg = create_all(run.api, groups, args.threads)
        run.cpu.mark("createPodGroups")
        pods = create_all(run.api, members, args.threads)
        run.cpu.mark("createPods")
        last_created = pods["end"]
        bound_at_last = len(watch.bound)
        done = wait_until(
            "all pods bound", lambda: _all_bound(watch, args.pods, scheduler), args.timeout, 0.2
        )
        all_bound = max(watch.bound.values()) if watch.bound else None
        run.cpu.mark("bindAfterLastCreate")
        times = list(watch.bound.values())
        origin = pg["start"]
        window = None if all_bound is None else all_bound - last_created
        result["create"] = {
            "podGroups": _strip(pg),
            "pods": _strip(pods),
            "podsStartAfterFirstPodGroupSeconds": _rel(pods["start"], origin),
        }
        result["bind"] = {
            "complete": done,
            "bound": len(watch.bound),
            "boundWhenLastPodCreated": bound_at_last,
            "firstBindSeconds": _rel(min(times, default=None), pods["start"]),
            "lastPodCreatedToAllBoundSeconds": None if window is None else round(window, 3),
            "podsPerSecondLastCreateToAllBound": (
                round((len(times) - bound_at_last) / window, 1) if window else None
            ),
            "podsPerSecondFirstPodCreateToAllBound": (
                round(len(times) / (all_bound - pods["start"]), 1) if all_bound else None
            ),
            "podsPerSecondFirstBindToLastBind": _span_rate(times),
            "peakPodsPerSecond1s": peak_rate(times),
            "boundTimelineFromFirstPodCreate": _timeline(times, pods["start"]),
        }
        run.finish(result, watch, poller)
        return result


def startup(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """The workload exists first; the scheduler starts into it."""
    with Run(args, workdir) as run:
        result: dict[str, Any] = {"benchmark": "runtime", "scenario": "startup"}
        result["sizes"] = {"nodes": args.nodes, "pods": args.pods, "gang": args.gang}
        result["controlPlaneSetupSeconds"] = run.setup_seconds
        result["nodes"] = add_nodes(
            run.cp, run.api, args.nodes, args.threads, untaint=not args.wait_for_controller
        )
        run.cpu.mark("nodes")
        groups, members = workload(args.pods, args.gang)
        pg = create_all(run.api, groups, args.threads)
        pods = create_all(run.api, members, args.threads)
        result["create"] = {"podGroups": _strip(pg), "pods": _strip(pods)}
        run.cpu.mark("createWorkload")
        watch = BindWatch(run.api).start()
        scheduler = run.start_scheduler()
        start = scheduler.start
        poller = MetricsPoller(scheduler, interval=0.1)
        wait_until("/readyz", lambda: _ready(scheduler), 120, 0.05)
        ready_at = time.monotonic()
        run.cpu.mark("processStartToReady")
        wait_until("the first bind", lambda: _all_bound(watch, 1, scheduler), 120, 0.05)
        run.cpu.mark("readyToFirstBind")
        done = wait_until(
            "all pods bound", lambda: _all_bound(watch, args.pods, scheduler), args.timeout, 0.2
        )
        run.cpu.mark("firstBindToAllBound")
        times = list(watch.bound.values())
        first = min(times, default=None)
        last = max(times, default=None)
        result["startup"] = {
            "complete": done,
            "bound": len(times),
            "processStartToReadySeconds": _rel(ready_at, start),
            "processStartToFirstBindSeconds": _rel(first, start),
            "processStartToAllBoundSeconds": _rel(last, start),
            "firstBindUnder10s": first is not None and first - start < 10,
            "podsPerSecondFirstBindToLastBind": _span_rate(times),
            "peakPodsPerSecond1s": peak_rate(times),
            "boundTimelineFromProcessStart": _timeline(times, start),
        }
        run.finish(result, watch, poller)
        return result


def _ready(scheduler: SchedulerProcess) -> bool:
    scheduler.alive()
    return scheduler.get("/readyz")[0] == 200


def _all_bound(watch: BindWatch, pods: int, scheduler: SchedulerProcess) -> bool:
    scheduler.alive()
    return len(watch.bound) >= pods


def _strip(created: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in created.items() if k not in ("start", "end")}


def _span_rate(times: Sequence[float]) -> float | None:
    if len(times) < 2:
        return None
    span = max(times) - min(times)
    return round(len(times) / span, 1) if span else None


def _timeline(times: Sequence[float], origin: float, step: float = 1.0) -> list[int]:
    """Pods bound by the end of each `step` seconds after `origin` (cumulative)."""
    if not times:
        return []
    ordered = sorted(t - origin for t in times)
    out, i, edge = [], 0, step
    while i < len(ordered):
        while i < len(ordered) and ordered[i] <= edge:
            i += 1
        out.append(i)
        edge += step
    return out


# --- the profiled child ---------------------------------------------------------------------------
def profiled_child(out: str, argv: Sequence[str]) -> int:
    """Run `vscheduler <argv>` in this process with cProfile on every thread; on exit, write the
    merged profile to `out` and a per-thread-group summary to `out`.txt."""
    from vscheduler import cli

    profiles: list[tuple[str, cProfile.Profile]] = []
    lock = threading.Lock()
    original = threading.Thread.run

    def run(self: threading.Thread) -> None:
        prof = cProfile.Profile()
        with lock:
            profiles.append((self.name, prof))
        prof.enable()
        try:
            original(self)
        finally:
            prof.disable()

    threading.Thread.run = run  # type: ignore[method-assign]
    main = cProfile.Profile()
    profiles.append(("main", main))
    main.enable()
    try:
        return cli.main(list(argv))
    finally:
        main.disable()
        _write_profiles(out, profiles)


def _write_profiles(out: str, profiles: list[tuple[str, cProfile.Profile]]) -> None:
    groups: dict[str, pstats.Stats] = {}
    merged: pstats.Stats | None = None
    for name, prof in profiles:
        prof.create_stats()
        if not getattr(prof, "stats", None):
            continue
        group = re.sub(r"\d+", "N", name)
        if group in groups:
            groups[group].add(prof)
        else:
            groups[group] = pstats.Stats(prof)
        if merged is None:
            merged = pstats.Stats(prof)
        else:
            merged.add(prof)
    if merged is None:
        return
    merged.dump_stats(out)
    with open(f"{out}.txt", "w", encoding="utf-8") as handle:
        for group, stats in sorted(groups.items()):
            handle.write(f"==================== thread group {group}\n")
            stats.stream = handle  # type: ignore[attr-defined]
            stats.sort_stats("cumulative").print_stats(35)
            stats.sort_stats("tottime").print_stats(25)


# --- the command line -----------------------------------------------------------------------------
SCENARIOS: dict[str, Callable[[argparse.Namespace, Path], dict[str, Any]]] = {
    "throughput": throughput,
    "startup": startup,
}
DEFAULT_PODS = {"throughput": 2000, "startup": 10000}


def main(argv: Sequence[str] | None = None) -> int:
    """CLI."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--profiled-child"]:
        return profiled_child(argv[1], argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=(*SCENARIOS, "all"), default="throughput")
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument(
        "--pods", type=int, default=None, help="default: 2,000 (throughput), 10,000 (startup)"
    )
    parser.add_argument("--gang", type=int, default=10, help="pods per PodGroup (= minMember)")
    parser.add_argument("--threads", type=int, default=8, help="client threads creating objects")
    parser.add_argument("--period", type=float, default=1.0, help="--schedule-period (1)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for all bound")
    parser.add_argument(
        "--wait-for-controller",
        action="store_true",
        help="leave the nodes' not-ready taint to the controller-manager (slow, ~5 nodes/s)",
    )
    parser.add_argument(
        "--scheduler-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="an extra `vscheduler run` argument, e.g. --scheduler-arg=--bind-workers=64",
    )
    parser.add_argument("--profile", metavar="DIR", help="run the scheduler under cProfile")
    parser.add_argument("--keep", metavar="DIR", help="keep the scheduler logs in DIR")
    args = parser.parse_args(argv)
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    pods_flag = args.pods
    for name in names:
        args.current = name
        args.pods = pods_flag or DEFAULT_PODS[name]
        with _workdir(args.keep) as workdir:
            result = SCENARIOS[name](args, workdir)
        if args.profile:
            result["profile"] = str(Path(args.profile) / f"{name}.prof")
        print(json.dumps(result, indent=2), flush=True)
    return 0


@contextlib.contextmanager
def _workdir(keep: str | None) -> Iterator[Path]:
    if keep:
        path = Path(keep)
        path.mkdir(parents=True, exist_ok=True)
        yield Path(tempfile.mkdtemp(prefix="runtime-", dir=path))
        return
    with tempfile.TemporaryDirectory(prefix="vscheduler-bench-") as tmp:
        yield Path(tmp)


if __name__ == "__main__":
    sys.exit(main())
