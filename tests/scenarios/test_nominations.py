"""Nominations: the job whose victims were evicted gets the room they free (issue 11, part 2).

Preempt and reclaim pipeline the pod they evict for; the pod carries `status.nominatedNodeName`
(`CycleResult.nominated`) and every later session holds its request on that node (as
kube-scheduler's `addNominatedPods` counts a nominated pod when filtering others) until it binds
there, or the node can no longer hold it. Other jobs, of its queue or another, keep their order
but do not take the room. Victims stay Releasing for a cycle, then are gone, as on a real cluster
with a grace period.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.status import TaskStatus
from vscheduler.testing.builders import Item, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import run

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
RECLAIM = 'actions: "enqueue, allocate, reclaim, backfill"\n' + TIERS
PREEMPT = 'actions: "enqueue, allocate, preempt, backfill"\n' + TIERS


def keys(*names: str) -> list[str]:
    return [f"default/{n}" for n in names]


def borrowed() -> list[Item]:
    """One 6-CPU node; queues a and b, weights 1:1 (3 CPUs each). Queue a holds 5 CPUs (five
    one-pod-minimum pods), queue b's job b-00 (minMember 2) runs one 1-CPU pod and asks for a 2-CPU one."""
    items: list[Item] = [node("n1").resources(cpu="6", memory="16Gi"), queue("a"), queue("b")]
    items += [podgroup("a-job").queue("a").min_member(1).inqueue()]
    items += [pod(f"a-{i}").group("a-job").requests(cpu="1").on("n1") for i in range(5)]
    items += [podgroup("b-00").queue("b").min_member(2).inqueue()]
    items += [pod("b-00-0").group("b-00").requests(cpu="1").on("n1")]
    items += [pod("b-00-1").group("b-00").requests(cpu="2").created(1)]
    return items


def late_job() -> list[Item]:
    """Queue b's job b-01, arriving after the reclaim: it has no pod running, so drf orders it
    before b-00 in queue b."""
    return [
        podgroup("b-01").queue("b").min_member(1).inqueue().created(5),
        pod("b-01-0").group("b-01").requests(cpu="2").created(5),
    ]


def releasing_then_gone(
    first: ClusterSnapshot, victims: list[str]
) -> Callable[[int, ClusterSnapshot], ClusterSnapshot]:
    """`between` for `run`: in cycle 2 the victims are still there, Releasing, and b-01 arrives;
    from cycle 3 on the victims are gone."""
    added = snapshot(*late_job())

    def between(i: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        tasks = dict(snap.tasks)
        if i == 1:
            for uid, facts in first.tasks.items():
                if facts.key in victims:
                    tasks[uid] = dataclasses.replace(facts, status=TaskStatus.RELEASING)
            tasks |= added.tasks
            jobs = {**snap.jobs, **{k: j for k, j in added.jobs.items() if k.endswith("b-01")}}
            return dataclasses.replace(snap, tasks=tasks, jobs=jobs)
        if i == 2:
            for uid, facts in first.tasks.items():
                if facts.key in victims:
                    tasks.pop(uid, None)
            return dataclasses.replace(snap, tasks=tasks)
        return snap

    return between


def test_the_reclaimer_named_in_the_eviction_binds_where_its_victims_were() -> None:
    """Cycle 1 evicts two of queue a's pods for b-00-1 and nominates n1 for it; in cycle 2 the
    victims are still Releasing and b-01 (ahead of b-00 in drf's job order) would fit in the room
    they free: it does not take it; in cycle 3 the victims are gone and b-00-1 binds on n1."""
    first_snap = snapshot(*borrowed())
    victims = keys("a-4", "a-3")
    first, second, third = run(
        first_snap, policy=RECLAIM, cycles=3, between=releasing_then_gone(first_snap, victims)
    )

    assert first.evictions == victims
    assert {e.reason for e in first.result.evictions} == {"reclaim by default/b-00-1 of queue b"}
    assert first.result.pipelined == {"default/b-00-1": "n1"}
    assert first.result.nominated == {"default/b-00-1": "n1"}
    assert first.snapshot_after.tasks["default/b-00-1"].nominated_node == "n1"

    assert second.evictions == []
    assert second.binds == {}
    assert second.result.pipelined == {"default/b-00-1": "n1"}
    assert second.result.nominated == {"default/b-00-1": "n1"}
    assert "default/b-01-0" in second.unschedulable

    assert third.evictions == []
    assert third.binds == {"default/b-00-1": "n1"}
    assert third.result.nominated == {}
    assert third.snapshot_after.tasks["default/b-00-1"].nominated_node is None
    assert "default/b-01-0" in third.unschedulable


def test_without_the_nomination_the_later_job_would_take_the_room() -> None:
    """The same cluster in cycle 2 with b-00-1's nomination removed (as a scheduler that does
    not remember it): b-01, first in drf's job order, takes the room the victims free."""
    first_snap = snapshot(*borrowed())
    victims = keys("a-4", "a-3")
    between = releasing_then_gone(first_snap, victims)

    def forgetful(i: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        snap = between(i, snap)
        tasks = {u: dataclasses.replace(t, nominated_node=None) for u, t in snap.tasks.items()}
        return dataclasses.replace(snap, tasks=tasks)

    _first, second = run(first_snap, policy=RECLAIM, cycles=2, between=forgetful)

    assert second.result.pipelined == {"default/b-01-0": "n1"}


def test_a_restarted_scheduler_keeps_the_nomination_it_reads_from_the_pod() -> None:
    """A pod carrying `status.nominatedNodeName` (a scheduler restarted after the reclaim):
    the room on n1 stays held for it while the victims release and b-01 waits."""
    items = [*borrowed()[:-1], *late_job()]
    items += [pod("b-00-1").group("b-00").requests(cpu="2").created(1).nominated("n1")]
    snap = snapshot(*items)
    tasks = {
        u: dataclasses.replace(t, status=TaskStatus.RELEASING) if t.name in ("a-3", "a-4") else t
        for u, t in snap.tasks.items()
    }
    (outcome,) = run(dataclasses.replace(snap, tasks=tasks), policy=RECLAIM)

    assert outcome.evictions == []
    assert outcome.result.pipelined == {"default/b-00-1": "n1"}
    assert outcome.result.nominated == {"default/b-00-1": "n1"}


def test_a_nomination_on_a_node_that_can_no_longer_hold_the_pod_is_dropped() -> None:
    """The room on the nominated node was taken meanwhile (nothing releasing there, nothing
    idle): the nomination no longer helps and is dropped (cleared), as kube-scheduler drops it;
    the pod is placed as any other."""
    items: list[Item] = [node("n1").resources(cpu="2", memory="16Gi"), queue("a")]
    items += [node("n2").resources(cpu="2", memory="16Gi")]
    items += [podgroup("other").queue("a").min_member(1).inqueue()]
    items += [pod("other-0").group("other").requests(cpu="2").on("n1")]
    items += [podgroup("mine").queue("a").min_member(1).inqueue()]
    items += [pod("mine-0").group("mine").requests(cpu="2").nominated("n1")]

    (outcome,) = run(snapshot(*items), policy=RECLAIM)

    assert outcome.binds == {"default/mine-0": "n2"}
    assert outcome.result.nominated == {}


def test_a_held_nomination_keeps_other_queues_off_the_node_too() -> None:
    """A pod of queue a nominated to n1 (its victims Releasing); queue b's pending pod, which
    would fit in n1's free room, goes to n2 instead; nothing is evicted."""
    items: list[Item] = [node("n1").resources(cpu="4", memory="16Gi"), queue("a"), queue("b")]
    items += [node("n2").resources(cpu="2", memory="16Gi")]
    items += [podgroup("old").queue("a").min_member(1).inqueue()]
    items += [pod("old-0").group("old").requests(cpu="2").on("n1", TaskStatus.RELEASING)]
    items += [podgroup("mine").queue("a").min_member(1).inqueue()]
    items += [pod("mine-0").group("mine").requests(cpu="4").nominated("n1")]
    items += [podgroup("theirs").queue("b").min_member(1).inqueue()]
    items += [pod("theirs-0").group("theirs").requests(cpu="2")]

    (outcome,) = run(snapshot(*items), policy=PREEMPT)

    assert outcome.binds == {"default/theirs-0": "n2"}
    assert outcome.evictions == []
    assert outcome.result.pipelined == {"default/mine-0": "n1"}
    assert outcome.result.nominated == {"default/mine-0": "n1"}
