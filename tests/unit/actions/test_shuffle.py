"""The shuffle action: candidates, the victim points, the safety rails, one statement per victim."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

import pytest

from vscheduler import catalog, cycle
from vscheduler.actions import shuffle
from vscheduler.actions.shuffle import Limits, Rail
from vscheduler.clock import FixedClock
from vscheduler.errors import InvariantError, PluginArgsError, PolicyError
from vscheduler.framework.registry import Pipeline
from vscheduler.framework.session import PluginEntry, Session
from vscheduler.framework.state import TaskState
from vscheduler.framework.view import PluginSession
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import CycleResult, Evict
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.testing import scenario, sessions
from vscheduler.testing.builders import START, PodBuilder, node, pod, podgroup, snapshot

NOTE = ("lowNodeUtilization", "node n1 is above its target thresholds")


@dataclasses.dataclass(frozen=True)
class Option:
    name: str
    off: frozenset[str] = frozenset()

    def is_enabled(self, flag: str) -> bool:
        return flag not in self.off


class Proposer:
    """A stand-in victimTasks plugin (it is its own factory): proposes the pods named `picks`, in
    that order, from the candidates (or, with `reach`, from every task of the session), writing
    `notes` with `session.note_victim`; records the candidates it was shown."""

    def __init__(
        self,
        name: str,
        *picks: str,
        notes: dict[str, tuple[str, str]] | None = None,
        reach: bool = False,
        off: frozenset[str] = frozenset(),
        budgeted: bool = False,
    ) -> None:
        self.name, self.picks, self.notes, self.reach, self.off = name, picks, notes, reach, off
        self.budgeted = budgeted
        self.seen: list[list[str]] = []
        self._session: PluginSession | None = None

    @property
    def plugin(self) -> type[object]:
        return type(self)

    def open(self, session: PluginSession) -> object:
        self._session = session
        return self

    def propose_victims(self, candidates: Sequence[TaskState]) -> list[TaskState]:
        assert self._session is not None
        self.seen.append([t.key for t in candidates])
        pool = self._session.tasks.values() if self.reach else candidates
        by_key = {t.key: t for t in pool}
        chosen = [by_key[f"default/{name}"] for name in self.picks if f"default/{name}" in by_key]
        for task in chosen:
            note = (self.notes or {}).get(task.facts.name)
            if note is not None or self.budgeted:
                strategy, reason = note or (self.name, "")
                self._session.note_victim(task, strategy, reason, budgeted=self.budgeted)
        return chosen


class Filter:
    """A stand-in victimFilter plugin (its own factory): removes the pods named `drop`."""

    def __init__(self, name: str, *drop: str) -> None:
        self.name, self.off = name, frozenset[str]()
        self.drop = {f"default/{d}" for d in drop}
        self.seen: list[list[str]] = []

    @property
    def plugin(self) -> type[object]:
        return type(self)

    def open(self, _session: PluginSession) -> object:
        return self

    def filter_victims(self, victims: Sequence[TaskState]) -> list[TaskState]:
        self.seen.append([t.key for t in victims])
        return [t for t in victims if t.key not in self.drop]


StandIn = Proposer | Filter


def entries(*tiers: Sequence[StandIn]) -> tuple[tuple[PluginEntry, ...], ...]:
    return tuple(tuple(PluginEntry(Option(p.name, p.off), p) for p in tier) for tier in tiers)


def open_session(snap: ClusterSnapshot, *tiers: Sequence[StandIn]) -> Session:
    return sessions.open_session_on_tiers(snap, entries(*tiers), actions=("shuffle",))


def run(
    snap: ClusterSnapshot, *tiers: Sequence[StandIn], **arguments: object
) -> tuple[Session, CycleResult]:
    session = open_session(snap, *tiers)
    shuffle.build(arguments).execute(session)
    return session, session.close()


def evicted(result: CycleResult) -> list[str]:
    return [e.pod for e in result.evictions]


def running(name: str, on: str = "n1") -> PodBuilder:
    """A lone pod of this scheduler running on `on` (its job is an implicit one of one)."""
    return pod(name).requests(cpu="1").on(on)


def member(name: str, on: str, group: str = "pg") -> PodBuilder:
    """A running pod of PodGroup `group`."""
    return running(name, on).group(group)


NODES = [node(f"n{i}").resources(cpu="16", memory="32Gi") for i in range(1, 6)]


# --- candidates -------------------------------------------------------------------------------
def test_candidates_are_running_pods_of_this_schedulers_jobs_by_node_then_pod_key() -> None:
    foreign = running("f").scheduler("default-scheduler").build()
    proposer = Proposer("p")
    run(
        snapshot(
            *NODES,
            running("b", "n2"),
            running("a", "n2"),
            running("c", "n1"),
            pod("pending").requests(cpu="1"),
            dataclasses.replace(foreign, job=""),
            running("orphan").group("missing"),
            running("lost", "n9"),
            running("leaving").status(TaskStatus.RELEASING),
            running("binding").status(TaskStatus.BINDING),
            running("done").status(TaskStatus.SUCCEEDED),
        ),
        [proposer],
    )
    assert proposer.seen == [["default/c", "default/a", "default/b"]]


def test_a_pod_of_another_scheduler_is_never_evicted_even_when_a_plugin_names_it() -> None:
    foreign = dataclasses.replace(running("f").scheduler("default-scheduler").build(), job="")
    _, result = run(snapshot(*NODES, foreign, running("a")), [Proposer("p", "f", "a", reach=True)])
    assert evicted(result) == ["default/a"]


# --- the victim points ------------------------------------------------------------------------
def test_the_first_tier_proposing_victims_gives_its_union_and_later_tiers_go_unasked() -> None:
    later = Proposer("later", "c")
    snap = snapshot(*NODES, running("a", "n1"), running("b", "n2"), running("c", "n3"))
    _, result = run(snap, [Proposer("first", "a"), Proposer("second", "b", "a")], [later])
    assert evicted(result) == ["default/a", "default/b"]
    assert later.seen == []


def test_a_tier_proposing_nothing_passes_the_question_to_the_next_tier() -> None:
    snap = snapshot(*NODES, running("a", "n1"), running("c", "n3"))
    _, result = run(snap, [Proposer("quiet")], [Proposer("later", "c")])
    assert evicted(result) == ["default/c"]


def test_the_victim_filters_narrow_the_union_after_it_is_made_in_every_tier() -> None:
    snap = snapshot(*NODES, running("a", "n1"), running("b", "n2"), running("c", "n3"))
    first = Filter("first", "a")
    _, result = run(
        snap,
        [Proposer("one", "a"), first, Proposer("two", "b", "c")],
        [Filter("second", "c")],
    )
    assert first.seen == [["default/a", "default/b", "default/c"]]
    assert evicted(result) == ["default/b"]


def test_a_proposer_with_enabled_victim_off_is_not_asked() -> None:
    snap = snapshot(*NODES, running("a"))
    off = Proposer("off", "a", off=frozenset({"enabledVictim"}))
    _, result = run(snap, [off])
    assert (evicted(result), off.seen) == ([], [])


def test_with_no_plugin_proposing_victims_shuffle_evicts_nothing() -> None:
    _, result = run(snapshot(*NODES, running("a")))
    assert result.evictions == ()


# --- the rails --------------------------------------------------------------------------------
def test_a_running_gang_keeps_min_member_running_pods_but_a_lone_pod_is_not_protected() -> None:
    snap = snapshot(
        *NODES,
        podgroup("pg").min_member(2).phase(PodGroupPhase.RUNNING),
        member("g1", "n1"),
        member("g2", "n2"),
        member("g3", "n3"),
        running("lone", "n4"),
    )
    session, result = run(snap, [Proposer("p", "g1", "g2", "g3", "lone")])
    assert evicted(result) == ["default/g1", "default/lone"]
    assert session.tasks["default/g2"].status is TaskStatus.RUNNING


def test_a_gang_already_below_min_member_loses_nothing() -> None:
    snap = snapshot(
        *NODES,
        podgroup("pg").min_member(3).phase(PodGroupPhase.RUNNING),
        member("g1", "n1"),
        member("g2", "n2"),
    )
    _, result = run(snap, [Proposer("p", "g1", "g2")])
    assert result.evictions == ()


def test_at_most_max_evictions_per_node_leave_one_node_in_the_order_of_the_victims() -> None:
    snap = snapshot(
        *NODES,
        *(running(name, "n1") for name in ("a", "b", "c", "d")),
        running("e", "n2"),
    )
    picks = ("d", "c", "b", "a", "e")
    _, default = run(snap, [Proposer("p", *picks)])
    _, one = run(snap, [Proposer("p", *picks)], maxEvictionsPerNode=1)
    assert evicted(default) == ["default/d", "default/c", "default/e"]
    assert evicted(one) == ["default/d", "default/e"]


def test_at_most_max_evictions_per_run_are_evicted_the_first_victims_first() -> None:
    snap = snapshot(*NODES, *(running(f"p{i}", f"n{i}") for i in range(1, 6)))
    picks = ("p5", "p4", "p3", "p2", "p1")
    _, three = run(snap, [Proposer("p", *picks)], maxEvictionsPerRun=3)
    _, none = run(snap, [Proposer("p", *picks)], maxEvictionsPerRun=0)
    assert evicted(three) == ["default/p5", "default/p4", "default/p3"]
    assert none.evictions == ()


def test_victims_within_their_proposers_own_budget_pass_the_caps_but_not_the_gang_rail() -> None:
    snap = snapshot(
        *NODES,
        *(running(name, "n1") for name in ("a", "b", "c", "d")),
        podgroup("pg").min_member(2),
        member("g1", "n2"),
        member("g2", "n2"),
    )
    picks = ("a", "b", "c", "d", "g1", "g2")
    _, capped = run(snap, [Proposer("p", *picks)], maxEvictionsPerRun=3)
    _, budgeted = run(snap, [Proposer("p", *picks, budgeted=True)], maxEvictionsPerRun=3)
    assert evicted(capped) == ["default/a", "default/b"]
    assert evicted(budgeted) == ["default/a", "default/b", "default/c", "default/d"]


def test_budgeted_evictions_count_toward_the_caps_of_the_unbudgeted_victims_after_them() -> None:
    snap = snapshot(*NODES, *(running(name, "n1") for name in ("a", "b", "c")))
    budgeted = Proposer("tdm", "a", "b", budgeted=True)
    plain = Proposer("rescheduling", "c")
    _, result = run(snap, [budgeted, plain])
    assert evicted(result) == ["default/a", "default/b"]


def test_every_skipped_victim_is_counted_under_the_first_rail_it_fails() -> None:
    snap = snapshot(
        *NODES,
        podgroup("pg").min_member(1).phase(PodGroupPhase.RUNNING),
        member("g1", "n1"),
        member("g2", "n1"),
        running("a", "n1"),
        running("b", "n2"),
        running("c", "n3"),
        pod("pending").requests(cpu="1"),
    )
    session = open_session(snap)
    pool = shuffle.candidates(session)
    tasks = session.tasks
    victims = [tasks[f"default/{n}"] for n in ("pending", "g1", "g2", "a", "b", "c")]
    tally = shuffle.evict_victims(session, victims, pool, Limits(per_node=1, per_run=2))
    assert [t.key for t in tally.evicted] == ["default/g1", "default/b"]
    assert [(t.key, rail) for t, rail in tally.skipped] == [
        ("default/pending", Rail.NOT_CANDIDATE),
        ("default/g2", Rail.GANG),
        ("default/a", Rail.NODE_CAP),
        ("default/c", Rail.RUN_CAP),
    ]
    assert tally.counts() == {"not_candidate": 1, "gang": 1, "node_cap": 1, "run_cap": 1}


def test_skipped_victims_are_logged_at_debug_with_their_rail_and_a_summary_counts_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    snap = snapshot(*NODES, running("a", "n1"), running("b", "n1"), running("c", "n2"))
    with caplog.at_level(logging.DEBUG, logger="vscheduler.actions.shuffle"):
        run(snap, [Proposer("p", "a", "b")], maxEvictionsPerNode=1)
    assert caplog.messages == [
        "shuffle: default/b not evicted: maxEvictionsPerNode reached on its node",
        "shuffle: 3 candidates, 2 victims, 1 evicted, skipped node_cap 1",
    ]


# --- evicting ---------------------------------------------------------------------------------
def test_each_victim_has_a_statement_of_its_own_so_a_failed_one_is_skipped_once_and_undoes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    snap = snapshot(*NODES, running("a", "n1"), running("b", "n2"), running("c", "n3"))
    session = open_session(snap)
    tries: list[str] = []
    apply_evict = Session.apply_evict

    def refuse_b(self: Session, task: TaskState) -> None:
        tries.append(task.key)
        if task.key == "default/b":
            raise InvariantError("task default/b: illegal status change")
        apply_evict(self, task)

    monkeypatch.setattr(Session, "apply_evict", refuse_b)
    a, b, c = (session.tasks[f"default/{n}"] for n in "abc")
    tally = shuffle.evict_victims(session, [a, b, b, c], shuffle.candidates(session), Limits())
    assert tries == ["default/a", "default/b", "default/c"]
    assert [(t.key, rail) for t, rail in tally.skipped] == [
        ("default/b", Rail.FAILED),
        ("default/b", Rail.NOT_CANDIDATE),
    ]
    assert [e.pod for e in session.evictions] == ["default/a", "default/c"]
    assert [t.status for t in (a, b, c)] == [
        TaskStatus.RELEASING,
        TaskStatus.RUNNING,
        TaskStatus.RELEASING,
    ]


def test_the_eviction_carries_the_plugins_reason_and_strategy_and_names_shuffle() -> None:
    snap = snapshot(*NODES, running("a", "n1"), running("b", "n2"))
    _, result = run(snap, [Proposer("p", "a", "b", notes={"a": NOTE})])
    assert result.evictions == (
        Evict(
            task_uid="default/a",
            pod="default/a",
            node="n1",
            reason="shuffle: node n1 is above its target thresholds",
            action="shuffle",
            strategy="lowNodeUtilization",
        ),
        Evict(
            task_uid="default/b",
            pod="default/b",
            node="n2",
            reason="shuffle",
            action="shuffle",
            strategy="",
        ),
    )


def test_an_evicted_pod_is_gone_from_the_next_cycles_snapshot() -> None:
    snap = snapshot(*NODES, running("a", "n1"), running("b", "n2"))
    pipeline = Pipeline((shuffle.build({}),), entries([Proposer("p", "a")]))
    report = cycle.run_cycle(snap, pipeline, clock=FixedClock(START))
    after = cycle.next_snapshot(snap, report.result)
    assert sorted(after.tasks) == ["default/b"]


# --- arguments --------------------------------------------------------------------------------
def test_the_caps_default_to_two_per_node_and_ten_per_run_and_read_volcano_style_values() -> None:
    assert shuffle.build({}).limits == Limits(per_node=2, per_run=10)
    assert shuffle.build({"maxEvictionsPerNode": "3", "maxEvictionsPerRun": 0.0}).limits == Limits(
        per_node=3, per_run=0
    )


def test_malformed_caps_fail_the_policy_naming_the_action_and_the_argument() -> None:
    policy = """\
actions: "allocate, shuffle"
tiers: []
configurations:
- name: shuffle
  arguments:
    maxEvictionsPerNode: -1
    maxEvictionsPerRun: ten
    maxEvictionPerNode: 1
"""
    with pytest.raises(PolicyError) as caught:
        catalog.load_pipeline(policy, source="p.yaml")
    assert caught.value.errors == (
        "action shuffle: arguments.maxEvictionsPerNode: must be an integer >= 0, got -1",
        "action shuffle: arguments.maxEvictionsPerRun: must be an integer >= 0, got 'ten'",
        "action shuffle: arguments.maxEvictionPerNode: unknown argument; "
        "did you mean 'maxEvictionsPerNode'?",
    )


def test_a_bad_argument_is_a_plugin_args_error_when_built_directly() -> None:
    with pytest.raises(PluginArgsError, match=r"arguments\.maxEvictionsPerRun: must be an integer"):
        shuffle.build({"maxEvictionsPerRun": True})


def test_the_builtin_policy_runs_shuffle_and_without_a_victim_plugin_nothing_is_evicted() -> None:
    policy = """\
actions: "allocate, shuffle"
tiers:
- plugins:
  - name: priority
  - name: gang
configurations:
- name: shuffle
  arguments: {maxEvictionsPerNode: 1}
"""
    outcome = scenario.run(snapshot(*NODES, running("a")), policy=policy)
    assert outcome[0].evictions == []
