"""The cache leaves out the PodGroups of other schedulers: named by their pods and none of ours.

Running beside Volcano, a Volcano gang's pods (`schedulerName: volcano`) name its PodGroup; that
PodGroup is Volcano's to admit and report on, so it is in no snapshot (hence no enqueue, no status
write, no metric) and in no problem report. The counts follow every pod event, held or not.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.informer.kinds import POD, PODGROUP
from vscheduler.informer.ports import WatchEvent

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def raw_pod(
    name: str,
    *,
    group: str | None = "pg",
    scheduler: str | None = "vscheduler",
    node: str | None = None,
    phase: str = "Pending",
    key: str = "scheduling.k8s.io/group-name",
    version: str = "1",
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "ns",
        "uid": f"uid-{name}",
        "resourceVersion": version,
    }
    if group is not None:
        meta["annotations"] = {key: group}
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": phase},
    }


def raw_podgroup(name: str = "pg", min_member: object = 2) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"minMember": min_member, "queue": "default"},
        "status": {"phase": "Running"},
    }


def volcano_pod(name: str, *, phase: str = "Running", **fields: Any) -> dict[str, Any]:
    """A pod of a Volcano gang, placed by Volcano on n1."""
    return raw_pod(name, scheduler="volcano", node="n1", phase=phase, **fields)


@pytest.fixture
def cache() -> SchedulerCache:
    cache = SchedulerCache(clock=FixedClock(START))
    cache.replace(PODGROUP, [raw_podgroup("pg"), raw_podgroup("other")])
    return cache


def job_keys(cache: SchedulerCache) -> list[str]:
    return list(cache.snapshot().jobs)


def test_a_podgroup_named_only_by_another_schedulers_pods_is_left_out_of_the_snapshot(
    cache: SchedulerCache,
) -> None:
    cache.replace(POD, [volcano_pod("v0"), volcano_pod("v1")])
    snap = cache.snapshot()
    assert list(snap.jobs) == ["ns/other"]
    assert [(t.name, t.job) for t in snap.tasks.values()] == [("v0", ""), ("v1", "")]


def test_pending_pods_of_another_scheduler_also_make_their_podgroup_theirs(
    cache: SchedulerCache,
) -> None:
    cache.apply(POD, WatchEvent("ADDED", raw_pod("v0", scheduler="volcano")))
    snap = cache.snapshot()
    assert (list(snap.jobs), list(snap.tasks)) == (["ns/other"], [])


def test_volcanos_own_group_name_annotation_names_the_podgroup_too(cache: SchedulerCache) -> None:
    pod = volcano_pod("v0", key="scheduling.volcano.sh/group-name")
    cache.apply(POD, WatchEvent("ADDED", pod))
    assert job_keys(cache) == ["ns/other"]


def test_a_pod_without_a_scheduler_name_is_the_default_schedulers(cache: SchedulerCache) -> None:
    cache.apply(POD, WatchEvent("ADDED", raw_pod("d0", scheduler=None, node="n1")))
    assert job_keys(cache) == ["ns/other"]


def test_a_podgroup_named_by_one_of_our_pods_stays_ours_whoever_else_names_it(
    cache: SchedulerCache,
) -> None:
    cache.replace(POD, [volcano_pod("v0"), raw_pod("ours")])
    assert job_keys(cache) == ["ns/other", "ns/pg"]


def test_a_podgroup_no_pod_names_is_ours(cache: SchedulerCache) -> None:
    cache.replace(POD, [volcano_pod("v0", group=None)])
    assert job_keys(cache) == ["ns/other", "ns/pg"]


def test_a_finished_pod_of_another_scheduler_still_names_its_podgroup(
    cache: SchedulerCache,
) -> None:
    cache.apply(POD, WatchEvent("ADDED", volcano_pod("v0", phase="Succeeded")))
    assert job_keys(cache) == ["ns/other"]


def test_the_podgroup_is_ours_again_once_the_last_foreign_pod_is_deleted(
    cache: SchedulerCache,
) -> None:
    cache.apply(POD, WatchEvent("ADDED", volcano_pod("v0")))
    cache.apply(POD, WatchEvent("ADDED", volcano_pod("v1")))
    cache.apply(POD, WatchEvent("DELETED", volcano_pod("v0")))
    assert job_keys(cache) == ["ns/other"]
    cache.apply(POD, WatchEvent("DELETED", volcano_pod("v1")))
    assert job_keys(cache) == ["ns/other", "ns/pg"]


def test_a_pod_that_changes_its_podgroup_moves_its_claim(cache: SchedulerCache) -> None:
    cache.apply(POD, WatchEvent("ADDED", volcano_pod("v0")))
    cache.apply(POD, WatchEvent("MODIFIED", volcano_pod("v0", group="other", version="2")))
    assert job_keys(cache) == ["ns/pg"]


def test_a_relist_forgets_the_claims_of_pods_no_longer_listed(cache: SchedulerCache) -> None:
    cache.apply(POD, WatchEvent("ADDED", volcano_pod("v0")))
    cache.apply(POD, WatchEvent("ADDED", raw_pod("p0", scheduler="volcano", group="other")))
    cache.replace(POD, [volcano_pod("v0")])
    assert job_keys(cache) == ["ns/other"]
    cache.replace(POD, [])
    assert job_keys(cache) == ["ns/other", "ns/pg"]


def test_a_change_of_ownership_is_a_change_the_loop_sees(cache: SchedulerCache) -> None:
    before = cache.generation
    cache.apply(POD, WatchEvent("ADDED", raw_pod("v0", scheduler="volcano")))
    after_foreign = cache.generation
    cache.apply(POD, WatchEvent("ADDED", raw_pod("v1", scheduler="volcano")))
    assert (after_foreign - before, cache.generation - after_foreign) == (1, 0)


def test_a_malformed_foreign_podgroup_is_not_reported_as_a_problem(cache: SchedulerCache) -> None:
    cache.replace(PODGROUP, [raw_podgroup("pg", min_member="two"), raw_podgroup("other", "x")])
    cache.apply(POD, WatchEvent("ADDED", volcano_pod("v0")))
    assert list(cache.problems()) == ["PodGroup ns/other"]
