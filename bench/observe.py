"""What the benchmarks measure: binds as a watch sees them, the scheduler process with its log
and metrics, and the CPU time of every process.

Owns: `BindWatch` (one metadata-only watch of bound, or Running, pods), `SchedulerProcess` (a
`vscheduler run` subprocess, its /metrics and the cycles in its log), `MetricsPoller`, `CpuMeter`
(per-phase CPU seconds from /proc, the API server's request durations), `wait_until`,
`peak_rate`.
Must not: create cluster objects (`cluster`) or decide what a scenario reports (`runtime`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.apiclient import METADATA_ONLY, Api
from bench.cluster import NAMESPACE, SCHEDULER
from integration.controlplane import REPO_ROOT, ControlPlaneError, LocalControlPlane, free_port

_CYCLE_LINE = re.compile(
    r"^(\S+) +\w+ +\S+: cycle (\d+): (\d+) bound, (\d+) evicted, (\d+) pending in ([\d.]+)s"
)
_BOUND_LINE = re.compile(r"^(\S+) +\w+ +\S+: bound \S+ to \S+")
_METRIC_LINE = re.compile(r"^(vscheduler_[a-z_]+)(\{[^}]*\})? ([0-9.eE+-]+)$")
_APISERVER_DURATION = re.compile(
    r"^apiserver_request_duration_seconds_(count|sum)\{([^}]*)\} ([0-9.eE+-]+)$"
)
_WATCH_EVENTS = re.compile(r"^apiserver_watch_events_(total|sizes_sum)\{([^}]*)\} ([0-9.eE+-]+)$")
_TERMINATED = re.compile(r"^apiserver_terminated_watchers_total\{([^}]*)\} ([0-9.eE+-]+)$")
_LONGRUNNING = re.compile(r"^apiserver_longrunning_requests\{([^}]*)\} ([0-9.eE+-]+)$")
_LABEL = re.compile(r'(\w+)="([^"]*)"')
_TICK = os.sysconf("SC_CLK_TCK")


class BindWatch:
    """A metadata-only watch of the namespace's bound pods: when each was first seen bound.
    With another field selector, of the pods it selects (`status.phase=Running`: when each was
    first seen Running; a pod coming to match a watch's selector comes as ADDED)."""

    def __init__(self, api: Api, selector: str = "spec.nodeName!=") -> None:
        self._api = api
        self._selector = selector
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
            "fieldSelector": self._selector,
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
    this process (from /proc), the API server's own count and mean latency of each kind of
    request (apiserver_request_duration_seconds; WATCH excluded), and the watch events it sent,
    all watchers together, by resource (`EVENTS resource`: count and bytes), and the watchers it
    closed for not reading their events fast enough (`TERMINATED resource`:
    apiserver_terminated_watchers_total); at each mark, the watches open by resource
    (`watches`, apiserver_longrunning_requests)."""

    def __init__(self, cp: LocalControlPlane, api: Api) -> None:
        self.api = api
        self.pids = {name: proc.popen.pid for name, proc in cp.procs.items()}
        self.marks: list[tuple[str, dict[str, float], dict[str, tuple[float, float]]]] = []
        self.watches: dict[str, dict[str, int]] = {}
        """Per mark, the watches open on the API server by resource (every client's)."""

    def mark(self, phase: str) -> None:
        """Record the totals now; a phase's usage is the difference to the previous mark."""
        now: dict[str, float] = {name: process_cpu(pid) for name, pid in self.pids.items()}
        times = os.times()
        now["bench-client"] = times.user + times.system
        requests, self.watches[phase] = self._requests()
        self.marks.append((phase, now, requests))

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
                    if key.startswith("EVENTS "):
                        rows[key] = {"count": int(n), "bytes": int(spent)}
                    elif key.startswith("TERMINATED "):
                        rows[key] = {"count": int(n)}
                    else:
                        rows[key] = {"count": int(n), "meanMs": round(spent / n * 1000, 1)}
            out[phase] = rows
        return out

    def counters(self) -> dict[str, tuple[float, float]]:
        """The API server's counters now, unmarked: {"VERB resource[/subresource]": (count,
        seconds)}, with the `EVENTS` and `TERMINATED` rows `requests` reads."""
        return self._requests()[0]

    def _requests(self) -> tuple[dict[str, tuple[float, float]], dict[str, int]]:
        """The counters `requests` differences, and the watches open now by resource."""
        try:
            conn = self.api.connection(timeout=30)
            conn.request("GET", "/metrics", headers=self.api.headers("text/plain"))
            response = conn.getresponse()
            status, text = response.status, response.read().decode()
            conn.close()
        except (OSError, http.client.HTTPException):
            return {}, {}
        if status != 200:
            return {}, {}
        found: dict[str, list[float]] = {}
        watches: dict[str, int] = {}
        for line in text.splitlines():
            o = _LONGRUNNING.match(line)
            if o and 'verb="WATCH"' in o.group(1):
                resource = dict(_LABEL.findall(o.group(1))).get("resource", "")
                watches[resource] = watches.get(resource, 0) + int(float(o.group(2)))
                continue
            t = _TERMINATED.match(line)
            if t:
                resource = dict(_LABEL.findall(t.group(1))).get("resource", "")
                found.setdefault(f"TERMINATED {resource}", [0.0, 0.0])[0] += float(t.group(2))
                continue
            w = _WATCH_EVENTS.match(line)
            if w:
                labels = dict(_LABEL.findall(w.group(2)))
                slot = found.setdefault(f"EVENTS {labels.get('resource')}", [0.0, 0.0])
                slot[0 if w.group(1) == "total" else 1] += float(w.group(3))
                continue
            m = _APISERVER_DURATION.match(line)
            if not m or 'verb="WATCH"' in m.group(2):
                continue
            labels = dict(_LABEL.findall(m.group(2)))
            key = f"{labels.get('verb')} {labels.get('resource')}"
            if labels.get("subresource"):
                key += f"/{labels['subresource']}"
            slot = found.setdefault(key, [0.0, 0.0])
            slot[0 if m.group(1) == "count" else 1] += float(m.group(3))
        return {k: (v[0], v[1]) for k, v in found.items()}, {
            k: n for k, n in sorted(watches.items()) if n
        }


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of process `pid`, from /proc (0.0 once it is gone)."""
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
            print(f"bench: timed out waiting for {what}", file=sys.stderr)
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
