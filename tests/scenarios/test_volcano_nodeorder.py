"""nodeorder as Volcano scores, transcribed from Volcano's `pkg/scheduler/plugins/nodeorder/
nodeorder_test.go`: the seven cases of `TestNodeOrderPlugin`, each running `allocate` over one
tier of gang (`EnabledJobReady`) and nodeorder (`EnabledNodeOrder`, with the case's eight
weights; every weight the case does not name is 0), written out with `go_tiers`.

The Go test checks only where the pending pod is bound (`ExpectBindMap`). Each test here checks
that bind, and also, through `simulate --explain`'s node table (`vscheduler.simulate.explain` on
a session as it opens), every node's total score: since every other weight is 0, the total is the
one weighted score of the case, and the bind is not a tie that fell to the first node. The
expected totals are kube-scheduler's formulas (Volcano's nodeorder runs kube's score plugins),
worked out in each docstring; docs/policy.md §5.9 states ours.

Objects are Volcano's test helpers, through the fluent builders: `util.BuildPod(ns, name, node,
phase, requests, group, labels, selector)` is a pod of namespace `c1` in PodGroup `pg1` (running
on `node` when one is named); `util.BuildPodGroup("pg1", "c1", "c1", 0, nil, Inqueue)` a
PodGroup of minMember 0 in queue `c1`, Inqueue; `util.BuildQueue("c1", 1, nil)` a queue of
weight 1; `util.BuildNode(name, BuildResourceList(cpu, memory, pods: 10), labels)` a node of that
allocatable. Amounts are as written: "1G" memory is 10^9 bytes, "1Gi" 2^30.

Skipped: `TestInitPlugin`, which checks which kube score plugins Volcano's nodeorder wires up
for a set of weights (an internal map, with no counterpart in a cycle's outcome; that a weight of
0 skips its score is docs/policy.md §5.9).
"""

from __future__ import annotations

from vscheduler.simulate import explain
from vscheduler.testing.builders import (
    Item,
    PodBuilder,
    expr,
    node,
    pod,
    pod_term,
    podgroup,
    queue,
    snapshot,
    spread,
    term,
)
from vscheduler.testing.scenario import run
from vscheduler.testing.sessions import open_session
from vscheduler.testing.volcano import go_tiers

HOST = "kubernetes.io/hostname"
WEIGHTS = (
    "leastrequested",
    "mostrequested",
    "balancedresource",
    "nodeaffinity",
    "tainttoleration",
    "podaffinity",
    "podtopologyspread",
    "imagelocality",
)


def policy(**weights: int) -> str:
    """The Go test's tier: gang (jobReady) then nodeorder (nodeOrder) with these weights, the
    others 0 (nodeorder is the tier's last plugin, so its arguments end the text)."""
    assert set(weights) <= set(WEIGHTS)
    text = go_tiers("allocate", gang=("enableJobReady",), nodeorder=("enableNodeOrder",))
    args = [f"      {name}.weight: {weights.get(name, 0)}" for name in WEIGHTS]
    return text + "    arguments:\n" + "\n".join(args) + "\n"


def build_pod(name: str, cpu: str = "1", memory: str = "1G", on: str = "") -> PodBuilder:
    """`util.BuildPod("c1", name, on, ..., requests, "pg1", ...)`."""
    built = pod(name, "c1").group("pg1").requests(cpu=cpu, memory=memory)
    return built.on(on) if on else built


def cluster(*items: Item) -> list[Item]:
    """The objects every case shares: PodGroup pg1 (minMember 0, Inqueue) in queue c1."""
    return [
        queue("c1").weight(1),
        podgroup("pg1", "c1").queue("c1").min_member(0).inqueue(),
        *items,
    ]


def bind_and_totals(
    items: list[Item], text: str, key: str
) -> tuple[dict[str, str], dict[str, object]]:
    """The cycle's binds, and each node's total score for pod `key` as the session opens."""
    snap = snapshot(*items)
    [outcome] = run(snap, policy=text)
    session = open_session(snap, text)
    [task] = [t for t in session.tasks.values() if t.key == key]
    nodes = explain(session, task)["nodes"]
    assert isinstance(nodes, dict)
    return outcome.binds, {name: data["total"] for name, data in nodes.items()}


def test_least_requested_binds_the_pod_to_the_emptier_node() -> None:
    """TestNodeOrderPlugin "leastAllocated strategy": a pod of 1 cpu, 1G on n1 (2 cpu, 4Gi) or
    n2 (4 cpu, 8Gi), leastrequested weight 1. kube: n1 (cpu 50 + memory 76) // 2 = 63; n2
    (75 + 88) // 2 = 81."""
    nodes = [
        node("n1").resources(cpu="2", memory="4Gi", pods=10),
        node("n2").resources(cpu="4", memory="8Gi", pods=10),
    ]
    binds, totals = bind_and_totals(
        cluster(*nodes, build_pod("p1")), policy(leastrequested=1), "c1/p1"
    )
    assert binds == {"c1/p1": "n2"}
    assert totals == {"n1": 63, "n2": 81}


def test_most_requested_binds_the_pod_to_the_fuller_node() -> None:
    """TestNodeOrderPlugin "mostAllocated strategy": the same cluster, mostrequested weight 1.
    kube: n1 (cpu 50 + memory 23) // 2 = 36; n2 (25 + 11) // 2 = 18."""
    nodes = [
        node("n1").resources(cpu="2", memory="4Gi", pods=10),
        node("n2").resources(cpu="4", memory="8Gi", pods=10),
    ]
    binds, totals = bind_and_totals(
        cluster(*nodes, build_pod("p1")), policy(mostrequested=1), "c1/p1"
    )
    assert binds == {"c1/p1": "n1"}
    assert totals == {"n1": 36, "n2": 18}


def test_balanced_resource_binds_the_pod_where_cpu_and_memory_stay_balanced() -> None:
    """TestNodeOrderPlugin "balanced allocation prefers balanced node": a pod of 1 cpu, 1Gi on
    n1 (2 cpu, 2Gi: fractions 0.5, 0.5) or n2 (4 cpu, 2Gi: 0.25, 0.5), balancedresource weight
    10. kube: n1 100, n2 floor((1 - 0.125) × 100) = 87; times 10."""
    nodes = [
        node("n1").resources(cpu="2", memory="2Gi", pods=10),
        node("n2").resources(cpu="4", memory="2Gi", pods=10),
    ]
    items = cluster(*nodes, build_pod("p1", memory="1Gi"))
    binds, totals = bind_and_totals(items, policy(balancedresource=10), "c1/p1")
    assert binds == {"c1/p1": "n1"}
    assert totals == {"n1": 1000, "n2": 870}


def test_node_affinity_binds_the_pod_to_the_node_of_its_preferred_zone() -> None:
    """TestNodeOrderPlugin "node affinity prefers labeled node": a preferred term (weight 100)
    for `zone In (zone1)`; n1 is in zone1, n2 in zone2; nodeaffinity weight 10. kube: n1 100,
    n2 0; times 10."""
    nodes = [
        node("n1").resources(cpu="2", memory="4Gi", pods=10).labels(zone="zone1"),
        node("n2").resources(cpu="2", memory="4Gi", pods=10).labels(zone="zone2"),
    ]
    p1 = build_pod("p1").prefer(100, term(expr("zone", "In", "zone1")))
    binds, totals = bind_and_totals(cluster(*nodes, p1), policy(nodeaffinity=10), "c1/p1")
    assert binds == {"c1/p1": "n1"}
    assert totals == {"n1": 1000, "n2": 0}


def test_taint_toleration_binds_a_pod_without_tolerations_to_the_untainted_node() -> None:
    """TestNodeOrderPlugin "taint toleration prefers non-tainted node": n2 has a
    `key1=value1:PreferNoSchedule` taint, the pod no toleration; tainttoleration weight 10.
    kube: n1 100, n2 100 − 100 × 1 // 1 = 0; times 10."""
    nodes = [
        node("n1").resources(cpu="2", memory="4Gi", pods=10),
        node("n2")
        .resources(cpu="2", memory="4Gi", pods=10)
        .taint("key1", "value1", "PreferNoSchedule"),
    ]
    binds, totals = bind_and_totals(
        cluster(*nodes, build_pod("p1")), policy(tainttoleration=10), "c1/p1"
    )
    assert binds == {"c1/p1": "n1"}
    assert totals == {"n1": 1000, "n2": 0}


def test_pod_affinity_binds_the_pod_beside_the_pod_it_prefers() -> None:
    """TestNodeOrderPlugin "inter-pod affinity prefers node with matching pod": p1
    (`service: s1`) runs on n1, p-noise (`service: s2`) on n3; p2 prefers (weight 100) pods of
    `service: s1` by hostname; podaffinity weight 10. kube: raw n1 100, n2 0, n3 0, normalised
    to 100, 0, 0; times 10."""
    nodes = [
        node(n).resources(cpu="2", memory="4Gi", pods=10).label(HOST, n) for n in ("n1", "n2", "n3")
    ]
    pods = [
        build_pod("p1", on="n1").labels(service="s1"),
        build_pod("p-noise", on="n3").labels(service="s2"),
        build_pod("p2").prefer_affinity(100, pod_term(HOST, service="s1")),
    ]
    binds, totals = bind_and_totals(cluster(*nodes, *pods), policy(podaffinity=10), "c1/p2")
    assert binds == {"c1/p2": "n1"}
    assert totals == {"n1": 1000, "n2": 0, "n3": 0}


def test_pod_topology_spread_binds_the_pod_in_the_zone_with_fewest_matching_pods() -> None:
    """TestNodeOrderPlugin "pod topology spread prefers node to reduce skew": pods `app: foo`,
    two on n1 (zone1), one on n2 (zone2), none on n3 (zone3); p4 (`app: foo`) spreads over `zone`
    with maxSkew 1, ScheduleAnyway; podtopologyspread weight 10. kube: raw count × ln(3 + 2)
    rounded: n1 3, n2 2, n3 0; normalised 100 × (3 + 0 − raw) // 3: 0, 33, 100; times 10."""
    nodes = [
        node(n).resources(cpu="4", memory="4Gi", pods=10).labels(zone=z)
        for n, z in (("n1", "zone1"), ("n2", "zone2"), ("n3", "zone3"))
    ]
    pods = [
        build_pod("p1", on="n1").labels(app="foo"),
        build_pod("p2", on="n1").labels(app="foo"),
        build_pod("p3", on="n2").labels(app="foo"),
        build_pod("p4").labels(app="foo").spread(spread("zone", 1, hard=False, app="foo")),
    ]
    binds, totals = bind_and_totals(cluster(*nodes, *pods), policy(podtopologyspread=10), "c1/p4")
    assert binds == {"c1/p4": "n3"}
    assert totals == {"n1": 0, "n2": 330, "n3": 1000}
