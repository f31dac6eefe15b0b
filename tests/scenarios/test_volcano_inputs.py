"""Inputs Volcano accepts, read as Volcano reads them, through the converters (raw objects, as
`simulate` and the cache take them), with cases transcribed from Volcano's own test tables:

- `spec.minTaskMember` with the key "": the minimum of pods without a task role (job_info.go
  `getTaskRole`, `CheckTaskValid`/`Ready`/`Pipelined`); Volcano's preempt_test.go writes it.
- a pod's task role: the `volcano.sh/task-spec` annotation, else the label of that name
  (allocate_test.go builds its pods with the label).
- `spec.preemptionPolicy` of the pod (preempt_test.go, reclaim_test.go), the PriorityClass's
  when the pod has none.
- a Queue's `spec.weight: 0`, read as 1 as Volcano's admission (mutate_queue.go) sets it.

The objects mirror Volcano's test helpers (`util.BuildPod`, `BuildNode`, `BuildPodGroup`,
`BuildQueue`): a pod's labels are the helper's labels (Volcano passes `volcano.sh/preemptable`
and `volcano.sh/task-spec` there), its only annotation names its PodGroup; quantities as
written (`1G` is 10^9 bytes).
"""

from __future__ import annotations

from typing import Any

from vscheduler.convert.files import SourcedObject
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.testing.scenario import run

Raw = dict[str, Any]


# --- Volcano's test helpers, as raw objects -----------------------------------------------------
def build_node(
    name: str, cpu: str, memory: str, pods: int, labels: dict[str, str] | None = None
) -> Raw:
    allocatable = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def build_pod(
    namespace: str,
    name: str,
    node: str,
    phase: str,
    request: dict[str, str],
    group: str,
    labels: dict[str, str] | None = None,
    selector: dict[str, str] | None = None,
    *,
    preemption_policy: str | None = None,
    priority_class: str = "",
) -> Raw:
    spec: Raw = {
        "schedulerName": "vscheduler",
        "containers": [{"name": "c", "resources": {"requests": request}}],
        "nodeSelector": selector or {},
    }
    if node:
        spec["nodeName"] = node
    if preemption_policy is not None:
        spec["preemptionPolicy"] = preemption_policy
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"{namespace}-{name}",
            "labels": labels or {},
            "annotations": {"scheduling.k8s.io/group-name": group},
        },
        "spec": spec,
        "status": {"phase": phase},
    }


def build_podgroup(
    name: str,
    namespace: str,
    queue: str,
    min_member: int,
    min_task_member: dict[str, int] | None,
    phase: str,
    priority_class: str = "",
) -> Raw:
    spec: Raw = {"queue": queue, "minMember": min_member}
    if min_task_member is not None:
        spec["minTaskMember"] = min_task_member
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": {"phase": phase},
    }


def build_queue(name: str, weight: int, capability: dict[str, str] | None = None) -> Raw:
    spec: Raw = {"weight": weight}
    if capability:
        spec["capability"] = capability
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
    }


def build_priority_class(name: str, value: int, preemption_policy: str | None = None) -> Raw:
    obj: Raw = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    if preemption_policy is not None:
        obj["preemptionPolicy"] = preemption_policy
    return obj


def cluster(*objects: Raw) -> ClusterSnapshot:
    sourced = [SourcedObject(f"cluster.yaml#{i + 1}", o) for i, o in enumerate(objects)]
    return build_snapshot(sourced, scheduler_name="vscheduler")


def res(cpu: str, memory: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory}


PREEMPTABLE = {"volcano.sh/preemptable": "true"}
NOT_PREEMPTABLE = {"volcano.sh/preemptable": "false"}


# --- allocate_test.go TestAllocate: task roles from the label -----------------------------------
ALLOCATE = """\
actions: "allocate"
tiers:
- plugins:
  - {name: gang, enableJobOrder: true, enableJobReady: true, enableJobPipelined: true,
     enableJobStarving: true, enablePreemptable: false, enableReclaimable: false}
  - {name: drf, enablePreemptable: true, enableJobOrder: true, enableReclaimable: false,
     enableQueueOrder: false}
  - {name: proportion, enableQueueOrder: true, enableReclaimable: true, enabledAllocatable: true,
     enablePredicate: false, enableJobEnqueued: false, enabledOverused: false,
     enablePreemptive: false}
  - {name: predicates, enablePredicate: true}
  - {name: nodeorder, enableNodeOrder: true}
"""


def role(name: str) -> dict[str, str]:
    return {"volcano.sh/task-spec": name}


def role_pods(*roles: str) -> list[Raw]:
    return [
        build_pod("c1", f"p{i}", "", "Pending", res("1", "1G"), "pg1", role(r), {"nodeRole": r})
        for i, r in enumerate(roles)
    ]


def test_task_roles_from_the_label_let_each_role_reach_its_minimum() -> None:
    """allocate_test.go TestAllocate, "prepredicate failed and tasks are not used up, continue
    on until min member meet": the roles come from the pods' labels; master and worker each
    get their one pod. (Read from annotations only, no pod had a role: the job was invalid.)"""
    snap = cluster(
        build_podgroup("pg1", "c1", "c1", 2, {"master": 1, "worker": 1}, "Inqueue"),
        *role_pods("master", "master", "worker", "worker"),
        build_node("n1", "1", "2Gi", 10, {"nodeRole": "master"}),
        build_node("n2", "1", "2Gi", 10, {"nodeRole": "worker"}),
        build_queue("c1", 1),
    )

    [outcome] = run(snap, policy=ALLOCATE)

    assert outcome.binds == {"c1/p0": "n1", "c1/p2": "n2"}


def test_a_role_that_cannot_reach_its_minimum_binds_nothing() -> None:
    """allocate_test.go TestAllocate, "master's min member can not be allocated, break from
    allocating": two masters needed, one master node of one cpu."""
    snap = cluster(
        build_podgroup("pg1", "c1", "c1", 2, {"master": 2, "worker": 0}, "Inqueue"),
        *role_pods("master", "master", "worker", "worker"),
        build_node("n1", "1", "2Gi", 10, {"nodeRole": "master"}),
        build_node("n2", "2", "2Gi", 10, {"nodeRole": "worker"}),
        build_queue("c1", 1),
    )

    [outcome] = run(snap, policy=ALLOCATE)

    assert outcome.binds == {}


def test_a_pod_whose_selector_matches_no_node_leaves_the_other_one_bound() -> None:
    """allocate_test.go TestAllocate, "prepredicate failed: node selector does not match": a
    gang of one, its master's selector matches no node, its worker is bound."""
    snap = cluster(
        build_podgroup("pg1", "c1", "c1", 1, None, "Inqueue"),
        *role_pods("master", "worker"),
        build_node("n1", "2", "4Gi", 10, {"nodeRole": "worker"}),
        build_queue("c1", 1),
    )

    [outcome] = run(snap, policy=ALLOCATE)

    assert outcome.binds == {"c1/p1": "n1"}


def test_one_job_binds_both_its_pods_on_one_node() -> None:
    """allocate_test.go TestAllocate, "one Job with two Pods on one node"."""
    snap = cluster(
        build_podgroup("pg1", "c1", "c1", 0, None, "Inqueue"),
        build_pod("c1", "p1", "", "Pending", res("1", "1G"), "pg1"),
        build_pod("c1", "p2", "", "Pending", res("1", "1G"), "pg1"),
        build_node("n1", "2", "4Gi", 10),
        build_queue("c1", 1),
    )

    [outcome] = run(snap, policy=ALLOCATE)

    assert outcome.binds == {"c1/p1": "n1", "c1/p2": "n1"}


def test_two_queues_of_equal_weight_share_one_node_a_pod_each() -> None:
    """allocate_test.go TestAllocate, "two Jobs on one node": each queue deserves half the
    node's two cpus, so each job binds its first pod and no more."""
    snap = cluster(
        build_podgroup("pg1", "c1", "c1", 0, None, "Inqueue"),
        build_podgroup("pg2", "c2", "c2", 0, None, "Inqueue"),
        *[build_pod("c1", f"pg1-p-{i}", "", "Pending", res("1", "1G"), "pg1") for i in (1, 2)],
        *[build_pod("c2", f"pg2-p-{i}", "", "Pending", res("1", "1G"), "pg2") for i in (1, 2)],
        build_node("n1", "2", "4G", 10),
        build_queue("c1", 1),
        build_queue("c2", 1),
    )

    [outcome] = run(snap, policy=ALLOCATE)

    assert outcome.binds == {"c1/pg1-p-1": "n1", "c2/pg2-p-1": "n1"}


def test_a_queue_whose_job_cannot_fit_does_not_block_the_other_queue() -> None:
    """allocate_test.go TestAllocate, "high priority queue should not block others": a pod of
    three cpus on a node of two waits; the other queue's pod of one is bound."""
    snap = cluster(
        build_podgroup("pg1", "c1", "c1", 0, None, "Inqueue"),
        build_podgroup("pg2", "c1", "c2", 0, None, "Inqueue"),
        build_pod("c1", "p1", "", "Pending", res("3", "1G"), "pg1"),
        build_pod("c1", "p2", "", "Pending", res("1", "1G"), "pg2"),
        build_node("n1", "2", "4G", 10),
        build_queue("c1", 1),
        build_queue("c2", 1),
    )

    [outcome] = run(snap, policy=ALLOCATE)

    assert outcome.binds == {"c1/p2": "n1"}


def test_the_annotation_wins_over_the_label() -> None:
    """getTaskRole: a non-empty annotation first, else the label."""
    pods = role_pods("master", "worker")
    pods[1]["metadata"]["annotations"]["volcano.sh/task-spec"] = "master"
    snap = cluster(
        build_podgroup("pg1", "c1", "c1", 2, {"master": 2}, "Inqueue"),
        *pods,
        build_node("n1", "1", "2Gi", 10, {"nodeRole": "master"}),
        build_node("n2", "1", "2Gi", 10, {"nodeRole": "worker"}),
        build_queue("c1", 1),
    )

    [outcome] = run(snap, policy=ALLOCATE)

    assert snap.tasks["c1-p1"].task_role == "master"
    assert outcome.binds == {"c1/p0": "n1", "c1/p1": "n2"}


# --- preempt_test.go TestPreempt: minTaskMember {"": n} -----------------------------------------
PREEMPT = """\
actions: "preempt"
tiers:
- plugins:
  - {name: conformance, enablePreemptable: true, enableReclaimable: false}
  - {name: gang, enablePreemptable: true, enableJobPipelined: true, enableJobStarving: true,
     enableJobOrder: false, enableJobReady: false, enableReclaimable: false}
  - {name: priority, enableTaskOrder: true, enableJobOrder: true, enablePreemptable: true,
     enableJobPipelined: true, enableJobStarving: true}
  - {name: proportion, enabledOverused: true, enabledAllocatable: true, enableQueueOrder: true,
     enableReclaimable: false, enablePredicate: false, enableJobEnqueued: false,
     enablePreemptive: false}
"""
CLASSES = (build_priority_class("high-priority", 100000), build_priority_class("low-priority", 10))


def test_a_gang_of_pods_without_roles_counts_them_under_the_empty_key() -> None:
    """preempt_test.go TestPreempt, "preempt enough tasks to fit large task of different job":
    pg2's `minTaskMember: {"": 1}` counts its role-less preemptor; two of pg1's preemptable
    pods are evicted, the third is not preemptable."""
    snap = cluster(
        *CLASSES,
        build_podgroup("pg1", "c1", "q1", 1, {"": 3}, "Inqueue", "low-priority"),
        build_podgroup("pg2", "c1", "q1", 1, {"": 1}, "Inqueue", "high-priority"),
        build_pod("c1", "preemptee1", "n1", "Running", res("1", "1G"), "pg1", PREEMPTABLE),
        build_pod("c1", "preemptee2", "n1", "Running", res("1", "1G"), "pg1", PREEMPTABLE),
        build_pod("c1", "preemptee3", "n1", "Running", res("1", "1G"), "pg1", NOT_PREEMPTABLE),
        build_pod("c1", "preemptor1", "", "Pending", res("5", "5G"), "pg2"),
        build_node("n1", "6", "6G", 10),
        build_queue("q1", 1),
    )

    [outcome] = run(snap, policy=PREEMPT)

    assert snap.jobs["c1/pg2"].min_task_member == {"": 1}
    assert sorted(outcome.evictions) == ["c1/preemptee1", "c1/preemptee2"]
    assert outcome.result.pipelined == {"c1/preemptor1": "n1"}


def test_one_victim_is_enough_when_the_gang_needs_one_pod() -> None:
    """preempt_test.go TestPreempt, "preempt one task of different job to fit both jobs on one
    node"."""
    snap = cluster(
        *CLASSES,
        build_podgroup("pg1", "c1", "q1", 1, {"": 2}, "Inqueue", "low-priority"),
        build_podgroup("pg2", "c1", "q1", 1, {"": 2}, "Inqueue", "high-priority"),
        build_pod("c1", "preemptee1", "n1", "Running", res("1", "1G"), "pg1", PREEMPTABLE),
        build_pod("c1", "preemptee2", "n1", "Running", res("1", "1G"), "pg1", NOT_PREEMPTABLE),
        build_pod("c1", "preemptor1", "", "Pending", res("1", "1G"), "pg2"),
        build_pod("c1", "preemptor2", "", "Pending", res("1", "1G"), "pg2"),
        build_node("n1", "2", "2G", 10),
        build_queue("q1", 1),
    )

    [outcome] = run(snap, policy=PREEMPT)

    assert outcome.evictions == ["c1/preemptee1"]


def test_nothing_is_preempted_when_the_node_has_room() -> None:
    """preempt_test.go TestPreempt, "do not preempt if there are enough idle resources"."""
    snap = cluster(
        *CLASSES,
        build_podgroup("pg1", "c1", "q1", 3, {"": 3}, "Inqueue"),
        build_pod("c1", "preemptee1", "n1", "Running", res("1", "1G"), "pg1"),
        build_pod("c1", "preemptee2", "n1", "Running", res("1", "1G"), "pg1"),
        build_pod("c1", "preemptor1", "", "Pending", res("1", "1G"), "pg1"),
        build_node("n1", "10", "10G", 10),
        build_queue("q1", 1),
    )

    [outcome] = run(snap, policy=PREEMPT)

    assert outcome.evictions == []


# --- preemptionPolicy: the pod's own field -----------------------------------------------------
def never_preempting_cluster(policy: str | None) -> ClusterSnapshot:
    """preempt_test.go TestPreempt, "can not preempt resources when task preemption policy is
    never": the classes allow preemption, the preemptor's own spec says Never."""
    return cluster(
        *CLASSES,
        build_podgroup("pg1", "c1", "q1", 0, None, "Inqueue", "low-priority"),
        build_podgroup("pg2", "c1", "q1", 1, None, "Inqueue", "high-priority"),
        build_pod("c1", "preemptee1", "n1", "Running", res("1", "1G"), "pg1", PREEMPTABLE),
        build_pod(
            "c1", "preemptor1", "", "Pending", res("1", "1G"), "pg2", preemption_policy=policy
        ),
        build_node("n1", "1", "1Gi", 1),
        build_queue("q1", 1),
    )


def test_a_pod_whose_own_preemption_policy_is_never_preempts_nothing() -> None:
    [outcome] = run(never_preempting_cluster("Never"), policy=PREEMPT)

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}


def test_the_same_pod_with_preempt_lower_priority_preempts() -> None:
    [outcome] = run(never_preempting_cluster("PreemptLowerPriority"), policy=PREEMPT)

    assert outcome.evictions == ["c1/preemptee1"]


RECLAIM = """\
actions: "reclaim"
tiers:
- plugins:
  - {name: conformance, enableReclaimable: true, enablePreemptable: false}
  - {name: gang, enableReclaimable: true, enableJobStarving: true, enableJobOrder: false,
     enableJobReady: false, enableJobPipelined: false, enablePreemptable: false}
  - {name: proportion, enableReclaimable: true, enableQueueOrder: true, enablePreemptive: true,
     enabledAllocatable: false, enabledOverused: false, enablePredicate: false,
     enableJobEnqueued: false}
  - {name: priority, enableReclaimable: true, enableJobOrder: true, enableTaskOrder: true,
     enablePreemptable: false, enableJobPipelined: false, enableJobStarving: false}
"""


def test_a_pod_whose_preemption_policy_is_never_reclaims_nothing() -> None:
    """reclaim_test.go TestReclaim, "can not reclaim resources when task preemption policy is
    never"."""
    snap = cluster(
        build_priority_class("low-priority", 100),
        build_priority_class("high-priority", 1000, "Never"),
        build_podgroup("pg1", "c1", "q1", 0, None, "Inqueue", "low-priority"),
        build_podgroup("pg2", "c1", "q2", 0, None, "Inqueue", "high-priority"),
        build_pod("c1", "preemptee1", "n1", "Running", res("1", "1G"), "pg1", PREEMPTABLE),
        build_pod(
            "c1", "preemptor1", "", "Pending", res("1", "1G"), "pg2", preemption_policy="Never"
        ),
        build_node("n1", "1", "1Gi", 1),
        build_queue("q1", 5),
        build_queue("q2", 10),
    )

    [outcome] = run(snap, policy=RECLAIM.split("  - {name: priority")[0])

    assert outcome.evictions == []


def second_task_cluster(second_class: str = "") -> ClusterSnapshot:
    """reclaim_test.go TestReclaim, "Reclaim succeeds for second task when first task has
    PreemptionPolicy=Never" (`second_class`: a class the second preemptor names)."""
    return cluster(
        build_priority_class("low-priority", 100),
        build_priority_class("high-priority-no-preempt", 1000, "Never"),
        build_priority_class("high-priority-can-preempt", 900),
        build_podgroup("pg-victim", "c1", "q1", 1, None, "Running", "low-priority"),
        build_podgroup("pg-preemptor", "c1", "q2", 2, None, "Inqueue", "high-priority-no-preempt"),
        build_pod(
            "c1", "victim-pod-no", "n1", "Running", res("1", "1G"), "pg-victim", NOT_PREEMPTABLE
        ),
        build_pod("c1", "victim-pod", "n1", "Running", res("1", "1G"), "pg-victim", PREEMPTABLE),
        build_pod(
            "c1",
            "preemptor-task1-non-preemptable",
            "",
            "Pending",
            res("1", "1G"),
            "pg-preemptor",
            preemption_policy="Never",
        ),
        build_pod(
            "c1",
            "preemptor-task2-preemptable",
            "",
            "Pending",
            res("1", "1G"),
            "pg-preemptor",
            priority_class=second_class,
        ),
        build_node("n1", "2", "2G", 10),
        build_queue("q1", 1),
        build_queue("q2", 1),
    )


def test_the_second_task_reclaims_when_only_the_first_says_never() -> None:
    """The PodGroup's class says Never, but a pod's policy is its own (its class's when it has
    no field; these pods name no class)."""
    [outcome] = run(second_task_cluster(), policy=RECLAIM)

    assert outcome.evictions == ["c1/victim-pod"]


def test_a_pod_without_the_field_takes_its_own_priority_class_policy() -> None:
    """What admission writes into a pod that names a class whose policy is Never."""
    [outcome] = run(second_task_cluster("high-priority-no-preempt"), policy=RECLAIM)

    assert outcome.evictions == []


# --- Queue spec.weight: 0 ---------------------------------------------------------------------
def queues_weighted(zero_weight: int) -> ClusterSnapshot:
    """Queue `zero` (weight `zero_weight`) and queue `three` (weight 3) each want 16 one-cpu
    pods of a 16-cpu cluster (default policy: proportion shares it by weight)."""
    objects: list[Raw] = [build_node(f"n{i}", "4", "32Gi", 110) for i in range(4)]
    objects += [build_queue("zero", zero_weight), build_queue("three", 3)]
    for name in ("zero", "three"):
        for i in range(16):
            objects.append(build_podgroup(f"{name}-{i:02d}", "ns", name, 1, None, "Inqueue"))
            objects.append(
                build_pod(
                    "ns", f"{name}-{i:02d}-0", "", "Pending", res("1", "1Gi"), f"{name}-{i:02d}"
                )
            )
    return cluster(*objects)


def shares(binds: dict[str, str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for key in binds:
        queue_name = key.split("/")[1].split("-")[0]
        out[queue_name] = out.get(queue_name, 0) + 1
    return out


def test_a_queue_of_weight_0_shares_as_a_queue_of_weight_1_and_is_warned() -> None:
    """mutate_queue.go: Volcano's admission writes `weight: 1` over 0; the scheduler reads 0 as
    1 (a queue the webhook did not see: an older CRD, a snapshot) and says so."""
    snap = queues_weighted(0)
    [outcome] = run(snap)
    [same] = run(queues_weighted(1))

    assert snap.queues["zero"].weight == 1
    assert [w.message for w in snap.queues["zero"].warnings] == [
        "Queue zero: spec.weight: 0 is read as 1, as Volcano's admission sets it (a queue's"
        " share of the cluster is in proportion to its weight)"
    ]
    assert shares(outcome.binds) == {"zero": 4, "three": 12}
    assert outcome.binds == same.binds


# --- gang: the "" key and label roles, phases and conditions -----------------------------------
GANG = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}, {name: proportion}, {name: nodeorder}]
"""


def gang_with_role_less_pods(role_less: int) -> ClusterSnapshot:
    """`minMember: 3, minTaskMember: {"": 2, ps: 1}`: one `ps` pod (by label) and `role_less`
    pods without a role."""
    pods = [build_pod("ml", "train-ps", "", "Pending", res("1", "1Gi"), "train", role("ps"))]
    pods += [
        build_pod("ml", f"train-{i}", "", "Pending", res("1", "1Gi"), "train")
        for i in range(role_less)
    ]
    return cluster(
        build_node("n1", "4", "8Gi", 110),
        build_podgroup("train", "ml", "default", 3, {"": 2, "ps": 1}, "Pending"),
        *pods,
    )


def test_too_few_pods_without_a_role_make_the_gang_invalid() -> None:
    """job_info.go CheckTaskValid: role-less pods count under "", one is short of two."""
    [outcome] = run(gang_with_role_less_pods(1), policy=GANG)

    assert outcome.binds == {}
    status = outcome.result.podgroups["ml/train"]
    assert [(c.type, c.status, c.reason, c.message) for c in status.conditions] == [
        (
            "Unschedulable",
            "True",
            "NotEnoughPodsOfTask",
            "Not enough valid pods of each task for gang-scheduling",
        )
    ]


def test_enough_pods_without_a_role_run_the_gang() -> None:
    [outcome] = run(gang_with_role_less_pods(2), policy=GANG)

    assert outcome.binds == {"ml/train-ps": "n1", "ml/train-0": "n1", "ml/train-1": "n1"}
    status = outcome.result.podgroups["ml/train"]
    assert status.phase.value == "Running"
    assert [(c.type, c.status) for c in status.conditions] == [("Scheduled", "True")]
