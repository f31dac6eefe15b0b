"""enqueue admits PodGroups by overcommit and by queue capability (default policy)."""

from __future__ import annotations

from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.testing.builders import node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import Outcome, run

TWO_NODES = (
    node("n1").resources(cpu="4", memory="8Gi"),
    node("n2").resources(cpu="4", memory="8Gi"),
)


def phase(outcome: Outcome, key: str) -> PodGroupPhase:
    return outcome.result.podgroups[key].phase


# 6 of the 8 CPU are used by pods of another scheduler: 2 CPU are idle, but overcommit
# (factor 1.2) counts 8 * 1.2 - 6 = 3.6 CPU as admittable.
BUSY = (
    pod("web-1").scheduler("default-scheduler").requests(cpu="3", memory="1Gi").on("n1"),
    pod("web-2").scheduler("default-scheduler").requests(cpu="3", memory="1Gi").on("n2"),
)


def test_a_podgroup_within_the_overcommitted_idle_is_admitted() -> None:
    pg = podgroup("big").min_member(1).min_resources(cpu="3", memory="1Gi")
    outcome = run(snapshot(*TWO_NODES, *BUSY, pg, pod("big-0").group("big").requests(cpu="1")))[0]
    assert phase(outcome, "default/big") is not PodGroupPhase.PENDING
    assert outcome.binds == {"default/big-0": "n1"}


def test_a_podgroup_beyond_the_overcommit_factor_stays_pending_and_says_why() -> None:
    pg = podgroup("huge").min_member(1).min_resources(cpu="4", memory="1Gi")
    outcome = run(snapshot(*TWO_NODES, *BUSY, pg, pod("huge-0").group("huge").requests(cpu="1")))[0]
    assert phase(outcome, "default/huge") is PodGroupPhase.PENDING
    assert outcome.binds == {}
    assert "not admitted" in outcome.unschedulable["default/huge-0"]


def test_a_podgroup_over_its_queue_capability_stays_pending() -> None:
    q = queue("team").capability(cpu="2", memory="8Gi")
    pg = podgroup("job").queue("team").min_member(1).min_resources(cpu="3", memory="1Gi")
    outcome = run(snapshot(*TWO_NODES, q, pg, pod("job-0").group("job").requests(cpu="1")))[0]
    assert phase(outcome, "default/job") is PodGroupPhase.PENDING


def test_a_podgroup_without_min_resources_is_admitted() -> None:
    pg = podgroup("free").min_member(1)
    outcome = run(snapshot(*TWO_NODES, pg, pod("free-0").group("free").requests(cpu="1")))[0]
    assert phase(outcome, "default/free") is PodGroupPhase.RUNNING
    assert outcome.binds == {"default/free-0": "n1"}


def test_a_malformed_podgroup_is_not_admitted_and_its_pods_carry_the_problem() -> None:
    import dataclasses

    bad = dataclasses.replace(
        podgroup("bad").min_member(1).build(), problem="PodGroup default/bad: spec.minMember: bad"
    )
    outcome = run(snapshot(*TWO_NODES, bad, pod("bad-0").group("bad").requests(cpu="1")))[0]
    assert phase(outcome, "default/bad") is PodGroupPhase.PENDING
    assert outcome.unschedulable == {"default/bad-0": "PodGroup default/bad: spec.minMember: bad"}


def test_jobs_of_a_malformed_queue_are_told_what_is_wrong_with_it() -> None:
    import dataclasses

    broken = dataclasses.replace(queue("broken").build(), problem="Queue broken: spec.weight: 0")
    pg = podgroup("job").queue("broken").min_member(1)
    outcome = run(snapshot(*TWO_NODES, broken, pg, pod("job-0").group("job").requests(cpu="1")))[0]
    assert outcome.unschedulable == {
        "default/job-0": "queue broken of podgroup default/job is invalid: Queue broken: spec.weight: 0"
    }


def test_a_pod_without_a_podgroup_whose_queue_is_missing_is_told_of_its_annotation() -> None:
    lone = pod("lone").annotate("scheduling.volcano.sh/queue-name", "nowhere").requests(cpu="1")
    outcome = run(snapshot(*TWO_NODES, lone))[0]
    assert outcome.unschedulable == {
        "default/lone": "queue nowhere of pod default/lone "
        "(its scheduling.volcano.sh/queue-name annotation) not found"
    }


# --- Volcano's enqueue_test.go TestEnqueue, every case ------------------------------------------
# Its tiers: drf, proportion, sla (sla-waiting-time 3m), gang; the enqueue action alone; no node.
VOLCANO_TIERS = """\
actions: "enqueue"
tiers:
- plugins:
  - name: drf
  - name: proportion
  - name: sla
    arguments:
      sla-waiting-time: 3m
  - name: gang
"""
C1_C2 = (
    queue("c1").weight(1).capability(cpu="4", memory="4G"),
    queue("c2").weight(1).capability(cpu="4", memory="4G"),
)


def test_volcano_enqueue_an_inqueue_podgroup_stays_inqueue() -> None:
    """TestEnqueue "when podgroup status is inqueue"."""
    items = (
        *C1_C2,
        podgroup("pg1", "c1").queue("c1").min_member(2).inqueue(),
        pod("p1", "c1").group("pg1").requests(cpu="1", memory="1G"),
        pod("p2", "c1").group("pg1").requests(cpu="1", memory="1G"),
    )
    outcome = run(snapshot(*items), policy=VOLCANO_TIERS)[0]
    assert phase(outcome, "c1/pg1") is PodGroupPhase.INQUEUE


def test_volcano_enqueue_pending_podgroups_without_min_resources_are_admitted() -> None:
    """TestEnqueue "when podgroup status is pending"."""
    items = (
        *C1_C2,
        podgroup("pg1", "c1").queue("c1").min_member(1),
        podgroup("pg2", "c1").queue("c2").min_member(1),
        pod("p1", "c1").group("pg1").requests(cpu="3", memory="1G"),
        pod("p2", "c1").group("pg2").requests(cpu="1", memory="1G"),
    )
    outcome = run(snapshot(*items), policy=VOLCANO_TIERS)[0]
    assert phase(outcome, "c1/pg1") is PodGroupPhase.INQUEUE
    assert phase(outcome, "c1/pg2") is PodGroupPhase.INQUEUE


def test_volcano_enqueue_a_running_podgroup_stays_running() -> None:
    """TestEnqueue "when podgroup status is running"."""
    items = (
        C1_C2[0],
        podgroup("pg1", "c1").queue("c1").min_member(2).phase(PodGroupPhase.RUNNING),
        pod("p1", "c1").group("pg1").requests(cpu="1", memory="1G").status(TaskStatus.RUNNING),
        pod("p2", "c1").group("pg1").requests(cpu="1", memory="1G").status(TaskStatus.RUNNING),
    )
    outcome = run(snapshot(*items), policy=VOLCANO_TIERS)[0]
    assert phase(outcome, "c1/pg1") is PodGroupPhase.RUNNING


def test_volcano_enqueue_a_podgroup_of_a_missing_queue_is_not_admitted() -> None:
    """TestEnqueue "pggroup cannot enqueue because the specified queue is c1, but there is only
    c2" (Volcano expects no status at all; here the PodGroup stays Pending)."""
    items = (C1_C2[1], podgroup("pg1", "c1").queue("c1").min_member(0))
    outcome = run(snapshot(*items), policy=VOLCANO_TIERS)[0]
    assert phase(outcome, "c1/pg1") is PodGroupPhase.PENDING


def test_volcano_enqueue_min_resources_beyond_the_queue_capability_stay_pending() -> None:
    """TestEnqueue "pggroup cannot enqueue because queue resources are less than podgroup
    MinResources"."""
    items = (
        queue("c1").weight(1).capability(cpu="1", memory="1G"),
        podgroup("pg1", "c1").queue("c1").min_member(1).min_resources(cpu="8", memory="8G"),
    )
    outcome = run(snapshot(*items), policy=VOLCANO_TIERS)[0]
    assert phase(outcome, "c1/pg1") is PodGroupPhase.PENDING
