"""Pods with scheduling gates (`spec.schedulingGates`): no action places them, their message is
the API server's, a gang with a gated member waits, and nothing is evicted for them."""

from __future__ import annotations

from vscheduler.framework.messages import SCHEDULING_GATED
from vscheduler.testing.builders import Item, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import TIERS, Outcome, run

POLICY = 'actions: "enqueue, allocate, backfill, preempt, reclaim"\n' + TIERS


def once(*items: Item) -> Outcome:
    (outcome,) = run(snapshot(*items), policy=POLICY)
    return outcome


def test_a_gated_pod_is_not_placed_and_says_why_and_the_pod_beside_it_is() -> None:
    outcome = once(
        node("n1").resources(cpu="4", memory="8Gi"),
        pod("gated").requests(cpu="1").gated(),
        pod("free").requests(cpu="1"),
        pod("nothing").gated(),  # best-effort: backfill leaves it too
    )

    assert outcome.binds == {"default/free": "n1"}
    assert outcome.result.unschedulable == {
        "default/gated": SCHEDULING_GATED,
        "default/nothing": SCHEDULING_GATED,
    }


def test_a_gang_waits_for_its_gated_member() -> None:
    outcome = once(
        node("n1").resources(cpu="4", memory="8Gi"),
        podgroup("pg").min_member(2).inqueue(),
        pod("pg-0").group("pg").requests(cpu="1"),
        pod("pg-1").group("pg").requests(cpu="1").gated(),
    )

    assert outcome.binds == {}
    assert outcome.result.unschedulable["default/pg-1"] == SCHEDULING_GATED
    [condition] = outcome.result.podgroups["default/pg"].conditions
    assert condition.message.startswith("2/2 tasks in gang unschedulable: pod group is not ready")


def test_nothing_is_evicted_for_a_gated_pod() -> None:
    outcome = once(
        node("n1").resources(cpu="2", memory="8Gi"),
        queue("q0"),
        podgroup("low").queue("q0").priority(1).inqueue(),
        podgroup("high").queue("q0").priority(100).inqueue(),
        pod("low-0").group("low").requests(cpu="2").on("n1"),
        pod("high-0").group("high").requests(cpu="2").gated(),
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}
    assert outcome.result.unschedulable == {"default/high-0": SCHEDULING_GATED}


def test_an_admitted_podgroups_gated_pods_reserve_nothing_in_its_queue() -> None:
    """The gated job's minResources (2 cpu, all gated) hold nothing, so the queue of a 2-cpu
    cluster still admits the other job of 2 cpu (Volcano's DeductSchGatedResources)."""
    outcome = once(
        node("n1").resources(cpu="2", memory="8Gi"),
        queue("q0"),
        podgroup("gated").queue("q0").min_member(1).min_resources(cpu="2").inqueue(),
        pod("gated-0").group("gated").requests(cpu="2").gated(),
        podgroup("other").queue("q0").min_member(1).min_resources(cpu="2"),
        pod("other-0").group("other").requests(cpu="2"),
    )

    assert outcome.binds == {"default/other-0": "n1"}
