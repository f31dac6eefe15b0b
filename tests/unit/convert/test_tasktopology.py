"""A PodGroup's task-topology annotations become `JobFacts.task_topology` as Volcano splits
them; a repeated role and a name no label can hold are warnings on the PodGroup, naming the
annotation (the first ignores the topology, as Volcano does; the second is read as written)."""

from __future__ import annotations

from typing import Any

from vscheduler.convert.podgroup import convert_podgroup
from vscheduler.convert.tasktopology import (
    AFFINITY_KEY,
    ANTI_AFFINITY_KEY,
    TASK_ORDER_KEY,
    task_topology,
)
from vscheduler.model.facts import UNUSUAL_VALUE, FieldWarning, TaskTopology

LABEL = "PodGroup default/tf"


def podgroup(annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "tf", "namespace": "default", "annotations": annotations},
        "spec": {"minMember": 1},
    }


def test_a_podgroup_without_the_annotations_has_no_topology() -> None:
    job = convert_podgroup(podgroup({"example.com/x": "y"}), priority_classes={})

    assert job.task_topology is None
    assert job.warnings == ()


def test_the_three_annotations_are_split_by_semicolon_then_comma() -> None:
    job = convert_podgroup(
        podgroup(
            {
                AFFINITY_KEY: "ps,worker;ps,chief",
                ANTI_AFFINITY_KEY: "ps;worker,chief",
                TASK_ORDER_KEY: "ps,worker,chief,evaluator",
            }
        ),
        priority_classes={},
    )

    assert job.task_topology == TaskTopology(
        affinity=(("ps", "worker"), ("ps", "chief")),
        anti_affinity=(("ps",), ("worker", "chief")),
        order=("ps", "worker", "chief", "evaluator"),
    )
    assert job.task_topology.roles() == {"ps", "worker", "chief", "evaluator"}
    assert job.warnings == ()


def test_one_annotation_alone_is_a_topology_and_an_empty_value_names_the_empty_role() -> None:
    topology, warnings = task_topology({ANTI_AFFINITY_KEY: ""}, LABEL)

    assert topology == TaskTopology(anti_affinity=(("",),))
    assert topology.roles() == frozenset()
    assert warnings == ()


def test_a_role_repeated_within_one_group_ignores_the_topology_with_a_warning() -> None:
    job = convert_podgroup(
        podgroup({AFFINITY_KEY: "ps,worker", ANTI_AFFINITY_KEY: "ps,ps"}), priority_classes={}
    )

    assert job.task_topology is None
    assert job.warnings == (
        FieldWarning(
            UNUSUAL_VALUE,
            "PodGroup default/tf: metadata.annotations[volcano.sh/task-topology-anti-affinity]:"
            " 'ps,ps' names 'ps' twice in one group; the job's task topology is ignored, as"
            " Volcano ignores it",
        ),
    )


def test_a_role_in_two_groups_and_a_repeated_empty_name_are_not_repeats() -> None:
    topology, warnings = task_topology({AFFINITY_KEY: "ps,worker;ps,,chief,;"}, LABEL)

    assert topology == TaskTopology(affinity=(("ps", "worker"), ("ps", "", "chief", ""), ("",)))
    assert warnings == ()


def test_a_name_no_label_can_hold_is_read_as_written_with_a_warning() -> None:
    topology, warnings = task_topology({AFFINITY_KEY: "ps worker", TASK_ORDER_KEY: "ps|x"}, LABEL)

    assert topology == TaskTopology(affinity=(("ps worker",),), order=("ps|x",))
    assert warnings == (
        FieldWarning(
            UNUSUAL_VALUE,
            "PodGroup default/tf: metadata.annotations[volcano.sh/task-topology-affinity]:"
            " 'ps worker' names 'ps worker', which no label can hold (roles are separated by ','"
            " and groups by ';'); read as written, as Volcano reads it: unless a pod of the job"
            " has that role, the job's task topology is ignored",
        ),
        FieldWarning(
            UNUSUAL_VALUE,
            "PodGroup default/tf: metadata.annotations[volcano.sh/task-topology-task-order]:"
            " 'ps|x' names 'ps|x', which no label can hold (roles are separated by ',' and"
            " groups by ';'); read as written, as Volcano reads it: unless a pod of the job has"
            " that role, the job's task topology is ignored",
        ),
    )


def test_a_long_value_is_cut_and_many_odd_names_are_listed_three_at_most() -> None:
    value = ";".join(f"role {i}" for i in range(20))

    _, warnings = task_topology({AFFINITY_KEY: value}, LABEL)

    assert warnings == (
        FieldWarning(
            UNUSUAL_VALUE,
            f"PodGroup default/tf: metadata.annotations[volcano.sh/task-topology-affinity]:"
            f" '{value[:77]}...' names 'role 0', 'role 1', 'role 10', ..., which no label can"
            " hold (roles are separated by ',' and groups by ';'); read as written, as Volcano"
            " reads it: unless a pod of the job has that role, the job's task topology is"
            " ignored",
        ),
    )
