"""Volcano's e2e preemption tests, transcribed from `test/e2e/schedulingaction/preempt.go`
("Job E2E Test").

**The cluster** is the e2e's kind cluster (`vscheduler.testing.kind_e2e`: a tainted control plane
and four workers of 4 cpu and 16Gi, `kindnet` holding 100m on each). `e2eutil.ClusterSize(ctx,
OneCPU)` counts the one-cpu slots of the untainted nodes: three per worker, `rep` = 12;
`ClusterNodeNumber` = 4. Proportion divides the whole cluster, control plane included, among
the queues (Volcano's `ssn.TotalResource` sums every ready node).

**The jobs** are what Volcano's job controller and webhook make of each e2e `JobSpec`
(`kind_e2e.vcjob`): a PodGroup (`minMember` the job's `Min`, else the task's), pods
`<job>-<job>-task-0-<i>` of 1 cpu (`OneCPU`) with the task's labels, `volcano.sh/preemptable:
"true"` where the spec sets it, and the priority of the job's class (high-priority 100,
middle-priority 50, low-priority 10).

**Time.** Each "create, then wait" step is a few cycles (`KindCluster.settle`): bound pods run,
evicted pods go and the job controller recreates them, Pending. The e2e's `WaitTasksReady(job,
n)` waits for *at least* n Running pods; asserted here is the exact count vscheduler reaches,
which meets that bound.

**The policy** is the e2e ConfigMap's (`kind_e2e.CI_POLICY`, `volcano-scheduler-ci.conf`); the
cases that change the ConfigMap change it here the same way. "preemption only works in the same
queue" means to remove `reclaim`, but its modifier never assigns the new action list
(`sc.Actions` is left as it was) and returns true: the ConfigMap is rewritten unchanged, so
that case runs with reclaim, as here.

Transcribed: "schedule high priority job without preemption when resource is enough",
"schedule high priority job with preemption when idle resource is NOT enough but preemptee
resource is enough", "preemption doesn't work when podgroup is pending due to insufficient
resource", "preemption only works in the same queue", "preemption doesn't work when total
resource of idle resource and preemptee is NOT enough", "Jobs unschedulable due to scheduling
gates will not preempt other jobs despite sufficient preemptor" (see its test: the Go spec sets
no scheduling gate), "should preempt low priority pod with anti-affinity constraint".

Not transcribed: "multi-preemptor-jobs who are in different priority" (skipped in Volcano
itself, issue #911).
"""

from __future__ import annotations

from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.builders import PodBuilder, pod, pod_term, podgroup, queue
from vscheduler.testing.kind_e2e import (
    CI_POLICY,
    CI_TIERS,
    HOST,
    PREEMPTABLE,
    KindCluster,
    vcjob,
)

WITHOUT_ENQUEUE = 'actions: "allocate, backfill, reclaim, preempt"\n' + CI_TIERS
"""The ConfigMap of the cases that "Remove enqueue action first because it conflicts with
preempt" (`strings.TrimPrefix(sc.Actions, "enqueue, ")`)."""
TOPOLOGY_AWARE = (
    WITHOUT_ENQUEUE
    + """\
configurations:
- name: preempt
  arguments:
    enableTopologyAwarePreemption: true
"""
)
"""The anti-affinity case's ConfigMap: without enqueue, and preempt's
`enableTopologyAwarePreemption` on."""
HIGH, MIDDLE, LOW = 100, 50, 10
REP = 12
"""`ClusterSize(ctx, OneCPU)`."""
PREEMPTABLE_LABELS = {PREEMPTABLE: "true"}


def test_a_high_priority_job_runs_beside_a_low_one_while_there_is_room() -> None:
    """ "schedule high priority job without preemption when resource is enough": preemptee-0
    (one pod, low-priority) runs; preemptor-0 (one pod, high-priority) then runs too, and
    preemptee-0 keeps its pod."""
    cluster = KindCluster(CI_POLICY)
    cluster.create(
        *vcjob("preemptee-0", replicas=1, minimum=1, priority=LOW, labels=PREEMPTABLE_LABELS)
    )
    cluster.settle()
    cluster.create(
        *vcjob("preemptor-0", replicas=1, minimum=1, priority=HIGH, labels=PREEMPTABLE_LABELS)
    )
    cluster.settle()

    assert (cluster.running("preemptee-0"), cluster.running("preemptor-0")) == (1, 1)
    assert cluster.evicted == []


def fill_then_preempt(policy: str) -> KindCluster:
    """preemptee-1 (rep pods, `minAvailable` 1, low-priority) fills the workers; then
    preemptor-1 (rep pods, `minAvailable` rep/2, high-priority) is created."""
    cluster = KindCluster(policy)
    cluster.create(
        *vcjob("preemptee-1", replicas=REP, minimum=1, priority=LOW, labels=PREEMPTABLE_LABELS)
    )
    cluster.settle()
    assert cluster.running("preemptee-1") == REP
    cluster.create(
        *vcjob(
            "preemptor-1", replicas=REP, minimum=REP // 2, priority=HIGH, labels=PREEMPTABLE_LABELS
        )
    )
    return cluster


def test_a_high_priority_job_preempts_half_of_a_low_one_that_fills_the_cluster() -> None:
    """ "schedule high priority job with preemption when idle resource is NOT enough but
    preemptee resource is enough" (enqueue removed): preemptor-1 gets at least rep/2 pods
    Running and preemptee-1 keeps at least rep/2. Preempt stops once the preemptor is no longer
    starving (its `minAvailable` placed: gang's and priority's jobStarving together), so exactly
    rep/2 are evicted."""
    cluster = fill_then_preempt(WITHOUT_ENQUEUE)
    cluster.settle()

    assert cluster.running("preemptor-1") == REP // 2
    assert cluster.running("preemptee-1") == REP // 2
    assert len(cluster.evicted_of("preemptee-1")) == REP // 2


def test_a_pod_of_a_podgroup_left_pending_preempts_nothing() -> None:
    """ "preemption doesn't work when podgroup is pending due to insufficient resource":
    PodGroup pending-pg (`minMember` 1, `minResources` 30 cpu, the default queue) is never
    admitted (overcommit: 30 cpu is beyond the cluster), so its pod preemptor-pod (1 cpu,
    high-priority) evicts none of preemptee-2's rep pods (low-priority, no preemptable label)."""
    cluster = KindCluster(CI_POLICY)
    cluster.create(podgroup("pending-pg").min_member(1).min_resources(cpu="30"))
    cluster.create(*vcjob("preemptee-2", replicas=REP, minimum=1, priority=LOW))
    cluster.settle()
    assert cluster.running("preemptee-2") == REP
    cluster.create(pod("preemptor-pod").group("pending-pg").requests(cpu="1").priority(HIGH))
    cluster.settle()

    assert cluster.running("preemptee-2") == REP
    assert cluster.evicted == []
    assert cluster.phase("pending-pg") is PodGroupPhase.PENDING


def test_a_job_preempts_only_in_its_own_queue() -> None:
    """ "preemption only works in the same queue": j1-q1 (rep/2 pods, all required,
    low-priority, queue q1-preemption) and j2-q2 (the same in q2-reference) fill the cluster;
    j3-q1 (rep pods, `minAvailable` rep/2, high-priority, q1-preemption) gets rep/2 pods
    Running, all from j1-q1: j2-q2 keeps its pods (reclaim, still in the ConfigMap, finds q2 at
    no more than its deserved share, and gang keeps j2-q2 at its `minAvailable`)."""
    cluster = KindCluster(CI_POLICY, queue("q1-preemption"), queue("q2-reference"))
    half = REP // 2
    for name, q in (("j1-q1", "q1-preemption"), ("j2-q2", "q2-reference")):
        cluster.create(
            *vcjob(name, replicas=half, minimum=half, priority=LOW, q=q, labels=PREEMPTABLE_LABELS)
        )
        cluster.settle()
        assert cluster.running(name) == half
    cluster.create(
        *vcjob(
            "j3-q1",
            replicas=REP,
            minimum=half,
            priority=HIGH,
            q="q1-preemption",
            labels=PREEMPTABLE_LABELS,
        )
    )
    cluster.settle()

    assert cluster.running("j3-q1") == half
    assert cluster.running("j1-q1") == 0
    assert cluster.running("j2-q2") == half
    assert cluster.evicted_of("j2-q2") == []


def test_a_job_that_the_idle_room_and_its_victims_cannot_hold_preempts_nothing() -> None:
    """ "preemption doesn't work when total resource of idle resource and preemptee is NOT
    enough": j1-q1 (one pod, low-priority, q1-preemption) and j2-q2 (rep/2 pods, all
    required, low-priority, q2-reference) run; j3-q1 (rep pods, all required, high-priority,
    q1-preemption) cannot have all rep pods Running, and j1-q1 and j2-q2 keep theirs."""
    cluster = KindCluster(CI_POLICY, queue("q1-preemption"), queue("q2-reference"))
    half = REP // 2
    cluster.create(
        *vcjob(
            "j1-q1",
            replicas=1,
            minimum=1,
            priority=LOW,
            q="q1-preemption",
            labels=PREEMPTABLE_LABELS,
        )
    )
    cluster.settle()
    cluster.create(
        *vcjob(
            "j2-q2",
            replicas=half,
            minimum=half,
            priority=LOW,
            q="q2-reference",
            labels=PREEMPTABLE_LABELS,
        )
    )
    cluster.settle()
    assert (cluster.running("j1-q1"), cluster.running("j2-q2")) == (1, half)
    cluster.create(
        *vcjob(
            "j3-q1",
            replicas=REP,
            minimum=REP,
            priority=HIGH,
            q="q1-preemption",
            labels=PREEMPTABLE_LABELS,
        )
    )
    cluster.settle()

    assert cluster.running("j3-q1") == 0
    assert (cluster.running("j1-q1"), cluster.running("j2-q2")) == (1, half)
    assert cluster.evicted == []


def test_the_scheduling_gates_case_as_its_spec_runs_preempts_half_as_the_ungated_one() -> None:
    """ "Jobs unschedulable due to scheduling gates will not preempt other jobs despite
    sufficient preemptor" (enqueue removed): the Go spec sets no `SchGates` on preemptor-1's
    task, so its pods are never gated and `RemovePodSchGates` removes nothing. What the run
    checks of the scheduler: when preemptor-1 is created (before a cycle) at least rep/2 of its
    pods are Pending and preemptee-1 has its rep pods Running (the e2e passes these waits
    before the first eviction lands); after that, at least rep/2 Running each, exactly as the
    ungated case. (Gates are not modelled here: vscheduler reads no `spec.schedulingGates`.)"""
    cluster = fill_then_preempt(WITHOUT_ENQUEUE)
    assert cluster.pending("preemptor-1") == REP
    assert cluster.running("preemptee-1") == REP

    cluster.settle()

    assert cluster.running("preemptor-1") == REP // 2
    assert cluster.running("preemptee-1") == REP // 2


def test_a_high_priority_job_evicts_the_pods_its_anti_affinity_conflicts_with() -> None:
    """ "should preempt low priority pod with anti-affinity constraint" (enqueue removed,
    `enableTopologyAwarePreemption: true`): blocker-job (one pod per worker, 1 cpu,
    middle-priority, `app: blocker`, required away from `app: blocker` by hostname) and
    bystander-job (one pod per worker, 1 cpu, low-priority, `app: bystander`, required beside
    an `app: blocker` pod and away from `app: bystander`) leave 1.9 cpu on each worker;
    high-priority-job (three pods of 2 cpu, all required, high-priority, required away from
    `app: blocker`) fits no worker. Volcano expects its three pods Running, the four bystanders
    still Running, and exactly one blocker Running (middle-priority): each high pod evicts its
    worker's blocker, which ends the anti-affinity conflict and frees the cpu it lacks; the
    bystanders (lower priority) are not evicted, as evicting them would not end the conflict.
    The three blockers come back Pending and stay so (the high pods keep them away)."""
    cluster = KindCluster(TOPOLOGY_AWARE)
    workers = 4

    def blocker(built: PodBuilder) -> PodBuilder:
        return built.label("app", "blocker").anti_affinity(pod_term(HOST, app="blocker"))

    def bystander(built: PodBuilder) -> PodBuilder:
        built = built.label("app", "bystander").affinity(pod_term(HOST, app="blocker"))
        return built.anti_affinity(pod_term(HOST, app="bystander"))

    def preemptor(built: PodBuilder) -> PodBuilder:
        return built.label("app", "preemptor").anti_affinity(pod_term(HOST, app="blocker"))

    cluster.create(
        *vcjob(
            "blocker-job",
            replicas=workers,
            minimum=1,
            priority=MIDDLE,
            labels=PREEMPTABLE_LABELS,
            shape=blocker,
        )
    )
    cluster.settle()
    cluster.create(
        *vcjob(
            "bystander-job",
            replicas=workers,
            minimum=1,
            priority=LOW,
            labels=PREEMPTABLE_LABELS,
            shape=bystander,
        )
    )
    cluster.settle()
    assert (cluster.running("blocker-job"), cluster.running("bystander-job")) == (4, 4)
    slots = REP // workers
    cluster.create(
        *vcjob(
            "high-priority-job",
            replicas=workers - 1,
            minimum=workers - 1,
            priority=HIGH,
            millicpu=1000 * (slots - 1),
            labels=PREEMPTABLE_LABELS,
            shape=preemptor,
        )
    )
    cluster.settle()

    assert cluster.running("high-priority-job") == workers - 1
    assert cluster.running("bystander-job") == workers
    assert cluster.running("blocker-job") == 1
    assert len(cluster.evicted_of("blocker-job")) == workers - 1
    assert cluster.evicted_of("bystander-job") == []
