"""Whose PodGroup it is, from the pods naming it: what a pod claims, and the snapshot's jobs."""

from __future__ import annotations

from typing import Any

import pytest

from vscheduler.convert.files import SourcedObject
from vscheduler.convert.ownership import GroupClaims, foreign_groups, group_claim
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.model.facts import JobFacts

VOLCANO = "scheduling.volcano.sh/v1beta1"


def pod(
    name: str,
    *,
    group: str | None = "pg",
    scheduler: str = "vscheduler",
    node: str | None = None,
    namespace: str = "team-a",
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if group is not None:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    spec: dict[str, Any] = {"schedulerName": scheduler, "containers": [{"name": "c"}]}
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def podgroup(name: str = "pg") -> dict[str, Any]:
    return {
        "apiVersion": VOLCANO,
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": {"minMember": 2, "queue": "default"},
        "status": {"phase": "Running"},
    }


def sourced(*objects: dict[str, Any]) -> list[SourcedObject]:
    return [SourcedObject(f"cluster.yaml#{i}", o) for i, o in enumerate(objects, start=1)]


# --- what one pod claims -------------------------------------------------------------------------
def test_a_pod_claims_the_podgroup_its_annotation_names_with_whose_pod_it_is() -> None:
    assert group_claim(pod("a"), "vscheduler") == ("team-a/pg", True)
    assert group_claim(pod("a", scheduler="volcano"), "vscheduler") == ("team-a/pg", False)


def test_the_kubernetes_annotation_wins_over_volcanos_and_an_empty_one_is_skipped() -> None:
    raw = pod("a", group=None)
    raw["metadata"]["annotations"] = {
        "scheduling.k8s.io/group-name": "",
        "scheduling.volcano.sh/group-name": "vc",
    }
    assert group_claim(raw, "vscheduler") == ("team-a/vc", True)
    raw["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "k8s"
    assert group_claim(raw, "vscheduler") == ("team-a/k8s", True)


def test_a_pod_without_scheduler_name_or_namespace_reads_as_kubernetes_defaults() -> None:
    raw = pod("a", scheduler="")
    del raw["metadata"]["namespace"]
    assert group_claim(raw, "default-scheduler") == ("default/pg", True)


@pytest.mark.parametrize(
    "metadata",
    [
        None,
        {"name": "a"},
        {"name": "a", "annotations": ["scheduling.k8s.io/group-name"]},
        {"name": "a", "annotations": {"scheduling.k8s.io/group-name": 7}},
        {"name": "a", "namespace": 3, "annotations": {"scheduling.k8s.io/group-name": "pg"}},
    ],
    ids=["no metadata", "no annotations", "annotations a list", "a number", "bad namespace"],
)
def test_a_pod_whose_group_name_does_not_read_claims_nothing(metadata: object) -> None:
    assert group_claim({"metadata": metadata, "spec": "junk"}, "vscheduler") is None


def test_foreign_groups_are_named_by_other_schedulers_pods_and_by_none_of_ours() -> None:
    claims = [("ns/a", False), ("ns/b", False), ("ns/b", True), None, ("ns/c", True)]
    assert foreign_groups(claims) == {"ns/a"}


def test_claims_kept_pod_by_pod_say_when_the_foreign_set_changes() -> None:
    claims = GroupClaims()
    steps = [
        claims.claim("v0", ("ns/pg", False)),
        claims.claim("v1", ("ns/pg", False)),
        claims.claim("ours", ("ns/pg", True)),
        claims.claim("ours", None),
        claims.claim("v0", None),
        claims.claim("v1", ("ns/other", False)),
    ]
    assert steps == [True, False, True, True, False, True]
    assert set(claims.foreign) == {"ns/other"}


def test_keep_ours_leaves_the_foreign_jobs_out_in_order() -> None:
    claims = GroupClaims()
    claims.claim("v0", ("ns/b", False))
    jobs = tuple(JobFacts(uid=n, namespace="ns", name=n) for n in ("a", "b", "c"))
    assert list(claims.keep_ours(jobs)) == ["ns/a", "ns/c"]


def test_keep_ours_hands_out_one_mapping_until_the_jobs_or_the_foreign_set_change() -> None:
    claims = GroupClaims()
    jobs = tuple(JobFacts(uid=n, namespace="ns", name=n) for n in ("a", "b"))
    first = claims.keep_ours(jobs)
    assert claims.keep_ours(jobs) is first
    claims.claim("v0", ("ns/b", False))
    second = claims.keep_ours(jobs)
    assert (list(first), list(second)) == (["ns/a", "ns/b"], ["ns/a"])
    assert list(claims.keep_ours(jobs[:1])) == ["ns/a"]
    assert claims.keep_ours(jobs[:1]) is not second


# --- the snapshot -------------------------------------------------------------------------------
def test_a_snapshot_leaves_out_a_podgroup_only_other_schedulers_pods_name() -> None:
    snap = build_snapshot(
        sourced(
            podgroup("pg"),
            pod("v0", scheduler="volcano", node="n1"),
            pod("v1", scheduler="volcano"),
            podgroup("mine"),
            pod("m0", group="mine"),
        )
    )
    assert list(snap.jobs) == ["team-a/mine"]
    assert [(t.name, t.job) for t in snap.tasks.values()] == [("v0", ""), ("m0", "team-a/mine")]


def test_a_snapshot_keeps_a_podgroup_one_of_our_pods_names_and_one_no_pod_names() -> None:
    snap = build_snapshot(
        sourced(
            podgroup("shared"),
            pod("v0", group="shared", scheduler="volcano", node="n1"),
            pod("m0", group="shared"),
            podgroup("empty"),
        )
    )
    assert list(snap.jobs) == ["team-a/shared", "team-a/empty"]
