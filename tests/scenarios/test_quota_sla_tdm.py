"""Whole cycles with resourcequota, sla and tdm: exact binds, phases, evictions and messages."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest

from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.builders import (
    START,
    Item,
    PodBuilder,
    PodGroupBuilder,
    at,
    node,
    pod,
    podgroup,
    resource_quota,
    snapshot,
)
from vscheduler.testing.scenario import Outcome, run

SECOND_TIER = """- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


def policy(*first_tier: str, actions: str = "enqueue, allocate, backfill") -> str:
    entries = "".join(f"  - name: {entry}\n" for entry in ("priority", "gang", *first_tier))
    return f'actions: "{actions}"\ntiers:\n- plugins:\n{entries}{SECOND_TIER}'


def phase(outcome: Outcome, key: str) -> PodGroupPhase:
    return outcome.result.podgroups[key].phase


def job(name: str, namespace: str, cpu: str, created: float) -> tuple[PodGroupBuilder, PodBuilder]:
    """A PodGroup of one pod requesting `cpu`, its minResources the same."""
    group = podgroup(name, namespace).min_resources(cpu=cpu).created(created)
    member = pod(f"{name}-0", namespace).group(name).requests(cpu=cpu).created(created)
    return group, member


# --- resourcequota --------------------------------------------------------------------------------
QUOTA_POLICY = policy("resourcequota")
BIG_NODES = (
    node("n1").resources(cpu="16", memory="32Gi"),
    node("n2").resources(cpu="16", memory="32Gi"),
)


def test_a_namespace_quota_admits_jobs_until_it_is_full() -> None:
    quota = (
        resource_quota("compute", "team").hard({"requests.cpu": "6"}).used({"requests.cpu": "1"})
    )
    snap = snapshot(
        *BIG_NODES, quota, *job("a", "team", "2", 1), *job("b", "team", "3", 2),
        *job("c", "team", "1", 3), *job("d", "other", "8", 4),
    )  # fmt: skip

    outcome = run(snap, policy=QUOTA_POLICY)[0]

    assert outcome.binds == {"team/a-0": "n1", "team/b-0": "n2", "other/d-0": "n1"}
    assert phase(outcome, "team/c") is PodGroupPhase.PENDING
    assert outcome.unschedulable == {
        "team/c-0": "podgroup team/c is Pending: resource quota team/compute insufficient: "
        "requested cpu 1, used cpu 1 (and cpu 5 admitted in this cycle), limited cpu 6"
    }


def test_a_quota_in_another_namespace_does_not_limit_a_job() -> None:
    quota = resource_quota("compute", "team").hard(cpu="1")
    snap = snapshot(*BIG_NODES, quota, *job("d", "other", "8", 0))

    outcome = run(snap, policy=QUOTA_POLICY)[0]

    assert outcome.binds == {"other/d-0": "n1"}


# --- sla ------------------------------------------------------------------------------------------
SLA_POLICY = policy("sla").replace(
    "  - name: sla\n", "  - name: sla\n    arguments:\n      sla-waiting-time: 10m\n"
)
ONE_NODE = (node("n1").resources(cpu="4", memory="8Gi"),)


def test_the_job_with_the_earlier_deadline_is_admitted_and_placed_first() -> None:
    # old: 0 + 10m = 600; urgent: 100 + 1m = 160. Overcommit admits one 3-CPU job (4 * 1.2).
    old = job("old", "default", "3", 0)
    urgent = job("urgent", "default", "3", 100)
    snap = snapshot(*ONE_NODE, *old, urgent[0].annotate("sla-waiting-time", "1m"), urgent[1])

    outcome = run(snap, policy=SLA_POLICY, now=at(120))[0]

    assert outcome.binds == {"default/urgent-0": "n1"}
    assert phase(outcome, "default/old") is PodGroupPhase.PENDING


def test_a_job_past_its_deadline_is_admitted_even_beyond_overcommit() -> None:
    busy = pod("busy").scheduler("default-scheduler").requests(cpu="4").on("n1")
    snap = snapshot(*ONE_NODE, busy, *job("late", "default", "2", 0))

    before, after = (
        run(snap, policy=SLA_POLICY, now=at(599))[0],
        run(snap, policy=SLA_POLICY, now=at(600))[0],
    )

    assert phase(before, "default/late") is PodGroupPhase.PENDING
    assert phase(after, "default/late") is PodGroupPhase.INQUEUE
    assert after.binds == {}


def test_a_job_with_a_bad_waiting_time_is_not_admitted_and_says_why() -> None:
    group, member = job("typo", "default", "1", 0)
    snap = snapshot(*ONE_NODE, group.annotate("sla-waiting-time", "1hr"), member)

    outcome = run(snap, policy=SLA_POLICY)[0]

    assert outcome.binds == {}
    assert outcome.unschedulable == {
        "default/typo-0": "podgroup default/typo is not valid: annotation sla-waiting-time: must"
        " be a Go duration like '1h30m', got '1hr'"
    }


# --- tdm ------------------------------------------------------------------------------------------
ZONE = "volcano.sh/revocable-zone"
TDM_POLICY = (
    policy(actions="enqueue, allocate, backfill, shuffle")
    + """  - name: tdm
    arguments:
      tdm.revocable-zone.rz1: 10:00-21:00
      tdm.evict.period: 5m
"""
)
TDM_NODES = (
    node("n1").resources(cpu="4", memory="8Gi"),
    node("r1").resources(cpu="4", memory="8Gi").label(ZONE, "rz1"),
)
NOON = START + dt.timedelta(hours=12)
NIGHT = START + dt.timedelta(hours=22)


def spot(name: str) -> PodBuilder:
    return pod(name).annotate("volcano.sh/preemptable", "true").preemptable()


def test_preemptable_pods_go_to_the_open_zone_and_the_others_stay_off_it() -> None:
    snap = snapshot(
        *TDM_NODES,
        spot("spot-0").requests(cpu="1").created(1),
        pod("web-0").requests(cpu="1").created(2),
        pod("web-1").requests(cpu="1").created(3),
    )

    outcome = run(snap, policy=TDM_POLICY, now=NOON)[0]

    assert outcome.binds == {
        "default/spot-0": "r1",
        "default/web-0": "n1",
        "default/web-1": "n1",
    }


def test_a_closed_zone_takes_no_pod_and_says_so() -> None:
    snap = snapshot(
        *TDM_NODES,
        pod("filler").scheduler("default-scheduler").requests(cpu="4").on("n1"),
        spot("spot-0").requests(cpu="1"),
    )

    outcome = run(snap, policy=TDM_POLICY, now=NIGHT)[0]

    assert outcome.binds == {}
    assert outcome.unschedulable == {
        "default/spot-0": "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) in revocable"
        " zone rz1, closed now (10:00-21:00)."
    }


def test_a_closed_zone_evicts_its_preemptable_pods_once_per_period_per_job() -> None:
    snap = snapshot(
        *TDM_NODES,
        podgroup("batch").min_member(1),
        *(spot(f"batch-{i}").group("batch").requests(cpu="1").on("r1") for i in range(3)),
        spot("solo").requests(cpu="1").on("r1"),
        pod("steady").requests(cpu="1").on("n1"),
    )

    cycles = run(snap, policy=TDM_POLICY, now=NIGHT, cycles=4, step=150.0)

    assert [c.evictions for c in cycles] == [
        ["default/batch-0", "default/solo"],
        [],
        ["default/batch-1"],
        [],
    ]
    assert cycles[0].result.evictions[0].reason == (
        "shuffle: revocable zone rz1 of node r1 is closed (10:00-21:00)"
    )
    assert cycles[0].result.evictions[0].strategy == "tdm"


PREEMPT_POLICY = policy(
    "conformance", "tdm", actions="enqueue, allocate, preempt, backfill"
).replace(
    "  - name: tdm\n", "  - name: tdm\n    arguments:\n      tdm.revocable-zone.rz1: 10:00-21:00\n"
)


def opted_out(name: str) -> PodBuilder:
    """Not preemptable: `volcano.sh/preemptable: "false"` (without it a pod is preemptable, as
    Volcano's `TaskInfo.Preemptable` reads it since 1.7)."""
    return pod(name).annotate("volcano.sh/preemptable", "false")


def crowded(preemptor: PodBuilder, steady: Callable[[str], PodBuilder] = opted_out) -> list[Item]:
    """n1 full: two pods of `steady` (made by `steady`: by default not preemptable), two
    preemptable pods of `spot` (all priority 1, each job minMember 1); `preemptor` (priority
    100, 1 CPU) waits."""
    return [
        node("n1").resources(cpu="4", memory="16Gi"),
        podgroup("steady").priority(1).inqueue(),
        *(
            steady(f"steady-{i}").group("steady").requests(cpu="1").priority(1).on("n1")
            for i in (0, 1)
        ),
        podgroup("spot").priority(1).inqueue(),
        *(spot(f"spot-{i}").group("spot").requests(cpu="1").priority(1).on("n1") for i in (0, 1)),
        podgroup("urgent").priority(100).inqueue(),
        preemptor.group("urgent").requests(cpu="1").priority(100),
    ]


def test_preemption_takes_a_preemptable_pod_and_spares_the_others() -> None:
    """The preemptor is not preemptable either (tdm gives a preemptable one no victims)."""
    (outcome,) = run(snapshot(*crowded(opted_out("urgent-0"))), policy=PREEMPT_POLICY, now=NOON)

    assert outcome.evictions == ["default/spot-1"]
    assert outcome.result.pipelined == {"default/urgent-0": "n1"}


def test_preemption_takes_a_pod_without_the_preemptable_annotation_as_it_would_without_tdm() -> (
    None
):
    """steady's pods carry no annotation: preemptable to tdm as to the action (Volcano's
    default), so tdm narrows nothing here and the victim is the one taken without tdm."""
    snap = snapshot(*crowded(opted_out("urgent-0"), steady=pod))
    (outcome,) = run(snap, policy=PREEMPT_POLICY, now=NOON)
    without_tdm = policy("conformance", actions="enqueue, allocate, preempt, backfill")
    (without,) = run(snap, policy=without_tdm, now=NOON)

    assert without.evictions == ["default/steady-1"]
    assert outcome.evictions == ["default/steady-1"]
    assert outcome.result.pipelined == {"default/urgent-0": "n1"}


@pytest.mark.parametrize(
    "preemptor",
    [
        pytest.param(spot("urgent-0"), id="annotated-preemptable"),
        pytest.param(pod("urgent-0"), id="without-the-annotation"),
    ],
)
def test_a_preemptable_pod_preempts_nothing(preemptor: PodBuilder) -> None:
    """Preemptable by its annotation or, without one, by default: Volcano's tdm rejects both.
    tdm's empty answer ends the preemptable point here; Volcano would ask the second tier
    (drf) instead (docs/policy.md 5.15, differences)."""
    (outcome,) = run(snapshot(*crowded(preemptor)), policy=PREEMPT_POLICY, now=NOON)

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}
