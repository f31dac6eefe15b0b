"""Every metric family on the registry is fed by the component that owns its data.

A real cycle (the loop's `Scheduler` on a `SchedulerCache`, the default policy) and its effects
(the executor, with a fake writer) run once; afterwards every family has a sample, apart from
the few whose data only exists when something else happens, each named with the component that
feeds it and checked to be wired to that component. So "registered but never fed" cannot come
back unnoticed.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects.executor import EffectsExecutor
from vscheduler.informer.kinds import NODE, POD, PODGROUP, QUEUE
from vscheduler.obs.metrics import SchedulerMetrics
from vscheduler.runtime.policy import PolicyHolder
from vscheduler.runtime.scheduler import Scheduler
from vscheduler.testing.writers import RecordingWriter

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[3]
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
CREATED = "2025-12-31T23:59:50Z"
"""Ten seconds before the cycle."""
WAIT = 5.0
GPU = "nvidia.com/gpu"
GPU_POD = {"cpu": "1", GPU: "1"}
"""A scalar resource too, so the queues' `_scalar_resources` gauges have series."""

FED_ELSEWHERE: Mapping[str, tuple[str, str]] = {
    "vscheduler_plugin_errors": ("vscheduler/obs/metrics.py", "self.observe_plugin_error("),
    "vscheduler_evictions": ("vscheduler/app.py", "self.metrics.observe_eviction("),
    "vscheduler_informer_events": ("vscheduler/app.py", "observe=self.metrics.observe_informer"),
    "vscheduler_informer_relists": ("vscheduler/app.py", "observe=self.metrics.observe_informer"),
    "vscheduler_usage_collection_failures": (
        "vscheduler/obs/usage.py",
        "self._observer.observe_usage_failure(",
    ),
}
"""Families with a sample only once their event happened (a plugin raised, a pod was evicted,
an informer listed, a usage collection failed): the file and the call that feeds each."""


def meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "uid": f"uid-{name}", "creationTimestamp": CREATED, **extra}


def gang_pod(name: str) -> dict[str, Any]:
    return {
        "metadata": meta(name, namespace="ns", annotations={"scheduling.k8s.io/group-name": "pg1"}),
        "spec": {
            "schedulerName": "vscheduler",
            "containers": [{"name": "c", "resources": {"requests": GPU_POD}}],
        },
        "status": {"phase": "Pending"},
    }


def cluster(clock: FixedClock) -> SchedulerCache:
    cache = SchedulerCache(clock=clock)
    cache.replace(
        NODE,
        [{"metadata": meta("n1"), "status": {"allocatable": {"cpu": "4", "pods": "10", GPU: "2"}}}],
    )
    cache.replace(
        QUEUE,
        [
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "Queue",
                "metadata": meta("default"),
                "spec": {"weight": 1, "capability": {"cpu": "8", GPU: "2"}},
                "status": {"state": "Open"},
            }
        ],
    )
    cache.replace(
        PODGROUP,
        [
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": meta("pg1", namespace="ns"),
                # minResources: the queue's inqueue figure holds a scalar resource
                "spec": {"minMember": 2, "queue": "default", "minResources": GPU_POD},
                "status": {"phase": "Inqueue"},
            }
        ],
    )
    cache.replace(POD, [gang_pod("p1"), gang_pod("p2")])
    return cache


def run_a_cycle_and_its_effects() -> tuple[CollectorRegistry, RecordingWriter]:
    registry = CollectorRegistry()
    metrics = SchedulerMetrics(registry)
    clock = FixedClock(START)
    cache = cluster(clock)
    writer = RecordingWriter()
    effects = EffectsExecutor(
        writer,
        cache,
        clock=clock,
        workers=2,
        on_outcome=metrics.observe_effect,
        on_duration=metrics.observe_duration,
    )
    try:
        scheduler = Scheduler(
            cache=cache,
            policy=PolicyHolder(),
            effects=effects,
            clock=clock,
            observer=metrics,
            is_synced=lambda: True,
        )
        assert scheduler.run_once() is not None
        assert effects.drain(WAIT)
    finally:
        effects.close()
    return registry, writer


def test_after_one_cycle_and_its_effects_every_family_has_a_sample() -> None:
    registry, writer = run_a_cycle_and_its_effects()

    assert {"bind ns/p1 n1", "bind ns/p2 n1", "status ns/pg1 Running"} <= set(writer.calls)
    empty = sorted(
        family.name
        for family in registry.collect()
        if not family.samples and family.name not in FED_ELSEWHERE
    )
    assert empty == []


def test_the_cycle_feeds_plugin_task_job_and_bind_timings() -> None:
    registry, _ = run_a_cycle_and_its_effects()

    def count(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name + "_count", labels)

    for on_session in ("OnSessionOpen", "OnSessionClose"):
        plugin = {"plugin": "proportion", "OnSession": on_session}
        assert count("vscheduler_plugin_scheduling_latency_milliseconds", **plugin) == 1
    assert count("vscheduler_bind_duration_seconds") == 2
    assert count("vscheduler_task_scheduling_latency_milliseconds") == 2
    assert registry.get_sample_value(
        "vscheduler_task_scheduling_latency_milliseconds_sum"
    ) == pytest.approx(20_000)
    assert count("vscheduler_e2e_job_scheduling_latency_milliseconds") == 1
    assert registry.get_sample_value(
        "vscheduler_e2e_job_scheduling_latency_milliseconds_sum"
    ) == pytest.approx(10_000)


@pytest.mark.parametrize("family", sorted(FED_ELSEWHERE))
def test_a_family_fed_only_by_its_event_is_wired_to_the_component_that_sees_it(
    family: str,
) -> None:
    path, call = FED_ELSEWHERE[family]
    registry = CollectorRegistry()
    SchedulerMetrics(registry)

    assert family in {f.name for f in registry.collect()}
    assert re.search(re.escape(call), (ROOT / path).read_text(encoding="utf-8"))
