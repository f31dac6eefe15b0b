"""Pending reasons that name the real cause (issue 11, part 3): when the queue's vote and the node
fit both refuse a pod, its message says both, node fit first in kube-scheduler's words; a queue
refusal names the limit (deserved share, capability, what the other queues' guarantees leave,
Closed) with the numbers; a Closed queue says Closed, at admission and at allocation, on the
pods and on their PodGroup."""

from __future__ import annotations

import dataclasses

import pytest

from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.builders import Item, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import run

CAPACITY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: predicates
  - name: capacity
  - name: nodeorder
"""


def test_a_pod_larger_than_every_node_is_told_insufficient_cpu_first() -> None:
    items: list[Item] = [node("n1").resources(cpu="4", memory="8Gi"), pod("big").requests(cpu="8")]

    (outcome,) = run(snapshot(*items))  # the default policy, one queue

    assert outcome.binds == {}
    assert outcome.unschedulable == {
        "default/big": "0/1 nodes are available: 1 Insufficient cpu. queue default has no room"
        " left for this pod (proportion: allocated cpu 0 + this pod's cpu 8 exceed its deserved"
        " share (cpu 4))"
    }


def test_a_gang_member_its_queue_and_the_nodes_both_refuse_names_both() -> None:
    # README's examples/gang-waits: three 2-CPU nodes, a gang of four 2-CPU workers.
    items: list[Item] = [node(f"node-{i}").resources(cpu="2", memory="8Gi") for i in (1, 2, 3)]
    items += [podgroup("train").min_member(4)]
    items += [pod(f"w-{i}").group("train").requests(cpu="2", memory="2Gi") for i in range(4)]

    (outcome,) = run(snapshot(*items))

    gang = (
        "1/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable;"
        " Pending: 3 Schedulable, 1 Unschedulable"
    )
    assert outcome.binds == {}
    assert outcome.unschedulable == {
        "default/w-0": gang,
        "default/w-1": gang,
        "default/w-2": gang,
        "default/w-3": "0/3 nodes are available: 3 Insufficient cpu. queue default has no room"
        " left for this pod (proportion: allocated cpu 6 + this pod's cpu 2 exceed its deserved"
        f" share (cpu 6)). {gang}",
    }


def test_a_queue_refusal_alone_when_a_node_would_take_the_pod() -> None:
    # Two queues of equal weight on 10 CPU: each deserves 5; each queue's third 2-CPU pod fits
    # the 2 CPU left idle but not its queue's share.
    items: list[Item] = [queue("a"), queue("b"), node("n1").resources(cpu="10", memory="16Gi")]
    for q in ("a", "b"):
        items += [podgroup(f"{q}{i}").queue(q) for i in range(3)]
        items += [pod(f"{q}{i}-0").group(f"{q}{i}").requests(cpu="2") for i in range(3)]

    (outcome,) = run(snapshot(*items))

    assert sorted(outcome.binds) == ["default/a0-0", "default/a1-0", "default/b0-0", "default/b1-0"]
    assert outcome.unschedulable == {
        f"default/{q}2-0": f"queue {q} has no room left for this pod (proportion: allocated cpu 4"
        " + this pod's cpu 2 exceed its deserved share (cpu 5))"
        for q in ("a", "b")
    }


def test_a_refusal_by_capability_names_the_capability() -> None:
    items: list[Item] = [queue("capped").capability(cpu="2")]
    items += [node("n1").resources(cpu="8", memory="16Gi")]
    items += [podgroup("j").queue("capped"), pod("j-0").group("j").requests(cpu="3")]

    (outcome,) = run(snapshot(*items), policy=CAPACITY)

    assert outcome.unschedulable == {
        "default/j-0": "queue capped has no room left for this pod (capacity: allocated cpu 0 +"
        " this pod's cpu 3 exceed its capability (cpu 2))"
    }


def test_a_refusal_by_the_other_queues_guarantees_names_them() -> None:
    items: list[Item] = [queue("small"), queue("held").guarantee(cpu="6")]
    items += [node("n1").resources(cpu="8", memory="16Gi")]
    items += [podgroup("j").queue("small"), pod("j-0").group("j").requests(cpu="3")]

    (outcome,) = run(snapshot(*items), policy=CAPACITY)

    assert outcome.unschedulable == {
        "default/j-0": "queue small has no room left for this pod (capacity: allocated cpu 0 +"
        " this pod's cpu 3 exceed what the other queues' guarantees leave it (cpu 2))"
    }


def test_a_node_without_allocatable_is_insufficient_and_the_queue_is_overused_with_nothing() -> (
    None
):
    items: list[Item] = [node("n1").resources(), pod("p").requests(cpu="1", memory="1Gi")]

    (outcome,) = run(snapshot(*items))

    assert outcome.unschedulable == {
        "default/p": "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. queue"
        " default is overused (proportion: allocated cpu 0, memory 0 + this pod's cpu 1, memory"
        " 1Gi exceed the Ready nodes' allocatable (cpu 0, memory 0))"
    }


@pytest.mark.parametrize("policy", [None, CAPACITY])
def test_a_job_waiting_for_admission_in_a_closed_queue_says_closed(policy: str | None) -> None:
    items: list[Item] = [queue("shut").state("Closed")]
    items += [node("n1").resources(cpu="4", memory="8Gi")]
    items += [podgroup("a").queue("shut").min_resources(cpu="1")]
    items += [pod("a-0").group("a").requests(cpu="1")]

    (outcome,) = run(snapshot(*items), policy=policy)

    assert outcome.unschedulable == {
        "default/a-0": "podgroup default/a is Pending: queue shut is Closed: no job is admitted"
        " to it while its status.state is not Open"
    }


@pytest.mark.parametrize(("policy", "plugin"), [(None, "proportion"), (CAPACITY, "capacity")])
def test_an_admitted_job_in_a_closed_queue_says_closed(policy: str | None, plugin: str) -> None:
    items: list[Item] = [queue("shut").state("Closed")]
    items += [node("n1").resources(cpu="4", memory="8Gi")]
    items += [podgroup("a").queue("shut").inqueue(), pod("a-0").group("a").requests(cpu="1")]
    items += [podgroup("b").queue("shut"), pod("b-0").group("b").requests(cpu="1")]

    (outcome,) = run(snapshot(*items), policy=policy)

    closed = (
        f"queue shut is Closed ({plugin}: its pods are not placed while its status.state is"
        " Closed, only when it is Open)"
    )
    assert outcome.binds == {}
    assert outcome.unschedulable == {"default/a-0": closed, "default/b-0": closed}
    gang = "1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable"
    for key in ("default/a", "default/b"):  # b: admitted without minResources, as Volcano does
        status = outcome.result.podgroups[key]
        (condition,) = status.conditions
        assert (status.phase, condition.type, condition.reason) == (
            PodGroupPhase.INQUEUE,
            "Unschedulable",
            "NotEnoughResources",
        )
        assert condition.message == f"{closed}. {gang}; Pending: 1 Unschedulable"


@pytest.mark.parametrize(("policy", "plugin"), [(None, "proportion"), (CAPACITY, "capacity")])
def test_a_gang_in_a_closed_queue_names_the_queue_once_on_its_pods_and_its_podgroup(
    policy: str | None, plugin: str
) -> None:
    """The pods of a gang carry the queue's refusal, then the gang's shortfall; the PodGroup
    carries the same text (what its pods say, the nodes' verdict aside)."""
    items: list[Item] = [queue("shut").state("Closed")]
    items += [node("n1").resources(cpu="1", memory="8Gi")]
    items += [podgroup("g").queue("shut").min_member(2).inqueue()]
    items += [pod("g-0").group("g").requests(cpu="1"), pod("g-1").group("g").requests(cpu="2")]

    (outcome,) = run(snapshot(*items), policy=policy)

    gang = (
        f"queue shut is Closed ({plugin}: its pods are not placed while its status.state is"
        " Closed, only when it is Open). 2/2 tasks in gang unschedulable: pod group is not ready,"
        " 2 Pending, 2 minAvailable; Pending: 2 Unschedulable"
    )
    assert outcome.unschedulable == {
        "default/g-0": gang,
        "default/g-1": f"0/1 nodes are available: 1 Insufficient cpu. {gang}",
    }
    (condition,) = outcome.result.podgroups["default/g"].conditions
    assert condition.message == gang


def test_a_closing_queue_names_its_state() -> None:
    items: list[Item] = [queue("q").state("Closing")]
    items += [node("n1").resources(cpu="4", memory="8Gi")]
    items += [podgroup("a").queue("q").inqueue(), pod("a-0").group("a").requests(cpu="1")]

    (outcome,) = run(snapshot(*items))

    assert outcome.unschedulable == {
        "default/a-0": "queue q is Closing (proportion: its pods are not placed while its"
        " status.state is Closing, only when it is Open)"
    }


@pytest.mark.parametrize(
    ("policy", "queue_says"),
    [
        (None, "is overused (proportion"),
        (CAPACITY, "has no room left for this pod (capacity"),
    ],
)
def test_a_cluster_without_nodes_says_so_in_kube_schedulers_words(
    policy: str | None, queue_says: str
) -> None:
    (outcome,) = run(snapshot(pod("p").requests(cpu="1")), policy=policy)

    assert outcome.unschedulable == {
        "default/p": f"no nodes available to schedule pods. queue default {queue_says}: allocated"
        " cpu 0 + this pod's cpu 1 exceed the Ready nodes' allocatable (cpu 0))"
    }


def test_under_capacity_a_pod_larger_than_the_cluster_names_the_clusters_allocatable() -> None:
    items: list[Item] = [node("n1").resources(cpu="4", memory="8Gi"), pod("big").requests(cpu="8")]

    (outcome,) = run(snapshot(*items), policy=CAPACITY)

    assert outcome.unschedulable == {
        "default/big": "0/1 nodes are available: 1 Insufficient cpu. queue default has no room"
        " left for this pod (capacity: allocated cpu 0 + this pod's cpu 8 exceed the cluster's"
        " allocatable (cpu 4))"
    }


def test_a_job_not_admitted_is_told_which_plugin_and_limit_kept_it_out() -> None:
    items: list[Item] = [node("n1").resources(cpu="4", memory="8Gi")]
    items += [podgroup("big").min_resources(cpu="8"), pod("big-0").group("big").requests(cpu="8")]

    (outcome,) = run(snapshot(*items))  # the default policy: overcommit votes before proportion

    assert outcome.unschedulable == {
        "default/big-0": "podgroup default/big is Pending: not admitted to queue default"
        " (overcommit: minResources cpu 8 + what admitted jobs hold (cpu 0) exceed the Ready"
        " nodes' allocatable times the overcommit factor, less what is in use (cpu 4800m))"
    }


def test_a_job_over_its_queues_capability_is_told_so_at_admission() -> None:
    items: list[Item] = [queue("capped").capability(cpu="2")]
    items += [node("n1").resources(cpu="8", memory="16Gi")]
    items += [podgroup("j").queue("capped").min_resources(cpu="3")]
    items += [pod("j-0").group("j").requests(cpu="3")]

    (outcome,) = run(snapshot(*items), policy=CAPACITY)

    assert outcome.unschedulable == {
        "default/j-0": "podgroup default/j is Pending: not admitted to queue capped (capacity:"
        " minResources cpu 3 + what the queue holds and has admitted (cpu 0) exceed its"
        " capability (cpu 2))"
    }


@pytest.mark.parametrize("policy", [None, CAPACITY])
def test_a_best_effort_pod_in_a_closed_queue_is_still_backfilled(policy: str | None) -> None:
    # Volcano's backfill places pods that request nothing without asking the queue (its
    # pickUpPendingTasks skips pending jobs and invalid ones, not closed queues); a pod that
    # requests something waits, as above.
    items: list[Item] = [queue("shut").state("Closed")]
    items += [node("n1").resources(cpu="4", memory="8Gi")]
    items += [podgroup("a").queue("shut"), pod("a-0").group("a")]
    items += [podgroup("b").queue("shut"), pod("b-0").group("b").requests(cpu="1")]

    (outcome,) = run(snapshot(*items), policy=policy)

    assert outcome.binds == {"default/a-0": "n1"}
    assert outcome.unschedulable == {
        "default/b-0": f"queue shut is Closed ({'capacity' if policy else 'proportion'}: its pods"
        " are not placed while its status.state is Closed, only when it is Open)"
    }


def _behind_a_missing_claim(*, both: bool = True) -> ClusterSnapshot:
    """Job etl (minMember 1): etl-0, first in task order, mounts a claim that does not exist;
    so does etl-1 when `both` (one template: no pod of the job could make its minMember), else
    etl-1 mounts nothing and fits n1."""
    items: list[Item] = [node("n1").resources(cpu="2", memory="16Gi")]
    items += [podgroup("etl").min_member(1).inqueue()]
    items += [pod("etl-0").group("etl").requests(cpu="1").created(1)]
    items += [pod("etl-1").group("etl").requests(cpu="1").created(2)]
    snap = snapshot(*items)
    names = ("default/etl-0", "default/etl-1") if both else ("default/etl-0",)
    claimed = {
        snap.tasks[name].uid: dataclasses.replace(snap.tasks[name], claims=(("data", False),))
        for name in names
    }
    return dataclasses.replace(snap, tasks={**snap.tasks, **claimed})


MISSING_CLAIM = '0/1 nodes are available: persistentvolumeclaim "data" not found.'
TIERS = """\
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


def test_a_pod_behind_one_its_job_stopped_at_names_that_pod_and_its_reason() -> None:
    """allocate stops etl at etl-0 (Volcano's job-stop rule: etl-1, of etl-0's template, could
    not make the job's minMember either), every cycle while the claim is missing: etl-1 is never
    tried, and says so, naming etl-0 and its reason, rather than the generic `pod was not
    considered in this cycle`."""
    (outcome,) = run(
        _behind_a_missing_claim(), policy='actions: "enqueue, allocate, backfill"\n' + TIERS
    )

    assert outcome.binds == {}
    assert outcome.unschedulable == {
        "default/etl-0": MISSING_CLAIM,
        "default/etl-1": "pod was not tried in this cycle: allocate stopped its job at pod"
        ' default/etl-0 (0/1 nodes are available: persistentvolumeclaim "data" not found)',
    }


def test_a_job_goes_on_past_a_pod_failing_its_pre_predicates_when_the_rest_can_make_it() -> None:
    """Volcano's allocate since b83a5e7a4 (June 2026, `NeedContinueAllocating` on a PrePredicate
    failure): etl-0's claim is missing, but etl-1 (another template, mounting nothing) can make
    the job's minMember of 1 alone, so allocate goes on to it and binds it."""
    (outcome,) = run(
        _behind_a_missing_claim(both=False),
        policy='actions: "enqueue, allocate, backfill"\n' + TIERS,
    )

    assert outcome.binds == {"default/etl-1": "n1"}
    assert outcome.unschedulable == {"default/etl-0": MISSING_CLAIM}


def test_pods_only_reclaim_tried_say_what_it_found_in_kube_schedulers_words() -> None:
    """Without allocate, reclaim tries both pods in vain (one queue: nothing to reclaim). etl-0
    fails its pre-predicates: the reason, then no node where reclaim could help, as
    kube-scheduler's FitError gives a failed preemption (`preemption: 0/1 nodes are available:
    1 Preemption is not helpful for scheduling.`); etl-1 passes every predicate: no victims."""
    (outcome,) = run(
        _behind_a_missing_claim(both=False), policy='actions: "enqueue, reclaim"\n' + TIERS
    )

    assert outcome.binds == {}
    assert outcome.unschedulable == {
        "default/etl-0": f"{MISSING_CLAIM} reclaim: 0/1 nodes are available: 1 Preemption is"
        " not helpful for scheduling.",
        "default/etl-1": "reclaim: 0/1 nodes are available: 1 No preemption victims found for"
        " incoming pod.",
    }
