"""enqueue admits PodGroups by overcommit and by queue capability (default policy)."""

from __future__ import annotations

from vscheduler.model.status import PodGroupPhase
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
