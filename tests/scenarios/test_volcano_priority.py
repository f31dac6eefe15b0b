"""priority as Volcano decides, from Volcano's `pkg/scheduler/plugins/priority/priority_test.go`.

`TestPreempt` (both cases) is transcribed in `test_volcano_preempt.py` (the section "priority_test.go
TestPreempt"). Here: `TestUnifiedEvictableFn_GangReclaimPermitsAll`, its one case "GangReclaim
permits all candidates regardless of priority", which opens a session with priority alone
(task order, job order, preemptable, reclaimable and jobStarving on) and asks the session which
of two running tasks a job of priority 500 may evict: high-task (job priority 1000) and low-task
(job priority 100). Volcano expects both for a reclaim, only low-task for a preemption.

How it maps: Volcano asks `ssn.UnifiedEvictable` with the eviction kinds of its gang-level
actions (`gangreclaim`, `gangpreempt`, new in v1.15), which vscheduler does not provide; the
priority plugin answers them as its task-level points do (no reclaimable function; preemptable
by job priority). So here the question is put to those points, with the evicting job a pending
pod's PodGroup of priority 500 in the session (Volcano's is a bare `JobInfo` outside it): the
preemptable point keeps low-task only, and priority serves no reclaimable point at all, so it
vetoes no reclaim, whatever the priorities.
"""

from __future__ import annotations

from vscheduler.model.status import PodGroupPhase
from vscheduler.plugins import priority
from vscheduler.testing.builders import node, pod, podgroup, queue, snapshot
from vscheduler.testing.sessions import open_session
from vscheduler.testing.volcano import go_tiers

POLICY = go_tiers(
    "allocate",
    priority=(
        "enableTaskOrder",
        "enableJobOrder",
        "enablePreemptable",
        "enableReclaimable",
        "enableJobStarving",
    ),
)
RUNNING = PodGroupPhase.RUNNING


def test_a_reclaim_is_not_gated_by_priority_and_a_preemption_takes_only_the_lower_job() -> None:
    """TestUnifiedEvictableFn_GangReclaimPermitsAll "GangReclaim permits all candidates
    regardless of priority": GangReclaim permits both candidates, GangPreempt only low-task."""
    session = open_session(
        snapshot(
            node("node1").resources(cpu="4", memory="4G", pods=10),
            queue("q1").capability(cpu="4", memory="4G"),
            podgroup("pg-high", "ns1").queue("q1").phase(RUNNING).priority(1000),
            podgroup("pg-low", "ns2").queue("q1").phase(RUNNING).priority(100),
            podgroup("reclaimer", "ns3").queue("q1").inqueue().priority(500),
            pod("high-task", "ns1")
            .group("pg-high")
            .requests(cpu="1", memory="1G")
            .on("node1")
            .preemptable(),
            pod("low-task", "ns2")
            .group("pg-low")
            .requests(cpu="1", memory="1G")
            .on("node1")
            .preemptable(),
            pod("reclaimer-task", "ns3").group("reclaimer").requests(cpu="1", memory="1G"),
        ),
        POLICY,
    )
    tasks = {t.facts.name: t for t in session.tasks.values()}
    candidates = [tasks["high-task"], tasks["low-task"]]

    preempted = session.dispatch.select_preemptees(tasks["reclaimer-task"], candidates)

    assert [t.facts.name for t in preempted] == ["low-task"]
    assert priority.NAME in session.plugins
    assert not session.dispatch.has("reclaimable")
