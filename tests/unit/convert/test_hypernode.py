"""convert.hypernode and a PodGroup's `spec.networkTopology`: what is read, what is a problem
(the HyperNode left out, named with its field) and what a warning (read as Volcano reads it)."""

from __future__ import annotations

from typing import Any

import pytest

from vscheduler.convert.hypernode import convert_hypernode, guarded_hypernode
from vscheduler.convert.podgroup import convert_podgroup
from vscheduler.errors import InputError
from vscheduler.model.facts import NetworkTopology
from vscheduler.model.topology import MEMBER_HYPERNODE, MEMBER_NODE


def raw(spec: Any, name: str = "s0") -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": spec,
    }


def test_every_field_is_read() -> None:
    facts = convert_hypernode(
        raw(
            {
                "tier": 2,
                "tierName": "spine",
                "members": [
                    {"type": "HyperNode", "selector": {"exactMatch": {"name": "s1"}}},
                    {"type": "Node", "selector": {"regexMatch": {"pattern": "^node-[0-9]+$"}}},
                    {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "a"}}}},
                ],
            }
        )
    )
    assert (facts.name, facts.tier, facts.tier_name, facts.problem) == ("s0", 2, "spine", "")
    hyper, regex, labels = facts.members
    assert (hyper.type, hyper.exact) == (MEMBER_HYPERNODE, "s1")
    assert regex.type == MEMBER_NODE
    assert regex.pattern is not None
    assert regex.pattern.search("node-12")
    assert labels.labels is not None
    assert labels.labels.matches({"rack": "a"})
    assert facts.warnings == ()
    assert facts.reads_nodes


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"tier": "two"}, "HyperNode s0: spec.tier: must be an integer"),
        ({"members": "n0"}, "HyperNode s0: spec.members: must be a list, got 'n0'"),
        ({"members": [7]}, "HyperNode s0: spec.members[0]: must be a mapping, got 7"),
        (
            {"members": [{"type": "Node", "selector": {"regexMatch": {"pattern": "("}}}]},
            "HyperNode s0: spec.members[0].selector.regexMatch.pattern: '(' is not a regular"
            " expression",
        ),
        (
            {"members": [{"type": "Node", "selector": {"labelMatch": {"matchExpressions": [{}]}}}]},
            "HyperNode s0: spec.members[0].selector.labelMatch.matchExpressions[0].key: is"
            " required",
        ),
        ({"tierName": "x" * 254}, "HyperNode s0: spec.tierName: must be at most 253 characters"),
    ],
)
def test_a_field_that_cannot_be_read_is_the_hypernodes_problem(spec: Any, problem: str) -> None:
    facts = convert_hypernode(raw(spec))
    assert facts.problem.startswith(problem)
    assert facts.members == ()


@pytest.mark.parametrize(
    ("spec", "warning"),
    [
        ({"tier": -1, "members": []}, "spec.tier: -1 is below 0"),
        ({"members": []}, "spec.members: no member"),
        (
            {"members": [{"type": "Rack", "selector": {"exactMatch": {"name": "n0"}}}]},
            "spec.members[0].type: 'Rack' is not Node or HyperNode; the member is ignored",
        ),
        ({"members": [{"type": "Node", "selector": {}}]}, "spec.members[0].selector: names no"),
        (
            {
                "members": [
                    {
                        "type": "Node",
                        "selector": {
                            "exactMatch": {"name": "n0"},
                            "regexMatch": {"pattern": "n1"},
                        },
                    }
                ]
            },
            "spec.members[0].selector: gives exactMatch and regexMatch",
        ),
        (
            {"members": [{"type": "Node", "selector": {"regexMatch": {"pattern": ""}}}]},
            "spec.members[0].selector.regexMatch.pattern: is empty: it matches every node",
        ),
        (
            {"members": [{"type": "Node", "selector": {"labelMatch": {}}}]},
            "spec.members[0].selector.labelMatch: has no matchLabels and no matchExpressions",
        ),
    ],
)
def test_what_volcanos_crd_refuses_but_its_scheduler_reads_is_read_with_a_warning(
    spec: Any, warning: str
) -> None:
    facts = convert_hypernode(raw(spec))
    assert facts.problem == ""
    assert any(w.message.startswith(f"HyperNode s0: {warning}") for w in facts.warnings), [
        w.message for w in facts.warnings
    ]


def test_gos_end_of_text_reads_as_pythons() -> None:
    (member,) = convert_hypernode(
        raw({"members": [{"type": "Node", "selector": {"regexMatch": {"pattern": "n1\\z"}}}]})
    ).members
    assert member.pattern is not None
    assert member.pattern.search("n1")
    assert not member.pattern.search("n1\n")


def test_metadata_that_names_no_object_is_refused_and_guarded_not() -> None:
    with pytest.raises(InputError, match=r"metadata\.name"):
        convert_hypernode({"kind": "HyperNode", "metadata": {}})
    assert "metadata.name" in guarded_hypernode({"kind": "HyperNode", "metadata": {}}).problem


def podgroup(topology: Any, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": "default"},
        "spec": {"minMember": 1, "networkTopology": topology, **spec},
    }


@pytest.mark.parametrize(
    ("topology", "read", "warnings"),
    [
        ({"mode": "hard", "highestTierAllowed": 1}, NetworkTopology("hard", 1), []),
        ({"mode": "soft"}, NetworkTopology("soft"), []),
        ({"highestTierName": "rack"}, NetworkTopology("hard", None, "rack"), []),
        (
            {"mode": "strict", "highestTierAllowed": 1},
            NetworkTopology("strict", 1),
            ["spec.networkTopology.mode: 'strict' is neither hard nor soft"],
        ),
        (
            {"highestTierAllowed": 2, "highestTierName": "rack"},
            NetworkTopology("hard", 2, "rack"),
            ["spec.networkTopology: highestTierAllowed and highestTierName are both set"],
        ),
        (
            {"highestTierAllowed": -1},
            NetworkTopology("hard", -1),
            ["spec.networkTopology.highestTierAllowed: -1 is below 0"],
        ),
        ({}, NetworkTopology("hard"), ["spec.networkTopology: mode hard names no"]),
    ],
)
def test_a_podgroups_network_topology(
    topology: Any, read: NetworkTopology, warnings: list[str]
) -> None:
    job = convert_podgroup(podgroup(topology), priority_classes={})
    assert job.network_topology == read
    messages = [w.message for w in job.warnings]
    assert len(messages) == len(warnings)
    for message, start in zip(messages, warnings, strict=True):
        assert message.startswith(f"PodGroup default/pg: {start}")


def test_a_network_topology_of_the_wrong_type_is_the_podgroups_problem() -> None:
    with pytest.raises(InputError, match=r"spec.networkTopology.highestTierAllowed: must be"):
        convert_podgroup(podgroup({"highestTierAllowed": "1"}), priority_classes={})
    with pytest.raises(InputError, match=r"spec.networkTopology: must be a mapping"):
        convert_podgroup(podgroup("hard"), priority_classes={})


def test_sub_groups_are_warned_about() -> None:
    job = convert_podgroup(
        podgroup(None, subGroupPolicy=[{"name": "p", "subGroupSize": 4}]), priority_classes={}
    )
    assert job.network_topology is None
    (warning,) = job.warnings
    assert warning.message.startswith(
        "PodGroup default/pg: spec.subGroupPolicy: sub-groups are not provided by vscheduler"
    )
