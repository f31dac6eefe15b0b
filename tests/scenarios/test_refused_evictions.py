"""Refused evictions: a pod whose eviction the API server refused (a PodDisruptionBudget, with
no `pdb` plugin in the policy to foresee it) is in backoff, shown `eviction_refused`; preempt,
reclaim and shuffle then choose victims that can go, and a preemptor never binds onto room its
refused victim still holds."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from vscheduler.actions import shuffle
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.testing.builders import Item, PodBuilder, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import run
from vscheduler.testing.sessions import open_session

TIERS = """\
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""
PREEMPT = 'actions: "enqueue, allocate, preempt, backfill"\n' + TIERS
RECLAIM = 'actions: "enqueue, allocate, reclaim, backfill"\n' + TIERS


def low(name: str, on: str, *, job: str = "low") -> PodBuilder:
    """A running 1-CPU pod of job `job` (priority 1)."""
    return pod(name).group(job).requests(cpu="1").priority(1).on(on)


def gang(name: str, members: int, *, q: str = "default") -> list[Item]:
    """A high-priority (100) gang of `members` pending 1-CPU pods."""
    items: list[Item] = [podgroup(name).priority(100).min_member(members).queue(q).inqueue()]
    items += [
        pod(f"{name}-{i}").group(name).requests(cpu="1").priority(100) for i in range(members)
    ]
    return items


def full_node(*refused: str) -> list[Item]:
    """One 4-CPU node full of job `low`'s four 1-CPU pods; `refused` ones are in backoff."""
    items: list[Item] = [node("n1").resources(cpu="4", memory="16Gi")]
    items.append(podgroup("low").priority(1).min_member(1).inqueue())
    for i in range(4):
        builder = low(f"low-{i}", "n1")
        items.append(builder.eviction_refused() if f"low-{i}" in refused else builder)
    return items


def keys(*names: str) -> list[str]:
    return [f"default/{n}" for n in names]


def refusing(
    first: ClusterSnapshot, *names: str
) -> Callable[[int, ClusterSnapshot], ClusterSnapshot]:
    """Between cycles: the evictions of `names` were refused, so those pods still run, in
    backoff (as the cache shows them)."""
    wanted = set(keys(*names))
    back = {
        uid: dataclasses.replace(t, eviction_refused=True)
        for uid, t in first.tasks.items()
        if f"{t.namespace}/{t.name}" in wanted
    }

    def between(_cycle: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        return dataclasses.replace(snap, tasks={**snap.tasks, **back})

    return between


def test_a_victim_in_backoff_is_passed_over_for_one_that_can_go() -> None:
    (outcome,) = run(snapshot(*full_node("low-3"), *gang("high", 2)), policy=PREEMPT)

    assert outcome.evictions == keys("low-2", "low-1")
    assert outcome.result.pipelined == dict.fromkeys(keys("high-0", "high-1"), "n1")


def test_after_a_refusal_the_next_plan_takes_another_victim_and_the_gang_then_binds() -> None:
    first = snapshot(*full_node(), *gang("high", 2))

    one, two, three = run(first, policy=PREEMPT, cycles=3, between=refusing(first, "low-3"))

    assert one.evictions == keys("low-3", "low-2")
    assert {e.plan for e in one.result.evictions} == {"preempt default/high"}  # all or none
    # low-3 was refused and still runs; low-2 went. The next plan takes low-1, not low-3 again.
    assert (two.evictions, two.binds) == (keys("low-1"), {})
    assert three.evictions == []
    assert three.binds == dict.fromkeys(keys("high-0", "high-1"), "n1")


def test_a_preemptor_never_binds_onto_room_its_refused_victim_still_holds() -> None:
    # high-0 needs two CPUs: low-3 and low-2 go; low-3's eviction is refused, low-2 leaves.
    items = [*full_node("low-0", "low-1"), podgroup("high").priority(100).inqueue()]
    first = snapshot(*items, pod("high-0").group("high").requests(cpu="2").priority(100))

    one, two = run(first, policy=PREEMPT, cycles=2, between=refusing(first, "low-3"))

    assert (one.evictions, one.binds) == (keys("low-3", "low-2"), {})
    assert one.result.pipelined == {"default/high-0": "n1"}
    # One CPU is free, low-3 still holds the other, and nothing else may go: no bind.
    assert (two.evictions, two.binds, two.result.pipelined) == ([], {}, {})
    assert "default/high-0" in two.unschedulable


def test_a_gang_whose_only_victims_are_in_backoff_evicts_nothing_and_says_why() -> None:
    items = [*full_node("low-0", "low-1", "low-2"), *gang("high", 2)]

    (outcome,) = run(snapshot(*items), policy=PREEMPT)

    assert (outcome.evictions, outcome.binds, outcome.result.pipelined) == ([], {}, {})
    assert outcome.unschedulable["default/high-0"] == (
        "0/1 nodes are available: 1 Insufficient cpu. queue default is overused (proportion:"
        " allocated cpu 4 + this pod's cpu 1 exceed its deserved share (cpu 4)). 2/2 tasks in"
        " gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable;"
        " Pending: 2 Unschedulable; preempt passed"
        " over 3 pod(s) whose eviction a"
        " PodDisruptionBudget refused lately (default/low-0, default/low-1, default/low-2): they"
        " may be taken after a backoff"
    )


def test_reclaim_passes_over_a_victim_in_backoff() -> None:
    items: list[Item] = [queue("a").weight(1), queue("b").weight(1)]
    items += [node("n1").resources(cpu="4", memory="16Gi")]
    items += [podgroup("low").priority(1).min_member(1).queue("b").inqueue()]
    items += [low(f"low-{i}", "n1") for i in range(3)] + [low("low-3", "n1").eviction_refused()]
    items += gang("high", 1, q="a")

    (outcome,) = run(snapshot(*items), policy=RECLAIM)

    assert outcome.evictions == keys("low-2")
    assert outcome.result.pipelined == {"default/high-0": "n1"}


def test_shuffle_never_offers_a_victim_in_backoff() -> None:
    items: list[Item] = [node("n1").resources(cpu="4", memory="16Gi")]
    items += [podgroup("low").priority(1).min_member(1).inqueue()]
    items += [low(f"low-{i}", "n1") for i in range(3)] + [low("low-3", "n1").eviction_refused()]

    pool = shuffle.candidates(open_session(snapshot(*items), policy=PREEMPT))

    assert [t.key for t in pool] == keys("low-0", "low-1", "low-2")
