"""Queues whose guarantees exceed the cluster: every other queue is left only its own guarantee;
the pending messages of its pods name the guaranteeing queues and the amounts, and the queue
plugins report the guaranteeing queues with a warning (an Event on the Queue, a metric)."""

from __future__ import annotations

import pytest

from vscheduler.testing.builders import Item, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import run

POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: predicates
  - name: {plugin}
  - name: nodeorder
"""
BIG = "queue big's guarantee (cpu 100) exceeds the cluster's allocatable (cpu 16)"


def cluster(*queues: Item) -> list[Item]:
    """A 16-CPU node, the given queues, a pod of each of queues default and big, and a PodGroup
    of queue default not yet admitted."""
    items: list[Item] = [*queues, node("n1").resources(cpu="16", memory="32Gi")]
    items += [podgroup("a").queue("default").inqueue(), pod("a-0").group("a").requests(cpu="1")]
    items += [podgroup("b").queue("default").min_resources(cpu="1")]
    items += [pod("b-0").group("b").requests(cpu="1")]
    items += [podgroup("c").queue("big").inqueue(), pod("c-0").group("c").requests(cpu="1")]
    return items


OVERUSED = (
    "(proportion: allocated cpu 0 + this pod's cpu 1 exceed what the other queues' guarantees"
    " leave it (cpu 0))"
)


def test_under_proportion_the_starved_queues_pods_name_the_queue_and_the_amounts() -> None:
    (outcome,) = run(
        snapshot(*cluster(queue("big").guarantee(cpu="100"))),
        policy=POLICY.format(plugin="proportion"),
    )

    assert outcome.binds == {"default/c-0": "n1"}
    assert outcome.unschedulable == {
        "default/a-0": f"queue default is overused {OVERUSED}: {BIG}",
        "default/b-0": "podgroup default/b is Pending: not admitted to queue default (proportion:"
        " minResources cpu 1 + what the queue holds and has admitted (cpu 0) exceed what the other"
        f" queues' guarantees leave it (cpu 0)): {BIG}",
    }


def test_under_capacity_the_starved_queues_pods_name_the_queue_and_the_amounts() -> None:
    (outcome,) = run(
        snapshot(*cluster(queue("big").guarantee(cpu="100"))),
        policy=POLICY.format(plugin="capacity"),
    )

    assert outcome.unschedulable["default/a-0"] == (
        "queue default has no room left for this pod (capacity: allocated cpu 0 + this pod's cpu"
        f" 1 exceed what the other queues' guarantees leave it (cpu 0)): {BIG}"
    )
    assert outcome.unschedulable["default/b-0"] == (
        "podgroup default/b is Pending: not admitted to queue default (capacity: minResources cpu"
        " 1 + what the queue holds and has admitted (cpu 0) exceed what the other queues'"
        f" guarantees leave it (cpu 0)): {BIG}"
    )


@pytest.mark.parametrize("plugin", ["proportion", "capacity"])
def test_the_guaranteeing_queue_is_reported_with_a_warning_and_no_other(plugin: str) -> None:
    (outcome,) = run(
        snapshot(*cluster(queue("big").guarantee(cpu="100"))), policy=POLICY.format(plugin=plugin)
    )

    warnings = {name: figures.warning for name, figures in outcome.result.queues.items()}
    assert warnings == {"big": BIG, "default": ""}


def test_guarantees_that_only_together_exceed_the_cluster_name_every_queue_and_the_sum() -> None:
    queues = [queue("big").guarantee(cpu="10"), queue("huge").guarantee(cpu="10", memory="1Gi")]
    (outcome,) = run(snapshot(*cluster(*queues)), policy=POLICY.format(plugin="proportion"))

    together = (
        "the guarantees of queues big, huge (cpu 20 together) exceed the cluster's allocatable"
        " (cpu 16)"
    )
    assert (
        outcome.unschedulable["default/a-0"] == f"queue default is overused {OVERUSED}: {together}"
    )
    assert outcome.result.queues["huge"].warning == together
    assert outcome.result.queues["big"].warning == together


def test_guarantees_the_cluster_holds_add_nothing_to_the_messages() -> None:
    (outcome,) = run(
        snapshot(*cluster(queue("big").guarantee(cpu="15"))),
        policy=POLICY.format(plugin="proportion"),
    )

    assert not any("the cluster's allocatable" in m for m in outcome.unschedulable.values())
    assert {f.warning for f in outcome.result.queues.values()} == {""}


def test_a_cluster_without_a_ready_node_reports_no_excess() -> None:
    items: list[Item] = [queue("big").guarantee(cpu="100")]
    items += [node("n1").resources(cpu="16", memory="32Gi").not_ready()]
    items += [podgroup("a").queue("default").inqueue(), pod("a-0").group("a").requests(cpu="1")]

    (outcome,) = run(snapshot(*items), policy=POLICY.format(plugin="proportion"))

    assert not any("guarantee" in m for m in outcome.unschedulable.values())
    assert {f.warning for f in outcome.result.queues.values()} == {""}
