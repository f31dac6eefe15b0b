"""LeaderElector: one leader per Lease, driven step by step on a FixedClock (no real sleeping)."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

import pytest
from hypothesis import given, settings, strategies as st

from vscheduler.clock import FixedClock
from vscheduler.election import LeaderElector, LeaseRecord, default_identity
from vscheduler.errors import ConflictError, NotFoundError, TransientClusterError
from vscheduler.testing.builders import START

NS, NAME = "kube-system", "vscheduler"


class MemoryLeases:
    """An API server's optimistic concurrency for Leases, in memory."""

    def __init__(self) -> None:
        self.records: dict[tuple[str, str], LeaseRecord] = {}
        self.version = 0

    def get(self, namespace: str, name: str) -> LeaseRecord | None:
        return self.records.get((namespace, name))

    def create(self, namespace: str, name: str, record: LeaseRecord) -> LeaseRecord:
        if (namespace, name) in self.records:
            raise ConflictError("leases.coordination.k8s.io already exists", status=409)
        return self._put(namespace, name, record)

    def update(self, namespace: str, name: str, record: LeaseRecord) -> LeaseRecord:
        current = self.records.get((namespace, name))
        if current is None:
            raise NotFoundError("lease not found", status=404)
        if record.resource_version != current.resource_version:
            raise ConflictError("the object has been modified", status=409)
        return self._put(namespace, name, record)

    def _put(self, namespace: str, name: str, record: LeaseRecord) -> LeaseRecord:
        self.version += 1
        stored = dataclasses.replace(record, resource_version=str(self.version))
        self.records[(namespace, name)] = stored
        return stored

    @property
    def lease(self) -> LeaseRecord:
        return self.records[(NS, NAME)]


class Link:
    """One replica's connection to the store; while `down`, every call fails."""

    def __init__(self, store: MemoryLeases) -> None:
        self.store = store
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise TransientClusterError("connection reset by peer")

    def get(self, namespace: str, name: str) -> LeaseRecord | None:
        self._check()
        return self.store.get(namespace, name)

    def create(self, namespace: str, name: str, record: LeaseRecord) -> LeaseRecord:
        self._check()
        return self.store.create(namespace, name, record)

    def update(self, namespace: str, name: str, record: LeaseRecord) -> LeaseRecord:
        self._check()
        return self.store.update(namespace, name, record)


@dataclasses.dataclass
class Replica:
    elector: LeaderElector
    link: Link
    clock: FixedClock
    events: list[str]
    stop: threading.Event

    def is_leader(self) -> bool:
        return self.elector.is_leader()


def replica(
    store: MemoryLeases,
    identity: str,
    clock: FixedClock | None = None,
    *,
    link: Link | None = None,
    release_on_cancel: bool = True,
    on_started: Callable[[], None] | None = None,
) -> Replica:
    link = link or Link(store)
    events: list[str] = []
    stop = threading.Event()
    clock = clock or FixedClock(START)

    def started() -> None:
        events.append("started")
        if on_started is not None:
            on_started()

    elector = LeaderElector(
        link,
        namespace=NS,
        name=NAME,
        identity=identity,
        clock=clock,
        stop=stop,
        on_started_leading=started,
        on_stopped_leading=lambda: events.append("stopped"),
        release_on_cancel=release_on_cancel,
    )
    return Replica(elector, link, clock, events, stop)


class Clocks:
    """Several replicas' clocks, advancing together (their wall clocks may differ)."""

    def __init__(self, *clocks: FixedClock) -> None:
        self.clocks = clocks

    def advance(self, seconds: float) -> None:
        for clock in self.clocks:
            clock.advance(seconds)


def test_a_candidate_creates_an_absent_lease_and_leads() -> None:
    store = MemoryLeases()
    a = replica(store, "a")

    assert a.elector.step() is True

    assert a.is_leader()
    assert a.events == ["started"]
    assert store.lease == LeaseRecord("a", 15, START, START, 0, resource_version="1")


def test_a_leader_renews_each_step_keeping_its_acquire_time() -> None:
    store = MemoryLeases()
    a = replica(store, "a")
    a.elector.step()

    a.clock.advance(2)
    a.elector.step()

    assert store.lease.holder == "a"
    assert store.lease.acquire_time == START
    assert store.lease.renew_time == a.clock.now()
    assert store.lease.transitions == 0
    assert a.events == ["started"]


def test_a_second_candidate_does_not_lead_while_the_first_renews() -> None:
    store = MemoryLeases()
    clock = FixedClock(START)
    a, b = replica(store, "a", clock), replica(store, "b", clock)
    a.elector.step()

    for _ in range(20):
        clock.advance(2)
        a.elector.step()
        assert b.elector.step() is False
        assert a.is_leader()

    assert b.events == []
    assert b.elector.holder == "a"


def test_is_leader_turns_false_the_moment_the_renew_deadline_passes_before_any_step() -> None:
    store = MemoryLeases()
    a = replica(store, "a")
    a.elector.step()
    a.link.down = True

    a.clock.advance(2)
    assert a.elector.step() is True  # a failed renewal inside the deadline keeps the lead
    a.clock.advance(7.9)
    assert a.is_leader()
    a.clock.advance(0.1)

    assert not a.is_leader()
    assert a.events == ["started"]  # the thread has not noticed yet


def test_a_leader_that_cannot_renew_steps_down_once_and_keeps_campaigning() -> None:
    store = MemoryLeases()
    a = replica(store, "a")
    a.elector.step()
    a.link.down = True
    for _ in range(6):
        a.clock.advance(2)
        a.elector.step()

    assert a.events == ["started", "stopped"]
    assert not a.is_leader()

    a.link.down = False  # nobody took the lease meanwhile: it is still ours
    assert a.elector.step() is True
    assert a.events == ["started", "stopped", "started"]


def test_a_dead_leaders_lease_is_taken_once_it_has_been_unchanged_for_a_lease_duration() -> None:
    store = MemoryLeases()
    clock = FixedClock(START)
    a, b = replica(store, "a", clock), replica(store, "b", clock)
    a.elector.step()
    b.elector.step()  # b sees a's record at t=0; then a dies

    taken_at = None
    for _ in range(10):
        clock.advance(2)
        if b.elector.step():
            taken_at = clock.monotonic()
            break

    assert taken_at == 16  # t=14: too early; t=16: unchanged for 16 s >= 15 s and past renew+15
    assert store.lease.holder == "b"
    assert store.lease.transitions == 1
    assert store.lease.acquire_time == clock.now()


def test_a_fresh_replica_waits_a_lease_duration_before_taking_a_stale_lease() -> None:
    store = MemoryLeases()
    store.create(NS, NAME, LeaseRecord("gone", 15, START, START, 3))
    clock = FixedClock(START)
    clock.advance(3600)  # the holder died an hour ago
    b = replica(store, "b", clock)

    assert b.elector.step() is False  # first sight starts the watch
    clock.advance(14)
    assert b.elector.step() is False
    clock.advance(1)
    assert b.elector.step() is True
    assert store.lease.transitions == 4


def test_a_wall_clock_running_ahead_does_not_let_a_replica_take_a_live_lease() -> None:
    store = MemoryLeases()
    a_clock, b_clock = FixedClock(START), FixedClock(START)
    b_clock.advance(60)  # b's wall clock is a minute fast
    clocks = Clocks(a_clock, b_clock)
    a, b = replica(store, "a", a_clock), replica(store, "b", b_clock)
    a.elector.step()

    for _ in range(20):
        clocks.advance(2)
        a.elector.step()
        assert b.elector.step() is False

    assert a.is_leader()


def test_a_leader_that_sees_another_holder_steps_down_at_once() -> None:
    store = MemoryLeases()
    a = replica(store, "a")
    a.elector.step()
    store.update(NS, NAME, dataclasses.replace(store.lease, holder="intruder"))

    a.clock.advance(2)

    assert a.elector.step() is False
    assert a.events == ["started", "stopped"]


def test_a_write_that_loses_a_race_is_just_a_failed_attempt() -> None:
    class Racing(Link):
        """b creates the lease between a's read and a's create."""

        def create(self, namespace: str, name: str, record: LeaseRecord) -> LeaseRecord:
            self.store.create(namespace, name, LeaseRecord("b", 15, START, START, 0))
            return super().create(namespace, name, record)

    store = MemoryLeases()
    a = replica(store, "a", link=Racing(store))

    assert a.elector.step() is False
    assert a.events == []
    assert store.lease.holder == "b"


def test_stopping_releases_the_lease_so_another_replica_takes_it_at_once() -> None:
    store = MemoryLeases()
    clock = FixedClock(START)
    a, b = replica(store, "a", clock), replica(store, "b", clock)
    a.elector.step()
    b.elector.step()

    assert a.elector.release() is True

    assert a.events == ["started", "stopped"]
    assert store.lease.holder == ""
    assert store.lease.lease_duration_seconds == 1
    clock.advance(2)
    assert b.elector.step() is True
    assert store.lease.transitions == 1


def test_the_thread_campaigns_until_stopped_then_releases() -> None:
    store = MemoryLeases()
    leading = threading.Event()
    a = replica(store, "a", on_started=leading.set)

    thread = a.elector.start()
    assert thread.name == "leader-elector"
    assert thread.daemon
    assert leading.wait(timeout=5)
    a.stop.set()
    a.elector.join(timeout=5)

    assert not thread.is_alive()
    assert store.lease.holder == ""
    assert not a.is_leader()


def test_without_release_on_cancel_the_lease_stays_until_it_expires() -> None:
    store = MemoryLeases()
    a = replica(store, "a", release_on_cancel=False)
    a.elector.step()
    a.stop.set()

    a.elector.run()

    assert store.lease.holder == "a"
    assert a.events == ["started", "stopped"]
    assert not a.is_leader()


@pytest.mark.parametrize(("lease", "renew", "retry"), [(10, 10, 2), (15, 10, 10), (15, 10, 0)])
def test_timings_must_be_ordered_lease_over_renew_over_retry(
    lease: float, renew: float, retry: float
) -> None:
    with pytest.raises(ValueError, match="lease duration > renew deadline > retry period"):
        LeaderElector(
            MemoryLeases(),
            namespace=NS,
            name=NAME,
            identity="a",
            clock=FixedClock(START),
            stop=threading.Event(),
            lease_duration=lease,
            renew_deadline=renew,
            retry_period=retry,
        )


def test_the_default_identity_is_the_host_name_and_a_unique_suffix() -> None:
    first, second = default_identity(), default_identity()

    assert first != second
    assert first.rsplit("_", 1)[0] == second.rsplit("_", 1)[0]


OPS = st.sampled_from(
    [
        *("step a", "step b", "release a"),
        *("tick 2", "tick 5", "tick 10"),
        *("cut a", "heal a", "cut b", "heal b"),
    ]
)


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(OPS, min_size=20, max_size=60), skew=st.sampled_from([0, 4, -4, 30]))
def test_two_replicas_on_one_lease_never_both_lead(ops: list[str], skew: float) -> None:
    store = MemoryLeases()
    a_clock, b_clock = FixedClock(START), FixedClock(START)
    b_clock.advance(skew)
    clocks = Clocks(a_clock, b_clock)
    replicas = {"a": replica(store, "a", a_clock), "b": replica(store, "b", b_clock)}

    for op in ops:
        verb, _, who = op.partition(" ")
        if verb == "tick":
            clocks.advance(float(who))
        elif verb == "step":
            replicas[who].elector.step()
        elif verb == "release":
            replicas[who].elector.release()
        else:
            replicas[who].link.down = verb == "cut"
        assert not (replicas["a"].is_leader() and replicas["b"].is_leader()), ops


class SlowLink(Link):
    """A link whose reads take `delay` seconds of the replica's clock (a slow renewal)."""

    def __init__(self, store: MemoryLeases, clock: FixedClock, delay: float) -> None:
        super().__init__(store)
        self.clock, self.delay = clock, delay

    def get(self, namespace: str, name: str) -> LeaseRecord | None:
        self.clock.advance(self.delay)
        return super().get(namespace, name)


def test_the_write_deadline_counts_from_the_start_of_the_last_renewal_not_its_end() -> None:
    # A renewal that took 6 s (a frozen or starved process) still ends the write deadline 10 s
    # after it began: any write leaves at least lease duration - renew deadline (5 s) before a
    # standby, which waits a whole lease duration on a record it saw unchanged, can take over.
    store = MemoryLeases()
    clock = FixedClock(START)
    a = replica(store, "a", clock, link=SlowLink(store, clock, 0.0))
    a.elector.step()
    assert isinstance(a.link, SlowLink)
    a.link.delay = 6.0
    clock.advance(2)
    began = clock.monotonic()
    assert a.elector.step() is True  # the renewal itself succeeded, at began + 6
    clock.advance(began + 10 - 0.001 - clock.monotonic())
    assert a.is_leader()
    clock.advance(0.001)
    assert not a.is_leader()  # no step ran: the deadline alone fences every write
    b = replica(store, "b", FixedClock(clock.now()))
    assert b.elector.step() is False  # seen now; expired only a lease duration later
    for _ in range(10):
        clock.advance(2)
        b.clock.advance(2)
        assert not a.is_leader()
        if b.elector.step():
            break
    assert b.is_leader()
    assert clock.monotonic() - began >= 15
    assert store.lease.holder == "b"
