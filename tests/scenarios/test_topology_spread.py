"""Scenarios: topology spread constraints, DoNotSchedule (predicates) and ScheduleAnyway
(nodeorder's podtopologyspread), with this cycle's placements counting."""

from __future__ import annotations

from vscheduler.testing.builders import (
    NodeBuilder,
    PodBuilder,
    node,
    pod,
    podgroup,
    snapshot,
    spread,
)
from vscheduler.testing.scenario import run

POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: nodeorder
    arguments:
      leastrequested.weight: 0
      balancedresource.weight: 0
      nodeaffinity.weight: 0
      imagelocality.weight: 0
      tainttoleration.weight: 0
"""
"""Only podaffinity and podtopologyspread score, so ties go to the first node listed."""
SKEW = "node(s) didn't match pod topology spread constraints"
HOST = "kubernetes.io/hostname"


def zones(*names: str) -> list[NodeBuilder]:
    """Nodes n0, n1, ... (4 cpu, 8Gi) in the zones given (empty: no zone label)."""
    out = []
    for i, zone in enumerate(names):
        n = node(f"n{i}").label(HOST, f"n{i}")
        out.append(n.labels(zone=zone) if zone else n)
    return out


def replicas(
    count: int,
    max_skew: int = 1,
    *,
    hard: bool = True,
    min_domains: int = 1,
    ignore_affinity: bool = False,
) -> list[PodBuilder]:
    constraint = spread(
        "zone",
        max_skew,
        hard=hard,
        min_domains=min_domains,
        ignore_affinity=ignore_affinity,
        app="web",
    )
    return [
        pod(f"web-{i}").labels(app="web").requests(cpu="1").created(i).spread(constraint)
        for i in range(count)
    ]


def test_replicas_spread_evenly_over_zones_as_they_are_placed() -> None:
    [outcome] = run(snapshot(*zones("a", "a", "b", "c"), *replicas(6)), policy=POLICY)
    assert outcome.binds == {
        "default/web-0": "n0",
        "default/web-1": "n2",
        "default/web-2": "n3",
        "default/web-3": "n0",
        "default/web-4": "n2",
        "default/web-5": "n3",
    }


def test_a_larger_max_skew_lets_a_zone_run_ahead() -> None:
    [outcome] = run(snapshot(*zones("a", "b"), *replicas(3, max_skew=2)), policy=POLICY)
    assert outcome.binds == {"default/web-0": "n0", "default/web-1": "n0", "default/web-2": "n1"}


def test_do_not_schedule_leaves_a_pod_pending_when_the_only_other_zone_is_full() -> None:
    full = node("n1").label(HOST, "n1").labels(zone="b").resources(cpu="500m", memory="8Gi")
    [outcome] = run(snapshot(*zones("a"), full, *replicas(2)), policy=POLICY)
    assert outcome.binds == {"default/web-0": "n0"}
    assert outcome.unschedulable == {
        "default/web-1": f"0/2 nodes are available: 1 Insufficient cpu, 1 {SKEW}."
    }


def test_schedule_anyway_places_the_pod_where_the_skew_is_least_bad() -> None:
    full = node("n1").label(HOST, "n1").labels(zone="b").resources(cpu="500m", memory="8Gi")
    [outcome] = run(snapshot(*zones("a"), full, *replicas(2, hard=False)), policy=POLICY)
    assert outcome.binds == {"default/web-0": "n0", "default/web-1": "n0"}


def test_schedule_anyway_prefers_the_emptier_zones() -> None:
    [outcome] = run(snapshot(*zones("a", "a", "b", "c"), *replicas(4, hard=False)), policy=POLICY)
    assert outcome.binds == {
        "default/web-0": "n0",
        "default/web-1": "n2",
        "default/web-2": "n3",
        "default/web-3": "n0",
    }


def test_fewer_zones_than_min_domains_hold_at_most_max_skew_pods_each() -> None:
    [outcome] = run(snapshot(*zones("a", "b"), *replicas(3, min_domains=3)), policy=POLICY)
    assert outcome.binds == {"default/web-0": "n0", "default/web-1": "n1"}
    assert outcome.unschedulable == {"default/web-2": f"0/2 nodes are available: 2 {SKEW}."}


def test_nodes_without_the_zone_label_are_refused() -> None:
    [outcome] = run(snapshot(*zones("", "a"), *replicas(1)), policy=POLICY)
    assert outcome.binds == {"default/web-0": "n1"}
    [outcome] = run(snapshot(*zones(""), *replicas(1)), policy=POLICY)
    assert outcome.unschedulable == {
        "default/web-0": f"0/1 nodes are available: 1 {SKEW} (missing required label)."
    }


def test_a_zone_the_pods_cannot_use_does_not_count_unless_node_affinity_is_ignored() -> None:
    nodes = [
        node("n0").labels(zone="a", pool="cpu"),
        node("n1").labels(zone="b", pool="cpu"),
        node("n2").labels(zone="c", pool="gpu"),
    ]
    honoured = [p.selector(pool="cpu") for p in replicas(4)]
    [outcome] = run(snapshot(*nodes, *honoured), policy=POLICY)
    assert outcome.binds == {
        "default/web-0": "n0",
        "default/web-1": "n1",
        "default/web-2": "n0",
        "default/web-3": "n1",
    }
    ignoring = [p.selector(pool="cpu") for p in replicas(4, ignore_affinity=True)]
    [outcome] = run(snapshot(*nodes, *ignoring), policy=POLICY)
    assert outcome.binds == {"default/web-0": "n0", "default/web-1": "n1"}
    reason = (
        f"0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 {SKEW}."
    )
    assert outcome.unschedulable == {"default/web-2": reason, "default/web-3": reason}


def test_members_of_one_gang_spread_within_the_cycle() -> None:
    gang = podgroup("train").min_member(4)
    members = [p.group("train") for p in replicas(4)]
    [outcome] = run(snapshot(*zones("a", "a", "b", "b"), gang, *members), policy=POLICY)
    assert outcome.binds == {
        "default/web-0": "n0",
        "default/web-1": "n2",
        "default/web-2": "n0",
        "default/web-3": "n2",
    }
