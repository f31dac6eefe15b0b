"""predicates: each check passes and fails with kube's or Volcano's reason; the vectorised filter
agrees with the per-node explanation; host ports follow the session's placements."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from vscheduler import cycle
from vscheduler.actions import allocate
from vscheduler.clock import FixedClock
from vscheduler.conf.parse import parse_policy
from vscheduler.errors import PolicyError
from vscheduler.framework.registry import Pipeline, Registry, build
from vscheduler.framework.results import Code, Status
from vscheduler.framework.session import Session
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import Requirement, SelectorTerm
from vscheduler.model.status import TaskStatus
from vscheduler.plugins import conformance, predicates
from vscheduler.plugins.predicates import checks
from vscheduler.testing import sessions
from vscheduler.testing.builders import (
    START,
    NodeBuilder,
    PodBuilder,
    expr,
    node,
    pod,
    snapshot,
    term,
)

POLICY = """
actions: "allocate"
tiers:
- plugins:
  - name: predicates
"""
REGISTRY = Registry(
    plugins={predicates.NAME: predicates.build, conformance.NAME: conformance.build},
    actions={allocate.NAME: allocate.build},
)


def pipeline(policy: str = POLICY) -> Pipeline:
    parsed = parse_policy(policy, known_actions=REGISTRY.actions, known_plugins=REGISTRY.plugins)
    return build(parsed, REGISTRY)


def open_session(snap: ClusterSnapshot, policy: str = POLICY) -> Session:
    return sessions.open_session(snap, pipeline(policy))


def with_arguments(**arguments: bool) -> str:
    lines = "".join(f"      predicate.{k}: {str(v).lower()}\n" for k, v in arguments.items())
    return POLICY + "    arguments:\n" + lines


def plugin(session: Session) -> predicates.Predicates:
    found = session.plugins[predicates.NAME]
    assert isinstance(found, predicates.Predicates)
    return found


def verdict(
    n: NodeBuilder, p: PodBuilder, *others: PodBuilder, policy: str = POLICY
) -> Status | None:
    """explain_node for pod `p` on node `n`, after checking filter_nodes agrees."""
    session = open_session(snapshot(n, p, *others), policy)
    task = session.tasks[p.build().uid]
    passed = bool(plugin(session).filter_nodes(task, np.array([0]))[0])
    why = plugin(session).explain_node(task, 0)
    assert passed is (why is None)
    return why


def unresolvable(reason: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


def unschedulable(reason: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reason)


TAINT_GPU = unresolvable("node(s) had untolerated taint {gpu: true}")
AFFINITY = unresolvable("node(s) didn't match Pod's node affinity/selector")
PORTS = unschedulable("node(s) didn't have free ports for the requested pod ports")


@pytest.mark.parametrize(
    ("n", "p", "expected"),
    [
        pytest.param(node("n"), pod("p"), None, id="a plain node takes a plain pod"),
        pytest.param(
            node("n").not_ready(),
            pod("p"),
            unresolvable("node(s) were not ready"),
            id="a node that is not ready takes nothing",
        ),
        pytest.param(
            node("n").unschedulable(),
            pod("p"),
            unresolvable("node(s) were unschedulable"),
            id="a cordoned node refuses",
        ),
        pytest.param(
            node("n").unschedulable(),
            pod("p").tolerate("node.kubernetes.io/unschedulable", effect="NoSchedule"),
            None,
            id="the unschedulable toleration passes a cordon",
        ),
        pytest.param(
            node("n").unschedulable(),
            pod("p").tolerate(operator="Exists"),
            None,
            id="tolerating everything passes a cordon",
        ),
        pytest.param(
            node("n").unschedulable(),
            pod("p").tolerate("node.kubernetes.io/unschedulable", effect="NoExecute"),
            unresolvable("node(s) were unschedulable"),
            id="a toleration of another effect does not pass a cordon",
        ),
    ],
)
def test_node_state_checks(n: NodeBuilder, p: PodBuilder, expected: Status | None) -> None:
    assert verdict(n, p) == expected


def test_a_full_node_refuses_with_volcanos_pod_number_reason() -> None:
    full = node("n").resources(cpu="4", memory="8Gi", pods=1)
    running = pod("r").on("n")
    assert verdict(full, pod("p"), running) == unschedulable("node(s) pod number exceeded")
    roomy = node("n").resources(cpu="4", memory="8Gi", pods=2)
    assert verdict(roomy, pod("p"), running) is None


LABELLED = node("n").labels(zone="a", disk="ssd", cores="8")


@pytest.mark.parametrize(
    ("p", "passes"),
    [
        pytest.param(pod("p").selector(zone="a"), True, id="selector matching"),
        pytest.param(pod("p").selector(zone="a", disk="hdd"), False, id="selector one pair off"),
        pytest.param(pod("p").selector(rack="r1"), False, id="selector key missing"),
        pytest.param(pod("p").require(term(expr("zone", "In", "b", "a"))), True, id="In"),
        pytest.param(pod("p").require(term(expr("zone", "In", "b"))), False, id="In other value"),
        pytest.param(pod("p").require(term(expr("zone", "NotIn", "b"))), True, id="NotIn"),
        pytest.param(
            pod("p").require(term(expr("rack", "NotIn", "b"))),
            True,
            id="NotIn matches a missing label",
        ),
        pytest.param(pod("p").require(term(expr("zone", "NotIn", "a"))), False, id="NotIn own"),
        pytest.param(pod("p").require(term(expr("disk", "Exists"))), True, id="Exists"),
        pytest.param(pod("p").require(term(expr("rack", "Exists"))), False, id="Exists missing"),
        pytest.param(pod("p").require(term(expr("rack", "DoesNotExist"))), True, id="DoesNotExist"),
        pytest.param(
            pod("p").require(term(expr("disk", "DoesNotExist"))), False, id="DoesNotExist present"
        ),
        pytest.param(pod("p").require(term(expr("cores", "Gt", "4"))), True, id="Gt"),
        pytest.param(pod("p").require(term(expr("cores", "Gt", "8"))), False, id="Gt equal"),
        pytest.param(pod("p").require(term(expr("cores", "Lt", "9"))), True, id="Lt"),
        pytest.param(
            pod("p").require(term(expr("zone", "Gt", "1"))),
            False,
            id="Gt on a label that is not a number",
        ),
        pytest.param(
            pod("p").require(term(expr("cores", "Gt", "x"))),
            False,
            id="Gt with a bound that is not a number matches nothing",
        ),
        pytest.param(
            pod("p").require(term(expr("zone", "In"))),
            False,
            id="In without values matches nothing",
        ),
        pytest.param(
            pod("p").require(term(expr("zone", "In", "a"), expr("disk", "In", "hdd"))),
            False,
            id="expressions of a term are ANDed",
        ),
        pytest.param(
            pod("p").require(term(expr("zone", "In", "b")), term(expr("disk", "Exists"))),
            True,
            id="terms are ORed",
        ),
        pytest.param(pod("p").require(), False, id="an empty term list matches nothing"),
        pytest.param(pod("p").require(SelectorTerm()), False, id="an empty term matches nothing"),
        pytest.param(
            pod("p").require(
                SelectorTerm(
                    match_fields=(Requirement(key="metadata.name", operator="In", values=("n",)),)
                )
            ),
            True,
            id="matchFields on the node name",
        ),
        pytest.param(
            pod("p").require(
                SelectorTerm(
                    match_fields=(
                        Requirement(key="metadata.name", operator="NotIn", values=("n",)),
                    )
                )
            ),
            False,
            id="matchFields NotIn the node name",
        ),
        pytest.param(
            pod("p").selector(zone="a").require(term(expr("disk", "In", "hdd"))),
            False,
            id="selector and affinity must both match",
        ),
    ],
)
def test_node_selector_and_required_affinity(p: PodBuilder, passes: bool) -> None:
    assert verdict(LABELLED, p) == (None if passes else AFFINITY)


TAINTED = node("n").taint("gpu", "true", "NoSchedule")


@pytest.mark.parametrize(
    ("n", "p", "expected"),
    [
        pytest.param(TAINTED, pod("p"), TAINT_GPU, id="an untolerated NoSchedule taint"),
        pytest.param(
            node("n").taint("gpu", "true", "NoExecute"),
            pod("p"),
            TAINT_GPU,
            id="an untolerated NoExecute taint",
        ),
        pytest.param(
            node("n").taint("gpu", "true", "PreferNoSchedule"),
            pod("p"),
            None,
            id="PreferNoSchedule does not filter",
        ),
        pytest.param(
            TAINTED,
            pod("p").tolerate("gpu", "true", effect="NoSchedule"),
            None,
            id="Equal with the same key, value and effect",
        ),
        pytest.param(
            TAINTED, pod("p").tolerate("gpu", "false"), TAINT_GPU, id="Equal with another value"
        ),
        pytest.param(
            TAINTED,
            pod("p").tolerate("gpu", operator="Exists"),
            None,
            id="Exists with the key, any value",
        ),
        pytest.param(
            TAINTED,
            pod("p").tolerate(operator="Exists"),
            None,
            id="Exists with an empty key tolerates every taint",
        ),
        pytest.param(
            TAINTED,
            pod("p").tolerate("gpu", "true", effect="NoExecute"),
            TAINT_GPU,
            id="a toleration of another effect",
        ),
        pytest.param(
            TAINTED,
            pod("p").tolerate("gpu", "true"),
            None,
            id="an empty effect matches every effect",
        ),
        pytest.param(
            node("n").taint("a", "1").taint("gpu", "true"),
            pod("p").tolerate("a", "1"),
            TAINT_GPU,
            id="the reason names the first untolerated taint",
        ),
        pytest.param(
            node("n").taint("gpu", effect="NoSchedule"),
            pod("p"),
            unresolvable("node(s) had untolerated taint {gpu: }"),
            id="a taint without value",
        ),
    ],
)
def test_taints_and_tolerations(n: NodeBuilder, p: PodBuilder, expected: Status | None) -> None:
    assert verdict(n, p) == expected


@pytest.mark.parametrize(
    ("used", "wanted", "free"),
    [
        pytest.param(pod("r").host_port(80), pod("p").host_port(80), False, id="same port"),
        pytest.param(pod("r").host_port(80), pod("p").host_port(81), True, id="another port"),
        pytest.param(
            pod("r").host_port(80), pod("p").host_port(80, "UDP"), True, id="another protocol"
        ),
        pytest.param(
            pod("r").host_port(80, host_ip="10.0.0.1"),
            pod("p").host_port(80, host_ip="10.0.0.2"),
            True,
            id="another host IP",
        ),
        pytest.param(
            pod("r").host_port(80, host_ip="10.0.0.1"),
            pod("p").host_port(80),
            False,
            id="0.0.0.0 conflicts with any IP",
        ),
        pytest.param(
            pod("r").host_port(80),
            pod("p").host_port(80, host_ip="10.0.0.1"),
            False,
            id="any IP conflicts with 0.0.0.0",
        ),
        pytest.param(
            pod("r").host_port(80, host_ip="10.0.0.1"),
            pod("p").host_port(80, host_ip="10.0.0.1"),
            False,
            id="the same IP",
        ),
    ],
)
def test_host_ports(used: PodBuilder, wanted: PodBuilder, free: bool) -> None:
    assert verdict(node("n"), wanted, used.on("n")) == (None if free else PORTS)


@pytest.mark.parametrize(
    ("status", "holds"),
    [
        pytest.param(TaskStatus.RUNNING, True, id="running"),
        pytest.param(TaskStatus.BOUND, True, id="bound"),
        pytest.param(TaskStatus.RELEASING, True, id="releasing (Volcano counts it)"),
        pytest.param(TaskStatus.PIPELINED, True, id="pipelined"),
        pytest.param(TaskStatus.SUCCEEDED, False, id="succeeded"),
        pytest.param(TaskStatus.FAILED, False, id="failed"),
    ],
)
def test_which_pods_on_a_node_hold_their_host_ports(status: TaskStatus, holds: bool) -> None:
    used = pod("r").host_port(80).on("n", status)
    assert verdict(node("n"), pod("p").host_port(80), used) == (PORTS if holds else None)


def test_checks_are_reported_in_volcanos_order() -> None:
    worst = node("n").resources(cpu="4", memory="8Gi", pods=1).unschedulable().taint("gpu", "true")
    assert verdict(worst.labels(zone="a"), pod("p").selector(zone="b"), pod("r").on("n")) == (
        unschedulable("node(s) pod number exceeded")
    )
    assert verdict(node("n").unschedulable().taint("gpu", "true"), pod("p")) == unresolvable(
        "node(s) were unschedulable"
    )
    assert verdict(node("n").taint("gpu", "true"), pod("p").selector(zone="b")) == AFFINITY
    assert verdict(node("n").not_ready().unschedulable(), pod("p")) == unresolvable(
        "node(s) were not ready"
    )


@pytest.mark.parametrize(
    ("flag", "n", "p", "others"),
    [
        pytest.param(
            "NodeAffinityEnable",
            node("n"),
            pod("p").selector(zone="b"),
            (),
            id="NodeAffinityEnable false skips selector and affinity",
        ),
        pytest.param(
            "TaintTolerationEnable",
            TAINTED,
            pod("p"),
            (),
            id="TaintTolerationEnable false skips taints",
        ),
        pytest.param(
            "NodePortsEnable",
            node("n"),
            pod("p").host_port(80),
            (pod("r").host_port(80).on("n"),),
            id="NodePortsEnable false skips ports",
        ),
    ],
)
def test_switching_a_check_off(
    flag: str, n: NodeBuilder, p: PodBuilder, others: Sequence[PodBuilder]
) -> None:
    assert verdict(n, p, *others) is not None
    assert verdict(n, p, *others, policy=with_arguments(**{flag: False})) is None


# --- host ports follow the session ---------------------------------------------------------------
def two_nodes_and_port_pods() -> Session:
    return open_session(
        snapshot(
            node("n1"),
            node("n2"),
            pod("a").host_port(80),
            pod("b").host_port(80),
            pod("r").host_port(80).on("n2"),
        )
    )


def test_a_placement_in_the_session_takes_its_host_ports_until_undone() -> None:
    session = two_nodes_and_port_pods()
    a, b = session.tasks["default/a"], session.tasks["default/b"]
    everywhere = np.arange(2)
    assert plugin(session).filter_nodes(b, everywhere).tolist() == [True, False]
    stmt = session.statement()
    stmt.allocate(a, 0)
    assert plugin(session).filter_nodes(b, everywhere).tolist() == [False, False]
    assert plugin(session).explain_node(b, 0) == PORTS
    stmt.discard()
    assert plugin(session).filter_nodes(b, everywhere).tolist() == [True, False]


def test_pipelining_takes_host_ports_and_evicting_frees_them() -> None:
    session = two_nodes_and_port_pods()
    a, b, r = (session.tasks[f"default/{n}"] for n in "abr")
    everywhere = np.arange(2)
    stmt = session.statement()
    stmt.pipeline(a, 0)
    stmt.evict(r, "preempted")
    assert plugin(session).filter_nodes(b, everywhere).tolist() == [False, True]
    stmt.discard()
    assert plugin(session).filter_nodes(b, everywhere).tolist() == [True, False]


def run_once(snap: ClusterSnapshot, policy: str = POLICY) -> dict[str, str]:
    report = cycle.run_cycle(snap, pipeline(policy), clock=FixedClock(START))
    assert not report.plugin_errors
    return {b.pod: b.node for b in report.result.binds} | dict(report.result.unschedulable)


def test_a_cycle_spreads_pods_wanting_one_host_port_and_explains_the_rest() -> None:
    outcome = run_once(
        snapshot(
            node("n1"),
            node("n2"),
            *(pod(f"p{i}").requests(cpu="1").host_port(8080).created(i) for i in range(3)),
        )
    )
    assert outcome == {
        "default/p0": "n1",
        "default/p1": "n2",
        "default/p2": "0/2 nodes are available: "
        "2 node(s) didn't have free ports for the requested pod ports.",
    }


def test_a_cycle_aggregates_reasons_kube_style() -> None:
    nodes = [node(f"t{i}").taint("k", "v") for i in range(3)]
    nodes += [node("c").unschedulable(), node("x").not_ready()]
    outcome = run_once(snapshot(*nodes, pod("p").requests(cpu="1")))
    assert outcome == {
        "default/p": "0/5 nodes are available: 1 node(s) were not ready, "
        "1 node(s) were unschedulable, 3 node(s) had untolerated taint {k: v}."
    }


# --- arguments -----------------------------------------------------------------------------------
def test_defaults_are_volcanos() -> None:
    config = predicates.build({}).config
    assert config == predicates.Config(
        node_affinity=True,
        node_ports=True,
        taint_toleration=True,
        cache=False,
        proportional=False,
        proportional_resources={},
    )


def test_every_documented_argument_is_accepted() -> None:
    arguments: dict[str, object] = {
        "predicate.NodeAffinityEnable": True,
        "predicate.NodePortsEnable": True,
        "predicate.TaintTolerationEnable": True,
        "predicate.PodAffinityEnable": True,
        "predicate.NodeVolumeLimitsEnable": True,
        "predicate.VolumeZoneEnable": True,
        "predicate.PodTopologySpreadEnable": True,
        "predicate.VolumeBindingEnable": True,
        "predicate.DynamicResourceAllocationEnable": False,
        "predicate.GPUSharingEnable": True,
        "predicate.GPUNumberEnable": True,
        "predicate.CacheEnable": True,
        "predicate.ProportionalEnable": True,
        "predicate.MemoryPressureEnable": True,
        "predicate.DiskPressureEnable": True,
        "predicate.PIDPressureEnable": True,
        "predicate.resources": "nvidia.com/gpu, example.com/foo",
        "predicate.resources.nvidia.com/gpu.cpu": 4,
        "predicate.resources.nvidia.com/gpu.memory": 8,
        "predicate.resources.example.com/foo.cpu": -2,
        "volumebinding.weight": 1,
        "volumebinding.bindTimeoutSeconds": 600,
        "volumebinding.shape": [{"utilization": 0, "score": 10}],
        "dynamicresources.filterTimeoutSeconds": 15,
    }
    config = predicates.build(arguments).config
    assert config.cache
    assert config.proportional
    assert config.proportional_resources == {
        "nvidia.com/gpu": (4.0, 8.0),
        "example.com/foo": (1.0, 1.0),
    }


def test_the_bind_timeout_for_volumes_is_volcanos_argument_600_seconds_by_default() -> None:
    assert pipeline().volume_bind_timeout == 600.0
    timed = POLICY + "    arguments:\n      volumebinding.bindTimeoutSeconds: 45\n"
    assert pipeline(timed).volume_bind_timeout == 45.0
    with pytest.raises(PolicyError, match="bindTimeoutSeconds"):
        pipeline(POLICY + "    arguments:\n      volumebinding.bindTimeoutSeconds: -1\n")


def test_volume_binding_at_bind_time_follows_volcanos_flag_and_needs_the_plugin() -> None:
    """The effects bind a pod's volumes before its Binding (the VolumeBinding PreBind) while
    `predicate.VolumeBindingEnable` is on, as Volcano registers the PreBind with the filter;
    off, or without predicates in the policy, they do not."""
    assert pipeline().volume_binding
    off = POLICY + "    arguments:\n      predicate.VolumeBindingEnable: false\n"
    assert not pipeline(off).volume_binding
    assert not pipeline(
        'actions: "allocate"\ntiers:\n- plugins:\n  - name: conformance\n'
    ).volume_binding


def test_unknown_and_mistyped_arguments_are_errors_with_a_suggestion() -> None:
    with pytest.raises(PolicyError) as caught:
        pipeline(
            POLICY + "    arguments:\n      predicate.NodeAffinityEnabled: true\n"
            "      predicate.CacheEnable: maybe\n"
            "      predicate.resources.nvidia.com/gpu.cpu: 4\n"
        )
    text = str(caught.value)
    assert "arguments.predicate.NodeAffinityEnabled: unknown argument" in text
    assert "predicate.NodeAffinityEnable" in text
    assert "arguments.predicate.CacheEnable: must be true or false" in text
    assert "arguments.predicate.resources.nvidia.com/gpu.cpu: unknown argument" in text


# --- the vectorised filter equals the per-node explanation ----------------------------------------
KEYS = ("zone", "disk", "cores")
VALUES = ("a", "b", "1", "8", "x")

labels_st = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
requirement_st = st.builds(
    Requirement,
    key=st.sampled_from(KEYS),
    operator=st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bad")),
    values=st.lists(st.sampled_from(VALUES), max_size=2).map(tuple),
)
field_st = st.builds(
    Requirement,
    key=st.sampled_from(("metadata.name", "spec.other")),
    operator=st.sampled_from(("In", "NotIn", "Exists")),
    values=st.lists(st.sampled_from(("n0", "n1", "")), max_size=2).map(tuple),
)
term_st = st.builds(
    SelectorTerm,
    match_expressions=st.lists(requirement_st, max_size=2).map(tuple),
    match_fields=st.lists(field_st, max_size=1).map(tuple),
)
taint_st = st.tuples(
    st.sampled_from(("k1", "k2")),
    st.sampled_from(("", "v")),
    st.sampled_from(("NoSchedule", "NoExecute", "PreferNoSchedule")),
)
ports_st = st.sampled_from((80, 81, 82))
ips_st = st.sampled_from(("0.0.0.0", "10.0.0.1", "10.0.0.2"))
toleration_st = st.tuples(
    st.sampled_from(("", "k1", "k2")),
    st.sampled_from(("", "v")),
    st.sampled_from(("Equal", "Exists")),
    st.sampled_from(("", "NoSchedule", "NoExecute")),
)


@st.composite
def node_st(draw: st.DrawFn, i: int) -> tuple[NodeBuilder, list[PodBuilder]]:
    n = node(f"n{i}").resources(cpu="4", memory="8Gi", pods=draw(st.integers(1, 3)))
    n = n.labels(**draw(labels_st))
    for key, value, effect in draw(st.lists(taint_st, max_size=2)):
        n = n.taint(key, value, effect)
    if draw(st.booleans()):
        n = n.unschedulable()
    if not draw(st.integers(0, 5)):
        n = n.not_ready()
    running = [
        pod(f"r{i}-{k}").host_port(draw(ports_st), host_ip=draw(ips_st)).on(f"n{i}")
        for k in range(draw(st.integers(0, 2)))
    ]
    return n, running


@st.composite
def pod_st(draw: st.DrawFn) -> PodBuilder:
    p = pod("p").selector(
        **draw(st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=1))
    )
    required = draw(st.none() | st.lists(term_st, max_size=2))
    if required is not None:
        p = p.require(*required)
    for key, value, operator, effect in draw(st.lists(toleration_st, max_size=2)):
        p = p.tolerate(key, value, operator=operator, effect=effect)
    for port in draw(st.lists(ports_st, max_size=2, unique=True)):
        p = p.host_port(port, host_ip=draw(ips_st))
    return p


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_vectorised_filter_equals_the_per_node_explanation(data: st.DataObject) -> None:
    # up to 40 nodes: more than 32 takes the by-port path for host ports, fewer the by-node one
    drawn = [data.draw(node_st(i)) for i in range(data.draw(st.integers(1, 40)))]
    p = data.draw(pod_st())
    session = open_session(snapshot(*(n for n, _ in drawn), *(r for _, rs in drawn for r in rs), p))
    task = session.tasks[p.build().uid]
    everywhere = np.arange(len(drawn))
    vectorised = plugin(session).filter_nodes(task, everywhere)
    one_by_one = [plugin(session).explain_node(task, i) is None for i in range(len(drawn))]
    assert vectorised.tolist() == one_by_one
    subset = everywhere[::2]
    assert plugin(session).filter_nodes(task, subset).tolist() == vectorised[subset].tolist()


def test_scalar_and_vectorised_term_matching_agree_on_a_gt_bound_beyond_int64() -> None:
    huge = term(expr("cores", "Gt", str(2**63)))
    assert not checks.term_valid(huge)
    assert verdict(LABELLED, pod("p").require(huge)) == AFFINITY
