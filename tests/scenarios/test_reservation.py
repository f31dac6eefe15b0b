"""Whole cycles with the reservation plugin (seed 004): a reservation keeps other pods off its
node until its own pod arrives or it expires; exact binds, releases and messages.

The policy has no nodeorder, so among nodes that fit the first listed wins."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import yaml

from vscheduler.model.cluster import ClusterSnapshot, complete_jobs
from vscheduler.model.commands import ReservationRelease
from vscheduler.model.status import TaskStatus
from vscheduler.simulate import Request, render_table, simulate
from vscheduler.testing.builders import PodBuilder, at, node, pod, podgroup, snapshot
from vscheduler.testing.reservations import config_map, entry, reservations
from vscheduler.testing.scenario import run

POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: reservation
"""
BOOK = "kube-system/vscheduler-reservations"
N1 = node("n1").resources(cpu="4", memory="8Gi")
N2 = node("n2").resources(cpu="4", memory="8Gi")
N2_FULL = pod("fill", "other").on("n2").requests(cpu="4")
HELD = reservations().reserve("train-0", node="n1", pod="team/train-0", until=600, cpu="3")
KEPT_OFF = (
    "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) reserved for other pods: "
    "cpu 4 free, 3 reserved, 2 requested; for team/train-0 until 2026-01-01T00:10:00Z."
)


def released(key: str, pod: str, node: str, reason: str) -> ReservationRelease:
    return ReservationRelease(config_map=BOOK, key=key, pod=pod, node=node, reason=reason)


def arrive(snap: ClusterSnapshot, *pods: PodBuilder) -> ClusterSnapshot:
    """`snap` with `pods` added (and their implicit jobs)."""
    tasks = {**snap.tasks, **{p.build().uid: p.build() for p in pods}}
    return dataclasses.replace(snap, tasks=tasks, jobs=complete_jobs(tasks, dict(snap.jobs)))


def test_a_reservation_keeps_other_pods_off_its_node_until_its_own_pod_arrives() -> None:
    snap = snapshot(N1, N2, N2_FULL, pod("p", "other").requests(cpu="2"), HELD.build())
    train_0 = pod("train-0", "team").requests(cpu="2").created(10)

    first, second, third = run(
        snap,
        policy=POLICY,
        cycles=3,
        between=lambda i, s: arrive(s, train_0) if i == 1 else s,
    )

    assert first.binds == {}
    assert first.unschedulable == {"other/p": KEPT_OFF}
    assert first.result.reservations_released == ()
    # other/p comes first in job order and is still kept off; then train-0 takes its node
    assert second.binds == {"team/train-0": "n1"}
    assert second.result.reservations_released == (
        released("train-0", "team/train-0", "n1", "placed"),
    )
    assert third.binds == {"other/p": "n1"}
    assert third.result.reservations_released == ()


def test_a_reservation_keeps_other_pods_off_its_node_until_it_expires() -> None:
    short = reservations().reserve("train-0", node="n1", pod="team/train-0", until=2, cpu="3")
    snap = snapshot(N1, N2, N2_FULL, pod("p", "other").requests(cpu="2"), short.build())

    outcomes = run(snap, policy=POLICY, cycles=3)  # at 0 s, 1 s and 2 s

    assert [o.binds for o in outcomes] == [{}, {}, {"other/p": "n1"}]
    assert outcomes[1].unschedulable == {
        "other/p": "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) reserved for other "
        "pods: cpu 4 free, 3 reserved, 2 requested; for team/train-0 until 2026-01-01T00:00:02Z."
    }
    assert [o.result.reservations_released for o in outcomes] == [
        (),
        (),
        (released("train-0", "team/train-0", "n1", "expired"),),
    ]


def test_the_reserved_pod_gets_its_node_though_others_asked_first() -> None:
    fillers = [pod(f"f-{i}", "other").requests(cpu="1").created(i) for i in range(3)]
    train_0 = pod("train-0", "team").requests(cpu="3").created(10)
    snap = snapshot(N1, N2, N2_FULL, *fillers, train_0, HELD.build())

    outcome = run(snap, policy=POLICY)[0]

    assert outcome.binds == {"other/f-0": "n1", "team/train-0": "n1"}
    assert list(outcome.unschedulable) == ["other/f-1", "other/f-2"]
    assert outcome.result.reservations_released == (
        released("train-0", "team/train-0", "n1", "placed"),
    )


def test_a_gang_whose_members_each_hold_a_reservation_lands_whole() -> None:
    book = (
        reservations()
        .reserve("w-0", node="n1", pod="team/w-0", until=600, cpu="2")
        .reserve("w-1", node="n1", pod="team/w-1", until=600, cpu="2")
    )
    members = [pod(f"w-{i}", "team").group("w").requests(cpu="2").created(5) for i in range(2)]
    snap = snapshot(
        N1, N2, N2_FULL, pod("p", "other").requests(cpu="1"),
        podgroup("w", "team").min_member(2).created(5), *members, book.build(),
    )  # fmt: skip

    outcome = run(snap, policy=POLICY)[0]

    assert outcome.binds == {"team/w-0": "n1", "team/w-1": "n1"}
    assert outcome.result.reservations_released == (
        released("w-0", "team/w-0", "n1", "placed"),
        released("w-1", "team/w-1", "n1", "placed"),
    )
    assert list(outcome.unschedulable) == ["other/p"]


def test_a_reservation_whose_pod_already_runs_elsewhere_holds_nothing_and_is_released() -> None:
    running = pod("train-0", "team").on("n2").requests(cpu="2")
    snap = snapshot(N1, N2, running, pod("p", "other").requests(cpu="2"), HELD.build())

    outcome = run(snap, policy=POLICY)[0]

    assert outcome.binds == {"other/p": "n1"}
    assert outcome.result.reservations_released == (
        released("train-0", "team/train-0", "n1", "placed"),
    )


def test_a_best_effort_pod_lands_on_a_wholly_reserved_node_where_others_wait() -> None:
    whole = reservations().reserve("r", node="n1", pod="team/x", until=600, cpu="4")
    snap = snapshot(
        N1, N2, N2_FULL, pod("p", "other").requests(cpu="1"), pod("be", "other"), whole.build()
    )

    outcome = run(snap, policy=POLICY)[0]

    assert outcome.binds == {"other/be": "n1"}
    assert list(outcome.unschedulable) == ["other/p"]


# --- simulate -------------------------------------------------------------------------------------
def test_simulate_reads_the_config_map_and_reports_releases_and_bad_entries(
    tmp_path: Path,
) -> None:
    objects = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
        config_map({
            "train-0": entry("n1", "team/train-0", at(600), cpu="3"),
            "typo": json.dumps({"node": "n1", "pod": "team/x", "resources": {"cpu": "1"}}),
        }),
        *(raw_pod(name, namespace, cpu) for name, namespace, cpu in
          (("p", "other", "2"), ("train-0", "team", "3"))),
    ]  # fmt: skip
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(objects))
    (tmp_path / "policy.yaml").write_text(POLICY)
    warnings: list[str] = []

    output = simulate(
        Request(
            snapshots=[str(tmp_path / "cluster.yaml")],
            policy_file=str(tmp_path / "policy.yaml"),
            cycles=2,
            now=at(0),
            timings=False,
            warn=warnings.append,
        )
    )

    assert warnings == [
        f"ConfigMap {BOOK}: data.typo.expiresAt: is required (the entry is left out)"
    ]
    assert output["binds"] == {"team/train-0": "n1"}
    release = {"configMap": BOOK, "key": "train-0", "pod": "team/train-0", "node": "n1"}
    assert output["reservationsReleased"] == [{**release, "reason": "placed"}]
    cycles = output["cycles"]
    assert isinstance(cycles, list)
    assert [c["reservationsReleased"] for c in cycles] == [[{**release, "reason": "placed"}], []]
    assert (
        "  release    kube-system/vscheduler-reservations train-0 (team/train-0 on n1): placed"
        in (render_table(output))
    )


def raw_pod(name: str, namespace: str, cpu: str) -> dict[str, object]:
    container = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                     "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"schedulerName": "vscheduler", "containers": [container]},
        "status": {"phase": "Pending"},
    }  # fmt: skip


def test_a_reservation_whose_pod_another_scheduler_bound_is_released() -> None:
    bound = pod("train-0", "team").on("n2", TaskStatus.BOUND).requests(cpu="1")
    snap = snapshot(N1, N2, bound, HELD.build())

    outcome = run(snap, policy=POLICY)[0]

    assert outcome.result.reservations_released == (
        released("train-0", "team/train-0", "n1", "placed"),
    )


# --- preemption -----------------------------------------------------------------------------------
PREEMPT_POLICY = """\
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: reservation
"""


def test_preemption_on_a_reserved_node_frees_room_beside_the_reservation() -> None:
    """Without the reservation evicting lp-1 would do; with it, lp-0 must go too."""
    book = reservations().reserve("x", node="n1", pod="team/x", until=600, cpu="1")
    snap = snapshot(
        N1, N2,
        podgroup("low").priority(1).inqueue(), podgroup("high").priority(100).inqueue(),
        podgroup("top").priority(100).inqueue(),
        pod("top").group("top").requests(cpu="3").priority(100).on("n2"),
        *(pod(f"lp-{i}").group("low").requests(cpu="1").priority(1).on(n)
          for i, n in enumerate(("n1", "n1", "n2"))),
        pod("hp").group("high").requests(cpu="3").priority(100),
        book.build(),
    )  # fmt: skip

    first, second = run(snap, policy=PREEMPT_POLICY, cycles=2)

    assert first.evictions == ["default/lp-1", "default/lp-0"]
    assert first.result.pipelined == {"default/hp": "n1"}
    assert second.binds == {"default/hp": "n1"}


def test_preemption_cannot_take_what_a_reservation_holds() -> None:
    book = reservations().reserve("x", node="n1", pod="team/x", until=600, cpu="3")
    snap = snapshot(
        N1, N2,
        podgroup("low").priority(1).inqueue(), podgroup("high").priority(100).inqueue(),
        podgroup("top").priority(100).inqueue(),
        pod("top").group("top").requests(cpu="4").priority(100).on("n2"),
        pod("lp-0").group("low").requests(cpu="1").priority(1).on("n1"),
        pod("hp").group("high").requests(cpu="2").priority(100),
        book.build(),
    )  # fmt: skip

    outcome = run(snap, policy=PREEMPT_POLICY)[0]

    assert outcome.evictions == []
    assert outcome.binds == {}
    assert list(outcome.unschedulable) == ["default/hp"]
