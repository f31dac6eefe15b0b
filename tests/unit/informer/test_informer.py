from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence

import pytest

from vscheduler.clock import FixedClock
from vscheduler.errors import ClusterError, ExpiredError, TransientClusterError
from vscheduler.informer.backoff import Backoff
from vscheduler.informer.informer import Informer
from vscheduler.informer.kinds import HYPERNODE, NODE, POD, Kind
from vscheduler.informer.ports import Listing, Raw, WatchEvent
from vscheduler.informer.readiness import SyncGate

Script = Sequence[WatchEvent | Exception]
NO_JITTER = Backoff(initial=0.5, cap=30.0, factor=2.0, jitter=0.0)


def obj(name: str, rv: str) -> dict[str, object]:
    return {"metadata": {"name": name, "resourceVersion": rv}}


def added(name: str, rv: str) -> WatchEvent:
    return WatchEvent("ADDED", obj(name, rv))


def bookmark(rv: str) -> WatchEvent:
    return WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": rv}})


class Zero:
    """A jitter source that never stretches the delay."""

    def random(self) -> float:
        return 0.0


class ScriptedLister:
    """Answers lists and watches from scripts; once out of script, blocks until stopped."""

    def __init__(self, lists: Sequence[Listing | Exception], watches: Sequence[Script]) -> None:
        self.lists = list(lists)
        self.watches = list(watches)
        self.watched_from: list[str] = []
        self.timeouts: list[int] = []
        self.list_calls = 0
        self.listed_at: list[str] = []
        self.exhausted = threading.Event()
        self.stop: threading.Event | None = None
        """When set, a list past the script blocks until stopped instead of failing at once."""

    def list(self, kind: Kind, *, resource_version: str = "") -> Listing:
        self.list_calls += 1
        self.listed_at.append(resource_version)
        if not self.lists:
            self._idle(self.stop)
            raise TransientClusterError("out of script")
        answer = self.lists.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def watch(
        self, kind: Kind, resource_version: str, *, timeout_seconds: int, stop: threading.Event
    ) -> Iterator[WatchEvent]:
        self.watched_from.append(resource_version)
        self.timeouts.append(timeout_seconds)
        if not self.watches:
            self._idle(stop)
            return
        for step in self.watches.pop(0):
            if isinstance(step, Exception):
                raise step
            yield step

    def _idle(self, stop: threading.Event | None) -> None:
        self.exhausted.set()
        if stop is not None:
            stop.wait(10)


class RecordingSink:
    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: list[tuple[str, object]] = []
        self.fail_on = fail_on

    def replace(self, kind: Kind, items: Iterable[Raw]) -> None:
        self.calls.append(("replace", [i["metadata"]["name"] for i in items]))  # type: ignore[index]

    def apply(self, kind: Kind, event: WatchEvent) -> None:
        name = event.obj["metadata"]["name"]  # type: ignore[index]
        if name == self.fail_on:
            self.fail_on = None
            raise RuntimeError(f"cannot apply {name}")
        self.calls.append((event.type, name))


class Harness:
    def __init__(
        self,
        lister: ScriptedLister,
        *,
        sink: RecordingSink | None = None,
        kind: Kind = POD,
        backoff: Backoff = NO_JITTER,
        gate: SyncGate | None = None,
    ) -> None:
        self.lister = lister
        self.sink = sink or RecordingSink()
        self.pauses: list[float] = []
        self.observed: list[tuple[str, str]] = []
        self.clock = FixedClock(dt.datetime(2024, 5, 1, tzinfo=dt.UTC))
        self.stop_event = threading.Event()
        lister.stop = self.stop_event
        self.informer = Informer(
            kind,
            lister,
            self.sink,
            clock=self.clock,
            rng=Zero(),
            stop=self.stop_event,
            gate=gate,
            backoff=backoff,
            observe=lambda kind_name, what: self.observed.append((kind_name, what)),
            pause=self._pause,
        )

    def _pause(self, seconds: float) -> bool:
        self.pauses.append(seconds)
        return self.stop_event.is_set()

    def run_until_idle(self) -> None:
        self.informer.start()
        assert self.lister.exhausted.wait(5), "the informer never ran out of script"
        assert self.informer.stop(timeout=2.0)

    def counts(self, what: str) -> int:
        return sum(1 for _, seen in self.observed if seen == what)


@pytest.mark.timeout(10)
def test_the_first_list_replaces_the_sink_then_events_apply_in_order() -> None:
    lister = ScriptedLister(
        [Listing([obj("a", "5"), obj("b", "6")], "10")],
        [
            [
                added("c", "11"),
                WatchEvent("MODIFIED", obj("a", "12")),
                WatchEvent("DELETED", obj("b", "13")),
            ]
        ],
    )
    harness = Harness(lister)
    harness.run_until_idle()
    assert harness.sink.calls == [
        ("replace", ["a", "b"]),
        ("ADDED", "c"),
        ("MODIFIED", "a"),
        ("DELETED", "b"),
    ]
    assert lister.watched_from[0] == "10"


@pytest.mark.timeout(10)
def test_a_watch_that_ends_normally_resumes_from_the_last_resource_version_seen() -> None:
    lister = ScriptedLister(
        [Listing([], "10")],
        [[added("a", "11"), bookmark("15")], [added("b", "16")]],
    )
    harness = Harness(lister)
    harness.run_until_idle()
    assert lister.watched_from == ["10", "15", "16"]
    assert lister.list_calls == 1
    assert harness.counts("bookmark") == 1
    assert harness.counts("event") == 2


@pytest.mark.timeout(10)
def test_bookmarks_move_the_resource_version_but_never_reach_the_sink() -> None:
    lister = ScriptedLister([Listing([], "10")], [[bookmark("20"), bookmark("30")]])
    harness = Harness(lister)
    harness.run_until_idle()
    assert harness.sink.calls == [("replace", [])]
    assert lister.watched_from == ["10", "30"]


@pytest.mark.timeout(10)
def test_an_expired_watch_lists_again_at_once_and_watches_from_the_new_list() -> None:
    lister = ScriptedLister(
        [Listing([obj("a", "5")], "10"), Listing([obj("a", "5"), obj("b", "40")], "41")],
        [[added("c", "11"), ExpiredError("too old resource version", status=410)]],
    )
    harness = Harness(lister)
    harness.run_until_idle()
    assert harness.sink.calls == [
        ("replace", ["a"]),
        ("ADDED", "c"),
        ("replace", ["a", "b"]),
    ]
    assert lister.watched_from == ["10", "41"]
    assert lister.listed_at == ["0", ""]  # the server's cache first, the latest after a 410
    assert harness.pauses == []
    assert [harness.counts(w) for w in ("list", "relist", "expired")] == [1, 1, 1]


@pytest.mark.timeout(10)
def test_failures_back_off_exponentially_up_to_the_cap() -> None:
    failures: list[Listing | Exception] = [TransientClusterError("503") for _ in range(9)]
    lister = ScriptedLister([*failures, Listing([], "1")], [])
    harness = Harness(lister)
    harness.run_until_idle()
    assert harness.pauses == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    assert harness.counts("error") == 9


@pytest.mark.timeout(10)
def test_a_success_resets_the_backoff() -> None:
    lister = ScriptedLister(
        [TransientClusterError("a"), TransientClusterError("b"), Listing([], "10")],
        [
            [TransientClusterError("c")],
            [TransientClusterError("d")],
            [added("x", "11"), TransientClusterError("e")],
        ],
    )
    harness = Harness(lister)
    harness.run_until_idle()
    assert harness.pauses == [0.5, 1.0, 0.5, 1.0, 0.5]
    assert lister.watched_from == ["10", "10", "10", "11"]


@pytest.mark.timeout(10)
def test_jitter_stretches_a_delay_but_never_past_the_cap() -> None:
    class Half:
        def random(self) -> float:
            return 0.5

    backoff = Backoff(initial=0.5, cap=30.0, factor=2.0, jitter=0.5)
    assert backoff.delay(1, Half()) == pytest.approx(0.625)
    assert backoff.delay(6, Half()) == pytest.approx(20.0)
    assert backoff.delay(100, Half()) == 30.0


@pytest.mark.timeout(10)
def test_an_unexpected_exception_is_retried_and_never_kills_the_loop() -> None:
    lister = ScriptedLister([RuntimeError("bug in the lister"), Listing([obj("a", "1")], "2")], [])
    harness = Harness(lister)
    harness.run_until_idle()
    assert harness.sink.calls == [("replace", ["a"])]
    assert harness.pauses == [0.5]


@pytest.mark.timeout(10)
def test_a_sink_that_fails_on_an_event_gets_a_fresh_list_after_the_backoff() -> None:
    lister = ScriptedLister(
        [Listing([], "10"), Listing([obj("bad", "11")], "12")],
        [[added("bad", "11"), added("never", "13")]],
    )
    harness = Harness(lister, sink=RecordingSink(fail_on="bad"))
    harness.run_until_idle()
    assert harness.sink.calls == [("replace", []), ("replace", ["bad"])]
    assert harness.pauses == [0.5]
    assert lister.watched_from == ["10", "12"]


@pytest.mark.timeout(10)
def test_a_watch_closed_at_once_with_nothing_delivered_counts_as_a_failure() -> None:
    lister = ScriptedLister([Listing([], "10")], [[], [], [added("a", "11")]])
    harness = Harness(lister)
    harness.run_until_idle()
    assert harness.pauses == [0.5, 1.0]
    assert lister.watched_from == ["10", "10", "10", "11"]


@pytest.mark.timeout(10)
def test_watch_timeouts_are_spread_between_one_and_two_minimums() -> None:
    lister = ScriptedLister([Listing([], "10")], [])
    harness = Harness(lister)
    harness.run_until_idle()
    assert lister.timeouts == [300]


@pytest.mark.timeout(10)
def test_the_gate_opens_after_the_first_list_only() -> None:
    gate = SyncGate()
    other = SyncGate()
    lister = ScriptedLister([TransientClusterError("down"), Listing([], "10")], [])
    harness = Harness(lister, gate=gate)
    gate.register(NODE)
    assert gate.pending() == ("Node", "Pod")
    harness.run_until_idle()
    assert gate.pending() == ("Node",)
    gate.mark_synced(NODE)
    assert gate.is_synced()
    assert other.is_synced()


@pytest.mark.timeout(10)
def test_stop_ends_an_informer_blocked_in_a_watch_within_a_second() -> None:
    lister = ScriptedLister([Listing([], "10")], [])
    informer = Informer(
        POD,
        lister,
        RecordingSink(),
        clock=FixedClock(dt.datetime(2024, 1, 1, tzinfo=dt.UTC)),
        rng=Zero(),
    )
    informer.start()
    assert lister.exhausted.wait(5)
    started = time.monotonic()
    assert informer.stop(timeout=1.0)
    assert time.monotonic() - started < 1.0


@pytest.mark.timeout(10)
def test_stop_ends_an_informer_waiting_out_a_long_backoff() -> None:
    lister = ScriptedLister([TransientClusterError("down")], [])
    observed = threading.Event()
    informer = Informer(
        POD,
        lister,
        RecordingSink(),
        clock=FixedClock(dt.datetime(2024, 1, 1, tzinfo=dt.UTC)),
        rng=Zero(),
        backoff=Backoff(initial=30.0, cap=30.0),
        observe=lambda kind, what: observed.set() if what == "error" else None,
    )
    informer.start()
    assert observed.wait(5)
    started = time.monotonic()
    assert informer.stop(timeout=1.0)
    assert time.monotonic() - started < 1.0
    assert lister.list_calls == 1


def test_the_thread_is_named_after_the_kind() -> None:
    informer = Informer(
        POD,
        ScriptedLister([], []),
        RecordingSink(),
        clock=FixedClock(dt.datetime(2024, 1, 1, tzinfo=dt.UTC)),
        rng=Zero(),
    )
    assert informer.thread_name == "informer-Pod"
    assert informer.stop()


def _cut_short(items: list[Raw], error: Exception) -> Iterator[Raw]:
    """A list whose body fails after `items` (the connection drops while the sink reads)."""
    yield from items
    raise error


@pytest.mark.timeout(10)
def test_a_list_that_fails_while_the_sink_reads_it_changes_nothing_and_is_listed_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken = TransientClusterError("connection reset while reading the list")
    lister = ScriptedLister(
        [Listing(_cut_short([obj("a", "5")], broken), "10"), Listing([obj("a", "5")], "11")],
        [],
    )
    harness = Harness(lister)
    with caplog.at_level(logging.INFO):
        harness.run_until_idle()
    assert harness.sink.calls == [("replace", ["a"])]  # the first list never reached the sink
    assert lister.watched_from == ["11"]
    assert harness.pauses == [0.5]  # a cluster failure: backed off, then listed again
    assert harness.counts("error") == 1
    assert "connection reset while reading the list" in caplog.text
    assert "the sink failed" not in caplog.text


@pytest.mark.timeout(10)
def test_a_stop_while_the_sink_reads_a_list_leaves_the_rest_unread_and_the_sink_unchanged() -> None:
    pulled: list[int] = []

    def items() -> Iterator[Raw]:
        for i in range(1000):
            pulled.append(i)
            if i == 1:
                harness.stop_event.set()
            yield obj(f"p{i}", "5")

    lister = ScriptedLister([Listing(items(), "10")], [])
    harness = Harness(lister)
    harness.informer.start()
    assert harness.stop_event.wait(5)  # set by the list itself, while the sink reads it
    assert harness.informer.stop(timeout=2.0)
    assert len(pulled) == 2
    assert harness.sink.calls == []
    assert lister.watched_from == []


@pytest.mark.timeout(10)
@pytest.mark.parametrize("status", [404, 403])
def test_an_optional_kind_the_cluster_does_not_serve_is_synced_empty_and_listed_again_later(
    status: int, caplog: pytest.LogCaptureFixture
) -> None:
    """The HyperNode CRD not installed (404), or not readable by the scheduler's role (403):
    the cache holds none, the kind counts as synced (the scheduler is not kept from its first
    cycle), and it is listed again after `absent_retry` (60 s), said once; once it is served,
    its objects come in as any kind's."""
    absent = ClusterError("the server could not find the requested resource", status=status)
    lister = ScriptedLister([absent, absent, Listing([obj("s0", "5")], "10")], [])
    gate = SyncGate()
    caplog.set_level(logging.INFO, logger="vscheduler.informer.informer")
    harness = Harness(lister, kind=HYPERNODE, gate=gate)
    harness.run_until_idle()
    assert harness.sink.calls == [("replace", []), ("replace", []), ("replace", ["s0"])]
    assert gate.is_synced()
    assert harness.pauses == [60.0, 60.0]
    said = [r.getMessage() for r in caplog.records]
    assert sum("does not serve hypernodes.topology.volcano.sh" in m for m in said) == 1
    assert sum("hypernodes.topology.volcano.sh is served now" in m for m in said) == 1


@pytest.mark.timeout(10)
def test_a_kind_that_is_not_optional_is_not_synced_by_a_404() -> None:
    """Pods are never optional: a 404 is a failure, backed off, and the kind stays unsynced."""
    lister = ScriptedLister([ClusterError("404", status=404)], [])
    gate = SyncGate()
    harness = Harness(lister, kind=POD, gate=gate)
    harness.run_until_idle()
    assert harness.sink.calls == []
    assert not gate.is_synced()
