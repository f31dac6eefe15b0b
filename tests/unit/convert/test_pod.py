from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from vscheduler.convert import pod as pod_module
from vscheduler.convert.pod import PodConverter, convert_pod, pod_request, qos_class
from vscheduler.errors import InputError, QuantityError
from vscheduler.model.facts import (
    EPOCH,
    HostPort,
    NodeAffinity,
    PreferredTerm,
    PriorityClassFacts,
    Requirement,
    SelectorTerm,
    TaskFacts,
    Toleration,
)
from vscheduler.model.resources import Resources
from vscheduler.model.status import QoSClass, TaskStatus
from vscheduler.testing.strategies import SCHEDULER, affinities, pods

GI = 1024**3
MI = 1024**2
Raw = dict[str, Any]


def raw_pod(name: str = "p1", /, **spec: Any) -> Raw:
    """A pending pod of vscheduler in `default`, with `spec` fields merged in."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "schedulerName": "vscheduler",
            "containers": [{"name": "main", "image": "busybox"}],
            **spec,
        },
        "status": {"phase": "Pending"},
    }


def container(
    requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None, **extra: Any
) -> Raw:
    resources: Raw = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": "c", "image": "busybox", "resources": resources, **extra}


def convert(obj: Raw, classes: dict[str, PriorityClassFacts] | None = None) -> TaskFacts:
    task = convert_pod(obj, priority_classes=classes or {}, scheduler_name="vscheduler")
    assert task is not None
    return task


def request_of(**spec: Any) -> Resources:
    return pod_request(spec, where="Pod default/p1")


# --- the effective request -------------------------------------------------------------------
def test_the_requests_of_containers_are_summed() -> None:
    spec = {
        "containers": [
            container({"cpu": "500m", "memory": "1Gi"}),
            container({"cpu": "250m", "nvidia.com/gpu": "1"}),
        ]
    }
    assert request_of(**spec) == Resources({"cpu": 750, "memory": GI, "nvidia.com/gpu": 1})


def test_amounts_are_summed_exactly_before_rounding() -> None:
    spec = {"containers": [container({"cpu": "0.5m"}), container({"cpu": "0.5m"})]}
    assert request_of(**spec) == Resources(cpu=1)


def test_an_init_container_counts_as_the_maximum_with_the_containers() -> None:
    spec = {
        "initContainers": [container({"cpu": "2", "memory": "100Mi"})],
        "containers": [container({"cpu": "500m", "memory": "1Gi"})],
    }
    assert request_of(**spec) == Resources(cpu=2000, memory=GI)


def test_init_containers_run_one_at_a_time() -> None:
    spec = {
        "initContainers": [
            container({"cpu": "1"}),
            container({"cpu": "3"}),
            container({"cpu": "2"}),
        ],
        "containers": [container({"cpu": "500m"})],
    }
    assert request_of(**spec) == Resources(cpu=3000)


def test_a_sidecar_is_added_to_the_containers_and_to_every_later_init_container() -> None:
    sidecar = container({"cpu": "1", "memory": "1Gi"}, restartPolicy="Always")
    spec = {
        "initContainers": [
            container({"cpu": "1500m"}),  # runs alone: 1.5
            sidecar,  # keeps running: 1 cpu, 1Gi
            container({"cpu": "2", "memory": "1Gi"}),  # runs with the sidecar: 3 cpu, 2Gi
        ],
        "containers": [container({"cpu": "1", "memory": "1Gi"})],  # with the sidecar: 2, 2Gi
    }
    assert request_of(**spec) == Resources(cpu=3000, memory=2 * GI)


def test_the_overhead_is_added() -> None:
    spec = {"containers": [container({"cpu": "1"})], "overhead": {"cpu": "250m", "memory": "64Mi"}}
    assert request_of(**spec) == Resources(cpu=1250, memory=64 * MI)


def test_a_limit_without_a_request_is_the_request() -> None:
    spec = {"containers": [container({"cpu": "500m"}, {"cpu": "2", "memory": "1Gi"})]}
    assert request_of(**spec) == Resources(cpu=500, memory=GI)


def test_a_limit_without_a_request_is_the_request_in_init_containers_too() -> None:
    spec = {
        "initContainers": [container(limits={"memory": "2Gi"})],
        "containers": [container({"memory": "1Gi"})],
    }
    assert request_of(**spec) == Resources(memory=2 * GI)


def test_pod_level_requests_replace_the_containers_total_for_cpu_and_memory() -> None:
    spec = {
        "containers": [container({"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"})],
        "resources": {"requests": {"cpu": "3", "nvidia.com/gpu": "4"}},
    }
    assert request_of(**spec) == Resources({"cpu": 3000, "memory": GI, "nvidia.com/gpu": 1})


def test_a_pod_level_limit_is_the_request_when_no_container_requests_that_resource() -> None:
    spec = {
        "containers": [container({"cpu": "1"})],
        "resources": {"limits": {"cpu": "4", "memory": "2Gi"}},
    }
    assert request_of(**spec) == Resources(cpu=1000, memory=2 * GI)


def test_a_pod_without_requests_requests_nothing() -> None:
    assert request_of(containers=[{"name": "c"}]) == Resources()
    assert request_of() == Resources()


# --- QoS ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("containers", "expected"),
    [
        ([container()], QoSClass.BEST_EFFORT),
        ([container({"cpu": "0"}, {"memory": "0"})], QoSClass.BEST_EFFORT),
        ([container({"cpu": "1"})], QoSClass.BURSTABLE),
        ([container(limits={"cpu": "1", "memory": "1Gi"})], QoSClass.GUARANTEED),
        (
            [container({"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})],
            QoSClass.GUARANTEED,
        ),
        (
            [container({"cpu": "1000m", "memory": "1024Mi"}, {"cpu": "1", "memory": "1Gi"})],
            QoSClass.GUARANTEED,
        ),
        (
            [container({"cpu": "500m", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})],
            QoSClass.BURSTABLE,
        ),
        ([container(limits={"cpu": "1"})], QoSClass.BURSTABLE),
        (
            [container(limits={"cpu": "1", "memory": "1Gi"}), container({"cpu": "1"})],
            QoSClass.BURSTABLE,
        ),
        ([container({"nvidia.com/gpu": "1"})], QoSClass.BEST_EFFORT),
    ],
)
def test_the_qos_class_follows_kubernetes(containers: list[Raw], expected: QoSClass) -> None:
    assert qos_class({"containers": containers}) is expected


def test_an_init_container_without_limits_makes_a_pod_burstable() -> None:
    spec = {
        "initContainers": [container({"cpu": "100m"})],
        "containers": [container(limits={"cpu": "1", "memory": "1Gi"})],
    }
    assert qos_class(spec) is QoSClass.BURSTABLE


def test_pod_level_resources_decide_the_qos_class_when_set() -> None:
    spec = {
        "containers": [container({"cpu": "100m"})],
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
    }
    assert qos_class(spec) is QoSClass.BURSTABLE
    spec = {"containers": [container()], "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
    assert qos_class(spec) is QoSClass.GUARANTEED


# --- which pods matter, and their status ----------------------------------------------------------
@pytest.mark.parametrize(
    ("phase", "node", "deleting", "expected"),
    [
        ("Pending", None, False, TaskStatus.PENDING),
        ("Pending", "n1", False, TaskStatus.BOUND),
        ("Running", "n1", False, TaskStatus.RUNNING),
        ("Succeeded", "n1", False, TaskStatus.SUCCEEDED),
        ("Failed", "n1", False, TaskStatus.FAILED),
        ("Unknown", "n1", False, TaskStatus.UNKNOWN),
        ("Running", "n1", True, TaskStatus.RELEASING),
        ("Pending", "n1", True, TaskStatus.RELEASING),
        ("Succeeded", "n1", True, TaskStatus.SUCCEEDED),
        ("Pending", None, True, None),
    ],
)
def test_the_task_status_follows_volcano(
    phase: str, node: str | None, deleting: bool, expected: TaskStatus | None
) -> None:
    obj = raw_pod()
    obj["status"]["phase"] = phase
    if node:
        obj["spec"]["nodeName"] = node
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    task = convert_pod(obj, priority_classes={}, scheduler_name="vscheduler")
    assert (task.status if task else None) is expected


def test_a_pod_without_a_phase_is_pending() -> None:
    obj = raw_pod()
    del obj["status"]
    assert convert(obj).status is TaskStatus.PENDING


@pytest.mark.parametrize(
    ("phase", "node"),
    [("Pending", None), ("Succeeded", "n1"), ("Failed", "n1"), ("Running", None)],
)
def test_a_pod_of_another_scheduler_that_occupies_no_node_does_not_matter(
    phase: str, node: str | None
) -> None:
    obj = raw_pod(schedulerName="default-scheduler")
    obj["status"]["phase"] = phase
    if node:
        obj["spec"]["nodeName"] = node
    assert convert_pod(obj, priority_classes={}, scheduler_name="vscheduler") is None


def test_a_pod_of_another_scheduler_on_a_node_only_uses_the_node() -> None:
    obj = raw_pod(nodeName="n1")
    del obj["spec"]["schedulerName"]
    obj["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": "pg1"}
    obj["status"]["phase"] = "Running"
    task = convert(obj)
    assert (task.job, task.group_name, task.scheduler_name) == ("", None, "default-scheduler")
    assert (task.status, task.node_name) == (TaskStatus.RUNNING, "n1")


def test_the_scheduler_name_decides_which_pods_are_ours() -> None:
    obj = raw_pod(schedulerName="volcano")
    assert convert_pod(obj, priority_classes={}, scheduler_name="vscheduler") is None
    task = convert_pod(obj, priority_classes={}, scheduler_name="volcano")
    assert task is not None
    assert task.status is TaskStatus.PENDING


# --- metadata ----------------------------------------------------------------------------------
def test_missing_metadata_gets_deterministic_defaults() -> None:
    obj = raw_pod()
    obj["metadata"] = {"name": "p1"}
    task = convert(obj)
    assert (task.namespace, task.uid, task.created) == ("default", "default/p1", EPOCH)


def test_the_creation_time_is_read_as_rfc3339_in_utc() -> None:
    obj = raw_pod()
    obj["metadata"]["creationTimestamp"] = "2024-03-01T12:00:00+02:00"
    assert convert(obj).created == dt.datetime(2024, 3, 1, 10, 0, tzinfo=dt.UTC)


def test_labels_and_annotations_are_kept() -> None:
    obj = raw_pod()
    obj["metadata"]["labels"] = {"app": "web"}
    obj["metadata"]["annotations"] = {"note": "x"}
    task = convert(obj)
    assert (task.labels, task.annotations) == ({"app": "web"}, {"note": "x"})


# --- the job ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("annotations", "job", "group"),
    [
        ({"scheduling.k8s.io/group-name": "pg1"}, "default/pg1", "pg1"),
        ({"scheduling.volcano.sh/group-name": "pg2"}, "default/pg2", "pg2"),
        (
            {"scheduling.k8s.io/group-name": "pg1", "scheduling.volcano.sh/group-name": "pg2"},
            "default/pg1",
            "pg1",
        ),
        ({"scheduling.k8s.io/group-name": ""}, "default/podgroup-uid-p1", None),
        ({}, "default/podgroup-uid-p1", None),
    ],
)
def test_the_job_is_the_annotated_podgroup_or_a_job_of_its_own(
    annotations: dict[str, str], job: str, group: str | None
) -> None:
    obj = raw_pod()
    obj["metadata"]["annotations"] = annotations
    task = convert(obj)
    assert (task.job, task.group_name) == (job, group)


# --- priority -----------------------------------------------------------------------------------
HIGH = PriorityClassFacts(name="high", value=1000)
LOW_DEFAULT = PriorityClassFacts(name="low-default", value=10, global_default=True)
OTHER_DEFAULT = PriorityClassFacts(name="other-default", value=20, global_default=True)
CLASSES = {pc.name: pc for pc in (HIGH, LOW_DEFAULT, OTHER_DEFAULT)}


@pytest.mark.parametrize(
    ("spec", "classes", "priority", "class_name"),
    [
        ({"priority": 7, "priorityClassName": "high"}, CLASSES, 7, "high"),
        ({"priorityClassName": "high"}, CLASSES, 1000, "high"),
        ({}, CLASSES, 10, "low-default"),
        ({"priorityClassName": "missing"}, CLASSES, 10, "missing"),
        ({}, {"high": HIGH}, 0, ""),
        ({"priority": -5}, {}, -5, ""),
    ],
)
def test_the_priority_is_the_pods_else_its_class_else_the_global_default(
    spec: Raw, classes: dict[str, PriorityClassFacts], priority: int, class_name: str
) -> None:
    task = convert(raw_pod(**spec), classes)
    assert (task.priority, task.priority_class_name) == (priority, class_name)


# --- annotations and labels with meaning ---------------------------------------------------
@pytest.mark.parametrize(
    ("annotations", "labels", "expected"),
    [
        ({"volcano.sh/preemptable": "true"}, {}, True),
        ({}, {"volcano.sh/preemptable": "true"}, True),
        ({"volcano.sh/preemptable": "1"}, {}, True),
        ({"volcano.sh/preemptable": "false"}, {"volcano.sh/preemptable": "true"}, False),
        ({"volcano.sh/preemptable": "yes"}, {}, False),
        ({}, {}, False),
    ],
)
def test_preemptable_comes_from_the_annotation_else_the_label(
    annotations: dict[str, str], labels: dict[str, str], expected: bool
) -> None:
    obj = raw_pod()
    obj["metadata"]["annotations"] = annotations
    obj["metadata"]["labels"] = labels
    assert convert(obj).preemptable is expected


@pytest.mark.parametrize(
    ("annotations", "labels", "opted_out"),
    [
        ({"volcano.sh/preemptable": "false"}, {}, True),
        ({}, {"volcano.sh/preemptable": "0"}, True),
        ({"volcano.sh/preemptable": "yes"}, {}, True),
        ({"volcano.sh/preemptable": "false"}, {"volcano.sh/preemptable": "true"}, True),
        ({"volcano.sh/preemptable": "true"}, {}, False),
        ({}, {}, False),
    ],
)
def test_a_pod_opts_out_of_preemption_when_the_key_is_set_and_not_true(
    annotations: dict[str, str], labels: dict[str, str], opted_out: bool
) -> None:
    obj = raw_pod()
    obj["metadata"]["annotations"] = annotations
    obj["metadata"]["labels"] = labels
    assert convert(obj).preemption_opt_out is opted_out


@pytest.mark.parametrize(
    ("name", "annotations", "labels", "index"),
    [
        ("job-worker-3", {}, {}, 3),
        ("job-worker-03", {}, {}, 3),
        ("worker-3", {}, {}, None),
        ("job-worker-x", {}, {}, None),
        ("job-worker-3", {"batch.kubernetes.io/job-completion-index": "7"}, {}, 7),
        ("p", {}, {"batch.kubernetes.io/job-completion-index": "5"}, 5),
        ("p", {"batch.kubernetes.io/job-completion-index": "x"}, {}, None),
        ("a-b-", {}, {}, None),
    ],
)
def test_the_index_is_the_completion_index_else_the_numeric_end_of_the_name(
    name: str, annotations: dict[str, str], labels: dict[str, str], index: int | None
) -> None:
    obj = raw_pod(name)
    obj["metadata"]["annotations"] = annotations
    obj["metadata"]["labels"] = labels
    assert convert(obj).index == index


def test_the_task_role_is_the_volcano_task_spec_annotation() -> None:
    obj = raw_pod()
    obj["metadata"]["annotations"] = {"volcano.sh/task-spec": "worker"}
    assert convert(obj).task_role == "worker"
    assert convert(raw_pod()).task_role == ""


@pytest.mark.parametrize(
    ("annotations", "labels", "role"),
    [
        ({}, {"volcano.sh/task-spec": "ps"}, "ps"),
        ({"volcano.sh/task-spec": "worker"}, {"volcano.sh/task-spec": "ps"}, "worker"),
        ({"volcano.sh/task-spec": ""}, {"volcano.sh/task-spec": "ps"}, "ps"),
        ({}, {"volcano.sh/task-spec": ""}, ""),
    ],
)
def test_the_task_role_is_the_annotation_else_the_label_as_volcanos_get_task_role(
    annotations: dict[str, str], labels: dict[str, str], role: str
) -> None:
    obj = raw_pod()
    obj["metadata"]["annotations"] = annotations
    obj["metadata"]["labels"] = labels
    assert convert(obj).task_role == role


def test_the_pods_own_preemption_policy_is_read() -> None:
    assert convert(raw_pod(preemptionPolicy="Never")).preemption_policy == "Never"
    assert convert(raw_pod()).preemption_policy == ""
    with pytest.raises(InputError) as caught:
        convert(raw_pod(preemptionPolicy="Sometimes"))
    assert str(caught.value) == (
        "Pod default/p1: spec.preemptionPolicy: must be one of PreemptLowerPriority, Never,"
        " got 'Sometimes'"
    )


# --- placement constraints ------------------------------------------------------------------
def test_node_selector_and_node_affinity_are_read() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "zone", "operator": "In", "values": ["a", "b"]},
                            {"key": "gpu", "operator": "Exists"},
                        ],
                        "matchFields": [
                            {"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}
                        ],
                    },
                    {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["8"]}]},
                ]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 20,
                    "preference": {
                        "matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]
                    },
                }
            ],
        }
    }
    task = convert(raw_pod(nodeSelector={"os": "linux"}, affinity=affinity))
    assert task.node_selector == {"os": "linux"}
    assert task.affinity == NodeAffinity(
        required=(
            SelectorTerm(
                match_expressions=(
                    Requirement(key="zone", operator="In", values=("a", "b")),
                    Requirement(key="gpu", operator="Exists"),
                ),
                match_fields=(Requirement(key="metadata.name", operator="NotIn", values=("n9",)),),
            ),
            SelectorTerm(
                match_expressions=(Requirement(key="cores", operator="Gt", values=("8",)),)
            ),
        ),
        preferred=(
            PreferredTerm(
                weight=20,
                term=SelectorTerm(
                    match_expressions=(Requirement(key="disk", operator="In", values=("ssd",)),)
                ),
            ),
        ),
    )


def test_a_pod_without_affinity_has_no_requirement() -> None:
    assert convert(raw_pod()).affinity == NodeAffinity()
    assert convert(raw_pod(affinity={"podAffinity": {}})).affinity == NodeAffinity()


def test_tolerations_are_read_with_equal_as_the_default_operator() -> None:
    tolerations = [
        {"key": "gpu", "value": "yes", "effect": "NoSchedule"},
        {"operator": "Exists"},
        {"key": "x", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
    ]
    assert convert(raw_pod(tolerations=tolerations)).tolerations == (
        Toleration(key="gpu", operator="Equal", value="yes", effect="NoSchedule"),
        Toleration(operator="Exists"),
        Toleration(key="x", operator="Exists", effect="NoExecute"),
    )


def test_host_ports_come_from_containers_and_sidecars_only() -> None:
    spec = {
        "initContainers": [
            container(ports=[{"containerPort": 1, "hostPort": 1001}]),
            container(restartPolicy="Always", ports=[{"containerPort": 2, "hostPort": 1002}]),
        ],
        "containers": [
            container(
                ports=[
                    {"containerPort": 80},
                    {"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"},
                    {"containerPort": 8080, "hostPort": 8080},
                ]
            )
        ],
    }
    assert convert(raw_pod(**spec)).host_ports == (
        HostPort(port=53, protocol="UDP", host_ip="10.0.0.1"),
        HostPort(port=8080),
        HostPort(port=1002),
    )


def test_with_host_network_every_container_port_is_a_host_port() -> None:
    spec = {"hostNetwork": True, "containers": [container(ports=[{"containerPort": 9090}])]}
    assert convert(raw_pod(**spec)).host_ports == (HostPort(port=9090),)


def test_images_are_listed_once_each_in_order() -> None:
    spec = {
        "initContainers": [{"name": "i", "image": "setup"}],
        "containers": [{"name": "a", "image": "web"}, {"name": "b", "image": "web"}, {"name": "c"}],
    }
    assert convert(raw_pod(**spec)).images == ("web", "setup")


def test_a_task_carries_its_request_and_qos() -> None:
    task = convert(raw_pod(containers=[container(limits={"cpu": "1", "memory": "1Gi"})]))
    assert (task.resreq, task.qos) == (Resources(cpu=1000, memory=GI), QoSClass.GUARANTEED)


def test_a_converter_gives_pods_of_one_template_equal_but_correct_requests() -> None:
    converter = PodConverter(priority_classes={}, scheduler_name="vscheduler")
    first = raw_pod("a", containers=[container({"cpu": "1"}, {"memory": "1Gi"})])
    second = raw_pod("b", containers=[container({"cpu": "1"}, {"memory": "2Gi"})])
    third = raw_pod("c", containers=[container({"cpu": "1"}, {"memory": "1Gi"})])
    tasks = [converter.convert(obj) for obj in (first, second, third)]
    assert [t.resreq if t else None for t in tasks] == [
        Resources(cpu=1000, memory=GI),
        Resources(cpu=1000, memory=2 * GI),
        Resources(cpu=1000, memory=GI),
    ]


def test_a_converter_does_not_mistake_a_boolean_amount_for_a_number() -> None:
    converter = PodConverter(priority_classes={}, scheduler_name="vscheduler")
    converter.convert(raw_pod("a", containers=[container({"cpu": "1"})]))
    assert converter.convert(raw_pod("b", containers=[container({"cpu": 1})])) is not None
    with pytest.raises(QuantityError, match="cpu: invalid quantity true"):
        converter.convert(raw_pod("c", containers=[container({"cpu": True})]))


def test_pods_of_one_spec_share_what_it_says_but_their_node() -> None:
    converter = PodConverter(priority_classes={}, scheduler_name="vscheduler")
    spec: Raw = {
        "containers": [container({"cpu": "1"}, ports=[{"containerPort": 80, "hostPort": 80}])],
        "tolerations": [{"key": "gpu", "operator": "Exists"}],
    }
    first = converter.convert(raw_pod("a", **spec))
    spec = copy.deepcopy(spec)  # as admission and Volcano's controller make the second pod
    spec["volumes"] = [{"name": "kube-api-access-x7k2q", "projected": {"defaultMode": 420}}]
    spec["containers"][0]["volumeMounts"] = [{"name": "kube-api-access-x7k2q", "mountPath": "/"}]
    spec["containers"][0]["env"] = [{"name": "VC_TASK_INDEX", "value": "1"}]
    spec["hostname"] = "b"
    second = converter.convert(raw_pod("b", nodeName="n1", **spec))
    assert first is not None
    assert second is not None
    assert second.tolerations is first.tolerations
    assert second.host_ports is first.host_ports
    assert (first.node_name, second.node_name) == (None, "n1")
    assert second.template_key() is first.template_key()
    assert second == convert(raw_pod("b", nodeName="n1", **spec))


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ({"hostNetwork": True}, {"hostNetwork": 1}),
        ({"priority": 1}, {"priority": True}),
        ({"priority": 1}, {"priority": 1.0}),
        ({"nodeSelector": {}}, {"nodeSelector": None}),
        ({"priority": None}, {"priority": float("nan")}),
        ({"priority": 0}, {"priority": dt.date(2026, 1, 1)}),
        ({"priorityClassName": "2026-01-01"}, {"priorityClassName": dt.date(2026, 1, 1)}),
    ],
)
def test_a_spec_equal_to_one_read_before_only_as_python_compares_is_read_again(
    first: Raw, then: Raw
) -> None:
    """`True == 1 == 1.0` in Python: the converter must not take one for the other."""
    ports = {"containers": [container(ports=[{"containerPort": 80, "hostPort": 80}])]}
    converter = PodConverter(priority_classes={}, scheduler_name="vscheduler")
    converter.convert(raw_pod("a", **ports, **first))
    obj = raw_pod("b", **ports, **then)
    assert _outcome(converter.convert, obj) == _outcome(_fresh("vscheduler"), obj)


def test_pods_of_one_spec_in_two_namespaces_have_their_own_inter_pod_affinity() -> None:
    term = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "zone"}
    spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
    converter = PodConverter(priority_classes={}, scheduler_name="vscheduler")
    objs = [raw_pod(name, **spec) for name in ("a", "b")]
    objs[1]["metadata"]["namespace"] = "other"
    got = [converter.convert(obj) for obj in objs]
    assert got == [convert(obj) for obj in objs]
    assert got[0] != got[1]


@pytest.mark.parametrize(
    ("spec", "second_meta"),
    [
        (
            {},
            {
                "annotations": {
                    "volcano.sh/resource-strategy-scoring-type": "MostAllocated",
                    "volcano.sh/resource-strategy-weight": '{"cpu": 1}',
                }
            },
        ),
        (
            {
                "topologySpreadConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "zone",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"app": "x"}},
                    }
                ]
            },
            {"labels": {"app": "y"}},
        ),
    ],
)
def test_a_pod_of_a_spec_read_before_has_its_own_template_where_its_metadata_counts(
    spec: Raw, second_meta: Raw
) -> None:
    """Its own scoring annotations, or labels its spread constraints select: not the first's."""
    converter = PodConverter(priority_classes={}, scheduler_name="vscheduler")
    first = raw_pod("a", **copy.deepcopy(spec))
    first["metadata"]["labels"] = {"app": "x"}
    second = raw_pod("b", **copy.deepcopy(spec))
    second["metadata"].update(second_meta)
    tasks = [converter.convert(obj) for obj in (first, second)]
    assert [t.template_key() if t else None for t in tasks] == [
        convert(first).template_key(),
        convert(second).template_key(),
    ]
    assert convert(first).template_key() != convert(second).template_key()


_RICH_SPEC: Raw = {
    "containers": [container({"cpu": "1"}, ports=[{"containerPort": 80, "hostPort": 80}])],
    "initContainers": [container({"memory": "1Gi"})],
    "nodeSelector": {"zone": "a"},
    "tolerations": [{"key": "gpu", "operator": "Exists"}],
    "priorityClassName": "",
    "preemptionPolicy": "Never",
}


@pytest.mark.parametrize(
    ("field", "in_container"),
    [(f, False) for f in pod_module._UNREAD_SPEC if f != "nodeName"]
    + [(f, True) for f in sorted(pod_module._UNREAD_CONTAINER)],
)
@pytest.mark.parametrize("value", ["x", [{"name": "v", "value": "1"}], {"a": {"b": 1}}])
def test_fields_left_out_of_a_specs_key_are_not_read(
    field: str, in_container: bool, value: object
) -> None:
    """Pods of one key share the facts of the first: a field left out of the key must not
    change a fact. Reading one of them? Take it out of `_UNREAD_SPEC` / `_UNREAD_CONTAINER`."""
    obj = raw_pod(**copy.deepcopy(_RICH_SPEC))
    before = convert(obj)
    if in_container:
        for target in (obj["spec"]["containers"][0], obj["spec"]["initContainers"][0]):
            target[field] = value
    else:
        obj["spec"][field] = value
    assert convert(obj) == before


def test_a_spec_read_with_a_warning_names_each_pod_in_it() -> None:
    converter = PodConverter(priority_classes={}, scheduler_name="vscheduler")
    spec = {"containers": [container({"cpu": "10P"})]}
    tasks = [converter.convert(raw_pod(name, **spec)) for name in ("a", "b")]
    assert [t.warnings[0].message.split(":")[0] if t else "" for t in tasks] == [
        "Pod default/a",
        "Pod default/b",
    ]


@settings(max_examples=60)
@given(st.lists(pods(), min_size=1, max_size=6), st.data())
def test_one_converter_reads_every_pod_as_a_fresh_one_would(
    objs: list[Raw], data: st.DataObject
) -> None:
    """Pods given the specs of pods converted before (a memo hit) or their own read the same
    through one converter as through a converter of their own, error or facts."""
    objs = copy.deepcopy(objs)
    for i, obj in enumerate(objs):
        obj["metadata"].update(name=f"p{i}", uid=f"uid-{i}")
        if i and data.draw(st.booleans()):
            obj["spec"] = copy.deepcopy(objs[data.draw(st.integers(0, i - 1))]["spec"])
            if data.draw(st.booleans()):
                obj["spec"]["nodeName"] = "elsewhere"
    converter = PodConverter(priority_classes={}, scheduler_name=SCHEDULER)
    for obj in objs:
        got, expected = _outcome(converter.convert, obj), _outcome(_fresh(SCHEDULER), obj)
        assert got == expected
        if isinstance(got, TaskFacts) and isinstance(expected, TaskFacts):
            assert got.template_key() == expected.template_key()


def _fresh(scheduler_name: str) -> Callable[[Raw], TaskFacts | None]:
    """A pod's conversion by a converter of its own."""
    return lambda obj: convert_pod(obj, priority_classes={}, scheduler_name=scheduler_name)


def _outcome(read: Callable[[Raw], TaskFacts | None], obj: Raw) -> TaskFacts | str | None:
    """What `read` makes of `obj`: its facts, or its error's message."""
    try:
        return read(obj)
    except InputError as exc:
        return str(exc)


# --- malformed fields ---------------------------------------------------------------------------
def _set(path: str, value: Any) -> Callable[[Raw], None]:
    """A mutation setting the dotted `path` (list indexes as numbers) of a raw pod."""

    def mutate(obj: Raw) -> None:
        *parents, last = path.split(".")
        target: Any = obj
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        if last.isdigit():
            target[int(last)] = value
        else:
            target[last] = value

    return mutate


P = "Pod default/p1: "


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (_set("metadata", None), "Pod (unnamed): metadata: must be a mapping, got null"),
        (_set("metadata.name", ""), "Pod (unnamed): metadata.name: must be a non-empty string"),
        (_set("metadata.namespace", 5), "Pod p1: metadata.namespace: must be a non-empty string"),
        (_set("metadata.uid", 5), P + "metadata.uid: must be a non-empty string, got 5"),
        (
            _set("metadata.labels", {"a": 1}),
            P + "metadata.labels.a: must be a string, got 1",
        ),
        (
            _set("metadata.annotations", []),
            P + "metadata.annotations: must be a mapping, got a list",
        ),
        (
            _set("metadata.creationTimestamp", "yesterday"),
            P + "metadata.creationTimestamp: must be an RFC3339 time like 2006-01-02T15:04:05Z,"
            " got 'yesterday'",
        ),
        (_set("spec", "x"), P + "spec: must be a mapping, got 'x'"),
        (_set("spec.containers", {}), P + "spec.containers: must be a list, got a mapping"),
        (_set("spec.containers.0", "c"), P + "spec.containers[0]: must be a mapping, got 'c'"),
        (
            _set("spec.containers.0.resources", []),
            P + "spec.containers[0].resources: must be a mapping, got a list",
        ),
        (
            _set("spec.containers.0.resources", {"requests": {"cpu": "1x"}}),
            P + "spec.containers[0].resources.requests.cpu: invalid quantity '1x': "
            "unknown suffix 'x'",
        ),
        (
            _set("spec.containers.0.resources", {"limits": {"memory": "-1"}}),
            P + "spec.containers[0].resources.limits.memory: must not be negative, got '-1'",
        ),
        (
            _set("spec.containers.0.restartPolicy", "Sometimes"),
            P + "spec.containers[0].restartPolicy: must be one of Always, OnFailure, Never,"
            " got 'Sometimes'",
        ),
        (
            _set("spec.containers.0.image", 3),
            P + "spec.containers[0].image: must be a string, got 3",
        ),
        (
            _set("spec.overhead", {"cpu": "a lot"}),
            P + "spec.overhead.cpu: invalid quantity 'a lot': no digits",
        ),
        (
            _set("spec.resources", {"requests": {"cpu": []}}),
            P
            + "spec.resources.requests.cpu: invalid quantity a list: must be a string or a number",
        ),
        (_set("spec.schedulerName", 1), P + "spec.schedulerName: must be a string, got 1"),
        (_set("spec.nodeName", ["n1"]), P + "spec.nodeName: must be a string, got a list"),
        (
            _set("spec.priority", "high"),
            P + "spec.priority: must be an integer from -2147483648 to 2147483647, got 'high'",
        ),
        (
            _set("spec.priority", True),
            P + "spec.priority: must be an integer from -2147483648 to 2147483647, got true",
        ),
        (
            _set("spec.priorityClassName", 1),
            P + "spec.priorityClassName: must be a string, got 1",
        ),
        (
            _set("spec.nodeSelector", {"zone": 1}),
            P + "spec.nodeSelector.zone: must be a string, got 1",
        ),
        (
            _set("status.phase", "Sleeping"),
            P + "status.phase: must be one of Pending, Running, Succeeded, Failed, Unknown,"
            " got 'Sleeping'",
        ),
        (
            _set("spec.tolerations", [{"key": "a", "operator": "Within"}]),
            P
            + "spec.tolerations[0].operator: must be one of Equal, Exists (or empty), got 'Within'",
        ),
        (
            _set("spec.tolerations", [{"value": "a"}]),
            P + "spec.tolerations[0].operator: must be Exists when the key is empty",
        ),
        (
            _set("spec.tolerations", [{"key": "a", "operator": "Exists", "value": "b"}]),
            P + "spec.tolerations[0].value: must be empty when the operator is Exists",
        ),
        (
            _set("spec.tolerations", [{"key": "a", "effect": "NoRun"}]),
            P + "spec.tolerations[0].effect: must be one of NoSchedule, PreferNoSchedule,"
            " NoExecute (or empty), got 'NoRun'",
        ),
        (
            _set("spec.containers.0.ports", [{"containerPort": "80"}]),
            P + "spec.containers[0].ports[0].containerPort: must be an integer from 1 to 65535,"
            " got '80'",
        ),
        (
            _set("spec.containers.0.ports", [{"containerPort": 80, "hostPort": 70000}]),
            P + "spec.containers[0].ports[0].hostPort: must be an integer from 0 to 65535,"
            " got 70000",
        ),
        (
            _set(
                "spec.containers.0.ports",
                [{"containerPort": 80, "hostPort": 80, "protocol": "tcp"}],
            ),
            P + "spec.containers[0].ports[0].protocol: must be one of TCP, UDP, SCTP, got 'tcp'",
        ),
    ],
)
def test_a_malformed_field_is_an_error_naming_the_pod_and_the_field(
    mutate: Callable[[Raw], None], message: str
) -> None:
    obj = raw_pod()
    obj["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    mutate(obj)
    with pytest.raises(InputError) as caught:
        convert_pod(obj, priority_classes={}, scheduler_name="vscheduler")
    assert str(caught.value) == message


AFFINITY = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"


def _required(expression: Raw) -> Raw:
    """A node affinity requiring one term of one expression."""
    terms = [{"matchExpressions": [expression]}]
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}


@pytest.mark.parametrize(
    ("node_affinity", "message"),
    [
        (
            {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}},
            f"{AFFINITY}.nodeSelectorTerms: must hold at least one term",
        ),
        (
            {"requiredDuringSchedulingIgnoredDuringExecution": []},
            f"{AFFINITY}: must be a mapping, got a list",
        ),
        (
            _required({"key": "zone", "operator": "Near", "values": ["a"]}),
            f"{AFFINITY}.nodeSelectorTerms[0].matchExpressions[0].operator: must be one of In,"
            " NotIn, Exists, DoesNotExist, Gt, Lt, got 'Near'",
        ),
        (
            _required({"key": "zone", "operator": "In"}),
            f"{AFFINITY}.nodeSelectorTerms[0].matchExpressions[0].values: must not be empty"
            " for operator In",
        ),
        (
            _required({"key": "zone", "operator": "Exists", "values": ["a"]}),
            f"{AFFINITY}.nodeSelectorTerms[0].matchExpressions[0].values: must be empty for"
            " operator Exists",
        ),
        (
            _required({"key": "cores", "operator": "Gt", "values": ["many"]}),
            f"{AFFINITY}.nodeSelectorTerms[0].matchExpressions[0].values: must be an integer"
            " for operator Gt, got 'many'",
        ),
        (
            _required({"key": "zone", "operator": "In", "values": [1]}),
            f"{AFFINITY}.nodeSelectorTerms[0].matchExpressions[0].values[0]: must be a string,"
            " got 1",
        ),
        (
            _required({"operator": "Exists"}),
            f"{AFFINITY}.nodeSelectorTerms[0].matchExpressions[0].key: must be a non-empty string",
        ),
        (
            {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]},
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
            ".weight: must be an integer from 1 to 100, got 0",
        ),
    ],
)
def test_a_malformed_node_affinity_is_an_error_naming_the_field(
    node_affinity: Raw, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        convert(raw_pod(affinity={"nodeAffinity": node_affinity}))
    assert str(caught.value) == P + message


def test_a_field_selector_only_selects_by_name_with_one_value() -> None:
    fields = {"key": "metadata.labels", "operator": "In", "values": ["a"]}
    term = {"matchFields": [fields]}
    node_affinity = {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
    }
    with pytest.raises(InputError, match=r"must be 'metadata\.name', got 'metadata\.labels'"):
        convert(raw_pod(affinity={"nodeAffinity": node_affinity}))
    fields.update(key="metadata.name", values=["a", "b"])
    with pytest.raises(InputError, match="must hold exactly one value for a field selector, got 2"):
        convert(raw_pod(affinity={"nodeAffinity": copy.deepcopy(node_affinity)}))


@settings(max_examples=200, deadline=None)
@given(affinities())
def test_the_strategys_node_affinities_are_ones_the_api_server_accepts(affinity: Raw) -> None:
    """The fuzzers' pods reach the scheduler as the API server lets them: every field selector
    is on metadata.name, In or NotIn, with one value, and the whole node affinity reads."""
    node_side = affinity.get("nodeAffinity", {})
    required = node_side.get("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = list(required.get("nodeSelectorTerms", []))
    preferred = node_side.get("preferredDuringSchedulingIgnoredDuringExecution", [])
    terms += [entry["preference"] for entry in preferred]
    for term in terms:
        for field in term.get("matchFields", []):
            assert field["key"] == "metadata.name", field
            assert field["operator"] in ("In", "NotIn"), field
            assert len(field["values"]) == 1, field
    convert(raw_pod(affinity={"nodeAffinity": node_side}))


# --- annotations Volcano reads silently though they are likely mistakes --------------------------
@pytest.mark.parametrize(
    ("annotations", "labels", "warnings"),
    [
        (
            {"volcano.sh/preemptable": "maybe"},
            {},
            [
                "Pod default/p1: metadata.annotations[volcano.sh/preemptable]: 'maybe' is not a"
                " boolean (true or false); it is read as false, as Volcano reads it: the pod is not"
                " preemptable, no preempt or reclaim evicts it"
            ],
        ),
        (
            {},
            {"volcano.sh/preemptable": "yes"},
            [
                "Pod default/p1: metadata.labels[volcano.sh/preemptable]: 'yes' is not a boolean"
                " (true or false); it is read as false, as Volcano reads it: the pod is not"
                " preemptable, no preempt or reclaim evicts it"
            ],
        ),
        ({"volcano.sh/preemptable": "False"}, {"volcano.sh/preemptable": "maybe"}, []),
        ({"volcano.sh/preemptable": "1"}, {}, []),
        (
            {"scheduling.k8s.io/group-name": ""},
            {},
            [
                "Pod default/p1: metadata.annotations[scheduling.k8s.io/group-name]: '' is empty;"
                " it is read as absent, as Volcano reads it: the pod is a job of its own"
                " (minMember 1), with no PodGroup"
            ],
        ),
        (
            {"scheduling.k8s.io/group-name": "", "scheduling.volcano.sh/group-name": "pg"},
            {},
            [
                "Pod default/p1: metadata.annotations[scheduling.k8s.io/group-name]: '' is empty;"
                " it is read as absent, as Volcano reads it: the pod belongs to PodGroup pg"
                " (another group-name annotation)"
            ],
        ),
        ({"scheduling.k8s.io/group-name": "pg"}, {}, []),
    ],
)
def test_a_malformed_preemptable_or_an_empty_group_name_is_warned_as_unusual(
    annotations: dict[str, str], labels: dict[str, str], warnings: list[str]
) -> None:
    obj = raw_pod()
    obj["metadata"]["annotations"] = annotations
    obj["metadata"]["labels"] = labels
    task = convert(obj)
    assert [w.message for w in task.warnings] == warnings
    assert {w.reason for w in task.warnings} <= {"UnusualValue"}


def test_another_schedulers_pod_is_not_warned_about_its_annotations() -> None:
    obj = raw_pod(schedulerName="default-scheduler", nodeName="n1")
    obj["metadata"]["annotations"] = {"volcano.sh/preemptable": "maybe"}
    assert convert(obj).warnings == ()


GO_BOOLEANS = {"1", "t", "T", "true", "TRUE", "True", "0", "f", "F", "false", "FALSE", "False"}


@settings(max_examples=200, deadline=None)
@given(pods())
def test_every_malformed_preemptable_and_empty_group_name_of_our_pods_is_warned(obj: Raw) -> None:
    obj = copy.deepcopy(obj)
    obj["metadata"].update(name="p", namespace="default", uid="uid-p")
    try:
        task = convert_pod(obj, priority_classes={}, scheduler_name=SCHEDULER)
    except InputError:
        return  # a malformed pod is named by its error (test_fuzz_objects)
    if task is None:
        return
    warned = [
        w.message
        for w in task.warnings
        if w.reason == "UnusualValue"
        and ("preemptable]" in w.message or "group-name]" in w.message)
    ]
    if task.scheduler_name != SCHEDULER:
        assert warned == []
        return
    meta = obj["metadata"]
    preemptable = meta["annotations"].get("volcano.sh/preemptable")
    where = "annotations"
    if preemptable is None:
        preemptable, where = meta["labels"].get("volcano.sh/preemptable"), "labels"
    expected = 0
    if preemptable is not None and preemptable not in GO_BOOLEANS:
        expected += 1
        assert any(
            f"metadata.{where}[volcano.sh/preemptable]: {preemptable!r} is not a boolean" in m
            for m in warned
        ), warned
        assert not task.preemptable
    for key in ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name"):
        if meta["annotations"].get(key) == "":
            expected += 1
            assert any(f"metadata.annotations[{key}]: '' is empty" in m for m in warned), warned
    assert len(warned) == expected, warned


def test_a_pod_with_a_scheduling_gate_is_gated_and_one_with_none_is_not() -> None:
    assert convert(raw_pod(schedulingGates=[{"name": "example.com/quota"}])).scheduling_gated
    assert not convert(raw_pod(schedulingGates=[])).scheduling_gated
    assert not convert(raw_pod()).scheduling_gated
