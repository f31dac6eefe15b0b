"""Volcano's e2e reclaim tests, transcribed from `test/e2e/schedulingaction/reclaim.go`
("Reclaim E2E Test").

**The cluster** is the e2e's kind cluster (`vscheduler.testing.kind_e2e`: a tainted control plane
and four workers of 4 cpu and 16Gi) with `InitTestContext`'s placeholders for the case's
`NodesNumLimit` and `NodesResourceLimit` (`kind_e2e.placeholders`: another scheduler's pod on
every worker holding all its free room but, on the first `NodesNumLimit` workers, exactly
`NodesResourceLimit`). Proportion and capacity still divide the whole cluster among the queues
(Volcano's `ssn.TotalResource` sums every ready node's allocatable), so with proportion every
queue here deserves all it asks.

**The jobs** are `CreateReclaimJob`'s (`kind_e2e.vcjob`): one pod of `CPU1Mem1` (1 cpu, 1Gi)
unless stated, `volcano.sh/preemptable: "true"`, the given queue and priority class
(low-priority 10, high-priority 10000; none: 0). "Create, then wait" is a few cycles
(`KindCluster.settle`), evicted pods recreated Pending by the job controller.
`CheckPodGroupStatistics(ctx, phase, n, queue)` waits until exactly n PodGroups of the queue
are in the phase: asserted as such. Queues are created with weight 1 and open.

**The policy** is the e2e ConfigMap's (`kind_e2e.CI_POLICY`, `volcano-scheduler-ci.conf`); the
capacity cases put capacity (hierarchical in case 12) where proportion was, as their modifiers.
In its first tier gang and conformance answer the reclaimable point, so they, not proportion,
choose the victims: a job's pods beyond its `minMember`.

Transcribed: "Reclaim Case 1: New queue with job created no reclaim when resource is enough",
"Reclaim Case 4: ... when new queue is not created", "Reclaim Case 5: ... when job or task is
low-priority", "Reclaim Case 6: ... when overused", "Reclaim Case 7: ... when job not satisfied
with predicates", "Reclaim Case 8: ... when task resources less than reclaimable resource",
"Reclaim Case 9: ... all queues.spec.reclaimable is false, no reclaim", "Reclaim Case 10: Multi
reclaimed queue", "Capacity
Reclaim Case 11: Multi reclaimed queue", "Capacity Reclaim Case 12: Multi reclaimed queue".

Not transcribed: "Reclaim Case 3: ... when job.PodGroup.Status.Phase pending" (skipped in
Volcano itself: issue #3562) and "Reclaim" (skipped in Volcano itself: "the case has some
problem").
"""

from __future__ import annotations

import pytest

from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.testing.builders import Item, PodBuilder, QueueBuilder, queue
from vscheduler.testing.kind_e2e import CI_POLICY, PREEMPTABLE, KindCluster, placeholders, vcjob

LOW, HIGH = 10, 10000
Q1, Q2, Q3, Q4 = "default", "reclaim-q2", "reclaim-q3", "reclaim-q4"
RUNNING, INQUEUE, PENDING = PodGroupPhase.RUNNING, PodGroupPhase.INQUEUE, PodGroupPhase.PENDING
CAPACITY = CI_POLICY.replace("  - name: proportion\n", "  - name: capacity\n")
HIERARCHICAL_CAPACITY = CI_POLICY.replace(
    "  - name: proportion\n", "  - name: capacity\n    enableHierarchy: true\n"
)


def reclaim_job(
    name: str, q: str, priority: int = 0, *, millicpu: int = 1000, replicas: int = 1
) -> list[Item]:
    """`CreateReclaimJob`: `replicas` pods of `millicpu` cpu and as many MiB, one required."""
    return vcjob(
        name,
        replicas=replicas,
        minimum=1,
        priority=priority,
        q=q,
        millicpu=millicpu,
        mebibytes=millicpu * 1024 // 1000,
        labels={PREEMPTABLE: "true"},
    )


def cluster(nodes: int, *items: Item, policy: str = CI_POLICY, free: int = 1000) -> KindCluster:
    """`InitTestContext` with `NodesNumLimit: nodes` and `NodesResourceLimit` of `free`
    millicpu and as many MiB (CPU1Mem1 or CPU2Mem2), and `items` (its queues)."""
    return KindCluster(policy, *placeholders(nodes, free, free * 1024 // 1000), *items)


def steps(on: KindCluster, *jobs: list[Item]) -> None:
    """Each job created, then waited for."""
    for items in jobs:
        on.create(*items)
        on.settle()


def counts(on: KindCluster, phase: PodGroupPhase, *queues: str) -> list[int]:
    return [on.podgroups(q, phase) for q in queues]


def test_case_1_a_new_queue_s_job_runs_on_the_room_left() -> None:
    """ "Reclaim Case 1: New queue with job created no reclaim when resource is enough": on four
    nodes of CPU1Mem1, reclaim-j1 (default), reclaim-j2 (reclaim-q2) and, in reclaim-q3
    created later, reclaim-j3 each run: one Running PodGroup per queue, nothing evicted."""
    on = cluster(4, queue(Q2))
    steps(on, reclaim_job("reclaim-j1", Q1), reclaim_job("reclaim-j2", Q2))
    steps(on, [queue(Q3), *reclaim_job("reclaim-j3", Q3)])

    assert counts(on, RUNNING, Q1, Q2, Q3) == [1, 1, 1]
    assert on.evicted == []


@pytest.mark.parametrize(
    ("runners", "asker"),
    [
        pytest.param(0, 0, id="case-4"),
        pytest.param(HIGH, LOW, id="case-5-low-priority"),
    ],
)
def test_cases_4_and_5_a_job_of_a_queue_that_does_not_exist_runs_nowhere(
    runners: int, asker: int
) -> None:
    """ "Reclaim Case 4: New queue with job created no reclaim when new queue is not created"
    and "Reclaim Case 5: ... when job or task is low-priority" (reclaim-j1 and reclaim-j2
    high-priority, reclaim-j3 low-priority): on three nodes of CPU1Mem1, reclaim-j1 (default)
    and reclaim-j2 (reclaim-q2) run; reclaim-j3 names reclaim-q3, which was never created.
    Volcano's admission webhook refuses that job (`Expect(err).Should(HaveOccurred())`), which
    is not the scheduler's; the scheduler's part is that such a PodGroup, were it created, is
    never placed and evicts nothing, and the two queues keep one Running PodGroup each."""
    on = cluster(3, queue(Q2))
    steps(on, reclaim_job("reclaim-j1", Q1, runners), reclaim_job("reclaim-j2", Q2, runners))
    steps(on, reclaim_job("reclaim-j3", Q3, asker))

    assert counts(on, RUNNING, Q1, Q2) == [1, 1]
    assert on.running("reclaim-j3") == 0
    assert on.phase("reclaim-j3") is PENDING
    assert on.evicted == []


def test_case_6_a_second_job_of_a_queue_at_its_share_waits_inqueue() -> None:
    """ "Reclaim Case 6: New queue with job created no reclaim when overused": on three nodes of
    CPU1Mem1, reclaim-j1 (default), reclaim-j2 (reclaim-q2), reclaim-j3 (reclaim-q3) run;
    reclaim-j4 (reclaim-q3) is admitted but takes nothing (the other jobs are at their
    `minMember`, so gang leaves no victim): one Running PodGroup in each queue, and one Inqueue
    in reclaim-q3."""
    on = cluster(3, queue(Q2), queue(Q3))
    steps(
        on,
        reclaim_job("reclaim-j1", Q1),
        reclaim_job("reclaim-j2", Q2),
        reclaim_job("reclaim-j3", Q3),
        reclaim_job("reclaim-j4", Q3),
    )

    assert counts(on, RUNNING, Q1, Q2, Q3) == [1, 1, 1]
    assert on.podgroups(Q3, INQUEUE) == 1
    assert on.evicted == []


def on_fake_node(items: list[Item]) -> list[Item]:
    """The job's pods with `spec.nodeName: fake-node` (no such node): bound, never started."""
    return [i.on("fake-node", TaskStatus.BOUND) if isinstance(i, PodBuilder) else i for i in items]


def test_case_7_a_pod_bound_to_a_missing_node_makes_its_podgroup_running() -> None:
    """ "Reclaim Case 7: New queue with job created no reclaim when job not satisfied with
    predicates": on three nodes of CPU1Mem1, reclaim-j1 (default) and reclaim-j2 (reclaim-q2)
    run; reclaim-j3 (reclaim-q3) has `nodeName: fake-node`, a node that does not exist, so its
    pod is Pending with a node: Bound, as Volcano reads it. Volcano expects its PodGroup
    Running ("TODO: it is a bug : the job status is pending but podgroup status is running"),
    and nothing evicted."""
    on = cluster(3, queue(Q2))
    steps(on, reclaim_job("reclaim-j1", Q1), reclaim_job("reclaim-j2", Q2))
    steps(on, [queue(Q3), *on_fake_node(reclaim_job("reclaim-j3", Q3))])

    assert counts(on, RUNNING, Q1, Q2, Q3) == [1, 1, 1]
    assert on.evicted == []


def test_case_8_a_pod_larger_than_what_reclaim_could_free_waits_inqueue() -> None:
    """ "Reclaim Case 8: New queue with job created no reclaim when task resources less than
    reclaimable resource": on three nodes of CPU1Mem1, reclaim-j1 (default) and reclaim-j2
    (reclaim-q2) run; reclaim-j4 (reclaim-q3, one pod of CPU4Mem4, not preemptable-labelled)
    is admitted (overcommit: the cluster has the room, 1.2 times over) but no node could hold
    it whatever is evicted: Inqueue, nothing evicted."""
    on = cluster(3, queue(Q2))
    steps(on, reclaim_job("reclaim-j1", Q1), reclaim_job("reclaim-j2", Q2))
    big = vcjob("reclaim-j4", replicas=1, minimum=1, q=Q3, millicpu=4000, mebibytes=4096)
    steps(on, [queue(Q3), *big])

    assert counts(on, RUNNING, Q1, Q2) == [1, 1]
    assert on.podgroups(Q3, INQUEUE) == 1
    assert on.evicted == []


def test_case_9_a_new_queue_s_job_runs_when_the_others_are_not_reclaimable() -> None:
    """ "Reclaim Case 9: New queue with job created, all queues.spec.reclaimable is false, no
    reclaim": on three nodes of CPU1Mem1, reclaim-j1 (default) and reclaim-j2 (reclaim-q2)
    run; default and reclaim-q2 become `reclaimable: false`; reclaim-j3 (reclaim-q3) runs on
    the room left: one Running PodGroup per queue, nothing evicted."""
    on = cluster(3, queue(Q2))
    steps(on, reclaim_job("reclaim-j1", Q1), reclaim_job("reclaim-j2", Q2))
    unreclaimable = [queue(Q1).reclaimable(False), queue(Q2).reclaimable(False)]
    on.create(*unreclaimable)
    steps(on, [queue(Q3), *reclaim_job("reclaim-j3", Q3)])

    assert counts(on, RUNNING, Q1, Q2, Q3) == [1, 1, 1]
    assert on.evicted == []


def test_case_10_two_new_queues_each_reclaim_a_pod_from_the_jobs_beyond_their_gang() -> None:
    """ "Reclaim Case 10: Multi reclaimed queue": on four nodes of CPU1Mem1, reclaim-j1
    (default) and reclaim-j2 (reclaim-q2), each two pods with one required, low-priority, fill
    the nodes; reclaim-j3 (reclaim-q3) and reclaim-j4 (reclaim-q4), high-priority, each run:
    one Running PodGroup in reclaim-q3 and in reclaim-q4. Every queue deserves what it asks, so
    proportion alone would name no victim; gang (first tier) names the pods of reclaim-j1 and
    reclaim-j2 beyond their `minMember` ("Reclaim rely on priority is a bug here", says the Go
    test)."""
    on = cluster(4, queue(Q2), queue(Q3), queue(Q4))
    steps(
        on,
        reclaim_job("reclaim-j1", Q1, LOW, replicas=2),
        reclaim_job("reclaim-j2", Q2, LOW, replicas=2),
    )
    assert counts(on, RUNNING, Q1, Q2) == [1, 1]
    assert (on.running("reclaim-j1"), on.running("reclaim-j2")) == (2, 2)
    steps(on, reclaim_job("reclaim-j3", Q3, HIGH), reclaim_job("reclaim-j4", Q4, HIGH))

    assert counts(on, RUNNING, Q3, Q4) == [1, 1]
    assert counts(on, RUNNING, Q1, Q2) == [1, 1]


def deserving(name: str, cpu: int, parent: str = "") -> QueueBuilder:
    built = queue(name).deserved(cpu=cpu, memory=f"{cpu}Gi")
    return built.parent(parent) if parent else built


def test_capacity_case_11_queues_below_their_deserved_share_reclaim_it() -> None:
    """ "Capacity Reclaim Case 11: Multi reclaimed queue" (capacity in proportion's place): on
    four nodes of CPU2Mem2, queues reclaim-q1..4 deserving 1, 1, 2 and 4 (cpu and Gi);
    reclaim-j1 (reclaim-q1) and reclaim-j2 (reclaim-q2), four CPU1Mem1 pods each, one
    required, low-priority, fill the nodes; then reclaim-j3 (reclaim-q3, CPU2Mem2),
    reclaim-j4 (reclaim-q4, CPU2Mem2), reclaim-j5 and reclaim-j6 (reclaim-q4, CPU1Mem1), all
    high-priority, each run: one Running PodGroup in reclaim-q3, three in reclaim-q4. The six
    victims are reclaim-j1's and reclaim-j2's pods beyond their `minMember`."""
    queues = [deserving("reclaim-q1", 1), deserving(Q2, 1), deserving(Q3, 2), deserving(Q4, 4)]
    on = cluster(4, *queues, policy=CAPACITY, free=2000)
    steps(
        on,
        reclaim_job("reclaim-j1", "reclaim-q1", LOW, replicas=4),
        reclaim_job("reclaim-j2", Q2, LOW, replicas=4),
    )
    assert counts(on, RUNNING, "reclaim-q1", Q2) == [1, 1]
    assert (on.running("reclaim-j1"), on.running("reclaim-j2")) == (4, 4)
    steps(
        on,
        reclaim_job("reclaim-j3", Q3, HIGH, millicpu=2000),
        reclaim_job("reclaim-j4", Q4, HIGH, millicpu=2000),
        reclaim_job("reclaim-j5", Q4, HIGH),
        reclaim_job("reclaim-j6", Q4, HIGH),
    )

    assert counts(on, RUNNING, Q3, Q4) == [1, 3]
    assert (on.running("reclaim-j1"), on.running("reclaim-j2")) == (1, 1)
    assert len(on.evicted) == 6


def test_capacity_case_12_child_queues_run_on_the_room_left() -> None:
    """ "Capacity Reclaim Case 12: Multi reclaimed queue" (hierarchical capacity in
    proportion's place): on four nodes of CPU2Mem2, root's children reclaim-q1 and reclaim-q2
    deserve 4 each, reclaim-q1's children reclaim-q11 and reclaim-q12 2 each; reclaim-j1
    (reclaim-q2) and reclaim-j2 (reclaim-q11), one CPU2Mem2 pod each, run; reclaim-j3
    (reclaim-q12) and reclaim-j4 (reclaim-q11), one CPU1Mem1 pod each, run too: one Running
    PodGroup in reclaim-q12, two in reclaim-q11."""
    q11, q12 = "reclaim-q11", "reclaim-q12"
    queues = [
        deserving("reclaim-q1", 4, "root"),
        deserving(Q2, 4, "root"),
        deserving(q11, 2, "reclaim-q1"),
        deserving(q12, 2, "reclaim-q1"),
    ]
    on = cluster(4, *queues, policy=HIERARCHICAL_CAPACITY, free=2000)
    steps(
        on,
        reclaim_job("reclaim-j1", Q2, LOW, millicpu=2000),
        reclaim_job("reclaim-j2", q11, LOW, millicpu=2000),
    )
    assert counts(on, RUNNING, Q2, q11) == [1, 1]
    steps(on, reclaim_job("reclaim-j3", q12, LOW), reclaim_job("reclaim-j4", q11, LOW))

    assert counts(on, RUNNING, q12, q11) == [1, 2]
