"""predicates, topology spread: kube's PodTopologySpread filter over DoNotSchedule constraints
(skew against the global minimum over eligible domains, minDomains, node inclusion policies,
self-match), with kube's reasons and codes; a property test against a transcription of kube's
map-based algorithm."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings, strategies as st

from vscheduler.framework.results import Code, Status
from vscheduler.framework.session import Session
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import NodeFacts, TaskFacts
from vscheduler.model.podaffinity import SpreadConstraint
from vscheduler.model.status import TaskStatus
from vscheduler.plugins import predicates
from vscheduler.plugins.predicates import checks
from vscheduler.testing import sessions
from vscheduler.testing.builders import (
    NodeBuilder,
    PodBuilder,
    node,
    pod,
    snapshot,
    spread,
)

POLICY = 'actions: "allocate"\ntiers:\n- plugins:\n  - name: predicates\n'
HOST = "kubernetes.io/hostname"
SKEW = Status(Code.UNSCHEDULABLE, "node(s) didn't match pod topology spread constraints")
LABEL = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    "node(s) didn't match pod topology spread constraints (missing required label)",
)


def open_session(snap: ClusterSnapshot, policy: str = POLICY) -> Session:
    return sessions.open_session(snap, policy)


def judge(session: Session, uid: str) -> dict[str, Status | None]:
    """Every node's verdict for the task, checking that the filter agrees with the reason."""
    task = session.tasks[uid]
    p = session.plugins[predicates.NAME]
    assert isinstance(p, predicates.Predicates)
    mask = p.filter_nodes(task, np.arange(len(session.ledger), dtype=np.int64))
    out: dict[str, Status | None] = {}
    for i, name in enumerate(session.ledger.names):
        why = p.explain_node(task, i)
        assert bool(mask[i]) is (why is None)
        out[name] = why
    return out


def verdicts(
    nodes: Sequence[NodeBuilder], incoming: PodBuilder, *others: PodBuilder, policy: str = POLICY
) -> dict[str, Status | None]:
    return judge(open_session(snapshot(*nodes, incoming, *others), policy), incoming.build().uid)


def zones(*names: str) -> list[NodeBuilder]:
    """Nodes n0, n1, ... in the zones given (empty: no zone label)."""
    out = []
    for i, zone in enumerate(names):
        n = node(f"n{i}").label(HOST, f"n{i}")
        out.append(n.labels(zone=zone) if zone else n)
    return out


def web(name: str, where: str, status: TaskStatus = TaskStatus.RUNNING) -> PodBuilder:
    return pod(name).labels(app="web").on(where, status)


def spreading(max_skew: int = 1, *, min_domains: int = 1, honor_taints: bool = False) -> PodBuilder:
    constraint = spread(
        "zone", max_skew, min_domains=min_domains, honor_taints=honor_taints, app="web"
    )
    return pod("p").labels(app="web").spread(constraint)


def test_a_pod_goes_only_where_the_skew_stays_within_max_skew() -> None:
    running = (web("w0", "n0"), web("w1", "n0"), web("w2", "n1"), web("w3", "n2"))
    found = verdicts(zones("a", "b", "c"), spreading(), *running)
    assert found == {"n0": SKEW, "n1": None, "n2": None}
    assert verdicts(zones("a", "b", "c"), spreading(max_skew=2), *running) == {
        "n0": None,
        "n1": None,
        "n2": None,
    }


def test_a_node_without_the_topology_label_is_refused_as_unresolvable() -> None:
    assert verdicts(zones("a", ""), spreading()) == {"n0": None, "n1": LABEL}


def test_a_pod_its_selector_does_not_match_adds_nothing_to_its_domain() -> None:
    other = pod("p").labels(app="db").spread(spread("zone", app="web"))
    running = (web("w0", "n0"), web("w1", "n1"))
    assert verdicts(zones("a", "a", "b"), other, *running) == {"n0": SKEW, "n1": SKEW, "n2": None}
    assert verdicts(zones("a", "b"), other, web("w0", "n0")) == {"n0": None, "n1": None}


def test_fewer_domains_than_min_domains_make_the_global_minimum_zero() -> None:
    running = (web("w0", "n0"), web("w1", "n1"))
    assert verdicts(zones("a", "b"), spreading(min_domains=2), *running) == {
        "n0": None,
        "n1": None,
    }
    assert verdicts(zones("a", "b"), spreading(min_domains=3), *running) == {
        "n0": SKEW,
        "n1": SKEW,
    }


def test_domains_only_on_nodes_the_pod_may_not_use_are_not_eligible_by_default() -> None:
    nodes = [*zones("a", "b"), node("n2").labels(zone="c", pool="gpu")]
    incoming = spreading().selector(pool="cpu")
    for n in nodes[:2]:
        n.labels(pool="cpu")
    running = (web("w0", "n0"), web("w1", "n1"))
    honoured = verdicts(nodes, incoming, *running)
    assert (honoured["n0"], honoured["n1"]) == (None, None)
    ignoring = pod("p").labels(app="web").selector(pool="cpu")
    ignoring.spread(spread("zone", app="web", ignore_affinity=True))
    ignored = verdicts(nodes, ignoring, *running)
    assert (ignored["n0"], ignored["n1"]) == (SKEW, SKEW)


def test_tainted_nodes_hold_domains_unless_taints_are_honoured() -> None:
    nodes = [*zones("a", "b"), node("n2").labels(zone="c").taint("dedicated", "x")]
    running = (web("w0", "n0"), web("w1", "n1"))
    ignored = verdicts(nodes, spreading(), *running)
    assert (ignored["n0"], ignored["n1"]) == (SKEW, SKEW)
    honoured = verdicts(nodes, spreading(honor_taints=True), *running)
    assert (honoured["n0"], honoured["n1"]) == (None, None)


def test_pods_being_deleted_and_pods_of_other_namespaces_do_not_count() -> None:
    running = (
        web("w0", "n0", TaskStatus.RELEASING),
        pod("w1", "shop").labels(app="web").on("n0"),
        web("w2", "n1", TaskStatus.PIPELINED),
    )
    assert verdicts(zones("a", "b", "c"), spreading(), *running) == {
        "n0": None,
        "n1": SKEW,
        "n2": None,
    }


def test_a_node_that_is_not_ready_holds_no_domain_as_volcano_leaves_it_out() -> None:
    nodes = [*zones("a", "b"), node("n2").labels(zone="c").not_ready()]
    running = (web("w0", "n0"), web("w1", "n1"))
    found = verdicts(nodes, spreading(), *running)
    assert (found["n0"], found["n1"]) == (None, None)


def test_schedule_anyway_constraints_do_not_filter() -> None:
    incoming = pod("p").labels(app="web").spread(spread("zone", app="web", hard=False))
    assert verdicts(zones("a", "b"), incoming, web("w0", "n0"), web("w1", "n0")) == {
        "n0": None,
        "n1": None,
    }


def test_the_first_constraint_a_node_fails_gives_the_reason() -> None:
    incoming = pod("p").labels(app="web").spread(spread("zone", app="web"))
    incoming.spread(spread("rack", app="web"))
    nodes = [node("n0").labels(zone="a"), node("n1").labels(zone="a", rack="r")]
    assert verdicts(nodes, incoming, web("w0", "n1")) == {"n0": LABEL, "n1": None}


def test_placements_made_in_the_session_count() -> None:
    session = open_session(
        snapshot(*zones("a", "b"), spreading(), web("w0", "n0"), pod("w1").labels(app="web"))
    )
    assert judge(session, "default/p") == {"n0": SKEW, "n1": None}
    session.statement().allocate(session.tasks["default/w1"], 1)
    assert judge(session, "default/p") == {"n0": None, "n1": None}


def test_predicate_pod_topology_spread_enable_false_switches_the_check_off() -> None:
    policy = POLICY + "    arguments:\n      predicate.PodTopologySpreadEnable: false\n"
    found = verdicts(zones("a", ""), spreading(), web("w0", "n0"), policy=policy)
    assert found == {"n0": None, "n1": None}


# --- agreement with kube's algorithm --------------------------------------------------------------
def kube_filter(nodes: Sequence[NodeFacts], placed: Sequence[TaskFacts], p: TaskFacts) -> list[str]:
    """kube's PreFilter (TpValueToMatchNum, critical paths) and Filter, transcribed."""
    hard = [c for c in p.topology_spread if c.hard]
    matches: list[dict[str, int]] = [{} for _ in hard]
    for n in nodes:
        if not all(c.topology_key in n.labels for c in hard):
            continue
        for k, c in enumerate(hard):
            if not _included(p, n, c):
                continue
            count = sum(
                1
                for o in placed
                if o.node_name == n.name
                and o.namespace == p.namespace
                and o.status is not TaskStatus.RELEASING
                and c.selects(o.labels)
            )
            value = n.labels[c.topology_key]
            matches[k][value] = matches[k].get(value, 0) + count
    out = []
    for n in nodes:
        out.append("")
        for k, c in enumerate(hard):
            if c.topology_key not in n.labels:
                out[-1] = LABEL.reason
                break
            minimum = min(matches[k].values()) if matches[k] else 2**31 - 1
            if len(matches[k]) < c.min_domains:
                minimum = 0
            mine = matches[k].get(n.labels[c.topology_key], 0)
            if mine + int(c.selects(p.labels)) - minimum > c.max_skew:
                out[-1] = SKEW.reason
                break
    return out


def _included(p: TaskFacts, n: NodeFacts, c: SpreadConstraint) -> bool:
    if c.honor_node_affinity and not (
        checks.selector_matches(p.node_selector, n.labels)
        and checks.required_matches(p.affinity.required, n.labels, n.name)
    ):
        return False
    return not c.honor_node_taints or checks.first_untolerated(n.taints, p.tolerations) is None


SPREAD_ONLY = (
    POLICY
    + "    arguments:\n      predicate.TaintTolerationEnable: false\n"
    + "      predicate.NodeAffinityEnable: false\n"
)
"""Taints and node affinity still decide which nodes hold domains, but do not filter."""

constraint_st = st.builds(
    lambda key, skew, hard, domains, app, affinity, taints: spread(
        key,
        skew,
        hard=hard,
        min_domains=domains if hard else 1,
        ignore_affinity=not affinity,
        honor_taints=taints,
        app=app,
    ),
    st.sampled_from(("zone", HOST, "rack")),
    st.integers(1, 2),
    st.booleans(),
    st.integers(1, 3),
    st.sampled_from(("a", "a", "b")),
    st.booleans(),
    st.booleans(),
)
node_st = st.tuples(
    st.sampled_from(("z1", "z2", "z3", "z1", "")),
    st.sampled_from(("r1", "r1", "")),
    st.booleans(),
    st.booleans(),
)
placed_st = st.tuples(
    st.sampled_from(("a", "a", "b")),
    st.sampled_from(("default", "default", "other")),
    st.sampled_from((TaskStatus.RUNNING, TaskStatus.RELEASING, TaskStatus.PIPELINED)),
    st.integers(0, 5),
)


@settings(max_examples=150, deadline=None)
@given(
    node_specs=st.lists(node_st, min_size=1, max_size=6),
    placed=st.lists(placed_st, max_size=14),
    constraints=st.lists(constraint_st, min_size=1, max_size=2),
    app=st.sampled_from(("a", "b")),
    picky=st.booleans(),
)
def test_the_filter_agrees_with_kubes_algorithm(
    node_specs: list[tuple[str, str, bool, bool]],
    placed: list[tuple[str, str, TaskStatus, int]],
    constraints: list[SpreadConstraint],
    app: str,
    picky: bool,
) -> None:
    nodes = []
    for i, (zone, rack, gpu, tainted) in enumerate(node_specs):
        n = node(f"n{i}").label(HOST, f"n{i}").labels(pool="gpu" if gpu else "cpu")
        n = n.labels(zone=zone) if zone else n
        n = n.labels(rack=rack) if rack else n
        nodes.append(n.taint("t", "x") if tainted else n)
    others = [
        pod(f"o{k}", ns).labels(app=a).on(f"n{where % len(nodes)}", status)
        for k, (a, ns, status, where) in enumerate(placed)
    ]
    incoming = pod("incoming").labels(app=app)
    seen = set()
    for c in constraints:
        if (c.topology_key, c.hard) not in seen:
            seen.add((c.topology_key, c.hard))
            incoming.spread(c)
    if picky:
        incoming.selector(pool="cpu")
    session = open_session(snapshot(*nodes, incoming, *others), SPREAD_ONLY)
    found = judge(session, incoming.build().uid)
    expected = kube_filter(session.ledger.nodes, [o.build() for o in others], incoming.build())
    assert [s.reason if s else "" for s in found.values()] == expected
