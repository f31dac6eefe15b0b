"""The victim order as Volcano's `BuildVictimsPriorityQueue` has it since ebbab911d (March
2026), transcribed from `pkg/scheduler/framework/session_plugins_victim_order_test.go`
(`TestBuildVictimsPriorityQueueJobTieBreaksWithTaskOrder`): between two jobs the job order
ties on (no job priority, no drf), the pod of lower priority is the cheaper victim, though its
job is the older one.

The Go test pops the queue; here the same pods are on one node of two pod slots and a pod of a
job of higher priority needs one slot: the victim taken is the first of the victim order.
"""

from __future__ import annotations

from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.builders import node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import run
from vscheduler.testing.volcano import go_tiers

POLICY = go_tiers(
    "preempt",
    priority=("enableJobOrder", "enableTaskOrder", "enablePreemptable", "enableJobStarving"),
    predicates=("enablePredicate",),
)


def test_between_jobs_of_equal_order_the_pod_of_lower_priority_goes_first() -> None:
    """ "preemptor job found": pg-high (created at 20 s) and pg-low (at 10 s) tie in the job
    order; p-low (pod priority 1) is popped before p-high (100)."""
    snap = snapshot(
        node("n1").resources(cpu="10", memory="10Gi", pods=2),
        queue("q1"),
        podgroup("pg-high", "ns1")
        .queue("q1")
        .min_member(1)
        .phase(PodGroupPhase.RUNNING)
        .created(20 - 3600),
        podgroup("pg-low", "ns1")
        .queue("q1")
        .min_member(1)
        .phase(PodGroupPhase.RUNNING)
        .created(10 - 3600),
        podgroup("pg-preemptor", "ns1").queue("q1").min_member(1).priority(1000).inqueue(),
        pod("p-high", "ns1")
        .group("pg-high")
        .requests(cpu="1", memory="1Gi")
        .priority(100)
        .on("n1"),
        pod("p-low", "ns1").group("pg-low").requests(cpu="1", memory="1Gi").priority(1).on("n1"),
        pod("p-preemptor", "ns1")
        .group("pg-preemptor")
        .requests(cpu="1", memory="1Gi")
        .priority(100),
    )

    (outcome,) = run(snap, policy=POLICY)

    assert outcome.evictions == ["ns1/p-low"]
    assert outcome.result.pipelined == {"ns1/p-preemptor": "n1"}
