"""`run --dry-run` wires a scheduler that cannot write: a read-only client for everything, no
elector, the cycles' decisions to the recorder, Events to the log, and a leader gauge of 0."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from vscheduler.app import App
from vscheduler.clock import FixedClock
from vscheduler.runtime.decisions import DecisionRecorder, DryRunEvents
from vscheduler.runtime.settings import LeaderElection, Settings

CLOCK = FixedClock(dt.datetime(2026, 1, 1, tzinfo=dt.UTC))


def kubeconfig(tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }
    path.write_text(json.dumps(config))
    return path


@pytest.mark.timeout(20)
def test_a_dry_run_app_has_only_read_only_clients_no_elector_and_records_decisions(
    tmp_path: Path,
) -> None:
    settings = Settings(
        kubeconfig=str(kubeconfig(tmp_path)),
        listen_address="127.0.0.1:0",
        leader_election=LeaderElection(enabled=False),
        dry_run=True,
        decisions_file=str(tmp_path / "decisions.jsonl"),
    )
    app = App(settings, clock=CLOCK)
    try:
        assert app.api.read_only
        assert app.lease_api.read_only
        assert app.elector is None
        assert isinstance(app.recorder, DecisionRecorder)
        assert isinstance(app.events, DryRunEvents)
        assert "vscheduler_is_leader 0.0" in generate_latest(app.registry).decode()
    finally:
        app.shutdown()


@pytest.mark.timeout(20)
def test_a_scheduling_app_writes_through_its_client(tmp_path: Path) -> None:
    settings = Settings(
        kubeconfig=str(kubeconfig(tmp_path)),
        listen_address="127.0.0.1:0",
        leader_election=LeaderElection(enabled=False),
    )
    app = App(settings, clock=CLOCK)
    try:
        assert not app.api.read_only
        assert app.recorder is None
        assert app.events is app.writer
    finally:
        app.shutdown()
