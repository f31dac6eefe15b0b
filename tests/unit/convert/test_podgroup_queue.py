from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from vscheduler.convert.podgroup import convert_podgroup
from vscheduler.convert.queue import convert_queue
from vscheduler.errors import InputError
from vscheduler.model.facts import FieldWarning, PodGroupCondition, PriorityClassFacts
from vscheduler.model.resources import Resources
from vscheduler.model.status import PodGroupPhase

GI = 1024**3
CLASSES = {
    "high": PriorityClassFacts(name="high", value=100),
    "base": PriorityClassFacts(name="base", value=5, global_default=True),
}


def raw_podgroup(
    spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg1", "namespace": "team-a"},
    }
    if spec is not None:
        obj["spec"] = spec
    if status is not None:
        obj["status"] = status
    return obj


def raw_queue(
    spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "q1", "uid": "u-q1"},
    }
    if spec is not None:
        obj["spec"] = spec
    if status is not None:
        obj["status"] = status
    return obj


# --- PodGroup ------------------------------------------------------------------------------------
def test_a_bare_podgroup_gets_volcanos_defaults() -> None:
    job = convert_podgroup(raw_podgroup(), priority_classes={})
    assert (job.key, job.uid, job.queue, job.min_member) == (
        "team-a/pg1",
        "team-a/pg1",
        "default",
        1,
    )
    assert (job.min_resources, job.phase, job.priority, job.synthetic) == (
        None,
        PodGroupPhase.PENDING,
        0,
        False,
    )


def test_a_podgroup_is_read_with_volcanos_field_names() -> None:
    spec = {
        "minMember": 4,
        "minTaskMember": {"ps": 1, "worker": 3},
        "minResources": {"cpu": "4", "memory": "8Gi"},
        "queue": "q1",
        "priorityClassName": "high",
    }
    status = {
        "phase": "Inqueue",
        "conditions": [
            {
                "type": "Unschedulable",
                "status": "True",
                "reason": "NotEnoughResources",
                "message": "3/4 tasks",
                "transitionID": "t1",
                "lastTransitionTime": "2024-01-01T00:00:00Z",
            }
        ],
    }
    job = convert_podgroup(raw_podgroup(spec, status), priority_classes=CLASSES)
    assert (job.min_member, job.min_task_member, job.queue) == (4, {"ps": 1, "worker": 3}, "q1")
    assert job.min_resources == Resources(cpu=4000, memory=8 * GI)
    assert (job.priority_class_name, job.priority, job.phase) == (
        "high",
        100,
        PodGroupPhase.INQUEUE,
    )
    assert job.conditions == (
        PodGroupCondition(
            type="Unschedulable",
            status="True",
            reason="NotEnoughResources",
            message="3/4 tasks",
            transition_id="t1",
            last_transition_time="2024-01-01T00:00:00Z",
        ),
    )


def test_a_podgroup_without_a_class_takes_the_global_default_priority() -> None:
    assert convert_podgroup(raw_podgroup(), priority_classes=CLASSES).priority == 5


def test_a_min_member_of_zero_is_allowed() -> None:
    assert convert_podgroup(raw_podgroup({"minMember": 0}), priority_classes={}).min_member == 0


def test_the_empty_task_name_is_the_minimum_of_pods_without_a_task_role() -> None:
    """Volcano's preempt_test.go writes `minTaskMember: {"": 1}` (job_info.go getTaskRole)."""
    job = convert_podgroup(raw_podgroup({"minTaskMember": {"": 2, "ps": 1}}), priority_classes={})
    assert job.min_task_member == {"": 2, "ps": 1}
    assert job.warnings == ()


def test_a_negative_task_minimum_is_kept_as_volcano_keeps_it_with_a_warning() -> None:
    job = convert_podgroup(raw_podgroup({"minTaskMember": {"w": -2}}), priority_classes={})
    assert job.min_task_member == {"w": -2}
    assert job.warnings == (
        FieldWarning(
            "UnusualValue",
            "PodGroup team-a/pg1: spec.minTaskMember.w: -2 is negative: no pod of the task is"
            " required, and the tasks' sum that minMember is compared with is lowered (as"
            " Volcano reads it)",
        ),
    )


def test_a_negative_min_member_is_read_as_0_with_a_warning() -> None:
    """Volcano's PodGroup CRD set no minimum on minMember before 1.14."""
    job = convert_podgroup(raw_podgroup({"minMember": -1}), priority_classes={})
    assert job.min_member == 0
    assert job.warnings == (
        FieldWarning(
            "UnusualValue",
            "PodGroup team-a/pg1: spec.minMember: -1 is negative; it is read as 0 (no gang)",
        ),
    )


def test_a_negative_min_resource_is_read_as_0_with_a_warning() -> None:
    """The CRD's quantity pattern lets a sign through."""
    spec = {"minResources": {"cpu": "-1", "memory": "1Gi"}}
    job = convert_podgroup(raw_podgroup(spec), priority_classes={})
    assert job.min_resources == Resources(cpu=0, memory=GI)
    assert job.warnings == (
        FieldWarning(
            "UnusualValue",
            "PodGroup team-a/pg1: spec.minResources.cpu: '-1' is negative; it is read as 0",
        ),
    )


def test_a_condition_without_a_type_is_kept_as_the_crd_allows_it() -> None:
    status = {"conditions": [{"status": "True", "reason": "r"}]}
    job = convert_podgroup(raw_podgroup(None, status), priority_classes={})
    assert [(c.type, c.status, c.reason) for c in job.conditions] == [("", "True", "r")]


_JOB_OWNER = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j", "uid": "u"}


@pytest.mark.parametrize(
    ("refs", "controlled"),
    [
        ([{**_JOB_OWNER, "controller": True}], True),
        ([{**_JOB_OWNER, "controller": False}, {**_JOB_OWNER, "controller": True}], True),
        ([{**_JOB_OWNER, "controller": False}], False),
        ([_JOB_OWNER], False),
        ([], False),
        (None, False),
    ],
)
def test_a_podgroup_is_controlled_when_an_owner_reference_says_controller_true(
    refs: object, controlled: bool
) -> None:
    obj = raw_podgroup()
    if refs is not None:
        obj["metadata"]["ownerReferences"] = refs
    assert convert_podgroup(obj, priority_classes={}).controlled is controlled


@pytest.mark.parametrize(
    ("refs", "field"),
    [
        ("not a list", "metadata.ownerReferences"),
        (["not a mapping"], "metadata.ownerReferences[0]"),
        ([{**_JOB_OWNER, "controller": "true"}], "metadata.ownerReferences[0].controller"),
    ],
)
def test_a_malformed_owner_reference_is_an_error_naming_it_as_for_a_pod(
    refs: object, field: str
) -> None:
    obj = raw_podgroup()
    obj["metadata"]["ownerReferences"] = refs
    with pytest.raises(InputError, match=re.escape(f"PodGroup team-a/pg1: {field}:")):
        convert_podgroup(obj, priority_classes={})


PG = "PodGroup team-a/pg1: "


@pytest.mark.parametrize(
    ("spec", "status", "message"),
    [
        (
            {"minMember": "four"},
            None,
            "spec.minMember: must be an integer from 0 to 2147483647, got 'four'",
        ),
        (
            {"minMember": 2**31},
            None,
            "spec.minMember: must be an integer from 0 to 2147483647, got 2147483648",
        ),
        (
            {"minTaskMember": {"w": 1.5}},
            None,
            "spec.minTaskMember.w: must be an integer from -2147483648 to 2147483647, got 1.5",
        ),
        ({"minTaskMember": ["w"]}, None, "spec.minTaskMember: must be a mapping, got a list"),
        (
            {"minResources": {"cpu": "2x"}},
            None,
            "spec.minResources.cpu: invalid quantity '2x': unknown suffix 'x'",
        ),
        ({"queue": 3}, None, "spec.queue: must be a string, got 3"),
        (
            None,
            {"phase": "Done"},
            "status.phase: must be one of Pending, Inqueue, Running, Unknown, Completed,"
            " got 'Done'",
        ),
        (
            {"minTaskMember": {"": "two"}},
            None,
            'spec.minTaskMember[""]: must be an integer from -2147483648 to 2147483647,'
            " got 'two'",
        ),
        (
            None,
            {"conditions": [{"type": 3}]},
            "status.conditions[0].type: must be a string, got 3",
        ),
        (
            None,
            {"conditions": [{"type": "Scheduled", "lastTransitionTime": "now"}]},
            "status.conditions[0].lastTransitionTime: must be an RFC3339 time like"
            " 2006-01-02T15:04:05Z, got 'now'",
        ),
    ],
)
def test_a_malformed_podgroup_field_is_an_error_naming_it(
    spec: dict[str, Any] | None, status: dict[str, Any] | None, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        convert_podgroup(raw_podgroup(spec, status), priority_classes={})
    assert str(caught.value) == PG + message


# --- Queue ---------------------------------------------------------------------------------------
def test_a_bare_queue_gets_volcanos_defaults() -> None:
    queue = convert_queue(raw_queue())
    assert (queue.name, queue.uid, queue.weight, queue.reclaimable, queue.state) == (
        "q1",
        "u-q1",
        1,
        True,
        "Open",
    )
    assert (queue.capability, queue.guarantee, queue.deserved, queue.parent, queue.priority) == (
        None,
        Resources(),
        None,
        "",
        0,
    )


def test_a_queue_is_read_with_volcanos_field_names() -> None:
    spec = {
        "weight": 3,
        "capability": {"cpu": "10", "memory": "20Gi"},
        "guarantee": {"resource": {"cpu": "2"}},
        "deserved": {"cpu": "5"},
        "reclaimable": False,
        "parent": "root",
        "priority": 7,
    }
    queue = convert_queue(
        {
            **raw_queue(spec, {"state": "Closed"}),
            "metadata": {"name": "q1", "creationTimestamp": "2024-05-05T00:00:00Z"},
        }
    )
    assert queue.capability == Resources(cpu=10_000, memory=20 * GI)
    assert (queue.guarantee, queue.deserved) == (Resources(cpu=2000), Resources(cpu=5000))
    assert (queue.weight, queue.reclaimable, queue.parent, queue.priority) == (3, False, "root", 7)
    assert (queue.state, queue.is_open, queue.uid) == ("Closed", False, "q1")
    assert queue.created == dt.datetime(2024, 5, 5, tzinfo=dt.UTC)


def test_a_weight_of_0_is_read_as_1_with_a_warning_as_volcanos_admission_sets_it() -> None:
    queue = convert_queue(raw_queue({"weight": 0}))
    assert queue.weight == 1
    assert queue.warnings == (
        FieldWarning(
            "UnusualValue",
            "Queue q1: spec.weight: 0 is read as 1, as Volcano's admission sets it (a queue's"
            " share of the cluster is in proportion to its weight)",
        ),
    )
    assert convert_queue(raw_queue({"weight": 2})).warnings == ()


def test_negative_queue_amounts_are_read_as_0_with_a_warning_each() -> None:
    spec = {
        "capability": {"cpu": "-2"},
        "guarantee": {"resource": {"memory": "-1Gi"}},
        "deserved": {"cpu": "-500m"},
    }
    queue = convert_queue(raw_queue(spec))
    assert (queue.capability, queue.guarantee, queue.deserved) == (
        Resources(cpu=0),
        Resources(memory=0),
        Resources(cpu=0),
    )
    assert [(w.reason, w.message) for w in queue.warnings] == [
        ("UnusualValue", "Queue q1: spec.capability.cpu: '-2' is negative; it is read as 0"),
        (
            "UnusualValue",
            "Queue q1: spec.guarantee.resource.memory: '-1Gi' is negative; it is read as 0",
        ),
        ("UnusualValue", "Queue q1: spec.deserved.cpu: '-500m' is negative; it is read as 0"),
    ]


def test_an_empty_capability_means_no_limit() -> None:
    assert convert_queue(raw_queue({"capability": {}})).capability is None


Q = "Queue q1: "


@pytest.mark.parametrize(
    ("spec", "status", "message"),
    [
        ({"weight": -1}, None, "spec.weight: must be an integer from 0 to 2147483647, got -1"),
        (
            {"weight": "heavy"},
            None,
            "spec.weight: must be an integer from 0 to 2147483647, got 'heavy'",
        ),
        ({"reclaimable": "no"}, None, "spec.reclaimable: must be true or false, got 'no'"),
        (
            {"capability": {"cpu": "1q"}},
            None,
            "spec.capability.cpu: invalid quantity '1q': unknown suffix 'q'",
        ),
        (
            {"guarantee": {"resource": {"memory": "1Gx"}}},
            None,
            "spec.guarantee.resource.memory: invalid quantity '1Gx': unknown suffix 'Gx'",
        ),
        ({"guarantee": []}, None, "spec.guarantee: must be a mapping, got a list"),
        ({"parent": 1}, None, "spec.parent: must be a string, got 1"),
        (
            None,
            {"state": "Ajar"},
            "status.state: must be one of Open, Closed, Closing, Unknown, got 'Ajar'",
        ),
    ],
)
def test_a_malformed_queue_field_is_an_error_naming_it(
    spec: dict[str, Any] | None, status: dict[str, Any] | None, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        convert_queue(raw_queue(spec, status))
    assert str(caught.value) == Q + message
