"""binpack: Volcano's BinPackingScore, pinned with hand-computed numbers and with Volcano's own
table (binpack_test.go TestNode); the vectorised score equals Volcano's formula written node by
node."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from vscheduler.conf.parse import parse_policy
from vscheduler.errors import PolicyError
from vscheduler.framework.registry import Pipeline, Registry, build
from vscheduler.framework.session import Session
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.resources import Resources
from vscheduler.model.status import TaskStatus
from vscheduler.plugins import binpack
from vscheduler.testing import sessions
from vscheduler.testing.builders import NodeBuilder, PodBuilder, node, pod, snapshot

REGISTRY = Registry(plugins={binpack.NAME: binpack.build}, actions={})
GPU = {"binpack.resources": "nvidia.com/gpu"}


def policy(arguments: dict[str, object]) -> str:
    text = 'actions: ""\ntiers:\n- plugins:\n  - name: binpack\n'
    if arguments:
        text += "    arguments:\n" + "".join(f"      {k}: {v}\n" for k, v in arguments.items())
    return text


def pipeline(text: str) -> Pipeline:
    parsed = parse_policy(text, known_actions=(), known_plugins=REGISTRY.plugins)
    return build(parsed, REGISTRY)


def open_session(snap: ClusterSnapshot, arguments: dict[str, object]) -> Session:
    return sessions.open_session(snap, pipeline(policy(arguments)))


def scores(
    nodes: list[NodeBuilder], p: PodBuilder, *others: PodBuilder, **arguments: object
) -> list[float]:
    session = open_session(snapshot(*nodes, p, *others), arguments)
    found = session.plugins[binpack.NAME]
    assert isinstance(found, binpack.Binpack)
    task = session.tasks[p.build().uid]
    result: list[float] = found.score_nodes(task, np.arange(len(nodes))).tolist()
    one_by_one = [found.score_nodes(task, np.array([i])).tolist() for i in range(len(nodes))]
    assert one_by_one == [[score] for score in result]  # one node is scored in scalars
    return result


N4 = node("n").resources(cpu="4", memory="8Gi")
N4_GPU = node("n").resources(cpu="4", memory="8Gi", nvidia_com_gpu=4)
USED_1CPU = pod("r").requests(cpu="1").on("n")
USED_1CPU_1GPU = pod("r").requests(cpu="1", nvidia_com_gpu=1).on("n")
TASK = pod("p").requests(cpu="1", memory="2Gi")
TASK_GPU = pod("p").requests(cpu="1", memory="2Gi", nvidia_com_gpu=1)


@pytest.mark.parametrize(
    ("n", "p", "used", "arguments", "expected"),
    [
        # cpu (1000+1000)/4000 = 0.5, memory 2Gi/8Gi = 0.25: (0.5+0.25)/2 * 100 = 37.5
        pytest.param(N4, TASK, USED_1CPU, {}, 37.5, id="the brief example"),
        # (3*0.5 + 1*0.25) / 4 * 100 * 10 = 437.5
        pytest.param(
            N4,
            TASK,
            USED_1CPU,
            {"binpack.weight": 10, "binpack.cpu": 3},
            437.5,
            id="resource weights and the plugin weight",
        ),
        # cpu 0.5, memory 0.25, gpu 2 * 2/4 = 1.0: 1.75 / 4 * 100 = 43.75
        pytest.param(
            N4_GPU,
            TASK_GPU,
            USED_1CPU_1GPU,
            {**GPU, "binpack.resources.nvidia.com/gpu": 2},
            43.75,
            id="an extra resource",
        ),
        pytest.param(
            N4_GPU, TASK_GPU, USED_1CPU_1GPU, {}, 37.5, id="a resource not listed does not count"
        ),
        # only cpu requested: 0.5 / 1 * 100
        pytest.param(
            N4,
            pod("p").requests(cpu="1"),
            USED_1CPU,
            {},
            50.0,
            id="a resource the task does not request contributes nothing",
        ),
        # cpu 1000+4000 > 4000: the whole node scores 0 (Volcano returns 0 at the first overflow)
        pytest.param(
            N4,
            pod("p").requests(cpu="4", memory="2Gi"),
            USED_1CPU,
            {},
            0.0,
            id="a request beyond allocatable scores the whole node 0",
        ),
        # cpu overflows but weighs 0: not checked; memory 2Gi/8Gi = 0.25: 0.25 / 1 * 100
        pytest.param(
            N4,
            pod("p").requests(cpu="4", memory="2Gi"),
            USED_1CPU,
            {"binpack.cpu": 0},
            25.0,
            id="an overflow of a resource of weight 0 does not count",
        ),
        # gpu missing on the node: 0 with weight 2: (0.5 + 0.25 + 0) / 4 * 100
        pytest.param(
            N4,
            TASK_GPU,
            USED_1CPU,
            {**GPU, "binpack.resources.nvidia.com/gpu": 2},
            18.75,
            id="a node without the resource scores 0 for it",
        ),
        pytest.param(
            N4, TASK, USED_1CPU, {"binpack.cpu": 0, "binpack.memory": 0}, 0.0, id="all weights 0"
        ),
        pytest.param(
            N4, TASK, USED_1CPU, {"binpack.cpu": -5}, 37.5, id="a negative resource weight means 1"
        ),
    ],
)
def test_binpack_score(
    n: NodeBuilder, p: PodBuilder, used: PodBuilder, arguments: dict[str, object], expected: float
) -> None:
    assert scores([n], p, used, **arguments) == [expected]


def test_fuller_nodes_score_higher() -> None:
    nodes = [node("empty"), node("half"), node("n")]
    running = [
        pod("h").requests(cpu="2", memory="4Gi").on("half"),
        pod("f").requests(cpu="3", memory="6Gi").on("n"),
    ]
    assert scores(nodes, TASK, *running) == [
        (0.25 + 0.25) / 2 * 100,
        (0.75 + 0.75) / 2 * 100,
        (1.0 + 1.0) / 2 * 100,
    ]


def test_weight_zero_registers_nothing() -> None:
    session = open_session(snapshot(N4, TASK), {"binpack.weight": 0})
    assert not hasattr(session.plugins[binpack.NAME], "score_nodes")
    assert not session.dispatch.has("nodeOrder")


def test_arguments_defaults_and_errors() -> None:
    assert binpack.build({}).weights == binpack.Weights(weight=1, resources={"cpu": 1, "memory": 1})
    weights = binpack.build(
        {
            "binpack.weight": 10,
            "binpack.cpu": 5,
            "binpack.memory": 1,
            "binpack.resources": "nvidia.com/gpu, example.com/foo",
            "binpack.resources.nvidia.com/gpu": 2,
            "binpack.resources.example.com/foo": 3,
        }
    ).weights
    assert weights == binpack.Weights(
        weight=10, resources={"nvidia.com/gpu": 2, "example.com/foo": 3, "cpu": 5, "memory": 1}
    )
    assert binpack.build({"binpack.resources": "a.io/x"}).weights.resources["a.io/x"] == 1
    with pytest.raises(PolicyError) as caught:
        pipeline(policy({"binpack.resources.nvidia.com/gpu": 2, "binpack.cpus": 1}))
    text = str(caught.value)
    assert "arguments.binpack.resources.nvidia.com/gpu: unknown argument" in text
    assert "arguments.binpack.cpus: unknown argument" in text


# --- vectorised equals Volcano's formula node by node -------------------------------------------
def volcano_binpack(
    req: Resources, used: Resources, alloc: Resources, w: dict[str, int], weight: int
) -> float:
    score, weight_sum = 0.0, 0
    for name, request in req.items():
        if name not in w:
            continue
        capacity, final = float(alloc.get(name)), float(request) + float(used.get(name))
        if capacity != 0 and w[name] != 0:
            if final > capacity:
                return 0.0
            score += final * float(w[name]) / capacity
        weight_sum += w[name]
    if weight_sum > 0:
        score /= float(weight_sum)
    return score * float(100 * weight)


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_vectorised_score_equals_volcanos_formula(data: st.DataObject) -> None:
    amount = st.integers(0, 12)
    weights = {
        "cpu": data.draw(st.integers(0, 3)),
        "memory": data.draw(st.integers(0, 3)),
        "nvidia.com/gpu": data.draw(st.integers(0, 3)),
    }
    weight = data.draw(st.integers(1, 5))
    nodes, running = [], []
    for i in range(data.draw(st.integers(1, 8))):
        nodes.append(
            node(f"n{i}").resources(
                cpu=data.draw(amount),
                memory=f"{data.draw(amount)}Gi",
                nvidia_com_gpu=data.draw(st.integers(0, 4)),
            )
        )
        running.append(
            pod(f"r{i}")
            .requests(
                cpu=data.draw(amount),
                memory=f"{data.draw(amount)}Mi",
                nvidia_com_gpu=data.draw(st.integers(0, 2)),
            )
            .on(f"n{i}")
        )
    p = pod("p").requests(
        cpu=data.draw(amount),
        memory=f"{data.draw(amount)}Mi",
        nvidia_com_gpu=data.draw(st.integers(0, 2)),
    )
    arguments = {
        "binpack.weight": weight,
        "binpack.cpu": weights["cpu"],
        "binpack.memory": weights["memory"],
        **GPU,
        "binpack.resources.nvidia.com/gpu": weights["nvidia.com/gpu"],
    }
    got = scores(nodes, p, *running, **arguments)
    expected = [
        volcano_binpack(p.build().resreq, r.build().resreq, n.build().allocatable, weights, weight)
        for n, r in zip(nodes, running, strict=True)
    ]
    assert got == expected


# --- Volcano's table ---------------------------------------------------------------------------
VOLCANO_NODES = [
    node("n1").resources(cpu="2", memory="4Gi", pods=10),
    node("n2").resources(cpu="4", memory="16Gi", nvidia_com_gpu=4, pods=10),
    node("n3").resources(cpu="2", memory="4Gi", example_com_foo=16, pods=10),
]
VOLCANO_PODS = {
    "p1": pod("p1").requests(cpu="1", memory="1Gi").on("n1", TaskStatus.BOUND),
    "p2": pod("p2").requests(cpu="1.5", memory="0Gi").on("n3", TaskStatus.BOUND),
    "p3": pod("p3").requests(cpu="2", memory="10Gi", nvidia_com_gpu=2),
    "p4": pod("p4").requests(cpu="3", memory="4Gi", example_com_foo=3),
}
VOLCANO_ARGUMENTS: list[dict[str, object]] = [
    {
        "binpack.weight": 10,
        "binpack.cpu": 2,
        "binpack.memory": 3,
        "binpack.resources": '"nvidia.com/gpu, example.com/foo"',
        "binpack.resources.nvidia.com/gpu": 7,
        "binpack.resources.example.com/foo": 8,
    },
    {
        "binpack.weight": 1,
        "binpack.cpu": 1,
        "binpack.memory": 1,
        "binpack.resources": "nvidia.com/gpu",
        "binpack.resources.nvidia.com/gpu": 23,
    },
]
VOLCANO_EXPECTED: list[dict[str, list[float]]] = [
    {
        "p1": [700, 137.5, 0],  # n3 holds p2's 1.5 cpu: 1 more overflows its 2
        "p2": [0, 375, 0],
        "p3": [0, 531.25, 0],
        "p4": [0, 173.076923076, 0],  # 3 cpu overflow n1 and n3
    },
    {
        "p1": [75, 15.625, 0],
        "p2": [0, 37.5, 0],
        "p3": [0, 50.5, 0],
        "p4": [0, 50, 0],
    },
]


@pytest.mark.parametrize("case", [0, 1])
def test_volcanos_binpack_table(case: int) -> None:
    """Volcano's binpack_test.go TestNode, both cases: every task scored on every node."""
    snap = snapshot(*VOLCANO_NODES, *VOLCANO_PODS.values())
    session = open_session(snap, VOLCANO_ARGUMENTS[case])
    found = session.plugins[binpack.NAME]
    assert isinstance(found, binpack.Binpack)
    for name, expected in VOLCANO_EXPECTED[case].items():
        task = session.tasks[VOLCANO_PODS[name].build().uid]
        got = found.score_nodes(task, np.arange(len(VOLCANO_NODES))).tolist()
        assert got == pytest.approx(expected, abs=1e-8), name
