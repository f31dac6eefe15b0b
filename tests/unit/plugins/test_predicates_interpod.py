"""predicates, inter-pod affinity: kube's InterPodAffinity filter (required affinity with the
first-pod rule, required anti-affinity, placed pods' anti-affinity against the pod), with
kube's reasons and Volcano's unresolvable code; the session's placements count; a property test
against a transcription of kube's map-based algorithm."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np
from hypothesis import given, settings, strategies as st

from vscheduler.framework.results import Code, Status
from vscheduler.framework.session import Session
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import NodeFacts, TaskFacts
from vscheduler.model.podaffinity import PodAffinityTerm
from vscheduler.model.selector import LabelSelector
from vscheduler.model.status import TaskStatus
from vscheduler.plugins import predicates
from vscheduler.testing import sessions
from vscheduler.testing.builders import (
    NodeBuilder,
    PodBuilder,
    node,
    pod,
    pod_term,
    snapshot,
)

POLICY = 'actions: "allocate"\ntiers:\n- plugins:\n  - name: predicates\n'
HOST = "kubernetes.io/hostname"
AFFINITY = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match pod affinity rules")
# kube's InterPodAffinity codes (Volcano >= 1.13): anti-affinity failures are resolvable
ANTI = Status(Code.UNSCHEDULABLE, "node(s) didn't match pod anti-affinity rules")
EXISTING = Status(Code.UNSCHEDULABLE, "node(s) didn't satisfy existing pods anti-affinity rules")


def open_session(snap: ClusterSnapshot, policy: str = POLICY) -> Session:
    return sessions.open_session(snap, policy)


def plugin(session: Session) -> predicates.Predicates:
    found = session.plugins[predicates.NAME]
    assert isinstance(found, predicates.Predicates)
    return found


def judge(session: Session, uid: str) -> dict[str, Status | None]:
    """Every node's verdict for the task, checking that the filter agrees with the reason."""
    task = session.tasks[uid]
    p = plugin(session)
    mask = p.filter_nodes(task, np.arange(len(session.ledger), dtype=np.int64))
    out: dict[str, Status | None] = {}
    for i, name in enumerate(session.ledger.names):
        why = p.explain_node(task, i)
        assert bool(mask[i]) is (why is None)
        assert bool(p.filter_nodes(task, np.array([i], dtype=np.int64))[0]) is (why is None)
        out[name] = why
    return out


def verdicts(
    nodes: list[NodeBuilder], incoming: PodBuilder, *others: PodBuilder, policy: str = POLICY
) -> dict[str, Status | None]:
    session = open_session(snapshot(*nodes, incoming, *others), policy)
    return judge(session, incoming.build().uid)


def hosts(*zones: str) -> list[NodeBuilder]:
    """Nodes n0, n1, ... with a hostname label and the zone given (empty: no zone label)."""
    out = []
    for i, zone in enumerate(zones):
        n = node(f"n{i}").label(HOST, f"n{i}")
        out.append(n.labels(zone=zone) if zone else n)
    return out


def web() -> PodBuilder:
    return pod("web").labels(app="web")


# --- anti-affinity --------------------------------------------------------------------------------
def test_required_anti_affinity_keeps_a_pod_off_hosts_holding_a_pod_it_selects() -> None:
    incoming = pod("p").anti_affinity(pod_term(HOST, app="web"))
    assert verdicts(hosts("a", "a"), incoming, web().on("n0")) == {"n0": ANTI, "n1": None}


def test_anti_affinity_by_zone_keeps_the_pod_out_of_the_whole_zone() -> None:
    incoming = pod("p").anti_affinity(pod_term("zone", app="web"))
    found = verdicts(hosts("a", "a", "b", ""), incoming, web().on("n1"))
    assert found == {"n0": ANTI, "n1": ANTI, "n2": None, "n3": None}


def test_pods_of_other_namespaces_count_only_when_the_term_names_their_namespace() -> None:
    other = pod("web", "shop").labels(app="web").on("n0")
    assert verdicts(hosts("a"), pod("p").anti_affinity(pod_term(HOST, app="web")), other) == {
        "n0": None
    }
    naming = pod("p").anti_affinity(pod_term(HOST, "shop", app="web"))
    assert verdicts(hosts("a"), naming, other) == {"n0": ANTI}


# --- affinity -------------------------------------------------------------------------------------
def test_required_affinity_needs_a_selected_pod_in_the_nodes_domain() -> None:
    incoming = pod("p").affinity(pod_term("zone", app="web"))
    found = verdicts(hosts("a", "a", "b", ""), incoming, web().on("n0"))
    assert found == {"n0": None, "n1": None, "n2": AFFINITY, "n3": AFFINITY}


def test_the_first_pod_of_a_self_affine_group_may_go_wherever_the_labels_exist() -> None:
    incoming = pod("p").labels(app="web").affinity(pod_term("zone", app="web"))
    found = verdicts(hosts("a", "b", ""), incoming)
    assert found == {"n0": None, "n1": None, "n2": AFFINITY}


def test_a_pod_not_matching_its_own_affinity_waits_for_a_pod_that_does() -> None:
    incoming = pod("p").labels(app="db").affinity(pod_term("zone", app="web"))
    assert verdicts(hosts("a", "b"), incoming) == {"n0": AFFINITY, "n1": AFFINITY}


def test_a_pod_counts_for_affinity_only_if_it_matches_every_term() -> None:
    incoming = pod("p").affinity(pod_term("zone", app="web"), pod_term(HOST, tier="front"))
    half = web().on("n0")
    both = pod("both").labels(app="web", tier="front").on("n1")
    assert verdicts(hosts("a", "a"), incoming, half) == {"n0": AFFINITY, "n1": AFFINITY}
    assert verdicts(hosts("a", "a"), incoming, half, both) == {"n0": AFFINITY, "n1": None}


# --- the symmetric check --------------------------------------------------------------------------
def test_a_placed_pods_anti_affinity_keeps_the_pods_it_selects_away() -> None:
    guard = pod("guard").anti_affinity(pod_term("zone", app="web")).on("n0")
    found = verdicts(hosts("a", "a", "b"), web(), guard)
    assert found == {"n0": EXISTING, "n1": EXISTING, "n2": None}
    assert verdicts(hosts("a", "a", "b"), pod("db").labels(app="db"), guard) == {
        "n0": None,
        "n1": None,
        "n2": None,
    }


def test_the_pods_own_rules_are_reported_before_placed_pods_rules() -> None:
    guard = pod("guard").labels(app="guard").anti_affinity(pod_term(HOST, app="web")).on("n0")
    incoming = web().anti_affinity(pod_term(HOST, app="guard"))
    assert verdicts(hosts("a"), incoming, guard) == {"n0": ANTI}


# --- which pods count -----------------------------------------------------------------------------
def test_pods_being_deleted_and_pipelined_pods_count_finished_ones_do_not() -> None:
    incoming = pod("p").anti_affinity(pod_term(HOST, app="web"))
    others = (
        pod("deleting").labels(app="web").on("n0", TaskStatus.RELEASING),
        pod("piped").labels(app="web").on("n1", TaskStatus.PIPELINED),
        pod("done").labels(app="web").on("n2", TaskStatus.SUCCEEDED),
    )
    assert verdicts(hosts("a", "a", "a"), incoming, *others) == {
        "n0": ANTI,
        "n1": ANTI,
        "n2": None,
    }


def test_pods_on_a_node_that_is_not_ready_do_not_count_as_volcano_leaves_it_out() -> None:
    nodes = [*hosts("a"), node("n1").labels(zone="a").not_ready()]
    incoming = pod("p").anti_affinity(pod_term("zone", app="web"))
    found = verdicts(nodes, incoming, web().on("n1"))
    assert found["n0"] is None


def test_placements_made_in_the_session_count_and_undone_ones_do_not() -> None:
    session = open_session(
        snapshot(
            *hosts("a", "b"),
            pod("p").anti_affinity(pod_term("zone", app="web")),
            web().requests(cpu="1"),
        )
    )
    stmt = session.statement()
    stmt.allocate(session.tasks["default/web"], 1)
    assert judge(session, "default/p") == {"n0": None, "n1": ANTI}
    stmt.discard()
    assert judge(session, "default/p") == {"n0": None, "n1": None}


def test_an_evicted_pod_no_longer_counts() -> None:
    session = open_session(
        snapshot(*hosts("a"), pod("p").anti_affinity(pod_term(HOST, app="web")), web().on("n0"))
    )
    stmt = session.statement()
    stmt.evict(session.tasks["default/web"], "test")
    assert judge(session, "default/p") == {"n0": None}


# --- switching ------------------------------------------------------------------------------------
def test_predicate_pod_affinity_enable_false_switches_the_check_off() -> None:
    policy = POLICY + "    arguments:\n      predicate.PodAffinityEnable: false\n"
    incoming = pod("p").anti_affinity(pod_term(HOST, app="web"))
    assert verdicts(hosts("a"), incoming, web().on("n0"), policy=policy) == {"n0": None}


def test_the_inter_pod_and_spread_checks_are_on_by_default_as_in_volcano() -> None:
    config = predicates.build({}).config
    assert (config.pod_affinity, config.topology_spread, config.proportional) == (True, True, False)


def test_the_plugin_stays_node_local_unless_some_pod_needs_the_check() -> None:
    plain = snapshot(*hosts("a"), pod("p"), web().on("n0"))
    assert plugin(open_session(plain)).node_local
    preferred = snapshot(*hosts("a"), pod("p").prefer_anti_affinity(5, pod_term(HOST, app="web")))
    assert plugin(open_session(preferred)).node_local
    guarded = snapshot(*hosts("a"), pod("p"), web().anti_affinity(pod_term(HOST, app="x")).on("n0"))
    assert not plugin(open_session(guarded)).node_local
    wanting = snapshot(*hosts("a"), pod("p").affinity(pod_term(HOST, app="web")))
    assert not plugin(open_session(wanting)).node_local


# --- agreement with kube's algorithm --------------------------------------------------------------
def kube_filter(nodes: list[NodeFacts], placed: list[TaskFacts], pod_: TaskFacts) -> list[str]:
    """kube's PreFilter maps and Filter, transcribed: the reason per node ('' passes)."""
    labels = {n.name: n.labels for n in nodes}
    terms = pod_.pod_affinity
    existing: Counter[tuple[str, str]] = Counter()
    affinity: Counter[tuple[str, str]] = Counter()
    anti: Counter[tuple[str, str]] = Counter()
    for other in placed:
        node_labels = labels[other.node_name or ""]
        for t in other.pod_affinity.anti_required:
            if t.matches(pod_.namespace, pod_.labels) and t.topology_key in node_labels:
                existing[(t.topology_key, node_labels[t.topology_key])] += 1
        if terms.matches_all_required(other.namespace, other.labels):
            for t in terms.required:
                if t.topology_key in node_labels:
                    affinity[(t.topology_key, node_labels[t.topology_key])] += 1
        for t in terms.anti_required:
            if t.matches(other.namespace, other.labels) and t.topology_key in node_labels:
                anti[(t.topology_key, node_labels[t.topology_key])] += 1
    return [_kube_node(n.labels, pod_, (existing, affinity, anti)) for n in nodes]


def _kube_node(
    node_labels: Mapping[str, str], pod_: TaskFacts, counts: tuple[Counter[tuple[str, str]], ...]
) -> str:
    existing, affinity, anti = counts
    required, anti_required = pod_.pod_affinity.required, pod_.pod_affinity.anti_required
    pods_exist, labelled = True, True
    for t in required:
        if t.topology_key not in node_labels:
            labelled = False
        elif affinity[(t.topology_key, node_labels[t.topology_key])] <= 0:
            pods_exist = False
    first = not +affinity and pod_.pod_affinity.matches_all_required(pod_.namespace, pod_.labels)
    if not labelled or (not pods_exist and not first):
        return AFFINITY.reason
    for t in anti_required:
        if (
            t.topology_key in node_labels
            and anti[(t.topology_key, node_labels[t.topology_key])] > 0
        ):
            return ANTI.reason
    if any(existing[pair] > 0 for pair in node_labels.items()):
        return EXISTING.reason
    return ""


KEYS = (HOST, "zone")
term_st = st.builds(
    lambda key, app, ns: PodAffinityTerm(
        selector=LabelSelector(match_labels={"app": app}),
        namespaces=frozenset({ns}),
        topology_key=key,
    ),
    st.sampled_from(KEYS),
    st.sampled_from(("a", "b")),
    st.sampled_from(("default", "other")),
)
pod_st = st.tuples(
    st.sampled_from(("a", "b", "c")),
    st.sampled_from(("default", "other")),
    st.lists(term_st, max_size=2),
    st.lists(term_st, max_size=2),
)


@settings(max_examples=150, deadline=None)
@given(
    zones=st.lists(st.sampled_from(("z1", "z2", "")), min_size=1, max_size=5),
    placed=st.lists(st.tuples(pod_st, st.integers(0, 4)), max_size=6),
    incoming=pod_st,
)
def test_the_filter_agrees_with_kubes_algorithm(
    zones: list[str],
    placed: list[tuple[tuple[str, str, list[PodAffinityTerm], list[PodAffinityTerm]], int]],
    incoming: tuple[str, str, list[PodAffinityTerm], list[PodAffinityTerm]],
) -> None:
    nodes = hosts(*zones)
    others = []
    for k, ((app, ns, aff, anti), where) in enumerate(placed):
        b = pod(f"o{k}", ns).labels(app=app).on(f"n{where % len(nodes)}")
        others.append(b.affinity(*aff).anti_affinity(*anti))
    app, ns, aff, anti = incoming
    p = pod("incoming", ns).labels(app=app).affinity(*aff).anti_affinity(*anti)
    session = open_session(snapshot(*nodes, p, *others))
    found = judge(session, p.build().uid)
    expected = kube_filter(list(session.ledger.nodes), [o.build() for o in others], p.build())
    assert [s.reason if s else "" for s in found.values()] == expected
