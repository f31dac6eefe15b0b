"""nodeorder: kube's score formulas, pinned with hand-computed numbers, weighted as Volcano weights
them; the vectorised scores equal a node-by-node evaluation written as kube writes it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from vscheduler.conf.parse import parse_policy
from vscheduler.errors import PolicyError
from vscheduler.framework.registry import Pipeline, Registry, build
from vscheduler.framework.session import Session
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import Requirement, SelectorTerm
from vscheduler.plugins import nodeorder
from vscheduler.plugins.predicates import checks
from vscheduler.testing import sessions
from vscheduler.testing.builders import (
    NodeBuilder,
    PodBuilder,
    expr,
    node,
    pod,
    snapshot,
    term,
)

REGISTRY = Registry(plugins={nodeorder.NAME: nodeorder.build}, actions={})


def policy(**arguments: int) -> str:
    text = 'actions: ""\ntiers:\n- plugins:\n  - name: nodeorder\n'
    if arguments:
        text += "    arguments:\n" + "".join(f"      {k}: {v}\n" for k, v in arguments.items())
    return text


def pipeline(text: str) -> Pipeline:
    parsed = parse_policy(text, known_actions=(), known_plugins=REGISTRY.plugins)
    return build(parsed, REGISTRY)


def open_session(snap: ClusterSnapshot, arguments: dict[str, int] | None = None) -> Session:
    return sessions.open_session(snap, pipeline(policy(**(arguments or {}))))


def plugin(session: Session) -> nodeorder.NodeOrder:
    found = session.plugins[nodeorder.NAME]
    assert isinstance(found, nodeorder.NodeOrder)
    return found


def scores(
    nodes: list[NodeBuilder], p: PodBuilder, *others: PodBuilder, **arguments: int
) -> list[float]:
    session = open_session(snapshot(*nodes, p, *others), arguments)
    task = session.tasks[p.build().uid]
    found: list[float] = plugin(session).score_nodes(task, np.arange(len(nodes))).tolist()
    one_by_one = [
        plugin(session).score_nodes(task, np.array([i])).tolist() for i in range(len(nodes))
    ]
    assert one_by_one == [[score] for score in found]  # one node is scored in scalars
    return found


def batch(
    nodes: list[NodeBuilder], p: PodBuilder, idx: list[int], **arguments: int
) -> list[float] | None:
    session = open_session(snapshot(*nodes, p), arguments)
    task = session.tasks[p.build().uid]
    found = plugin(session).batch_score_nodes(task, np.array(idx, dtype=np.int64))
    return None if found is None else found.tolist()


def only(score: str, **more: int) -> dict[str, int]:
    base = {
        "leastrequested.weight": 0,
        "mostrequested.weight": 0,
        "balancedresource.weight": 0,
        "nodeaffinity.weight": 0,
        "imagelocality.weight": 0,
    }
    return base | {score: 1} | more


# --- requested-to-capacity scores --------------------------------------------------------------
N4 = node("n").resources(cpu="4", memory="8Gi")
USED_1CPU = pod("r").requests(cpu="1").on("n")
TASK = pod("p").requests(cpu="1", memory="2Gi")


def test_the_brief_example_node_4cpu_8gi_with_1cpu_used_and_a_1cpu_2gi_task() -> None:
    # least: cpu (4000-2000)*100//4000 = 50, memory (8Gi-2Gi)*100//8Gi = 75, (50+75)//2 = 62
    assert scores([N4], TASK, USED_1CPU, **only("leastrequested.weight")) == [62.0]
    # most: cpu 2000*100//4000 = 50, memory 25, (50+25)//2 = 37
    assert scores([N4], TASK, USED_1CPU, **only("mostrequested.weight")) == [37.0]
    # balanced: fractions 0.5 and 0.25, std |0.5-0.25|/2 = 0.125, int(87.5) = 87
    assert scores([N4], TASK, USED_1CPU, **only("balancedresource.weight")) == [87.0]
    # Volcano's defaults: least 1 + balanced 1 (+ nodeaffinity, imagelocality: nothing here)
    assert scores([N4], TASK, USED_1CPU) == [62.0 + 87.0]


@pytest.mark.parametrize(
    ("n", "p", "least", "most", "balanced"),
    [
        # cpu 2000*100//3000 = 66 (66.7), memory 7Gi*100//8Gi = 87 (87.5): (66+87)//2 = 76;
        # most 33 and 12: 45//2 = 22; balanced |1/3 - 1/8| / 2 = 0.10417: int(89.58) = 89
        pytest.param(
            node("n").resources(cpu="3", memory="8Gi"),
            pod("p").requests(cpu="1", memory="1Gi"),
            76,
            22,
            89,
            id="integer division truncates as in Go",
        ),
        # cpu asks 5 of 4: least gives 0 for cpu, most counts it as full, balanced caps it at 1
        pytest.param(
            N4,
            pod("p").requests(cpu="5", memory="4Gi"),
            25,
            75,
            75,
            id="a request beyond allocatable",
        ),
        pytest.param(
            N4,
            pod("p").requests(cpu="1"),
            87,
            12,
            87,
            id="a task without memory still scores memory",
        ),
        pytest.param(
            node("n").resources(cpu="4", memory="8Gi", nvidia_com_gpu=4),
            pod("p").requests(cpu="2", memory="2Gi", nvidia_com_gpu=1),
            62,
            37,
            88,
            id="balanced counts the GPU when the task requests one: std of 1/2 1/4 1/4",
        ),
        pytest.param(
            node("n").resources(cpu="4", memory="8Gi", nvidia_com_gpu=4),
            pod("p").requests(cpu="2", memory="2Gi"),
            62,
            37,
            87,
            id="balanced leaves the GPU out when the task requests none",
        ),
    ],
)
def test_requested_to_capacity_scores(
    n: NodeBuilder, p: PodBuilder, least: int, most: int, balanced: int
) -> None:
    assert scores([n], p, **only("leastrequested.weight")) == [least]
    assert scores([n], p, **only("mostrequested.weight")) == [most]
    assert scores([n], p, **only("balancedresource.weight")) == [balanced]


def test_weights_multiply_each_score() -> None:
    weighted = {"leastrequested.weight": 2, "mostrequested.weight": 3, "balancedresource.weight": 4}
    assert scores([N4], TASK, USED_1CPU, **weighted) == [2 * 62 + 3 * 37 + 4 * 87]


def test_a_placement_in_the_session_changes_the_node_scores() -> None:
    session = open_session(
        snapshot(N4, TASK, pod("q").requests(cpu="1", memory="2Gi")), only("leastrequested.weight")
    )
    p, q = session.tasks["default/p"], session.tasks["default/q"]
    everywhere = np.arange(1)
    assert plugin(session).score_nodes(q, everywhere).tolist() == [(75 + 75) // 2]
    session.statement().allocate(p, 0)
    assert plugin(session).score_nodes(q, everywhere).tolist() == [(50 + 50) // 2]


# --- node affinity and image locality -------------------------------------------------------------
def test_nodeaffinity_sums_the_matching_preferred_weights_unnormalised() -> None:
    p = pod("p").prefer(5, term(expr("zone", "In", "a"))).prefer(3, term(expr("disk", "Exists")))
    p = p.prefer(7, term(expr("zone", "In", "c"), expr("disk", "Exists")))
    nodes = [
        node("both").labels(zone="a", disk="ssd"),
        node("zone").labels(zone="a"),
        node("disk").labels(disk="ssd"),
        node("none").labels(zone="b"),
    ]
    assert scores(nodes, p, **only("nodeaffinity.weight")) == [8, 5, 3, 0]
    assert scores(nodes, p, **only("nodeaffinity.weight", **{"nodeaffinity.weight": 2})) == [
        16,
        10,
        6,
        0,
    ]


def test_imagelocality_scales_sizes_by_spread_and_clamps() -> None:
    mib = 1024 * 1024
    nodes = [
        node("n1").image("nginx:latest", 500 * mib),
        node("n2"),
        node("n3").image("big:1", 3000 * mib).image("nginx:latest", 500 * mib),
    ]
    # nginx on 2 of 3 nodes: int(500Mi * 2/3) = 333.33Mi -> 100 * (333.33-23)Mi // 977Mi = 31
    assert scores(nodes, pod("p").images("nginx"), **only("imagelocality.weight")) == [31, 0, 31]
    # two images: max = 2000Mi; n1 100 * (333.33-23)/1977 = 15.7 -> 15;
    # n3 adds int(3000Mi * 1/3) = 1000Mi: 100 * (1333.33-23)/1977 = 66.3 -> 66
    both = pod("p").images("nginx", "big:1")
    assert scores(nodes, both, **only("imagelocality.weight")) == [15, 0, 66]


# --- taint toleration (batch) --------------------------------------------------------------------
TAINTS = [
    node("n0"),
    node("n1").taint("a", "1", "PreferNoSchedule"),
    node("n2").taint("a", "1", "PreferNoSchedule").taint("b", "", "PreferNoSchedule"),
    node("n3").taint("c", "", "NoSchedule"),
]


@pytest.mark.parametrize(
    ("p", "idx", "expected"),
    [
        pytest.param(pod("p"), [0, 1, 2, 3], [300, 150, 0, 300], id="reverse normalised times 3"),
        pytest.param(pod("p"), [0, 1], [300, 0], id="normalised over the nodes given"),
        pytest.param(pod("p"), [0, 3], None, id="no PreferNoSchedule taint: None"),
        pytest.param(
            pod("p").tolerate("a", "1", effect="PreferNoSchedule"),
            [0, 1, 2],
            [300, 300, 0],
            id="a PreferNoSchedule toleration counts",
        ),
        pytest.param(
            pod("p").tolerate("a", operator="Exists"),
            [0, 1, 2],
            [300, 300, 0],
            id="a toleration without effect counts",
        ),
        pytest.param(
            pod("p").tolerate("a", "1", effect="NoSchedule"),
            [0, 1, 2],
            [300, 150, 0],
            id="a NoSchedule toleration does not",
        ),
    ],
)
def test_tainttoleration(p: PodBuilder, idx: list[int], expected: list[float] | None) -> None:
    assert batch(TAINTS, p, idx) == expected


def test_tainttoleration_rounds_like_kube_and_honours_its_weight() -> None:
    nodes = [
        node("n0"),
        node("n1").taint("a", "", "PreferNoSchedule"),
        node("n3")
        .taint("a", "", "PreferNoSchedule")
        .taint("b", "", "PreferNoSchedule")
        .taint("c", "", "PreferNoSchedule"),
    ]
    # counts 0, 1, 3: 100 - 100*1//3 = 67
    assert batch(nodes, pod("p"), [0, 1, 2], **{"tainttoleration.weight": 1}) == [100, 67, 0]
    assert batch(nodes, pod("p"), [0, 1, 2], **{"tainttoleration.weight": 0}) is None


# --- arguments ------------------------------------------------------------------------------------
def test_defaults_are_volcanos() -> None:
    assert nodeorder.build({}).weights == nodeorder.Weights(
        least_requested=1,
        most_requested=0,
        balanced_resource=1,
        node_affinity=2,
        image_locality=1,
        taint_toleration=3,
        pod_affinity=2,
        pod_topology_spread=2,
        selector_spread=0,
        volume_binding=1,
    )


def test_every_weight_argument_is_accepted_and_unknown_ones_are_errors() -> None:
    keys = [key for key, _ in nodeorder.ARGUMENTS]
    weights = nodeorder.build({key: i for i, key in enumerate(keys)}).weights
    assert [getattr(weights, field) for _, field in nodeorder.ARGUMENTS] == list(range(len(keys)))
    with pytest.raises(PolicyError, match=r"leastrequest\.weight: unknown argument"):
        pipeline(policy(**{"leastrequest.weight": 1}))


# --- vectorised equals one node at a time, written as kube writes it -----------------------------
def kube_least(req: list[int], alloc: list[int]) -> int:
    total = weights = 0
    for r, a in zip(req, alloc, strict=True):
        if a == 0:
            continue
        total += 0 if r > a else (a - r) * 100 // a
        weights += 1
    return total // weights if weights else 0


def kube_most(req: list[int], alloc: list[int]) -> int:
    total = weights = 0
    for r, a in zip(req, alloc, strict=True):
        if a == 0:
            continue
        total += min(r, a) * 100 // a
        weights += 1
    return total // weights if weights else 0


def kube_balanced(req: list[int], alloc: list[int]) -> int:
    fractions = [min(r / a, 1.0) for r, a in zip(req, alloc, strict=True) if a]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * 100)


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_vectorised_scores_equal_kubes_formulas_node_by_node(data: st.DataObject) -> None:
    amount = st.integers(0, 16)
    nodes, running = [], []
    for i in range(data.draw(st.integers(1, 8))):
        cpu, mem, gpu = data.draw(amount), data.draw(amount), data.draw(st.integers(0, 4))
        nodes.append(node(f"n{i}").resources(cpu=cpu, memory=f"{mem}Gi", nvidia_com_gpu=gpu))
        used = data.draw(st.tuples(amount, amount, st.integers(0, 2)))
        running.append(
            pod(f"r{i}")
            .requests(cpu=used[0], memory=f"{used[1]}Gi", nvidia_com_gpu=used[2])
            .on(f"n{i}")
        )
    want = data.draw(st.tuples(st.integers(0, 8), st.integers(0, 8), st.integers(0, 2)))
    p = pod("p").requests(cpu=want[0], memory=f"{want[1]}Gi", nvidia_com_gpu=want[2])
    weights = {
        "leastrequested.weight": 1,
        "mostrequested.weight": 10**3,
        "balancedresource.weight": 10**6,
    }
    got = scores(nodes, p, *running, **weights)
    expected = []
    for n, r in zip(nodes, running, strict=True):
        alloc = n.build().allocatable
        occupied = r.build().resreq
        names = ["cpu", "memory"] + (["nvidia.com/gpu"] if want[2] else [])
        req = [occupied.get(k) + p.build().resreq.get(k) for k in names]
        cap = [alloc.get(k) for k in names]
        expected.append(
            kube_least(req[:2], cap[:2])
            + 10**3 * kube_most(req[:2], cap[:2])
            + 10**6 * kube_balanced(req, cap)
        )
    assert got == expected
    session = open_session(snapshot(*nodes, p, *running), weights)
    subset = np.arange(len(nodes))[1::2]
    task = session.tasks["default/p"]
    assert plugin(session).score_nodes(task, subset).tolist() == [expected[i] for i in subset]


# --- preferred terms match exactly as the predicates plugin matches required ones ---------------
requirement_st = st.builds(
    Requirement,
    key=st.sampled_from(("zone", "cores")),
    operator=st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bad")),
    values=st.lists(
        st.sampled_from(("a", "8", "+8", "-1", "x", "99999999999999999999")), max_size=2
    ).map(tuple),
)
field_st = st.builds(
    Requirement,
    key=st.sampled_from(("metadata.name", "spec.other")),
    operator=st.sampled_from(("In", "NotIn", "Exists")),
    values=st.lists(st.sampled_from(("n", "m", "")), max_size=2).map(tuple),
)


@settings(max_examples=300, deadline=None)
@given(
    st.builds(
        SelectorTerm,
        match_expressions=st.lists(requirement_st, max_size=3).map(tuple),
        match_fields=st.lists(field_st, max_size=1).map(tuple),
    ),
    st.dictionaries(
        st.sampled_from(("zone", "cores")), st.sampled_from(("a", "8", "3", "x", "+4"))
    ),
    st.sampled_from(("n", "m")),
)
def test_preferred_term_matching_agrees_with_the_predicates_checks(
    t: SelectorTerm, labels: dict[str, str], name: str
) -> None:
    assert nodeorder.term_matches(t, labels, name) == checks.term_matches(t, labels, name)
