"""Volcano's e2e `test/e2e/schedulingbase/sla.go` ("SLA Test"), transcribed: both its It(...)s,
"sla permits job to be inqueue" and "sla adjusts job order".

The cluster, the policy (the e2e suite's `volcano-scheduler-ci.conf`: sla in the first tier,
with no global waiting time) and how a vcjob becomes a PodGroup and pods are
`vscheduler.testing.volcano_e2e`'s: four workers of 2 CPU, so `ClusterSize(oneCPU)` is 8.
`CreateJobWithPodGroup` puts the annotation `sla-waiting-time` on the Job; its controller copies
it onto the PodGroup, where sla reads it. The controller creates the pods only once the
PodGroup is Inqueue: the e2e's "Pending pods" are pods that exist and are not placed. Each cycle
is a second, the PodGroups created at the second their job is.
"""

from __future__ import annotations

from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.scenario import Outcome
from vscheduler.testing.volcano_e2e import ONE_CPU_SLOTS, Task, Timeline, VcJob, phase, placed

OVERLARGE = VcJob(
    "j1-overlarge", (Task(2 * ONE_CPU_SLOTS),), 2 * ONE_CPU_SLOTS, {"sla-waiting-time": "3s"}
)
"""Twice the cluster, all required, waiting time 3s."""


def pods(outcome: Outcome, job: VcJob) -> int:
    """How many pods of the job exist after the cycle."""
    return sum(1 for t in outcome.snapshot_after.tasks.values() if t.group_name == job.name)


def test_a_job_larger_than_the_cluster_is_admitted_once_its_waiting_time_is_over() -> None:
    """ "sla permits job to be inqueue": j1-overlarge asks twice the cluster (16 one-CPU pods,
    all required), which overcommit refuses (16 CPU > 1.2 x 10 CPU of allocatable); with
    `sla-waiting-time: 3s` Volcano expects it admitted after 3 s and its 16 pods created,
    Pending. sla's permit, in the first tier, outweighs overcommit's refusal in the second."""
    outcomes = Timeline({0: [OVERLARGE]}).play(6)

    assert [phase(o, OVERLARGE.name) for o in outcomes[:3]] == [PodGroupPhase.PENDING] * 3
    assert phase(outcomes[3], OVERLARGE.name) is PodGroupPhase.INQUEUE
    assert pods(outcomes[4], OVERLARGE) == 2 * ONE_CPU_SLOTS
    assert all(o.binds == {} for o in outcomes)
    assert placed(outcomes[-1], OVERLARGE) == []


def test_the_job_with_the_nearer_deadline_runs_first_once_the_cluster_frees_up() -> None:
    """ "sla adjusts job order": j1-overlarge is admitted after its 3 s and holds the admission
    budget with its 16 CPU; j2-slow-sla (`1h`) and then j3-fast-sla (`30m`), each the whole
    cluster (8 one-CPU pods, all required), wait. Once j1 is deleted, Volcano expects j3 to run
    its 8 pods and j2 none: j3's deadline is nearer, so sla orders it first, though it was
    created after j2."""
    slow = VcJob("j2-slow-sla", (Task(ONE_CPU_SLOTS),), ONE_CPU_SLOTS, {"sla-waiting-time": "1h"})
    fast = VcJob("j3-fast-sla", (Task(ONE_CPU_SLOTS),), ONE_CPU_SLOTS, {"sla-waiting-time": "30m"})
    timeline = Timeline({0: [OVERLARGE], 5: [slow], 6: [fast]}, deleted={8: [OVERLARGE.name]})

    outcomes = timeline.play(12)

    assert pods(outcomes[7], OVERLARGE) == 2 * ONE_CPU_SLOTS
    assert all(o.binds == {} for o in outcomes[:8])
    assert len(placed(outcomes[-1], fast)) == ONE_CPU_SLOTS
    assert placed(outcomes[-1], slow) == []
    assert phase(outcomes[-1], slow.name) is PodGroupPhase.PENDING
