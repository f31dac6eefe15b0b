"""gang's PodGroup condition while pods terminate, transcribed from Volcano's
`pkg/scheduler/plugins/gang/gang_test.go` (`TestShouldSkipUnschedulableForReleasing`, Volcano
d725ce4db "fix podgroup falling into Inqueue while pods are terminating"), with the phase half
of the same change (`framework/session_test.go` `TestGetPodGroupPhase`, the cases with a
Releasing task).

The Go test calls `shouldSkipUnschedulableForReleasing(job)` on a bare JobInfo; true means gang's
session close writes no condition for the unready job. Here the same tasks are a snapshot run
through one whole cycle, and the outcome is the PodGroup's status: no condition where Volcano
skips, an `Unschedulable=True` one where it does not. Objects: `newTask(uid, status, node)` is a
builder pod `on(node, status)` (Releasing: a pod with a deletionTimestamp still on its node),
`job.MinAvailable` the PodGroup's minMember; the PodGroup was Running (its pods ran). Each pod
asks one cpu and each node has one, so a pending pod finds no room and a pipelined one waits for
the releasing pod's.

One case reads differently: "never scheduled releasing task is not counted". A pod deleted before
it was placed is no task here at all (the converter drops it: it will never run), so its
PodGroup has no pod and is invalid: its condition is `NotEnoughTasks` ("Not enough valid tasks
for gang-scheduling"), not Volcano's `NotEnoughResources`. What the Go case states holds: the
condition is written.
"""

from __future__ import annotations

from vscheduler.convert.files import SourcedObject
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.testing.builders import Item, PodBuilder, node, pod, podgroup, snapshot
from vscheduler.testing.scenario import Outcome, run

POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}, {name: proportion}, {name: nodeorder}]
"""
PG = "default/job-1"


def task(uid: str, status: TaskStatus, on: str = "") -> PodBuilder:
    """Volcano's `newTask(uid, status, nodeName)`."""
    built = pod(uid).group("job-1").requests(cpu="1", memory="1Gi")
    return built.on(on, status) if on else built


def job(min_available: int, *tasks: PodBuilder) -> Outcome:
    """One cycle over the job's tasks, on nodes node-1..3 of one cpu each."""
    nodes: list[Item] = [node(f"node-{i}").resources(cpu="1", memory="4Gi") for i in (1, 2, 3)]
    group = podgroup("job-1").min_member(min_available).phase(PodGroupPhase.RUNNING)
    [outcome] = run(snapshot(*nodes, group, *tasks), policy=POLICY)
    return outcome


def conditions(outcome: Outcome) -> list[tuple[str, str, str]]:
    status = outcome.result.podgroups[PG]
    return [(c.type, c.status, c.reason) for c in status.conditions]


UNSCHEDULABLE = [("Unschedulable", "True", "NotEnoughResources")]


def test_a_gang_whose_missing_member_is_still_terminating_on_its_node_gets_no_condition() -> None:
    """TestShouldSkipUnschedulableForReleasing "partial termination": the releasing pod still
    holds its slot, so the gang is not reported unschedulable, and its PodGroup stays Running
    (TestGetPodGroupPhase "multi pod partial terminating keeps Running")."""
    outcome = job(
        2,
        task("running", TaskStatus.RUNNING, "node-1"),
        task("releasing", TaskStatus.RELEASING, "node-2"),
    )

    assert conditions(outcome) == []
    assert outcome.result.podgroups[PG].phase is PodGroupPhase.RUNNING


def test_a_pending_replacement_still_gets_the_unschedulable_condition() -> None:
    """TestShouldSkipUnschedulableForReleasing "pending replacement still needs condition": the
    replacement (two cpus) finds no room, not even once the releasing pod is gone: it is work
    still to be scheduled. Running tasks and this cycle's condition make the phase Unknown, as
    Volcano's `getPodGroupPhase` has it."""
    outcome = job(
        2,
        task("running", TaskStatus.RUNNING, "node-1"),
        task("releasing", TaskStatus.RELEASING, "node-2"),
        pod("replacement").group("job-1").requests(cpu="2", memory="1Gi"),
    )

    assert outcome.binds == {}
    assert outcome.result.pipelined == {}
    assert conditions(outcome) == UNSCHEDULABLE
    assert outcome.result.podgroups[PG].phase is PodGroupPhase.UNKNOWN


def test_a_pipelined_replacement_still_gets_the_unschedulable_condition() -> None:
    """TestShouldSkipUnschedulableForReleasing "pipelined replacement still needs condition":
    the replacement waits for the releasing pod's room (node-3 is taken)."""
    outcome = job(
        2,
        task("running", TaskStatus.RUNNING, "node-1"),
        task("releasing", TaskStatus.RELEASING, "node-2"),
        task("replacement", TaskStatus.PENDING),
        pod("other").requests(cpu="1").on("node-3"),
    )

    assert outcome.result.pipelined == {"default/replacement": "node-2"}
    assert conditions(outcome) == UNSCHEDULABLE


def test_releasing_pods_short_of_min_member_do_not_hold_the_gang() -> None:
    """TestShouldSkipUnschedulableForReleasing "scheduled tasks below minAvailable": one running
    and one releasing pod of a gang of three: the condition is written. Its reason is ours: the
    gang is also invalid (one pod of three can still run), and gang writes an invalid gang's
    reason (`NotEnoughTasks`, docs/policy.md 5.2) where Volcano, which no longer writes it,
    writes `NotEnoughResources`. A running pod and this cycle's condition: Unknown."""
    outcome = job(
        3,
        task("running", TaskStatus.RUNNING, "node-1"),
        task("releasing", TaskStatus.RELEASING, "node-2"),
    )

    assert conditions(outcome) == [("Unschedulable", "True", "NotEnoughTasks")]
    assert outcome.result.podgroups[PG].phase is PodGroupPhase.UNKNOWN


def test_a_gang_whose_only_pod_terminates_on_its_node_stays_running() -> None:
    """TestGetPodGroupPhase "single pod terminating keeps Running" (and gang writes nothing)."""
    outcome = job(1, task("task-1", TaskStatus.RELEASING, "node-1"))

    assert conditions(outcome) == []
    assert outcome.result.podgroups[PG].phase is PodGroupPhase.RUNNING


def test_a_gang_whose_pods_all_terminate_on_their_nodes_stays_running() -> None:
    """TestGetPodGroupPhase "all pods terminating keeps Running"."""
    outcome = job(
        2,
        task("task-1", TaskStatus.RELEASING, "node-1"),
        task("task-2", TaskStatus.RELEASING, "node-2"),
    )

    assert conditions(outcome) == []
    assert outcome.result.podgroups[PG].phase is PodGroupPhase.RUNNING


def deleted_before_placed() -> ClusterSnapshot:
    """A PodGroup (minMember 1, Inqueue) whose one pod was deleted while pending."""
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "job-1", "namespace": "default"},
        "spec": {"minMember": 1, "queue": "default"},
        "status": {"phase": "Inqueue"},
    }
    releasing = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "releasing",
            "namespace": "default",
            "uid": "releasing",
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "annotations": {"scheduling.k8s.io/group-name": "job-1"},
        },
        "spec": {"schedulerName": "vscheduler", "containers": [{"name": "c"}]},
        "status": {"phase": "Pending"},
    }
    objects = [SourcedObject(f"cluster.yaml#{i}", o) for i, o in enumerate((group, releasing))]
    return build_snapshot(objects, scheduler_name="vscheduler")


def test_a_pod_deleted_before_it_was_placed_does_not_hold_the_gang() -> None:
    """TestShouldSkipUnschedulableForReleasing "never scheduled releasing task is not counted"
    (and TestGetPodGroupPhase "never-scheduled pending pod deleted stays Pending": the phase
    does not move to Running). The pod is no task here, so the reason is the invalid gang's."""
    snap = deleted_before_placed()
    [outcome] = run(snap, policy=POLICY)

    assert snap.tasks == {}
    assert conditions(outcome) == [("Unschedulable", "True", "NotEnoughTasks")]
    assert outcome.result.podgroups[PG].phase is PodGroupPhase.INQUEUE


def test_a_lone_releasing_pod_short_of_min_member_lets_the_podgroup_fall_to_pending() -> None:
    """TestGetPodGroupPhase "scheduled releasing tasks below minMember fall to Pending" (gang
    writes its condition: one releasing pod does not hold a gang of two)."""
    outcome = job(2, task("task-1", TaskStatus.RELEASING, "node-1"))

    assert conditions(outcome) == [("Unschedulable", "True", "NotEnoughTasks")]
    assert outcome.result.podgroups[PG].phase is PodGroupPhase.PENDING
