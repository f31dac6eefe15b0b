"""The cycle loop runs when it may and should, and hands decisions to the effects."""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading

import pytest
from prometheus_client import CollectorRegistry

from vscheduler import cycle
from vscheduler.clock import FixedClock
from vscheduler.cycle import CycleReport
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult
from vscheduler.obs.metrics import SchedulerMetrics
from vscheduler.runtime.policy import PolicyHolder
from vscheduler.runtime.scheduler import DEBOUNCE, FOLD_MAX, FOLD_RATIO, GANG_DEBOUNCE, Scheduler
from vscheduler.testing.builders import START, at, node, pod, podgroup, snapshot


class FakeCache:
    def __init__(self, snap: ClusterSnapshot) -> None:
        self.snap = snap
        self.generation = 1
        self.quiet_generation = 0
        self.gang_arrival: dt.datetime | None = None
        self.changed = threading.Event()
        self.complete = threading.Event()

    def snapshot(self) -> ClusterSnapshot:
        return self.snap


class FakeEffects:
    def __init__(self) -> None:
        self.submitted: list[CycleResult] = []
        self.streamed: list[Bind] = []

    def stream(self, bind: Bind, snapshot: ClusterSnapshot) -> None:
        self.streamed.append(bind)

    def submit(self, result: CycleResult, snapshot: ClusterSnapshot) -> None:
        self.submitted.append(result)

    def busy(self) -> bool:
        return False


class FakeObserver:
    def __init__(self) -> None:
        self.cycles: list[CycleReport] = []
        self.skips = 0
        self.failed: list[int] = []

    def observe_cycle(self, report: CycleReport) -> None:
        self.cycles.append(report)

    def observe_skip(self) -> None:
        self.skips += 1

    def observe_cycle_failed(self, pending_pods: int) -> None:
        self.failed.append(pending_pods)


def make(
    *,
    synced: bool | threading.Event = True,
    leading: list[bool] | None = None,
    period: float = 1.0,
    debounce: float = DEBOUNCE,
    gang_debounce: float = GANG_DEBOUNCE,
) -> tuple[Scheduler, FakeCache, FakeEffects, FakeObserver]:
    """A loop over a one-node, one-pod cache (`synced` an Event: the gate it waits on)."""
    cache = FakeCache(snapshot(node("n1"), pod("p1").requests(cpu="1")))
    effects, observer = FakeEffects(), FakeObserver()
    lead = leading if leading is not None else [True]
    scheduler = Scheduler(
        cache=cache,
        policy=PolicyHolder(),
        effects=effects,
        clock=FixedClock(START),
        observer=observer,
        is_synced=synced.is_set if isinstance(synced, threading.Event) else lambda: synced,
        wait_synced=synced.wait if isinstance(synced, threading.Event) else None,
        is_leading=lambda: lead[0] if len(lead) == 1 else lead.pop(0),
        period=period,
        debounce=debounce,
        gang_debounce=gang_debounce,
    )
    return scheduler, cache, effects, observer


def test_a_cycle_runs_and_its_binds_go_to_the_effects() -> None:
    scheduler, _, effects, observer = make()
    report = scheduler.run_once()
    assert report is not None
    assert [(b.pod, b.node) for b in effects.submitted[0].binds] == [("default/p1", "n1")]
    assert len(observer.cycles) == 1


def test_each_bind_is_streamed_as_it_commits_and_the_result_still_lists_it() -> None:
    scheduler, _, effects, _ = make()
    submitted_when_streamed: list[int] = []
    stream = effects.stream

    def watch(bind: Bind, snap: ClusterSnapshot) -> None:
        submitted_when_streamed.append(len(effects.submitted))
        stream(bind, snap)

    effects.stream = watch  # type: ignore[method-assign, assignment]
    scheduler.run_once()
    assert [(b.pod, b.node) for b in effects.streamed] == [("default/p1", "n1")]
    assert submitted_when_streamed == [0]  # before the cycle's result was submitted
    assert effects.submitted[0].binds == tuple(effects.streamed)


def test_no_cycle_runs_before_the_informers_have_synced() -> None:
    scheduler, _, effects, _ = make(synced=False)
    assert scheduler.run_once() is None
    assert effects.submitted == []


def test_a_cycle_is_skipped_when_nothing_changed_and_runs_again_after_a_change() -> None:
    scheduler, cache, effects, observer = make()
    scheduler.run_once()
    assert scheduler.run_once() is None
    assert observer.skips == 1
    cache.generation += 1
    assert scheduler.run_once() is not None
    assert len(effects.submitted) == 2


def test_a_replica_that_is_not_leading_does_not_schedule() -> None:
    scheduler, _, effects, _ = make(leading=[False])
    assert scheduler.run_once() is None
    assert effects.submitted == []


def test_decisions_of_a_cycle_during_which_the_lease_was_lost_are_dropped() -> None:
    scheduler, _, effects, _ = make(leading=[True, False])
    assert scheduler.run_once() is None
    assert effects.submitted == []


def test_the_loop_stops_when_asked() -> None:
    scheduler, _, effects, _ = make()
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run, args=(stop,))
    thread.start()
    stop.set()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert len(effects.submitted) <= 1


def test_while_earlier_binds_are_in_flight_a_change_wakes_the_loop_after_a_gap_as_long_as_the_last_cycle() -> (
    None
):
    from vscheduler.clock import perf_counter

    cache = FakeCache(snapshot(node("n1")))
    effects = FakeEffects()
    effects.busy = lambda: True  # type: ignore[method-assign]
    scheduler = Scheduler(
        cache=cache,
        policy=PolicyHolder(),
        effects=effects,
        clock=FixedClock(START),
        observer=FakeObserver(),
        is_synced=lambda: True,
        period=5.0,
    )
    scheduler._last_cycle_end, scheduler._last_cycle_seconds = perf_counter(), 0.4
    cache.changed.set()
    stop = threading.Event()
    started = perf_counter()
    assert scheduler._wait(stop) is True  # the change wakes it, not the 5 s period's end
    assert perf_counter() - started >= 0.3  # but only after the gap the last cycle earned
    effects.busy = lambda: False  # type: ignore[method-assign]
    scheduler._last_cycle_end = perf_counter()
    assert scheduler._wait(stop) is True  # idle: no gap at all


def test_a_change_completing_a_gang_ends_the_wait_for_the_rest_of_a_burst() -> None:
    # a burst of lone pods would wait an hour
    scheduler, cache, effects, _ = make(period=3600.0, debounce=3600.0, gang_debounce=0.0)
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run, args=(stop,))
    thread.start()
    try:
        for _ in range(1000):  # the first cycle
            if effects.submitted:
                break
            stop.wait(0.01)
        cache.generation += 1
        cache.complete.set()  # the change made a gang whole
        cache.changed.set()
        for _ in range(1000):
            if len(effects.submitted) == 2:
                break
            stop.wait(0.01)
        assert len(effects.submitted) == 2
        assert not cache.complete.is_set()  # cleared with `changed` as the cycle began
    finally:
        stop.set()
        cache.complete.set()  # let a loop still folding a burst go
        thread.join(timeout=5)
    assert not thread.is_alive()


def test_a_change_soon_after_a_cycle_waits_for_the_fold_and_one_after_a_quiet_spell_does_not() -> (
    None
):
    from vscheduler.clock import perf_counter

    scheduler, cache, effects, _ = make(period=3600.0, debounce=3600.0, gang_debounce=3600.0)
    stop = threading.Event()
    scheduler._last_cycle_end = perf_counter() - 3601.0  # quiet for longer than the fold
    thread = threading.Thread(target=scheduler.run, args=(stop,))
    thread.start()
    try:
        for _ in range(1000):  # the first cycle (nothing run yet), then the loop waits
            if effects.submitted:
                break
            stop.wait(0.01)
        cache.generation += 1
        cache.changed.set()  # a change right after the cycle: folded (for an hour)
        stop.wait(0.3)
        assert len(effects.submitted) == 1
    finally:
        stop.set()
        cache.complete.set()  # let the loop still folding go (to its gang fold, an hour too)
        thread.join(timeout=5)
    assert not thread.is_alive()
    # a change 10 s after the last cycle, with a fold of 5 s: no fold
    patient, *_ = make(debounce=5.0, gang_debounce=5.0)
    patient._last_cycle_end = perf_counter() - 10.0
    started = perf_counter()
    patient._fold(threading.Event())
    assert perf_counter() - started < 2.5


def test_the_fold_grows_with_the_cycles_duration_up_to_its_most(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scheduler, cache, _, _ = make()
    assert scheduler.fold == DEBOUNCE  # no cycle yet
    took: list[float] = []
    run_cycle = cycle.run_cycle

    def timed(*args: object, **kwargs: object) -> CycleReport:
        report = run_cycle(*args, **kwargs)  # type: ignore[arg-type]
        return dataclasses.replace(report, seconds=took.pop(0))

    monkeypatch.setattr(cycle, "run_cycle", timed)

    def cycles(*seconds: float) -> float:
        for s in seconds:
            took.append(s)
            cache.generation += 1
            assert scheduler.run_once() is not None
        return scheduler.fold

    assert cycles(0.002, 0.002) == DEBOUNCE  # quick cycles: the fold as set
    slow = cycles(*[0.02] * 20)  # cycles ten times as long: their mean, times the ratio
    assert slow == pytest.approx(FOLD_RATIO * 0.02, rel=0.01)
    assert cycles(1.0) == FOLD_MAX  # one cycle of a second: the fold at its most
    assert DEBOUNCE < slow < FOLD_MAX


def test_a_quiet_change_runs_a_cycle_only_once_the_quiet_period_has_passed() -> None:
    cache = FakeCache(snapshot(node("n1")))
    effects, observer = FakeEffects(), FakeObserver()

    def make_loop(quiet_period: float) -> Scheduler:
        return Scheduler(
            cache=cache,
            policy=PolicyHolder(),
            effects=effects,
            clock=FixedClock(START),
            observer=observer,
            is_synced=lambda: True,
            quiet_period=quiet_period,
        )

    patient = make_loop(3600.0)
    assert patient.run_once() is not None
    cache.quiet_generation += 1
    assert patient.run_once() is None  # a placed pod now running: no cycle yet
    cache.generation += 1
    assert patient.run_once() is not None  # any other change: a cycle at once
    eager = make_loop(0.0)
    assert eager.run_once() is not None
    cache.quiet_generation += 1
    assert eager.run_once() is not None  # the quiet period has passed
    assert eager.run_once() is None  # and nothing changed since


def test_a_gang_that_stopped_short_gets_a_cycle_once_the_arrival_grace_has_passed() -> None:
    """A pod of a gang short of its minMember is a quiet change (no cycle is woken for it);
    the loop still runs one once the arrival grace has passed since, quiet period or not, so
    the gang's pending messages come a second after its last pod, as pending.md says."""
    cache = FakeCache(snapshot(node("n1")))
    clock = FixedClock(START)
    loop = Scheduler(
        cache=cache,
        policy=PolicyHolder(),
        effects=FakeEffects(),
        clock=clock,
        observer=FakeObserver(),
        is_synced=lambda: True,
        quiet_period=3600.0,
        arrival_grace=1.0,
    )
    assert loop.run_once() is not None
    cache.quiet_generation += 1
    cache.gang_arrival = clock.now()
    clock.advance(0.5)
    assert loop.run_once() is None  # the gang may still grow
    clock.advance(0.5)
    assert loop.run_once() is not None  # it did not: its messages fall due
    clock.advance(5.0)
    assert loop.run_once() is None  # that arrival has been seen
    cache.quiet_generation += 1
    cache.gang_arrival = clock.now()
    clock.advance(1.0)
    assert loop.run_once() is not None  # another pod, another wait


def _raise(*_args: object, **_kwargs: object) -> CycleReport:
    raise RuntimeError("a bug in an action")


def test_a_cycle_that_raises_is_reported_with_its_pending_pods_and_nothing_is_submitted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scheduler, _, effects, observer = make()
    monkeypatch.setattr(cycle, "run_cycle", _raise)
    with pytest.raises(RuntimeError, match="a bug in an action"):
        scheduler.run_once()
    assert observer.failed == [1]
    assert observer.cycles == []
    assert effects.submitted == []


def test_a_snapshot_that_raises_is_reported_as_a_failed_cycle_with_no_pending_pods() -> None:
    scheduler, cache, _, observer = make()
    cache.snapshot = _raise  # type: ignore[assignment,method-assign]
    with pytest.raises(RuntimeError):
        scheduler.run_once()
    assert observer.failed == [0]


def test_a_failed_cycle_is_tried_again_at_the_next_turn_even_if_nothing_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scheduler, _, effects, observer = make()
    with monkeypatch.context() as patched:
        patched.setattr(cycle, "run_cycle", _raise)
        with pytest.raises(RuntimeError):
            scheduler.run_once()
    assert scheduler.run_once() is not None
    assert (observer.failed, len(effects.submitted), observer.skips) == ([1], 1, 0)


def test_the_loop_counts_a_failed_cycle_as_an_error_cycle_and_its_pods_as_error_attempts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registry = CollectorRegistry()
    cache = FakeCache(snapshot(node("n1"), pod("p1"), pod("p2"), pod("p3").on("n1")))
    stop = threading.Event()

    def fail_then_stop(*_args: object, **_kwargs: object) -> CycleReport:
        stop.set()
        raise RuntimeError("a bug in an action")

    monkeypatch.setattr(cycle, "run_cycle", fail_then_stop)
    scheduler = Scheduler(
        cache=cache,
        policy=PolicyHolder(),
        effects=FakeEffects(),
        clock=FixedClock(START),
        observer=SchedulerMetrics(registry),
        is_synced=lambda: True,
    )
    scheduler.run(stop)  # logs the failure and goes on (here: to the stop)
    counted = registry.get_sample_value
    assert counted("vscheduler_cycles_total", {"result": "error"}) == 1
    assert counted("vscheduler_cycles_total", {"result": "success"}) == 0
    assert counted("vscheduler_schedule_attempts_total", {"result": "error"}) == 2


def test_a_failed_cycle_counts_as_the_last_one_for_the_fold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cycle that raises folds the next one as a cycle that ran does: failing cycles under a
    stream of changes come once per fold, not back to back."""
    from vscheduler.clock import perf_counter

    scheduler, *_ = make()
    stop = threading.Event()

    def fail_then_stop(*_args: object, **_kwargs: object) -> CycleReport:
        stop.set()
        raise RuntimeError("a bug in an action")

    monkeypatch.setattr(cycle, "run_cycle", fail_then_stop)
    started = perf_counter()
    scheduler.run(stop)
    assert scheduler._last_cycle_end >= started


def test_the_first_cycle_follows_the_first_lists_without_a_fold() -> None:
    # a change would wait an hour; the lists coming in do not
    synced = threading.Event()
    scheduler, cache, effects, _ = make(synced=synced, period=3600.0, debounce=3600.0)
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run, args=(stop,))
    cache.changed.set()  # the lists of the kinds synced so far
    thread.start()
    try:
        stop.wait(0.3)
        assert effects.submitted == []  # a kind still listing: no cycle
        synced.set()
        for _ in range(1000):
            if effects.submitted:
                break
            stop.wait(0.01)
        assert len(effects.submitted) == 1
    finally:
        stop.set()
        thread.join(timeout=5)
    assert not thread.is_alive()


GANG = ["default/g-0", "default/g-1"]


def gang_arriving() -> ClusterSnapshot:
    """Two pods of a PodGroup of minMember 3, created half a second before `at(10)`."""
    members = [pod(p.partition("/")[2]).group("g").created(9.5) for p in GANG]
    return snapshot(node("n1"), podgroup("g").min_member(3), *members, taken_at=at(10))


def test_the_loop_runs_a_cycle_when_held_back_messages_fall_due_and_they_are_written() -> None:
    clock, effects = FixedClock(at(10)), FakeEffects()
    scheduler = Scheduler(
        cache=FakeCache(gang_arriving()),
        policy=PolicyHolder(),
        effects=effects,
        clock=clock,
        observer=FakeObserver(),
        is_synced=lambda: True,
    )
    assert scheduler.run_once() is not None
    assert effects.submitted[-1].arriving == frozenset(GANG)
    clock.advance(0.4)
    assert scheduler.run_once() is None  # nothing changed, nothing due yet
    clock.advance(0.1)
    assert scheduler.run_once() is not None  # due: a cycle although nothing changed
    assert effects.submitted[-1].arriving == frozenset()
    assert list(effects.submitted[-1].unschedulable) == GANG
    assert scheduler.run_once() is None  # and none after it


class RecordedFlag(threading.Event):
    """A change flag that is never raised and remembers each wait's timeout (returning at once)."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        return False


@pytest.mark.parametrize(("period", "waits"), [(0.3, [0.3]), (2.5, [1.0, 1.0, 0.5])])
def test_an_idle_loop_waits_out_its_period_in_slices_of_at_most_a_second(
    period: float, waits: list[float]
) -> None:
    """A period shorter than the slice is kept (not stretched to a second); a longer one is
    waited in slices, so a stop is seen within one."""
    scheduler, cache, *_ = make(period=period)
    cache.changed = RecordedFlag()

    assert scheduler._wait(threading.Event()) is False
    assert cache.changed.waits == pytest.approx(waits)


CDP_POLICY = """\
actions: "enqueue, allocate, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: cdp
"""


def test_the_loop_runs_a_cycle_when_a_victims_cooldown_ends_and_the_preemptor_gets_its_room() -> (
    None
):
    cooling = (
        pod("low")
        .group("low")
        .requests(cpu="1")
        .on("n1")
        .annotate("volcano.sh/cooldown-time", "30s")
        .scheduled(at(0))
    )
    cluster = snapshot(
        node("n1").resources(cpu="1", memory="1Gi"),
        podgroup("low").min_member(1).priority(1).inqueue(),
        cooling,
        podgroup("high").min_member(1).priority(100).inqueue(),
        pod("high").group("high").requests(cpu="1").priority(100),
    )
    clock, effects, policy = FixedClock(at(10)), FakeEffects(), PolicyHolder()
    assert policy.offer(CDP_POLICY, "test")
    scheduler = Scheduler(
        cache=FakeCache(cluster),
        policy=policy,
        effects=effects,
        clock=clock,
        observer=FakeObserver(),
        is_synced=lambda: True,
    )
    assert scheduler.run_once() is not None
    assert (effects.submitted[-1].evictions, effects.submitted[-1].revisit_at) == ((), at(30))
    clock.advance(19.9)
    assert scheduler.run_once() is None  # nothing changed, the cooldown not over
    clock.advance(0.1)
    assert scheduler.run_once() is not None  # due: a cycle although nothing changed
    assert [e.pod for e in effects.submitted[-1].evictions] == ["default/low"]
