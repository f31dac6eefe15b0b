"""usage: Volcano's load filter and score over measured node usage, pinned with hand-computed
numbers; fail-open on missing or old data; arguments checked whole."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.conf.parse import parse_policy
from vscheduler.errors import PluginArgsError, PolicyError
from vscheduler.framework.registry import Pipeline, Registry, build
from vscheduler.framework.results import Code, Status
from vscheduler.framework.session import Session
from vscheduler.model.facts import NodeUsage
from vscheduler.plugins import usage
from vscheduler.testing import sessions
from vscheduler.testing.builders import START, Item, node, pod, snapshot

REGISTRY = Registry(plugins={usage.NAME: usage.build}, actions={})
TASK = pod("p").requests(cpu="1")
CPU_HIGH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, usage.CPU_REASON, "usage")
MEMORY_HIGH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, usage.MEMORY_REASON, "usage")


def load(
    name: str,
    cpu: float | None,
    memory: float | None,
    *,
    age: float = 30.0,
    period: str = "10m",
    stale: bool = False,
) -> NodeUsage:
    """`name`'s usage measured `age` seconds before the session's clock."""
    values: dict[str, dict[str, float]] = {}
    if cpu is not None:
        values["cpu"] = {period: cpu}
    if memory is not None:
        values["memory"] = {period: memory}
    when = START - dt.timedelta(seconds=age)
    return NodeUsage(node=name, usage=values, metrics_time=when, stale=stale)


def policy(arguments: str = "", flags: str = "") -> str:
    text = 'actions: ""\ntiers:\n- plugins:\n  - name: usage\n'
    text += "".join(f"    {flag}\n" for flag in flags.split(",") if flag)
    if arguments:
        text += "    arguments:\n" + "".join(f"      {line}\n" for line in arguments.split(";"))
    return text


def pipeline(text: str) -> Pipeline:
    return build(parse_policy(text, known_actions=(), known_plugins=REGISTRY.plugins), REGISTRY)


def open_session(*items: Item, arguments: str = "", flags: str = "") -> Session:
    snap = snapshot(*items, TASK)
    return sessions.open_session(snap, pipeline(policy(arguments, flags)))


def plugin(session: Session) -> usage.Usage:
    found = session.plugins[usage.NAME]
    assert isinstance(found, usage.Usage)
    return found


def verdicts(session: Session) -> tuple[list[bool], list[float]]:
    """(filter result, score) of every node, straight from the plugin."""
    found, task = plugin(session), session.tasks[TASK.build().uid]
    idx = np.arange(len(session.ledger), dtype=np.int64)
    return found.filter_nodes(task, idx).tolist(), found.score_nodes(task, idx).tolist()


def node_status(session: Session, name: str) -> Status | None:
    task = session.tasks[TASK.build().uid]
    return session.placer.node_status(task, session.ledger.index[name])


# --- score --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        # ((100-40)/100*1 + (100-60)/100*1) / 2 * 100 * 5
        pytest.param("", 250.0, id="Volcano's default weights"),
        # (0.6*3 + 0.4*1) / 4 * 100 * 2
        pytest.param("usage.weight: 2;cpu.weight: 3;memory.weight: 1", 110.0, id="weights"),
        # cpu only: 0.6 / 1 * 100 * 5
        pytest.param("memory.weight: 0", 300.0, id="memory weighted 0"),
        pytest.param("usage.weight: 0", 0.0, id="usage weighted 0"),
    ],
)
def test_the_score_is_volcanos_formula(arguments: str, expected: float) -> None:
    session = open_session(node("n1"), load("n1", 40.0, 60.0), arguments=arguments)
    assert verdicts(session) == ([True], [expected])


def test_less_loaded_nodes_score_higher_and_nodes_without_usage_score_zero() -> None:
    session = open_session(
        node("busy"),
        node("idle"),
        node("unknown"),
        load("busy", 70.0, 50.0),
        load("idle", 10.0, 20.0),
    )
    # busy: (0.3 + 0.5) / 2 * 500 = 200; idle: (0.9 + 0.8) / 2 * 500 = 425
    assert verdicts(session) == ([True, True, True], [200.0, 425.0, 0.0])


# --- predicate ----------------------------------------------------------------------------------
def test_a_node_over_a_threshold_fails_with_volcanos_reason() -> None:
    session = open_session(
        node("cpu"),
        node("mem"),
        node("both"),
        node("edge"),
        load("cpu", 95.0, 10.0),
        load("mem", 10.0, 85.0),
        load("both", 90.0, 90.0),
        load("edge", 80.0, 80.0),
    )

    passed, _ = verdicts(session)
    assert passed == [False, False, False, True]
    assert node_status(session, "cpu") == CPU_HIGH
    assert node_status(session, "mem") == MEMORY_HIGH
    assert node_status(session, "both") == CPU_HIGH
    assert node_status(session, "edge") is None


def test_thresholds_may_be_floats_and_memory_is_another_name_for_mem() -> None:
    session = open_session(
        node("n1"),
        node("n2"),
        load("n1", 50.5, 10.0),
        load("n2", 10.0, 60.25),
        arguments="thresholds: {cpu: 50.25, memory: 60.5}",
    )
    assert verdicts(session)[0] == [False, True]
    assert node_status(session, "n1") == CPU_HIGH


def test_a_failing_node_is_reported_in_the_unschedulable_message() -> None:
    snap = snapshot(node("n1"), load("n1", 99.0, 10.0), TASK)
    built = catalog.load_pipeline('actions: "allocate"\ntiers:\n- plugins:\n  - name: usage\n')

    report = cycle.run_cycle(snap, built, clock=FixedClock(START))

    assert report.result.unschedulable == {
        # Volcano's reason ends in a period, and so does its message: the two stay, as there
        "default/p": "0/1 nodes are available: 1 the CPU load of the node exceeds the upper limit.."
    }


# --- fail-open ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "item",
    [
        pytest.param(None, id="no usage for the node"),
        pytest.param(load("n1", 99.0, 99.0, period="5m"), id="usage of another period only"),
        pytest.param(load("n1", 99.0, 99.0, age=301.0), id="usage older than 5 minutes"),
        pytest.param(load("n1", 99.0, 99.0, age=301.0, stale=True), id="old usage flagged stale"),
    ],
)
def test_without_usable_data_a_node_passes_and_scores_zero(item: NodeUsage | None) -> None:
    items: list[Item] = [node("n1")] if item is None else [node("n1"), item]
    session = open_session(*items)
    assert verdicts(session) == ([True], [0.0])
    assert node_status(session, "n1") is None


def test_usage_exactly_5_minutes_old_or_stale_but_recent_is_still_used() -> None:
    session = open_session(
        node("n1"),
        node("n2"),
        load("n1", 99.0, 10.0, age=300.0),
        load("n2", 99.0, 10.0, age=60.0, stale=True),
    )
    assert verdicts(session)[0] == [False, False]


def test_a_resource_without_a_value_passes_its_check_and_makes_the_score_zero() -> None:
    session = open_session(
        node("n1"),
        node("n2"),
        load("n1", 95.0, None),
        load("n2", None, 50.0),
    )
    assert verdicts(session) == ([False, True], [0.0, 0.0])


def test_the_period_argument_chooses_the_value_read() -> None:
    measured = NodeUsage(
        node="n1",
        usage={"cpu": {"10m": 99.0, "1h": 20.0}, "memory": {"10m": 99.0, "1h": 40.0}},
        metrics_time=START,
    )
    session = open_session(node("n1"), measured, arguments="period: 1h")
    # (0.8 + 0.6) / 2 * 500
    assert verdicts(session) == ([True], [350.0])


# --- flags --------------------------------------------------------------------------------------
def test_enable_predicate_false_turns_the_filter_off_but_keeps_the_score() -> None:
    session = open_session(node("n1"), load("n1", 99.0, 60.0), flags="enablePredicate: false")
    assert not session.dispatch.has("predicate")
    assert not session.dispatch.has("predicateReason")
    assert session.dispatch.has("nodeOrder")
    assert node_status(session, "n1") is None


def test_enable_node_order_false_turns_the_score_off() -> None:
    session = open_session(node("n1"), load("n1", 10.0, 10.0), flags="enableNodeOrder: false")
    assert session.dispatch.has("predicate")
    assert not session.dispatch.has("nodeOrder")


# --- arguments ----------------------------------------------------------------------------------
def test_arguments_default_to_volcanos() -> None:
    assert usage.build({}).settings == usage.Settings(
        usage_weight=5,
        cpu_weight=1,
        memory_weight=1,
        cpu_threshold=80.0,
        memory_threshold=80.0,
        period="10m",
    )


def test_volcanos_documented_arguments_are_read() -> None:
    settings_ = usage.build(
        {
            "usage.weight": 5,
            "cpu.weight": 2,
            "memory.weight": 3,
            "thresholds": {"cpu": 70, "mem": 65.5},
            "period": "5m",
        }
    ).settings
    assert settings_ == usage.Settings(
        usage_weight=5,
        cpu_weight=2,
        memory_weight=3,
        cpu_threshold=70.0,
        memory_threshold=65.5,
        period="5m",
    )


def test_every_wrong_argument_is_reported_at_once() -> None:
    with pytest.raises(PluginArgsError) as caught:
        usage.build(
            {
                "usage.weight": -1,
                "cpu.wieght": 2,
                "thresholds": {"cpu": 120, "mem": 50, "memory": 50, "gpu": 10},
                "period": "",
            }
        )
    assert caught.value.problems == (
        "plugin usage: arguments.usage.weight: must be an integer >= 0, got -1",
        "plugin usage: arguments.cpu.wieght: unknown argument; did you mean 'cpu.weight'?",
        "plugin usage: arguments.thresholds.cpu: must be a number >= 0 and <= 100, got 120",
        "plugin usage: arguments.thresholds.gpu: unknown argument; did you mean 'thresholds.cpu'?",
        "plugin usage: arguments.thresholds.memory: is another name for mem; give only one",
        "plugin usage: arguments.period: must not be empty (Volcano's is '10m')",
    )


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        pytest.param(
            {"thresholds": [80, 80]},
            "plugin usage: arguments.thresholds: must be a mapping like {cpu: 80, mem: 80},"
            " got a list",
            id="thresholds not a mapping",
        ),
        pytest.param(
            {"cpu.weight": 0, "memory.weight": 0},
            "plugin usage: arguments.cpu.weight: must not be 0 when memory.weight is 0",
            id="no resource weighted",
        ),
        pytest.param(
            {"thresholds": {"mem": "high"}},
            "plugin usage: arguments.thresholds.mem: must be a number >= 0 and <= 100, got 'high'",
            id="threshold not a number",
        ),
    ],
)
def test_a_malformed_argument_names_the_plugin_and_the_argument(
    arguments: dict[str, object], problem: str
) -> None:
    with pytest.raises(PluginArgsError) as caught:
        usage.build(arguments)
    assert caught.value.problems == (problem,)


def test_a_policy_with_a_bad_usage_argument_does_not_load() -> None:
    with pytest.raises(PolicyError) as caught:
        pipeline(policy("thresholds: {cpu: eighty}"))
    assert "plugin usage: arguments.thresholds.cpu: must be a number" in str(caught.value)


# --- vectorised equals Volcano's formula node by node -------------------------------------------
def volcano_usage(
    cpu: float | None, memory: float | None, weights: tuple[int, int, int]
) -> tuple[bool, float]:
    usage_weight, cpu_weight, memory_weight = weights
    passed = (cpu or 0.0) <= 80.0 and (memory or 0.0) <= 80.0
    if cpu is None or memory is None:
        return passed, 0.0
    score = (100 - cpu) / 100 * cpu_weight + (100 - memory) / 100 * memory_weight
    return passed, score / (cpu_weight + memory_weight) * 100 * usage_weight


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_vectorised_answers_equal_volcanos_node_by_node(data: st.DataObject) -> None:
    percent = st.none() | st.floats(0, 100)
    weights = (
        data.draw(st.integers(0, 5)),
        data.draw(st.integers(1, 3)),
        data.draw(st.integers(0, 3)),
    )
    items: list[Item] = []
    expected: list[tuple[bool, float]] = []
    for i in range(data.draw(st.integers(1, 6))):
        cpu, memory = data.draw(percent), data.draw(percent)
        items += [node(f"n{i}"), load(f"n{i}", cpu, memory)]
        expected.append(volcano_usage(cpu, memory, weights))
    arguments = f"usage.weight: {weights[0]};cpu.weight: {weights[1]};memory.weight: {weights[2]}"

    passed, scores = verdicts(open_session(*items, arguments=arguments))

    assert passed == [p for p, _ in expected]
    assert scores == pytest.approx([s for _, s in expected])
