"""Volcano's e2e `test/e2e/schedulingbase/job_scheduling.go` ("Job E2E Test"), transcribed.

The cluster, the policy (the e2e suite's `volcano-scheduler-ci.conf`) and how a vcjob becomes a
PodGroup and pods are `vscheduler.testing.volcano_e2e`'s: four workers of 2 CPU, so
`ClusterSize(oneCPU)` is 8 and `ClusterSize(halfCPU)` 16. Each cycle is a second; the e2e's
waits become the cycle whose outcome they wait for. `WaitJobReady` (at least `minAvailable` pods
Running) is the job's pods placed on nodes; `WaitJobStatePending` is the job not running;
`WaitJobUnschedulable` (a Warning `Unschedulable` Event on the PodGroup, which Volcano's
scheduler records every session while the PodGroup is Pending, Inqueue or Unknown) is the
PodGroup's `Unschedulable=True` condition, the one vscheduler records that Event for.
A ReplicaSet's pods (no `schedulerName`) are kube-scheduler's, placed as it spreads them.

Transcribed, one test each: "Schedule Job", "Schedule Multiple Jobs", "Gang scheduling", "Gang
scheduling: Full Occupied", "Gang scheduling: Contains both best-effort pod and non-best-effort
pod", "Schedule BestEffort Job", "Statement", "support binpack policy", "Schedule v1.Job type
using Volcano scheduler", "Queue Fair Share" (skipped in Volcano itself; here a strict xfail, see
its test), "PodGroup's Phase with k8s Job in Completed", "PodGroup's Phase should be Completed
when Job fails" (it failed here: a failed pod did not count as placed; fixed as Volcano fixed it,
9ac1c8c4f). A k8s Job's pods get their PodGroup from Volcano's PodGroup controller:
`podgroup-<job>`, controlled by the Job, `minMember` 1, `minResources` one pod's requests.

Left out: "Schedule v1.Job type using Volcano scheduler with error case" (its point is the API
server refusing a Job whose pod template has `restartPolicy: Always`; the valid Job it then runs
is "Schedule v1.Job type using Volcano scheduler"), and "PodGroup's Count change with
Deployment's Request change" (Volcano's PodGroup controller replacing a ReplicaSet's PodGroup; no
scheduling decision).

The package's other files: `sla.go` and `drf.go` are `test_volcano_e2e_sla.py` and
`test_volcano_e2e_drf.py`; `volume_binding.go` is `test_volcano_e2e_volume_binding.py`.
"""

from __future__ import annotations

import dataclasses

import pytest

from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import says_unschedulable
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.testing.builders import Item, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import Outcome, run
from vscheduler.testing.volcano_e2e import (
    HALF_CPU_SLOTS,
    ONE_CPU_SLOTS,
    POLICY,
    WORKERS,
    Task,
    Timeline,
    VcJob,
    cluster,
    phase,
    placed,
)


def unschedulable(outcome: Outcome, job: VcJob) -> bool:
    """The PodGroup ends the cycle with `Unschedulable=True` (its Warning Event)."""
    return says_unschedulable(outcome.result.podgroups[f"default/{job.name}"].conditions)


def test_a_job_of_as_many_one_cpu_pods_as_the_cluster_holds_gets_every_pod_placed() -> None:
    """ "Schedule Job": qj-1, one task of `ClusterSize(oneCPU)` pods of one CPU, minAvailable 2;
    Volcano waits for the job to be ready. Admitted in the first cycle, its pods made, all of
    them placed in the second: two per worker."""
    job = VcJob("qj-1", (Task(ONE_CPU_SLOTS),), min_available=2)

    first, second = Timeline({0: [job]}).play(2)

    assert phase(first, "qj-1") is PodGroupPhase.INQUEUE
    assert len(second.binds) == ONE_CPU_SLOTS
    assert sorted(second.binds.values()) == sorted(WORKERS * 2)
    assert phase(second, "qj-1") is PodGroupPhase.RUNNING


def test_three_jobs_each_larger_than_the_cluster_all_get_their_minimum() -> None:
    """ "Schedule Multiple Jobs": mqj-1..3, each `ClusterSize(oneCPU)` pods of one CPU with
    minAvailable 2, together three times the cluster; Volcano waits for all three to be ready.
    Allocate takes a job until it is ready and then puts it back, and gang orders jobs not yet
    ready first: each gets its two, and the two CPUs left go one each to the first two (drf
    shares tied, creation order)."""
    jobs = [VcJob(f"mqj-{i}", (Task(ONE_CPU_SLOTS),), min_available=2) for i in (1, 2, 3)]

    *_, last = Timeline({0: jobs}).play(3)

    assert [len(placed(last, job)) for job in jobs] == [3, 3, 2]
    assert all(phase(last, job.name) is PodGroupPhase.RUNNING for job in jobs)


def replica_set(name: str, replicas: int) -> list[Item]:
    """kube-scheduler's pods of a ReplicaSet of one-CPU pods, spread over the workers."""
    return [
        pod(f"{name}-{i}")
        .requests(cpu="1")
        .scheduler("default-scheduler")
        .on(WORKERS[i % len(WORKERS)])
        for i in range(replicas)
    ]


def test_a_gang_waits_unschedulable_beside_another_schedulers_pods_and_runs_once_they_go() -> None:
    """ "Gang scheduling": a ReplicaSet (kube-scheduler's) of `ClusterSize(oneCPU)/2 + 1` = 5
    one-CPU pods runs; gang-qj wants 5 one-CPU pods, minAvailable 5, with 3 CPU free. Volcano
    expects the job Pending and Unschedulable; once the ReplicaSet is deleted, the job ready.
    (Preempt's second phase pipelines the three pods that fit, as Volcano's does: those
    statements are committed per task; nothing is bound or evicted.)"""
    rep = ONE_CPU_SLOTS // 2 + 1
    job = VcJob("gang-qj", (Task(rep),), min_available=rep)
    timeline = Timeline({0: replica_set("rs-1", rep), 1: [job]}, deleted={4: ["rs-1"]})

    outcomes = timeline.play(5)

    for waiting in outcomes[1:4]:
        assert waiting.binds == {}
        assert waiting.evictions == []
        assert phase(waiting, "gang-qj") is not PodGroupPhase.RUNNING
    assert unschedulable(outcomes[3], job)
    assert sorted(outcomes[4].binds) == [f"default/{p}" for p in job.pod_names()]
    assert phase(outcomes[4], "gang-qj") is PodGroupPhase.RUNNING


def test_a_gang_the_full_cluster_cannot_hold_stays_pending_and_the_running_one_keeps_running() -> (
    None
):
    """ "Gang scheduling: Full Occupied": gang-fq-qj1 (`ClusterSize(oneCPU)` one-CPU pods, all
    required) runs; gang-fq-qj2, the same, stays Pending and gang-fq-qj1 stays ready."""
    jobs = [VcJob(f"gang-fq-qj{i}", (Task(ONE_CPU_SLOTS),), ONE_CPU_SLOTS) for i in (1, 2)]

    outcomes = Timeline({0: jobs[:1], 2: jobs[1:]}).play(6)

    assert len(placed(outcomes[1], jobs[0])) == ONE_CPU_SLOTS
    for later in outcomes[2:]:
        assert later.evictions == []
        assert later.binds == {}
        assert phase(later, "gang-fq-qj2") is PodGroupPhase.PENDING
        assert len(placed(later, jobs[0])) == ONE_CPU_SLOTS
        assert phase(later, "gang-fq-qj1") is PodGroupPhase.RUNNING


def test_a_gang_of_best_effort_and_one_cpu_pods_runs_whole() -> None:
    """ "Gang scheduling: Contains both best-effort pod and non-best-effort pod": task
    "best-effort" (despite its name, `ClusterSize/2` pods of one CPU) and task "non-best-effort"
    (the other half, no request), minAvailable all 8; Volcano expects the job ready. Allocate
    places the one-CPU pods (the best-effort ones count toward the gang while pending), backfill
    the best-effort ones."""
    half = ONE_CPU_SLOTS // 2
    job = VcJob(
        "gang-both-best-effort-non-best-effort-pods",
        (Task(half, "1", "best-effort"), Task(ONE_CPU_SLOTS - half, None, "non-best-effort")),
        min_available=ONE_CPU_SLOTS,
    )

    _, second = Timeline({0: [job]}).play(2)

    assert sorted(second.binds) == sorted(f"default/{p}" for p in job.pod_names())
    assert phase(second, job.name) is PodGroupPhase.RUNNING


def test_a_job_with_a_best_effort_task_gets_every_pod_placed() -> None:
    """ "Schedule BestEffort Job": test, a task of `ClusterSize(oneCPU)` one-CPU pods (min 2) and
    one of `ClusterSize/2` best-effort pods (min 2), minAvailable 4; Volcano expects the job
    ready. All twelve are placed."""
    job = VcJob("test", (Task(ONE_CPU_SLOTS), Task(ONE_CPU_SLOTS // 2, None)), min_available=4)

    _, second = Timeline({0: [job]}).play(2)

    assert sorted(second.binds) == sorted(f"default/{p}" for p in job.pod_names())
    assert phase(second, "test") is PodGroupPhase.RUNNING


def test_a_gang_that_cannot_fit_is_unschedulable_and_evicts_nothing() -> None:
    """ "Statement": st-qj-1 (`ClusterSize(oneCPU)` one-CPU pods, all required) runs; st-qj-2,
    the same, is Unschedulable, and no preemption evicts st-qj-1 (equal priorities; gang's and
    drf's preemptable are off in the e2e policy)."""
    jobs = [VcJob(f"st-qj-{i}", (Task(ONE_CPU_SLOTS),), ONE_CPU_SLOTS) for i in (1, 2)]

    outcomes = Timeline({0: jobs[:1], 2: jobs[1:]}).play(6)

    assert unschedulable(outcomes[-1], jobs[1])
    assert [e for o in outcomes for e in o.evictions] == []
    assert len(placed(outcomes[-1], jobs[0])) == ONE_CPU_SLOTS


def test_binpack_fills_the_node_of_the_first_pod_before_another() -> None:
    """ "support binpack policy": binpack-base-1 (one pod of one CPU) runs on some node; then
    binpack-test-1, as many half-CPU pods as that node has room for (here 2), all required.
    Volcano's test then checks that the base job's pod is still on its node (it reads the base
    job's pods, where the test job's were surely meant); both hold here: the test job's pods
    join it there."""
    base = VcJob("binpack-base-1", (Task(1),), min_available=1)
    test = VcJob("binpack-test-1", (Task(2, "500m"),), min_available=2)

    outcomes = Timeline({0: [base], 2: [test]}).play(4)

    [base_pod] = outcomes[1].binds.items()
    base_node = base_pod[1]
    assert outcomes[3].binds == {f"default/{p}": base_node for p in test.pod_names()}
    after = outcomes[3].snapshot_after.tasks[base_pod[0]]
    assert after.node_name == base_node


def k8s_job(name: str, pods: int, cpu: str | None) -> list[Item]:
    """A k8s Job's pods and the PodGroup Volcano's PodGroup controller makes for them."""
    group = podgroup(f"podgroup-{name}").min_member(1).controlled()
    items: list[Item] = [group.min_resources(cpu=cpu) if cpu else group]
    for i in range(pods):
        p = pod(f"{name}-{i}").group(f"podgroup-{name}")
        items.append(p.requests(cpu=cpu) if cpu else p)
    return items


def test_a_k8s_job_of_volcano_pods_gets_its_pods_placed() -> None:
    """ "Schedule v1.Job type using Volcano scheduler": a batch/v1 Job, parallelism 2, pods of no
    request with `schedulerName: volcano`; Volcano expects active pods. Both are placed (by
    backfill: they request nothing)."""
    [outcome] = run(snapshot(*cluster(), *k8s_job("job1", 2, None)), policy=POLICY)

    assert sorted(outcome.binds) == ["default/job1-0", "default/job1-1"]


def finishing(status: TaskStatus) -> list[Outcome]:
    """A k8s Job's one-CPU pod placed, running, then finished with `status`."""

    def finish(i: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        if i != 2:
            return snap
        tasks = {u: dataclasses.replace(t, status=status) for u, t in snap.tasks.items()}
        return dataclasses.replace(snap, tasks=tasks)

    items = k8s_job("job1", 1, "1")
    return run(snapshot(*cluster(), *items), policy=POLICY, cycles=3, between=finish)


def test_the_podgroup_of_a_k8s_job_whose_pod_succeeded_is_completed() -> None:
    """ "PodGroup's Phase with k8s Job in Completed": the Job's pod (one CPU) runs and succeeds;
    Volcano expects its PodGroup Completed."""
    placing, running, finished = finishing(TaskStatus.SUCCEEDED)

    assert placing.binds == {"default/job1-0": "kind-worker"}
    assert phase(running, "podgroup-job1") is PodGroupPhase.RUNNING
    assert phase(finished, "podgroup-job1") is PodGroupPhase.COMPLETED


def test_the_podgroup_of_a_k8s_job_whose_pod_failed_is_completed() -> None:
    """ "PodGroup's Phase should be Completed when Job fails": the pod fails (backoffLimit 0);
    Volcano expects the PodGroup Completed: a failed pod was placed and has finished (Volcano
    9ac1c8c4f). Here it went back to Pending until the same fix."""
    _, running, finished = finishing(TaskStatus.FAILED)

    assert phase(running, "podgroup-job1") is PodGroupPhase.RUNNING
    assert phase(finished, "podgroup-job1") is PodGroupPhase.COMPLETED


@pytest.mark.xfail(
    strict=True,
    reason="Volcano skips this It itself ('Failed when add yaml, test case may fail in some"
    " condition'), and its code does what ours does: enqueue interleaves queues in queue order,"
    " proportion's queue order is the queues' shares, which count allocation only and are tied"
    " (0) while nothing of q1 or q2 runs, so the tie-break (creation, then uid) gives q1 every"
    " turn and it is admitted up to the overcommit budget before q2 gets one; q1's two-pod gangs"
    " then fill the cluster, and reclaim cannot take from a gang at its minimum",
)
def test_two_queues_share_the_cluster_half_and_half_once_it_frees_up() -> None:
    """ "Queue Fair Share" (skipped in Volcano): queues q1 and q2 (weight 1); a job of queue
    default with `2 x ClusterSize(halfCPU)` half-CPU pods (min 2) fills the cluster; then
    `ClusterSize(halfCPU)` jobs in each queue, two half-CPU pods each (min 2); the first job is
    deleted. Volcano's test waits for `ClusterSize(halfCPU)` pods of q1 and q2 placed, and then
    expects q2's within one of half of them."""
    occupied = VcJob("queue-fair-share-default-123", (Task(2 * HALF_CPU_SLOTS, "500m"),), 2)
    jobs = [
        VcJob(f"queue-fair-share-{q}-{i}", (Task(2, "500m"),), 2, queue=q)
        for i in range(HALF_CPU_SLOTS)
        for q in ("q1", "q2")
    ]
    created: dict[int, list[VcJob | Item]] = {0: [queue("q1"), queue("q2"), occupied], 3: [*jobs]}
    timeline = Timeline(created, deleted={5: [occupied.name]})

    last = timeline.play(12)[-1]

    per_queue = {q: sum(len(placed(last, j)) for j in jobs if j.queue == q) for q in ("q1", "q2")}
    assert per_queue["q1"] + per_queue["q2"] == HALF_CPU_SLOTS
    assert HALF_CPU_SLOTS // 2 - 1 <= per_queue["q2"] <= HALF_CPU_SLOTS // 2 + 1
