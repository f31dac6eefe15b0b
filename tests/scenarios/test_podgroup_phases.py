"""The end-of-cycle PodGroup phase, Volcano's rule (framework `jobStatus`), one row per phase.

Pending: not admitted and not enough placed. Inqueue: admitted, not enough placed yet.
Running: placed (allocated, binding, bound, running, releasing) plus succeeded >= minMember.
Completed: as Running (failed tasks count as placed too), but every one of those tasks finished,
succeeded or failed. Unknown: running tasks while this
very cycle marked the gang Unschedulable. One deliberate difference: a PodGroup with
minMember 0 and no task at all stays Pending/Inqueue here (Volcano calls it Completed).
"""

from __future__ import annotations

from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.testing.builders import Item, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import run

POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: proportion
  - name: predicates
  - name: nodeorder
"""


def phase_after_one_cycle(*items: Item) -> PodGroupPhase:
    [outcome] = run(snapshot(*items), policy=POLICY)
    return outcome.result.podgroups["default/pg"].phase


def test_a_gang_the_queue_cannot_admit_stays_pending() -> None:
    phase = phase_after_one_cycle(
        node("n1").resources(cpu="2", memory="4Gi"),
        queue("default").capability(cpu="1"),
        podgroup("pg").min_member(2).min_resources(cpu="2"),
        pod("a").group("pg").requests(cpu="1"),
        pod("b").group("pg").requests(cpu="1"),
    )

    assert phase is PodGroupPhase.PENDING


def test_an_admitted_gang_that_does_not_fit_is_inqueue() -> None:
    phase = phase_after_one_cycle(
        node("n1").resources(cpu="1", memory="4Gi"),
        podgroup("pg").min_member(2),
        pod("a").group("pg").requests(cpu="1"),
        pod("b").group("pg").requests(cpu="1"),
    )

    assert phase is PodGroupPhase.INQUEUE


def test_a_gang_placed_whole_this_cycle_is_running() -> None:
    phase = phase_after_one_cycle(
        node("n1").resources(cpu="2", memory="4Gi"),
        podgroup("pg").min_member(2),
        pod("a").group("pg").requests(cpu="1"),
        pod("b").group("pg").requests(cpu="1"),
    )

    assert phase is PodGroupPhase.RUNNING


def test_a_gang_whose_placed_tasks_all_succeeded_is_completed() -> None:
    phase = phase_after_one_cycle(
        node("n1").resources(cpu="2", memory="4Gi"),
        podgroup("pg").min_member(2).inqueue(),
        pod("a").group("pg").requests(cpu="1").on("n1", TaskStatus.SUCCEEDED),
        pod("b").group("pg").requests(cpu="1").on("n1", TaskStatus.SUCCEEDED),
    )

    assert phase is PodGroupPhase.COMPLETED


def test_a_gang_whose_placed_tasks_all_failed_is_completed() -> None:
    """Volcano 9ac1c8c4f: a failed pod was placed and has finished, as a succeeded one."""
    phase = phase_after_one_cycle(
        node("n1").resources(cpu="2", memory="4Gi"),
        podgroup("pg").min_member(2).inqueue(),
        pod("a").group("pg").requests(cpu="1").on("n1", TaskStatus.FAILED),
        pod("b").group("pg").requests(cpu="1").on("n1", TaskStatus.SUCCEEDED),
    )

    assert phase is PodGroupPhase.COMPLETED


def test_succeeded_and_running_tasks_together_are_running_not_completed() -> None:
    phase = phase_after_one_cycle(
        node("n1").resources(cpu="2", memory="4Gi"),
        podgroup("pg").min_member(2).inqueue(),
        pod("a").group("pg").requests(cpu="1").on("n1", TaskStatus.SUCCEEDED),
        pod("b").group("pg").requests(cpu="1").on("n1"),
    )

    assert phase is PodGroupPhase.RUNNING


def test_running_tasks_of_a_gang_marked_unschedulable_this_cycle_make_it_unknown() -> None:
    phase = phase_after_one_cycle(
        node("n1").resources(cpu="1", memory="4Gi"),
        podgroup("pg").min_member(3).inqueue(),
        pod("a").group("pg").requests(cpu="1").on("n1"),
        pod("b").group("pg").requests(cpu="1"),
        pod("c").group("pg").requests(cpu="1"),
    )

    assert phase is PodGroupPhase.UNKNOWN


def test_an_empty_podgroup_with_min_member_zero_is_not_called_completed() -> None:
    phase = phase_after_one_cycle(
        node("n1").resources(cpu="1", memory="4Gi"),
        podgroup("pg").min_member(0).inqueue(),
    )

    assert phase is PodGroupPhase.INQUEUE
