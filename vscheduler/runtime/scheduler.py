"""The cycle loop: snapshot -> session -> decisions -> effects, every period or on change.

`run_once` runs one cycle if it may (informers synced, leading) and should (the cache or the
policy changed since the last cycle, or `QUIET_PERIOD` passed since the last cycle and the
cache changed quietly: a placed pod now running, a bind confirmed); `run` loops until stopped:
it waits for the period or for the cache to signal a change, then folds: the cycle starts
`debounce` after the last one ended (longer where cycles take longer, `FOLD_RATIO`;
`gang_debounce`, shorter, once a gang is whole), so a burst of watch events becomes one cycle,
and a change after a quiet spell is decided at once.
Before the informers' first lists are in, it waits for them (`wait_synced`) instead, and the
first cycle follows the last list at once: a backlog waiting at start needs no fold.
Each bind goes to the carrier as its statement commits (`DecisionCarrier.stream`), so a
backlog's first binds leave while the cycle still runs; the rest of the result follows at the
cycle's end. A replica that stops leading mid-cycle drops the rest of that cycle's decisions
(the binds streamed meet the effects' fence: none leaves once the lease is lost). A cycle that
raises is reported to the observer (`observe_cycle_failed`, with the pending pods it left
unplaced) and logged; the loop goes on, and the next cycle tries again.
Every failed cycle, and every cycle that runs, is told to the `CycleHealth` (the consecutive
failures behind `/readyz`).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable
from typing import Protocol

from vscheduler import cycle
from vscheduler.clock import Clock, perf_counter
from vscheduler.cycle import CycleReport
from vscheduler.framework.session import Carried
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult
from vscheduler.model.status import TaskStatus
from vscheduler.runtime.health import CycleHealth
from vscheduler.runtime.policy import PolicyHolder

logger = logging.getLogger(__name__)
_SLICE = 1.0
"""Seconds the loop waits at a time when nothing wakes it, so a stop is noticed within a second
(the composition root also raises the cache's change flag on a stop: the loop then notices at
once). Each slice is a wakeup; 0.1 s made 10 a second of an idle scheduler (`bench.idle`)."""
QUIET_PERIOD = 5.0
"""Seconds after a cycle before changes no decision depends on (a placed pod now running) run a
cycle of their own; any other change wakes the loop at once (a cycle follows the fold)."""
DEBOUNCE = 0.06
"""Seconds from the end of a cycle before a change runs the next, so a burst of changes (pods
created one by one) becomes one cycle: every cycle opens a session over the whole cluster, so
the more pods it decides, the less each costs. A change that comes later than this after the
last cycle (a pod on a quiet cluster) runs one at once. 0.1 until the nineteenth session; with
cycles cheaper since, 0.06 (W1 ours only, three runs each in turns): p50 0.1489, 0.1437, 0.1442 s
against 0.1856, 0.1891, 0.1802 s, p99 0.2653-0.2886 s against 0.3339-0.3799 s, CPU per 1,000
pods 1.43-1.5 s against 1.263-1.36 s (kube-scheduler's ~2 s)."""
FOLD_RATIO = 8.0
"""The fold lasts at least this many times the recent cycles' mean duration (up to
`FOLD_MAX`), when that is longer than `DEBOUNCE`: a cycle's cost is mostly fixed (the session
over the whole cluster: on a slow day 11 ms for one pod and 20 ms for ten), so where cycles
take longer, on a slower machine or a larger cluster, a fixed fold made each pod of a stream
pay more of them (W1 on a machine twice as slow: 5.4 pods a cycle against 12.8, and our CPU
per pod above kube-scheduler's, whose cost per pod has no such share). At 8 the cycles of a
steady stream hold the interpreter about a ninth of the time; on a quick machine (8 ms cycles)
the fold stays about `DEBOUNCE`."""
FOLD_MAX = 0.25
"""Seconds the fold lasts at most, however long the cycles take (a stream's pods wait for it)."""
GANG_DEBOUNCE = 0.04
"""The same, once a gang is whole (`Cache.complete`: its last member came; the members before
it woke no cycle): a gang's members already waited for it, and gangs completing close together
still share a cycle. Counted from the wake (the first gang's completion) it was 0.05; from the
last cycle's end, 0.08 kept W3's cycles (and CPU) about where they were while the median gang
waited less (bench.compare W3, three pairs each: gang p50 1.65x kube-scheduler's, CPU 0.98x;
0.05 from the end: 1.57x and 1.07x; 0.05 from the wake, measured before nodeorder's node views
were kept over annotation changes: 2.02x and 1.10x). With cycles cheaper since (W3 CPU 0.73-0.78x
kube-scheduler's at 0.08), 0.04 (nineteenth session, W3 ours only, three runs each in turns):
gang p50 0.1491, 0.1454, 0.1502 s against 0.1923, 0.1819, 0.2196 s at 0.08, CPU per 1,000 pods
1.633-1.743 s against 1.537-1.567 s; 0.02 gave 0.149, 0.1449, 0.1397 s at 1.65-1.723 s."""
ARRIVAL_GRACE = 1.0
"""Seconds a gang still being created (fewer pods than its minMember, the newest this recent)
keeps its members' pending messages and its PodGroup's status back (`Session.close`): a gang's
pods come one request after another, and one cycle seeing it half made wrote a PodScheduled
condition and a FailedScheduling Event on each member made so far, and an Unschedulable
condition and Warning on its PodGroup, moments before the gang started whole. A gang that stops
growing short of its minMember gets them this long after its last pod came. A PodGroup with no
pod yet is being created this long after its own creation (its move to Inqueue is written at
once if a controller owns it, or it has minResources: job controllers create the pods only
then; one without either, whose creator makes its pods next, goes straight to Running if its
gang starts within the grace, or is written Inqueue when the grace ends)."""
_CYCLE_MEAN_WEIGHT = 0.25
"""The newest cycle's weight in the moving mean of their durations (`FOLD_RATIO`)."""
YIELD_RATIO = 1.0
"""While earlier decisions are being carried out, the pause after a cycle, relative to how long
that cycle took."""


class Cache(Protocol):
    """What the loop needs of the scheduler cache."""

    @property
    def generation(self) -> int:
        """Changes whenever anything a cycle reads changes."""
        ...

    @property
    def complete(self) -> threading.Event:
        """Set when a change completes a unit of work (a gang's last member came)."""
        ...

    @property
    def quiet_generation(self) -> int:
        """Changes on changes a cycle must see but need not be woken for."""
        ...

    @property
    def gang_arrival(self) -> dt.datetime | None:
        """When the latest pending pod of a gang still short of its minMember came (a quiet
        change), or None."""
        ...

    @property
    def changed(self) -> threading.Event:
        """Set on every change."""
        ...

    def snapshot(self) -> ClusterSnapshot:
        """A consistent view for one cycle."""
        ...


class DecisionCarrier(Protocol):
    """What the loop needs of whatever carries its decisions out (the effects executor, or the
    dry run's recorder)."""

    def stream(self, bind: Bind, snapshot: ClusterSnapshot) -> None:
        """Carry out one bind of a cycle still running (its statement committed; asynchronously,
        never raises): `submit` then leaves it out."""
        ...

    def submit(self, result: CycleResult, snapshot: ClusterSnapshot) -> None:
        """Carry the decisions out (asynchronously), but the binds already streamed."""
        ...

    def busy(self) -> bool:
        """Earlier decisions are still being carried out."""
        ...


class Observer(Protocol):
    """What the loop reports to (the metrics)."""

    def observe_cycle(self, report: CycleReport) -> None:
        """A cycle ran."""
        ...

    def observe_skip(self) -> None:
        """A cycle was skipped: nothing changed."""
        ...

    def observe_cycle_failed(self, pending_pods: int) -> None:
        """A cycle raised; nothing of it was carried out but the binds it had committed.
        `pending_pods`: the pods it was to place (0 when the snapshot itself could not be
        taken)."""
        ...


class Scheduler:
    """Runs cycles."""

    def __init__(
        self,
        *,
        cache: Cache,
        policy: PolicyHolder,
        effects: DecisionCarrier,
        clock: Clock,
        observer: Observer,
        is_synced: Callable[[], bool],
        wait_synced: Callable[[float], bool] | None = None,
        is_leading: Callable[[], bool] = lambda: True,
        before_cycle: Callable[[], None] = lambda: None,
        period: float = 1.0,
        debounce: float = DEBOUNCE,
        gang_debounce: float = GANG_DEBOUNCE,
        yield_ratio: float = YIELD_RATIO,
        fold_ratio: float = FOLD_RATIO,
        quiet_period: float = QUIET_PERIOD,
        arrival_grace: float = ARRIVAL_GRACE,
        health: CycleHealth | None = None,
    ) -> None:
        self._cache, self._policy, self._effects = cache, policy, effects
        self._clock, self._observer = clock, observer
        self._is_synced, self._is_leading = is_synced, is_leading
        self._wait_synced = wait_synced
        self._before_cycle = before_cycle
        self._period, self._debounce = period, debounce
        self._gang_debounce = min(gang_debounce, debounce)
        self._yield_ratio, self._fold_ratio = yield_ratio, fold_ratio
        self._last_cycle_end = 0.0
        self._last_cycle_seconds = 0.0
        self._mean_cycle_seconds: float | None = None
        """The recent cycles' duration, a moving mean (`_CYCLE_MEAN_WEIGHT` to the newest)."""
        self.health = health if health is not None else CycleHealth()
        self._last: tuple[int, int] | None = None
        self._last_quiet = 0
        self._quiet_period = quiet_period
        self.cycles = 0
        self._carried: Carried | None = None
        self._arrival_grace = arrival_grace
        self._revisit_at: dt.datetime | None = None
        """When the messages a gang still arriving kept back fall due, or a plugin's answer
        changes by itself (cdp's protection ends): a cycle then runs."""
        self._arrival_seen: dt.datetime | None = None
        """The cache's `gang_arrival` as the last cycle saw it."""

    def run_once(self) -> CycleReport | None:
        """One cycle, if the scheduler may and should run one."""
        self._before_cycle()
        if not self._is_synced() or not self._is_leading():
            return None
        seen = (self._cache.generation, self._policy.generation)
        quiet = self._cache.quiet_generation
        arrival = self._cache.gang_arrival
        due = self._due(arrival)
        if (
            seen == self._last
            and not due
            and (
                quiet == self._last_quiet
                or perf_counter() - self._last_cycle_end < self._quiet_period
            )
        ):
            self._observer.observe_skip()
            return None
        self._cache.changed.clear()
        self._cache.complete.clear()
        self.cycles += 1
        snapshot: ClusterSnapshot | None = None
        try:
            taken = snapshot = self._cache.snapshot()
            report = cycle.run_cycle(
                snapshot,
                self._policy.current,
                clock=self._clock,
                uid=f"cycle-{self.cycles}",
                on_bind=lambda bind: self._effects.stream(bind, taken),
                carried=self._carried,
                arrival_grace=self._arrival_grace,
            )
        except Exception as exc:
            self._carried = None  # records a failed session may have left half moved
            self._observer.observe_cycle_failed(pending_pods(snapshot))
            self.health.failed(f"{type(exc).__name__}: {exc}")
            raise
        self.health.succeeded()
        self._carried = report.carried
        self._revisit_at, self._arrival_seen = report.result.revisit_at, arrival
        self._last, self._last_quiet = seen, quiet
        self._last_cycle_end, self._last_cycle_seconds = perf_counter(), report.seconds
        mean = self._mean_cycle_seconds
        self._mean_cycle_seconds = (
            report.seconds if mean is None else mean + (report.seconds - mean) * _CYCLE_MEAN_WEIGHT
        )
        for error in report.plugin_errors:
            logger.warning("cycle %d: plugin %s", self.cycles, error)
        for error in report.action_errors:
            logger.error("cycle %d: action %s", self.cycles, error)
        if not self._is_leading():
            logger.warning("lost the lease during cycle %d: its decisions are dropped", self.cycles)
            return None
        self._effects.submit(report.result, snapshot)
        self._observer.observe_cycle(report)
        logger.info(
            "cycle %d: %d bound, %d evicted, %d pending in %.3fs",
            self.cycles,
            len(report.result.binds),
            len(report.result.evictions),
            len(report.result.unschedulable),
            report.seconds,
        )
        return report

    def _due(self, arrival: dt.datetime | None) -> bool:
        """Whether a cycle must run though nothing it is woken for changed: the messages a gang
        still arriving kept back fall due or a victim's cooldown ends (`revisit_at`), or a pod of
        a gang short of its minMember came since the last cycle (a quiet change) and the arrival
        grace has passed since: the gang stopped growing, and its pods and PodGroup say why it
        waits."""
        now = self._clock.now()
        if self._revisit_at is not None and now >= self._revisit_at:
            return True
        grace = dt.timedelta(seconds=self._arrival_grace)
        return arrival is not None and arrival != self._arrival_seen and now >= arrival + grace

    def run(self, stop: threading.Event) -> None:
        """Cycle until `stop` is set; an exception in a cycle is logged and the loop goes on."""
        while not stop.is_set():
            try:
                self.run_once()
            except Exception:
                self._last_cycle_end = perf_counter()  # a failed cycle folds the next one too
                logger.exception(
                    "cycle %d failed; only the binds it committed before were carried out",
                    self.cycles,
                )
            if self._wait_synced is not None and not self._is_synced():
                self._wait_synced(_SLICE)
            elif self._wait(stop):
                self._fold(stop)

    def _wait(self, stop: threading.Event) -> bool:
        """Wait for the next cycle: True when a change wakes it early, False at the period's end
        or on a stop; in slices of at most `_SLICE`, so a stop alone is noticed within one.

        A change wakes the loop at once, also while decisions of earlier cycles are still being
        carried out (the next cycle sees those pods assumed, so it decides only what is new);
        then it waits, from the end of the last cycle, as long as that cycle took (times
        `yield_ratio`), so the cycles hold the interpreter at most about half the time during a
        bind backlog and the bind workers keep the rest. A pod created during a backlog is
        decided in the next cycle, not after a fixed multi-second wait."""
        waited = 0.0
        while not stop.is_set():
            left = self._period - waited
            if left <= 0:
                return False
            step = min(_SLICE, left)
            if self._cache.changed.wait(step):
                self._yield_to_workers(stop)
                return not stop.is_set()
            waited += step
        return False

    def _fold(self, stop: threading.Event) -> None:
        """Let a burst of changes end before the cycle: until `debounce` seconds after the last
        cycle ended (or `fold_ratio` times the recent cycles' mean duration, at most `FOLD_MAX`,
        when longer), or `gang_debounce` once a gang is whole (not at all when that is past:
        the loop was idle). Counted from the last cycle, not from the wake, so the cycles of a
        steady stream keep their pace and a change after a quiet spell waits for nothing."""
        since = self._last_cycle_end
        if self._cache.complete.wait(max(0.0, since + self.fold - perf_counter())):
            stop.wait(max(0.0, since + self._gang_debounce - perf_counter()))

    @property
    def fold(self) -> float:
        """Seconds from a cycle's end before a change runs the next (but a gang made whole):
        `debounce`, or `fold_ratio` times the recent cycles' mean duration, at most `FOLD_MAX`,
        when that is longer."""
        mean = self._mean_cycle_seconds
        if mean is None:
            return self._debounce
        return max(self._debounce, min(FOLD_MAX, self._fold_ratio * mean))

    def _yield_to_workers(self, stop: threading.Event) -> None:
        """While earlier decisions are in flight, keep the gap after the last cycle."""
        if not self._effects.busy():
            return
        gap = self._last_cycle_end + self._last_cycle_seconds * self._yield_ratio - perf_counter()
        if gap > 0:
            stop.wait(gap)


def pending_pods(snapshot: ClusterSnapshot | None) -> int:
    """The pods a cycle on `snapshot` was to place: every pending task (a snapshot holds only
    this scheduler's pending pods); 0 without a snapshot."""
    if snapshot is None:
        return 0
    return sum(1 for task in snapshot.tasks.values() if task.status is TaskStatus.PENDING)
