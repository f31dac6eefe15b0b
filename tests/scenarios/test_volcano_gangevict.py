"""Volcano's gang-aware eviction e2e tests, transcribed from `test/e2e/gangevict/gangevict.go`
(GP-1..GP-8 and GP-R1 "GangPreempt E2E Test", GR-1..GR-7 and GR-R1 "GangReclaim E2E Test"),
and the unit cases of `actions/gangpreempt/gangpreempt_test.go` and
`actions/gangreclaim/gangreclaim_test.go` that say something the e2e cases do not.

**The cluster** is the e2e's kind cluster (`vscheduler.testing.kind_e2e`) with
`InitTestContext`'s placeholders for `NodesNumLimit: 4` and `NodesResourceLimit: CPU1Mem1`
(`kind_e2e.placeholders`): four workers with exactly 1 cpu and 1Gi free each.

**The jobs** are `createGangJob`'s (`kind_e2e.vcjob`): `rep` pods of CPU1Mem1, `minMember` the
given `minAvail`, victims labelled `volcano.sh/preemptable: "true"` (the askers carry no
label), the priority class's value (gp-high-pri 100, gp-med-pri 50, gp-low-pri and gr-low-pri
10); GP-R1's and GR-R1's victim is `createMultiRoleGangJob`'s (`roles_gang`: roles ps and
worker with their own minimums, `minTaskMember` on the PodGroup). Every queue deserves `deservedCPU(n)`: n cpu and n Gi. "Create, then wait" is a few cycles
(`KindCluster.settle`), evicted pods recreated Pending by the job controller. The e2e's
`WaitTasksReady(job, n)` waits for *at least* n Running pods and GP-3/GR-2 accept either victim
gang broken; asserted here is the exact outcome, which meets those bounds.

**The policy** is `gangEvictConfig` without `network-topology-aware` (with no HyperNodes
Volcano's gives no gradients and the actions search the whole cluster, as here; vscheduler's
gang-aware actions search no HyperNode domain).
The e2e cases with sub-groups or HyperNodes are not transcribed: GP-S1 and GR-S1 ("sub-group
group-slack caps safe") make a job of `partitionPolicy` sub-groups (`MinPartitions` of them to
stay ready) placed under a hard network topology, and vscheduler models neither sub-groups (a
PodGroup's `subGroupPolicy`, the bundles' group slack) nor HyperNodes; GP-T1..T4 and GR-T1..T4
are the HyperNode tiers.
"""

from __future__ import annotations

import pytest

from vscheduler.model.status import TaskStatus
from vscheduler.testing.builders import Item, QueueBuilder, pod, podgroup, queue
from vscheduler.testing.kind_e2e import PREEMPTABLE, KindCluster, placeholders, vcjob
from vscheduler.testing.scenario import run

GANG_EVICT_POLICY = """\
actions: "allocate, backfill, gangreclaim, gangpreempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
  - name: capacity
    enableHierarchy: false
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: nodeorder
  - name: binpack
"""
"""`gangEvictConfig`, `network-topology-aware` left out."""
HIGH, MEDIUM, LOW = 100, 50, 10
GP_Q = "gp-q"


def deserved(name: str, cpu: int) -> QueueBuilder:
    """A queue of weight 1 deserving `deservedCPU(cpu)`."""
    return queue(name).deserved(cpu=cpu, memory=f"{cpu}Gi")


def gang(
    name: str, q: str, priority: int, replicas: int, minimum: int, *, victim: bool
) -> list[Item]:
    """`createGangJob(ctx, name, q, pri, CPU1Mem1, rep, minAvail, preemptable)`."""
    labels = {PREEMPTABLE: "true"} if victim else None
    return vcjob(
        name,
        replicas=replicas,
        minimum=minimum,
        priority=priority,
        q=q,
        millicpu=1000,
        mebibytes=1024,
        labels=labels,
    )


def roles_gang(name: str, q: str, priority: int) -> list[Item]:
    """`createMultiRoleGangJob(ctx, name, q, pri, CPU1Mem1, [ps: 1 rep min 1, worker: 3 reps
    min 2], jobMin 3, preemptable)`: the PodGroup (`minMember` 3, `minTaskMember` {ps: 1,
    worker: 2}, `minResources` three pods' requests) and pods `<job>-ps-0`,
    `<job>-worker-0..2`, labelled preemptable."""
    group = (
        podgroup(name)
        .controlled()
        .queue(q)
        .priority(priority)
        .min_member(3)
        .min_task_member(ps=1, worker=2)
        .min_resources(cpu=3, memory="3Gi")
    )
    pods: list[Item] = []
    for role, replicas in (("ps", 1), ("worker", 3)):
        for i in range(replicas):
            built = pod(f"{name}-{role}-{i}").group(name).role(role).priority(priority)
            built = built.requests(cpu=1, memory="1Gi").labels(**{PREEMPTABLE: "true"})
            pods.append(built)
    return [group, *pods]


def running_roles(on: KindCluster, job: str) -> dict[str, int]:
    """`countReadyTasksByRole`: Running pods of `job` per role."""
    tasks = on.snap.tasks.values()
    return {
        role: sum(
            1
            for t in tasks
            if t.group_name == job and t.task_role == role and t.status is TaskStatus.RUNNING
        )
        for role in ("ps", "worker")
    }


def cluster(*queues: Item, policy: str = GANG_EVICT_POLICY) -> KindCluster:
    """`InitTestContext` with `NodesNumLimit: 4`, `NodesResourceLimit: CPU1Mem1`, `queues`."""
    return KindCluster(policy, *placeholders(4, 1000, 1024), *queues)


def steps(on: KindCluster, *jobs: list[Item]) -> None:
    """Each job created, then waited for."""
    for items in jobs:
        on.create(*items)
        on.settle()


# --- gangpreempt ------------------------------------------------------------------------------
def test_gp1_safe_bundle_preemption_evicts_the_surplus_and_the_victim_gang_survives() -> None:
    """GP-1: victim-gp1 (4 pods, minAvail 2, low) fills the four slots; preemptor-gp1 (2 pods,
    minAvail 2, high) runs by evicting victim-gp1's two surplus pods (its safe bundle), and
    victim-gp1 keeps 2 Running."""
    on = cluster(deserved(GP_Q, 4))
    steps(on, gang("victim-gp1", GP_Q, LOW, 4, 2, victim=True))
    assert on.running("victim-gp1") == 4
    steps(on, gang("preemptor-gp1", GP_Q, HIGH, 2, 2, victim=False))

    assert on.running("preemptor-gp1") == 2
    assert on.running("victim-gp1") == 2
    assert len(on.evicted_of("victim-gp1")) == 2


def test_gp2_safe_bundles_are_taken_from_two_gangs_before_any_gang_breaks() -> None:
    """GP-2: victim-a-gp2 and victim-b-gp2 (2 pods, minAvail 1 each, low) fill the slots;
    preemptor-gp2 (2 pods, minAvail 2, high) runs on one surplus pod of each, and both victims
    keep 1 Running."""
    on = cluster(deserved(GP_Q, 4))
    steps(
        on,
        gang("victim-a-gp2", GP_Q, LOW, 2, 1, victim=True),
        gang("victim-b-gp2", GP_Q, LOW, 2, 1, victim=True),
        gang("preemptor-gp2", GP_Q, HIGH, 2, 2, victim=False),
    )

    assert on.running("preemptor-gp2") == 2
    assert (on.running("victim-a-gp2"), on.running("victim-b-gp2")) == (1, 1)


def test_gp3_a_whole_bundle_breaks_exactly_one_gang_when_there_is_no_surplus() -> None:
    """GP-3: two tight gangs (2 pods, minAvail 2, low); preemptor-gp3 (2 pods, minAvail 2,
    high) runs by breaking one of them whole, the other untouched. The e2e accepts either;
    here victim-b-gp3 goes: whole bundles are taken in the reverse of the job order, and
    between two equal jobs the later-created (here: created later) is placed last."""
    on = cluster(deserved(GP_Q, 4))
    steps(
        on,
        gang("victim-a-gp3", GP_Q, LOW, 2, 2, victim=True),
        gang("victim-b-gp3", GP_Q, LOW, 2, 2, victim=True),
        gang("preemptor-gp3", GP_Q, HIGH, 2, 2, victim=False),
    )

    assert on.running("preemptor-gp3") == 2
    assert (on.running("victim-a-gp3"), on.running("victim-b-gp3")) == (2, 0)
    assert len(on.evicted_of("victim-b-gp3")) == 2
    assert on.evicted_of("victim-a-gp3") == []


def test_gp4_a_large_preemptor_breaks_both_gangs() -> None:
    """GP-4: two tight gangs (2 pods, minAvail 2, low); preemptor-gp4 (4 pods, minAvail 4,
    high) runs with all 4 by breaking both."""
    on = cluster(deserved(GP_Q, 4))
    steps(
        on,
        gang("victim-a-gp4", GP_Q, LOW, 2, 2, victim=True),
        gang("victim-b-gp4", GP_Q, LOW, 2, 2, victim=True),
        gang("preemptor-gp4", GP_Q, HIGH, 4, 4, victim=False),
    )

    assert on.running("preemptor-gp4") == 4
    assert (on.running("victim-a-gp4"), on.running("victim-b-gp4")) == (0, 0)


def test_gp5_a_gang_preempts_a_lower_priority_gang_that_fills_the_cluster() -> None:
    """GP-5: victim-gp5 (4 pods, minAvail 4, low) fills the cluster; preemptor-gp5 (2 pods,
    minAvail 2, high) runs: victim-gp5 has no surplus, so its whole bundle goes."""
    on = cluster(deserved(GP_Q, 4))
    steps(
        on,
        gang("victim-gp5", GP_Q, LOW, 4, 4, victim=True),
        gang("preemptor-gp5", GP_Q, HIGH, 2, 2, victim=False),
    )

    assert on.running("preemptor-gp5") == 2
    assert on.running("victim-gp5") == 0
    assert len(on.evicted_of("victim-gp5")) == 4


def test_gp6_gang_preemption_does_not_cross_queues() -> None:
    """GP-6: gp6-q2 (not reclaimable) filled by victim-gp6 (4 pods, minAvail 4, low);
    preemptor-gp6 (2 pods, high) in gp6-q1 does not run, and victim-gp6 keeps its 4."""
    q2 = deserved("gp6-q2", 2).reclaimable(False)
    on = cluster(deserved("gp6-q1", 2), q2)
    steps(
        on,
        gang("victim-gp6", "gp6-q2", LOW, 4, 4, victim=True),
        gang("preemptor-gp6", "gp6-q1", HIGH, 2, 2, victim=False),
    )

    assert on.running("preemptor-gp6") == 0
    assert on.running("victim-gp6") == 4
    assert on.evicted == []


def test_gp7_an_equal_priority_gang_is_not_preempted() -> None:
    """GP-7: victim-gp7 (4 pods, minAvail 4, medium) fills the cluster; preemptor-gp7 (2 pods,
    medium) does not run, victim-gp7 keeps its 4."""
    on = cluster(deserved(GP_Q, 4))
    steps(
        on,
        gang("victim-gp7", GP_Q, MEDIUM, 4, 4, victim=True),
        gang("preemptor-gp7", GP_Q, MEDIUM, 2, 2, victim=False),
    )

    assert (on.running("preemptor-gp7"), on.running("victim-gp7")) == (0, 4)
    assert on.evicted == []


def test_gp8_a_medium_preemptor_cannot_take_a_high_priority_gang() -> None:
    """GP-8: gang-a-gp8 (2 pods, high) and gang-b-gp8 (2 pods, low) fill the cluster;
    preemptor-c-gp8 (4 pods, minAvail 4, medium) could take only gang-b-gp8's two: it does not
    run, nothing is evicted (no trial holds, so no victim goes), gang-a-gp8 keeps its 2."""
    on = cluster(deserved(GP_Q, 4))
    steps(
        on,
        gang("gang-a-gp8", GP_Q, HIGH, 2, 2, victim=True),
        gang("gang-b-gp8", GP_Q, LOW, 2, 2, victim=True),
        gang("preemptor-c-gp8", GP_Q, MEDIUM, 4, 4, victim=False),
    )

    assert on.running("preemptor-c-gp8") == 0
    assert (on.running("gang-a-gp8"), on.running("gang-b-gp8")) == (2, 2)
    assert on.evicted == []


def test_gpr1_the_per_role_gate_keeps_the_role_tight_task_and_takes_a_surplus_worker() -> None:
    """GP-R1: victim-gpr1 (low; ps 1 pod minimum 1, worker 3 pods minimum 2, minMember 3)
    fills the four slots; preemptor-gpr1 (1 pod, high) runs. The job can lose one pod, and ps
    (first by uid) is at its role minimum: the safe bundle is worker-0, and the victim keeps 3
    Running, ps among them."""
    on = cluster(deserved(GP_Q, 4))
    steps(on, roles_gang("victim-gpr1", GP_Q, LOW))
    assert on.running("victim-gpr1") == 4
    steps(on, gang("preemptor-gpr1", GP_Q, HIGH, 1, 1, victim=False))

    assert on.running("preemptor-gpr1") == 1
    assert on.evicted_of("victim-gpr1") == ["default/victim-gpr1-worker-0"]
    assert running_roles(on, "victim-gpr1") == {"ps": 1, "worker": 2}


# --- gangreclaim ------------------------------------------------------------------------------
def two_queues(q1: int = 2, q2: int = 2) -> KindCluster:
    """`gr-q1` and `gr-q2` deserving `q1` and `q2` cpu."""
    return cluster(deserved("gr-q1", q1), deserved("gr-q2", q2))


def test_gr1_safe_bundle_reclaim_evicts_the_surplus_and_the_victim_gang_survives() -> None:
    """GR-1: victim-gr1 (4 pods, minAvail 2) fills the cluster from gr-q2 (deserving 2);
    reclaimer-gr1 (2 pods, minAvail 2) in gr-q1 runs on victim-gr1's surplus, which keeps 2."""
    on = two_queues()
    steps(
        on,
        gang("victim-gr1", "gr-q2", LOW, 4, 2, victim=True),
        gang("reclaimer-gr1", "gr-q1", LOW, 2, 2, victim=False),
    )

    assert (on.running("reclaimer-gr1"), on.running("victim-gr1")) == (2, 2)
    assert len(on.evicted_of("victim-gr1")) == 2


def test_gr2_a_whole_bundle_reclaim_breaks_exactly_one_gang() -> None:
    """GR-2: two tight gangs (2 pods, minAvail 2) of gr-q2 fill the cluster; reclaimer-gr2
    (2 pods) in gr-q1 runs by breaking one of them (the e2e accepts either). Both are of one
    queue, so efficiency decides, and ties: the job uid, victim-a-gr2's first."""
    on = two_queues()
    steps(
        on,
        gang("victim-a-gr2", "gr-q2", LOW, 2, 2, victim=True),
        gang("victim-b-gr2", "gr-q2", LOW, 2, 2, victim=True),
        gang("reclaimer-gr2", "gr-q1", LOW, 2, 2, victim=False),
    )

    assert on.running("reclaimer-gr2") == 2
    assert (on.running("victim-a-gr2"), on.running("victim-b-gr2")) == (0, 2)


def test_gr3_a_gang_reclaims_from_an_overusing_queue() -> None:
    """GR-3: victim-gr3 (4 pods, minAvail 2) of gr-q2 overuses its deserved 2; reclaimer-gr3
    (2 pods) of gr-q1 runs."""
    on = two_queues()
    steps(
        on,
        gang("victim-gr3", "gr-q2", LOW, 4, 2, victim=True),
        gang("reclaimer-gr3", "gr-q1", LOW, 2, 2, victim=False),
    )

    assert (on.running("reclaimer-gr3"), on.running("victim-gr3")) == (2, 2)


def test_gr4_nothing_is_reclaimed_from_queues_within_their_deserved() -> None:
    """GR-4: job-gr4-q2 and job-gr4-q3 (2 pods each) run within their queues' deserved 2;
    reclaimer-gr4 (2 pods) in gr4-q1 does not run, nothing is evicted."""
    on = cluster(deserved("gr4-q1", 2), deserved("gr4-q2", 2), deserved("gr4-q3", 2))
    steps(
        on,
        gang("job-gr4-q2", "gr4-q2", LOW, 2, 2, victim=True),
        gang("job-gr4-q3", "gr4-q3", LOW, 2, 2, victim=True),
        gang("reclaimer-gr4", "gr4-q1", LOW, 2, 2, victim=False),
    )

    assert on.running("reclaimer-gr4") == 0
    assert (on.running("job-gr4-q2"), on.running("job-gr4-q3")) == (2, 2)
    assert on.evicted == []


def test_gr5_nothing_is_reclaimed_from_a_queue_that_is_not_reclaimable() -> None:
    """GR-5: victim-gr5 (4 pods, minAvail 2) overuses gr-q2, which is then made not
    reclaimable; reclaimer-gr5 (2 pods) in gr-q1 does not run, victim-gr5 keeps its 4."""
    on = two_queues()
    steps(on, gang("victim-gr5", "gr-q2", LOW, 4, 2, victim=True))
    steps(
        on,
        [
            deserved("gr-q2", 2).reclaimable(False),
            *gang("reclaimer-gr5", "gr-q1", LOW, 2, 2, victim=False),
        ],
    )

    assert (on.running("reclaimer-gr5"), on.running("victim-gr5")) == (0, 4)
    assert on.evicted == []


def test_gr6_reclaim_stops_at_the_victim_queue_s_guarantee() -> None:
    """GR-6: victim-gr6 (4 pods, minAvail 2) of gr6-q2 (guarantee and deserved 2) fills the
    cluster; reclaimer-gr6 (4 pods, minAvail 4) of gr6-q1 (deserving 4) could reclaim only the
    2 pods above the guarantee: it does not run, nothing is evicted."""
    q2 = deserved("gr6-q2", 2).guarantee(cpu=2, memory="2Gi")
    on = cluster(deserved("gr6-q1", 4), q2)
    steps(
        on,
        gang("victim-gr6", "gr6-q2", LOW, 4, 2, victim=True),
        gang("reclaimer-gr6", "gr6-q1", LOW, 4, 4, victim=False),
    )

    assert on.running("reclaimer-gr6") == 0
    assert on.running("victim-gr6") == 4
    assert on.evicted == []


def test_gr7_an_overused_queue_does_not_reclaim() -> None:
    """GR-7: job-gr7-q1 (2 pods) overuses gr-q1 (deserving 1), job-gr7-q2 (2 pods) runs
    within gr-q2's 3; reclaimer-gr7 (2 pods) of gr-q1 does not run, nothing is evicted."""
    on = two_queues(1, 3)
    steps(
        on,
        gang("job-gr7-q1", "gr-q1", LOW, 2, 2, victim=True),
        gang("job-gr7-q2", "gr-q2", LOW, 2, 2, victim=True),
        gang("reclaimer-gr7", "gr-q1", LOW, 2, 2, victim=False),
    )

    assert on.running("reclaimer-gr7") == 0
    assert (on.running("job-gr7-q1"), on.running("job-gr7-q2")) == (2, 2)
    assert on.evicted == []


def test_grr1_the_per_role_gate_keeps_the_role_tight_task_and_reclaims_a_surplus_worker() -> None:
    """GR-R1: victim-grr1 (GP-R1's roles) fills the cluster from gr-q2 (deserving 3, so
    overusing by one); reclaimer-grr1 (1 pod) of gr-q1 (deserving 1) runs on worker-0, the
    victim's one safe pod: ps, at its role minimum, stays."""
    on = two_queues(1, 3)
    steps(
        on,
        roles_gang("victim-grr1", "gr-q2", LOW),
        gang("reclaimer-grr1", "gr-q1", LOW, 1, 1, victim=False),
    )

    assert on.running("reclaimer-grr1") == 1
    assert on.evicted_of("victim-grr1") == ["default/victim-grr1-worker-0"]
    assert running_roles(on, "victim-grr1") == {"ps": 1, "worker": 2}


# --- the unit cases of gangpreempt_test.go and gangreclaim_test.go ------------------------------
NO_WHOLE = GANG_EVICT_POLICY + (
    "configurations:\n- name: gangpreempt\n  arguments:\n    allowWholeBundle: false\n"
    "- name: gangreclaim\n  arguments:\n    allowWholeBundle: false\n"
)


def test_without_whole_bundles_gangpreempt_breaks_no_gang() -> None:
    """gangpreempt_test.go "allowWholeBundle=false": GP-5's cluster with whole bundles off:
    victim-gp5 has no surplus, so the preemptor does not run and nothing is evicted."""
    on = cluster(deserved(GP_Q, 4), policy=NO_WHOLE)
    steps(
        on,
        gang("victim-gp5", GP_Q, LOW, 4, 4, victim=True),
        gang("preemptor-gp5", GP_Q, HIGH, 2, 2, victim=False),
    )

    assert (on.running("preemptor-gp5"), on.running("victim-gp5")) == (0, 4)
    assert on.evicted == []


def test_without_whole_bundles_safe_bundles_are_still_taken() -> None:
    """GP-1 with whole bundles off: the surplus is a safe bundle, taken as before."""
    on = cluster(deserved(GP_Q, 4), policy=NO_WHOLE)
    steps(
        on,
        gang("victim-gp1", GP_Q, LOW, 4, 2, victim=True),
        gang("preemptor-gp1", GP_Q, HIGH, 2, 2, victim=False),
    )

    assert (on.running("preemptor-gp1"), on.running("victim-gp1")) == (2, 2)


def test_without_whole_bundles_gangreclaim_breaks_no_gang() -> None:
    """gangreclaim_test.go "allowWholeBundle=false": GR-2's cluster with whole bundles off."""
    on = two_queues()
    on.policy = NO_WHOLE
    steps(
        on,
        gang("victim-a-gr2", "gr-q2", LOW, 2, 2, victim=True),
        gang("victim-b-gr2", "gr-q2", LOW, 2, 2, victim=True),
        gang("reclaimer-gr2", "gr-q1", LOW, 2, 2, victim=False),
    )

    assert on.running("reclaimer-gr2") == 0
    assert on.evicted == []


def opted(items: list[Item], value: str) -> list[Item]:
    """The job's PodGroup annotated `volcano.sh/preemptable: value`."""
    group, *pods = items
    return [group.annotate(PREEMPTABLE, value), *pods]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("value", "evicted"), [("false", 0), ("true", 4), ("no", 0)], ids=["false", "true", "malformed"]
)
def test_a_podgroup_opted_out_of_preemption_is_no_gangpreempt_victim(
    value: str, evicted: int
) -> None:
    """gangpreempt_test.go "PodGroup preemptable=false": a PodGroup annotated
    `volcano.sh/preemptable` not true gives no victim, even with its pods labelled
    preemptable; "true" allows (GP-5 again)."""
    on = cluster(deserved(GP_Q, 4))
    steps(
        on,
        opted(gang("victim-gp5", GP_Q, LOW, 4, 4, victim=True), value),
        gang("preemptor-gp5", GP_Q, HIGH, 2, 2, victim=False),
    )

    assert len(on.evicted_of("victim-gp5")) == evicted


def test_a_podgroup_opted_out_of_preemption_is_no_gangreclaim_victim() -> None:
    """gangreclaim_test.go "PodGroup preemptable=false": GR-3 with the victim opted out."""
    on = two_queues()
    steps(
        on,
        opted(gang("victim-gr3", "gr-q2", LOW, 4, 2, victim=True), "false"),
        gang("reclaimer-gr3", "gr-q1", LOW, 2, 2, victim=False),
    )

    assert (on.running("reclaimer-gr3"), on.running("victim-gr3")) == (0, 4)


def test_without_the_annotation_a_podgroup_s_pods_may_be_taken() -> None:
    """gangpreempt_test.go "PodGroup preemptable unset": no annotation and no pod label:
    the pods are victims (Volcano's default since 1.7)."""
    on = cluster(deserved(GP_Q, 4))
    steps(
        on,
        gang("victim-gp1", GP_Q, LOW, 4, 2, victim=False),
        gang("preemptor-gp1", GP_Q, HIGH, 2, 2, victim=False),
    )

    assert (on.running("preemptor-gp1"), on.running("victim-gp1")) == (2, 2)


def test_gangpreempt_evictions_name_the_action_and_the_asking_podgroup() -> None:
    """The evictions carry the action, one plan per asking job, and the reason
    `gangpreempt by <namespace/podgroup>`; the asker's pods are pipelined (nominated) onto
    the nodes they free."""
    on = cluster(deserved(GP_Q, 4))
    steps(on, gang("victim-gp1", GP_Q, LOW, 4, 2, victim=True))
    on.create(*gang("preemptor-gp1", GP_Q, HIGH, 2, 2, victim=False))
    (outcome,) = run(on.snap, policy=GANG_EVICT_POLICY)

    evictions = outcome.result.evictions
    assert [(e.pod, e.action, e.reason, e.plan) for e in evictions] == [
        (
            f"default/victim-gp1-victim-gp1-task-0-{i}",
            "gangpreempt",
            "gangpreempt by default/preemptor-gp1",
            "gangpreempt default/preemptor-gp1",
        )
        for i in (0, 1)  # the safe bundle: lowest pod priority first, then uid (Volcano's)
    ]
    assert sorted(outcome.result.nominated) == [
        "default/preemptor-gp1-preemptor-gp1-task-0-0",
        "default/preemptor-gp1-preemptor-gp1-task-0-1",
    ]


def test_gangreclaim_evictions_name_the_action_the_asking_podgroup_and_its_queue() -> None:
    """The reason is `gangreclaim by <namespace/podgroup> of queue <q>`."""
    on = two_queues()
    steps(on, gang("victim-gr1", "gr-q2", LOW, 4, 2, victim=True))
    on.create(*gang("reclaimer-gr1", "gr-q1", LOW, 2, 2, victim=False))
    (outcome,) = run(on.snap, policy=GANG_EVICT_POLICY)

    assert {(e.action, e.reason, e.plan) for e in outcome.result.evictions} == {
        (
            "gangreclaim",
            "gangreclaim by default/reclaimer-gr1 of queue gr-q1",
            "gangreclaim default/reclaimer-gr1",
        ),
    }
    assert len(outcome.result.evictions) == 2
