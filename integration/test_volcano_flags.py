"""Volcano's Deployment arguments start `vscheduler run` against a real API server: it elects
itself, turns ready, binds a pod, and logs one warning for each flag that changes nothing here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from integration import harness

TIMEOUT = 60.0
POLICY = (
    Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "policies" / "volcano-helm.yaml"
)


def test_volcanos_chart_arguments_start_the_scheduler(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
) -> None:
    cluster.add_node("node-0", cpu="4", memory="8Gi")
    # Volcano's chart's arguments as they are, after the harness's own flags (the later flag
    # wins, so the bare --leader-elect turns election on); --listen-address stays the harness's
    # free port, and the first --scheduler-name the harness's (the test's own scheduler name).
    scheduler = start_scheduler(
        args=[
            "--logtostderr",
            f"--scheduler-conf={POLICY}",
            "--schedule-period=1s",
            "--enable-healthz=true",
            "--enable-metrics=true",
            "--node-worker-threads=20",
            "-v=3",
            "--leader-elect",
            "--kube-api-qps=2000",
            "--kube-api-burst=2000",
            "--healthz-address=:11251",
            "--percentage-nodes-to-find=100",
            "--default-queue=default",
            "--scheduler-name=volcano",
            "2>&1",
        ]
    )
    scheduler.wait_ready(TIMEOUT)
    harness.create(cluster, harness.pod("chart-args", "test"))
    harness.wait_for(
        "the pod bound", lambda: "chart-args" in harness.bound(cluster, "test"), TIMEOUT
    )
    assert scheduler.http("/livez") == (200, "ok")
    log = scheduler.log(400)
    for warning in (
        "vscheduler: warning: --healthz-address has no effect here",
        "vscheduler: warning: --node-worker-threads has no effect here",
        "vscheduler: warning: ignored the argument(s) 2>&1: a shell redirection",
        "vscheduler: warning: --scheduler-name: this version schedules the pods of one "
        f"scheduler name: '{scheduler.name}'; the pods of 'volcano' are left alone",
    ):
        assert log.count(warning) == 1, log
    assert "Traceback" not in log
