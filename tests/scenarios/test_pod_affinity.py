"""Scenarios: inter-pod affinity and anti-affinity, required (predicates) and preferred
(nodeorder's podaffinity), with this cycle's placements and earlier cycles' pods counting."""

from __future__ import annotations

import dataclasses

from vscheduler.model.cluster import ClusterSnapshot, complete_jobs
from vscheduler.testing.builders import (
    NodeBuilder,
    PodBuilder,
    node,
    pod,
    pod_term,
    podgroup,
    snapshot,
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
HOST = "kubernetes.io/hostname"
ANTI = "node(s) didn't match pod anti-affinity rules"
AFFINITY = "node(s) didn't match pod affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"


def hosts(*zones: str) -> list[NodeBuilder]:
    """Nodes n0, n1, ... (4 cpu, 8Gi) with a hostname label, in the zones given."""
    return [node(f"n{i}").label(HOST, f"n{i}").labels(zone=z) for i, z in enumerate(zones)]


def replica(i: int, app: str = "web") -> PodBuilder:
    return pod(f"{app}-{i}").labels(app=app).requests(cpu="1").created(i)


def test_replicas_repelling_each_other_take_one_host_each_as_they_are_placed() -> None:
    pods = [replica(i).anti_affinity(pod_term(HOST, app="web")) for i in range(4)]
    [outcome] = run(snapshot(*hosts("a", "a", "b"), *pods), policy=POLICY)
    assert outcome.binds == {"default/web-0": "n0", "default/web-1": "n1", "default/web-2": "n2"}
    assert outcome.unschedulable == {
        "default/web-3": f"0/3 nodes are available: 3 {ANTI}.",
    }


def test_members_of_one_gang_repel_each_other_within_the_cycle() -> None:
    gang = podgroup("ring").min_member(3)
    members = [replica(i).group("ring").anti_affinity(pod_term(HOST, app="web")) for i in range(4)]
    [outcome] = run(snapshot(*hosts("a", "a", "b"), gang, *members), policy=POLICY)
    assert outcome.binds == {"default/web-0": "n0", "default/web-1": "n1", "default/web-2": "n2"}
    assert outcome.unschedulable == {"default/web-3": f"0/3 nodes are available: 3 {ANTI}."}


def test_pods_placed_in_an_earlier_cycle_keep_repelling_new_replicas() -> None:
    first = [replica(i).anti_affinity(pod_term("zone", app="web")) for i in range(1)]

    def scale_up(cycle: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        extra = replica(1).anti_affinity(pod_term("zone", app="web")).created(10).build()
        tasks = {**snap.tasks, extra.uid: extra}
        return dataclasses.replace(snap, tasks=tasks, jobs=complete_jobs(tasks, snap.jobs))

    one, two = run(
        snapshot(*hosts("a", "a", "b"), *first), policy=POLICY, cycles=2, between=scale_up
    )
    assert one.binds == {"default/web-0": "n0"}
    assert two.binds == {"default/web-1": "n2"}


def test_a_running_pods_anti_affinity_keeps_the_pods_it_selects_out_of_its_zone() -> None:
    guard = pod("guard").anti_affinity(pod_term("zone", app="batch")).on("n0")
    batch = [replica(i, "batch") for i in range(2)]
    plain = pod("plain").requests(cpu="1").created(5)
    [outcome] = run(snapshot(*hosts("a", "a", "b"), guard, *batch, plain), policy=POLICY)
    assert outcome.binds == {
        "default/batch-0": "n2",
        "default/batch-1": "n2",
        "default/plain": "n0",
    }


def test_a_pod_wanting_a_cache_nearby_goes_to_the_caches_zone() -> None:
    cache = pod("cache").labels(app="cache").on("n2")
    web = replica(0).affinity(pod_term("zone", app="cache"))
    [outcome] = run(snapshot(*hosts("a", "a", "b", "b"), cache, web), policy=POLICY)
    assert outcome.binds == {"default/web-0": "n2"}


def test_a_pod_wanting_a_missing_pod_stays_pending_and_says_why() -> None:
    web = replica(0).affinity(pod_term("zone", app="cache"))
    [outcome] = run(snapshot(*hosts("a", "b"), web), policy=POLICY)
    assert outcome.binds == {}
    assert outcome.unschedulable == {"default/web-0": f"0/2 nodes are available: 2 {AFFINITY}."}


def test_a_self_affine_group_follows_its_first_pod_even_when_its_zone_is_full() -> None:
    group = [
        pod(f"g-{i}")
        .labels(app="g")
        .requests(cpu="2")
        .created(i)
        .affinity(pod_term("zone", app="g"))
        for i in range(3)
    ]
    [outcome] = run(snapshot(*hosts("a", "b"), *group), policy=POLICY)
    assert outcome.binds == {"default/g-0": "n0", "default/g-1": "n0"}
    assert outcome.unschedulable == {
        "default/g-2": f"0/2 nodes are available: 1 Insufficient cpu, 1 {AFFINITY}."
    }


def test_preferred_anti_affinity_spreads_replicas_while_hosts_last() -> None:
    pods = [replica(i).prefer_anti_affinity(50, pod_term(HOST, app="web")) for i in range(3)]
    [outcome] = run(snapshot(*hosts("a", "b"), *pods), policy=POLICY)
    assert outcome.binds == {
        "default/web-0": "n0",
        "default/web-1": "n1",
        "default/web-2": "n0",
    }


def test_preferred_affinity_draws_a_pod_to_the_zone_of_the_pods_it_likes() -> None:
    cache = pod("cache").labels(app="cache").on("n3")
    web = replica(0).prefer_affinity(10, pod_term("zone", app="cache"))
    [outcome] = run(snapshot(*hosts("a", "a", "b", "b"), cache, web), policy=POLICY)
    assert outcome.binds == {"default/web-0": "n2"}


def test_a_running_pods_preference_draws_the_pods_it_selects() -> None:
    fan = pod("fan").prefer_affinity(10, pod_term("zone", app="web")).on("n1")
    [outcome] = run(snapshot(*hosts("a", "b"), fan, replica(0)), policy=POLICY)
    assert outcome.binds == {"default/web-0": "n1"}
