"""What predicates and nodeorder derive from the nodes alone is kept from one session to the next
while the snapshot holds the very same nodes (`NodeMemo`), per pod template (`TemplateTable`):
sessions over the same nodes share it, other nodes make it anew, and the decisions are those of
a policy that keeps nothing."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings, strategies as st

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.framework import nodememo
from vscheduler.framework.nodememo import NodeMemo, TemplateTable
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import NodeFacts, Requirement, SelectorTerm
from vscheduler.plugins.nodeorder import plugin as nodeorder
from vscheduler.plugins.predicates import plugin as predicates
from vscheduler.testing.builders import START, Item, PodBuilder, node, pod, snapshot
from vscheduler.testing.sessions import open_session

NODES = (
    node("n0").resources(cpu=4, memory="8Gi").label("zone", "a"),
    node("n1").resources(cpu=4, memory="8Gi").label("zone", "b").taint("t", "", "PreferNoSchedule"),
)


def views(snap: ClusterSnapshot, pipeline: object) -> tuple[object, object]:
    session = open_session(snap, pipeline)  # type: ignore[arg-type]
    found = session.plugins[predicates.NAME], session.plugins[nodeorder.NAME]
    assert isinstance(found[0], predicates.Predicates)
    assert isinstance(found[1], nodeorder.NodeOrder)
    return found[0]._views, found[1]._views


def test_a_node_memo_makes_its_value_again_only_for_other_nodes_or_node_facts_it_reads() -> None:
    made: list[int] = []

    def make(nodes: tuple[NodeFacts, ...]) -> int:
        made.append(len(nodes))
        return len(made)

    memo = NodeMemo(make)
    nodes: tuple[NodeFacts, ...] = tuple(n.build() for n in NODES)
    assert memo.get(nodes) == memo.get(nodes) == 1
    assert memo.get(tuple(n.build() for n in NODES)) == 1  # equal nodes, other objects
    ttl = (
        dataclasses.replace(nodes[0], annotations={"node.alpha.kubernetes.io/ttl": "15"}),
        nodes[1],
    )
    assert memo.get(ttl) == 1  # annotations alone: nothing made of the nodes reads them
    assert memo.get(nodes[::-1]) == 2  # other order
    assert memo.get((NODES[0].label("zone", "c").build(), nodes[1])) == 3
    assert memo.get(nodes[:1]) == 4
    assert made == [2, 2, 2, 1]


def test_a_template_table_starts_again_past_its_bound() -> None:
    table: TemplateTable[int] = TemplateTable()
    for i in range(nodememo.TEMPLATES_HELD):
        table.put(i, i)
    assert table.get(0) == 0
    table.put("one more", 1)
    assert table.get(0) is None
    assert table.get("one more") == 1


def test_sessions_over_the_same_nodes_share_their_views_and_other_nodes_get_new_ones() -> None:
    pipeline = catalog.load_pipeline(None)
    first = snapshot(*NODES, pod("a").requests(cpu=1))
    later = dataclasses.replace(snapshot(*NODES, pod("b").requests(cpu=1)), nodes=first.nodes)
    kept = views(first, pipeline)
    assert views(later, pipeline) == kept
    relabelled = snapshot(node("n0").resources(cpu=4, memory="8Gi"), NODES[1], pod("b"))
    assert all(a is not b for a, b in zip(views(relabelled, pipeline), kept, strict=True))


ZONE = st.sampled_from(("a", "b", "c"))


@st.composite
def pods(draw: st.DrawFn, name: str) -> PodBuilder:
    p = pod(name).requests(cpu=draw(st.sampled_from(("500m", "1", "3"))), memory="1Gi")
    if draw(st.booleans()):
        p = p.selector(zone=draw(ZONE))
    if draw(st.booleans()):
        term = SelectorTerm(
            match_expressions=(Requirement(key="zone", operator="In", values=(draw(ZONE),)),)
        )
        p = p.prefer(draw(st.integers(1, 5)), term)
    if draw(st.booleans()):
        p = p.tolerate("t", effect=draw(st.sampled_from(("PreferNoSchedule", "NoSchedule"))))
    return p


@st.composite
def nodes(draw: st.DrawFn) -> list[Item]:
    found: list[Item] = []
    for i in range(draw(st.integers(1, 4))):
        n = node(f"n{i}").resources(cpu=4, memory="8Gi").label("zone", draw(ZONE))
        if draw(st.booleans()):
            n = n.taint("t", "", draw(st.sampled_from(("PreferNoSchedule", "NoSchedule"))))
        found.append(n.build())
    return found


def binds(snap: ClusterSnapshot, pipeline: object) -> list[tuple[str, str]]:
    report = cycle.run_cycle(snap, pipeline, clock=FixedClock(START))  # type: ignore[arg-type]
    return [(b.task_uid, b.node) for b in report.result.binds]


@settings(max_examples=40, deadline=None)
@given(nodes(), st.data())
def test_decisions_with_kept_views_are_those_of_a_policy_keeping_nothing(
    cluster: list[Item], data: st.DataObject
) -> None:
    """Cycles over the very same nodes, each with new pods, decide as cycles whose plugins
    derive everything again."""
    kept = catalog.load_pipeline(None)
    shared: tuple[NodeFacts, ...] | None = None
    for w in range(data.draw(st.integers(2, 4))):
        wave = [data.draw(pods(f"p{w}-{k}")).build() for k in range(data.draw(st.integers(1, 3)))]
        snap = snapshot(*cluster, *wave)
        if shared is not None:
            snap = dataclasses.replace(snap, nodes=shared)
        shared = snap.nodes
        assert binds(snap, kept) == binds(snap, catalog.load_pipeline(None))
