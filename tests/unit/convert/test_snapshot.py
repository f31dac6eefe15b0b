from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from vscheduler.convert.files import SourcedObject
from vscheduler.convert.misc import convert_node_usage, convert_priority_class
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.errors import InputError, QuantityError
from vscheduler.model.facts import NodeUsage, PriorityClassFacts
from vscheduler.model.status import PodGroupPhase, TaskStatus

V1 = "v1"
VOLCANO = "scheduling.volcano.sh/v1beta1"


def obj(
    api_version: str, kind: str, name: str, namespace: str | None = None, **rest: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **rest}


def node(name: str) -> dict[str, Any]:
    return obj(V1, "Node", name, status={"allocatable": {"cpu": "4", "memory": "8Gi"}})


def pod(
    name: str, *, group: str | None = None, node_name: str | None = None, **spec: Any
) -> dict[str, Any]:
    raw = obj(V1, "Pod", name, "default")
    raw["metadata"]["uid"] = f"uid-{name}"
    if group:
        raw["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": group}
    raw["spec"] = {"schedulerName": "vscheduler", "containers": [{"name": "c"}], **spec}
    if node_name:
        raw["spec"]["nodeName"] = node_name
        raw["status"] = {"phase": "Running"}
    return raw


def priority_class(name: str, value: int, *, default: bool = False) -> dict[str, Any]:
    return obj("scheduling.k8s.io/v1", "PriorityClass", name, value=value, globalDefault=default)


def sourced(*objects: dict[str, Any]) -> list[SourcedObject]:
    return [SourcedObject(f"cluster.yaml#{i}", o) for i, o in enumerate(objects, start=1)]


def test_every_supported_kind_lands_in_the_snapshot() -> None:
    quota = obj(V1, "ResourceQuota", "rq", "default", spec={"hard": {"cpu": "10"}})
    pdb = obj("policy/v1", "PodDisruptionBudget", "pdb", "default", spec={"minAvailable": 1})
    config = obj(V1, "ConfigMap", "cm", "kube-system", data={"a": "b"})
    usage = obj(
        "vscheduler.dev/v1alpha1",
        "NodeUsage",
        "n1",
        usage={"cpu": {"10m": 41.5}, "memory": {"10m": 63}},
        metricsTime="2024-01-01T00:00:00Z",
    )
    snap = build_snapshot(
        sourced(
            node("n1"),
            obj(V1, "Namespace", "team-a"),
            pod("p1", group="pg1"),
            obj(VOLCANO, "PodGroup", "pg1", "default", spec={"minMember": 1, "queue": "q1"}),
            obj(VOLCANO, "Queue", "q1", spec={"weight": 2}),
            priority_class("high", 100),
            quota,
            pdb,
            config,
            usage,
        ),
        scheduler_name="vscheduler",
        taken_at=dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
    )
    assert [n.name for n in snap.nodes] == ["n1"]
    assert list(snap.tasks) == ["uid-p1"]
    assert list(snap.jobs) == ["default/pg1"]
    assert list(snap.queues) == ["q1", "default"]
    assert snap.priority_classes == {"high": PriorityClassFacts(name="high", value=100)}
    assert snap.namespaces == ("team-a",)
    assert snap.usage["n1"] == NodeUsage(
        node="n1",
        usage={"cpu": {"10m": 41.5}, "memory": {"10m": 63.0}},
        metrics_time=dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
    )
    assert snap.resource_quotas == (quota,)
    assert snap.pod_disruption_budgets == (pdb,)
    assert snap.config_maps == (config,)
    assert (snap.scheduler_name, snap.taken_at) == (
        "vscheduler",
        dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
    )


def test_nodes_and_tasks_keep_document_order() -> None:
    snap = build_snapshot(sourced(node("b"), pod("z"), node("a"), pod("y"), node("c")))
    assert [n.name for n in snap.nodes] == ["b", "a", "c"]
    assert [t.name for t in snap.tasks.values()] == ["z", "y"]


def test_priority_classes_apply_to_pods_written_before_them() -> None:
    snap = build_snapshot(
        sourced(
            pod("p1", priorityClassName="high"),
            pod("p2"),
            priority_class("high", 100),
            priority_class("base", 3, default=True),
        )
    )
    assert [t.priority for t in snap.tasks.values()] == [100, 3]


def test_a_default_queue_is_added_unless_one_exists() -> None:
    assert build_snapshot([]).queues["default"].weight == 1
    snap = build_snapshot(sourced(obj(VOLCANO, "Queue", "default", spec={"weight": 5})))
    assert snap.queues["default"].weight == 5


def test_a_pod_without_a_podgroup_gets_an_implicit_job_of_one() -> None:
    snap = build_snapshot(sourced(pod("p1")))
    job = snap.jobs["default/podgroup-uid-p1"]
    assert (job.min_member, job.queue, job.synthetic, job.phase) == (
        1,
        "default",
        True,
        PodGroupPhase.PENDING,
    )


def test_a_pod_whose_podgroup_or_queue_is_missing_is_no_error() -> None:
    snap = build_snapshot(
        sourced(
            pod("p1", group="nowhere"),
            obj(VOLCANO, "PodGroup", "pg", "default", spec={"queue": "gone"}),
        )
    )
    assert snap.tasks["uid-p1"].job == "default/nowhere"
    assert "default/nowhere" not in snap.jobs
    assert snap.jobs["default/pg"].queue == "gone"


def test_pods_of_other_schedulers_only_count_when_they_occupy_a_node() -> None:
    foreign_pending = pod("a", schedulerName="default-scheduler")
    foreign_running = pod("b", node_name="n1", schedulerName="default-scheduler")
    snap = build_snapshot(sourced(node("n1"), foreign_pending, foreign_running))
    assert [(t.name, t.job, t.status) for t in snap.tasks.values()] == [
        ("b", "", TaskStatus.RUNNING)
    ]


def test_an_unsupported_kind_is_an_error_naming_the_document() -> None:
    with pytest.raises(InputError) as caught:
        build_snapshot(sourced(node("n1"), obj("apps/v1", "Deployment", "web", "default")))
    assert str(caught.value).startswith(
        "cluster.yaml#2: unsupported kind 'Deployment' (apiVersion 'apps/v1');"
        " a snapshot holds ConfigMap,"
    )


def test_a_known_kind_with_another_api_version_is_an_error() -> None:
    with pytest.raises(InputError) as caught:
        build_snapshot(sourced(obj("scheduling.volcano.sh/v1alpha1", "Queue", "q")))
    assert str(caught.value) == (
        "cluster.yaml#1: Queue: apiVersion must be 'scheduling.volcano.sh/v1beta1',"
        " got 'scheduling.volcano.sh/v1alpha1'"
    )


def test_a_conversion_error_is_prefixed_with_the_document() -> None:
    bad = pod("p1", containers=[{"name": "c", "resources": {"requests": {"cpu": "1x"}}}])
    with pytest.raises(QuantityError) as caught:
        build_snapshot(sourced(node("n1"), node("n2"), bad))
    assert str(caught.value) == (
        "cluster.yaml#3: Pod default/p1: spec.containers[0].resources.requests.cpu:"
        " invalid quantity '1x': unknown suffix 'x'"
    )


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        (node("n1"), node("n1"), "duplicate Node n1"),
        (pod("p1"), pod("p1"), "duplicate Pod default/p1"),
        (
            obj(VOLCANO, "PodGroup", "pg", "default"),
            obj(VOLCANO, "PodGroup", "pg", None),
            "duplicate PodGroup default/pg",
        ),
        (priority_class("a", 1), priority_class("a", 2), "duplicate PriorityClass a"),
        (obj(V1, "ConfigMap", "c", "x"), obj(V1, "ConfigMap", "c", "x"), "duplicate ConfigMap x/c"),
    ],
)
def test_a_duplicate_object_is_an_error_naming_both_documents(
    first: dict[str, Any], second: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError) as caught:
        build_snapshot(sourced(first, second))
    assert str(caught.value) == f"cluster.yaml#2: {message} (first defined in cluster.yaml#1)"


def test_objects_of_one_name_in_two_namespaces_or_kinds_are_no_duplicates() -> None:
    other = pod("p1")
    other["metadata"].update(namespace="other", uid="uid-other")
    snap = build_snapshot(sourced(pod("p1"), other, obj(VOLCANO, "PodGroup", "p1", "default")))
    assert len(snap.tasks) == 2


def test_two_pods_sharing_a_uid_are_an_error() -> None:
    other = pod("p2")
    other["metadata"]["uid"] = "uid-p1"
    with pytest.raises(InputError) as caught:
        build_snapshot(sourced(pod("p1"), other))
    assert str(caught.value) == (
        "cluster.yaml#2: Pod default/p2: metadata.uid: 'uid-p1' is also the uid of"
        " Pod default/p1 (cluster.yaml#1)"
    )


def test_a_raw_object_must_still_have_a_name() -> None:
    with pytest.raises(InputError, match=r"^cluster.yaml#1: ConfigMap \(unnamed\): metadata.name"):
        build_snapshot(sourced({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}))


# --- the small kinds ---------------------------------------------------------------------------
def test_a_priority_class_is_read_with_its_defaults() -> None:
    pc = convert_priority_class(priority_class("p", 10))
    assert pc == PriorityClassFacts(name="p", value=10, preemption_policy="PreemptLowerPriority")
    never = {**priority_class("n", 1, default=True), "preemptionPolicy": "Never"}
    assert convert_priority_class(never) == PriorityClassFacts(
        name="n", value=1, global_default=True, preemption_policy="Never"
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (obj("scheduling.k8s.io/v1", "PriorityClass", "p"), "PriorityClass p: value: is required"),
        (
            {**priority_class("p", 1), "value": "1"},
            "PriorityClass p: value: must be an integer from -2147483648 to 2000001000, got '1'",
        ),
        (
            {**priority_class("p", 1), "globalDefault": "yes"},
            "PriorityClass p: globalDefault: must be true or false, got 'yes'",
        ),
        (
            {**priority_class("p", 1), "preemptionPolicy": "Always"},
            "PriorityClass p: preemptionPolicy: must be one of PreemptLowerPriority, Never,"
            " got 'Always'",
        ),
    ],
)
def test_a_malformed_priority_class_is_an_error(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as caught:
        convert_priority_class(raw)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"usage": {"cpu": {"10m": 101}}},
            "usage.cpu.10m: must be a percent from 0 to 100, got 101",
        ),
        (
            {"usage": {"cpu": {"10m": "high"}}},
            "usage.cpu.10m: must be a percent from 0 to 100, got 'high'",
        ),
        ({"usage": {"cpu": 3}}, "usage.cpu: must be a mapping of period to percent, got 3"),
        ({"usage": {}, "metricsTime": None}, "metricsTime: is required"),
        (
            {"usage": {}, "metricsTime": "noon"},
            "metricsTime: must be an RFC3339 time like 2006-01-02T15:04:05Z, got 'noon'",
        ),
    ],
)
def test_a_malformed_node_usage_is_an_error(fields: dict[str, Any], message: str) -> None:
    raw = {
        **obj("vscheduler.dev/v1alpha1", "NodeUsage", "n1", metricsTime="2024-01-01T00:00:00Z"),
        **fields,
    }
    with pytest.raises(InputError) as caught:
        convert_node_usage(raw)
    assert str(caught.value) == f"NodeUsage n1: {message}"
