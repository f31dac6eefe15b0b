from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.cache.entries import kept_pod
from vscheduler.clock import FixedClock
from vscheduler.informer.kinds import (
    NAMESPACE,
    NODE,
    PDB,
    POD,
    PODGROUP,
    PRIORITY_CLASS,
    QUEUE,
    RESOURCE_QUOTA,
    Kind,
    config_map,
)
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.facts import NodeUsage
from vscheduler.model.resources import EMPTY
from vscheduler.model.status import PodGroupPhase, TaskStatus

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def stamp(seconds: int) -> str:
    return (START + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def raw_pod(
    name: str,
    *,
    uid: str | None = None,
    node: str | None = None,
    phase: str = "Pending",
    scheduler: str = "vscheduler",
    group: str | None = None,
    cpu: object = "1",
    created: int = 0,
    priority: int | None = None,
    priority_class: str | None = None,
    version: str | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "ns",
        "uid": uid or f"uid-{name}",
        "creationTimestamp": stamp(created),
    }
    if group is not None:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    if version is not None:
        meta["resourceVersion"] = version
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node is not None:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": phase},
    }


def raw_node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def raw_podgroup(name: str, min_member: object = 2, priority_class: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member, "queue": "q1"}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": spec,
        "status": {"phase": "Inqueue"},
    }


def raw_queue(name: str, weight: object = 1) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": weight},
    }


def raw_class(name: str, value: int, *, default: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
    }


def raw_named(kind: str, name: str, namespace: str | None = "ns") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"kind": kind, "metadata": meta}


def event(type_: Any, obj: dict[str, Any]) -> WatchEvent:
    return WatchEvent(type_, obj)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def cache(clock: FixedClock) -> SchedulerCache:
    return SchedulerCache(clock=clock)


# --- holding each kind -------------------------------------------------------------------------
def test_a_snapshot_holds_every_kind_listed(cache: SchedulerCache) -> None:
    cache.replace(PRIORITY_CLASS, [raw_class("high", 100)])
    cache.replace(NAMESPACE, [raw_named("Namespace", "b", None), raw_named("Namespace", "a", None)])
    cache.replace(NODE, [raw_node("n2"), raw_node("n1")])
    cache.replace(QUEUE, [raw_queue("q1", 3)])
    cache.replace(PODGROUP, [raw_podgroup("pg1")])
    cache.replace(POD, [raw_pod("p1", group="pg1"), raw_pod("p2", node="n1", phase="Running")])
    cache.replace(RESOURCE_QUOTA, [raw_named("ResourceQuota", "rq")])
    cache.replace(PDB, [raw_named("PodDisruptionBudget", "pdb")])
    cache.replace(config_map("kube-system", "res"), [raw_named("ConfigMap", "res")])

    snap = cache.snapshot()

    assert [n.name for n in snap.nodes] == ["n1", "n2"]
    assert sorted(t.key for t in snap.tasks.values()) == ["ns/p1", "ns/p2"]
    assert snap.tasks["uid-p2"].status is TaskStatus.RUNNING
    assert list(snap.jobs) == ["ns/pg1", "ns/podgroup-uid-p2"]
    assert snap.jobs["ns/pg1"].min_member == 2
    assert snap.queues["q1"].weight == 3
    assert "default" in snap.queues
    assert snap.priority_classes["high"].value == 100
    assert snap.namespaces == ("a", "b")
    assert [rq["metadata"]["name"] for rq in snap.resource_quotas] == ["rq"]  # type: ignore[index]
    assert len(snap.pod_disruption_budgets) == 1
    assert len(snap.config_maps) == 1
    assert snap.taken_at == START
    assert cache.problems() == {}


def test_events_add_change_and_delete_a_pod(cache: SchedulerCache) -> None:
    cache.apply(POD, event("ADDED", raw_pod("p1")))
    assert cache.snapshot().tasks["uid-p1"].status is TaskStatus.PENDING

    cache.apply(POD, event("MODIFIED", raw_pod("p1", node="n1")))
    task = cache.snapshot().tasks["uid-p1"]
    assert (task.status, task.node_name) == (TaskStatus.BOUND, "n1")

    cache.apply(POD, event("DELETED", raw_pod("p1", node="n1")))
    assert cache.snapshot().tasks == {}
    assert cache.pod_raw("uid-p1") is None


def test_events_add_change_and_delete_nodes_queues_and_podgroups(cache: SchedulerCache) -> None:
    cache.apply(NODE, event("ADDED", raw_node("n1")))
    cache.apply(QUEUE, event("ADDED", raw_queue("q1")))
    cache.apply(PODGROUP, event("ADDED", raw_podgroup("pg1")))
    cache.apply(NODE, event("MODIFIED", raw_node("n1", cpu="8")))
    cache.apply(QUEUE, event("MODIFIED", raw_queue("q1", 5)))
    cache.apply(PODGROUP, event("MODIFIED", raw_podgroup("pg1", min_member=4)))
    snap = cache.snapshot()
    assert snap.nodes[0].allocatable.get("cpu") == 8000
    assert snap.queues["q1"].weight == 5
    assert snap.jobs["ns/pg1"].min_member == 4

    cache.apply(NODE, event("DELETED", raw_node("n1")))
    cache.apply(QUEUE, event("DELETED", raw_queue("q1")))
    cache.apply(PODGROUP, event("DELETED", raw_podgroup("pg1")))
    snap = cache.snapshot()
    assert (snap.nodes, list(snap.queues), dict(snap.jobs)) == ((), ["default"], {})


def test_a_bookmark_changes_nothing(cache: SchedulerCache) -> None:
    before = cache.generation
    cache.apply(POD, event("BOOKMARK", {"metadata": {"resourceVersion": "7"}}))
    assert cache.generation == before


def test_a_relist_forgets_what_it_does_not_hold(cache: SchedulerCache) -> None:
    cache.replace(POD, [raw_pod("p1"), raw_pod("p2")])
    cache.replace(NODE, [raw_node("n1"), raw_node("n2")])
    cache.replace(POD, [raw_pod("p2")])
    cache.replace(NODE, [raw_node("n2")])
    snap = cache.snapshot()
    assert list(snap.tasks) == ["uid-p2"]
    assert [n.name for n in snap.nodes] == ["n2"]


def test_pods_of_other_schedulers_matter_only_while_they_occupy_a_node(
    cache: SchedulerCache,
) -> None:
    cache.replace(
        POD,
        [
            raw_pod("waiting", scheduler="default-scheduler"),
            raw_pod("running", scheduler="default-scheduler", node="n1", phase="Running"),
            raw_pod("done", scheduler="default-scheduler", node="n1", phase="Succeeded"),
        ],
    )
    assert [t.name for t in cache.snapshot().tasks.values()] == ["running"]
    assert cache.pod_raw("uid-waiting") is None


def test_tasks_are_ordered_by_creation_time_then_uid(cache: SchedulerCache) -> None:
    cache.replace(
        POD,
        [
            raw_pod("c", created=5),
            raw_pod("b", uid="u2", created=1),
            raw_pod("a", uid="u1", created=1),
        ],
    )
    cache.apply(POD, event("ADDED", raw_pod("d", created=0)))
    cache.apply(POD, event("ADDED", raw_pod("e", created=9)))
    assert [t.name for t in cache.snapshot().tasks.values()] == ["d", "a", "b", "c", "e"]


def test_a_pod_recreated_under_its_name_replaces_the_old_one(cache: SchedulerCache) -> None:
    cache.apply(POD, event("ADDED", raw_pod("p1", uid="old")))
    cache.apply(POD, event("ADDED", raw_pod("p1", uid="new")))
    assert list(cache.snapshot().tasks) == ["new"]
    assert cache.pod_uid("ns/p1") == "new"


def test_raw_objects_are_served_by_uid_and_by_key(cache: SchedulerCache) -> None:
    pod, group, node = raw_pod("p1"), raw_podgroup("pg1"), raw_node("n1")
    cache.apply(POD, event("ADDED", pod))
    cache.apply(PODGROUP, event("ADDED", group))
    cache.apply(NODE, event("ADDED", node))
    assert cache.pod_raw("uid-p1") == kept_pod(pod)
    assert cache.pod_uid("ns/p1") == "uid-p1"
    assert cache.podgroup_raw("ns/pg1") is group
    assert cache.podgroup_raws(["ns/gone", "ns/pg1"]) == [None, group]
    assert cache.object_raw("Pod", "ns/p1") == kept_pod(pod)
    assert cache.object_raw("Node", "n1") is node
    assert cache.object_raw("Node", "n2") is None
    assert cache.object_raw("Lease", "x") is None


def test_a_kind_the_cache_does_not_hold_is_refused(cache: SchedulerCache) -> None:
    lease = Kind("Lease", "coordination.k8s.io", "v1", "leases", namespaced=True)
    with pytest.raises(ValueError, match="does not hold Lease"):
        cache.apply(lease, event("ADDED", raw_named("Lease", "l")))


def test_node_usage_is_handed_in_by_the_collector(cache: SchedulerCache) -> None:
    usage = {"n1": NodeUsage(node="n1", usage={"cpu": {"10m": 40.0}}, metrics_time=START)}
    before = cache.generation
    cache.set_usage(usage)
    assert cache.snapshot().usage == usage
    assert cache.generation != before


def test_a_snapshot_shares_the_facts_and_is_not_changed_by_later_events(
    cache: SchedulerCache,
) -> None:
    cache.replace(POD, [raw_pod("p1"), raw_pod("p2")])
    cache.replace(NODE, [raw_node("n1")])
    first = cache.snapshot()
    cache.apply(POD, event("ADDED", raw_pod("p3", created=9)))
    second = cache.snapshot()
    assert second.tasks["uid-p1"] is first.tasks["uid-p1"]
    assert second.nodes[0] is first.nodes[0]
    assert "uid-p3" not in first.tasks


# --- bad input --------------------------------------------------------------------------------
def test_a_malformed_pod_of_this_scheduler_is_kept_pending_with_its_problem(
    cache: SchedulerCache,
) -> None:
    cache.apply(POD, event("ADDED", raw_pod("p1", group="pg1", cpu="lots")))
    task = cache.snapshot().tasks["uid-p1"]
    message = (
        "Pod ns/p1: spec.containers[0].resources.requests.cpu: invalid quantity 'lots': no digits"
    )
    assert (task.status, task.resreq, task.problem) == (TaskStatus.PENDING, EMPTY, message)
    assert (task.job, task.group_name) == ("ns/pg1", "pg1")
    assert cache.problems() == {"Pod ns/p1": message}


def test_a_field_selector_the_api_server_would_refuse_is_reported_on_the_pod_and_skipped(
    cache: SchedulerCache,
) -> None:
    """matchFields takes exactly one value (the API server refuses more); a pod holding two
    (an object from an older server, or a test) is told so on itself, and requests nothing."""
    pod = raw_pod("p1", cpu="1")
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]}
    required = {"nodeSelectorTerms": [term]}
    pod["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}
    }
    cache.apply(POD, event("ADDED", pod))
    task = cache.snapshot().tasks["uid-p1"]
    message = (
        "Pod ns/p1: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchFields[0].values: must hold exactly one value for a field"
        " selector, got 2"
    )
    assert (task.status, task.resreq, task.problem) == (TaskStatus.PENDING, EMPTY, message)
    assert cache.problems() == {"Pod ns/p1": message}


def test_a_pods_problem_is_cleared_when_it_is_fixed_or_deleted(cache: SchedulerCache) -> None:
    cache.apply(POD, event("ADDED", raw_pod("p1", cpu="lots")))
    cache.apply(POD, event("MODIFIED", raw_pod("p1")))
    assert cache.problems() == {}
    assert cache.snapshot().tasks["uid-p1"].problem == ""
    cache.apply(POD, event("MODIFIED", raw_pod("p1", cpu="lots")))
    cache.apply(POD, event("DELETED", raw_pod("p1", cpu="lots")))
    assert cache.problems() == {}


def test_a_malformed_pod_on_a_node_keeps_its_node_and_status(cache: SchedulerCache) -> None:
    cache.apply(POD, event("ADDED", raw_pod("p1", node="n1", phase="Running", cpu=[])))
    task = cache.snapshot().tasks["uid-p1"]
    assert (task.status, task.node_name, task.resreq) == (TaskStatus.RUNNING, "n1", EMPTY)
    assert task.problem.startswith("Pod ns/p1: spec.containers[0].resources.requests")


def test_a_malformed_pending_pod_of_another_scheduler_is_none_of_our_business(
    cache: SchedulerCache,
) -> None:
    cache.apply(POD, event("ADDED", raw_pod("p1", scheduler="other", cpu="lots")))
    assert (dict(cache.snapshot().tasks), cache.problems()) == ({}, {})


def test_an_object_without_a_name_is_ignored(cache: SchedulerCache) -> None:
    cache.apply(POD, event("ADDED", {"metadata": {"namespace": "ns"}}))
    cache.replace(NODE, [{"metadata": "broken"}])
    assert (dict(cache.snapshot().tasks), cache.snapshot().nodes, cache.problems()) == ({}, (), {})


def test_a_malformed_podgroup_keeps_its_job_with_the_problem(cache: SchedulerCache) -> None:
    cache.apply(PODGROUP, event("ADDED", raw_podgroup("pg1", min_member="four")))
    job = cache.snapshot().jobs["ns/pg1"]
    message = "PodGroup ns/pg1: spec.minMember: must be an integer from 0 to 2147483647, got 'four'"
    assert (job.problem, job.queue, job.min_member, job.phase) == (
        message,
        "q1",
        1,
        PodGroupPhase.INQUEUE,
    )
    assert cache.problems() == {"PodGroup ns/pg1": message}
    cache.apply(PODGROUP, event("MODIFIED", raw_podgroup("pg1")))
    assert cache.problems() == {}


def test_a_malformed_queue_is_kept_carrying_its_problem(cache: SchedulerCache) -> None:
    cache.apply(QUEUE, event("ADDED", raw_queue("q1", weight=-1)))
    queues = cache.snapshot().queues
    assert list(queues) == ["q1", "default"]
    assert queues["q1"].problem == (
        "Queue q1: spec.weight: must be an integer from 0 to 2147483647, got -1"
    )
    assert cache.problems() == {
        "Queue q1": "Queue q1: spec.weight: must be an integer from 0 to 2147483647, got -1"
    }
    assert cache.object_raw("Queue", "q1") is not None
    cache.apply(QUEUE, event("DELETED", raw_queue("q1", weight=-1)))
    assert cache.problems() == {}


def test_a_node_that_turns_malformed_is_left_out_until_fixed(cache: SchedulerCache) -> None:
    cache.apply(NODE, event("ADDED", raw_node("n1")))
    cache.apply(NODE, event("MODIFIED", raw_node("n1", cpu="x")))
    assert cache.snapshot().nodes == ()
    assert cache.problems() == {
        "Node n1": "Node n1: status.allocatable.cpu: invalid quantity 'x': no digits"
    }
    cache.apply(NODE, event("MODIFIED", raw_node("n1")))
    assert [n.name for n in cache.snapshot().nodes] == ["n1"]
    assert cache.problems() == {}


def test_a_relist_clears_the_problems_of_objects_gone(cache: SchedulerCache) -> None:
    cache.replace(QUEUE, [raw_queue("q1", weight=-1)])
    cache.replace(QUEUE, [])
    assert cache.problems() == {}


# --- priority classes -------------------------------------------------------------------------
def test_a_priority_class_change_reconverts_pods_and_podgroups_at_the_next_snapshot(
    cache: SchedulerCache,
) -> None:
    cache.replace(PRIORITY_CLASS, [raw_class("high", 100)])
    cache.replace(PODGROUP, [raw_podgroup("pg1", priority_class="high")])
    cache.replace(
        POD,
        [raw_pod("p1", priority_class="high"), raw_pod("p2", priority_class="high", priority=7)],
    )
    snap = cache.snapshot()
    assert (snap.tasks["uid-p1"].priority, snap.jobs["ns/pg1"].priority) == (100, 100)

    cache.apply(PRIORITY_CLASS, event("MODIFIED", raw_class("high", 500)))
    snap = cache.snapshot()
    assert snap.tasks["uid-p1"].priority == 500
    assert snap.tasks["uid-p2"].priority == 7
    assert snap.jobs["ns/pg1"].priority == 500
    assert snap.priority_classes["high"].value == 500


def test_pods_converted_after_a_class_arrives_use_it(cache: SchedulerCache) -> None:
    cache.apply(PRIORITY_CLASS, event("ADDED", raw_class("base", 3, default=True)))
    cache.apply(POD, event("ADDED", raw_pod("p1")))
    assert cache.snapshot().tasks["uid-p1"].priority == 3


# --- generation and the changed event ---------------------------------------------------------
def test_the_generation_moves_on_a_change_and_the_changed_event_is_set(
    cache: SchedulerCache,
) -> None:
    before = cache.generation
    cache.changed.clear()
    cache.apply(POD, event("ADDED", raw_pod("p1")))
    assert cache.generation != before
    assert cache.changed.is_set()


def test_an_update_that_changes_no_facts_does_not_move_the_generation(
    cache: SchedulerCache,
) -> None:
    cache.apply(POD, event("ADDED", raw_pod("p1", version="1")))
    before = cache.generation
    cache.changed.clear()
    written = raw_pod("p1", version="2")
    written["status"]["conditions"] = [{"type": "PodScheduled", "status": "False"}]
    cache.apply(POD, event("MODIFIED", written))
    assert cache.generation == before
    assert not cache.changed.is_set()
    assert cache.pod_raw("uid-p1") == kept_pod(written)


def test_an_assumed_decision_changes_the_snapshot_but_wakes_no_cycle(
    cache: SchedulerCache,
) -> None:
    # the cycle that decided it knows; another cycle would only see the same pods again
    cache.apply(NODE, event("ADDED", raw_node("n1")))
    cache.apply(POD, event("ADDED", raw_pod("p1", version="1")))
    cache.apply(POD, event("ADDED", raw_pod("r1", node="n1", phase="Running", version="1")))
    before = cache.generation
    cache.changed.clear()
    cache.assume_binds([("uid-p1", "n1")], held=True)
    cache.assume_evicts(["uid-r1"])
    assert not cache.changed.is_set()
    assert cache.generation != before  # a cycle woken by anything else sees them
    tasks = cache.snapshot().tasks
    assert (tasks["uid-p1"].status, tasks["uid-r1"].status) == (
        TaskStatus.BOUND,
        TaskStatus.RELEASING,
    )
    cache.forget_bind("uid-p1")  # the bind failed: the pod is pending again, a cycle must run
    assert cache.changed.is_set()


def test_a_node_whose_annotations_alone_change_is_a_quiet_change_and_its_labels_are_not(
    cache: SchedulerCache,
) -> None:
    cache.apply(NODE, event("ADDED", raw_node("n1")))
    before, quiet = cache.generation, cache.quiet_generation
    cache.changed.clear()
    annotated = raw_node("n1")
    annotated["metadata"]["annotations"] = {"node.alpha.kubernetes.io/ttl": "15"}
    cache.apply(NODE, event("MODIFIED", annotated))
    assert (cache.generation, cache.changed.is_set()) == (before, False)
    assert cache.quiet_generation == quiet + 1
    labelled = copy.deepcopy(annotated)
    labelled["metadata"]["labels"] = {"zone": "a"}  # a node selector may match it now
    cache.apply(NODE, event("MODIFIED", labelled))
    assert cache.generation != before
    assert cache.changed.is_set()


def test_the_watch_confirming_an_assumed_bind_is_a_quiet_change(cache: SchedulerCache) -> None:
    """The API server's binding sets the node and a PodScheduled=True condition, whose time
    (`scheduled_at`, read by cdp for a Running pod only) the assumed bind did not know."""
    cache.apply(NODE, event("ADDED", raw_node("n1")))
    cache.apply(POD, event("ADDED", raw_pod("p1", version="1")))
    cache.assume_binds([("uid-p1", "n1")], held=True)
    before, quiet = cache.generation, cache.quiet_generation
    cache.changed.clear()
    bound = raw_pod("p1", node="n1", version="2")
    scheduled = {"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp(5)}
    bound["status"]["conditions"] = [scheduled]
    cache.apply(POD, event("MODIFIED", bound))
    assert (cache.generation, cache.changed.is_set()) == (before, False)
    assert cache.quiet_generation == quiet + 1
    task = cache.snapshot().tasks["uid-p1"]
    assert (task.status, task.scheduled_at) == (TaskStatus.BOUND, START + dt.timedelta(seconds=5))


def test_a_placed_pod_starting_to_run_is_a_quiet_change(cache: SchedulerCache) -> None:
    cache.apply(POD, event("ADDED", raw_pod("p1", node="n1", version="1")))
    before, quiet = cache.generation, cache.quiet_generation
    cache.changed.clear()
    cache.apply(POD, event("MODIFIED", raw_pod("p1", node="n1", phase="Running", version="2")))
    assert (cache.generation, cache.changed.is_set()) == (before, False)
    assert cache.quiet_generation == quiet + 1
    assert cache.snapshot().tasks["uid-p1"].status is TaskStatus.RUNNING


@pytest.mark.parametrize("min_resources", [None, {"cpu": "4"}])
def test_a_podgroups_status_echo_is_quiet_unless_its_phase_moves_admission_budget(
    cache: SchedulerCache, min_resources: dict[str, str] | None
) -> None:
    def group(version: str, phase: str, conditions: list[dict[str, str]]) -> dict[str, Any]:
        raw = raw_podgroup("pg1")
        raw["metadata"]["resourceVersion"] = version
        if min_resources is not None:
            raw["spec"]["minResources"] = min_resources
        raw["status"] = {"phase": phase, "conditions": conditions}
        return raw

    cache.apply(PODGROUP, event("ADDED", group("1", "Inqueue", [])))
    before, quiet = cache.generation, cache.quiet_generation
    cache.changed.clear()
    ready = [{"type": "Scheduled", "status": "True", "reason": "tasks in gang are ready"}]
    cache.apply(PODGROUP, event("MODIFIED", group("2", "Inqueue", ready)))
    assert (cache.generation, cache.changed.is_set()) == (before, False)
    assert cache.quiet_generation == quiet + 1
    cache.apply(PODGROUP, event("MODIFIED", group("3", "Running", ready)))
    if min_resources is None:  # no budget held in any phase: the echo of our own write
        assert (cache.generation, cache.changed.is_set()) == (before, False)
        assert cache.quiet_generation == quiet + 2
    else:  # Inqueue -> Running frees the budget minResources held: it wakes
        assert cache.generation != before
        assert cache.changed.is_set()
    assert cache.snapshot().jobs["ns/pg1"].phase is PodGroupPhase.RUNNING
    bigger = group("4", "Running", ready)
    bigger["spec"]["minMember"] = 5  # the spec changed: it always wakes
    cache.changed.clear()
    cache.apply(PODGROUP, event("MODIFIED", bigger))
    assert cache.changed.is_set()


def test_a_placed_pod_reported_running_with_its_start_time_is_a_quiet_change(
    cache: SchedulerCache,
) -> None:
    cache.apply(POD, event("ADDED", raw_pod("p1", node="n1", version="1")))
    before, quiet = cache.generation, cache.quiet_generation
    cache.changed.clear()
    running = raw_pod("p1", node="n1", phase="Running", version="2")
    running["status"]["startTime"] = "2026-11-28T04:50:35Z"
    cache.apply(POD, event("MODIFIED", running))
    assert (cache.generation, cache.changed.is_set()) == (before, False)
    assert cache.quiet_generation == quiet + 1
    assert cache.snapshot().tasks["uid-p1"].started is not None


def test_a_gangs_members_wake_the_loop_only_once_the_last_one_arrives_and_that_one_at_once(
    cache: SchedulerCache,
) -> None:
    cache.apply(PODGROUP, event("ADDED", raw_podgroup("pg1", min_member=3)))
    woken, whole = [], []
    for i in range(4):
        before, quiet = cache.generation, cache.quiet_generation
        cache.changed.clear()
        cache.complete.clear()
        cache.apply(POD, event("ADDED", raw_pod(f"p{i}", version="1", group="pg1")))
        woken.append(cache.generation != before and cache.changed.is_set())
        whole.append(cache.complete.is_set())
        assert cache.quiet_generation == quiet + (not woken[-1])
    assert woken == [False, False, True, True]  # the first two: the gang cannot be placed yet
    assert whole == [False, False, True, False]  # the third made it whole: no burst to wait for
    assert len(cache.snapshot().tasks) == 4
    cache.apply(POD, event("ADDED", raw_pod("lone", version="1")))
    assert cache.changed.is_set()
    assert not cache.complete.is_set()  # a lone pod waits for more


def test_a_pod_of_a_short_gang_records_when_it_came(cache: SchedulerCache) -> None:
    cache.apply(PODGROUP, event("ADDED", raw_podgroup("pg1", min_member=3)))
    assert cache.gang_arrival is None
    cache.apply(POD, event("ADDED", raw_pod("lone", version="1")))
    assert cache.gang_arrival is None  # a lone pod wakes a cycle itself
    cache.apply(POD, event("ADDED", raw_pod("p0", version="1", group="pg1")))
    assert cache.gang_arrival == START  # quiet: the loop runs a cycle a grace after it


def test_a_podgroup_created_before_its_pods_is_left_to_the_schedule_period(
    cache: SchedulerCache,
) -> None:
    before = cache.generation
    cache.changed.clear()
    cache.apply(PODGROUP, event("ADDED", raw_podgroup("pg1", min_member=2)))
    assert cache.generation != before  # the next cycle, at the latest a period on, admits it
    assert not cache.changed.is_set()
    cache.apply(POD, event("ADDED", raw_pod("p0", version="1", group="pg2")))  # pods first
    cache.changed.clear()
    cache.apply(PODGROUP, event("ADDED", raw_podgroup("pg2", min_member=2)))
    assert cache.changed.is_set()


def test_a_pod_of_a_short_gang_wakes_the_loop_when_it_left_another_job_or_its_group_is_unknown(
    cache: SchedulerCache,
) -> None:
    cache.apply(PODGROUP, event("ADDED", raw_podgroup("pg1", min_member=3)))
    cache.apply(POD, event("ADDED", raw_pod("p1", version="1", group="pg2")))  # no such group
    before = cache.generation
    cache.apply(POD, event("MODIFIED", raw_pod("p1", version="2", group="pg1")))  # moved
    assert cache.generation != before
    before = cache.generation
    cache.apply(POD, event("DELETED", raw_pod("p1", version="3", group="pg1")))
    assert cache.generation != before  # a pod gone always wakes


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"phase": "Succeeded"}, id="a pod finishing frees its node"),
        pytest.param({"cpu": "2"}, id="a request changing"),
        pytest.param({"node": "n2"}, id="a pod on another node than assumed"),
    ],
)
def test_a_change_a_decision_reads_wakes_the_loop(
    cache: SchedulerCache, change: dict[str, Any]
) -> None:
    cache.apply(POD, event("ADDED", raw_pod("p1", node="n1", phase="Running", version="1")))
    before = cache.generation
    cache.changed.clear()
    fields: dict[str, Any] = {"node": "n1", "phase": "Running", "version": "2", **change}
    cache.apply(POD, event("MODIFIED", raw_pod("p1", **fields)))
    assert cache.generation != before
    assert cache.changed.is_set()


def test_a_bind_seen_before_the_cache_assumed_it_wakes_the_loop(cache: SchedulerCache) -> None:
    cache.apply(POD, event("ADDED", raw_pod("p1", version="1")))
    before = cache.generation
    cache.changed.clear()
    cache.apply(POD, event("MODIFIED", raw_pod("p1", node="n1", version="2")))
    assert cache.generation != before
    assert cache.changed.is_set()


def test_a_relist_of_unchanged_objects_does_not_move_the_generation(
    cache: SchedulerCache,
) -> None:
    pods = [raw_pod("p1", version="1"), raw_pod("p2", version="4")]
    cache.replace(POD, pods)
    before = cache.generation
    cache.replace(POD, copy.deepcopy(pods))
    cache.apply(POD, event("MODIFIED", copy.deepcopy(pods[0])))
    assert cache.generation == before


def test_an_object_without_a_uid_is_known_by_its_namespace_and_name(cache: SchedulerCache) -> None:
    pod = raw_pod("p1")
    del pod["metadata"]["uid"]
    cache.apply(POD, event("ADDED", pod))
    assert list(cache.snapshot().tasks) == ["ns/p1"]
    cache.apply(POD, event("DELETED", pod))
    assert dict(cache.snapshot().tasks) == {}
