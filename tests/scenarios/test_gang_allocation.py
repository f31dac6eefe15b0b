from __future__ import annotations

import dataclasses

from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import PodGroupCondition
from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.builders import node, pod, podgroup, snapshot
from vscheduler.testing.scenario import run

POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
"""

SHORTFALL = (
    "1/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; "
    "Pending: 3 Schedulable, 1 Unschedulable"
)


def gang_of_four_on_three_cpus() -> ClusterSnapshot:
    return snapshot(
        node("n1").resources(cpu="3", memory="8Gi"),
        podgroup("train").min_member(4),
        *(pod(f"train-{i}").group("train").requests(cpu="1").created(i) for i in range(4)),
    )


def add_node_n2(cycle: int, snap: ClusterSnapshot) -> ClusterSnapshot:
    extra = node("n2").resources(cpu="2", memory="8Gi").build()
    return dataclasses.replace(snap, nodes=(*snap.nodes, extra))


def test_a_gang_that_does_not_fit_whole_binds_nothing_and_says_by_how_much() -> None:
    [outcome] = run(gang_of_four_on_three_cpus(), policy=POLICY)

    assert outcome.binds == {}
    assert outcome.result.pipelined == {}
    status = outcome.result.podgroups["default/train"]
    assert status.phase is PodGroupPhase.INQUEUE
    assert status.conditions == (
        PodGroupCondition(
            type="Unschedulable",
            status="True",
            reason="NotEnoughResources",
            message=SHORTFALL,
            transition_id="cycle-1",
            last_transition_time="2026-01-01T00:00:00Z",
        ),
    )
    assert outcome.unschedulable == {
        "default/train-0": SHORTFALL,
        "default/train-1": SHORTFALL,
        "default/train-2": SHORTFALL,
        "default/train-3": f"0/1 nodes are available: 1 Insufficient cpu. {SHORTFALL}",
    }


def test_the_gang_binds_whole_once_a_node_is_added() -> None:
    first, second = run(gang_of_four_on_three_cpus(), policy=POLICY, cycles=2, between=add_node_n2)

    assert first.binds == {}
    assert second.binds == {
        "default/train-0": "n1",
        "default/train-1": "n1",
        "default/train-2": "n1",
        "default/train-3": "n2",
    }
    assert second.unschedulable == {}
    status = second.result.podgroups["default/train"]
    assert status.phase is PodGroupPhase.RUNNING
    by_type = {c.type: c for c in status.conditions}
    assert by_type["Scheduled"] == PodGroupCondition(
        type="Scheduled",
        status="True",
        reason="tasks in gang are ready to be scheduled",
        transition_id="cycle-2",
        last_transition_time="2026-01-01T00:00:01Z",
    )
    # Volcano would leave the earlier Unschedulable=True standing; we turn it False
    assert by_type["Unschedulable"].status == "False"
    assert by_type["Unschedulable"].transition_id == "cycle-2"


def test_the_gang_of_higher_priority_takes_the_room_first() -> None:
    snap = snapshot(
        node("n1").resources(cpu="2", memory="8Gi"),
        podgroup("early-low").min_member(2).priority(1).created(0),
        podgroup("late-high").min_member(2).priority(100).created(10),
        *(pod(f"low-{i}").group("early-low").requests(cpu="1").created(0) for i in range(2)),
        *(pod(f"high-{i}").group("late-high").requests(cpu="1").created(10) for i in range(2)),
    )

    [outcome] = run(snap, policy=POLICY)

    assert outcome.binds == {"default/high-0": "n1", "default/high-1": "n1"}
    assert set(outcome.unschedulable) == {"default/low-0", "default/low-1"}
    low = outcome.result.podgroups["default/early-low"].conditions
    assert [(c.type, c.reason) for c in low] == [("Unschedulable", "NotEnoughResources")]
    assert low[0].message.startswith("2/2 tasks in gang unschedulable: pod group is not ready")
