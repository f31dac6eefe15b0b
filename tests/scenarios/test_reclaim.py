"""reclaim: a queue below its deserved share takes back what other queues hold beyond theirs."""

from __future__ import annotations

import dataclasses

from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import QueueFacts
from vscheduler.testing.builders import (
    Item,
    PodBuilder,
    QueueBuilder,
    node,
    pdb,
    pod,
    podgroup,
    queue,
    res,
    snapshot,
)
from vscheduler.testing.scenario import Outcome, run

TIERS = """\
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: pdb
- plugins:
  - name: drf
  - name: predicates
  - name: {queues}
  - name: nodeorder
"""
POLICY = 'actions: "enqueue, allocate, reclaim, backfill"\n' + TIERS.format(queues="proportion")
CAPACITY = 'actions: "enqueue, allocate, reclaim, backfill"\n' + TIERS.format(queues="capacity")


def nodes(count: int, cpu: str = "4") -> list[Item]:
    return [node(f"n{i}").resources(cpu=cpu, memory="16Gi") for i in range(1, count + 1)]


def job(name: str, q: str, *, members: int = 1) -> Item:
    return podgroup(name).queue(q).min_member(members).inqueue()


def running(name: str, job: str, on: str, cpu: str = "1") -> PodBuilder:
    return pod(name).group(job).requests(cpu=cpu).on(on)


def pending(name: str, job: str, cpu: str = "1") -> PodBuilder:
    return pod(name).group(job).requests(cpu=cpu)


def keys(*names: str) -> list[str]:
    return [f"default/{n}" for n in names]


def borrowed(*queues: QueueBuilder | QueueFacts) -> list[Item]:
    """Two 4-CPU nodes full of queue b's elastic job (8 pods, minMember 1); queue a's gang of
    four 1-CPU pods waits. Weights 1:1, so each queue deserves 4 CPUs."""
    items: list[Item] = [*nodes(2), *(queues or (queue("a"), queue("b")))]
    items += [job("b-job", "b")] + [running(f"b-{i}", "b-job", f"n{1 + i % 2}") for i in range(8)]
    items += [job("a-job", "a", members=4)] + [pending(f"a-{i}", "a-job") for i in range(4)]
    return items


# --- the core behaviour --------------------------------------------------------------------------
def test_a_queue_below_its_deserved_takes_back_exactly_what_it_deserves() -> None:
    first, second = run(snapshot(*borrowed()), policy=POLICY, cycles=2)

    assert first.evictions == keys("b-6", "b-4", "b-2", "b-0")
    assert [e.reason for e in first.result.evictions][:1] == ["reclaim by default/a-0 of queue a"]
    assert {e.action for e in first.result.evictions} == {"reclaim"}
    assert first.result.pipelined == dict.fromkeys(keys("a-0", "a-1", "a-2", "a-3"), "n1")
    assert second.binds == dict.fromkeys(keys("a-0", "a-1", "a-2", "a-3"), "n1")
    assert second.evictions == []


def test_nothing_is_reclaimed_when_idle_resources_already_fit() -> None:
    items: list[Item] = [*nodes(2), queue("a"), queue("b"), job("b-job", "b")]
    items += [running(f"b-{i}", "b-job", "n1") for i in range(4)]
    items += [job("a-job", "a", members=4)] + [pending(f"a-{i}", "a-job") for i in range(4)]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == []
    assert outcome.binds == dict.fromkeys(keys("a-0", "a-1", "a-2", "a-3"), "n2")


def test_a_failed_reclaim_evicts_nothing() -> None:
    items = borrowed()
    items[3] = job("b-job", "b", members=6)  # b can give two pods, a's gang needs four

    first, second = run(snapshot(*items), policy=POLICY, cycles=2)

    assert (first.evictions, first.binds, first.result.pipelined) == ([], {}, {})
    assert second.evictions == []


def test_a_queue_that_is_not_reclaimable_gives_nothing_back() -> None:
    (outcome,) = run(snapshot(*borrowed(queue("a"), queue("b").reclaimable(False))), policy=POLICY)

    assert (outcome.evictions, outcome.result.pipelined) == ([], {})


def test_a_queue_at_its_deserved_share_reclaims_nothing() -> None:
    # a runs 4 of its own (its deserved share, weights 1:1 over 8 CPUs) and wants one more.
    items: list[Item] = [*nodes(2), queue("a"), queue("b"), job("b-job", "b")]
    items += [running(f"b-{i}", "b-job", "n2") for i in range(4)]
    items += [job("a-run", "a")] + [running(f"a-run-{i}", "a-run", "n1") for i in range(4)]
    items += [job("a-job", "a"), pending("a-0", "a-job")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert (outcome.evictions, outcome.result.pipelined) == ([], {})


def test_a_pod_protected_by_a_disruption_budget_is_not_reclaimed() -> None:
    items: list[Item] = [*nodes(1), queue("a"), queue("b"), job("b-job", "b")]
    items += [running("b-guarded", "b-job", "n1", cpu="2").label("app", "db")]
    items += [running("b-plain", "b-job", "n1", cpu="1"), running("b-x", "b-job", "n1", cpu="1")]
    items += [pdb("db").selecting(app="db").allowed(0)]
    items += [job("a-job", "a"), pending("a-0", "a-job", cpu="2")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == keys("b-x", "b-plain")


# --- settling: no evict-and-return loops ---------------------------------------------------------
def lone(name: str, q: str, on: str, cpu: str = "1") -> list[Item]:
    """A running pod that is a job of its own (minMember 1, as a Deployment's pod): evicted,
    its job starves and asks for it back."""
    return [job(f"{name}-job", q), running(name, f"{name}-job", on, cpu)]


def test_a_queue_that_could_win_its_pod_back_is_not_a_victim() -> None:
    # Deserved (weights 1:1:3 over 8 CPUs): a 2, b 2, c 4. c sits on n1 at exactly its share,
    # b on n2 is 2 CPUs over. n1 comes first in node order, but taking one of c's pods (each a
    # job of its own) would let c reclaim it straight back: a's two pods come from b.
    items: list[Item] = [*nodes(2), queue("a"), queue("b"), queue("c").weight(3)]
    items += [item for i in range(4) for item in lone(f"c-{i}", "c", "n1")]
    items += [job("b-job", "b")] + [running(f"b-{i}", "b-job", "n2") for i in range(4)]
    items += [job("a-job", "a", members=2)] + [pending(f"a-{i}", "a-job") for i in range(2)]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == keys("b-3", "b-2")
    assert outcome.result.pipelined == dict.fromkeys(keys("a-0", "a-1"), "n2")


def recreated(before: ClusterSnapshot, after: Outcome, queue_name: str) -> ClusterSnapshot:
    """The cluster after `after`, with every pod it evicted back as a pending pod of a new job
    (minMember 1) in `queue_name`, as a controller recreating it would: a starving job."""
    items: list[Item] = []
    for evict in after.result.evictions:
        gone = before.tasks[evict.task_uid]
        name = f"{gone.name}-again"
        items.append(job(name, queue_name))
        items.append(dataclasses.replace(pending(name, name).build(), resreq=gone.resreq))
    extra = snapshot(*items)
    snap = after.snapshot_after
    tasks = {**snap.tasks, **extra.tasks}
    jobs = {**snap.jobs, **{k: v for k, v in extra.jobs.items() if k not in snap.jobs}}
    return dataclasses.replace(snap, tasks=tasks, jobs=jobs)


def settle(snap: ClusterSnapshot, policy: str, victim_queue: str, cycles: int) -> list[Outcome]:
    """Run `cycles` cycles, recreating every evicted pod as a new starving job in between."""
    outcomes: list[Outcome] = []
    for _ in range(cycles):
        (outcome,) = run(snap, policy=policy)
        outcomes.append(outcome)
        snap = recreated(snap, outcome, victim_queue)
    return outcomes


def test_reclaim_between_two_queues_settles_without_ping_pong_over_several_cycles() -> None:
    # b's pods are 3 CPUs, a's 2: b ends below its deserved share (6 of 8) but can never take a
    # 3-CPU pod back within it, by reclaim or by allocate.
    items: list[Item] = [*nodes(2, cpu="6"), queue("a"), queue("b"), job("b-job", "b")]
    items += [running(f"b-{i}", "b-job", f"n{1 + i % 2}", cpu="3") for i in range(4)]
    items += [job("a-job", "a", members=2)] + [
        pending(f"a-{i}", "a-job", cpu="2") for i in range(2)
    ]

    outcomes = settle(snapshot(*items), POLICY, "b", cycles=5)

    assert [o.evictions for o in outcomes] == [keys("b-2", "b-0"), [], [], [], []]
    assert outcomes[1].binds == dict.fromkeys(keys("a-0", "a-1"), "n1")
    assert [o.binds for o in outcomes[2:]] == [{}, {}, {}]
    last = outcomes[-1].snapshot_after.tasks
    assert sorted(k for k, t in last.items() if t.node_name is None) == keys(
        "b-0-again", "b-2-again"
    )


def test_capacity_reclaim_settles_too() -> None:
    deserving = [
        dataclasses.replace(queue(name).build(), deserved=res(cpu="4")) for name in ("a", "b")
    ]

    outcomes = settle(snapshot(*borrowed(*deserving)), CAPACITY, "b", cycles=4)

    assert [o.evictions for o in outcomes] == [keys("b-6", "b-4", "b-2", "b-0"), [], [], []]
    assert outcomes[1].binds == dict.fromkeys(keys("a-0", "a-1", "a-2", "a-3"), "n1")
    assert [o.binds for o in outcomes[2:]] == [{}, {}]


def test_capacity_never_takes_a_pod_its_queue_would_borrow_back_first() -> None:
    # Volcano #4947: queue b deserves 3 and holds 4, queue a deserves 5 and holds 1; a's 3-CPU pod
    # would need three of b's pods, leaving b at 1 of its 3, first in queue order to borrow
    # them back. vscheduler leaves b alone, cycle after cycle.
    queues = [
        dataclasses.replace(queue("a").build(), deserved=res(cpu="5")),
        dataclasses.replace(queue("b").build(), deserved=res(cpu="3")),
    ]
    items: list[Item] = [node("n1").resources(cpu="5", memory="16Gi"), *queues]
    items += [item for i in range(4) for item in lone(f"b-{i}", "b", "n1")]
    items += [job("a-run", "a"), running("a-run-0", "a-run", "n1")]
    items += [job("a-job", "a"), pending("a-0", "a-job", cpu="3")]

    outcomes = settle(snapshot(*items), CAPACITY, "b", cycles=3)

    assert [o.evictions for o in outcomes] == [[], [], []]


def test_a_gang_left_at_its_min_member_gives_up_pods_its_queue_could_reclaim_back() -> None:
    # Volcano's e2e "Reclaim Case 10" in small: b deserves 3 and holds 4 in one job of
    # minMember 1. a's 3-CPU pod takes three of them: b falls to 1 of its 3, but its job, still
    # at its minMember, is not starving, so no reclaim asks for them back, and its recreated
    # pods (back in the same job, as a job controller makes them) wait for room.
    queues = [
        dataclasses.replace(queue("a").build(), deserved=res(cpu="5")),
        dataclasses.replace(queue("b").build(), deserved=res(cpu="3")),
    ]
    items: list[Item] = [node("n1").resources(cpu="5", memory="16Gi"), *queues]
    items += [job("b-job", "b")] + [running(f"b-{i}", "b-job", "n1") for i in range(4)]
    items += [job("a-run", "a"), running("a-run-0", "a-run", "n1")]
    items += [job("a-job", "a"), pending("a-0", "a-job", cpu="3")]

    snap, outcomes = snapshot(*items), []
    for _ in range(3):
        (outcome,) = run(snap, policy=CAPACITY)
        outcomes.append(outcome)
        snap = rejoined(snap, outcome)

    assert [len(o.evictions) for o in outcomes] == [3, 0, 0]
    assert outcomes[1].binds == dict.fromkeys(keys("a-0"), "n1")
    assert outcomes[2].binds == {}


def rejoined(before: ClusterSnapshot, after: Outcome) -> ClusterSnapshot:
    """The cluster after `after`, every pod it evicted back pending in its own job."""
    snap = after.snapshot_after
    tasks = dict(snap.tasks)
    for evict in after.result.evictions:
        gone = before.tasks[evict.task_uid]
        again = dataclasses.replace(
            pending(f"{gone.name}-again", "b-job").build(), resreq=gone.resreq
        )
        tasks[again.uid] = again
    return dataclasses.replace(snap, tasks=tasks)


# --- each plugin's part --------------------------------------------------------------------------
def deciding(queues: str) -> str:
    """A policy where `queues` (proportion or capacity) answers the reclaimable point: gang's
    reclaimable function is off in the first tier."""
    return f"""\
actions: "enqueue, allocate, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
    enableReclaimable: false
  - name: {queues}
  - name: conformance
- plugins:
  - name: predicates
  - name: nodeorder
"""


def test_proportion_deciding_takes_only_from_queues_above_their_deserved_share() -> None:
    items: list[Item] = [*nodes(2), queue("a"), queue("b"), queue("c").weight(3)]
    items += [job("c-job", "c")] + [running(f"c-{i}", "c-job", "n1") for i in range(4)]
    items += [job("b-job", "b")] + [running(f"b-{i}", "b-job", "n2") for i in range(4)]
    items += [job("a-job", "a", members=2)] + [pending(f"a-{i}", "a-job") for i in range(2)]

    (outcome,) = run(snapshot(*items), policy=deciding("proportion"))

    assert outcome.evictions == keys("b-3", "b-2")


def test_capacity_deciding_leaves_a_queue_its_guarantee() -> None:
    # b deserves 4 but is guaranteed 5 (deserved is raised to it) and holds 6: one pod may go.
    # a's gang of 3 takes the 2 idle CPUs and that one pod.
    lender = dataclasses.replace(queue("b").guarantee(cpu="5").build(), deserved=res(cpu="4"))
    asker = dataclasses.replace(queue("a").build(), deserved=res(cpu="4"))
    items: list[Item] = [*nodes(2), asker, lender, job("b-job", "b")]
    items += [running(f"b-{i}", "b-job", f"n{1 + i % 2}") for i in range(6)]
    items += [job("a-job", "a", members=3)] + [pending(f"a-{i}", "a-job") for i in range(3)]

    (outcome,) = run(snapshot(*items), policy=deciding("capacity"))

    assert outcome.evictions == keys("b-4")
    assert outcome.result.pipelined == {
        "default/a-0": "n1",
        "default/a-1": "n2",
        "default/a-2": "n1",
    }


def test_pods_without_a_podgroup_are_reclaimed_down_to_their_queues_share() -> None:
    # Queue a's eight lone pods (a Deployment's, say) fill both nodes; queue b, of equal weight,
    # asks for four: four of a's pods go, and a keeps its deserved four. A job of one is no gang.
    items: list[Item] = [*nodes(2), queue("a"), queue("b")]
    items += [item for i in range(8) for item in lone(f"a-{i}", "a", f"n{1 + i % 2}")]
    items += [
        item for i in range(4) for item in (job(f"b-{i}-job", "b"), pending(f"b-{i}", f"b-{i}-job"))
    ]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert len(outcome.evictions) == 4
    assert all(key.startswith("default/a-") for key in outcome.evictions)
    assert sorted(outcome.result.pipelined) == keys("b-0", "b-1", "b-2", "b-3")
