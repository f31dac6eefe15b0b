"""Network-topology-aware scheduling as Volcano decides it: HyperNodes and a PodGroup's
`spec.networkTopology`, transcribed from Volcano's Go tests, then its e2e cases.

**`pkg/scheduler/api/hyper_node_info_test.go`** (the tree): `UpdateHyperNode_Normal`,
`_WithCycle`, `_MultipleParents`, `GetLeafNodes`, `NodeRegexOrLabelMatchHyperNode`,
`GetAncestors`, `GetLCAHyperNode` and `GetMembers`' label cases. The Go tests feed HyperNodes to
`HyperNodesInfo` one by one and read its maps; here the same objects (as the API server holds
them, converted by `convert.hypernode`) go to `model.topology.build_topology` and the `Topology`
is read. Divergences, each noted at its test: where Volcano's tree is left *unready* (a
membership cycle, a HyperNode claimed by two parents) and schedules no network-topology job at
all until it is mended, the tree here leaves out the HyperNodes of the cycle (a problem on each)
or keeps one parent (a warning on the other claimant) and the rest is used; two HyperNodes with no
common ancestor have the cluster's top as theirs (the session's virtual root, which Volcano's
session adds too), not "".

**`pkg/scheduler/plugins/network-topology-aware/network_topology_aware_test.go`**:
`TestHyperNodeOrderFn` (both cases, exact scores), `TestBatchNodeOrderFn`'s network-topology case
and its normal-pod case with custom arguments, the four job cases of
`TestHyperNodeGradientPreFiltering` (its sub-job and eviction cases need sub-groups and
HyperNode eviction domains, which vscheduler does not provide). The Go sub-job of those tests is
a PodGroup's `subGroupPolicy` holding every pod of the job: here the job itself (vscheduler has no
sub-groups, and a job without them is one sub-group in Volcano).

**`test/e2e/hypernode/network_topology_test.go`**: every case, on its cluster: eight kwok nodes
of 8 cpu and 8Gi (`hack/run-e2e-kind.sh`), each holding kind's `kindnet` pod (100m, 50Mi: the
DaemonSet tolerates every taint and the kwok nodes carry `kubernetes.io/os: linux`), and the
HyperNodes s0..s3 (tier 1, two nodes each), s4, s5 (tier 2), s6 (tier 3). The e2e's pods pinned
to a node (`CreatePod` with `Node`) are another scheduler's pods on it; its Volcano Job is what
the job controller makes of it (a PodGroup with the job's `minAvailable`, `networkTopology` and
`minResources` the request of its first `minAvailable` pods, and one pod per replica). The
policy is the e2e chart's `volcano-scheduler-ci.conf`, `network-topology-aware` included. The
pending cases (1.3, 2.2) wait for two Pending pods, which any job has before it is scheduled; in
the clusters they build a HyperNode has room, and Volcano's code places the job there, as here:
asserted is the placement (the intent, a job that no HyperNode holds, is our own test below).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from vscheduler.convert.hypernode import convert_hypernode
from vscheduler.convert.podgroup import convert_podgroup
from vscheduler.framework.topology import gradient, limit
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import NodeFacts, TaskFacts
from vscheduler.model.resources import Resources
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.model.topology import CLUSTER_TOP, HyperNodeFacts, Topology, build_topology
from vscheduler.plugins.network_topology_aware import NetworkTopologyAware
from vscheduler.testing.builders import (
    HyperNodeBuilder,
    Item,
    hypernode,
    node,
    pod,
    podgroup,
    queue,
    snapshot,
)
from vscheduler.testing.kind_e2e import CI_POLICY
from vscheduler.testing.scenario import Outcome, run
from vscheduler.testing.sessions import open_session

NTA = "network-topology-aware"


def member(name: str, kind: str, selector: str = "exact", labels: Any = None) -> dict[str, Any]:
    """Go's `MemberConfig{name, type, selector, labelSelector}`."""
    if selector == "exact":
        chosen: dict[str, Any] = {"exactMatch": {"name": name}}
    elif selector == "regex":
        chosen = {"regexMatch": {"pattern": name}}
    else:
        chosen = {"labelMatch": labels}
    return {"type": kind, "selector": chosen}


def build_hypernode(name: str, tier: int, *members: dict[str, Any]) -> HyperNodeFacts:
    """Go's `BuildHyperNode(name, tier, members)`, converted as from the API server."""
    return convert_hypernode(
        {
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "kind": "HyperNode",
            "metadata": {"name": name},
            "spec": {"tier": tier, "members": list(members)},
        }
    )


def nodes_named(*names: str, labels: dict[str, dict[str, str]] | None = None) -> list[NodeFacts]:
    return [
        NodeFacts(
            name=n, allocatable=Resources(), capacity=Resources(), labels=(labels or {}).get(n, {})
        )
        for n in names
    ]


def parents(tree: Topology) -> dict[str, str]:
    """`HyperNodesInfo()`'s `Parent:` of each HyperNode ("" for none)."""
    return {name: d.parent or "" for name, d in tree.domains.items()}


def real_nodes(tree: Topology) -> dict[str, set[str]]:
    """`realNodesSet`."""
    return {name: set(d.nodes) for name, d in tree.domains.items()}


def by_tier(tree: Topology) -> dict[int, set[str]]:
    """`hyperNodesSetByTier`."""
    out: dict[int, set[str]] = {}
    for name, d in tree.domains.items():
        out.setdefault(d.tier, set()).add(name)
    return out


# --- hyper_node_info_test.go ---------------------------------------------------------------------
def test_update_hypernode_normal() -> None:
    """`TestHyperNodesInfo_UpdateHyperNode_Normal`: s0 {node-0, node-1} and s1 {node-2, node-3}
    (tier 1) under s2 (tier 2)."""
    s0 = build_hypernode("s0", 1, member("node-0", "Node"), member("node-1", "Node"))
    s1 = build_hypernode("s1", 1, member("node-2", "Node"), member("node-3", "Node"))
    s2 = build_hypernode("s2", 2, member("s1", "HyperNode"), member("s0", "HyperNode"))

    tree = build_topology([s2, s0, s1], [])

    assert parents(tree) == {"s0": "s2", "s1": "s2", "s2": ""}
    assert real_nodes(tree) == {
        "s0": {"node-0", "node-1"},
        "s1": {"node-2", "node-3"},
        "s2": {"node-0", "node-1", "node-2", "node-3"},
    }
    assert by_tier(tree) == {1: {"s0", "s1"}, 2: {"s2"}}
    assert tree.problems == {}
    assert tree.warnings == {}


def test_a_membership_cycle_leaves_out_its_hypernodes_until_it_is_mended() -> None:
    """`TestHyperNodesInfo_UpdateHyperNode_WithCycle`: s1 holds s0 and s3, s2 holds s1, s3
    holds s2: a cycle s1 -> s3 -> s2 -> s1. Volcano reports an error and is unready (no job
    with a network topology is scheduled) until s1 is corrected to hold s0 only; here the three
    HyperNodes of the cycle are left out, each with a problem naming its member, and s0 is used
    meanwhile. Corrected, the tree is Volcano's: s0 < s1 < s2 < s3, every one holding node-0 and
    node-1."""
    s0 = build_hypernode("s0", 1, member("node-0", "Node"), member("node-1", "Node"))
    s1 = build_hypernode("s1", 2, member("s0", "HyperNode"), member("s3", "HyperNode"))
    s11 = build_hypernode("s1", 2, member("s0", "HyperNode"))
    s2 = build_hypernode("s2", 3, member("s1", "HyperNode"))
    s3 = build_hypernode("s3", 4, member("s2", "HyperNode"))

    broken = build_topology([s2, s0, s1, s3], [])
    mended = build_topology([s2, s0, s11, s3], [])

    assert list(broken.domains) == ["s0"]
    assert broken.problems == {
        "s1": "HyperNode s1: spec.members[1]: HyperNode s3 makes a membership cycle"
        " (s1 -> s3 -> s2 -> s1); the HyperNode is left out",
        "s2": "HyperNode s2: spec.members[0]: HyperNode s1 makes a membership cycle"
        " (s2 -> s1 -> s3 -> s2); the HyperNode is left out",
        "s3": "HyperNode s3: spec.members[0]: HyperNode s2 makes a membership cycle"
        " (s3 -> s2 -> s1 -> s3); the HyperNode is left out",
    }
    assert parents(mended) == {"s0": "s1", "s1": "s2", "s2": "s3", "s3": ""}
    assert real_nodes(mended) == {name: {"node-0", "node-1"} for name in ("s0", "s1", "s2", "s3")}
    assert mended.problems == {}


def test_a_hypernode_claimed_by_two_parents_keeps_one() -> None:
    """`TestHyperNodesInfo_UpdateHyperNode_MultipleParents`: s1 (tier 2) and s2 (tier 3) both
    hold s0. Volcano errs and is unready until s2 is corrected to hold s1; here s0 keeps the
    claimant of lowest tier, s1, and s2's claim is ignored with a warning on s2. Corrected, the
    tree is Volcano's: s0 < s1 < s2."""
    s0 = build_hypernode("s0", 1, member("node-0", "Node"), member("node-1", "Node"))
    s1 = build_hypernode("s1", 2, member("s0", "HyperNode"))
    s2 = build_hypernode("s2", 3, member("s0", "HyperNode"))
    s22 = build_hypernode("s2", 3, member("s1", "HyperNode"))

    broken = build_topology([s0, s1, s2], [])
    mended = build_topology([s0, s1, s22], [])

    assert parents(broken) == {"s0": "s1", "s1": "", "s2": ""}
    assert real_nodes(broken)["s2"] == set()
    (warning,) = broken.warnings["s2"]
    assert warning.message == (
        "HyperNode s2: spec.members[0]: HyperNode s0 is a member of HyperNode s1 (tier 2) too;"
        " a HyperNode has one parent, so this membership is ignored"
    )
    assert parents(mended) == {"s0": "s1", "s1": "s2", "s2": ""}
    assert real_nodes(mended) == {name: {"node-0", "node-1"} for name in ("s0", "s1", "s2")}


def test_leaf_hypernodes() -> None:
    """`TestHyperNodesInfo_GetLeafNodes`: the leaves under s3 (s3 > s2 > {s0, s1}) are s0, s1."""
    s0 = build_hypernode("s0", 1, member("node-0", "Node"), member("node-1", "Node"))
    s1 = build_hypernode("s1", 1, member("node-2", "Node"), member("node-3", "Node"))
    s2 = build_hypernode("s2", 2, member("s1", "HyperNode"), member("s0", "HyperNode"))
    s3 = build_hypernode("s3", 3, member("s2", "HyperNode"))
    tree = build_topology([s2, s3, s0, s1], [])

    def leaves(name: str) -> set[str]:
        children = tree.domains[name].children
        return {name} if not children else set().union(*(leaves(c) for c in children))

    assert leaves("s3") == {"s0", "s1"}


@pytest.mark.parametrize(
    ("node_name", "hypernode_name", "held"),
    [
        ("node-5", "s4", True),
        ("node-0", "s0", True),
        ("node-1", "s0", True),
        ("prefix-1", "s1", True),
        ("node-2", "s1", True),
        ("not-match-prefix", "s2", False),
        ("node-4", "s3", False),
        ("node-5", "s5", False),
        ("node-6", "s6", True),
    ],
)
def test_nodes_selected_by_pattern_or_labels(
    node_name: str, hypernode_name: str, held: bool
) -> None:
    """`TestHyperNodesInfo_NodeRegexOrLabelMatchHyperNode`: a node member by pattern (`^prefix`,
    `node-2`) or labels (`role: worker`, `role In [master]`) selects the nodes it matches; a
    pattern on a member of type HyperNode selects nothing (s2's `^not-match-prefix`, s3's
    `node-4`). The Go function asks about regex and label members only, so node-0 and node-1,
    s0's exact members, are "not match" there; the tree holds them, as its `realNodesSet` does."""
    hypernodes = [
        build_hypernode("s0", 1, member("node-0", "Node"), member("node-1", "Node")),
        build_hypernode(
            "s1", 1, member("^prefix", "Node", "regex"), member("node-2", "Node", "regex")
        ),
        build_hypernode(
            "s2",
            1,
            member("^not-match-prefix", "HyperNode", "regex"),
            member("node-3", "Node", "regex"),
        ),
        build_hypernode("s3", 1, member("node-4", "HyperNode", "regex")),
        build_hypernode("s4", 1, member("", "Node", "label", {"matchLabels": {"role": "worker"}})),
        build_hypernode(
            "s5", 1, member("", "Node", "label", {"matchLabels": {"role": "invalid-role"}})
        ),
        build_hypernode(
            "s6",
            1,
            member(
                "",
                "Node",
                "label",
                {"matchExpressions": [{"key": "role", "operator": "In", "values": ["master"]}]},
            ),
        ),
    ]
    nodes = nodes_named(
        "node-0",
        "node-1",
        "prefix-1",
        "node-2",
        "not-match-prefix",
        "node-4",
        "node-5",
        "node-6",
        labels={"node-5": {"role": "worker"}, "node-6": {"role": "master"}},
    )

    tree = build_topology(hypernodes, nodes)

    assert (node_name in tree.domains[hypernode_name].nodes) is held
    assert [w.message for w in tree.warnings["s2"]] == [
        "HyperNode s2: spec.members[0].selector.regexMatch: a member of type HyperNode is named"
        " by exactMatch only; this one selects nothing, as Volcano reads it"
    ]


@pytest.mark.parametrize(
    ("name", "ancestors"),
    [("s0", ["s0", "s2", "s3", "s4"]), ("s2", ["s2", "s3", "s4"]), ("s4", ["s4"])],
)
def test_ancestors(name: str, ancestors: list[str]) -> None:
    """`TestHyperNodesInfo_GetAncestors` (leaf, intermediate, root); the session's top comes
    last here, as Volcano's session adds it above every root."""
    hypernodes = [
        build_hypernode("s0", 1, member("node-0", "Node"), member("node-1", "Node")),
        build_hypernode("s4", 4, member("s3", "HyperNode")),
        build_hypernode("s1", 1, member("node-0", "Node"), member("node-1", "Node")),
        build_hypernode("s2", 2, member("s0", "HyperNode"), member("s1", "HyperNode")),
        build_hypernode("s3", 3, member("s2", "HyperNode")),
    ]
    assert build_topology(hypernodes, []).ancestors(name) == [*ancestors, CLUSTER_TOP]


@pytest.mark.parametrize(
    ("a", "b", "lca"),
    [
        ("s0", "s1", "s4"),
        ("s0", "s-orphan", CLUSTER_TOP),
        ("s4", "s0", "s4"),
        ("s6", "s6", "s6"),
    ],
)
def test_lowest_common_ancestor(a: str, b: str, lca: str) -> None:
    """`TestGetLCAHyperNode`: siblings, no common ancestor (Volcano's map without the session's
    top answers ""; with it, as in a session, the top), one holding the other, the same (the Go
    case names a HyperNode that is not in its map, `node6`, and gets it back; `s6` here)."""
    hypernodes = [
        build_hypernode("s0", 1, member("node-0", "Node"), member("node-1", "Node")),
        build_hypernode("s1", 1, member("node-2", "Node"), member("node-3", "Node")),
        build_hypernode("s2", 1, member("node-4", "Node"), member("node-5", "Node")),
        build_hypernode("s3", 1, member("node-6", "Node"), member("node-7", "Node")),
        build_hypernode("s4", 2, member("s0", "HyperNode"), member("s1", "HyperNode")),
        build_hypernode("s5", 2, member("s2", "HyperNode"), member("s3", "HyperNode")),
        build_hypernode("s6", 3, member("s4", "HyperNode"), member("s5", "HyperNode")),
        build_hypernode("s-orphan", 1, member("node-8", "Node"), member("node-9", "Node")),
    ]
    assert build_topology(hypernodes, []).lca(a, b) == lca


@pytest.mark.parametrize(
    ("selector", "selected"),
    [
        ({"matchLabels": {"role": "worker"}}, {"node-1"}),
        ({"matchLabels": {"role": "missing"}}, set()),
        (None, set()),
        ({}, set()),
        (
            {"matchExpressions": [{"key": "role", "operator": "In", "values": ["worker"]}]},
            {"node-1"},
        ),
        ({"matchExpressions": [{"key": "role", "operator": "In", "values": ["x"]}]}, set()),
        (
            {"matchExpressions": [{"key": "role", "operator": "NotIn", "values": ["worker"]}]},
            {"node-2"},
        ),
        ({"matchExpressions": [{"key": "zone", "operator": "Exists"}]}, {"node-1"}),
        ({"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}, {"node-2"}),
    ],
)
def test_members_selected_by_labels(selector: dict[str, Any] | None, selected: set[str]) -> None:
    """`TestGetMembers`: a label selector matching, not matching, nil, empty (selects nothing,
    as Volcano reads it, with a warning), In, In not matching, NotIn, Exists, DoesNotExist;
    node-1 `role: worker, zone: a`, node-2 `role: master`."""
    nodes = nodes_named(
        "node-1",
        "node-2",
        labels={"node-1": {"role": "worker", "zone": "a"}, "node-2": {"role": "master"}},
    )
    raw = member("", "Node", "label", selector)
    tree = build_topology([build_hypernode("s0", 1, raw)], nodes)
    assert set(tree.domains["s0"].nodes) == selected


# --- network_topology_aware_test.go ----------------------------------------------------------------
def three_tiers(*nodes_of: tuple[str, str, str, str], foo: tuple[int, ...] = ()) -> list[Item]:
    """The Go tests' cluster: s0 (tier 3) > s1 {s3, s4}, s2 {s5, s6} (tier 2) > s3..s6 (tier 1,
    two nodes each); `nodes_of`: (name, cpu, memory, pods) of each node, `foo` its
    `example.com/foo`."""
    items: list[Item] = []
    for k, (name, cpu, memory, _pods) in enumerate(nodes_of):
        amounts: dict[str, Any] = {"cpu": cpu, "memory": memory}
        if foo:
            amounts["example_com_foo"] = foo[k]
        items.append(node(name).resources(pods=10, **amounts))
    items += [
        hypernode("s0").tier(3).hypernodes("s1", "s2"),
        hypernode("s1").tier(2).hypernodes("s3", "s4"),
        hypernode("s2").tier(2).hypernodes("s5", "s6"),
        hypernode("s3").tier(1).nodes("s3-n1", "s3-n2"),
        hypernode("s4").tier(1).nodes("s4-n1", "s4-n2"),
        hypernode("s5").tier(1).nodes("s5-n1", "s5-n2"),
        hypernode("s6").tier(1).nodes("s6-n1", "s6-n2"),
    ]
    return items


NODES = (
    ("s3-n1", "2", "4G", "10"),
    ("s3-n2", "2", "4G", "10"),
    ("s4-n1", "4", "4G", "10"),
    ("s4-n2", "4", "4G", "10"),
    ("s5-n1", "2", "8G", "10"),
    ("s5-n2", "2", "8G", "10"),
    ("s6-n1", "4", "8G", "10"),
    ("s6-n2", "4", "8G", "10"),
)


def nta_policy(arguments: str = "{}") -> str:
    return f"""\
actions: "allocate"
tiers:
- plugins:
  - name: {NTA}
    arguments: {arguments}
"""


def plugin_of(snap: ClusterSnapshot, arguments: str = "{}") -> tuple[Any, NetworkTopologyAware]:
    session = open_session(snap, nta_policy(arguments))
    found = session.plugins[NTA]
    assert isinstance(found, NetworkTopologyAware)
    return session, found


DOMAINS = ("s0", "s1", "s2", "s3", "s4", "s5", "s6", CLUSTER_TOP)


@pytest.mark.parametrize(
    ("arguments", "foo", "expected"),
    [
        (
            "{}",
            None,
            {"s0": 25.0, "s1": 58.3, "s2": 45.8, "s3": 0.0, "s4": 100.0, "s5": 0.0, "s6": 75.0}
            | {CLUSTER_TOP: 25.0},
        ),
        (
            "{weight: 10, hypernode.binpack.cpu: 3, hypernode.binpack.memory: 4,"
            " hypernode.binpack.resources: 'nvidia.com/gpu, example.com/foo',"
            " hypernode.binpack.resources.nvidia.com/gpu: 2,"
            " hypernode.binpack.resources.example.com/foo: 3,"
            " hypernode.binpack.normal-pod.enable: true, hypernode.binpack.normal-pod.fading: 0}",
            (8, 0, 8, 0, 16, 0, 16, 0),
            {"s0": 266.7, "s1": 700.0, "s2": 450.0, "s3": 0.0, "s4": 0.0, "s5": 0.0, "s6": 800.0}
            | {CLUSTER_TOP: 266.7},
        ),
    ],
    ids=["default arguments", "customized arguments"],
)
def test_hypernode_order(
    arguments: str, foo: tuple[int, ...] | None, expected: dict[str, float]
) -> None:
    """`TestHyperNodeOrderFn`: a job of two pending pods asking 4 cpu and 4G (and, customized,
    8 `example.com/foo`) each: every candidate's binpack of the two pods' 8 cpu and 8G,
    0 where they overflow a resource (s3, s5 on cpu; s4 on `foo`), times 100 and the weight."""
    extra = {"example_com_foo": 8} if foo else {}
    items = three_tiers(*NODES, foo=foo or ())
    items += [podgroup("pg1", "ns1").min_member(2).inqueue().network_topology("hard", 2)]
    items += [
        pod(f"p{i}", "ns1").group("pg1").requests(cpu="4", memory="4G", **extra) for i in (1, 2)
    ]
    session, plugin = plugin_of(snapshot(*items), arguments)

    scores = plugin.score_hypernodes(session.jobs["ns1/pg1"], DOMAINS)

    assert scores == pytest.approx([expected[d] for d in DOMAINS], abs=0.1)


def test_node_scores_of_a_pod_of_a_job_with_a_network_topology() -> None:
    """`TestBatchNodeOrderFn` "score nodes for tasks with network topology": p2 runs on s4-n1,
    p1 is scored. The Go test sets the job's allocated HyperNode to s1 by hand (the PodGroup's
    `volcano.sh/job-allocated-hypernode`, which its scheduler never reads: it finds it from the
    running pods), and gets s3, s4 nodes 0.667 (their lowest common HyperNode with s1 is of tier
    2 of 1..4), s4's plus the half of the job on s4 (116.7), s5, s6 nodes 33.3. The job's
    HyperNode is where its pods run here, s4 (as Volcano's `recoverAllocatedHyperNode` finds
    it): s4's nodes score 1 plus the half of the job on s4 (150), s3's 66.7, s5's and s6's
    33.3."""
    items = three_tiers(*NODES)
    items += [podgroup("pg1", "ns1").min_member(2).inqueue().network_topology("hard", 2)]
    items += [
        pod("p1", "ns1").group("pg1").requests(cpu="2", memory="4G"),
        pod("p2", "ns1").group("pg1").requests(cpu="2", memory="4G").on("s4-n1"),
    ]
    session, plugin = plugin_of(snapshot(*items))
    task = next(t for t in session.tasks.values() if t.facts.name == "p1")

    scores = plugin.batch_score_nodes(task, np.arange(8))

    assert scores is not None
    assert [round(float(s), 1) for s in scores] == [
        66.7,
        66.7,
        150.0,
        150.0,
        33.3,
        33.3,
        33.3,
        33.3,
    ]


def test_node_scores_of_a_pod_without_a_network_topology() -> None:
    """`TestBatchNodeOrderFn` "score non-empty nodes for single task with no network topology
    and customized plugin arguments": p2, p3 run on s3's nodes, p1 (2 cpu, 4G, 8 foo) is
    scored with `fading: 0` (only tier 1 weighs: 0^0 = 1): each node its tier-1 HyperNode's
    binpack, 0 where it overflows (s3 is full)."""
    foo = (8, 8, 8, 8, 16, 16, 16, 16)
    items = three_tiers(*NODES, foo=foo)
    items += [podgroup("pg1", "ns1").inqueue()]
    request: dict[str, str | int] = {"cpu": "2", "memory": "4G", "example_com_foo": 8}
    items += [
        pod("p1", "ns1").group("pg1").requests(**request),
        pod("p2", "ns1").group("pg1").requests(**request).on("s3-n1"),
        pod("p3", "ns1").group("pg1").requests(**request).on("s3-n2"),
    ]
    arguments = (
        "{weight: 10, hypernode.binpack.cpu: 1, hypernode.binpack.memory: 4,"
        " hypernode.binpack.resources: 'nvidia.com/gpu, example.com/foo',"
        " hypernode.binpack.resources.nvidia.com/gpu: 2,"
        " hypernode.binpack.resources.example.com/foo: 3,"
        " hypernode.binpack.normal-pod.enable: true, hypernode.binpack.normal-pod.fading: 0}"
    )
    session, plugin = plugin_of(snapshot(*items), arguments)
    task = next(t for t in session.tasks.values() if t.facts.name == "p1")

    scores = plugin.batch_score_nodes(task, np.arange(8))

    assert scores is not None
    expected = [0.0, 0.0, 468.8, 468.8, 281.3, 281.3, 250.0, 250.0]
    assert [float(s) for s in scores] == pytest.approx(expected, abs=0.1)


@pytest.mark.parametrize(
    ("used", "releasing", "pipelined", "selected"),
    [
        (10, 5, 0, True),
        (10, 0, 15, True),
        (25, 15, 0, True),
        (25, 0, 0, False),
    ],
    ids=[
        "idle sufficient, future idle sufficient",
        "idle sufficient, future idle insufficient",
        "idle insufficient, future idle sufficient",
        "idle insufficient, future idle insufficient",
    ],
)
def test_the_gradient_leaves_out_a_hypernode_without_room_for_min_resources(
    used: int, releasing: int, pipelined: int, selected: bool
) -> None:
    """`TestHyperNodeGradientPreFiltering`, its job cases: a job of minResources 20 cpu, 40Gi
    within tier 2; hn-1-0 (10 nodes of 4 cpu, 8Gi) with idle 30 cpu (60Gi) or 15 (30Gi) and
    future idle 35 / 15 / 30 / 15: it is a candidate when either covers the minimum. The Go
    test sets the HyperNode's idle and future idle; here pods make them: `used` cpu running
    (of it `releasing` being deleted), `pipelined` cpu waiting, each with twice as many Gi, one
    pod per node of at most 4 cpu. (Scaled down from 100 HyperNodes of 10 nodes to 3.)"""
    items: list[Item] = []
    for h in range(3):
        names = [f"node-{h * 10 + j}" for j in range(10)]
        items += [node(n).resources(cpu="4", memory="8Gi") for n in names]
        items.append(hypernode(f"hn-1-{h}").tier(1).nodes(*names))
    items.append(hypernode("hn-2-0").tier(2).hypernodes("hn-1-0", "hn-1-1", "hn-1-2"))

    def fill(cpu: int, status: TaskStatus, prefix: str, start: int) -> list[Item]:
        out: list[Item] = []
        j = start
        while cpu > 0:
            take = min(cpu, 4)
            builder = (
                pod(f"{prefix}-{j}").scheduler("other").requests(cpu=take, memory=f"{2 * take}Gi")
            )
            out.append(dataclasses.replace(builder.on(f"node-{j}", status).build(), job=""))
            cpu -= take
            j += 1
        return out

    items += fill(used - releasing, TaskStatus.RUNNING, "run", 0)
    items += fill(releasing, TaskStatus.RELEASING, "rel", 3)
    items += fill(pipelined, TaskStatus.PIPELINED, "pip", 5)
    items += [podgroup("j").inqueue().min_resources(cpu="20", memory="40Gi")]
    items += [pod("j-0").group("j").requests(cpu="1")]
    session = open_session(snapshot(*items), nta_policy())
    view = session.topology
    assert np.isclose(view.total("hn-1-0", session.ledger.idle)[0], (40 - used) * 1000)

    found = gradient(view, session.jobs["default/j"], 2, "")

    candidates = {name for tier in found.tiers for name in tier}
    assert ("hn-1-0" in candidates) is selected
    assert found.tiers[0] == tuple(sorted(n for n in candidates if n.startswith("hn-1")))


# --- network_topology_test.go (e2e) --------------------------------------------------------------
KWOK = tuple(f"kwok-node-{i}" for i in range(8))
E2E_POLICY = CI_POLICY
"""`volcano-scheduler-ci.conf`, `network-topology-aware` included."""


def e2e_cluster() -> list[Item]:
    """The eight kwok nodes with their kindnet pods, and the 3-tier HyperNodes."""
    items: list[Item] = []
    for name in KWOK:
        items.append(node(name).resources(cpu="8", memory="8Gi"))
        items.append(other(f"kindnet-{name}", name, "100m", "50Mi", "kube-system"))
    pairs = [KWOK[i : i + 2] for i in range(0, 8, 2)]
    items += [hypernode(f"s{k}").tier(1).nodes(*pair) for k, pair in enumerate(pairs)]
    items += [
        hypernode("s4").tier(2).hypernodes("s0", "s1"),
        hypernode("s5").tier(2).hypernodes("s2", "s3"),
        hypernode("s6").tier(3).hypernodes("s4", "s5"),
    ]
    return items


def other(name: str, on: str, cpu: str, memory: str, namespace: str = "default") -> TaskFacts:
    """A running pod of another scheduler, no job's."""
    built = pod(name, namespace).scheduler("default-scheduler").requests(cpu=cpu, memory=memory)
    return dataclasses.replace(built.on(on).build(), job="")


CPU_MEM = {"CPU1Mem1": ("1", "1Gi"), "CPU2Mem2": ("2", "2Gi"), "CPU4Mem4": ("4", "4Gi")}
CPU_MEM |= {"CPU5Mem5": ("5", "5Gi"), "CPU6Mem6": ("6", "6Gi")}


def pinned(*specs: tuple[int, str]) -> list[Item]:
    """The case's `PodSpec`s pinned to kwok nodes: (node index, request name)."""
    return [other(f"pod-{i}", f"kwok-node-{n}", *CPU_MEM[req]) for i, (n, req) in enumerate(specs)]


def vcjob(
    name: str,
    req: str,
    *,
    mode: str = "hard",
    tier: int | None = 1,
    replicas: int = 2,
    minimum: bool = True,
) -> list[Item]:
    """A Volcano Job of one task of `replicas` pods (`Min` = `Rep`), its networkTopology
    (`minimum`: the PodGroup's minResources, as the job controller sets them; a PodGroup made
    by hand may have none)."""
    cpu, memory = CPU_MEM[req]
    total_cpu = str(int(cpu) * replicas)
    group = podgroup(name).min_member(replicas).controlled().network_topology(mode, tier)
    if minimum:
        group = group.min_resources(cpu=total_cpu, memory=f"{int(cpu) * replicas}Gi")
    items: list[Item] = [group]
    return items + [
        pod(f"{name}-task-{i}").group(name).requests(cpu=cpu, memory=memory).created(1)
        for i in range(replicas)
    ]


def placed(outcome: Outcome) -> set[str]:
    return set(outcome.binds.values())


def test_e2e_1_1_a_hard_job_goes_to_the_tier_1_hypernode_it_packs_best() -> None:
    """Case 1.1: pods of 1 cpu on node-2 and node-3 make s1 the best packed; a hard tier-1 job
    of two 2-cpu pods goes there (node-2, node-3)."""
    snap = snapshot(
        *e2e_cluster(), *pinned((2, "CPU1Mem1"), (3, "CPU1Mem1")), *vcjob("job-1-1", "CPU2Mem2")
    )

    (outcome,) = run(snap, policy=E2E_POLICY)

    assert len(outcome.binds) == 2
    assert placed(outcome) <= {"kwok-node-2", "kwok-node-3"}


def test_e2e_1_2_a_full_hypernode_is_passed_over_for_the_next_best() -> None:
    """Case 1.2: s1 cannot take two 4-cpu pods (node-2 and node-3 hold 4 cpu and kindnet's
    100m each); s2 (a 1-cpu pod on node-4) packs best of the rest: node-4, node-5."""
    pods = pinned((2, "CPU4Mem4"), (3, "CPU4Mem4"), (4, "CPU1Mem1"))
    snap = snapshot(*e2e_cluster(), *pods, *vcjob("job-1-2", "CPU4Mem4"))

    (outcome,) = run(snap, policy=E2E_POLICY)

    assert len(outcome.binds) == 2
    assert placed(outcome) <= {"kwok-node-4", "kwok-node-5"}


def test_e2e_1_3_the_job_goes_where_a_tier_1_hypernode_has_room() -> None:
    """Case 1.3 ("pods remain pending when no hypernode has sufficient resources"): it fills
    node-2 and node-6 (two 4-cpu pods each, with kindnet beyond their 8 cpu) and half of node-0,
    node-3, node-4 and node-7; s0 (node-1 is empty) and s2 (node-5) still hold the job, s1 and
    s3 overflow. The e2e waits for 2 Pending pods, which the job has before it is scheduled;
    Volcano's binpack scores s0 and s2 alike and picks one at random; here the first by name."""
    pods = pinned(*((n, "CPU4Mem4") for n in (0, 2, 2, 3, 4, 6, 6, 7)))
    snap = snapshot(*e2e_cluster(), *pods, *vcjob("job-1-3", "CPU2Mem2"))

    (outcome,) = run(snap, policy=E2E_POLICY)

    assert placed(outcome) <= {"kwok-node-0", "kwok-node-1"}
    assert len(outcome.binds) == 2


def test_e2e_2_1_a_tier_2_job_takes_the_best_packed_hypernode_of_the_lowest_tier() -> None:
    """Case 2.1: 4-cpu pods on node-0, 2, 4, 6 and a 1-cpu pod on node-5; a hard tier-2 job of
    two 2-cpu pods. Tier 1 is tried first and every tier-1 HyperNode holds the job; s2 packs
    best (node-4 and node-5 hold 5.2 cpu), and the pods land on node-5: within the e2e's
    expected node-5, node-7."""
    pods = pinned(
        (0, "CPU4Mem4"), (2, "CPU4Mem4"), (4, "CPU4Mem4"), (6, "CPU4Mem4"), (5, "CPU1Mem1")
    )
    snap = snapshot(*e2e_cluster(), *pods, *vcjob("job-2-1", "CPU2Mem2", tier=2))

    (outcome,) = run(snap, policy=E2E_POLICY)

    assert len(outcome.binds) == 2
    assert placed(outcome) <= {"kwok-node-5", "kwok-node-7"}


def test_e2e_2_2_a_tier_2_job_is_placed_where_tier_1_has_room() -> None:
    """Case 2.2 ("pods are pending when tier 2 resources are insufficient"): the pods it pins
    leave every tier-1 HyperNode room for two 2-cpu pods; the e2e waits for 2 Pending pods, which
    the job has before it is scheduled. Volcano's code places it in tier 1, as here (s0 and s2
    pack alike: the first by name)."""
    pods = pinned(
        (0, "CPU4Mem4"), (1, "CPU4Mem4"), (2, "CPU4Mem4"), (4, "CPU4Mem4"), (5, "CPU1Mem1"),
        (6, "CPU1Mem1"),
    )  # fmt: skip
    snap = snapshot(*e2e_cluster(), *pods, *vcjob("job-2-2", "CPU2Mem2", tier=2))

    (outcome,) = run(snap, policy=E2E_POLICY)

    assert placed(outcome) <= {"kwok-node-0", "kwok-node-1"}


def test_e2e_2_3_a_pod_of_a_running_job_comes_back_to_its_hypernode() -> None:
    """Case 2.3: with a 1-cpu pod on node-0, the job goes to s0; one of its pods is deleted and
    made again (the job controller), and it comes back to s0, whichever HyperNode packs best
    then: the job keeps to the HyperNode its running pod is in."""
    snap = snapshot(*e2e_cluster(), *pinned((0, "CPU1Mem1")), *vcjob("job-2-3", "CPU2Mem2"))

    def kill_one(i: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        if i != 1:
            return snap
        tasks = dict(snap.tasks)
        killed = tasks.pop("default/job-2-3-task-0")
        back = dataclasses.replace(
            killed, uid="default/job-2-3-task-0-new", node_name=None, status=TaskStatus.PENDING
        )
        tasks[back.uid] = back
        return dataclasses.replace(snap, tasks=tasks)

    first, second = run(snap, policy=E2E_POLICY, cycles=2, between=kill_one)

    assert placed(first) <= {"kwok-node-0", "kwok-node-1"}
    assert second.binds
    assert placed(second) <= {"kwok-node-0", "kwok-node-1"}


def test_e2e_3_1_a_soft_job_goes_to_the_lowest_tier_that_holds_it() -> None:
    """Case 3.1: every tier-1 HyperNode has room for one 2-cpu pod only (6-cpu pods on node-0,
    2, 4, 6; 4 or 5 cpu on the others; kindnet's 100m each); a soft job of two such pods goes to
    tier 2, to s5, the better packed: node-5 and node-7."""
    pods = pinned(
        (0, "CPU6Mem6"), (2, "CPU6Mem6"), (4, "CPU6Mem6"), (6, "CPU6Mem6"), (1, "CPU4Mem4"),
        (3, "CPU4Mem4"), (5, "CPU5Mem5"), (7, "CPU4Mem4"),
    )  # fmt: skip
    snap = snapshot(*e2e_cluster(), *pods, *vcjob("job-3-1", "CPU2Mem2", mode="soft", tier=None))

    (outcome,) = run(snap, policy=E2E_POLICY)

    assert placed(outcome) == {"kwok-node-5", "kwok-node-7"}


# --- beyond Volcano's tests ----------------------------------------------------------------------
def test_a_hard_job_no_hypernode_holds_stays_pending_and_says_so() -> None:
    """Every node has 1.9 cpu (and 1.95Gi) free; a hard tier-1 job (its PodGroup without minResources, so
    every HyperNode is tried) of two 2-cpu pods waits: each pod names the nodes of the last
    HyperNode tried (Volcano's `In hyperNode s3:`), then the constraint, then its gang, as its
    PodGroup's condition does."""
    pods = pinned(*((n, "CPU6Mem6") for n in range(8)))
    snap = snapshot(*e2e_cluster(), *pods, *vcjob("job", "CPU2Mem2", minimum=False))

    (outcome,) = run(snap, policy=E2E_POLICY)

    held = (
        "networkTopology hard, highestTierAllowed 1: no HyperNode of tier 1 or lower holds the"
        " job whole (4 tried)"
    )
    assert outcome.binds == {}
    assert outcome.unschedulable["default/job-task-0"] == (
        "In hyperNode s3: 0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory. "
        + held
        + ". 2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable;"
        " Pending: 2 Unschedulable"
    )
    condition = outcome.result.podgroups["default/job"].conditions
    assert any(c.message.startswith(held) for c in condition)


def test_highest_tier_name_reads_the_tier_of_the_hypernodes_named() -> None:
    """`highestTierName: rack` is tier 2 (s4's and s5's `spec.tierName`); a name no HyperNode
    has keeps the job pending (Volcano would place it anywhere) with the reason."""
    items = e2e_cluster()
    items[-3] = hypernode("s4").tier(2, "rack").hypernodes("s0", "s1")
    items[-2] = hypernode("s5").tier(2, "rack").hypernodes("s2", "s3")
    pods = pinned(*((n, "CPU6Mem6") for n in (0, 2, 4, 6)))
    wants: list[Item] = [podgroup("j").min_member(2).network_topology("hard", None, "rack")]
    wants += [pod(f"j-{i}").group("j").requests(cpu="4", memory="1Gi") for i in range(2)]
    typo: list[Item] = [podgroup("k").min_member(1).network_topology("hard", None, "rakc")]
    typo += [pod("k-0").group("k").requests(cpu="1")]

    (outcome,) = run(snapshot(*items, *pods, *wants, *typo), policy=E2E_POLICY)

    assert {outcome.binds["default/j-0"], outcome.binds["default/j-1"]} <= set(KWOK[:4]) or {
        outcome.binds["default/j-0"],
        outcome.binds["default/j-1"],
    } <= set(KWOK[4:])
    assert outcome.unschedulable["default/k-0"] == (
        "networkTopology.highestTierName 'rakc' is no HyperNode's spec.tierName"
    )


def test_a_soft_job_no_hypernode_holds_is_placed_across_the_cluster() -> None:
    """Four 3-cpu pods soft: no HyperNode below the top holds them (each tier-2 HyperNode has
    four nodes with 2.9 cpu free... one pod each), so they go across the cluster."""
    pods = pinned(*((n, "CPU5Mem5") for n in range(8)))
    snap = snapshot(
        *e2e_cluster(), *pods, *vcjob("job", "CPU2Mem2", mode="soft", tier=None, replicas=8)
    )

    (outcome,) = run(snap, policy=E2E_POLICY)

    assert len(outcome.binds) == 8
    assert placed(outcome) == set(KWOK)


def test_without_the_plugin_a_hard_job_is_still_kept_within_one_hypernode() -> None:
    """Volcano enforces hard mode only through `network-topology-aware`'s gradient; here
    allocate does whatever the policy: with the plugin left out, the job still shares one
    tier-1 HyperNode (the first by name that holds it)."""
    policy = E2E_POLICY.replace("  - name: network-topology-aware\n", "")
    snap = snapshot(*e2e_cluster(), *vcjob("job", "CPU4Mem4"))

    (outcome,) = run(snap, policy=policy)

    assert placed(outcome) == {"kwok-node-0", "kwok-node-1"}


def test_a_job_without_a_network_topology_ignores_hypernodes_boundaries() -> None:
    """The same job with no `networkTopology` spreads as binpack and nodeorder choose."""
    items = vcjob("job", "CPU4Mem4", replicas=3)
    group = items[0]
    assert not isinstance(group, TaskFacts)
    plain = dataclasses.replace(group.build(), network_topology=None)  # type: ignore[union-attr]
    (outcome,) = run(snapshot(*e2e_cluster(), plain, *items[1:]), policy=E2E_POLICY)

    assert len(outcome.binds) == 3


def test_hard_mode_without_a_tier_constrains_nothing() -> None:
    """`mode: hard` without `highestTierAllowed` or `highestTierName` is no constraint in
    Volcano (`IsHardTopologyMode` needs the tier); the converter warns about it."""
    raw = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": "default"},
        "spec": {"minMember": 1, "networkTopology": {"mode": "hard"}},
    }
    job = convert_podgroup(raw, priority_classes={})
    assert job.network_topology is not None
    assert limit(job.network_topology, build_topology([], [])).highest is None
    assert [w.message for w in job.warnings] == [
        "PodGroup default/pg: spec.networkTopology: mode hard names no highestTierAllowed or"
        " highestTierName; it constrains nothing, as Volcano reads it"
    ]


def test_no_hypernode_with_room_for_min_resources_is_tried_at_all() -> None:
    """The same with the job controller's minResources (4 cpu): no tier-1 HyperNode has that
    much idle (3.8 cpu), so none is tried (Volcano's gradient pre-filter) and the pods say so."""
    pods = pinned(*((n, "CPU6Mem6") for n in range(8)))
    (outcome,) = run(snapshot(*e2e_cluster(), *pods, *vcjob("job", "CPU2Mem2")), policy=E2E_POLICY)
    assert outcome.unschedulable["default/job-task-1"] == (
        "networkTopology hard, highestTierAllowed 1: no HyperNode of tier 1 or lower has the idle"
        " room its minResources ask. 2/2 tasks in gang unschedulable: pod group is not ready,"
        " 2 Pending, 2 minAvailable; Pending: 2 Unschedulable"
    )


def test_hypernode_builder_round_trips() -> None:
    """The builder's HyperNode is the converter's reading of its raw object."""
    built = HyperNodeBuilder("s0").tier(2, "rack").nodes("n0").regex("^n").labels(zone="a")
    assert built.build() == convert_hypernode(built.raw())


def test_a_job_its_queue_refuses_says_so_not_that_no_hypernode_holds_it() -> None:
    """A hard job in a queue of capability 1 cpu: its queue refuses its pods in every HyperNode
    tried; the pods carry the queue's refusal, and no HyperNode reason is added."""
    items = vcjob("job", "CPU2Mem2", minimum=False)
    group = items[0]
    assert not isinstance(group, TaskFacts)
    small = dataclasses.replace(group.build(), queue="small")  # type: ignore[union-attr]
    snap = snapshot(*e2e_cluster(), queue("small").capability(cpu="1"), small, *items[1:])

    (outcome,) = run(snap, policy=E2E_POLICY)

    message = outcome.unschedulable["default/job-task-0"]
    assert message.startswith("queue small has no room left for this pod (proportion:"), message
    assert "networkTopology" not in message


def test_a_job_with_a_network_topology_evicts_nothing() -> None:
    """Volcano's preempt leaves jobs with a network topology out ("do not support
    preemption"); here reclaim, gangpreempt and gangreclaim do too. A high-priority hard job
    in a cluster full of low-priority pods of its queue stays pending, and nothing is
    evicted for it; the same job without a network topology preempts."""
    low = [
        pod(f"low-{i}").group("low").requests(cpu="7", memory="1Gi").on(name).priority(1)
        for i, name in enumerate(KWOK)
    ]
    low_group = podgroup("low").min_member(1).inqueue().priority(1)
    policy = (
        'actions: "enqueue, allocate, preempt, reclaim, gangpreempt, gangreclaim, backfill"\n'
        + E2E_POLICY.split("\n", 1)[1]
    )
    for wanted, evicts in ((True, False), (False, True)):
        items = vcjob("job", "CPU2Mem2", minimum=False)
        group = items[0]
        assert not isinstance(group, TaskFacts)
        facts = group.build()  # type: ignore[union-attr]
        if not wanted:
            facts = dataclasses.replace(facts, network_topology=None)
        facts = dataclasses.replace(facts, priority=100, phase=PodGroupPhase.INQUEUE)
        tasks = [dataclasses.replace(t.build(), priority=100) for t in items[1:]]  # type: ignore[union-attr]
        snap = snapshot(*e2e_cluster(), low_group, *low, facts, *tasks)

        (outcome,) = run(snap, policy=policy)

        assert bool(outcome.evictions) is evicts, outcome.evictions
