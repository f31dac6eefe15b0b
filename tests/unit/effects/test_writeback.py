from __future__ import annotations

from typing import Any

from vscheduler.effects.ports import ObjectRef
from vscheduler.effects.status import (
    cause,
    condition_json,
    object_ref,
    patch_substance,
    pod_ref,
    pod_scheduled_condition,
    podgroup_events,
    podgroup_status_patch,
)
from vscheduler.model.commands import PodGroupStatus
from vscheduler.model.facts import PodGroupCondition
from vscheduler.model.status import PodGroupPhase

NOW = "2026-01-01T00:01:00Z"
EARLIER = "2026-01-01T00:00:00Z"


def pod_with(*conditions: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": "p1", "namespace": "ns"},
        "status": {"conditions": list(conditions)},
    }


def podgroup_with(status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg1", "namespace": "ns", "uid": "u-pg1"},
        "status": status,
    }


def unschedulable(message: str, tid: str = "cycle-2", time: str = NOW) -> PodGroupCondition:
    return PodGroupCondition(
        type="Unschedulable",
        status="True",
        reason="NotEnoughResources",
        message=message,
        transition_id=tid,
        last_transition_time=time,
    )


# --- pod condition -----------------------------------------------------------------------------
def test_a_pod_without_the_condition_gets_it_with_the_time_of_now() -> None:
    assert pod_scheduled_condition("0/3 nodes are available.", pod_with(), NOW) == {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/3 nodes are available.",
        "lastTransitionTime": NOW,
    }


def test_a_pod_already_carrying_the_condition_needs_no_write() -> None:
    current = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "m",
        "lastTransitionTime": EARLIER,
    }
    assert pod_scheduled_condition("m", pod_with(current), NOW) is None


def test_a_new_message_keeps_the_transition_time_of_the_same_status() -> None:
    current = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "old",
        "lastTransitionTime": EARLIER,
    }
    wanted = pod_scheduled_condition("new", pod_with(current), NOW)
    assert wanted is not None
    assert (wanted["message"], wanted["lastTransitionTime"]) == ("new", EARLIER)


def test_a_status_change_moves_the_transition_time() -> None:
    current = {"type": "PodScheduled", "status": "True", "lastTransitionTime": EARLIER}
    wanted = pod_scheduled_condition("m", pod_with(current), NOW)
    assert wanted is not None
    assert wanted["lastTransitionTime"] == NOW


def test_a_pod_placed_meanwhile_gets_no_condition() -> None:
    raw = {**pod_with(), "spec": {"nodeName": "n1"}}
    assert pod_scheduled_condition("m", raw, NOW) is None


def test_a_malformed_pod_status_reads_as_no_condition() -> None:
    raw = {"metadata": {"name": "p1"}, "status": {"conditions": "broken"}}
    assert pod_scheduled_condition("m", raw, NOW) is not None


# --- PodGroup status ---------------------------------------------------------------------------
def test_a_podgroup_status_patch_holds_only_what_differs() -> None:
    raw = podgroup_with({"phase": "Inqueue", "running": 1})
    status = PodGroupStatus(phase=PodGroupPhase.RUNNING, running=2, failed=0)
    assert podgroup_status_patch(status, raw) == {"phase": "Running", "running": 2}


def test_an_equal_podgroup_status_needs_no_patch() -> None:
    raw = podgroup_with({"phase": "Running", "running": 2, "conditions": []})
    assert podgroup_status_patch(PodGroupStatus(phase=PodGroupPhase.RUNNING, running=2), raw) == {}


def test_a_condition_changed_only_in_transition_id_and_time_is_not_rewritten() -> None:
    old = {
        "type": "Unschedulable",
        "status": "True",
        "reason": "NotEnoughResources",
        "message": "3/4 tasks in gang unschedulable",
        "transitionID": "cycle-1",
        "lastTransitionTime": EARLIER,
    }
    raw = podgroup_with({"phase": "Inqueue", "conditions": [old]})
    status = PodGroupStatus(
        phase=PodGroupPhase.INQUEUE, conditions=(unschedulable("3/4 tasks in gang unschedulable"),)
    )
    assert podgroup_status_patch(status, raw) == {}


def test_a_changed_condition_rewrites_the_list_keeping_unchanged_ones() -> None:
    scheduled = {
        "type": "Scheduled",
        "status": "True",
        "transitionID": "cycle-1",
        "lastTransitionTime": EARLIER,
    }
    raw = podgroup_with({"phase": "Inqueue", "conditions": [scheduled]})
    status = PodGroupStatus(
        phase=PodGroupPhase.INQUEUE,
        conditions=(
            PodGroupCondition(
                type="Scheduled", status="True", transition_id="cycle-2", last_transition_time=NOW
            ),
            unschedulable("1/2 tasks in gang unschedulable"),
        ),
    )
    assert podgroup_status_patch(status, raw) == {
        "conditions": [
            scheduled,
            {
                "type": "Unschedulable",
                "status": "True",
                "transitionID": "cycle-2",
                "lastTransitionTime": NOW,
                "reason": "NotEnoughResources",
                "message": "1/2 tasks in gang unschedulable",
            },
        ]
    }


def test_an_unschedulable_false_is_written_only_over_an_unschedulable_condition() -> None:
    # A ready gang clears the Unschedulable=True its session read; a status written since (the
    # one that made it Running) may have replaced the PodGroup's conditions already.
    scheduled = {
        "type": "Scheduled",
        "status": "True",
        "transitionID": "cycle-5",
        "lastTransitionTime": EARLIER,
        "reason": "tasks in gang are ready to be scheduled",
    }
    cleared = PodGroupCondition(
        type="Unschedulable",
        status="False",
        reason="tasks in gang are ready to be scheduled",
        transition_id="cycle-6",
        last_transition_time=NOW,
    )
    wanted = PodGroupStatus(
        phase=PodGroupPhase.RUNNING,
        conditions=(
            PodGroupCondition(
                type="Scheduled",
                status="True",
                reason="tasks in gang are ready to be scheduled",
                transition_id="cycle-6",
                last_transition_time=NOW,
            ),
            cleared,
        ),
    )
    replaced = podgroup_with({"phase": "Running", "conditions": [scheduled]})
    assert podgroup_status_patch(wanted, replaced) == {}
    still_true = podgroup_with(
        {"phase": "Running", "conditions": [scheduled, condition_json(unschedulable("0/2"))]}
    )
    assert podgroup_status_patch(wanted, still_true) == {
        "conditions": [scheduled, condition_json(cleared)]
    }


def test_two_cycles_wanting_the_same_change_have_the_same_substance() -> None:
    raw = podgroup_with({"phase": "Pending"})
    first = podgroup_status_patch(
        PodGroupStatus(
            phase=PodGroupPhase.INQUEUE, conditions=(unschedulable("m", "c1", EARLIER),)
        ),
        raw,
    )
    second = podgroup_status_patch(
        PodGroupStatus(phase=PodGroupPhase.INQUEUE, conditions=(unschedulable("m", "c2", NOW),)),
        raw,
    )
    assert first != second
    assert patch_substance(first) == patch_substance(second)


def test_a_malformed_status_is_repaired_by_the_patch() -> None:
    raw = podgroup_with({"phase": 3, "conditions": "x", "running": "two"})
    status = PodGroupStatus(phase=PodGroupPhase.PENDING)
    assert podgroup_status_patch(status, raw) == {
        "phase": "Pending",
        "conditions": [],
        "running": 0,
    }


# --- PodGroup events ---------------------------------------------------------------------------
def test_an_unschedulable_condition_that_appears_or_changes_calls_for_a_warning() -> None:
    raw = podgroup_with({"phase": "Inqueue"})
    status = PodGroupStatus(phase=PodGroupPhase.INQUEUE, conditions=(unschedulable("why"),))
    patch = podgroup_status_patch(status, raw)
    assert podgroup_events(status, raw, patch) == [("Warning", "Unschedulable", "why")]


def test_a_podgroup_that_starts_running_gets_a_scheduled_event() -> None:
    raw = podgroup_with({"phase": "Inqueue"})
    status = PodGroupStatus(phase=PodGroupPhase.RUNNING, running=2)
    patch = podgroup_status_patch(status, raw)
    assert podgroup_events(status, raw, patch) == [("Normal", "Scheduled", "pod group is ready")]


def test_a_count_change_alone_calls_for_no_event() -> None:
    raw = podgroup_with({"phase": "Running", "running": 1})
    status = PodGroupStatus(phase=PodGroupPhase.RUNNING, running=2)
    assert podgroup_events(status, raw, podgroup_status_patch(status, raw)) == []


# --- references --------------------------------------------------------------------------------
def test_references_name_the_object_kind_version_and_uid() -> None:
    assert object_ref("PodGroup", podgroup_with({})) == ObjectRef(
        "PodGroup", "scheduling.volcano.sh/v1beta1", "ns", "pg1", "u-pg1"
    )
    assert object_ref("Queue", {"metadata": {"name": "q1", "uid": "u"}}) == ObjectRef(
        "Queue", "scheduling.volcano.sh/v1beta1", "", "q1", "u"
    )
    assert object_ref("Node", {"metadata": {}}) is None
    assert pod_ref("ns/p1", "u1") == ObjectRef("Pod", "v1", "ns", "p1", "u1")


# --- one write per change of cause ---------------------------------------------------------------
GANG = (
    "{0}/10 tasks in gang unschedulable: pod group is not ready, {0} Pending, "
    "10 minAvailable; Pending: {0} Unschedulable"
)


def test_a_message_whose_counts_alone_changed_needs_no_write() -> None:
    current = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": GANG.format(3),
        "lastTransitionTime": EARLIER,
    }
    assert pod_scheduled_condition(GANG.format(7), pod_with(current), NOW) is None
    nodes = dict(current, message="0/3 nodes are available: 3 Insufficient cpu.")
    assert (
        pod_scheduled_condition(
            "0/4 nodes are available: 4 Insufficient cpu.", pod_with(nodes), NOW
        )
        is None
    )


def test_a_message_of_another_cause_is_written() -> None:
    current = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/3 nodes are available: 3 Insufficient cpu.",
        "lastTransitionTime": EARLIER,
    }
    wanted = pod_scheduled_condition(
        "0/3 nodes are available: 3 Insufficient memory.", pod_with(current), NOW
    )
    assert wanted is not None
    assert wanted["message"] == "0/3 nodes are available: 3 Insufficient memory."


def test_counts_and_amounts_are_told_from_names() -> None:
    assert cause("0/3 nodes are available: 2 Insufficient cpu.") == (
        "#/# nodes are available: # Insufficient cpu."
    )
    assert cause("node node-1 has 16Gi left, 2.5 cpu") == "node node-1 has # left, # cpu"
    # a queue refusal's figures move with every allocation: the cause stays
    assert cause(
        "queue q has no room left for this pod (proportion: allocated cpu 6500m, memory 12Gi +"
        " this pod's cpu 2, memory 4Gi exceed its deserved share (cpu 8, memory 16Gi))"
    ) == (
        "queue q has no room left for this pod (proportion: allocated cpu #, memory # +"
        " this pod's cpu #, memory # exceed its deserved share (cpu #, memory #))"
    )


def test_a_gang_condition_follows_its_counts_but_warns_once_per_cause() -> None:
    raw = podgroup_with(
        {"phase": "Inqueue", "conditions": [condition_json(unschedulable(GANG.format(3)))]}
    )
    status = PodGroupStatus(
        phase=PodGroupPhase.INQUEUE, conditions=(unschedulable(GANG.format(7)),)
    )
    patch = podgroup_status_patch(status, raw)
    assert "conditions" in patch
    assert podgroup_events(status, raw, patch) == []


def test_a_gated_pod_keeps_the_api_servers_scheduling_gated_condition() -> None:
    """kube-scheduler never writes PodScheduled on a gated pod: the API server's
    `SchedulingGated` condition stays."""
    gated = pod_with(
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
            "lastTransitionTime": EARLIER,
        }
    )
    gated["spec"] = {"schedulingGates": [{"name": "example.com/quota"}]}

    assert pod_scheduled_condition("0/3 nodes are available.", gated, NOW) is None
    gated["spec"] = {"schedulingGates": []}
    assert pod_scheduled_condition("0/3 nodes are available.", gated, NOW) is not None
