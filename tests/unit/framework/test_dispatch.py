"""The combination rules of ARCHITECTURE §4, each pinned with stand-in plugins."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from vscheduler.framework.dispatch import Dispatcher
from vscheduler.framework.results import ABSTAIN, Code, Status, Vote
from vscheduler.framework.state import JobState, TaskState
from vscheduler.testing import sessions
from vscheduler.testing.builders import pod, podgroup


@dataclasses.dataclass
class Option:
    name: str
    off: frozenset[str] = frozenset()

    def is_enabled(self, flag: str) -> bool:
        return flag not in self.off


def job(name: str = "j", seconds: float = 0) -> JobState:
    return JobState(podgroup(name).created(seconds).build())


def task(name: str) -> TaskState:
    return TaskState(pod(name).build(), None, 0)


class Votes:
    def __init__(self, enqueue: Vote = Vote.ABSTAIN, starving: bool | None = None) -> None:
        self._enqueue = enqueue
        if starving is not None:
            self.is_job_starving = lambda _job: starving

    def vote_enqueue(self, _job: JobState) -> Vote:
        return self._enqueue


def dispatcher(*tiers: Sequence[tuple[str, object]]) -> Dispatcher:
    return Dispatcher([[(Option(name), plugin) for name, plugin in tier] for tier in tiers])


@pytest.mark.parametrize(
    ("tiers", "expected"),
    [
        pytest.param([], True, id="no votes at all allows"),
        pytest.param([[Vote.ABSTAIN], [Vote.ABSTAIN]], True, id="all abstain allows"),
        pytest.param([[Vote.PERMIT, Vote.REJECT]], False, id="a reject in the tier ends it"),
        pytest.param([[Vote.PERMIT], [Vote.REJECT]], True, id="a permitting tier decides"),
        pytest.param([[Vote.ABSTAIN], [Vote.REJECT]], False, id="abstaining tier moves on"),
    ],
)
def test_tier_vote_follows_volcano(tiers: list[list[Vote]], expected: bool) -> None:
    d = dispatcher(
        *[[(f"p{t}{i}", Votes(v)) for i, v in enumerate(tier)] for t, tier in enumerate(tiers)]
    )
    assert d.is_job_enqueueable(job()) is expected


def test_starving_is_decided_by_the_first_tier_holding_a_starving_plugin() -> None:
    d = dispatcher(
        [("a", Votes())],
        [("b", Votes(starving=True)), ("c", Votes(starving=False))],
        [("d", Votes(starving=True))],
    )
    assert d.is_job_starving(job()) is False
    assert dispatcher([("a", Votes())]).is_job_starving(job()) is False
    assert dispatcher([("b", Votes(starving=True))]).is_job_starving(job()) is True


class Victims:
    def __init__(self, answer: object) -> None:
        self.answer = answer

    def select_preemptees(self, _preemptor: TaskState, candidates: Sequence[TaskState]) -> object:
        if self.answer is ABSTAIN:
            return ABSTAIN
        assert isinstance(self.answer, set)
        return tuple(t for t in candidates if t.facts.name in self.answer)


def test_preemptable_intersects_within_the_deciding_tier() -> None:
    tasks = [task(n) for n in "abcd"]
    d = dispatcher(
        [("x", Victims(ABSTAIN)), ("y", Victims({"a", "b", "c"})), ("z", Victims({"b", "c", "d"}))]
    )
    assert [t.facts.name for t in d.select_preemptees(tasks[0], tasks)] == ["b", "c"]


def test_an_empty_intersection_means_no_victims_and_later_plugins_cannot_overrule_it() -> None:
    tasks = [task(n) for n in "ab"]
    d = dispatcher(
        [("protect", Victims(set())), ("greedy", Victims({"a", "b"}))], [("next", Victims({"a"}))]
    )
    assert d.select_preemptees(tasks[0], tasks) == ()


def test_a_tier_that_only_abstains_passes_the_decision_on() -> None:
    tasks = [task(n) for n in "ab"]
    d = dispatcher([("x", Victims(ABSTAIN))], [("y", Victims({"b"}))])
    assert [t.facts.name for t in d.select_preemptees(tasks[0], tasks)] == ["b"]


class Orders:
    def __init__(self, value: int) -> None:
        self.value = value

    def compare_jobs(self, _a: JobState, _b: JobState) -> int:
        return self.value


def test_job_order_takes_the_first_non_zero_answer_then_creation_time_then_uid() -> None:
    early, late = job("b", 1), job("a", 2)
    assert dispatcher([("o", Orders(0))]).compare_jobs(early, late) == -1
    assert dispatcher([("o", Orders(0)), ("p", Orders(5))]).compare_jobs(early, late) == 1
    same_a, same_b = job("a", 1), job("b", 1)
    assert dispatcher().compare_jobs(same_a, same_b) == -1


def test_task_order_ties_break_on_pod_index_first() -> None:
    d = dispatcher()
    first = TaskState(pod("w-z").index(0).created(5).build(), None, 0)
    second = TaskState(pod("w-a").index(1).created(1).build(), None, 0)
    assert d.compare_tasks(first, second) == -1


class Broken:
    def is_job_ready(self, _job: JobState) -> bool:
        raise RuntimeError("boom")

    def validate_job(self, _job: JobState) -> Status | None:
        raise ValueError("bad")

    def is_overused(self, _queue: object) -> bool:
        raise RuntimeError("boom")


def test_a_raising_plugin_gives_the_conservative_answer_and_is_recorded() -> None:
    d = dispatcher([("broken", Broken())])
    assert d.is_job_ready(job()) is False
    status = d.validate_job(job())
    assert status is not None
    assert status.code is Code.ERROR
    assert status.plugin == "broken"
    assert d.is_overused(object()) is True  # type: ignore[arg-type]
    assert [e.point for e in d.errors] == ["jobReady", "jobValid", "overused"]


def test_a_disabled_flag_removes_the_plugin_from_that_point_only() -> None:
    class Both(Votes):
        def is_job_ready(self, _job: JobState) -> bool:
            return False

    d = Dispatcher([[(Option("p", frozenset({"enableJobReady"})), Both(Vote.REJECT))]])
    assert d.is_job_ready(job()) is True
    assert d.is_job_enqueueable(job()) is False


def test_a_raising_predicate_skips_its_task_and_is_recorded_with_it_not_raised() -> None:
    from vscheduler import cycle
    from vscheduler.clock import FixedClock
    from vscheduler.framework.registry import Pipeline
    from vscheduler.framework.session import PluginEntry
    from vscheduler.testing.builders import START, node, snapshot

    class Exploding:
        def filter_nodes(self, _task: TaskState, _idx: object) -> object:
            raise RuntimeError("kaboom")

    class Factory:
        name = "exploding"
        plugin = Exploding

        def open(self, _session: object) -> Exploding:
            return Exploding()

    from vscheduler.actions import allocate

    pipeline = Pipeline((allocate.build({}),), ((PluginEntry(Option("exploding"), Factory()),),))
    snap = snapshot(node("n1"), pod("p").requests(cpu="1"))
    report = cycle.run_cycle(snap, pipeline, clock=FixedClock(START))
    assert report.result.binds == ()
    assert report.result.unschedulable["default/p"] == (
        "plugin exploding failed at predicate for this pod: RuntimeError: kaboom"
    )
    assert report.plugin_errors[0] == "exploding predicate: RuntimeError: kaboom (pod default/p)"


def test_every_session_gets_fresh_plugin_instances_from_the_same_factory() -> None:
    from vscheduler import catalog
    from vscheduler.testing.builders import node, snapshot

    pipeline = catalog.load_pipeline(None)
    snap = snapshot(node("n1"))
    first = sessions.open_session(snap, pipeline)
    second = sessions.open_session(snap, pipeline)
    assert set(first.plugins) == set(second.plugins)
    for name, plugin in first.plugins.items():
        assert plugin is not second.plugins[name]


# --- jobOrderKey --------------------------------------------------------------------------------
class Size:
    """jobOrder and jobOrderKey: fewer tasks first."""

    def compare_jobs(self, a: JobState, b: JobState) -> int:
        return (len(a.tasks) > len(b.tasks)) - (len(a.tasks) < len(b.tasks))

    def job_order_key(self, job: JobState) -> int:
        return len(job.tasks)


class CompareOnly:
    def compare_jobs(self, a: JobState, b: JobState) -> int:
        return 0


class BrokenKey(Size):
    def job_order_key(self, job: JobState) -> int:
        raise ZeroDivisionError("division by zero")


def test_a_key_is_the_plugins_keys_then_creation_time_then_uid() -> None:
    j = job("a", 5)
    assert dispatcher([("size", Size())]).job_key(j) == (0, j.created, j.uid)


def test_one_job_order_plugin_without_a_key_means_comparisons() -> None:
    d = dispatcher([("size", Size()), ("other", CompareOnly())])
    assert d.job_key(job("a")) is None


def test_a_key_that_raises_is_a_job_order_error_and_the_session_compares_from_then_on() -> None:
    d = dispatcher([("broken", BrokenKey())])
    assert d.job_key(job("a")) is None
    assert d.job_key(job("b")) is None
    assert [str(e) for e in d.errors] == ["broken jobOrder: ZeroDivisionError: division by zero"]


class Silent:
    """A plugin serving no point."""


def test_the_hooks_follow_each_plugins_class_and_flags_from_one_session_to_the_next() -> None:
    """Which plugins serve a point is worked out once per entries and classes (`collect`): the
    same entries with a plugin of another class, or another object of its own hooks, are asked
    again."""
    votes, off = Option("votes"), Option("off", off=frozenset({"enableJobEnqueued"}))

    def hooks(first: object, second: object) -> list[str]:
        d = Dispatcher([[(votes, first), (off, second)]])
        return [h.plugin for h in d.hooks("jobEnqueueable")]

    for _ in range(2):  # the second time from the plan the first one made
        assert hooks(Votes(Vote.REJECT), Votes(Vote.PERMIT)) == ["votes"]
        assert hooks(Silent(), Votes(Vote.PERMIT)) == []
    starving = Dispatcher([[(votes, Votes(starving=True))]])
    assert starving.is_job_starving(job()) is True
    assert Dispatcher([[(votes, Votes())]]).is_job_starving(job()) is False
