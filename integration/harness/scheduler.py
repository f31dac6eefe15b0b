"""The scheduler under test: one `python -m vscheduler run` process, and its metrics.

Owns: `Scheduler` (started exactly as a user would start it, on its own /metrics port, its log
kept for failure messages; `http`, `wait_ready`, `stop`), `metric` (a sample read from
Prometheus text) and `scrape` (one from the scheduler's /metrics).
Must not: create cluster objects (`objects`).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from integration.controlplane import REPO_ROOT, free_port
from integration.harness.clusters import Cluster, lease_namespace_of, scheduler_name_of, scoped_args
from integration.harness.waiting import wait_for


class Scheduler:
    """One `vscheduler run` process against the test cluster."""

    def __init__(
        self,
        cp: Cluster,
        workdir: Path,
        *,
        name: str = "vscheduler",
        args: Sequence[str] = (),
        leader_elect: bool = False,
        identity: str = "",
    ) -> None:
        # On a shared cluster (kind, existing) the names are the test's own (see RemoteCluster).
        name, args = scheduler_name_of(cp, name), scoped_args(cp, args)
        self.cp, self.name = cp, name
        self.port = free_port()
        self.log_path = workdir / f"vscheduler-{identity or name}-{self.port}.log"
        argv = [
            sys.executable,
            "-m",
            "vscheduler",
            "run",
            f"--kubeconfig={cp.kubeconfig_path}",
            f"--scheduler-name={name}",
            f"--listen-address=127.0.0.1:{self.port}",
            "--schedule-period=0.5",
            f"--leader-elect={'true' if leader_elect else 'false'}",
            f"--leader-elect-resource-namespace={lease_namespace_of(cp)}",
            *([f"--leader-elect-identity={identity}"] if identity else []),
            *args,
        ]
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            argv, stdout=self._log, stderr=subprocess.STDOUT, cwd=REPO_ROOT, start_new_session=True
        )

    def http(self, path: str) -> tuple[int, str]:
        """GET one of the observability endpoints."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=2) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except OSError:
            return 0, ""

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Until /readyz answers 200."""
        wait_for(
            f"{self.name} /readyz", lambda: self.alive() and self.http("/readyz")[0] == 200, timeout
        )

    def alive(self) -> bool:
        """The process is running (raises with its log if it died)."""
        if self.proc.poll() is not None:
            raise AssertionError(f"vscheduler exited with {self.proc.returncode}:\n{self.log()}")
        return True

    def log(self, lines: int = 60) -> str:
        """The tail of its log."""
        if not self._log.closed:
            self._log.flush()
        return "\n".join(self.log_path.read_text().splitlines()[-lines:])

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        """Signal it and wait for the exit code (SIGKILL after `timeout`)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


def metric(text: str, sample: str, **labels: str) -> float | None:
    """The sum of the samples named `sample` (e.g. `vscheduler_pods_bound_total`,
    `..._count`) whose labels include `labels`, in Prometheus text `text`; None when none is
    there."""
    from prometheus_client.parser import text_string_to_metric_families

    found: float | None = None
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
                found = (found or 0.0) + s.value
    return found


def scrape(scheduler: Scheduler, sample: str, **labels: str) -> float | None:
    """`metric` over the scheduler's current /metrics (None when it does not answer 200)."""
    status, text = scheduler.http("/metrics")
    return metric(text, sample, **labels) if status == 200 else None
