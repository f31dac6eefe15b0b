"""A gang still being created (fewer pods than its minMember, the newest created under the
arrival grace ago) keeps its members' pending messages back: the decision lists them as
unschedulable with their message, `arriving` names them so the effects write nothing yet, and
`revisit_at` is when they fall due; the live loop runs a cycle then even if nothing changed,
and that cycle's result no longer holds them back."""

from __future__ import annotations

import threading

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult
from vscheduler.runtime.policy import PolicyHolder
from vscheduler.runtime.scheduler import Scheduler
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
    assert result.revisit_at == at(10.5)
    assert result.binds == ()


def test_a_gang_that_stopped_growing_whole_or_not_or_with_no_grace_holds_nothing_back() -> None:
    stopped = decide(gang(created=8.5), grace=1.0)
    whole_but_too_big = decide(gang(created=9.5, members=3, cpu="3"), grace=1.0)
    no_grace = decide(gang(created=9.5), grace=0.0)
    for result in (stopped, whole_but_too_big, no_grace):
        assert result.unschedulable
        assert (result.arriving, result.revisit_at) == (frozenset(), None)


class _Cache:
    def __init__(self, snap: ClusterSnapshot) -> None:
        self.snap, self.generation, self.quiet_generation = snap, 1, 0
        self.changed, self.complete = threading.Event(), threading.Event()

    def snapshot(self) -> ClusterSnapshot:
        return self.snap


class _Effects:
    def __init__(self) -> None:
        self.submitted: list[CycleResult] = []

    def stream(self, bind: Bind, snapshot: ClusterSnapshot) -> None:
        raise AssertionError("nothing binds here")

    def submit(self, result: CycleResult, snapshot: ClusterSnapshot) -> None:
        self.submitted.append(result)

    def busy(self) -> bool:
        return False


class _Observer:
    def observe_cycle(self, report: object) -> None:
        pass

    def observe_skip(self) -> None:
        pass

    def observe_cycle_failed(self, pending_pods: int) -> None:
        pass


def test_the_loop_runs_a_cycle_when_held_back_messages_fall_due_and_they_are_written() -> None:
    clock, effects = FixedClock(NOW), _Effects()
    scheduler = Scheduler(
        cache=_Cache(gang(created=9.5)),
        policy=PolicyHolder(),
        effects=effects,
        clock=clock,
        observer=_Observer(),
        is_synced=lambda: True,
    )
    assert scheduler.run_once() is not None
    assert effects.submitted[-1].arriving == frozenset(MEMBERS)
    clock.advance(0.4)
    assert scheduler.run_once() is None  # nothing changed, nothing due yet
    clock.advance(0.1)
    assert scheduler.run_once() is not None  # due: a cycle although nothing changed
    assert effects.submitted[-1].arriving == frozenset()
    assert list(effects.submitted[-1].unschedulable) == MEMBERS
    assert scheduler.run_once() is None  # and none after it
