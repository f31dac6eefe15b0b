"""A gang still being created (fewer pods than its minMember, the newest created under the
arrival grace ago) keeps its members' pending messages back: the decision lists them as
unschedulable with their message, `arriving` names them so the effects write nothing yet, and
`revisit_at` is when they fall due (the live loop then runs a cycle even if nothing changed:
`test_scheduler_loop.py`)."""

from __future__ import annotations

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import CycleResult
from vscheduler.testing.builders import at, node, pod, podgroup, snapshot

NOW = at(10)
MEMBERS = ["default/g-0", "default/g-1"]


def gang(created: float, members: int = 2, cpu: str = "1") -> ClusterSnapshot:
    pods = [pod(f"g-{i}").group("g").requests(cpu=cpu).created(created) for i in range(members)]
    return snapshot(
        node("n1").resources(cpu="4", memory="8Gi"),
        podgroup("g").min_member(3),
        *pods,
        taken_at=NOW,
    )


def decide(snap: ClusterSnapshot, grace: float, now: float = 10) -> CycleResult:
    pipeline = catalog.load_pipeline(None)
    return cycle.run_cycle(snap, pipeline, clock=FixedClock(at(now)), arrival_grace=grace).result


def test_members_of_a_gang_still_arriving_are_decided_but_their_messages_wait() -> None:
    result = decide(gang(created=9.5), grace=1.0)
    assert result.unschedulable == dict.fromkeys(
        MEMBERS,
        "podgroup default/g is not valid: Not enough valid tasks for gang-scheduling, "
        "valid: 2, min: 3",
    )
    assert result.arriving == frozenset(MEMBERS)
    assert result.arriving_groups == frozenset({"default/g"})
    assert result.phased_groups == frozenset()  # it has pods, no minResources: nothing written
    assert result.revisit_at == at(10.5)
    assert result.binds == ()


def test_a_whole_second_creation_time_counts_from_the_end_of_its_second() -> None:
    # creationTimestamp has whole seconds: a pod stamped 9 may have been made at 9.99.
    stamped = decide(gang(created=9.0), grace=1.0, now=10.2)
    assert stamped.arriving == frozenset(MEMBERS)
    assert stamped.revisit_at == at(11.0)
    assert decide(gang(created=8.0), grace=1.0, now=10.2).arriving == frozenset()


def test_a_gang_that_stopped_growing_whole_or_not_or_with_no_grace_holds_nothing_back() -> None:
    stopped = decide(gang(created=8.5), grace=1.0)
    whole_but_too_big = decide(gang(created=9.5, members=3, cpu="3"), grace=1.0)
    no_grace = decide(gang(created=9.5), grace=0.0)
    for result in (stopped, whole_but_too_big, no_grace):
        assert result.unschedulable
        assert (result.arriving, result.arriving_groups, result.revisit_at) == (
            frozenset(),
            frozenset(),
            None,
        )


def test_a_podgroup_with_no_pod_yet_is_arriving_for_the_grace_after_its_creation() -> None:
    # Its controller (a Volcano Job's) creates the pods once it is Inqueue: that is written.
    def empty(created: float) -> ClusterSnapshot:
        return snapshot(
            node("n1").resources(cpu="4", memory="8Gi"),
            podgroup("g").min_member(3).created(created).controlled(),
            taken_at=NOW,
        )

    young = decide(empty(created=9.5), grace=1.0)
    assert (young.arriving, young.arriving_groups, young.phased_groups, young.revisit_at) == (
        frozenset(),
        frozenset({"default/g"}),
        frozenset({"default/g"}),
        at(10.5),
    )
    stamped = decide(empty(created=9.0), grace=1.0, now=10.2)  # whole seconds: to 10.0 + 1.0
    assert (stamped.phased_groups, stamped.revisit_at) == (frozenset({"default/g"}), at(11.0))
    for result in (decide(empty(created=8.5), grace=1.0), decide(empty(9.5), grace=0.0)):
        assert (result.arriving_groups, result.phased_groups, result.revisit_at) == (
            frozenset(),
            frozenset(),
            None,
        )
        assert "default/g" in result.podgroups


def test_a_podgroup_with_no_pod_and_no_controller_has_nothing_written_for_the_grace() -> None:
    # Its creator makes its pods next (nobody waits for Inqueue): a gang that starts within
    # the grace goes Pending to Running, with one write; one that does not is written Inqueue
    # when the grace ends.
    def empty(created: float) -> ClusterSnapshot:
        return snapshot(
            node("n1").resources(cpu="4", memory="8Gi"),
            podgroup("g").min_member(3).created(created),
            taken_at=NOW,
        )

    young = decide(empty(created=9.5), grace=1.0)
    assert (young.arriving_groups, young.phased_groups, young.revisit_at) == (
        frozenset({"default/g"}),
        frozenset(),
        at(10.5),
    )
    assert young.podgroups["default/g"].phase.value == "Inqueue"  # decided, not yet written
    due = decide(empty(created=9.5), grace=1.0, now=10.6)
    assert (due.arriving_groups, due.phased_groups) == (frozenset(), frozenset())
    assert due.podgroups["default/g"].phase.value == "Inqueue"
    with_min_resources = snapshot(
        node("n1").resources(cpu="4", memory="8Gi"),
        podgroup("g").min_member(3).min_resources(cpu="3").created(9.5),
        taken_at=NOW,
    )
    assert decide(with_min_resources, grace=1.0).phased_groups == frozenset({"default/g"})


def test_a_gang_arriving_with_min_resources_has_its_phase_written_meanwhile() -> None:
    # Its written Inqueue holds its admission budget from one cycle to the next.
    snap = snapshot(
        node("n1").resources(cpu="4", memory="8Gi"),
        podgroup("g").min_member(3).min_resources(cpu="3"),
        *[pod(f"g-{i}").group("g").requests(cpu="1").created(9.5) for i in range(2)],
        taken_at=NOW,
    )
    result = decide(snap, grace=1.0)
    assert (result.arriving_groups, result.phased_groups) == (
        frozenset({"default/g"}),
        frozenset({"default/g"}),
    )
    assert result.podgroups["default/g"].phase.value == "Inqueue"
