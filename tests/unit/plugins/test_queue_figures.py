"""proportion and capacity report every queue's figures at session close (for the queue metrics)."""

from __future__ import annotations

import dataclasses

from vscheduler.model.commands import QueueFigures
from vscheduler.model.facts import QueueFacts
from vscheduler.model.resources import Resources
from vscheduler.testing import scenario, sessions
from vscheduler.testing.builders import (
    Buildable,
    Fact,
    QueueBuilder,
    node,
    pod,
    podgroup,
    queue,
    res,
    snapshot,
)

PROPORTION = """\
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: proportion
"""
CAPACITY = PROPORTION.replace("proportion", "capacity")
GI = 1 << 30


def cpu(cores: int) -> Resources:
    return Resources(cpu=cores * 1000)


def whole(cores: int) -> Resources:
    """`cores` CPUs and the node's 64Gi: the cluster total, or a realCapability bounded by it."""
    return Resources(cpu=cores * 1000, memory=64 * GI)


def demand(q: str, pending: int, *, running: int) -> list[Buildable]:
    """An Inqueue job of queue `q`: `running` 1-CPU tasks on n1 and `pending` 1-CPU tasks."""
    group = f"{q}-job"
    items: list[Buildable] = [podgroup(group).queue(q).inqueue()]
    for i in range(running + pending):
        task = pod(f"{group}-{i}").group(group).requests(cpu="1")
        items.append(task.on("n1") if i < running else task)
    return items


def deserving(builder: QueueBuilder, **amounts: str) -> QueueFacts:
    return dataclasses.replace(builder.build(), deserved=res(**amounts))


def weighted_cluster() -> list[Buildable | Fact]:
    """8 CPUs; `a` (weight 1) and `b` (weight 3, capability 5 CPUs) with work; `c` idle."""
    return [
        node("n1").resources(cpu="8", memory="64Gi"),
        queue("a"),
        queue("b").weight(3).capability(cpu="5"),
        queue("c").capability(cpu="2"),
        *demand("a", 5, running=1),
        *demand("b", 6, running=2),
    ]


def deserved_cluster() -> list[Buildable | Fact]:
    """16 CPUs; `a` deserves 4, `b` 12, idle `c` 2 with a guarantee of 1; `default` nothing."""
    return [
        node("n1").resources(cpu="16", memory="64Gi"),
        deserving(queue("a"), cpu="4"),
        deserving(queue("b"), cpu="12"),
        deserving(queue("c").guarantee(cpu="1"), cpu="2"),
        *demand("a", 6, running=2),
        *demand("b", 6, running=3),
    ]


# --- proportion ------------------------------------------------------------------------------------
def test_proportion_reports_every_queue_as_opened_with_an_idle_queue_at_zero() -> None:
    session = sessions.open_session(snapshot(*weighted_cluster()), policy=PROPORTION)

    figures = session.close().queues

    assert figures == {
        "a": QueueFigures(
            name="a",
            allocated=cpu(1),
            request=cpu(6),
            deserved=cpu(3),
            real_capability=whole(8),
            share=1 / 3,
        ),
        "b": QueueFigures(
            name="b",
            allocated=cpu(2),
            request=cpu(8),
            deserved=cpu(5),
            capability=cpu(5),
            real_capability=whole(5),
            share=0.4,
            weight=3,
        ),
        "c": QueueFigures(name="c", capability=cpu(2), real_capability=whole(2)),
        "default": QueueFigures(name="default", real_capability=whole(8)),
    }


def test_proportion_reports_the_allocations_of_the_cycle_and_overused_by_its_rule() -> None:
    [outcome] = scenario.run(snapshot(*weighted_cluster()), policy=PROPORTION)

    a, b, c = (outcome.result.queues[q] for q in ("a", "b", "c"))

    assert (a.allocated, a.deserved, a.share, a.overused) == (cpu(3), cpu(3), 1.0, True)
    assert (b.allocated, b.deserved, b.share, b.overused) == (cpu(5), cpu(5), 1.0, True)
    assert (c.allocated, c.overused) == (Resources(), False)


# --- capacity --------------------------------------------------------------------------------------
def test_capacity_reports_deserved_from_the_spec_and_an_idle_queue_with_its_guarantee() -> None:
    session = sessions.open_session(snapshot(*deserved_cluster()), policy=CAPACITY)

    figures = session.close().queues

    assert figures == {
        "a": QueueFigures(
            name="a",
            allocated=cpu(2),
            request=cpu(8),
            deserved=cpu(4),
            real_capability=whole(15),
            share=0.5,
        ),
        "b": QueueFigures(
            name="b",
            allocated=cpu(3),
            request=cpu(9),
            deserved=cpu(12),
            real_capability=whole(15),
            share=0.25,
        ),
        "c": QueueFigures(name="c", deserved=cpu(2), real_capability=whole(16)),
        "default": QueueFigures(name="default", real_capability=whole(15), share=1.0),
    }


def test_capacity_reports_a_borrowing_queue_as_overused_and_one_below_its_deserved_as_not() -> None:
    [outcome] = scenario.run(snapshot(*deserved_cluster()), policy=CAPACITY)

    a, b = outcome.result.queues["a"], outcome.result.queues["b"]

    assert (a.allocated, a.deserved, a.share, a.overused) == (cpu(7), cpu(4), 1.75, True)
    assert (b.allocated, b.deserved, b.share, b.overused) == (cpu(9), cpu(12), 0.75, False)


def test_capacity_reports_the_queue_capability_and_its_weight() -> None:
    items = [
        node("n1").resources(cpu="16", memory="64Gi"),
        deserving(queue("a").weight(5).capability(cpu="6", memory="8Gi"), cpu="4"),
        *demand("a", 1, running=1),
    ]
    session = sessions.open_session(snapshot(*items), policy=CAPACITY)

    a = session.close().queues["a"]

    assert (a.capability, a.real_capability, a.weight) == (
        Resources(cpu=6000, memory=8 * GI),
        Resources(cpu=6000, memory=8 * GI),
        5,
    )


# --- inqueue -----------------------------------------------------------------------------------------
def reserving_cluster() -> list[Buildable | Fact]:
    """4 CPUs; queue `a` holds an admitted job (minResources 3 CPUs) with one 1-CPU task
    running and two 2-CPU tasks pending, and a job not admitted yet (minResources 2 CPUs)."""
    return [
        node("n1").resources(cpu="4", memory="64Gi"),
        queue("a"),
        podgroup("big").queue("a").inqueue().min_member(1).min_resources(cpu="3"),
        pod("big-0").group("big").requests(cpu="1").on("n1"),
        pod("big-1").group("big").requests(cpu="2"),
        pod("big-2").group("big").requests(cpu="2"),
        podgroup("later").queue("a").min_member(1).min_resources(cpu="2"),
        pod("later-0").group("later").requests(cpu="2"),
    ]


def test_both_queue_plugins_report_the_reservation_of_admitted_jobs_as_inqueue() -> None:
    for policy in (PROPORTION, CAPACITY):
        session = sessions.open_session(snapshot(*reserving_cluster()), policy=policy)

        a = session.close().queues["a"]

        # big reserves its 3 CPUs less the 1 it holds; later is not admitted yet
        assert a.inqueue == cpu(2), policy
