"""resource-strategy-fit: Volcano's score tables (resource_strategy_fit_test.go TestScore,
TestResourceStrategyFitPlugin, Test_findResourceConfigWithPrefix, Test_calculateWeight;
sra_test.go TestNode, TestArguments; proportional_test.go Test_checkNodeResourceIsProportional)
transcribed, each formula pinned on a small case computed by hand, every argument problem pinned,
any argument values never crash the load, and the vectorised score equal to Volcano's `Score`
and `sraScore` written node by node."""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from vscheduler.conf.parse import parse_policy
from vscheduler.errors import PluginArgsError, PolicyError
from vscheduler.framework.registry import Pipeline, Registry, build
from vscheduler.framework.results import Code
from vscheduler.framework.session import Session
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.resources import Resources
from vscheduler.plugins import resource_strategy_fit as rsf
from vscheduler.testing import sessions
from vscheduler.testing.builders import NodeBuilder, PodBuilder, node, pod, snapshot

REGISTRY = Registry(plugins={rsf.NAME: rsf.build}, actions={})
TYPE_KEY = "volcano.sh/resource-strategy-scoring-type"
WEIGHT_KEY = "volcano.sh/resource-strategy-weight"


def policy(arguments: Mapping[str, object]) -> str:
    entry = {"name": rsf.NAME, "arguments": arguments} if arguments else {"name": rsf.NAME}
    return f'actions: ""\ntiers:\n- plugins: [{json.dumps(entry)}]\n'


def pipeline(arguments: Mapping[str, object]) -> Pipeline:
    parsed = parse_policy(policy(arguments), known_actions=(), known_plugins=REGISTRY.plugins)
    return build(parsed, REGISTRY)


def open_session(snap: ClusterSnapshot, arguments: Mapping[str, object]) -> Session:
    return sessions.open_session(snap, pipeline(arguments))


def score_table(
    nodes: list[NodeBuilder], pods: list[PodBuilder], arguments: Mapping[str, object]
) -> dict[str, dict[str, float]]:
    """Every pending pod's score on every node, by pod name and node name."""
    session = open_session(snapshot(*nodes, *pods), arguments)
    plugin = session.plugins[rsf.NAME]
    assert isinstance(plugin, rsf.Scorer)
    idx = np.arange(len(nodes))
    names = session.ledger.names
    out: dict[str, dict[str, float]] = {}
    for p in pods:
        facts = p.build()
        if facts.node_name:
            continue
        row = plugin.score_nodes(session.tasks[facts.uid], idx).tolist()
        out[facts.name] = dict(zip(names, row, strict=True))
    return out


def approx(table: dict[str, dict[str, float]]) -> dict[str, dict[str, object]]:
    return {p: {n: pytest.approx(v, abs=1e-6) for n, v in row.items()} for p, row in table.items()}


# --- Volcano's sra_test.go TestNode -------------------------------------------------------------

SRA_PODS = [
    pod("p1").requests(cpu="1", memory="1Gi"),
    pod("p2").requests(cpu="1.5", memory="0Gi", nvidia_com_t4=2),
    pod("p3").requests(cpu="2", memory="4Gi", nvidia_com_a10=2),
    pod("p4").requests(cpu="3", memory="4Gi", nvidia_com_t4=1, nvidia_com_a10=3),
]
SRA_NODES = [
    node("n1").resources(cpu="32", memory="64Gi", pods=10),
    node("n2").resources(cpu="8", memory="16Gi", pods=10, nvidia_com_t4=16),
    node("n3").resources(cpu="8", memory="16Gi", pods=10, nvidia_com_a10=16),
    node("n4").resources(cpu="8", memory="16Gi", pods=10, nvidia_com_t4=8, nvidia_com_a10=16),
]
T4_MOST_CPU_LEAST = {
    "nvidia.com/t4": {"type": "MostAllocated", "weight": 3},
    "cpu": {"type": "LeastAllocated", "weight": 1},
}
STRATEGY_ROWS = {
    "p1": {"n1": 775, "n2": 700, "n3": 700, "n4": 700},
    "p2": {"n1": 190.625, "n2": 237.5, "n3": 162.5, "n4": 312.5},
    "p3": {"n1": 750, "n2": 600, "n3": 600, "n4": 600},
    "p4": {"n1": 181.25, "n2": 162.5, "n3": 125, "n4": 200},
}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param(
            {
                "resourceStrategyFitWeight": 0,
                "sra": {
                    "enable": True,
                    "resources": "nvidia.com/t4, nvidia.com/a10",
                    "weight": 5,
                    "resourceWeight": {"nvidia.com/t4": 2, "nvidia.com/a10": 3},
                },
            },
            {
                "p1": {"n1": 500, "n2": 300, "n3": 200, "n4": 0},
                "p2": {"n1": 0, "n2": 300, "n3": 0, "n4": 0},
                "p3": {"n1": 0, "n2": 0, "n3": 200, "n4": 0},
                "p4": {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
            },
            id="case1: single job score result in multi-GPU resource",
        ),
        pytest.param(
            {
                "resourceStrategyFitWeight": 0,
                "sra": {
                    "enable": True,
                    "resources": "nvidia.com/t4",
                    "weight": 5,
                    "resourceWeight": {"nvidia.com/t4": 2},
                },
            },
            {
                "p1": {"n1": 500, "n2": 0, "n3": 500, "n4": 0},
                "p2": {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
                "p3": {"n1": 0, "n2": 0, "n3": 500, "n4": 0},
                "p4": {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
            },
            id="case2: single job score result in single GPU resource",
        ),
        pytest.param(
            {
                "resourceStrategyFitWeight": 8,
                "resources": T4_MOST_CPU_LEAST,
                "sra": {
                    "enable": True,
                    "resources": "nvidia.com/t4",
                    "weight": 0,
                    "resourceWeight": {"nvidia.com/t4": 2},
                },
            },
            STRATEGY_ROWS,
            id="case3: sra weight 0 and resourceStrategyFit",
        ),
        pytest.param(
            {
                "resourceStrategyFitWeight": 8,
                "resources": T4_MOST_CPU_LEAST,
                "sra": {
                    "enable": True,
                    "resources": "nvidia.com/t4",
                    "weight": 5,
                    "resourceWeight": {"nvidia.com/t4": 2},
                },
            },
            {
                "p1": {"n1": 1275, "n2": 700, "n3": 1200, "n4": 700},
                "p2": STRATEGY_ROWS["p2"],
                "p3": {"n1": 750, "n2": 600, "n3": 1100, "n4": 600},
                "p4": STRATEGY_ROWS["p4"],
            },
            id="case4: sra policy and resourceStrategyFit",
        ),
    ],
)
def test_volcano_sra_table(
    arguments: Mapping[str, object], expected: dict[str, dict[str, float]]
) -> None:
    """sra_test.go TestNode, its four cases."""
    assert score_table(SRA_NODES, SRA_PODS, arguments) == approx(expected)


# --- Volcano's resource_strategy_fit_test.go TestResourceStrategyFitPlugin --------------------


def test_volcano_plugin_table_single_resources() -> None:
    """TestResourceStrategyFitPlugin, its first "single job" case: gpu MostAllocated and
    example.com/foo LeastAllocated; cpu and memory have no strategy."""
    nodes = [
        node("n1").resources(cpu="4", memory="4Gi", pods=10, nvidia_com_gpu=10),
        node("n2").resources(cpu="4", memory="4Gi", pods=10, nvidia_com_gpu=5),
        node("n3").resources(cpu="4", memory="4Gi", pods=10, example_com_foo=10),
        node("n4").resources(cpu="4", memory="4Gi", pods=10, example_com_foo=5),
    ]
    pods = [
        pod("p1").requests(cpu="1", memory="1Gi", example_com_foo=2),
        pod("p2").requests(cpu="1", memory="1Gi", example_com_foo=3),
        pod("p3").requests(cpu="1", memory="10Gi", nvidia_com_gpu=2),
        pod("p4").requests(cpu="1", memory="1Gi", nvidia_com_gpu=3),
    ]
    arguments = {
        "resourceStrategyFitWeight": 10,
        "resources": {
            "nvidia.com/gpu": {"type": "MostAllocated", "weight": 1},
            "example.com/foo": {"type": "LeastAllocated", "weight": 1},
        },
    }
    assert score_table(nodes, pods, arguments) == approx(
        {
            "p1": {"n1": 0, "n2": 0, "n3": 800, "n4": 600},
            "p2": {"n1": 0, "n2": 0, "n3": 700, "n4": 400},
            "p3": {"n1": 200, "n2": 400, "n3": 0, "n4": 0},
            "p4": {"n1": 300, "n2": 600, "n3": 0, "n4": 0},
        }
    )


def test_volcano_plugin_table_two_resources() -> None:
    """TestResourceStrategyFitPlugin, its second case (n6 lists example.com/foo twice in the Go
    test; the second value, 10, stands)."""
    nodes = [
        node("n5").resources(cpu="4", memory="4Gi", pods=10, nvidia_com_gpu=10, example_com_foo=5),
        node("n6").resources(cpu="4", memory="4Gi", pods=10, example_com_foo=10),
    ]
    pods = [pod("p5").requests(cpu="1", memory="1Gi", nvidia_com_gpu=4, example_com_foo=4)]
    arguments = {
        "resourceStrategyFitWeight": 10,
        "resources": {
            "nvidia.com/gpu": {"type": "MostAllocated", "weight": 1},
            "example.com/foo": {"type": "LeastAllocated", "weight": 2},
        },
    }
    assert score_table(nodes, pods, arguments) == approx(
        {"p5": {"n5": 266.66666666, "n6": 399.99999999}}
    )


# --- Volcano's resource_strategy_fit_test.go TestScore -----------------------------------------

LEAST_1_1 = {
    "cpu": {"type": "LeastAllocated", "weight": 1},
    "memory": {"type": "LeastAllocated", "weight": 1},
}
MOST_1_1 = {
    "cpu": {"type": "MostAllocated", "weight": 1},
    "memory": {"type": "MostAllocated", "weight": 1},
}


def mixed(cpu: str, cpu_weight: int, memory: str, memory_weight: int) -> dict[str, object]:
    return {
        "cpu": {"type": cpu, "weight": cpu_weight},
        "memory": {"type": memory, "weight": memory_weight},
    }


def one_score(
    task: PodBuilder, allocatable: tuple[str, str], weight: int, resources: Mapping[str, object]
) -> float:
    """TestScore's setting: the node has allocatable (milli-cpu, bytes) and 200m cpu and 200
    bytes used by a running pod."""
    cpu, memory = allocatable
    n = node("n").resources(cpu=cpu, memory=memory)
    used = pod("used").requests(cpu="200m", memory="200").on("n")
    arguments = {"resourceStrategyFitWeight": weight, "resources": resources}
    return score_table([n], [used, task], arguments)[task.build().name]["n"]


def task_100(**annotations: str) -> PodBuilder:
    p = pod("t").requests(cpu="100m", memory="100")
    for key, value in annotations.items():
        p = p.annotate(key, value)
    return p


@pytest.mark.parametrize(
    ("task", "allocatable", "weight", "resources", "expected"),
    [
        pytest.param(task_100(), ("500m", "500"), 10, LEAST_1_1, 400, id="test1"),
        pytest.param(task_100(), ("400m", "400"), 10, LEAST_1_1, 250, id="test2"),
        pytest.param(task_100(), ("500m", "500"), 10, MOST_1_1, 600, id="test3"),
        pytest.param(task_100(), ("400m", "400"), 10, MOST_1_1, 750, id="test4"),
        pytest.param(
            task_100(),
            ("500m", "500"),
            10,
            mixed("LeastAllocated", 2, "MostAllocated", 1),
            466.66666667,
            id="test5",
        ),
        pytest.param(
            task_100(),
            ("500m", "500"),
            10,
            mixed("LeastAllocated", 1, "MostAllocated", 2),
            533.33333333,
            id="test6",
        ),
        pytest.param(
            pod("t").requests(memory="100"),
            ("500m", "500"),
            10,
            mixed("LeastAllocated", 1, "MostAllocated", 2),
            600,
            id="test7",
        ),
        pytest.param(
            task_100(),
            ("500m", "500"),
            10,
            {"memory": {"type": "MostAllocated", "weight": 2}},
            600,
            id="test9",
        ),
        pytest.param(
            task_100(**{TYPE_KEY: "LeastAllocated", WEIGHT_KEY: '{"cpu": 2, "memory": 1}'}),
            ("500m", "500"),
            10,
            LEAST_1_1,
            400,
            id="pod-level-scoring-least-allocated",
        ),
        pytest.param(
            task_100(**{TYPE_KEY: "MostAllocated", WEIGHT_KEY: '{"cpu": 1, "memory": 2}'}),
            ("500m", "500"),
            10,
            LEAST_1_1,
            600,
            id="pod-level-scoring-most-allocated",
        ),
        pytest.param(
            task_100(**{TYPE_KEY: "LeastAllocated", WEIGHT_KEY: '{"cpu": 2}'}),
            ("500m", "500"),
            10,
            LEAST_1_1,
            400,
            id="pod-level-scoring-missing-resource-weight",
        ),
        pytest.param(
            task_100(),
            ("300m", "300"),
            10,
            LEAST_1_1,
            0,
            id="node-fully-allocated",
        ),
        pytest.param(
            task_100(),
            ("500m", "500"),
            10,
            mixed("LeastAllocated", 3, "MostAllocated", 1),
            450,
            id="mixed-scoring-strategies",
        ),
        pytest.param(
            task_100(),
            ("500m", "500"),
            20,
            mixed("LeastAllocated", 5, "LeastAllocated", 5),
            800,
            id="high-weight-scenario",
        ),
    ],
)
def test_volcano_score_table(
    task: PodBuilder,
    allocatable: tuple[str, str],
    weight: int,
    resources: Mapping[str, object],
    expected: float,
) -> None:
    """TestScore, the cases a cluster can hold (its node-fully-allocated case is used 500 of
    500 with a request of 100: here allocatable 300 and used 200 + 100 over it; test8's node of
    0 cpu holding a running pod and zero-resources-requested's pod of no request are left
    out; pod-level-scoring-invalid-json is below: the annotation is ignored, not scored 0)."""
    assert one_score(task, allocatable, weight, resources) == pytest.approx(expected, abs=1e-6)


def test_a_malformed_annotation_pair_is_ignored_and_the_policy_applies() -> None:
    """pod-level-scoring-invalid-json: Volcano scores 0; here the pair is ignored (and reported
    on the pod, tests/unit/convert/test_scoring_annotations.py), so the policy's LeastAllocated
    cpu and memory give test1's 400."""
    task = task_100(**{TYPE_KEY: "LeastAllocated", WEIGHT_KEY: "invalid-json"})
    assert task.build().scoring is None
    assert one_score(task, ("500m", "500"), 10, LEAST_1_1) == pytest.approx(400)


# --- each formula on a small case computed by hand ---------------------------------------------


def test_strategy_formula_by_hand() -> None:
    # node 4 cpu, 8Gi, 4 gpus; used 1 cpu, 2Gi, 1 gpu; task 1 cpu, 2Gi, 1 gpu.
    # cpu LeastAllocated w2: (4000 - 2000) * 2 / 4000 = 1.0
    # nvidia.com/* MostAllocated w1 (wildcard): (1 + 1) * 1 / 4 = 0.5
    # memory: no strategy. (1.0 + 0.5) / 3 * 100 * 4 = 200
    n = node("n").resources(cpu="4", memory="8Gi", nvidia_com_gpu=4)
    used = pod("u").requests(cpu="1", memory="2Gi", nvidia_com_gpu=1).on("n")
    task = pod("t").requests(cpu="1", memory="2Gi", nvidia_com_gpu=1)
    arguments = {
        "resourceStrategyFitWeight": 4,
        "resources": {
            "cpu": {"type": "LeastAllocated", "weight": 2},
            "nvidia.com/*": {"type": "MostAllocated"},
            "nvidia.*": {"type": "LeastAllocated", "weight": 7},
        },
    }
    assert score_table([n], [used, task], arguments)["t"]["n"] == pytest.approx(200)


def test_overflow_in_one_scored_resource_scores_the_node_0() -> None:
    # gpu: 3 used + 2 > 4: the node scores 0 though cpu alone would give 75 * 10.
    n = node("n").resources(cpu="4", memory="8Gi", nvidia_com_gpu=4)
    used = (
        pod("u")
        .requests(nvidia_com_gpu=3)
        .on(
            "n",
        )
    )
    task = pod("t").requests(cpu="1", nvidia_com_gpu=2)
    arguments = {"resources": {"cpu": {}, "nvidia.com/gpu": {"type": "MostAllocated"}}}
    assert score_table([n], [used, task], arguments)["t"]["n"] == 0


def test_the_pod_slot_is_a_resource_a_strategy_may_name() -> None:
    # pods LeastAllocated: (10 - (2 + 1)) / 10 = 0.7; * 100 * 10 = 700.
    n = node("n").resources(cpu="4", memory="8Gi", pods=10)
    used = [pod(f"u{i}").requests(cpu="100m").on("n") for i in range(2)]
    task = pod("t").requests(cpu="100m")
    arguments = {"resources": {"pods": {"type": "LeastAllocated"}}}
    assert score_table([n], [*used, task], arguments)["t"]["n"] == pytest.approx(700)


def test_sra_formula_by_hand() -> None:
    # sra resources a.com/x (w1), b.com/y (w3): W = 4.
    # n1 has neither: (1 - 0/4) * 100 * 2 = 200; n2 has b.com/y: (1 - 3/4) * 200 = 50;
    # n3 lacks memory the task requests: 0.
    nodes = [
        node("n1").resources(cpu="4", memory="8Gi"),
        node("n2").resources(cpu="4", memory="8Gi", b_com_y=1),
        node("n3").resources(cpu="4"),
    ]
    task = pod("t").requests(cpu="1", memory="1Gi")
    arguments = {
        "resourceStrategyFitWeight": 0,
        "sra": {
            "enable": True,
            "resources": "a.com/x,b.com/y",
            "weight": 2,
            "resourceWeight": {"b.com/y": 3},
        },
    }
    assert score_table(nodes, [task], arguments) == approx({"t": {"n1": 200, "n2": 50, "n3": 0}})


def test_sra_disabled_or_without_weight_adds_nothing() -> None:
    n = node("n").resources(cpu="4", memory="8Gi")
    task = pod("t").requests(cpu="1", memory="2Gi")
    # LeastAllocated cpu 3/4, memory 6/8: 75 * 10 = 750 in both.
    off = {"sra": {"enable": False, "resources": "a.com/x", "weight": 5}}
    no_weight = {"sra": {"enable": True, "resources": "a.com/x"}}
    assert score_table([n], [task], off)["t"]["n"] == pytest.approx(750)
    assert score_table([n], [task], no_weight)["t"]["n"] == pytest.approx(750)


# --- proportional ------------------------------------------------------------------------------

PROPORTIONAL = {
    "resourceStrategyFitWeight": 0,
    "proportional": {
        "enable": True,
        "resources": "nvidia.com/gpu",
        "resourceProportion": {"nvidia.com/gpu.cpu": 4, "nvidia.com/gpu.memory": 4},
    },
}


@pytest.mark.parametrize(
    ("task", "n", "passes"),
    [
        pytest.param(
            pod("t").requests(cpu="4", memory="4G"),
            node("n").resources(cpu="30", memory="30G", nvidia_com_gpu=6),
            True,
            id="cpu_task_less_than_reserved_resource",
        ),
        pytest.param(
            pod("t").requests(cpu="10", memory="10G"),
            node("n").resources(cpu="30", memory="30G", nvidia_com_gpu=6),
            False,
            id="cpu_task_greater_than_reserved_resource",
        ),
        pytest.param(
            pod("t").requests(cpu="10", memory="10G", nvidia_com_gpu=1),
            node("n").resources(cpu="30", memory="30G", nvidia_com_gpu=6),
            True,
            id="gpu_task_no_proportional_check",
        ),
        pytest.param(
            pod("t").requests(cpu="10", memory="10G"),
            node("n").resources(cpu="26", memory="26G", nvidia_com_gpu=2),
            True,
            id="cpu_task_less_than_idle_resource",
        ),
    ],
)
def test_volcano_proportional_table(task: PodBuilder, n: NodeBuilder, passes: bool) -> None:
    """proportional_test.go Test_checkNodeResourceIsProportional (gpu: 4 cores and 4 GB kept
    per idle gpu)."""
    session = open_session(snapshot(n, task), PROPORTIONAL)
    plugin = session.plugins[rsf.NAME]
    assert isinstance(plugin, rsf.Filter)
    assert not isinstance(plugin, rsf.Scorer)
    state = session.tasks[task.build().uid]
    assert plugin.filter_nodes(state, np.arange(1)).tolist() == [passes]
    reason = plugin.explain_node(state, 0)
    if passes:
        assert reason is None
    else:
        assert reason is not None
        assert reason.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert reason.reason == "proportional of resource nvidia.com/gpu check failed"


def test_proportional_memory_by_hand_and_nodes_without_the_resource() -> None:
    # gpu.memory 2 (GB per idle gpu), cpu 1 by default. n1: 2 idle gpus keep 2 cores and 4 GB:
    # 8 - 1 = 7 cores, 5G - 1.5G = 3.5 GB < 4 GB: fails. n2 has no gpu: not checked.
    nodes = [
        node("n1").resources(cpu="8", memory="5G", nvidia_com_gpu=2),
        node("n2").resources(cpu="8", memory="1.6G"),
    ]
    task = pod("t").requests(cpu="1", memory="1.5G")
    arguments = {
        "proportional": {
            "enable": True,
            "resources": "nvidia.com/gpu",
            "resourceProportion": {"nvidia.com/gpu.memory": 2},
        }
    }
    session = open_session(snapshot(*nodes, task), arguments)
    plugin = session.plugins[rsf.NAME]
    assert isinstance(plugin, rsf.ScorerAndFilter)
    state = session.tasks[task.build().uid]
    assert plugin.filter_nodes(state, np.arange(2)).tolist() == [False, True]


def test_nothing_switched_on_opens_an_inert_plugin() -> None:
    session = open_session(snapshot(node("n")), {"resourceStrategyFitWeight": 0})
    assert isinstance(session.plugins[rsf.NAME], rsf.Inert)


# --- wildcard lookup (Test_findResourceConfigWithPrefix) ---------------------------------------


@pytest.mark.parametrize(
    ("name", "resources", "expected"),
    [
        pytest.param(
            "nvidia.com/gpu",
            {"nvidia.com/gpu": rsf.Strategy(True, 3), "nvidia.com/*": rsf.Strategy(False, 1)},
            rsf.Strategy(True, 3),
            id="exact_match_priority",
        ),
        pytest.param(
            "nvidia.com/gpu/v100",
            {"nvidia.com/gpu/*": rsf.Strategy(True, 2), "nvidia.com/*": rsf.Strategy(False, 1)},
            rsf.Strategy(True, 2),
            id="longest_prefix_match",
        ),
        pytest.param(
            "example.com/foo",
            {"nvidia.com/gpu/*": rsf.Strategy(True, 2)},
            None,
            id="no_match_found",
        ),
        pytest.param("any.resource", {}, None, id="empty_resources_map"),
        pytest.param(
            "cloudml.gpu/tensorflow/v2",
            {
                "cloudml.gpu/tensorflow/*": rsf.Strategy(True, 3),
                "cloudml.gpu/*": rsf.Strategy(False, 2),
                "cloudml/*": rsf.Strategy(True, 1),
            },
            rsf.Strategy(True, 3),
            id="multiple_valid_wildcards_longest_match",
        ),
    ],
)
def test_volcano_wildcard_table(
    name: str, resources: dict[str, rsf.Strategy], expected: rsf.Strategy | None
) -> None:
    """resource_strategy_fit_test.go Test_findResourceConfigWithPrefix."""
    assert rsf.strategy_for(name, resources) == expected


# --- arguments ---------------------------------------------------------------------------------

LEAST = rsf.Strategy(most=False, weight=1)


def settings_of(arguments: Mapping[str, object]) -> rsf.Settings:
    return rsf.build(arguments).settings


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param(
            {
                "resourceStrategyFitWeight": 10,
                "resources": {
                    "cpu": {"type": "MostAllocated", "weight": 1},
                    "memory": {"type": "LeastAllocated", "weight": 2},
                },
            },
            rsf.Settings(
                weight=10,
                resources={"cpu": rsf.Strategy(True, 1), "memory": rsf.Strategy(False, 2)},
            ),
            id="test1",
        ),
        pytest.param(
            {
                "resources": {
                    "cpu": {"type": "MostAllocated", "weight": 1},
                    "memory": {"type": "LeastAllocated", "weight": 2},
                }
            },
            rsf.Settings(
                weight=10,
                resources={"cpu": rsf.Strategy(True, 1), "memory": rsf.Strategy(False, 2)},
            ),
            id="test2: the plugin weight defaults to 10",
        ),
        pytest.param(
            {"resourceStrategyFitWeight": 10},
            rsf.Settings(weight=10, resources={"cpu": LEAST, "memory": LEAST}),
            id="test3: cpu and memory LeastAllocated by default",
        ),
        pytest.param(
            {"resources": {"nvidia.com/gpu/*": {"type": "MostAllocated", "weight": 3}}},
            rsf.Settings(resources={"nvidia.com/gpu/*": rsf.Strategy(True, 3)}),
            id="test5's valid pattern",
        ),
        pytest.param(
            {"resourceStrategyFitWeight": -3, "resources": {"cpu": {"weight": 0}, "x/y": None}},
            rsf.Settings(weight=10, resources={"cpu": LEAST, "x/y": LEAST}),
            id="a negative plugin weight is 10, a weight of 0 or less is 1, no type is Least",
        ),
        pytest.param(
            {"resources": {}},
            rsf.Settings(resources={"cpu": LEAST, "memory": LEAST}),
            id="empty resources are the default",
        ),
    ],
)
def test_volcano_calculate_weight(arguments: Mapping[str, object], expected: rsf.Settings) -> None:
    """Test_calculateWeight (test4 to test7's `*`, `**`, `*x` and `a*b` patterns, which Volcano
    drops with a log line, are errors here: below)."""
    assert settings_of(arguments) == expected


def test_volcano_sra_and_proportional_arguments() -> None:
    """sra_test.go TestArguments."""
    got = settings_of(
        {
            "sra": {
                "enable": True,
                "resources": "nvidia.com/t4, nvidia.com/a10",
                "weight": 3,
                "resourceWeight": {"nvidia.com/t4": 1, "nvidia.com/a10": 2},
            },
            "proportional": {
                "enable": True,
                "resources": "nvidia.com/t4, nvidia.com/a10",
                "resourceProportion": {
                    "nvidia.com/t4.cpu": 3,
                    "nvidia.com/t4.memory": 6,
                    "nvidia.com/a10.cpu": 4,
                    "nvidia.com/a10.memory": 8,
                },
            },
        }
    )
    assert got.sra_weight == 3
    assert got.sra_resources == (("nvidia.com/t4", 1), ("nvidia.com/a10", 2))
    assert got.proportional == (
        rsf.Proportion("nvidia.com/t4", 3.0, 6.0),
        rsf.Proportion("nvidia.com/a10", 4.0, 8.0),
    )


def test_disabled_parts_and_volcanos_fallbacks() -> None:
    got = settings_of(
        {
            "sra": {"resources": "a/b", "weight": 4},
            "proportional": {"enable": False, "resources": "a/b"},
        }
    )
    assert (got.sra_weight, got.sra_resources, got.proportional) == (0, (), None)
    got = settings_of(
        {
            "sra": {"enable": True, "resources": "a/b, ,c/d", "resourceWeight": {"a/b": -2}},
            "proportional": {
                "enable": "true",
                "resources": "a/b",
                "resourceProportion": {"a/b.cpu": -1, "a/b.memory": 0.5},
            },
        }
    )
    assert (got.sra_weight, got.sra_resources) == (0, (("a/b", 1), ("c/d", 1)))
    assert got.proportional == (rsf.Proportion("a/b", 1.0, 0.5),)


OWNER = "plugin resource-strategy-fit: arguments"


@pytest.mark.parametrize(
    ("arguments", "problems"),
    [
        pytest.param(
            {"resources": {"*": {"type": "MostAllocated"}}},
            [
                f"{OWNER}.resources.*: '*' alone is not supported (Volcano ignores it): use a"
                " prefix like 'nvidia.com/*'"
            ],
            id="test4's *",
        ),
        pytest.param(
            {"resources": {"cloudml.gpu**": {}, "*.com/gpu": {}, "": {}}},
            [
                f"{OWNER}.resources.cloudml.gpu**: only one '*', at the end, is supported (like"
                " 'nvidia.com/*')",
                f"{OWNER}.resources.*.com/gpu: only one '*', at the end, is supported (like"
                " 'nvidia.com/*')",
                f"{OWNER}.resources.: a resource name must not be empty",
            ],
            id="test5 to test7's patterns",
        ),
        pytest.param(
            {"ResourceStrategyFitPlusWeight": 10},
            [
                f"{OWNER}.ResourceStrategyFitPlusWeight: unknown argument; did you mean"
                " 'resourceStrategyFitWeight'?"
            ],
            id="test4's unknown key",
        ),
        pytest.param(
            {"resources": {"cpu": {"type": "MostAlocated", "wieght": 2}}},
            [
                f"{OWNER}.resources.cpu.type: must be one of 'LeastAllocated', 'MostAllocated',"
                " got 'MostAlocated'; did you mean 'MostAllocated'?",
                f"{OWNER}.resources.cpu.wieght: unknown argument; did you mean"
                " 'resources.cpu.weight'?",
            ],
            id="a misspelt type and key",
        ),
        pytest.param(
            {"resources": ["cpu"], "sra": "on", "proportional": 3},
            [
                f"{OWNER}.resources: must be a mapping like {{nvidia.com/gpu: {{type:"
                " MostAllocated, weight: 2}}, got a list",
                f"{OWNER}.sra: must be a mapping like {{enable: true, resources: nvidia.com/gpu,"
                " weight: 10}, got 'on'",
                f"{OWNER}.proportional: must be a mapping like {{enable: true, resources:"
                " nvidia.com/gpu}, got 3",
            ],
            id="sections that are no mappings",
        ),
        pytest.param(
            {
                "sra": {"enable": 1.5, "resources": "a/b", "resourceWeight": {"a/c": 1}},
                "proportional": {
                    "resources": "a/b",
                    "resourceProportion": {"a/b.gpu": 1, "a/b.cpu": "x"},
                },
            },
            [
                f"{OWNER}.sra.resourceWeight.a/c: not a resource that sra.resources lists",
                f"{OWNER}.sra.enable: must be true or false, got 1.5",
                f"{OWNER}.proportional.resourceProportion.a/b.cpu: must be a number, got 'x'",
                f"{OWNER}.proportional.resourceProportion.a/b.gpu: not a resource that"
                " proportional.resources lists",
            ],
            id="sra and proportional",
        ),
    ],
)
def test_every_problem_is_named(arguments: Mapping[str, object], problems: list[str]) -> None:
    with pytest.raises(PluginArgsError) as caught:
        rsf.build(arguments)
    assert sorted(caught.value.problems) == sorted(problems)


def test_a_policy_with_a_bad_argument_does_not_load() -> None:
    with pytest.raises(PolicyError) as caught:
        pipeline({"resources": {"*": {}}})
    assert "arguments.resources.*: '*' alone is not supported" in str(caught.value)


JSONISH = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True),
        st.sampled_from(("", "*", "cpu", "nvidia.com/*", "MostAllocated", "true", "3", "a,b")),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(
                (
                    "type",
                    "weight",
                    "enable",
                    "resources",
                    "resourceWeight",
                    "resourceProportion",
                    "cpu",
                    "a,b",
                    "nvidia.com/*",
                    "nvidia.com/gpu.cpu",
                    "*",
                )
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)
KEYS = ("resourceStrategyFitWeight", "resources", "sra", "proportional", "other")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS), JSONISH, max_size=4))
def test_any_arguments_load_or_name_the_key(arguments: dict[str, object]) -> None:
    problems: tuple[str, ...] = ()
    try:
        rsf.build(arguments)
    except PluginArgsError as err:
        problems = err.problems or ("no problem listed",)
    for problem in problems:
        assert problem.startswith(f"{OWNER}.")
        assert problem.split(": ")[1].removeprefix("arguments.").split(".")[0] in KEYS
    try:
        text = json.dumps(arguments, allow_nan=False)
    except ValueError:
        return  # NaN and infinities: no JSON (YAML reads `.nan` as a float: covered above)
    loaded: list[str] = []
    try:
        pipeline(json.loads(text))
    except PolicyError as err:
        loaded = list(err.errors)
    assert bool(loaded) == bool(problems)
    assert all(f"{OWNER}." in error for error in loaded)


# --- the vectorised score equals Volcano's loop --------------------------------------------------


def volcano_score(
    req: dict[str, float],
    used: dict[str, float],
    alloc: dict[str, float],
    s: rsf.Settings,
    override: tuple[bool, dict[str, int]] | None,
) -> float:
    """Volcano's `Score` plus `sraScore`, node by node, over plain numbers."""
    total = 0.0
    if s.weight > 0:
        score, weight_sum = 0.0, 0
        for name, request in req.items():
            if override is not None:
                if name not in override[1]:
                    continue
                most, weight = override[0], override[1][name]
            else:
                found = rsf.strategy_for(name, s.resources)
                if found is None:
                    continue
                most, weight = found.most, found.weight
            capacity, final = alloc.get(name, 0.0), request + used.get(name, 0.0)
            part = 0.0
            if weight != 0 and capacity != 0:
                if final > capacity:
                    score, weight_sum = 0.0, 0
                    break
                part = (final if most else capacity - final) * weight / capacity
            score += part
            weight_sum += weight
        else:
            if weight_sum > 0:
                score /= weight_sum
            total += score * 100 * s.weight
    if s.sra_weight > 0 and all(alloc.get(name, 0) != 0 for name in req):
        held = sum(w for name, w in s.sra_resources if alloc.get(name, 0) > 0)
        weight_sum = sum(w for _, w in s.sra_resources)
        sra = 1.0 - held / weight_sum if weight_sum > 0 else float(held)
        total += sra * 100 * s.sra_weight
    return total


def plain(resources: Resources, pods: int) -> dict[str, float]:
    return {**{k: float(v) for k, v in resources.items()}, "pods": float(pods)}


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_vectorised_score_equals_volcanos_loop(data: st.DataObject) -> None:
    amount = st.integers(0, 6)
    strategy = st.builds(
        lambda most, weight: {"type": "MostAllocated" if most else "LeastAllocated", "w": weight},
        st.booleans(),
        st.integers(-1, 3),
    )
    names = ("cpu", "memory", "nvidia.com/gpu", "nvidia.com/*", "example.com/foo", "pods")
    chosen = data.draw(st.dictionaries(st.sampled_from(names), strategy, max_size=4))
    arguments = {
        "resourceStrategyFitWeight": data.draw(st.integers(0, 3)),
        "resources": {k: {"type": v["type"], "weight": v["w"]} for k, v in chosen.items()},
        "sra": {
            "enable": True,
            "resources": "nvidia.com/gpu, example.com/foo",
            "weight": data.draw(st.integers(0, 2)),
            "resourceWeight": {"nvidia.com/gpu": data.draw(st.integers(0, 3))},
        },
    }
    s = settings_of(arguments)
    nodes, running = [], []
    for i in range(data.draw(st.integers(1, 6))):
        nodes.append(
            node(f"n{i}").resources(
                pods=data.draw(st.integers(0, 3)),
                cpu=data.draw(amount),
                memory=f"{data.draw(amount)}Gi",
                nvidia_com_gpu=data.draw(st.integers(0, 4)),
                example_com_foo=data.draw(st.integers(0, 2)),
            )
        )
        if data.draw(st.booleans()):
            running.append(
                pod(f"r{i}")
                .requests(cpu=data.draw(amount), nvidia_com_gpu=data.draw(st.integers(0, 2)))
                .on(f"n{i}")
            )
    p = pod("p").requests(
        cpu=data.draw(amount),
        memory=f"{data.draw(amount)}Gi",
        nvidia_com_gpu=data.draw(st.integers(0, 2)),
    )
    override = data.draw(
        st.none()
        | st.tuples(
            st.booleans(), st.dictionaries(st.sampled_from(names), st.integers(-2, 3), max_size=3)
        )
    )
    if override is not None:
        kind = "MostAllocated" if override[0] else "LeastAllocated"
        p = p.annotate("volcano.sh/resource-strategy-scoring-type", kind).annotate(
            "volcano.sh/resource-strategy-weight", json.dumps(override[1])
        )
    if s.weight <= 0 and s.sra_weight <= 0:
        return
    got = score_table(nodes, [*running, p], arguments)["p"]
    for n in nodes:
        facts = n.build()
        on = [r.build() for r in running if r.build().node_name == facts.name]
        used = Resources()
        for r in on:
            used = used + r.resreq
        expected = volcano_score(
            plain(p.build().resreq, 1),
            plain(used, len(on)),
            plain(facts.allocatable, facts.max_pods),
            s,
            override,
        )
        assert got[facts.name] == pytest.approx(expected, rel=1e-9, abs=1e-9), facts.name
    assert np.isfinite(list(got.values())).all()
