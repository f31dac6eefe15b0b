"""Every write is checked against the cache just before it is sent, not when it is queued: a
decision that no longer holds is dropped (outcome `dropped`, its assumption forgotten) and the
pod goes back to the next cycle. Also: a node's deletion drops the binds queued to it at once, a
step-down drops the work queued before it, a bind whose answer was lost waits for the watch, an
unreachable API server is not one warning per call, and a shutdown sends binds first."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects.executor import EffectsExecutor
from vscheduler.effects.ports import ObjectRef
from vscheduler.errors import (
    ClusterError,
    ConflictError,
    StaleDecisionError,
    TransientClusterError,
    UnreachableError,
)
from vscheduler.informer.kinds import NODE, POD, PODGROUP
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult, Evict, PodGroupStatus
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.testing.executors import WAIT, running_executor, status_of
from vscheduler.testing.writers import RefusingWriter

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
TTL = 30.0


class Writer(RefusingWriter):
    """Records every call in order; `hold(method)` blocks calls of `method` until `release`;
    `fail(method, *errors)` scripts errors; `during(method, fn)` runs `fn` inside the next call
    (as if the world changed while the request was on its way)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.gates: dict[str, threading.Event] = {}
        self.entered: dict[str, threading.Event] = {}
        self.errors: dict[str, list[Exception]] = {}
        self.hooks: dict[str, Callable[[], None]] = {}
        self.bodies: list[object] = []
        """What each condition and status write carried, in order."""

    def hold(self, method: str) -> None:
        self.gates[method] = threading.Event()
        self.entered[method] = threading.Event()

    def release(self, method: str) -> None:
        self.gates[method].set()

    def fail(self, method: str, *errors: Exception) -> None:
        self.errors.setdefault(method, []).extend(errors)

    def during(self, method: str, hook: Callable[[], None]) -> None:
        self.hooks[method] = hook

    def of(self, method: str) -> list[str]:
        with self.lock:
            return [what for m, what in self.calls if m == method]

    def _call(self, method: str, what: str) -> None:
        hook = self.hooks.pop(method, None)
        if hook is not None:
            hook()
        with self.lock:
            self.calls.append((method, what))
            errors = self.errors.get(method)
            error = errors.pop(0) if errors else None
        if method in self.gates:
            self.entered[method].set()
            self.gates[method].wait(WAIT)
        if error is not None:
            raise error

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        self._call("bind", f"{namespace}/{name} -> {node}")

    def evict(self, namespace: str, name: str, uid: str, *, dry_run: bool = False) -> None:
        self._call("evict", f"{namespace}/{name}")

    def set_pod_condition(self, namespace: str, name: str, condition: Mapping[str, str]) -> None:
        self.bodies.append(condition["message"])
        self._call("condition", f"{namespace}/{name}")

    def patch_podgroup_status(
        self, namespace: str, name: str, status: Mapping[str, object]
    ) -> None:
        self.bodies.append(dict(status))
        self._call("status", f"{namespace}/{name}")

    def patch_queue_status(self, name: str, status: Mapping[str, object]) -> None:
        self.bodies.append(dict(status))
        self._call("queue_status", name)

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        self._call("event", f"{reason} {ref.namespace}/{ref.name}")


def raw_pod(
    name: str, *, uid: str = "", node: str | None = None, phase: str = "Pending"
) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": "vscheduler", "containers": []}
    if node is not None:
        spec["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": uid or f"uid-{name}"},
        "spec": spec,
        "status": {"phase": phase},
    }


def raw_node(name: str, *, unschedulable: bool = False) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": {"unschedulable": unschedulable},
        "status": {"allocatable": {"cpu": "4", "pods": "10"}},
    }


def raw_podgroup(uid: str = "uid-pg1") -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg1", "namespace": "ns", "uid": uid},
        "spec": {"minMember": 1},
        "status": {"phase": "Pending"},
    }


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def cache(clock: FixedClock) -> SchedulerCache:
    cache = SchedulerCache(clock=clock, assume_ttl=TTL)
    cache.replace(NODE, [raw_node("n1"), raw_node("n2")])
    cache.replace(POD, [raw_pod(f"p{i}") for i in range(1, 5)] + [raw_pod("r1", node="n1")])
    cache.replace(PODGROUP, [raw_podgroup()])
    return cache


@pytest.fixture
def writer() -> Writer:
    return Writer()


@pytest.fixture
def outcomes() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def effects(
    writer: Writer, cache: SchedulerCache, clock: FixedClock, outcomes: list[tuple[str, str]]
) -> Iterator[EffectsExecutor]:
    with running_executor(writer, cache, clock, outcomes, workers=1, attempts=3) as effects:
        yield effects


def bind(pod: str, node: str) -> Bind:
    return Bind(task_uid=f"uid-{pod}", pod=f"ns/{pod}", node=node)


def behind_a_held_bind(effects: EffectsExecutor, writer: Writer, result: CycleResult) -> None:
    """Queue `result` behind a bind of p4 that the only worker is sending (held), its status
    writes behind busy status workers (released by `finish`)."""
    writer.hold("bind")
    writer.gates["status workers"] = hold_status_workers(effects)
    effects.submit(CycleResult(binds=(bind("p4", "n1"),)), ClusterSnapshot())
    assert writer.entered["bind"].wait(WAIT)
    effects.submit(result, ClusterSnapshot())


def hold_status_workers(effects: EffectsExecutor) -> threading.Event:
    """Keep every worker of the status pool busy until the returned gate is set."""
    gate = threading.Event()
    pool = effects._status_pool
    started = [threading.Event() for _ in range(pool._max_workers)]

    def occupy(busy: threading.Event) -> None:
        busy.set()
        gate.wait(WAIT)

    for busy in started:
        pool.submit(occupy, busy)
    for busy in started:
        assert busy.wait(WAIT)
    return gate


def queued(effects: EffectsExecutor, kind: str, count: int = 1) -> None:
    """Until the dispatcher has queued `count` writes of `kind` (it diffs asynchronously)."""
    while effects._pending[kind] < count:  # the dispatcher's progress
        threading.Event().wait(0.001)


def dispatched(effects: EffectsExecutor) -> None:
    """Until the dispatcher has carried out every submit (diffed and queued its writes)."""
    while effects._pending[""]:  # the dispatcher's own count
        threading.Event().wait(0.001)


def finish(effects: EffectsExecutor, writer: Writer) -> None:
    for gate in writer.gates.values():
        gate.set()
    assert effects.drain(WAIT)


# --- binds checked right before they are sent -----------------------------------------------
CHANGES: dict[str, Callable[[SchedulerCache], None]] = {
    "the node was deleted": lambda c: c.apply(NODE, WatchEvent("DELETED", raw_node("n2"))),
    "the node was cordoned": lambda c: c.apply(
        NODE, WatchEvent("MODIFIED", raw_node("n2", unschedulable=True))
    ),
    "the pod was deleted": lambda c: c.apply(POD, WatchEvent("DELETED", raw_pod("p1"))),
    "the pod was recreated under its name": lambda c: c.apply(
        POD, WatchEvent("ADDED", raw_pod("p1", uid="uid-p1-again"))
    ),
    "the pod was bound meanwhile": lambda c: c.apply(
        POD, WatchEvent("MODIFIED", raw_pod("p1", node="n1", phase="Running"))
    ),
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_a_queued_bind_whose_decision_no_longer_holds_is_dropped_when_its_turn_comes(
    effects: EffectsExecutor,
    writer: Writer,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
    change: Callable[[SchedulerCache], None],
) -> None:
    behind_a_held_bind(effects, writer, CycleResult(binds=(bind("p1", "n2"),)))
    change(cache)  # after the decision was queued, before a worker takes it
    finish(effects, writer)
    assert writer.of("bind") == ["ns/p4 -> n1"]
    assert ("bind", "dropped") in outcomes
    assert [e for e in writer.of("event") if "p1" in e] == []
    task = cache.snapshot().tasks.get("uid-p1")
    assert task is None or task.node_name != "n2"  # the assumption is forgotten


def test_a_bind_that_still_holds_is_sent(
    effects: EffectsExecutor, writer: Writer, outcomes: list[tuple[str, str]]
) -> None:
    behind_a_held_bind(effects, writer, CycleResult(binds=(bind("p1", "n2"),)))
    finish(effects, writer)
    assert writer.of("bind") == ["ns/p4 -> n1", "ns/p1 -> n2"]
    assert outcomes == [("bind", "success"), ("bind", "success")]


def test_a_cordoned_node_still_takes_a_pod_that_tolerates_the_cordon(
    effects: EffectsExecutor, writer: Writer, cache: SchedulerCache
) -> None:
    pod = raw_pod("ds")
    pod["spec"]["tolerations"] = [{"operator": "Exists"}]
    cache.apply(POD, WatchEvent("ADDED", pod))
    behind_a_held_bind(effects, writer, CycleResult(binds=(bind("ds", "n2"),)))
    CHANGES["the node was cordoned"](cache)
    finish(effects, writer)
    assert writer.of("bind") == ["ns/p4 -> n1", "ns/ds -> n2"]


def test_the_check_runs_again_right_before_the_request_leaves(
    effects: EffectsExecutor,
    writer: Writer,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The API client asks `check_send` once its rate limiter let the request go: a node
    # deleted while the request waited there stops it.
    def deleted_then_client_checks() -> None:
        CHANGES["the node was deleted"](cache)
        with pytest.raises(StaleDecisionError, match="node n2 is gone"):
            effects.check_send()
        raise StaleDecisionError("node n2 is gone")

    writer.during("bind", deleted_then_client_checks)
    with caplog.at_level(logging.INFO, logger="vscheduler.effects.executor"):
        effects.submit(CycleResult(binds=(bind("p1", "n2"),)), ClusterSnapshot())
        assert effects.drain(WAIT)
    assert "bind ns/p1 to n2 not sent: node n2 is gone" in caplog.messages
    assert writer.of("bind") == []
    assert outcomes == [("bind", "dropped")]
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)


def test_check_send_outside_a_worker_lets_anything_through(effects: EffectsExecutor) -> None:
    effects.check_send()  # Events of the loop thread, the problem reporter: not decisions


# --- a node's deletion drops the binds queued to it at once --------------------------------
def test_deleting_a_node_drops_its_queued_binds_at_once_and_the_pods_can_be_placed_again(
    effects: EffectsExecutor,
    writer: Writer,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    cache.on_node_deleted(effects.node_deleted)
    binds = (bind("p1", "n2"), bind("p2", "n2"), bind("p3", "n1"))
    behind_a_held_bind(effects, writer, CycleResult(binds=binds))
    with caplog.at_level(logging.INFO, logger="vscheduler.effects.executor"):
        CHANGES["the node was deleted"](cache)
        # before any worker is free: the two pods show pending again, p3 stays assumed
        assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)
        assert status_of(cache, "uid-p2") == (TaskStatus.PENDING, None)
        assert status_of(cache, "uid-p3") == (TaskStatus.BOUND, "n1")
        assert outcomes == [("bind", "dropped"), ("bind", "dropped")]
    assert "2 queued binds dropped: node n2 was deleted" in caplog.messages
    finish(effects, writer)
    assert writer.of("bind") == ["ns/p4 -> n1", "ns/p3 -> n1"]


def test_a_node_deleted_during_a_relist_drops_its_queued_binds_too(
    effects: EffectsExecutor, writer: Writer, cache: SchedulerCache, outcomes: list[tuple[str, str]]
) -> None:
    cache.on_node_deleted(effects.node_deleted)
    behind_a_held_bind(effects, writer, CycleResult(binds=(bind("p1", "n2"),)))
    cache.replace(NODE, [raw_node("n1")])
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)
    finish(effects, writer)
    assert writer.of("bind") == ["ns/p4 -> n1"]
    assert outcomes.count(("bind", "dropped")) == 1


# --- evictions and status writes are checked too -------------------------------------------
def test_an_eviction_of_a_pod_deleted_since_the_decision_is_not_sent(
    effects: EffectsExecutor, writer: Writer, cache: SchedulerCache, outcomes: list[tuple[str, str]]
) -> None:
    evict = Evict(task_uid="uid-r1", pod="ns/r1", node="n1", reason="preempt for ns/p1")
    behind_a_held_bind(effects, writer, CycleResult(evictions=(evict,)))
    cache.apply(POD, WatchEvent("DELETED", raw_pod("r1", node="n1")))
    finish(effects, writer)
    assert writer.of("evict") == []
    assert ("evict", "dropped") in outcomes


def test_an_unschedulable_condition_is_not_written_on_a_pod_bound_since(
    effects: EffectsExecutor,
    writer: Writer,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The common race of a gang (a member's condition queued, then the gang bound): dropped
    before any request, logged at DEBUG only."""
    caplog.set_level(logging.DEBUG, logger="vscheduler.effects.executor")
    behind_a_held_bind(effects, writer, CycleResult(unschedulable={"ns/p2": "0/2 nodes fit"}))
    queued(effects, "status writes")
    cache.apply(POD, WatchEvent("MODIFIED", raw_pod("p2", node="n2", phase="Running")))
    finish(effects, writer)
    assert writer.of("condition") == []
    assert ("pod_condition", "dropped") in outcomes
    assert [e for e in writer.of("event") if "p2" in e] == []
    dropped = [r for r in caplog.records if "PodScheduled=False on ns/p2 not sent" in r.message]
    assert [(r.levelno, r.message) for r in dropped] == [
        (logging.DEBUG, "set PodScheduled=False on ns/p2 not sent: pod ns/p2 is on node n2 already")
    ]


def test_a_podgroup_status_is_not_written_on_a_podgroup_replaced_since(
    effects: EffectsExecutor, writer: Writer, cache: SchedulerCache, outcomes: list[tuple[str, str]]
) -> None:
    status = PodGroupStatus(phase=PodGroupPhase.INQUEUE)
    behind_a_held_bind(effects, writer, CycleResult(podgroups={"ns/pg1": status}))
    queued(effects, "status writes")
    cache.apply(PODGROUP, WatchEvent("ADDED", raw_podgroup(uid="uid-pg1-again")))
    finish(effects, writer)
    assert writer.of("status") == []
    assert ("podgroup_status", "dropped") in outcomes


def test_a_backlog_of_status_writes_sends_only_the_newest_for_each_object(
    effects: EffectsExecutor, writer: Writer
) -> None:
    """A PodGroup status and a pod condition queued behind busy status workers, then a newer
    status for the PodGroup and a condition of another cause for the pod: one request each,
    the newest (a backlog never sends what a later cycle replaced)."""
    older = CycleResult(
        podgroups={"ns/pg1": PodGroupStatus(phase=PodGroupPhase.INQUEUE)},
        unschedulable={"ns/p2": "0/2 nodes are available: 2 Insufficient cpu."},
    )
    behind_a_held_bind(effects, writer, older)
    queued(effects, "status writes", 2)
    newer = CycleResult(
        podgroups={"ns/pg1": PodGroupStatus(phase=PodGroupPhase.RUNNING, running=1)},
        unschedulable={"ns/p2": "0/2 nodes are available: 2 node(s) were unschedulable."},
    )
    effects.submit(newer, ClusterSnapshot())
    dispatched(effects)
    finish(effects, writer)
    assert writer.of("status") == ["ns/pg1"]
    assert writer.of("condition") == ["ns/p2"]
    assert [b for b in writer.bodies if isinstance(b, dict)] == [{"phase": "Running", "running": 1}]
    assert [b for b in writer.bodies if isinstance(b, str)] == [
        "0/2 nodes are available: 2 node(s) were unschedulable."
    ]


# --- step-down -------------------------------------------------------------------------------
def test_a_step_down_drops_every_queued_bind_at_once_and_the_rest_when_reached(
    effects: EffectsExecutor, writer: Writer, cache: SchedulerCache, outcomes: list[tuple[str, str]]
) -> None:
    behind_a_held_bind(
        effects,
        writer,
        CycleResult(binds=(bind("p1", "n2"),), unschedulable={"ns/p2": "0/2 nodes fit"}),
    )
    queued(effects, "status writes")
    effects.step_down()
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)
    # leading again before the workers reach the old work: it is still not sent
    finish(effects, writer)
    assert writer.of("bind") == ["ns/p4 -> n1"]
    assert writer.of("condition") == []
    assert ("bind", "dropped") in outcomes
    assert ("pod_condition", "dropped") in outcomes

    effects.submit(CycleResult(binds=(bind("p1", "n2"),)), ClusterSnapshot())
    assert effects.drain(WAIT)
    assert writer.of("bind")[-1] == "ns/p1 -> n2"


# --- a bind whose answer was lost ----------------------------------------------------------
def lost() -> TransientClusterError:
    return UnreachableError("connection reset after sending", maybe_applied=True)


def test_a_bind_whose_answer_was_lost_and_then_conflicts_stays_assumed_until_the_watch_shows_it(
    effects: EffectsExecutor,
    writer: Writer,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    writer.fail("bind", lost(), ConflictError("pod p1 is already assigned to node n2"))
    with caplog.at_level(logging.INFO, logger="vscheduler.effects.executor"):
        effects.submit(CycleResult(binds=(bind("p1", "n2"),)), ClusterSnapshot())
        assert effects.drain(WAIT)
    assert caplog.messages[-1] == (
        "bind ns/p1 to n2: an answer was lost (pod p1 is already assigned to node n2); the "
        "watch decides whether it bound the pod"
    )
    assert outcomes == [("bind", "unconfirmed")]
    assert writer.of("event") == []
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n2")  # not decided again
    cache.apply(POD, WatchEvent("MODIFIED", raw_pod("p1", node="n2", phase="Running")))
    seen = cache.snapshot().tasks["uid-p1"]
    assert (seen.status, seen.node_name) == (TaskStatus.RUNNING, "n2")


def test_a_bind_whose_answer_was_lost_during_an_outage_is_decided_again_only_after_the_ttl(
    effects: EffectsExecutor,
    writer: Writer,
    cache: SchedulerCache,
    clock: FixedClock,
    outcomes: list[tuple[str, str]],
) -> None:
    writer.fail("bind", lost(), UnreachableError("refused"), UnreachableError("refused"))
    effects.submit(CycleResult(binds=(bind("p1", "n2"),)), ClusterSnapshot())
    assert effects.drain(WAIT)
    assert outcomes == [("bind", "unconfirmed")]
    assert writer.of("event") == []
    clock.advance(TTL - 1)
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n2")
    clock.advance(2)
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)


def test_a_bind_refused_before_it_was_sent_is_forgotten_at_once(
    effects: EffectsExecutor, writer: Writer, cache: SchedulerCache, outcomes: list[tuple[str, str]]
) -> None:
    writer.fail("bind", *(UnreachableError("connection refused") for _ in range(3)))
    effects.submit(CycleResult(binds=(bind("p1", "n2"),)), ClusterSnapshot())
    assert effects.drain(WAIT)
    assert outcomes == [("bind", "error")]
    assert status_of(cache, "uid-p1") == (TaskStatus.PENDING, None)


def test_failures_of_an_unreachable_server_are_info_lines_other_failures_warnings(
    effects: EffectsExecutor, writer: Writer, caplog: pytest.LogCaptureFixture
) -> None:
    writer.fail("bind", *(UnreachableError("connection refused") for _ in range(3)))
    writer.fail("event", *(UnreachableError("connection refused") for _ in range(3)))
    writer.fail("condition", ClusterError("403 Forbidden"))
    with caplog.at_level(logging.INFO):
        effects.submit(
            CycleResult(binds=(bind("p1", "n2"),), unschedulable={"ns/p2": "0/2 nodes fit"}),
            ClusterSnapshot(),
        )
        assert effects.drain(WAIT)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == ["set PodScheduled=False on ns/p2 failed: 403 Forbidden"]


# --- shutdown --------------------------------------------------------------------------------
def test_a_shutdown_sends_the_queued_binds_first_then_their_events_and_skips_status_writes(
    effects: EffectsExecutor, writer: Writer, caplog: pytest.LogCaptureFixture
) -> None:
    result = CycleResult(
        binds=(bind("p1", "n2"), bind("p2", "n2")), unschedulable={"ns/p3": "0/2 nodes fit"}
    )
    behind_a_held_bind(effects, writer, result)
    report: dict[str, int] = {}
    stopping = threading.Thread(target=lambda: report.update(effects.shutdown(WAIT)))
    with caplog.at_level(logging.INFO, logger="vscheduler.effects.executor"):
        stopping.start()
        while not effects._draining:  # the shutdown has begun
            pass
        writer.release("bind")
        writer.gates["status workers"].set()  # the status write is reached during the shutdown
        stopping.join(WAIT)
    assert not stopping.is_alive()
    kinds = [method for method, _ in writer.calls]
    assert kinds == ["bind", "bind", "bind", "event", "event", "event"]
    assert writer.of("condition") == []
    assert report == {"status writes": 1}
    assert "shutdown after 5s of grace: not sent: 1 status writes" in caplog.messages


def test_a_shutdown_out_of_grace_drops_the_queued_events_and_says_how_many(
    writer: Writer, cache: SchedulerCache, clock: FixedClock, caplog: pytest.LogCaptureFixture
) -> None:
    effects = EffectsExecutor(writer, cache, clock=clock, workers=4)  # two Event workers
    writer.hold("event")
    effects.submit(
        CycleResult(binds=tuple(bind(f"p{i}", "n1") for i in range(1, 5))), ClusterSnapshot()
    )
    while len(writer.of("event")) < 2 or len(writer.of("bind")) < 4:
        writer.entered["event"].wait(0.01)

    # the two Events being sent finish once the executor stops; the two queued are dropped
    def release_on_stop() -> None:
        effects._stop.wait(WAIT)  # close() cancels queued work before this
        writer.release("event")

    releaser = threading.Thread(target=release_on_stop)
    releaser.start()
    with caplog.at_level(logging.INFO, logger="vscheduler.effects.executor"):
        report = effects.shutdown(0)
    releaser.join(WAIT)
    assert report == {"Events": 2}
    assert len(writer.of("event")) == 2
    assert "shutdown after 0s of grace: not sent: 2 Events" in caplog.messages


# --- status writes never hold up binds ---------------------------------------------------------
def test_a_bind_is_sent_while_earlier_status_writes_are_still_stuck(
    effects: EffectsExecutor, writer: Writer
) -> None:
    writer.hold("condition")  # both status workers sit in a slow condition write
    effects.submit(
        CycleResult(unschedulable={"ns/p2": "0/2 nodes fit", "ns/p3": "0/2 nodes fit"}),
        ClusterSnapshot(),
    )
    assert writer.entered["condition"].wait(WAIT)
    sent = threading.Event()
    writer.during("event", sent.set)  # the bind's Scheduled Event follows its success
    effects.submit(CycleResult(binds=(bind("p1", "n2"),)), ClusterSnapshot())
    assert sent.wait(WAIT)
    assert writer.of("bind") == ["ns/p1 -> n2"]
    finish(effects, writer)
