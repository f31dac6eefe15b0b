"""The runtime tells the cluster: a QuantityClamped Warning Event on each object read at the
ceiling (once per message), an UnusualValue one on a value read as Volcano reads it, and
SchedulingCyclesFailing / SchedulingCyclesRecovered on the scheduler's Lease. The App is only
built here: no API server is contacted."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, cast

import pytest

from vscheduler.app import App, ProblemReporter
from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects.ports import ObjectRef
from vscheduler.informer.kinds import NODE, POD, QUEUE
from vscheduler.kube.writers import KubeWriter
from vscheduler.runtime.settings import LeaderElection, Settings

CLOCK = FixedClock(dt.datetime(2026, 1, 1, tzinfo=dt.UTC))


class Writer:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str, str, str, str]] = []

    def record_event(self, ref: ObjectRef, type_: str, reason: str, message: str) -> None:
        self.events.append((ref.kind, ref.namespace, ref.name, type_, reason, message))


def raw_pod(cpu: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "huge", "namespace": "ns", "uid": "uid-huge"},
        "spec": {
            "schedulerName": "vscheduler",
            "containers": [{"name": "m", "resources": {"requests": {"cpu": cpu}}}],
        },
        "status": {"phase": "Pending"},
    }


def test_each_clamped_object_gets_one_quantity_clamped_event_per_message() -> None:
    cache = SchedulerCache(clock=CLOCK)
    writer = Writer()
    reporter = ProblemReporter(cache, cast(KubeWriter, writer))
    cache.replace(NODE, [{"metadata": {"name": "big"}, "status": {"allocatable": {"cpu": "1e18"}}}])
    cache.replace(POD, [raw_pod("1e16")])
    reporter.report()
    reporter.report()
    assert [(e[0], e[1], e[2], e[3], e[4]) for e in writer.events] == [
        ("Node", "", "big", "Warning", "QuantityClamped"),
        ("Pod", "ns", "huge", "Warning", "QuantityClamped"),
    ]
    assert writer.events[1][5].startswith(
        "Pod ns/huge: spec.containers[*].resources.requests.cpu: 1e16 is above"
    )
    cache.replace(POD, [raw_pod("1")])
    reporter.report()
    cache.replace(POD, [raw_pod("1e17")])
    reporter.report()
    assert len(writer.events) == 3
    assert "1e17 is above" in writer.events[2][5]


def test_a_queue_of_weight_0_gets_one_unusual_value_event() -> None:
    cache = SchedulerCache(clock=CLOCK)
    writer = Writer()
    reporter = ProblemReporter(cache, cast(KubeWriter, writer))
    cache.replace(QUEUE, [{"metadata": {"name": "zero"}, "spec": {"weight": 0}}])
    reporter.report()
    reporter.report()
    assert writer.events == [
        (
            "Queue",
            "",
            "zero",
            "Warning",
            "UnusualValue",
            "Queue zero: spec.weight: 0 is read as 1, as Volcano's admission sets it (a queue's"
            " share of the cluster is in proportion to its weight)",
        )
    ]


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
def test_a_failing_streak_is_told_on_the_schedulers_lease_once_each_way(tmp_path: Path) -> None:
    settings = Settings(
        kubeconfig=str(kubeconfig(tmp_path)),
        listen_address="127.0.0.1:0",
        unready_after_failed_cycles=2,
        leader_election=LeaderElection(
            enabled=False, resource_name="sched", resource_namespace="ops", identity="replica-1"
        ),
    )
    app = App(settings, clock=CLOCK)
    writer = Writer()
    app.writer = cast(KubeWriter, writer)
    for _ in range(3):
        app.health.failed("OverflowError: too large")
    app.health.succeeded()
    assert writer.events == [
        (
            "Lease",
            "ops",
            "sched",
            "Warning",
            "SchedulingCyclesFailing",
            "replica-1: 2 consecutive scheduling cycles failed; the last with "
            "OverflowError: too large",
        ),
        (
            "Lease",
            "ops",
            "sched",
            "Normal",
            "SchedulingCyclesRecovered",
            "replica-1: scheduling cycles run again after 3 consecutive failed cycles",
        ),
    ]
    assert app.registry.get_sample_value("vscheduler_consecutive_failed_cycles") == 0
