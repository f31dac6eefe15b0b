"""PodIndex: per-node counts of the pods a matcher selects and of the terms placed pods carry,
kept current as pods come and go; domains per topology key."""

from __future__ import annotations

import numpy as np

from vscheduler.framework import podindex
from vscheduler.framework.session import Session
from vscheduler.model.podaffinity import PodAffinityTerm
from vscheduler.model.selector import LabelRequirement, LabelSelector
from vscheduler.model.status import TaskStatus
from vscheduler.testing.builders import PodBuilder, node, pod, pod_term, snapshot
from vscheduler.testing.sessions import open_session

NODES = (
    node("a").labels(zone="z1", host="a"),
    node("b").labels(zone="z1", host="b"),
    node("c").labels(zone="z2", host="c"),
    node("d"),
)


def web(namespace: str = "default") -> PodAffinityTerm:
    return pod_term("zone", namespace, app="web")


def open_with(*pods: PodBuilder) -> tuple[Session, podindex.PodIndex]:
    s = open_session(snapshot(*NODES, *pods))
    return s, podindex.PodIndex(s.ledger.nodes, s.tasks.values())


def test_a_matcher_counts_the_pods_it_selects_on_each_node() -> None:
    _, index = open_with(
        pod("w1").labels(app="web").on("a"),
        pod("w2").labels(app="web").on("a"),
        pod("w3").labels(app="web").on("c"),
        pod("db").labels(app="db").on("b"),
        pod("other", "elsewhere").labels(app="web").on("b"),
    )
    counts = index.count(podindex.Matcher((web(),)))
    assert counts.per_node.tolist() == [2, 0, 1, 0]
    assert counts.total == 3


def test_pods_that_hold_no_node_are_not_counted() -> None:
    _, index = open_with(
        pod("pending").labels(app="web"),
        pod("done").labels(app="web").on("a", TaskStatus.SUCCEEDED),
        pod("piped").labels(app="web").on("b", TaskStatus.PIPELINED),
    )
    assert index.count(podindex.Matcher((web(),))).per_node.tolist() == [0, 1, 0, 0]


def test_live_only_matchers_leave_out_pods_being_deleted() -> None:
    _, index = open_with(pod("gone").labels(app="web").on("a", TaskStatus.RELEASING))
    assert index.count(podindex.Matcher((web(),))).total == 1
    assert index.count(podindex.Matcher((web(),), live_only=True)).total == 0


def test_a_matcher_of_several_terms_counts_pods_matching_them_all() -> None:
    _, index = open_with(
        pod("both").labels(app="web", tier="front").on("a"),
        pod("one").labels(app="web").on("b"),
    )
    front = pod_term("zone", "default", tier="front")
    assert index.count(podindex.Matcher((web(), front))).per_node.tolist() == [1, 0, 0, 0]


def test_counts_follow_pods_added_and_removed_with_a_new_version_each_time() -> None:
    s, index = open_with(pod("w1").labels(app="web").requests(cpu="1"))
    counts = index.count(podindex.Matcher((web(),)))
    assert (counts.total, counts.version) == (0, 0)
    task = s.tasks["default/w1"]
    stmt = s.statement()
    stmt.allocate(task, 2)
    index.add(task)
    assert (counts.per_node.tolist(), counts.version) == ([0, 0, 1, 0], 1)
    index.remove(task)
    stmt.discard()
    assert (counts.per_node.tolist(), counts.version) == ([0, 0, 0, 0], 2)


def test_a_matcher_without_a_label_anchor_is_counted_and_kept_current_too() -> None:
    s, index = open_with(pod("x").labels(tier="a").on("a"), pod("y").labels(tier="b").on("b"))
    not_a = PodAffinityTerm(
        selector=LabelSelector(
            match_expressions=(LabelRequirement(key="tier", operator="NotIn", values=("a",)),)
        ),
        namespaces=frozenset({"default"}),
    )
    counts = index.count(podindex.Matcher((not_a,)))
    assert counts.per_node.tolist() == [0, 1, 0, 0]
    index.remove(s.tasks["default/y"])
    assert counts.per_node.tolist() == [0, 0, 0, 0]


def test_carried_terms_count_their_carriers_and_select_the_pods_they_match() -> None:
    s, index = open_with(
        pod("a1").labels(app="web").anti_affinity(pod_term("host", app="web")).on("a"),
        pod("c1").labels(app="web").anti_affinity(pod_term("host", app="web")).on("c"),
        pod("p").labels(app="web").prefer_affinity(7, pod_term("zone", app="db")).on("b"),
    )
    [anti] = index.carried(podindex.REQUIRED_ANTI, "default", {"app": "web"})
    assert anti.counts.per_node.tolist() == [1, 0, 1, 0]
    assert index.carried(podindex.REQUIRED_ANTI, "default", {"app": "db"}) == []
    assert index.carried(podindex.REQUIRED_ANTI, "other", {"app": "web"}) == []
    [preferred] = index.carried(podindex.PREFERRED, "default", {"app": "db"})
    assert (preferred.weight, preferred.counts.per_node.tolist()) == (7, [0, 1, 0, 0])
    index.remove(s.tasks["default/a1"])
    index.remove(s.tasks["default/c1"])
    assert index.carried(podindex.REQUIRED_ANTI, "default", {"app": "web"}) == []
    assert not index.has_carried(podindex.REQUIRED_ANTI)
    assert index.has_carried(podindex.PREFERRED)


def test_domains_code_each_label_value_in_node_order() -> None:
    _, index = open_with()
    codes, size = index.domains("zone")
    assert (codes.tolist(), size) == ([0, 0, 1, -1], 2)


def test_totals_sum_over_each_nodes_domain() -> None:
    _, index = open_with()
    per_node = np.array([1, 2, 4, 8], dtype=np.int64)
    assert index.totals("zone", per_node).tolist() == [3, 3, 4, 0]
    assert index.totals("host", per_node).tolist() == [1, 2, 4, 0]
    where = np.array([True, False, True, True])
    assert index.totals("zone", per_node, where).tolist() == [1, 1, 4, 0]
    assert index.totals("host", per_node, where).tolist() == [1, 0, 4, 0]
