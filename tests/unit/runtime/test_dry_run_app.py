"""`run --dry-run` wires a scheduler that cannot write: a read-only client for everything, no
elector, the cycles' decisions to the recorder, Events to the log, and a leader gauge of 0.
And `run` pauses Python's cyclic collector while the first lists come in, resuming it (the heap
frozen) once every kind has synced, after `FIRST_LISTS_GC_PAUSE` at most, or on a shutdown
before that."""

from __future__ import annotations

import datetime as dt
import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from vscheduler.app import FIRST_LISTS_GC_PAUSE, App
from vscheduler.clock import FixedClock
from vscheduler.informer.kinds import CLUSTER_KINDS
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
        assert app.writer._protobuf
        assert app.lister._protobuf_watch
    finally:
        app.shutdown()


@pytest.mark.timeout(20)
def test_an_app_told_json_watches_pods_and_writes_in_json(tmp_path: Path) -> None:
    settings = Settings(
        kubeconfig=str(kubeconfig(tmp_path)),
        listen_address="127.0.0.1:0",
        leader_election=LeaderElection(enabled=False),
        content_type="application/json",
    )
    app = App(settings, clock=CLOCK)
    try:
        assert not app.writer._protobuf
        assert not app.lister._protobuf_watch
    finally:
        app.shutdown()


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    settings = Settings(
        kubeconfig=str(kubeconfig(tmp_path)),
        listen_address="127.0.0.1:0",
        leader_election=LeaderElection(enabled=False),
    )
    made = App(settings, clock=FixedClock(dt.datetime(2026, 1, 1, tzinfo=dt.UTC)))
    try:
        yield made
    finally:
        made.shutdown()
        gc.enable()


@pytest.mark.timeout(20)
def test_the_collector_is_paused_until_every_kind_has_synced(app: App) -> None:
    app._pause_collector()
    assert not gc.isenabled()
    for kind in CLUSTER_KINDS[:-1]:
        app.gate.mark_synced(kind)
        app._before_cycle()
        assert not gc.isenabled()
    app.gate.mark_synced(CLUSTER_KINDS[-1])
    app._before_cycle()
    assert gc.isenabled()


@pytest.mark.timeout(20)
def test_the_collector_resumes_after_the_longest_pause_though_a_list_is_still_missing(
    app: App,
) -> None:
    assert isinstance(app.clock, FixedClock)
    app._pause_collector()
    app.clock.advance(FIRST_LISTS_GC_PAUSE)
    app._before_cycle()
    assert not gc.isenabled()
    app.clock.advance(0.5)
    app._before_cycle()
    assert gc.isenabled()
    assert not app.gate.is_synced()


@pytest.mark.timeout(20)
def test_a_shutdown_before_the_first_lists_resumes_the_collector(app: App) -> None:
    app._pause_collector()
    app.shutdown()
    assert gc.isenabled()


@pytest.mark.timeout(20)
def test_a_requested_stop_raises_the_change_flag_the_loop_waits_on(tmp_path: Path) -> None:
    """The loop waits on the cache's change flag in slices of a second; `request_stop` (what the
    signal handlers call) raises it with the stop, so the loop ends at once, not at the slice's
    end."""
    settings = Settings(
        kubeconfig=str(kubeconfig(tmp_path)),
        listen_address="127.0.0.1:0",
        leader_election=LeaderElection(enabled=False),
        dry_run=True,
    )
    app = App(settings, clock=CLOCK)
    try:
        app.cache.changed.clear()
        app.request_stop()
        assert app.stop.is_set()
        assert app.cache.changed.is_set()
    finally:
        app.shutdown()
