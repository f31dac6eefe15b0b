"""A real Prometheus server for integration tests and benches, on 127.0.0.1.

    server = PrometheusServer(tmp_path / "prometheus", jobs={"node": True, "vscheduler": False})
    server.set_targets("node", [exporter.address])          # file_sd: may change while it runs
    server.start(history=exporter.history("node", start, end, 15))   # optional backfill
    server.query('up{job="node"}')                           # the result vector
    server.stop()                                            # idempotent; logs stay readable

The binary is `$PROMETHEUS`, else `prometheus` on PATH (`scripts/prometheus ensure` installs
Debian's package); `promtool` (same package) turns `history` into TSDB blocks before the start.
Each server has a throwaway config and data dir, a free port on loopback, scrape and evaluation
interval 1 s (settable), one scrape job per `jobs` entry (the value is `honor_labels`) whose
targets come from a `file_sd_configs` file, and `--web.enable-lifecycle` so `reload()` works. The
process runs in its own session, dies with its parent (PR_SET_PDEATHSIG) and logs to
`<workdir>/prometheus.log`, whose tail is in every error raised here.

Why a backfill: the default CPU query takes `rate(...[5m])`, which Prometheus divides by the whole
5 minutes, so a series younger than that reads as mostly busy (a node at 5% CPU reads 92% after
45 s, 49% after 5 minutes), and `avg_over_time(...[10m:30s])` keeps that skew for up to 15
minutes (integration/README.md has the measured curve). Tests that need settled numbers give
the exporter's past as history: Prometheus then holds, at its start, what it would hold after
scraping the nodes for that long.

It owns the Prometheus process and its files; it does not serve node series (exporter.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from integration.controlplane import free_port

SCRAPE_INTERVAL = "1s"
INSTALL_HINT = "run scripts/prometheus ensure (installs Debian's prometheus package)"


class PrometheusError(RuntimeError):
    """Prometheus could not be started or answered a query with an error."""


def find_binary(name: str = "prometheus") -> str:
    """The `prometheus` (or `promtool`) binary: `$PROMETHEUS`'s directory first, then PATH."""
    override = os.environ.get("PROMETHEUS")
    if override:
        candidate = override if name == "prometheus" else str(Path(override).parent / name)
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if found is None:
        raise PrometheusError(f"no `{name}` binary ($PROMETHEUS or PATH): {INSTALL_HINT}")
    return found


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class PrometheusServer:
    """One Prometheus process with a throwaway config and TSDB."""

    def __init__(
        self,
        workdir: Path,
        *,
        jobs: Mapping[str, bool],
        scrape_interval: str = SCRAPE_INTERVAL,
        start_timeout: float = 60.0,
    ) -> None:
        self.workdir = workdir
        self.jobs = dict(jobs)
        """Scrape job name -> honor_labels."""
        self.scrape_interval = scrape_interval
        self.start_timeout = start_timeout
        self.port = free_port()
        self._port_published = False
        self.log_path = workdir / "prometheus.log"
        self.data_dir = workdir / "data"
        self._proc: subprocess.Popen[bytes] | None = None
        self.startup_seconds: float | None = None
        self.backfill_seconds: float | None = None
        workdir.mkdir(parents=True, exist_ok=True)
        for job in self.jobs:
            self.set_targets(job, [])

    # -- configuration
    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>`: what a metrics block's `address` names. The port stays
        from the moment this is read, through restarts (a start then fails if it is taken)."""
        self._port_published = True
        return f"http://127.0.0.1:{self.port}"

    def _targets_file(self, job: str) -> Path:
        return self.workdir / f"targets-{job}.json"

    def set_targets(
        self, job: str, targets: Sequence[str], labels: Mapping[str, str] | None = None
    ) -> None:
        """The `host:port` targets of `job` (file_sd; a running server picks them up in about a
        second, atomically: the file is written aside and renamed)."""
        if job not in self.jobs:
            raise PrometheusError(f"no scrape job {job!r}; jobs: {', '.join(self.jobs)}")
        groups = [{"targets": list(targets), "labels": dict(labels or {})}] if targets else []
        path = self._targets_file(job)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(groups))
        tmp.replace(path)

    def _write_config(self) -> Path:
        lines = [
            "global:",
            f"  scrape_interval: {self.scrape_interval}",
            f"  evaluation_interval: {self.scrape_interval}",
            f"  scrape_timeout: {self.scrape_interval}",
            "scrape_configs:",
        ]
        for job, honor in self.jobs.items():
            lines += [
                f"- job_name: {json.dumps(job)}",
                f"  honor_labels: {'true' if honor else 'false'}",
                "  file_sd_configs:",
                f"  - files: [{json.dumps(str(self._targets_file(job)))}]",
                "    refresh_interval: 1s",
            ]
        path = self.workdir / "prometheus.yml"
        path.write_text("\n".join(lines) + "\n")
        return path

    # -- lifecycle
    def start(self, history: Iterable[str] = ()) -> PrometheusServer:
        """Write the config, turn `history` (OpenMetrics lines with timestamps, `# EOF` last)
        into blocks of the TSDB, start Prometheus and wait for `/-/ready`. A stopped server
        starts again on the same port and data (what it scraped before is kept)."""
        if self._proc is not None:
            raise PrometheusError("this Prometheus is running already")
        config = self._write_config()
        self.data_dir.mkdir(exist_ok=True)
        self._backfill(history)
        started = time.monotonic()
        for attempt in range(3):
            self._spawn(config)
            try:
                self._wait_ready()
                break
            except PrometheusError:
                self.stop()
                taken = "address already in use" in self.logs(20)
                if attempt == 2 or not taken or self._port_published:
                    raise
                self.port = free_port()
        self.startup_seconds = round(time.monotonic() - started, 3)
        return self

    def _backfill(self, history: Iterable[str]) -> None:
        lines = iter(history)
        first = next(lines, None)
        if first is None:
            return
        started = time.monotonic()
        source = self.workdir / "history.om"
        with source.open("w") as out:
            out.write(first + "\n")
            for line in lines:
                out.write(line + "\n")
        promtool = find_binary("promtool")
        proc = subprocess.run(
            [
                promtool,
                "tsdb",
                "create-blocks-from",
                "openmetrics",
                str(source),
                str(self.data_dir),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        if proc.returncode != 0:
            raise PrometheusError(
                f"promtool could not backfill {source}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
            )
        source.unlink()
        self.backfill_seconds = round(time.monotonic() - started, 3)

    def _spawn(self, config: Path) -> None:
        argv = [
            find_binary(),
            f"--config.file={config}",
            f"--storage.tsdb.path={self.data_dir}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--web.enable-lifecycle",
            "--storage.tsdb.retention.time=1d",
        ]
        with self.log_path.open("ab") as log:
            log.write(f"$ {' '.join(argv)}\n".encode())
            log.flush()
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                start_new_session=True,
                preexec_fn=_die_with_parent,  # noqa: PLW1509
            )

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self._proc is None or self._proc.poll() is not None:
                raise PrometheusError(f"prometheus exited while starting:\n{self.logs()}")
            if self._get("/-/ready", timeout=2)[0] == 200:
                return
            if time.monotonic() > deadline:
                raise PrometheusError(
                    f"prometheus not ready after {self.start_timeout:.0f}s:\n{self.logs()}"
                )
            time.sleep(0.1)

    @property
    def pid(self) -> int | None:
        """The process id while it runs."""
        return self._proc.pid if self.running() and self._proc is not None else None

    def running(self) -> bool:
        """Whether the process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def stop(self, grace: float = 15.0) -> None:
        """SIGTERM to its process group, SIGKILL after `grace` seconds. The files stay."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)

    def reload(self) -> None:
        """POST /-/reload (after changing the config by hand)."""
        status, body = self._request("/-/reload", data=b"")
        if status != 200:
            raise PrometheusError(f"reload answered {status}: {body[:500]}\n{self.logs()}")

    def logs(self, lines: int = 40) -> str:
        """The tail of its log."""
        if not self.log_path.exists():
            return "<no log>"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    # -- HTTP API
    def _request(
        self, path: str, *, data: bytes | None = None, timeout: float = 30.0
    ) -> tuple[int, str]:
        req = urllib.request.Request(self.url + path, data=data)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")
        except OSError as exc:
            return 0, str(exc)

    def _get(self, path: str, timeout: float = 30.0) -> tuple[int, str]:
        return self._request(path, timeout=timeout)

    def api(self, path: str, **params: str) -> Any:
        """GET `/api/v1/<path>?params`; the `data` of a success answer, else PrometheusError."""
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        status, body = self._get(f"/api/v1/{path}{query}")
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if status != 200 or not isinstance(answer, dict) or answer.get("status") != "success":
            raise PrometheusError(f"GET /api/v1/{path}{query} answered {status}: {body[:1000]}")
        return answer["data"]

    def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant query's result (a vector: `[{"metric": {...}, "value": [t, "v"]}]`)."""
        result: list[dict[str, Any]] = self.api("query", query=promql)["result"]
        return result

    def values(self, promql: str, label: str) -> dict[str, float]:
        """An instant query's vector as `{value of label: sample value}`."""
        return {r["metric"].get(label, ""): float(r["value"][1]) for r in self.query(promql)}

    def target_health(self, job: str) -> dict[str, str]:
        """`scrapeUrl -> health` (up, down, unknown) of the job's active targets."""
        targets = self.api("targets", state="active")["activeTargets"]
        return {t["scrapeUrl"]: t["health"] for t in targets if t["labels"].get("job") == job}
