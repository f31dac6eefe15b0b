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


def waiting(pod: str, node: str) -> str:
    """Volcano's message for a pipelined pod, written to its PodScheduled=False condition."""
    return (
        f"Pod {pod} can possibly be assigned to {node}, once resource is released and"
        " minAvailable is satisfied"
    )


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
    assert first.result.waiting == {"default/b-00-1": waiting("default/b-00-1", "n1")}
    assert "default/b-00-1" not in first.unschedulable
    assert first.snapshot_after.tasks["default/b-00-1"].nominated_node == "n1"

    assert second.evictions == []
    assert second.binds == {}
    assert second.result.pipelined == {"default/b-00-1": "n1"}
    assert second.result.nominated == {"default/b-00-1": "n1"}
    assert second.result.waiting == first.result.waiting
    assert "default/b-01-0" in second.unschedulable

    assert third.evictions == []
    assert third.binds == {"default/b-00-1": "n1"}
    assert third.result.nominated == {}
    assert third.result.waiting == {}
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


def test_a_higher_priority_pod_may_take_a_lower_priority_pods_nominated_room() -> None:
    """kube-scheduler counts only nominated pods of higher or equal priority against a pod: a
    priority-100 pod binds into room nominated for a priority-1 pod; an equal-priority one
    would not (the test above)."""
    items: list[Item] = [node("n1").resources(cpu="2", memory="16Gi"), queue("a")]
    items += [podgroup("mine").queue("a").min_member(1).inqueue()]
    items += [pod("mine-0").group("mine").requests(cpu="2").priority(1).nominated("n1")]
    items += [podgroup("urgent").queue("a").min_member(1).inqueue().priority(100)]
    items += [pod("urgent-0").group("urgent").requests(cpu="2").priority(100)]

    (outcome,) = run(snapshot(*items), policy=RECLAIM)

    assert outcome.binds == {"default/urgent-0": "n1"}
    assert outcome.result.nominated == {}
    assert "default/mine-0" in outcome.unschedulable


def test_a_gang_that_cannot_be_placed_loses_its_nomination() -> None:
    """A nominated pod tried and left pending (its gang of two cannot be placed: the second
    member fits nowhere) loses the nomination, so a gang that will not run does not keep room
    from others cycle after cycle; the room goes to the next job in the next cycle."""
    items: list[Item] = [node("n1").resources(cpu="2", memory="16Gi"), queue("a")]
    items += [podgroup("gang").queue("a").min_member(2).inqueue()]
    items += [pod("gang-0").group("gang").requests(cpu="2").nominated("n1")]
    items += [pod("gang-1").group("gang").requests(cpu="8")]
    items += [podgroup("next").queue("a").min_member(1).inqueue().created(5)]
    items += [pod("next-0").group("next").requests(cpu="2").created(5)]

    first, second = run(snapshot(*items), policy=RECLAIM, cycles=2)

    assert first.result.nominated == {}
    assert first.snapshot_after.tasks["default/gang-0"].nominated_node is None
    assert first.binds == {}  # held for the whole cycle it was nominated in
    assert second.binds == {"default/next-0": "n1"}


def test_the_preemptor_named_in_the_eviction_binds_where_its_victims_were() -> None:
    """preempt within one queue: h-00 (priority 100, minMember 2, one 1-CPU pod running) evicts
    two priority-1 pods for its 2-CPU pod and is nominated n1; h-01 (priority 100, arriving
    next, ahead in drf's job order) does not take that room while the victims release: it
    evicts victims of its own, named in their reason; once all are gone both bind."""
    items: list[Item] = [node("n1").resources(cpu="6", memory="16Gi"), queue("q")]
    items += [podgroup("low").queue("q").min_member(1).inqueue().priority(1)]
    items += [pod(f"low-{i}").group("low").requests(cpu="1").priority(1).on("n1") for i in range(5)]
    items += [podgroup("h-00").queue("q").min_member(2).inqueue().priority(100)]
    items += [pod("h-00-0").group("h-00").requests(cpu="1").priority(100).on("n1")]
    items += [pod("h-00-1").group("h-00").requests(cpu="2").priority(100).created(1)]
    later = snapshot(
        podgroup("h-01").queue("q").min_member(1).inqueue().priority(100).created(5),
        pod("h-01-0").group("h-01").requests(cpu="2").priority(100).created(5),
    )
    first_snap = snapshot(*items)

    def between(i: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        tasks = dict(snap.tasks)
        victims = {e.task_uid for e in outcomes_seen[0].result.evictions}
        for uid in victims:
            if i == 1:
                tasks[uid] = dataclasses.replace(first_snap.tasks[uid], status=TaskStatus.RELEASING)
            else:
                tasks.pop(uid, None)
        if i == 1:
            tasks |= later.tasks
            jobs = {**snap.jobs, "default/h-01": later.jobs["default/h-01"]}
            return dataclasses.replace(snap, tasks=tasks, jobs=jobs)
        return dataclasses.replace(snap, tasks=tasks)

    outcomes_seen = run(first_snap, policy=PREEMPT, cycles=1)
    first, second, third = run(first_snap, policy=PREEMPT, cycles=3, between=between)

    assert first.evictions == outcomes_seen[0].evictions
    assert len(first.evictions) == 2
    assert {e.reason for e in first.result.evictions} == {"preempt by default/h-00-1"}
    assert first.result.nominated == {"default/h-00-1": "n1"}
    assert first.result.waiting == {"default/h-00-1": waiting("default/h-00-1", "n1")}
    assert [e.reason for e in second.result.evictions] == ["preempt by default/h-01-0"] * 2
    assert not set(second.evictions) & set(first.evictions)
    assert second.binds == {}
    assert second.result.nominated == {"default/h-00-1": "n1", "default/h-01-0": "n1"}
    assert second.result.waiting == {
        "default/h-00-1": waiting("default/h-00-1", "n1"),
        "default/h-01-0": waiting("default/h-01-0", "n1"),
    }
    assert third.binds == {"default/h-00-1": "n1", "default/h-01-0": "n1"}
    assert third.evictions == []
    assert third.result.nominated == {}


MISSING_CLAIM = '0/1 nodes are available: persistentvolumeclaim "data" not found.'
STOPPED = (
    "allocate stopped its job at pod default/mine-0 (0/1 nodes are available:"
    ' persistentvolumeclaim "data" not found)'
)


def held_behind_a_missing_claim() -> ClusterSnapshot:
    """Job mine (minMember 1, queue a, the only queue): mine-0, first in task order, and mine-1
    mount a claim that does not exist, so allocate stops the job at mine-0 (Volcano's job-stop
    rule: no pod of the job could make its minMember); mine-1 carries a nomination to n1, where
    its room is held."""
    items: list[Item] = [node("n1").resources(cpu="2", memory="16Gi"), queue("a")]
    items += [podgroup("mine").queue("a").min_member(1).inqueue()]
    items += [pod("mine-0").group("mine").requests(cpu="1").created(1)]
    items += [pod("mine-1").group("mine").requests(cpu="1").created(2).nominated("n1")]
    snap = snapshot(*items)
    claimed = {
        snap.tasks[name].uid: dataclasses.replace(snap.tasks[name], claims=(("data", False),))
        for name in ("default/mine-0", "default/mine-1")
    }
    return dataclasses.replace(snap, tasks={**snap.tasks, **claimed})


def test_a_nominated_pod_no_action_tries_keeps_its_nomination_and_says_it_waits_for_the_node() -> (
    None
):
    """No action tries mine-1 (the policy has no preempt or reclaim, allocate stopped its job
    at mine-0). It keeps the nomination, and its message says so, and why, rather than the
    generic `pod was not considered in this cycle` (kube-scheduler would keep its last attempt's
    message, Volcano gives its job's generic one)."""
    (outcome,) = run(
        held_behind_a_missing_claim(), policy='actions: "enqueue, allocate, backfill"\n' + TIERS
    )

    assert outcome.binds == {}
    assert outcome.result.nominated == {"default/mine-1": "n1"}
    assert outcome.unschedulable == {
        "default/mine-0": MISSING_CLAIM,
        "default/mine-1": "Pod default/mine-1 waits for its nominated node n1, where its room is"
        f" held; it was not tried in this cycle: {STOPPED}",
    }


def test_a_nominated_pod_of_a_template_reclaim_tried_in_vain_keeps_its_nomination() -> None:
    """With reclaim in the actions too: reclaim tries mine-0 in vain (its claim is missing) and,
    as allocate, tries no other pod of that template until one is placed, so mine-1 is tried by
    no action: it keeps its nomination and says why, as without reclaim. (What reclaim says of a
    pod it tried in vain: `test_pending_reasons`, `..._reclaim_tried_say_what_it_found...`.)"""
    (outcome,) = run(held_behind_a_missing_claim(), policy=RECLAIM)

    assert outcome.binds == {}
    assert outcome.evictions == []
    assert outcome.result.nominated == {"default/mine-1": "n1"}
    assert outcome.unschedulable == {
        "default/mine-0": MISSING_CLAIM,
        "default/mine-1": "Pod default/mine-1 waits for its nominated node n1, where its room is"
        f" held; it was not tried in this cycle: {STOPPED}",
    }
