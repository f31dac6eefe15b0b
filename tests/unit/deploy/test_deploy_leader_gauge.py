"""`vscheduler_is_leader`, which the VSchedulerNoLeader alert sums over the replicas: 1 from the
start when leader election is off (that replica always schedules), 0 until the Lease is won when
it is on. The App is only built here: nothing is started and no API server is contacted."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from vscheduler.app import App
from vscheduler.clock import FixedClock
from vscheduler.runtime.settings import LeaderElection, Settings


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


def built_app(tmp_path: Path, *, elect: bool) -> App:
    settings = Settings(
        kubeconfig=str(kubeconfig(tmp_path)),
        listen_address="127.0.0.1:0",
        leader_election=LeaderElection(enabled=elect),
    )
    return App(settings, clock=FixedClock(dt.datetime(2024, 5, 1, tzinfo=dt.UTC)))


@pytest.mark.timeout(20)
def test_a_replica_without_leader_election_reports_itself_leader_from_the_start(
    tmp_path: Path,
) -> None:
    app = built_app(tmp_path, elect=False)
    assert app.registry.get_sample_value("vscheduler_is_leader") == 1.0


@pytest.mark.timeout(20)
def test_a_replica_with_leader_election_reports_no_leadership_before_it_wins_the_lease(
    tmp_path: Path,
) -> None:
    app = built_app(tmp_path, elect=True)
    assert app.registry.get_sample_value("vscheduler_is_leader") == 0.0
