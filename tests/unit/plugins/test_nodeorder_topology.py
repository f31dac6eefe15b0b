"""nodeorder, podaffinity and podtopologyspread: kube's InterPodAffinity and PodTopologySpread
scores, normalised over the nodes compared and weighted as Volcano weights them, with numbers
worked out by hand."""

from __future__ import annotations

import numpy as np

from vscheduler import catalog
from vscheduler.framework.session import Session
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.plugins import nodeorder
from vscheduler.testing import sessions
from vscheduler.testing.builders import (
    NodeBuilder,
    PodBuilder,
    node,
    pod,
    pod_term,
    snapshot,
    spread,
)

HOST = "kubernetes.io/hostname"
ONLY_TOPOLOGY = {
    "leastrequested.weight": 0,
    "balancedresource.weight": 0,
    "nodeaffinity.weight": 0,
    "imagelocality.weight": 0,
    "tainttoleration.weight": 0,
}


def policy(**weights: int) -> str:
    arguments = {**ONLY_TOPOLOGY, **weights}
    lines = "".join(f"      {k}: {v}\n" for k, v in arguments.items())
    return 'actions: ""\ntiers:\n- plugins:\n  - name: nodeorder\n    arguments:\n' + lines


def open_session(snap: ClusterSnapshot, **weights: int) -> Session:
    pipeline = catalog.load_pipeline(policy(**weights))
    return sessions.open_session(snap, pipeline)


def batch(
    nodes: list[NodeBuilder],
    incoming: PodBuilder,
    *others: PodBuilder,
    compared: list[int] | None = None,
    weights: dict[str, int] | None = None,
) -> list[float] | None:
    session = open_session(snapshot(*nodes, incoming, *others), **(weights or {}))
    plugin = session.plugins[nodeorder.NAME]
    assert isinstance(plugin, nodeorder.NodeOrder)
    idx = np.array(compared if compared is not None else range(len(nodes)), dtype=np.int64)
    found = plugin.batch_score_nodes(session.tasks[incoming.build().uid], idx)
    return None if found is None else found.tolist()


def cluster() -> list[NodeBuilder]:
    """n0 and n1 in zone a, n2 in zone b, n3 without a zone; every node has a hostname."""
    zones = ("a", "a", "b", "")
    out = []
    for i, zone in enumerate(zones):
        n = node(f"n{i}").label(HOST, f"n{i}")
        out.append(n.labels(zone=zone) if zone else n)
    return out


def web(name: str, where: str) -> PodBuilder:
    return pod(name).labels(app="web").on(where)


# --- podaffinity ----------------------------------------------------------------------------------
def test_preferred_affinity_scores_the_domains_holding_selected_pods() -> None:
    incoming = pod("p").prefer_affinity(10, pod_term("zone", app="web"))
    # raw: zone a 10, zone b 0, no zone 0 -> normalised 100, 100, 0, 0 -> weight 2
    assert batch(cluster(), incoming, web("w", "n0")) == [200.0, 200.0, 0.0, 0.0]


def test_preferred_anti_affinity_scores_the_other_domains() -> None:
    incoming = pod("p").prefer_anti_affinity(10, pod_term("zone", app="web"))
    assert batch(cluster(), incoming, web("w", "n0")) == [0.0, 0.0, 200.0, 200.0]


def test_each_selected_pod_adds_the_terms_weight_and_scores_are_scaled_between_min_and_max() -> (
    None
):
    incoming = pod("p").prefer_affinity(5, pod_term(HOST, app="web"))
    incoming.prefer_anti_affinity(4, pod_term("zone", app="db"))
    others = (web("w0", "n0"), web("w1", "n1"), web("w2", "n1"), pod("d").labels(app="db").on("n2"))
    # raw: n0 5, n1 10, n2 -4, n3 0 -> (s + 4) / 14 * 100 truncated: 64, 100, 0, 28
    found = batch(cluster(), incoming, *others, weights={"podaffinity.weight": 1})
    assert found == [64.0, 100.0, 0.0, 28.0]


def test_placed_pods_preferred_terms_that_select_the_pod_count_too() -> None:
    fan = pod("fan").prefer_affinity(30, pod_term("zone", app="web")).on("n2")
    critic = pod("critic").prefer_anti_affinity(10, pod_term(HOST, app="web")).on("n1")
    # raw: n0 0, n1 -10, n2 30, n3 0 -> (s + 10) / 40 * 100: 25, 0, 100, 25
    assert batch(cluster(), pod("p").labels(app="web"), fan, critic) == [50.0, 0.0, 200.0, 50.0]
    assert batch(cluster(), pod("p").labels(app="db"), fan, critic) == [0.0, 0.0, 0.0, 0.0]


def test_placed_pods_required_affinity_adds_nothing_as_in_volcano() -> None:
    friend = pod("friend").affinity(pod_term("zone", app="web")).on("n2")
    assert batch(cluster(), pod("p").labels(app="web"), friend) is None


def test_scores_are_normalised_over_the_nodes_compared() -> None:
    incoming = pod("p").prefer_affinity(5, pod_term(HOST, app="web"))
    others = (web("w0", "n0"), web("w1", "n1"), web("w2", "n1"))
    # over n0 and n2 only: raw 5, 0 -> 100, 0
    assert batch(cluster(), incoming, *others, compared=[0, 2]) == [200.0, 0.0]


def test_the_podaffinity_weight_scales_and_zero_switches_it_off() -> None:
    incoming = pod("p").prefer_affinity(10, pod_term("zone", app="web"))
    assert batch(cluster(), incoming, web("w", "n0"), weights={"podaffinity.weight": 5}) == [
        500.0,
        500.0,
        0.0,
        0.0,
    ]
    assert batch(cluster(), incoming, web("w", "n0"), weights={"podaffinity.weight": 0}) is None


def test_a_pod_nothing_applies_to_has_no_opinion() -> None:
    assert batch(cluster(), pod("p").labels(app="web"), web("w", "n0")) is None


# --- podtopologyspread ----------------------------------------------------------------------------
def soft(key: str, max_skew: int = 1) -> PodBuilder:
    return pod("p").labels(app="web").spread(spread(key, max_skew, hard=False, app="web"))


def test_spread_by_zone_favours_the_emptier_zone_and_ignores_unlabelled_nodes() -> None:
    others = (web("w0", "n0"), web("w1", "n0"), web("w2", "n2"))
    # 2 zones compared: weight ln 4; zone a 2 pods -> round(2.77) = 3, zone b 1 -> round(1.39) = 1
    # normalised 100 * (3 + 1 - s) // 3: a 33, b 100; n3 ignored: 0
    assert batch(cluster(), soft("zone"), *others) == [66.0, 66.0, 200.0, 0.0]


def test_spread_by_hostname_counts_each_node_and_adds_max_skew_minus_one() -> None:
    others = (web("w0", "n0"), web("w1", "n0"), web("w2", "n2"))
    # 4 nodes: weight ln 6 = 1.79; counts 2, 0, 1, 0 -> 4, 0, 2, 0 -> 100 * (4 - s) // 4
    assert batch(cluster(), soft(HOST), *others) == [0.0, 200.0, 100.0, 200.0]
    # maxSkew 3 adds 2: 6, 2, 4, 2 -> 100 * (8 - s) // 6: 33, 100, 66, 100
    assert batch(cluster(), soft(HOST, 3), *others) == [66.0, 200.0, 132.0, 200.0]


def test_with_no_pod_to_count_every_node_scores_the_maximum() -> None:
    assert batch(cluster(), soft(HOST)) == [200.0, 200.0, 200.0, 200.0]


def test_hard_constraints_are_not_scored() -> None:
    hard = pod("p").labels(app="web").spread(spread("zone", app="web"))
    assert batch(cluster(), hard, web("w", "n0")) is None


def test_the_podtopologyspread_weight_scales() -> None:
    others = (web("w0", "n0"), web("w1", "n0"), web("w2", "n2"))
    found = batch(cluster(), soft("zone"), *others, weights={"podtopologyspread.weight": 1})
    assert found == [33.0, 33.0, 100.0, 0.0]


def test_placements_made_in_the_session_change_the_scores() -> None:
    session = open_session(snapshot(*cluster(), soft(HOST), pod("w").labels(app="web")))
    plugin = session.plugins[nodeorder.NAME]
    assert isinstance(plugin, nodeorder.NodeOrder)
    task, idx = session.tasks["default/p"], np.arange(4, dtype=np.int64)
    before = plugin.batch_score_nodes(task, idx)
    session.statement().allocate(session.tasks["default/w"], 1)
    after = plugin.batch_score_nodes(task, idx)
    assert before is not None
    assert after is not None
    assert (before.tolist(), after.tolist()) == ([200.0] * 4, [200.0, 0.0, 200.0, 200.0])
