from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, cast

import pytest

from vscheduler import catalog, cycle
from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects import executor
from vscheduler.effects.binds import BIND_BATCH, share
from vscheduler.effects.events import EVENT_BATCH
from vscheduler.effects.executor import COUNT_HOLD, EffectsExecutor
from vscheduler.effects.ports import BindRecord, EventRecord, ObjectRef
from vscheduler.effects.retry import RetryPolicy
from vscheduler.effects.status import condition_json
from vscheduler.errors import (
    ClusterError,
    ConflictError,
    DisruptionBudgetError,
    NotFoundError,
    TransientClusterError,
)
from vscheduler.informer.kinds import NODE, POD, PODGROUP
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult, Evict, PodGroupStatus
from vscheduler.model.facts import PodGroupCondition
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.testing.executors import WAIT, carry_out, running_executor, status_of
from vscheduler.testing.writers import ScriptedWriter

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


class FakeWriter(ScriptedWriter):
    """Records every call (`ScriptedWriter`), which may be scripted to fail or held."""

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        self.record("bind", f"{namespace}/{name}", uid, node)

    def evict(self, namespace: str, name: str, uid: str, *, dry_run: bool = False) -> None:
        self.record("evict", f"{namespace}/{name}", uid)

    def set_pod_condition(self, namespace: str, name: str, condition: Mapping[str, str]) -> None:
        self.record("condition", f"{namespace}/{name}", dict(condition))

    def patch_podgroup_status(
        self, namespace: str, name: str, status: Mapping[str, object]
    ) -> None:
        self.record("status", f"{namespace}/{name}", dict(status))

    def patch_queue_status(self, name: str, status: Mapping[str, object]) -> None:
        self.record("queue_status", name, dict(status))

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        self.record("event", f"{ref.kind} {ref.namespace}/{ref.name}", type_, reason, message)


def raw_pod(
    name: str, *, node: str | None = None, phase: str = "Pending", **status: Any
) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": "vscheduler", "containers": []}
    if node is not None:
        spec["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": spec,
        "status": {"phase": phase, **status},
    }


def raw_node(name: str, *, unschedulable: bool = False) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": {"unschedulable": unschedulable},
        "status": {"allocatable": {"cpu": "1", "pods": "10"}},
    }


def raw_podgroup(status: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg1", "namespace": "ns", "uid": "uid-pg1"},
        "spec": {"minMember": 2},
        "status": status,
    }


@pytest.fixture(autouse=True)
def _events_go_when_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """Events go as soon as a worker takes them: these tests hold and release the writer's
    sends to order them. The gather's own tests (`test_scheduled_events_*_gather*`) set it."""
    monkeypatch.setattr(executor, "EVENT_GATHER", 0.0)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def cache(clock: FixedClock) -> SchedulerCache:
    cache = SchedulerCache(clock=clock)
    cache.replace(NODE, [raw_node("n1")])
    cache.replace(POD, [raw_pod("p1"), raw_pod("p2"), raw_pod("r1", node="n1", phase="Running")])
    return cache


@pytest.fixture
def writer() -> FakeWriter:
    return FakeWriter()


@pytest.fixture
def outcomes() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def effects(
    writer: FakeWriter, cache: SchedulerCache, clock: FixedClock, outcomes: list[tuple[str, str]]
) -> Iterator[EffectsExecutor]:
    with running_executor(writer, cache, clock, outcomes, workers=4, attempts=3) as effects:
        yield effects


BIND = Bind(task_uid="uid-p1", pod="ns/p1", node="n1")
EVICT = Evict(task_uid="uid-r1", pod="ns/r1", node="n1", reason="preempt for ns/p2")


# --- binds -------------------------------------------------------------------------------------
def test_a_bind_is_assumed_before_it_is_written_and_stays_until_the_watch_confirms_it(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache, clock: FixedClock
) -> None:
    writer.hold("bind")
    effects.submit(CycleResult(binds=(BIND,)), ClusterSnapshot())
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n1")
    assert writer.entered.wait(WAIT)
    writer.release("bind")
    assert effects.drain(WAIT)
    assert writer.of("bind") == [("ns/p1", "uid-p1", "n1")]
    assert writer.of("event") == [
        ("Pod ns/p1", "Normal", "Scheduled", "Successfully assigned ns/p1 to n1")
    ]
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n1")

    cache.apply(POD, WatchEvent("MODIFIED", raw_pod("p1", node="n1")))
    clock.advance(60)  # past the TTL: only the watch's word counts now, and it agrees
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n1")


def test_a_streamed_bind_is_assumed_and_sent_at_once_and_its_cycles_submit_sends_it_no_more(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    writer.hold("bind")
    snapshot = ClusterSnapshot()
    effects.stream(BIND, snapshot)
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n1")
    assert writer.entered.wait(WAIT)  # sent before the cycle's submit
    other = Bind(task_uid="uid-p2", pod="ns/p2", node="n1")
    effects.submit(CycleResult(binds=(BIND, other)), snapshot)
    writer.release("bind")
    assert effects.drain(WAIT)
    assert sorted(writer.of("bind")) == [("ns/p1", "uid-p1", "n1"), ("ns/p2", "uid-p2", "n1")]
    effects.submit(CycleResult(binds=(BIND,)), ClusterSnapshot())  # a later cycle's is its own
    assert effects.drain(WAIT)
    assert len(writer.of("bind")) == 3


def test_binds_streamed_by_a_cycle_that_never_submitted_are_not_left_out_of_the_next_cycles(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    effects.stream(BIND, ClusterSnapshot())  # that cycle failed, or its lease was lost
    assert effects.drain(WAIT)
    cache.forget_bind("uid-p1")  # say the API server refused it: the pod is pending again
    effects.submit(CycleResult(binds=(BIND,)), ClusterSnapshot())  # the next cycle binds it
    assert effects.drain(WAIT)
    assert writer.of("bind") == [("ns/p1", "uid-p1", "n1")] * 2


@pytest.mark.parametrize("error", [ConflictError("already bound"), NotFoundError("pod gone")])
def test_a_conflicting_bind_is_forgotten_without_retry(
    effects: EffectsExecutor,
    writer: FakeWriter,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
    error: Exception,
) -> None:
    writer.fail("bind", error)
    carry_out(effects, CycleResult(binds=(BIND,)))
    assert len(writer.of("bind")) == 1
    assert writer.of("event") == []
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)
    assert outcomes == [("bind", "conflict")]


def test_a_bind_failing_transiently_is_retried_until_it_succeeds(
    effects: EffectsExecutor, writer: FakeWriter, outcomes: list[tuple[str, str]]
) -> None:
    writer.fail("bind", TransientClusterError("503"), TransientClusterError("reset"))
    carry_out(effects, CycleResult(binds=(BIND,)))
    assert len(writer.of("bind")) == 3
    assert outcomes == [("bind", "success")]


def test_a_bind_failing_past_its_retries_is_forgotten_with_a_warning(
    effects: EffectsExecutor,
    writer: FakeWriter,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
) -> None:
    writer.fail("bind", *(TransientClusterError("503 Service Unavailable") for _ in range(3)))
    carry_out(effects, CycleResult(binds=(BIND,)))
    assert len(writer.of("bind")) == 3
    assert writer.of("event") == [
        ("Pod ns/p1", "Warning", "FailedScheduling", "Binding rejected: 503 Service Unavailable")
    ]
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)
    assert outcomes == [("bind", "error")]


def test_an_unexpected_error_in_a_worker_is_contained(
    effects: EffectsExecutor,
    writer: FakeWriter,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
) -> None:
    writer.fail("bind", ValueError("bug"))
    writer.fail("event", RuntimeError("events are down"))
    carry_out(effects, CycleResult(binds=(BIND,)))
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)
    assert outcomes == [("bind", "error")]


def test_a_failing_outcome_callback_does_not_stop_the_work(
    writer: FakeWriter, cache: SchedulerCache, clock: FixedClock
) -> None:
    def broken(_action: str, _outcome: str) -> None:
        raise RuntimeError("metrics broke")

    effects = EffectsExecutor(writer, cache, clock=clock, on_outcome=broken)
    try:
        carry_out(effects, CycleResult(binds=(BIND,)))
    finally:
        effects.close()
    assert len(writer.of("event")) == 1


# --- evictions ---------------------------------------------------------------------------------
def test_an_eviction_is_assumed_and_announced(
    effects: EffectsExecutor,
    writer: FakeWriter,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
) -> None:
    carry_out(effects, CycleResult(evictions=(EVICT,)))
    assert writer.of("evict") == [("ns/r1", "uid-r1")]
    assert writer.of("event") == [
        ("Pod ns/r1", "Normal", "Evicted", "Pod is evicted, because of preempt for ns/p2")
    ]
    assert status_of(cache, "uid-r1") == (TaskStatus.RELEASING, "n1")
    assert outcomes == [("evict", "success")]


def test_an_eviction_refused_by_a_disruption_budget_is_skipped_with_an_event_and_no_retry(
    effects: EffectsExecutor,
    writer: FakeWriter,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
) -> None:
    writer.fail(
        "evict",
        DisruptionBudgetError(
            "Cannot evict pod as it would violate the pod's disruption budget.", status=429
        ),
    )
    carry_out(effects, CycleResult(evictions=(EVICT,)))
    assert len(writer.of("evict")) == 1
    assert writer.of("event") == [
        (
            "Pod ns/r1",
            "Warning",
            "EvictionBlocked",
            "Eviction (preempt for ns/p2) refused by a PodDisruptionBudget:"
            " Cannot evict pod as it would violate the pod's disruption budget.",
        )
    ]
    assert status_of(cache, "uid-r1") == (TaskStatus.RUNNING, "n1")
    assert outcomes == [("evict", "blocked")]


def test_a_victim_blocked_again_next_cycle_is_tried_once_more_without_a_second_event(
    effects: EffectsExecutor, writer: FakeWriter, clock: FixedClock
) -> None:
    refusal = "Cannot evict pod as it would violate the pod's disruption budget."
    writer.fail("evict", DisruptionBudgetError(refusal), DisruptionBudgetError(refusal))
    carry_out(effects, CycleResult(evictions=(EVICT,)))
    carry_out(effects, CycleResult(evictions=(EVICT,)))
    assert (len(writer.of("evict")), len(writer.of("event"))) == (2, 1)
    clock.advance(31)
    writer.fail("evict", DisruptionBudgetError(refusal))
    carry_out(effects, CycleResult(evictions=(EVICT,)))
    assert len(writer.of("event")) == 2


def test_an_eviction_of_a_pod_already_gone_is_dropped(
    effects: EffectsExecutor,
    writer: FakeWriter,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
) -> None:
    writer.fail("evict", NotFoundError("gone"))
    carry_out(effects, CycleResult(evictions=(EVICT,)))
    assert (writer.of("event"), outcomes) == ([], [("evict", "conflict")])
    assert status_of(cache, "uid-r1") == (TaskStatus.RUNNING, "n1")


# --- pod conditions ----------------------------------------------------------------------------
def test_the_unschedulable_condition_is_written_once_with_a_warning(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    result = CycleResult(unschedulable={"ns/p1": "0/3 nodes are available: 3 Insufficient cpu."})
    carry_out(effects, result)
    condition = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/3 nodes are available: 3 Insufficient cpu.",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    assert writer.of("condition") == [("ns/p1", condition)]
    assert writer.of("event") == [
        ("Pod ns/p1", "Warning", "FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu.")
    ]

    carry_out(effects, result)  # the watch has not shown the write yet: it is in flight
    cache.apply(POD, WatchEvent("MODIFIED", raw_pod("p1", conditions=[condition])))
    carry_out(effects, result)  # the pod carries it now
    assert len(writer.of("condition")) == 1
    assert len(writer.of("event")) == 1


WAITING = (
    "Pod ns/p1 can possibly be assigned to n1, once resource is released and minAvailable is"
    " satisfied"
)


def test_a_pipelined_pod_gets_volcanos_message_once_over_the_earlier_cycles_one(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    """A pod that preempt pipelined (it waits for its victims) says so, replacing the message an
    earlier cycle wrote; the cycles after, pipelined again on the same node, write nothing."""
    earlier = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/1 nodes are available: 1 Insufficient cpu.",
        "lastTransitionTime": "2025-12-31T23:59:00Z",
    }
    cache.apply(POD, WatchEvent("MODIFIED", raw_pod("p1", conditions=[earlier])))
    result = CycleResult(pipelined={"ns/p1": "n1"}, waiting={"ns/p1": WAITING})
    carry_out(effects, result)
    condition = {**earlier, "message": WAITING}  # still False: the transition time stays
    assert writer.of("condition") == [("ns/p1", condition)]
    assert writer.of("event") == [("Pod ns/p1", "Warning", "FailedScheduling", WAITING)]

    carry_out(effects, result)  # in flight
    cache.apply(POD, WatchEvent("MODIFIED", raw_pod("p1", conditions=[condition])))
    carry_out(effects, result)
    carry_out(effects, result)
    assert len(writer.of("condition")) == 1
    assert len(writer.of("event")) == 1


def test_a_gang_still_arriving_gets_its_condition_only_once_it_stops_arriving(
    effects: EffectsExecutor, writer: FakeWriter
) -> None:
    message = "pod group is not ready, 1 Pending, 3 minAvailable"
    carry_out(effects, CycleResult(unschedulable={"ns/p1": message}, arriving=frozenset({"ns/p1"})))
    assert (writer.of("condition"), writer.of("event")) == ([], [])
    carry_out(effects, CycleResult(unschedulable={"ns/p1": message}))
    assert [c[1]["message"] for c in writer.of("condition")] == [message]  # type: ignore[index]
    assert writer.of("event") == [("Pod ns/p1", "Warning", "FailedScheduling", message)]


def test_a_changed_message_is_written_again(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    carry_out(effects, CycleResult(unschedulable={"ns/p1": "first"}))
    carry_out(effects, CycleResult(unschedulable={"ns/p1": "second"}))
    assert [c[1]["message"] for c in writer.of("condition")] == ["first", "second"]  # type: ignore[index]


def test_a_failed_condition_write_is_tried_again_next_cycle(
    effects: EffectsExecutor, writer: FakeWriter, outcomes: list[tuple[str, str]]
) -> None:
    writer.fail("condition", NotFoundError("gone"))
    result = CycleResult(unschedulable={"ns/p1": "m"})
    carry_out(effects, result)
    carry_out(effects, result)
    assert len(writer.of("condition")) == 2
    assert outcomes == [("pod_condition", "error"), ("pod_condition", "success")]


def test_a_pod_the_cache_no_longer_holds_gets_no_condition(
    effects: EffectsExecutor, writer: FakeWriter
) -> None:
    carry_out(effects, CycleResult(unschedulable={"ns/gone": "m"}))
    assert writer.calls == []


# --- PodGroup status ---------------------------------------------------------------------------
def unschedulable(message: str, tid: str) -> PodGroupCondition:
    return PodGroupCondition(
        type="Unschedulable",
        status="True",
        reason="NotEnoughResources",
        message=message,
        transition_id=tid,
        last_transition_time="2026-01-01T00:00:00Z",
    )


def test_a_podgroup_status_is_patched_with_its_differences_and_the_events_they_call_for(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    cache.apply(PODGROUP, WatchEvent("ADDED", raw_podgroup({"phase": "Pending"})))
    status = PodGroupStatus(
        phase=PodGroupPhase.INQUEUE,
        conditions=(unschedulable("1/2 tasks in gang unschedulable", "cycle-1"),),
    )
    carry_out(effects, CycleResult(podgroups={"ns/pg1": status}))
    patch = {
        "phase": "Inqueue",
        "conditions": [
            {
                "type": "Unschedulable",
                "status": "True",
                "transitionID": "cycle-1",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
                "reason": "NotEnoughResources",
                "message": "1/2 tasks in gang unschedulable",
            }
        ],
    }
    assert writer.of("status") == [("ns/pg1", patch)]
    assert writer.of("event") == [
        ("PodGroup ns/pg1", "Warning", "Unschedulable", "1/2 tasks in gang unschedulable")
    ]

    again = PodGroupStatus(
        phase=PodGroupPhase.INQUEUE,
        conditions=(unschedulable("1/2 tasks in gang unschedulable", "cycle-2"),),
    )
    carry_out(effects, CycleResult(podgroups={"ns/pg1": again}))  # in flight: not repeated
    cache.apply(PODGROUP, WatchEvent("MODIFIED", raw_podgroup(patch)))
    carry_out(effects, CycleResult(podgroups={"ns/pg1": again}))  # only the transition id moved
    assert len(writer.of("status")) == 1
    assert len(writer.of("event")) == 1


def test_a_podgroup_that_starts_running_gets_its_counts_and_a_normal_event(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    cache.apply(PODGROUP, WatchEvent("ADDED", raw_podgroup({"phase": "Inqueue"})))
    status = PodGroupStatus(phase=PodGroupPhase.RUNNING, running=2)
    carry_out(effects, CycleResult(podgroups={"ns/pg1": status}))
    assert writer.of("status") == [("ns/pg1", {"phase": "Running", "running": 2})]
    assert writer.of("event") == [("PodGroup ns/pg1", "Normal", "Scheduled", "pod group is ready")]


def test_the_same_status_handed_again_is_written_back_when_another_writer_changed_the_podgroup(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    cache.apply(PODGROUP, WatchEvent("ADDED", raw_podgroup({"phase": "Running", "running": 2})))
    status = PodGroupStatus(phase=PodGroupPhase.RUNNING, running=2)  # a job taken unchanged
    carry_out(effects, CycleResult(podgroups={"ns/pg1": status}))
    carry_out(effects, CycleResult(podgroups={"ns/pg1": status}))
    assert writer.of("status") == []  # it matches the PodGroup as watched
    edited = raw_podgroup({"phase": "Pending", "running": 2})  # e.g. `kubectl edit --subresource`
    cache.apply(PODGROUP, WatchEvent("MODIFIED", edited))
    carry_out(effects, CycleResult(podgroups={"ns/pg1": status}))
    assert writer.of("status") == [("ns/pg1", {"phase": "Running"})]


def test_a_gangs_counts_alone_wait_while_its_pods_still_start_until_all_are_counted_or_a_while(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache, clock: FixedClock
) -> None:
    cache.apply(PODGROUP, WatchEvent("ADDED", raw_podgroup({"phase": "Inqueue"})))

    def cycle(running: int, starting: int) -> None:
        status = PodGroupStatus(phase=PodGroupPhase.RUNNING, running=running, starting=starting)
        carry_out(effects, CycleResult(podgroups={"ns/pg1": status}))
        for _, written in writer.of("status"):  # the watch shows what was written
            assert isinstance(written, dict)
            shown = raw_podgroup({"phase": "Running", "running": 0, **written})
            cache.apply(PODGROUP, WatchEvent("MODIFIED", shown))

    cycle(0, 10)
    assert writer.of("status") == [("ns/pg1", {"phase": "Running"})]  # the phase: at once
    cycle(4, 6)
    cycle(7, 3)
    assert len(writer.of("status")) == 1  # counts alone, pods still starting: held
    cycle(10, 0)
    assert writer.of("status")[1:] == [("ns/pg1", {"running": 10})]  # every pod counted
    cycle(9, 1)  # one restarted
    clock.advance(COUNT_HOLD)
    cycle(9, 1)
    assert writer.of("status")[2:] == [("ns/pg1", {"running": 9})]  # held no longer than that


def test_a_gangs_counts_wait_from_when_they_first_changed_not_from_its_last_write(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache, clock: FixedClock
) -> None:
    # the kubelet starts the pods long after the bind (kwok: 15-30 s behind in W3)
    cache.apply(PODGROUP, WatchEvent("ADDED", raw_podgroup({"phase": "Running"})))
    clock.advance(20 * COUNT_HOLD)

    def cycle(running: int, starting: int) -> None:
        status = PodGroupStatus(phase=PodGroupPhase.RUNNING, running=running, starting=starting)
        carry_out(effects, CycleResult(podgroups={"ns/pg1": status}))

    cycle(3, 7)
    clock.advance(COUNT_HOLD / 2)
    cycle(8, 2)
    assert writer.of("status") == []  # the starts are under way: one write at their end
    cycle(10, 0)
    assert writer.of("status") == [("ns/pg1", {"running": 10})]


def test_a_gang_still_arriving_has_nothing_of_its_podgroup_status_written_until_it_stops(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    cache.apply(PODGROUP, WatchEvent("ADDED", raw_podgroup({"phase": "Pending"})))
    arriving = frozenset({"ns/pg1"})
    condition = unschedulable("Not enough valid tasks for gang-scheduling, valid: 1, min: 2", "c1")
    admitted = PodGroupStatus(phase=PodGroupPhase.INQUEUE, conditions=(condition,))
    carry_out(effects, CycleResult(podgroups={"ns/pg1": admitted}, arriving_groups=arriving))
    assert writer.of("status") == []  # neither the phase nor the condition, while it arrives
    started = PodGroupStatus(phase=PodGroupPhase.RUNNING, running=0)
    carry_out(effects, CycleResult(podgroups={"ns/pg1": started}))  # it came whole and started
    assert writer.of("status") == [("ns/pg1", {"phase": "Running"})]  # Inqueue never shown
    assert writer.of("event") == [("PodGroup ns/pg1", "Normal", "Scheduled", "pod group is ready")]


def test_a_podgroup_with_no_pod_yet_has_its_phase_written_without_its_conditions_meanwhile(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    cache.apply(PODGROUP, WatchEvent("ADDED", raw_podgroup({"phase": "Pending"})))
    condition = unschedulable("Not enough valid tasks for gang-scheduling, valid: 0, min: 2", "c1")
    status = PodGroupStatus(phase=PodGroupPhase.INQUEUE, conditions=(condition,))
    arriving = frozenset({"ns/pg1"})  # a PodGroup with no pod yet

    def podless(status: PodGroupStatus) -> CycleResult:
        return CycleResult(
            podgroups={"ns/pg1": status}, arriving_groups=arriving, phased_groups=arriving
        )

    carry_out(effects, podless(status))
    assert writer.of("status") == [("ns/pg1", {"phase": "Inqueue"})]
    assert writer.of("event") == []  # no Warning moments before the gang may start whole
    grown = unschedulable("Not enough valid tasks for gang-scheduling, valid: 2, min: 3", "c2")
    later = PodGroupStatus(phase=PodGroupPhase.INQUEUE, conditions=(grown,))
    carry_out(effects, podless(later))
    assert len(writer.of("status")) == 1  # the same phase move, not yet on the watch: once
    cache.apply(PODGROUP, WatchEvent("MODIFIED", raw_podgroup({"phase": "Inqueue"})))
    carry_out(effects, CycleResult(podgroups={"ns/pg1": status}, arriving_groups=arriving))
    assert len(writer.of("status")) == 1  # its pods come now: nothing more
    carry_out(effects, CycleResult(podgroups={"ns/pg1": status}))  # it stopped short: said now
    assert writer.of("status")[1:] == [("ns/pg1", {"conditions": [condition_json(condition)]})]
    assert writer.of("event") == [
        ("PodGroup ns/pg1", "Warning", "Unschedulable", condition.message)
    ]


def test_a_gang_still_arriving_whose_phase_was_written_meanwhile_gets_no_condition_alone(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache
) -> None:
    # Cycle A moves the phase; cycle B, decided before A's write came back on the watch, wants
    # the newer count in the condition: by the time B's turn comes, only the condition differs.
    cache.apply(PODGROUP, WatchEvent("ADDED", raw_podgroup({"phase": "Pending"})))
    arriving = frozenset({"ns/pg1"})
    message = "Not enough valid tasks for gang-scheduling, valid: {}, min: 2"
    a = PodGroupStatus(
        phase=PodGroupPhase.INQUEUE, conditions=(unschedulable(message.format(0), "c1"),)
    )
    b = PodGroupStatus(
        phase=PodGroupPhase.INQUEUE, conditions=(unschedulable(message.format(1), "c2"),)
    )
    writer.hold("status")
    writer.hold("bind")
    effects.submit(
        CycleResult(podgroups={"ns/pg1": a}, arriving_groups=arriving, phased_groups=arriving),
        ClusterSnapshot(),
    )
    assert writer.entered.wait(WAIT)  # A is being written
    writer.entered.clear()
    effects.submit(
        CycleResult(podgroups={"ns/pg1": b}, arriving_groups=arriving, phased_groups=arriving),
        ClusterSnapshot(),
    )
    effects.submit(CycleResult(binds=(BIND,)), ClusterSnapshot())
    assert writer.entered.wait(WAIT)  # the bind after B came: B was queued behind A
    [(_, written)] = writer.of("status")
    assert isinstance(written, dict)
    cache.apply(PODGROUP, WatchEvent("MODIFIED", raw_podgroup(written)))  # A landed
    writer.release("status")
    writer.release("bind")
    assert effects.drain(WAIT)
    assert len(writer.of("status")) == 1
    carry_out(effects, CycleResult(podgroups={"ns/pg1": b}))  # it stopped arriving: written
    assert writer.of("status")[1:] == [
        ("ns/pg1", {"conditions": [condition_json(b.conditions[0])]})
    ]


def test_a_podgroup_gone_when_its_status_is_written_is_dropped_without_retry_or_event(
    effects: EffectsExecutor,
    writer: FakeWriter,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
) -> None:
    cache.apply(PODGROUP, WatchEvent("ADDED", raw_podgroup({"phase": "Inqueue"})))
    writer.fail("status", NotFoundError('podgroups "pg1" not found', status=404))
    status = PodGroupStatus(phase=PodGroupPhase.RUNNING, running=2)
    carry_out(effects, CycleResult(podgroups={"ns/pg1": status}))
    assert (len(writer.of("status")), writer.of("event")) == (1, [])
    assert outcomes == [("podgroup_status", "conflict")]


# --- Events in a bind backlog ------------------------------------------------------------------
def until(check: Callable[[], bool]) -> bool:
    """Whether `check()` came true within `WAIT` seconds."""
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


class HeldBinds(FakeWriter):
    """A bind waits for the gate its pod's name is given in `gates` (others return at once)."""

    def __init__(self, gates: Mapping[str, threading.Event]) -> None:
        super().__init__()
        self.gates = gates

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        super().bind(namespace, name, uid, node)
        gate = self.gates.get(name)
        if gate is not None:
            gate.wait(WAIT)


def test_scheduled_events_go_one_at_a_time_while_binds_wait_for_a_worker(
    clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(executor, "EVENT_TURN_WAIT", WAIT)
    names = [f"p{i}" for i in range(1, 9)]
    cache = SchedulerCache(clock=clock)
    cache.replace(NODE, [raw_node("n1")])
    cache.replace(POD, [raw_pod(name) for name in [*names, "p9"]])
    first, rest = threading.Event(), threading.Event()
    writer = HeldBinds({name: first if name in ("p1", "p2") else rest for name in names})
    writer.hold("event")
    effects = EffectsExecutor(writer, cache, clock=clock, workers=4)  # 2 Event workers

    def scheduled() -> int:
        return sum(1 for e in writer.of("event") if e[2] == "Scheduled")

    try:
        binds = tuple(Bind(task_uid=f"uid-{n}", pod=f"ns/{n}", node="n1") for n in names)
        effects.submit(CycleResult(binds=binds), ClusterSnapshot())
        effects.submit(CycleResult(unschedulable={"ns/p9": "no"}), ClusterSnapshot())
        assert until(lambda: bool(writer.of("condition")))  # the first submit's binds queued
        # p1..p4 hold the 4 workers and p5..p8 wait for one; p1 and p2 bound: the first
        # Event is sent, the second waits its turn
        first.set()
        assert until(lambda: scheduled() == 1)
        time.sleep(0.2)
        assert scheduled() == 1
        rest.set()  # the binds are done: the second Event goes, the first still held
        assert until(lambda: scheduled() == 2)
        writer.release("event")
        assert effects.drain(WAIT)
        sent = sorted(str(e[0]) for e in writer.of("event") if e[2] == "Scheduled")
        assert sent == [f"Pod ns/{n}" for n in names]
    finally:
        effects.close()


def test_scheduled_events_go_together_when_no_bind_waits(clock: FixedClock) -> None:
    cache = SchedulerCache(clock=clock)
    cache.replace(NODE, [raw_node("n1")])
    cache.replace(POD, [raw_pod("p1"), raw_pod("p2")])
    writer = FakeWriter()
    writer.hold("event")
    effects = EffectsExecutor(writer, cache, clock=clock, workers=4)
    try:
        binds = tuple(Bind(task_uid=f"uid-{n}", pod=f"ns/{n}", node="n1") for n in ("p1", "p2"))
        effects.submit(CycleResult(binds=binds), ClusterSnapshot())
        assert until(lambda: len(writer.of("event")) == 2)  # both at once, both held
        writer.release("event")
        assert effects.drain(WAIT)
    finally:
        effects.close()


class BatchWriter(FakeWriter):
    """`FakeWriter` that also records Events together (`EventBatchWriter`): each batch as one
    `("events", names)` call; `refuse` scripts the outcomes of the next batches' Events."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse: list[set[str]] = []

    def record_events(self, events: Sequence[EventRecord]) -> list[ClusterError | None]:
        names = tuple(f"{ref.namespace}/{ref.name}" for ref, _, reason, _ in events)
        assert all(reason == "Scheduled" for _, _, reason, _ in events)
        self.record("events", names)
        refused = self.refuse.pop(0) if self.refuse else set()
        return [ClusterError(f"{n} refused") if n in refused else None for n in names]


def _batches(writer: BatchWriter) -> list[tuple[str, ...]]:
    """The pods of each batch of Events recorded together."""
    return [cast(tuple[str, ...], call[0]) for call in writer.of("events")]


def _alone(writer: BatchWriter) -> list[str]:
    """The pods whose Scheduled Event was recorded alone."""
    return [str(e[0]).removeprefix("Pod ") for e in writer.of("event") if e[2] == "Scheduled"]


def _scheduled_names(writer: BatchWriter) -> list[str]:
    """Every pod a Scheduled Event was recorded for, alone or in a batch."""
    return sorted([*_alone(writer), *(name for batch in _batches(writer) for name in batch)])


def _held_batch_sends(
    clock: FixedClock, count: int
) -> tuple[list[str], BatchWriter, EffectsExecutor, int]:
    """`count` pods bound through an executor whose two Event workers are each held in a send
    (alone or together); every bind done. The pods' names, the writer, the executor and how
    many Events the two held sends took."""
    names = [f"p{i}" for i in range(1, count + 1)]
    cache = SchedulerCache(clock=clock)
    cache.replace(NODE, [raw_node("n1")])
    cache.replace(POD, [raw_pod(name) for name in names])
    writer = BatchWriter()
    writer.hold("event")
    writer.hold("events")
    effects = EffectsExecutor(writer, cache, clock=clock, workers=4)  # 2 Event workers
    binds = tuple(Bind(task_uid=f"uid-{n}", pod=f"ns/{n}", node="n1") for n in names)
    effects.submit(CycleResult(binds=binds), ClusterSnapshot())
    assert until(lambda: len(writer.of("bind")) == count)
    assert until(lambda: len(writer.of("event")) + len(writer.of("events")) == 2)
    taken = len(writer.of("event")) + sum(len(batch) for batch in _batches(writer))
    return names, writer, effects, taken


def test_scheduled_events_waiting_go_together_through_a_batch_writer(clock: FixedClock) -> None:
    names, writer, effects, taken = _held_batch_sends(clock, 8)
    try:
        writer.release("event")
        writer.release("events")
        assert effects.drain(WAIT)
    finally:
        effects.close()
    assert _scheduled_names(writer) == [f"ns/{n}" for n in names]  # each once
    # the two held sends took `taken`; the rest waited and went together (in one more send,
    # unless the held sends' gates gave way after WAIT on a loaded machine)
    assert taken == 8 or len(_alone(writer)) + len(_batches(writer)) < 8


def _stream_binds(effects: EffectsExecutor, writer: BatchWriter, names: Sequence[str]) -> None:
    """Each pod's bind submitted in a cycle of its own once the one before is bound (no bind
    waits for a worker: the Events are not in a backlog's turn)."""
    for name in names:
        bound = len(writer.of("bind"))
        bind = Bind(task_uid=f"uid-{name}", pod=f"ns/{name}", node="n1")
        effects.submit(CycleResult(binds=(bind,)), ClusterSnapshot())
        assert until(lambda: len(writer.of("bind")) > bound)  # noqa: B023 (waited for here)


def test_scheduled_events_of_a_stream_gather_and_go_together(
    clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(executor, "EVENT_GATHER", 2.0)
    names = ["p1", "p2", "p3"]
    writer = BatchWriter()
    effects = EffectsExecutor(writer, _bind_cache(clock, names), clock=clock, workers=4)
    try:
        _stream_binds(effects, writer, names[:1])
        time.sleep(0.2)  # p1's Event had a free worker for a while: it could have gone alone
        _stream_binds(effects, writer, names[1:])
        assert effects.drain(WAIT)
    finally:
        effects.close()
    # the first waited for the others (its gather outlasts the two binds after it)
    assert _batches(writer) == [("ns/p1", "ns/p2", "ns/p3")]
    assert _alone(writer) == []


def test_scheduled_events_gather_no_longer_than_a_full_batch(
    clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(executor, "EVENT_GATHER", 3600.0)
    names = [f"p{i}" for i in range(1, EVENT_BATCH + 1)]
    writer = BatchWriter()
    effects = EffectsExecutor(writer, _bind_cache(clock, names), clock=clock, workers=4)
    try:
        _stream_binds(effects, writer, names)
        assert until(lambda: len(writer.of("events")) == 1)  # full: it went, no hour waited
    finally:
        effects.close()
    assert _batches(writer) == [tuple(f"ns/{n}" for n in names)]


def test_scheduled_events_gathering_go_at_once_when_the_executor_shuts_down(
    clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(executor, "EVENT_GATHER", 3600.0)
    names = ["p1", "p2"]
    writer = BatchWriter()
    effects = EffectsExecutor(writer, _bind_cache(clock, names), clock=clock, workers=4)
    stopped_when_sent: list[bool] = []
    record_events = writer.record_events

    def recording(events: Sequence[EventRecord]) -> list[ClusterError | None]:
        stopped_when_sent.append(effects._stop.is_set())
        return record_events(events)

    writer.record_events = recording  # type: ignore[method-assign]
    _stream_binds(effects, writer, names)
    report = effects.shutdown(WAIT)  # the gather gives way to the shutdown's drain
    assert report == {}
    assert _batches(writer) == [("ns/p1", "ns/p2")]
    assert stopped_when_sent == [False]  # sent in the drain, not when the grace ran out


def test_a_podgroups_scheduled_event_goes_with_its_pods_scheduled_events(
    clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(executor, "EVENT_GATHER", 2.0)
    cache = _bind_cache(clock, ["p1", "p2"])
    cache.apply(PODGROUP, WatchEvent("ADDED", raw_podgroup({"phase": "Inqueue"})))
    writer = BatchWriter()
    effects = EffectsExecutor(writer, cache, clock=clock, workers=4)
    running = PodGroupStatus(phase=PodGroupPhase.RUNNING, running=0)
    binds = tuple(Bind(task_uid=f"uid-{n}", pod=f"ns/{n}", node="n1") for n in ("p1", "p2"))
    try:
        effects.submit(CycleResult(binds=binds, podgroups={"ns/pg1": running}), ClusterSnapshot())
        assert effects.drain(WAIT)
    finally:
        effects.close()
    assert writer.of("status") == [("ns/pg1", {"phase": "Running"})]
    assert [sorted(batch) for batch in _batches(writer)] == [["ns/p1", "ns/p2", "ns/pg1"]]
    assert writer.of("event") == []


def test_an_event_a_batch_could_not_record_is_sent_again_alone(clock: FixedClock) -> None:
    cache = SchedulerCache(clock=clock)
    cache.replace(NODE, [raw_node("n1")])
    cache.replace(POD, [raw_pod(f"p{i}") for i in range(1, 5)])
    writer = BatchWriter()
    writer.refuse = [{"ns/p2", "ns/p3"}] * 4
    writer.hold("event")  # the first Event sent alone holds a worker: the rest gather
    effects = EffectsExecutor(writer, cache, clock=clock, workers=4)
    try:
        binds = tuple(Bind(task_uid=f"uid-p{i}", pod=f"ns/p{i}", node="n1") for i in range(1, 5))
        effects.submit(CycleResult(binds=binds), ClusterSnapshot())
        assert until(lambda: len(writer.of("bind")) == 4)
        writer.release("event")
        assert effects.drain(WAIT)
    finally:
        effects.close()
    together = {name for batch in _batches(writer) for name in batch}
    assert together & {"ns/p2", "ns/p3"}  # some refused in a batch
    assert together & {"ns/p2", "ns/p3"} <= set(_alone(writer))  # each then sent alone
    assert set(_alone(writer)) | together == {f"ns/p{i}" for i in range(1, 5)}


def _shutdown_releasing_on_stop(
    effects: EffectsExecutor, writer: ScriptedWriter, *held: str
) -> dict[str, int]:
    """`effects.shutdown(0)`'s report, the `held` writes released once the executor stops
    (the sends they hold then end, as a shutdown cuts them short)."""

    def release_on_stop() -> None:
        effects._stop.wait(WAIT)
        for method in held:
            writer.release(method)

    releaser = threading.Thread(target=release_on_stop)
    releaser.start()
    report = effects.shutdown(0)
    releaser.join(WAIT)
    return report


def test_a_shutdown_counts_the_scheduled_events_left_waiting_as_not_sent(
    clock: FixedClock,
) -> None:
    _, writer, effects, taken = _held_batch_sends(clock, 6)

    report = _shutdown_releasing_on_stop(effects, writer, "event", "events")
    # each Event either recorded or counted as not sent (the held sends' gates give way after
    # WAIT on a loaded machine, so how many the held sends took is not fixed)
    names = _scheduled_names(writer)
    assert len(set(names)) == len(names) >= taken  # none twice
    assert report == ({"Events": 6 - len(names)} if len(names) < 6 else {})


class HeldBindsBatchWriter(HeldBinds, BatchWriter):
    """`HeldBinds` that also records Events together."""

    def __init__(self, gates: Mapping[str, threading.Event]) -> None:
        HeldBinds.__init__(self, gates)
        self.refuse = []


def test_in_a_bind_backlog_scheduled_events_go_one_at_a_time_even_through_a_batch_writer(
    clock: FixedClock,
) -> None:
    names = [f"p{i}" for i in range(1, 9)]
    cache = SchedulerCache(clock=clock)
    cache.replace(NODE, [raw_node("n1")])
    cache.replace(POD, [raw_pod(name) for name in [*names, "p9"]])
    first, rest = threading.Event(), threading.Event()
    writer = HeldBindsBatchWriter({name: first if name in ("p1", "p2") else rest for name in names})
    effects = EffectsExecutor(writer, cache, clock=clock, workers=4)
    try:
        binds = tuple(Bind(task_uid=f"uid-{n}", pod=f"ns/{n}", node="n1") for n in names)
        effects.submit(CycleResult(binds=binds), ClusterSnapshot())
        effects.submit(CycleResult(unschedulable={"ns/p9": "no"}), ClusterSnapshot())
        assert until(lambda: bool(writer.of("condition")))  # the first submit's binds queued
        first.set()  # p1 and p2 bound while p5..p8 wait for a worker: their Events go alone
        assert until(lambda: len(_alone(writer)) == 2)
        assert _batches(writer) == []
        rest.set()  # the backlog is gone: the rest may go together
        assert effects.drain(WAIT)
    finally:
        effects.close()
    assert _scheduled_names(writer) == [f"ns/{n}" for n in names]


class BindsTogether(FakeWriter):
    """`FakeWriter` that also binds several pods at once (`BindBatchWriter`): each batch as one
    `("binds", names)` call. `refused` gives a pod's error in a batch, `alone` its error when
    bound alone (each used once)."""

    def __init__(self) -> None:
        super().__init__()
        self.refused: dict[str, Exception] = {}
        self.alone: dict[str, Exception] = {}

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        super().bind(namespace, name, uid, node)
        error = self.alone.pop(f"{namespace}/{name}", None)
        if error is not None:
            raise error

    def bind_many(self, binds: Sequence[BindRecord]) -> list[ClusterError | None]:
        names = tuple(f"{ns}/{name}" for ns, name, _, _ in binds)
        self.record("binds", names)
        return [cast(ClusterError | None, self.refused.pop(n, None)) for n in names]


def _bound_names(writer: BindsTogether) -> list[str]:
    """Every pod a Binding was written for, alone or in a batch, sorted."""
    together = [name for call in writer.of("binds") for name in cast(tuple[str, ...], call[0])]
    return sorted([*(str(call[0]) for call in writer.of("bind")), *together])


def _queued_behind_a_held_bind(
    effects: EffectsExecutor, writer: BindsTogether, names: Sequence[str]
) -> None:
    """`p0` bound alone and held on the executor's one worker, then `names` queued behind it."""
    writer.hold("bind")
    p0 = Bind(task_uid="uid-p0", pod="ns/p0", node="n1")
    effects.submit(CycleResult(binds=(p0,)), ClusterSnapshot())
    assert writer.entered.wait(WAIT)
    binds = tuple(Bind(task_uid=f"uid-{n}", pod=f"ns/{n}", node="n1") for n in names)
    effects.submit(CycleResult(binds=binds), ClusterSnapshot())
    assert until(lambda: effects._pending["binds"] == 1 + len(names))


def _bind_cache(clock: FixedClock, names: Sequence[str]) -> SchedulerCache:
    cache = SchedulerCache(clock=clock)
    cache.replace(NODE, [raw_node("n1")])
    cache.replace(POD, [raw_pod(name) for name in ["p0", *names]])
    return cache


def _batch_after_a_held_bind(
    clock: FixedClock,
    writer: BindsTogether,
    names: Sequence[str],
    meanwhile: Callable[[SchedulerCache], object] = lambda _: None,
) -> tuple[SchedulerCache, list[tuple[str, str]]]:
    """`p0` bound alone and held on an executor's one worker while `names` queue behind it,
    `meanwhile(cache)`, then the hold released and every write done: the cache and the
    outcomes."""
    cache = _bind_cache(clock, names)
    outcomes: list[tuple[str, str]] = []
    with running_executor(writer, cache, clock, outcomes, workers=1, attempts=3) as effects:
        _queued_behind_a_held_bind(effects, writer, names)
        meanwhile(cache)
        writer.release("bind")
        assert effects.drain(WAIT)
    return cache, outcomes


def test_binds_waiting_for_a_worker_go_together_through_a_batch_writer(
    clock: FixedClock,
) -> None:
    names = [f"p{i}" for i in range(1, 7)]
    writer = BindsTogether()
    cache, outcomes = _batch_after_a_held_bind(clock, writer, names)
    assert writer.of("bind") == [("ns/p0", "uid-p0", "n1")]
    assert writer.of("binds") == [(tuple(f"ns/{n}" for n in names),)]  # the rest at once
    assert outcomes.count(("bind", "success")) == 7
    for name in ["p0", *names]:
        assert status_of(cache, f"uid-{name}") == (TaskStatus.BOUND, "n1")
    scheduled = sorted(str(e[0]) for e in writer.of("event") if e[2] == "Scheduled")
    assert scheduled == [f"Pod ns/{n}" for n in ["p0", *names]]


@pytest.mark.parametrize(
    ("waiting", "workers", "taken"),
    [(1, 16, 1), (10, 16, 1), (16, 16, 1), (17, 16, 2), (100, 16, 7), (10_000, 16, 16), (6, 1, 6)],
)
def test_a_call_takes_an_even_share_of_the_binds_waiting_so_few_go_alone_at_once(
    waiting: int, workers: int, taken: int
) -> None:
    """As many binds waiting as workers (a gang of ten): each alone, on its own connection,
    answered at once; a backlog: batches, at most `BIND_BATCH`."""
    assert share(waiting, workers, BIND_BATCH) == taken


def test_a_bind_a_batch_could_not_make_is_dropped_on_a_conflict_else_sent_again_alone(
    clock: FixedClock,
) -> None:
    names = [f"p{i}" for i in range(1, 6)]
    writer = BindsTogether()
    writer.refused = {
        "ns/p2": ConflictError("409 already bound"),
        "ns/p3": TransientClusterError("503"),
        "ns/p4": TransientClusterError("connection reset", maybe_applied=True),
    }
    writer.alone = {"ns/p4": ConflictError("409 already bound")}  # most likely our own batch
    cache, outcomes = _batch_after_a_held_bind(clock, writer, names)
    assert writer.of("binds") == [(tuple(f"ns/{n}" for n in names),)]
    assert [call[0] for call in writer.of("bind")] == ["ns/p0", "ns/p3", "ns/p4"]
    assert sorted(outcomes) == sorted(
        [("bind", "success")] * 4 + [("bind", "conflict"), ("bind", "unconfirmed")]
    )
    assert status_of(cache, "uid-p2") == (TaskStatus.PENDING, None)  # placed again next cycle
    assert status_of(cache, "uid-p4") == (TaskStatus.BOUND, "n1")  # until the watch tells
    scheduled = sorted(str(e[0]) for e in writer.of("event") if e[2] == "Scheduled")
    assert scheduled == [f"Pod ns/{n}" for n in ("p0", "p1", "p3", "p5")]


def test_a_bind_whose_decision_went_stale_while_it_waited_is_left_out_of_the_batch(
    clock: FixedClock,
) -> None:
    writer = BindsTogether()
    _, outcomes = _batch_after_a_held_bind(
        clock,
        writer,
        ["p1", "p2", "p3"],
        lambda cache: cache.apply(POD, WatchEvent("DELETED", raw_pod("p2"))),
    )
    assert writer.of("binds") == [(("ns/p1", "ns/p3"),)]
    assert _bound_names(writer) == ["ns/p0", "ns/p1", "ns/p3"]
    assert outcomes.count(("bind", "dropped")) == 1


def _held_executor(
    clock: FixedClock, names: Sequence[str]
) -> tuple[BindsTogether, EffectsExecutor]:
    """A batch writer and its one-worker executor (to be shut down by the test), `p0` held
    in its send and `names` queued behind it."""
    writer = BindsTogether()
    effects = EffectsExecutor(writer, _bind_cache(clock, names), clock=clock, workers=1)
    _queued_behind_a_held_bind(effects, writer, names)
    return writer, effects


def test_while_a_shutdown_drains_the_binds_go_one_at_a_time(clock: FixedClock) -> None:
    """A batch in flight when the grace ends would hold the exit for all its binds."""
    names = [f"p{i}" for i in range(1, 5)]
    writer, effects = _held_executor(clock, names)
    report: dict[str, int] = {}
    stopper = threading.Thread(target=lambda: report.update(effects.shutdown(WAIT)))
    stopper.start()
    assert until(lambda: effects._draining)
    writer.release("bind")
    stopper.join(2 * WAIT)
    assert writer.of("binds") == []
    assert _bound_names(writer) == [f"ns/{n}" for n in ["p0", *names]]
    assert "binds" not in report


def test_a_shutdown_counts_the_binds_left_waiting_as_not_sent(clock: FixedClock) -> None:
    names = [f"p{i}" for i in range(1, 5)]
    writer, effects = _held_executor(clock, names)

    report = _shutdown_releasing_on_stop(effects, writer, "bind")
    bound = _bound_names(writer)
    assert len(set(bound)) == len(bound)  # none twice
    assert report.get("binds", 0) == 5 - len(bound)  # each bound or counted as not sent
    assert "ns/p0" in bound


# --- drain and close -----------------------------------------------------------------
def test_drain_waits_for_work_in_flight_and_says_when_it_timed_out(
    effects: EffectsExecutor, writer: FakeWriter
) -> None:
    writer.hold("bind")
    effects.submit(CycleResult(binds=(BIND,)), ClusterSnapshot())
    assert writer.entered.wait(WAIT)
    assert effects.drain(0.01) is False
    writer.release("bind")
    assert effects.drain(WAIT) is True


def test_close_cuts_a_backoff_short_and_later_submits_do_nothing(
    writer: FakeWriter, cache: SchedulerCache, clock: FixedClock
) -> None:
    effects = EffectsExecutor(
        writer, cache, clock=clock, retry=RetryPolicy(initial_backoff=60, max_backoff=60)
    )
    writer.fail("bind", *(TransientClusterError("503") for _ in range(5)))
    effects.submit(CycleResult(binds=(BIND,)), ClusterSnapshot())
    while not writer.of("bind"):
        writer.entered.wait(0.01)
    effects.close()
    assert len(writer.of("bind")) == 1
    assert writer.of("event") == []
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)

    effects.submit(
        CycleResult(binds=(Bind(task_uid="uid-p2", pod="ns/p2", node="n1"),)), ClusterSnapshot()
    )
    assert status_of(cache, "uid-p2") == (TaskStatus.PENDING, None)
    assert len(writer.of("bind")) == 1


# --- with the real cycle -----------------------------------------------------------------------
def test_cycles_on_the_cache_bind_each_pod_once_and_report_the_rest_once(
    effects: EffectsExecutor, writer: FakeWriter, cache: SchedulerCache, clock: FixedClock
) -> None:
    node = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1", "pods": "10"}}}
    cache.replace(NODE, [node])
    big = raw_pod("big")
    big["spec"]["containers"] = [{"name": "c", "resources": {"requests": {"cpu": "8"}}}]
    cache.replace(POD, [raw_pod("p1"), big])
    pipeline = catalog.load_pipeline()
    for _ in range(3):
        report = cycle.run_cycle(cache.snapshot(), pipeline, clock=clock)
        carry_out(effects, report.result)
    assert writer.of("bind") == [("ns/p1", "uid-p1", "n1")]
    assert [c[0] for c in writer.of("condition")] == ["ns/big"]
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n1")


def test_a_replica_that_stopped_leading_sends_none_of_its_queued_binds(
    writer: FakeWriter, cache: SchedulerCache, clock: FixedClock
) -> None:
    leading = [True]
    outcomes: list[tuple[str, str]] = []
    effects = EffectsExecutor(
        writer,
        cache,
        clock=clock,
        workers=2,
        on_outcome=lambda action, outcome: outcomes.append((action, outcome)),
        retry=RetryPolicy(initial_backoff=0, max_attempts=3),
        may_write=lambda: leading[0],
    )
    try:
        leading[0] = False
        carry_out(effects, CycleResult(binds=(BIND,), evictions=(EVICT,)))
        assert writer.of("bind") == []
        assert writer.of("evict") == []
        assert writer.of("event") == []
        assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)
        assert sorted(outcomes) == [("bind", "dropped"), ("evict", "dropped")]
    finally:
        effects.close()
