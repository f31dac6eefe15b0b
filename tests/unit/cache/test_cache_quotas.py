"""The cache's snapshots carry ResourceQuotas as facts; a malformed one is a problem and closes
its namespace; an unchanged one is not converted again."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.informer.kinds import RESOURCE_QUOTA
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.resources import Resources

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def raw_quota(name: str, hard: dict[str, object], *, version: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": version},
        "spec": {"hard": hard},
        "status": {"hard": hard, "used": {"cpu": "1"}},
    }


@pytest.fixture
def cache() -> SchedulerCache:
    return SchedulerCache(clock=FixedClock(START))


def test_a_snapshot_carries_the_quotas_sorted_by_key(cache: SchedulerCache) -> None:
    cache.replace(RESOURCE_QUOTA, [raw_quota("mem", {"memory": "1Gi"}), raw_quota("cpu", {})])

    snap = cache.snapshot()

    assert [(q.key, q.hard, q.used) for q in snap.quotas] == [
        ("ns/cpu", Resources(), Resources()),
        ("ns/mem", Resources(memory=2**30), Resources()),
    ]
    assert len(snap.resource_quotas) == 2
    assert cache.problems() == {}


def test_a_malformed_quota_is_a_problem_and_kept_with_its_message(cache: SchedulerCache) -> None:
    cache.replace(RESOURCE_QUOTA, [raw_quota("cpu", {"cpu": "lots"})])

    assert cache.problems() == {
        "ResourceQuota ns/cpu": "ResourceQuota ns/cpu: status.hard.cpu: invalid quantity "
        "'lots': no digits"
    }
    [quota] = cache.snapshot().quotas
    assert quota.key == "ns/cpu"
    assert quota.problem == cache.problems()["ResourceQuota ns/cpu"]


def test_fixing_or_deleting_a_quota_updates_the_next_snapshot(cache: SchedulerCache) -> None:
    cache.apply(RESOURCE_QUOTA, WatchEvent("ADDED", raw_quota("cpu", {"cpu": "lots"})))
    assert cache.snapshot().quotas[0].problem

    fixed = raw_quota("cpu", {"cpu": "4"}, version="2")
    cache.apply(RESOURCE_QUOTA, WatchEvent("MODIFIED", fixed))
    [quota] = cache.snapshot().quotas
    assert (quota.problem, quota.hard, quota.used) == ("", Resources(cpu=4000), Resources(cpu=1000))
    assert cache.problems() == {}

    cache.apply(RESOURCE_QUOTA, WatchEvent("DELETED", fixed))
    assert cache.snapshot().quotas == ()


def test_an_unchanged_quota_is_the_same_fact_in_every_snapshot(cache: SchedulerCache) -> None:
    cache.replace(RESOURCE_QUOTA, [raw_quota("cpu", {"cpu": "4"})])
    first = cache.snapshot().quotas

    cache.replace(RESOURCE_QUOTA, [raw_quota("cpu", {"cpu": "4"})])  # same resourceVersion

    assert cache.snapshot().quotas is first
