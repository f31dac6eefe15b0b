from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.errors import PluginArgsError, PolicyError
from vscheduler.framework.results import Code, Status, Vote
from vscheduler.framework.session import Session
from vscheduler.framework.state import TaskState
from vscheduler.model.status import TaskStatus
from vscheduler.plugins import tdm
from vscheduler.plugins.tdm import Tdm, Window, parse_window
from vscheduler.testing import sessions
from vscheduler.testing.builders import START, Item, PodBuilder, node, pod, podgroup, snapshot

ZONE = "volcano.sh/revocable-zone"
POLICY = """actions: "enqueue, allocate"
tiers:
- plugins:
  - name: tdm
    arguments:
      tdm.revocable-zone.rz1: 10:00-21:00
      tdm.revocable-zone.rz2: 22:00-06:00
      tdm.evict.period: 5m
"""
NODES = (
    node("n1"),
    node("r1").label(ZONE, "rz1"),
    node("r2").label(ZONE, "rz2"),
    node("r9").label(ZONE, "rz9"),
)
NOON = START + dt.timedelta(hours=12)


def clock(hours: int, minutes: int = 0) -> dt.datetime:
    return START + dt.timedelta(hours=hours, minutes=minutes)


def open_session(*items: Item, now: dt.datetime = NOON) -> tuple[Session, Tdm]:
    session = sessions.open_session(snapshot(*NODES, *items), policy=POLICY, now=now)
    plugin = session.plugins["tdm"]
    assert isinstance(plugin, Tdm)
    return session, plugin


def preemptable(name: str) -> PodBuilder:
    """A pod that may use revocable nodes (annotation `volcano.sh/preemptable: "true"`)."""
    return pod(name).annotate("volcano.sh/preemptable", "true").preemptable()


def opted_out(name: str) -> PodBuilder:
    """A pod that is not preemptable (annotation `volcano.sh/preemptable: "false"`); without
    the annotation a pod is preemptable, as Volcano's `TaskInfo.Preemptable` reads it."""
    return pod(name).annotate("volcano.sh/preemptable", "false")


def passing(session: Session, plugin: Tdm, key: str) -> list[str]:
    """The nodes the tdm predicate lets pod `key` onto."""
    task = task_of(session, key)
    ok = plugin.filter_nodes(task, np.arange(len(NODES), dtype=np.int64))
    return [n for n, passed in zip(session.ledger.names, ok, strict=True) if passed]


def task_of(session: Session, key: str) -> TaskState:
    return next(t for t in session.tasks.values() if t.key == key)


def keys(tasks: tuple[TaskState, ...]) -> list[str]:
    return [t.key for t in tasks]


# --- windows --------------------------------------------------------------------------------------
def test_a_window_is_read_as_minutes_after_midnight() -> None:
    assert parse_window("10:00-21:30") == Window(600, 1290, "10:00-21:30")
    assert parse_window(" 9:05 - 18:00 ") == Window(545, 1080, "9:05 - 18:00")


@pytest.mark.parametrize("text", ["10:00", "10-21", "24:00-01:00", "10:60-11:00", "10:0-11:00"])
def test_a_malformed_window_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=text.strip()):
        parse_window(text)


@pytest.mark.parametrize(
    ("window", "hours", "minutes", "is_open"),
    [
        pytest.param("10:00-21:00", 9, 59, False, id="before"),
        pytest.param("10:00-21:00", 10, 0, True, id="at-the-start"),
        pytest.param("10:00-21:00", 20, 59, True, id="last-minute"),
        pytest.param("10:00-21:00", 21, 0, False, id="at-the-end"),
        pytest.param("22:00-06:00", 23, 0, True, id="overnight-evening"),
        pytest.param("22:00-06:00", 3, 0, True, id="overnight-after-midnight"),
        pytest.param("22:00-06:00", 12, 0, False, id="overnight-daytime"),
        pytest.param("08:00-08:00", 7, 59, True, id="equal-ends-all-day"),
    ],
)
def test_a_window_is_open_from_its_start_until_its_end(
    window: str, hours: int, minutes: int, is_open: bool
) -> None:
    assert parse_window(window).is_open(clock(hours, minutes)) is is_open


# --- the predicate and the score ------------------------------------------------------------------
def test_a_pod_that_may_use_revocable_nodes_goes_to_open_zones_only() -> None:
    session, plugin = open_session(preemptable("p"))

    assert passing(session, plugin, "default/p") == ["n1", "r1"]


def test_an_overnight_zone_is_open_after_midnight() -> None:
    session, plugin = open_session(preemptable("p"), now=clock(3))

    assert passing(session, plugin, "default/p") == ["n1", "r2"]


def test_a_pod_without_the_preemptable_annotation_never_goes_to_a_revocable_node() -> None:
    session, plugin = open_session(pod("p"), opted_out("q"))

    assert passing(session, plugin, "default/p") == ["n1"]
    assert passing(session, plugin, "default/q") == ["n1"]


def test_the_revocable_zone_annotation_star_lets_a_pod_use_revocable_nodes() -> None:
    session, plugin = open_session(pod("p").annotate(ZONE, "*"))

    assert passing(session, plugin, "default/p") == ["n1", "r1"]


def test_a_revocable_zone_annotation_other_than_star_does_not() -> None:
    session, plugin = open_session(preemptable("p").annotate(ZONE, "rz1"))

    assert passing(session, plugin, "default/p") == ["n1"]


def test_a_preemptable_label_alone_does_not_let_a_pod_use_revocable_nodes() -> None:
    session, plugin = open_session(pod("p").label("volcano.sh/preemptable", "true").preemptable())

    assert passing(session, plugin, "default/p") == ["n1"]


def test_each_refused_node_says_why() -> None:
    session, plugin = open_session(preemptable("p"), pod("q"))
    p, q = task_of(session, "default/p"), task_of(session, "default/q")

    assert plugin.explain_node(p, 0) is None
    assert plugin.explain_node(p, 1) is None
    assert plugin.explain_node(p, 2) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "node(s) in revocable zone rz2, closed now (22:00-06:00)",
    )
    assert plugin.explain_node(p, 3) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "node(s) in revocable zone rz9, not configured in plugin tdm",
    )
    assert plugin.explain_node(q, 1) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "node(s) were revocable and the pod may not use revocable nodes",
    )


def test_open_revocable_nodes_score_100_for_pods_that_may_use_them() -> None:
    session, plugin = open_session(preemptable("p"), pod("q"))
    idx = np.arange(len(NODES), dtype=np.int64)

    scores = plugin.score_nodes(task_of(session, "default/p"), idx)

    assert scores is not None
    assert scores.tolist() == [0.0, 100.0, 0.0, 0.0]
    assert plugin.score_nodes(task_of(session, "default/q"), idx) is None


# --- preemption -----------------------------------------------------------------------------------
RUNNING_ON_N1 = (
    podgroup("batch").min_member(1),
    preemptable("batch-0").group("batch").requests(cpu="1").on("n1"),
    preemptable("batch-1").group("batch").requests(cpu="1").on("n1"),
    podgroup("other").min_member(1),
    preemptable("other-0").group("other").requests(cpu="1").on("n1"),
    opted_out("steady").requests(cpu="1").on("n1"),
    preemptable("lent").requests(cpu="1").on("r1"),
)


def test_preemptable_running_tasks_on_ordinary_nodes_are_victims_one_per_job() -> None:
    session, plugin = open_session(*RUNNING_ON_N1, opted_out("urgent").requests(cpu="1"))
    candidates = sorted(session.tasks.values(), key=lambda t: t.key)

    victims = plugin.select_preemptees(task_of(session, "default/urgent"), candidates)

    assert keys(victims) == ["default/batch-0", "default/other-0"]


def test_a_running_pod_without_the_preemptable_annotation_is_a_victim() -> None:
    # Volcano's TaskInfo.Preemptable is true without the key (GetPodPreemptable, since 1.7).
    session, plugin = open_session(
        pod("plain").requests(cpu="1").on("n1"),
        opted_out("steady").requests(cpu="1").on("n1"),
        opted_out("urgent").requests(cpu="1"),
    )
    candidates = sorted(session.tasks.values(), key=lambda t: t.key)

    victims = plugin.select_preemptees(task_of(session, "default/urgent"), candidates)

    assert keys(victims) == ["default/plain"]


def test_a_preemptable_preemptor_takes_no_victims() -> None:
    session, plugin = open_session(*RUNNING_ON_N1, preemptable("greedy").requests(cpu="1"))
    candidates = list(session.tasks.values())

    assert plugin.select_preemptees(task_of(session, "default/greedy"), candidates) == ()


def test_a_preemptor_without_the_preemptable_annotation_takes_no_victims() -> None:
    # Preemptable by default, so Volcano's tdm rejects it as it rejects an annotated one.
    session, plugin = open_session(*RUNNING_ON_N1, pod("plain").requests(cpu="1"))
    candidates = list(session.tasks.values())

    assert plugin.select_preemptees(task_of(session, "default/plain"), candidates) == ()


@pytest.mark.parametrize(
    ("annotation", "value", "victims"),
    [
        pytest.param("volcano.sh/jdb-min-available", "1", 2, id="min-available"),
        pytest.param("volcano.sh/jdb-min-available", "50%", 1, id="min-available-percent"),
        pytest.param("volcano.sh/jdb-min-available", "5", 0, id="below-min-available"),
        pytest.param("volcano.sh/jdb-max-unavailable", "2", 1, id="max-unavailable"),
        pytest.param("volcano.sh/jdb-max-unavailable", "100%", 3, id="max-unavailable-percent"),
        pytest.param("volcano.sh/jdb-max-unavailable", "many", 0, id="malformed"),
    ],
)
def test_a_job_budget_caps_its_victims(annotation: str, value: str, victims: int) -> None:
    # Four tasks: three running preemptable ones on n1, one pending.
    job = podgroup("job").min_member(1).annotate(annotation, value)
    tasks = [preemptable(f"job-{i}").group("job").requests(cpu="1").on("n1") for i in range(3)]
    session, plugin = open_session(
        job, *tasks, preemptable("job-3").group("job").requests(cpu="1"), opted_out("urgent")
    )
    candidates = sorted(session.tasks.values(), key=lambda t: t.key)

    chosen = plugin.select_preemptees(task_of(session, "default/urgent"), candidates)

    assert keys(chosen) == [f"default/job-{i}" for i in range(victims)]


# --- victims on closed zones ----------------------------------------------------------------------
ON_R2 = (
    podgroup("night").min_member(1),
    preemptable("night-0").group("night").requests(cpu="1").on("r2"),
    preemptable("night-1").group("night").requests(cpu="1").on("r2"),
    preemptable("solo").requests(cpu="1").on("r2"),
    opted_out("pinned").requests(cpu="1").on("r2"),
    preemptable("day").requests(cpu="1").on("r1"),
)


def test_a_closed_zone_gives_back_its_preemptable_tasks_one_per_job() -> None:
    session, plugin = open_session(*ON_R2)
    candidates = sorted(session.tasks.values(), key=lambda t: t.key)

    victims = plugin.propose_victims(candidates)

    assert keys(victims) == ["default/night-0", "default/solo"]
    assert session.findings.victim_notes == {
        "default/night-0": ("tdm", "revocable zone rz2 of node r2 is closed (22:00-06:00)"),
        "default/solo": ("tdm", "revocable zone rz2 of node r2 is closed (22:00-06:00)"),
    }


def test_a_closed_zone_gives_back_a_pod_without_the_preemptable_annotation_too() -> None:
    # Preemptable by default (Volcano's TaskInfo.Preemptable), though it may not use the zone:
    # it got there some other way (another scheduler, or before the node was made revocable).
    session, plugin = open_session(
        pod("plain").requests(cpu="1").on("r2"), opted_out("pinned").requests(cpu="1").on("r2")
    )
    candidates = sorted(session.tasks.values(), key=lambda t: t.key)

    assert keys(plugin.propose_victims(candidates)) == ["default/plain"]


SHUFFLE_POLICY = """actions: "shuffle"
tiers:
- plugins:
  - name: tdm
    arguments:
      tdm.revocable-zone.rz2: 22:00-06:00
"""


@pytest.mark.parametrize(("budget", "evicted"), [("3", 3), ("1", 1)])
def test_shuffle_evicts_what_an_explicit_budget_allows_beyond_its_per_node_cap(
    budget: str, evicted: int
) -> None:
    # Four running preemptable pods of one job on the closed zone's node r2; the job's budget
    # (jdb-max-unavailable) is the rule, not shuffle's maxEvictionsPerNode (default 2).
    job = podgroup("night").min_member(1).annotate("volcano.sh/jdb-max-unavailable", budget)
    tasks = [preemptable(f"night-{i}").group("night").requests(cpu="1").on("r2") for i in range(4)]
    pipeline = catalog.load_pipeline(SHUFFLE_POLICY)

    report = cycle.run_cycle(snapshot(*NODES, job, *tasks), pipeline, clock=FixedClock(NOON))

    assert [e.pod for e in report.result.evictions] == [
        f"default/night-{i}" for i in range(evicted)
    ]
    assert {e.strategy for e in report.result.evictions} == {"tdm"}


def test_an_open_zone_keeps_its_tasks() -> None:
    session, plugin = open_session(*ON_R2, now=clock(23))

    assert keys(plugin.propose_victims(list(session.tasks.values()))) == ["default/day"]


def test_victims_are_looked_for_at_most_once_per_eviction_period() -> None:
    pipeline = catalog.load_pipeline(POLICY)
    snap = snapshot(*NODES, *ON_R2)

    def victims_at(now: dt.datetime) -> list[str]:
        session = sessions.open_session(snap, pipeline, now=now)
        plugin = session.plugins["tdm"]
        assert isinstance(plugin, Tdm)
        candidates = sorted(session.tasks.values(), key=lambda t: t.key)
        return keys(plugin.propose_victims(candidates))

    assert victims_at(NOON) == ["default/night-0", "default/solo"]
    assert victims_at(NOON + dt.timedelta(minutes=4, seconds=59)) == []
    assert victims_at(NOON + dt.timedelta(minutes=5)) == ["default/night-0", "default/solo"]


# --- jobs -----------------------------------------------------------------------------------------
def test_non_preemptable_jobs_go_first() -> None:
    session, plugin = open_session(
        podgroup("spot").annotate("volcano.sh/preemptable", "true"), podgroup("steady")
    )
    spot, steady = session.jobs["default/spot"], session.jobs["default/steady"]

    assert plugin.compare_jobs(steady, spot) == -1
    assert plugin.compare_jobs(spot, steady) == 1
    assert plugin.compare_jobs(spot, spot) == 0


def test_a_job_is_pipelined_once_placed_and_pipelined_tasks_reach_min_member() -> None:
    session, plugin = open_session(
        podgroup("gang").min_member(2),
        pod("gang-0").group("gang").requests(cpu="1").on("n1"),
        pod("gang-1").group("gang").requests(cpu="1"),
    )
    job = session.jobs["default/gang"]

    assert plugin.vote_pipelined(job) is Vote.REJECT
    session.statement().pipeline(task_of(session, "default/gang-1"), 0)
    assert plugin.vote_pipelined(job) is Vote.PERMIT


def test_only_non_preemptable_jobs_with_pending_tasks_starve() -> None:
    session, plugin = open_session(
        podgroup("spot").annotate("volcano.sh/preemptable", "true"),
        pod("spot-0").group("spot"),
        podgroup("steady"),
        pod("steady-0").group("steady"),
        podgroup("done"),
        pod("done-0").group("done").on("n1"),
        preemptable("lone"),
        pod("plain"),
    )
    starving = {k for k, job in session.jobs.items() if plugin.is_job_starving(job)}

    # A job is preemptable only when its PodGroup (a lone pod: the pod) says so, unlike a pod:
    # Volcano's JobInfo.Preemptable is false without the key.
    assert starving == {"default/steady", "default/podgroup-default/plain"}
    assert session.tasks["default/done-0"].status is TaskStatus.RUNNING


# --- arguments ------------------------------------------------------------------------------------
def test_the_arguments_give_windows_and_the_eviction_period() -> None:
    factory = tdm.build({"tdm.revocable-zone.rz1": "10:00-21:00", "tdm.evict.period": "90s"})

    assert factory.windows == {"rz1": Window(600, 1260, "10:00-21:00")}
    assert factory.evict_period == 90.0
    assert tdm.build({}).evict_period == 60.0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param(
            {"tdm.revocable-zone.rz1": "10-21"},
            "plugin tdm: arguments.tdm.revocable-zone.rz1: must be a time window like "
            "'10:00-21:00', got '10-21'",
            id="window",
        ),
        pytest.param(
            {"tdm.revocable-zone.": "10:00-11:00"},
            "plugin tdm: arguments.tdm.revocable-zone.: must name a zone after "
            "'tdm.revocable-zone.'",
            id="no-zone",
        ),
        pytest.param(
            {"tdm.revocable-zone.rz1": 10},
            "plugin tdm: arguments.tdm.revocable-zone.rz1: must be a string, got 10",
            id="not-a-string",
        ),
        pytest.param(
            {"tdm.evict.period": "often"},
            "plugin tdm: arguments.tdm.evict.period: must be a duration like '30s', '5m', "
            "'1h30m' or '500ms', got 'often'",
            id="period",
        ),
        pytest.param(
            {"tdm.evict.max-num": 2},
            "plugin tdm: arguments.tdm.evict.max-num: unknown argument; did you mean "
            "'tdm.evict.period'?",
            id="unknown",
        ),
    ],
)
def test_bad_arguments_are_errors_naming_plugin_and_argument(
    arguments: dict[str, object], message: str
) -> None:
    with pytest.raises(PluginArgsError) as caught:
        tdm.build(arguments)

    assert caught.value.problems == (message,)


def test_a_bad_window_fails_the_policy() -> None:
    with pytest.raises(PolicyError, match=r"tdm\.revocable-zone\.rz2: must hold times"):
        sessions.open_session(snapshot(), policy=POLICY.replace("22:00-06:00", "22:00-26:00"))


def test_the_volcano_documented_arguments_build() -> None:
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "policies"
    text = (fixture / "volcano-plugin-arguments.yaml").read_text(encoding="utf-8")
    pipeline = catalog.load_pipeline(text)
    [factory] = [e.factory for tier in pipeline.tiers for e in tier if e.factory.name == "tdm"]

    assert isinstance(factory, tdm.Factory)
    assert factory.windows == {
        "rz1": Window(600, 1260, "10:00-21:00"),
        "rz2": Window(720, 840, "12:00-14:00"),
    }
    assert factory.evict_period == 60.0


def test_without_revocable_nodes_answers_are_shared_per_template() -> None:
    plain = sessions.open_session(snapshot(node("n1"), pod("p")), policy=POLICY, now=NOON)
    session, revocable = open_session(pod("p"))
    plugin = plain.plugins["tdm"]

    assert isinstance(plugin, Tdm)
    assert (plugin.node_local, revocable.node_local) == (True, False)
    assert [h.plugin for h in plain.placer.global_filters] == []
    assert [h.plugin for h in session.placer.global_filters] == ["tdm"]
