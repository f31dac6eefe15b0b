"""Volcano's e2e terminating-PodGroup test, transcribed from
`test/e2e/schedulingaction/terminating_podgroup.go` ("PodGroup terminating E2E Test"), the
table "PodGroup should stay Running while scheduled members are terminating" with both its
entries ("single-Pod PodGroup": 1, "partially terminating multi-Pod PodGroup": 2).

The e2e creates a PodGroup by hand (minMember = the member count, queue default, no
minResources, no controller) and that many pods of 50m and 64Mi annotated with it, which
ignore SIGTERM; once they and the PodGroup run, it deletes the first pod (300s of grace) and
checks for 15 seconds that the PodGroup stays Running with no new `Unschedulable`
condition of reason `NotEnoughResources` (Volcano d725ce4db, whose unit half is in
`test_volcano_gang.py`). Here: one node (2 cpu, 4Gi; the test asks for no limit), a cycle
that places the pods, then the first pod Releasing on its node (deleted, still running) for
three more cycles, each checked as the e2e checks.

The policy is the e2e chart's `volcano-scheduler-ci.conf` (its `network-topology-aware` a no-op
without HyperNodes).
"""

from __future__ import annotations

import dataclasses

import pytest

from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.testing.builders import node, pod, podgroup, snapshot
from vscheduler.testing.kind_e2e import CI_POLICY as POLICY
from vscheduler.testing.scenario import run

PG = "default/pg-sticky-releasing"
FIRST = "default/sticky-releasing-0"


def first_pod_deleted(i: int, snap: ClusterSnapshot) -> ClusterSnapshot:
    """From the second cycle on, the first pod is terminating on its node."""
    task = snap.tasks[FIRST]
    tasks = {**snap.tasks, FIRST: dataclasses.replace(task, status=TaskStatus.RELEASING)}
    return dataclasses.replace(snap, tasks=tasks)


@pytest.mark.parametrize("members", [1, 2], ids=["single-Pod", "partially terminating multi-Pod"])
def test_a_podgroup_stays_running_while_a_placed_member_terminates(members: int) -> None:
    """ "PodGroup should stay Running while scheduled members are terminating": the pods run and
    the PodGroup is Running; with the first pod terminating, the PodGroup stays Running and
    gets no `Unschedulable` condition of reason `NotEnoughResources`."""
    pods = [
        pod(f"sticky-releasing-{i}").group("pg-sticky-releasing").requests(cpu="50m", memory="64Mi")
        for i in range(members)
    ]
    placed, *terminating = run(
        snapshot(
            node("node-1").resources(cpu="2", memory="4Gi"),
            podgroup("pg-sticky-releasing").min_member(members),
            *pods,
        ),
        policy=POLICY,
        cycles=4,
        between=first_pod_deleted,
    )

    assert len(placed.binds) == members
    assert placed.result.podgroups[PG].phase is PodGroupPhase.RUNNING
    for outcome in terminating:
        status = outcome.result.podgroups[PG]
        assert status.phase is PodGroupPhase.RUNNING
        assert outcome.binds == {}
        assert [
            c
            for c in status.conditions
            if (c.type, c.status, c.reason) == ("Unschedulable", "True", "NotEnoughResources")
        ] == []
