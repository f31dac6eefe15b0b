"""allocate's queue order as Volcano decides, transcribed from Volcano's
`pkg/scheduler/actions/allocate/allocate_test.go` `TestFareShareAllocate` (all three cases):
its tier (drf with preemptable and job order, proportion with queue order and reclaimable and
allocatable *off*, predicates, nodeorder; every point flag written out, `go_tiers`), the
allocate action alone, and its expected binds.

Objects are Volcano's test helpers through the fluent builders: `util.BuildPod` requests as
written ("1G" is 10^9 bytes), `BuildPodGroup(.., minMember 0, phase)`, `BuildQueue(name, 1,
nil)`, one node of 5 cpus, 5G and 10 pods. The queue with the lower share (proportion's
queue order) is served first, and its share is counted again after each job it places before
it goes back into the order.
"""

from __future__ import annotations

from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.builders import Item, PodBuilder, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import Outcome, run
from vscheduler.testing.volcano import go_tiers

POLICY = go_tiers(
    "allocate",
    drf=("enablePreemptable", "enableJobOrder"),
    proportion=("enableQueueOrder", "enableReclaimable"),
    predicates=("enablePredicate",),
    nodeorder=("enableNodeOrder",),
)


def group(name: str, q: str, phase: PodGroupPhase) -> Item:
    return podgroup(name, "ns-1").queue(q).min_member(0).phase(phase)


def placed(name: str, group_name: str, cpu: str, memory: str) -> PodBuilder:
    return pod(name, "ns-1").group(group_name).requests(cpu=cpu, memory=memory).on("node-1")


def waiting(name: str, group_name: str, cpu: str, memory: str) -> PodBuilder:
    return pod(name, "ns-1").group(group_name).requests(cpu=cpu, memory=memory)


def once(*items: Item) -> Outcome:
    (outcome,) = run(
        snapshot(node("node-1").resources(cpu="5", memory="5G", pods=10), *items),
        policy=POLICY,
    )
    return outcome


RUNNING, INQUEUE = PodGroupPhase.RUNNING, PodGroupPhase.INQUEUE


def test_the_queue_with_the_lower_share_is_served_first() -> None:
    """ "queue with low DRF share value has high priority, should allocate first": q-1 already
    holds one cpu, so q-2's pod of three goes first and q-1's pod of two no longer fits."""
    outcome = once(
        queue("q-1"),
        queue("q-2"),
        group("pg-small-1", "q-1", RUNNING),
        group("pg-large-1", "q-1", INQUEUE),
        group("pg-large-2", "q-2", INQUEUE),
        placed("pod-small-1", "pg-small-1", "1", "1G"),
        waiting("pod-large-1", "pg-large-1", "2", "2G"),
        waiting("pod-large-2", "pg-large-2", "3", "2G"),
    )

    assert outcome.binds == {"ns-1/pod-large-2": "node-1"}


def test_a_queue_goes_back_into_the_order_with_its_share_counted_again() -> None:
    """ "queue's DRF share value will be updated and its priority will change before it is put
    back into the priority queue": q-2 places pod-large-2 (two cpus), its share is then above
    q-1's, so q-1's pod-large-1 goes next and pod-small-2 of q-2 finds no room."""
    outcome = once(
        queue("q-1"),
        queue("q-2"),
        group("pg-small-1", "q-1", RUNNING),
        group("pg-large-1", "q-1", INQUEUE),
        group("pg-small-2", "q-2", INQUEUE),
        group("pg-large-2", "q-2", INQUEUE),
        placed("pod-small-1", "pg-small-1", "1", "1G"),
        waiting("pod-large-1", "pg-large-1", "2", "2G"),
        waiting("pod-large-2", "pg-large-2", "2", "2G"),
        waiting("pod-small-2", "pg-small-2", "1", "1G"),
    )

    assert outcome.binds == {"ns-1/pod-large-1": "node-1", "ns-1/pod-large-2": "node-1"}


def test_a_job_without_pending_pods_does_not_end_its_queues_turn() -> None:
    """ "queue's one jobs has no pending tasks, should be put back to queues for next job":
    pg-1 is running with nothing pending; pg-2 of the same queue is still placed."""
    outcome = once(
        queue("q-1"),
        group("pg-1", "q-1", RUNNING),
        group("pg-2", "q-1", INQUEUE),
        placed("pod-1", "pg-1", "1", "1G"),
        waiting("pod-2", "pg-2", "2", "2G"),
    )

    assert outcome.binds == {"ns-1/pod-2": "node-1"}
