"""Converting a pod's inter-pod affinity and topology spread constraints: kube's resolution of
namespaces and matchLabelKeys, its defaults, the API server's validation, and the template key."""

from __future__ import annotations

from typing import Any

import pytest

from vscheduler.convert.pod import convert_pod
from vscheduler.errors import InputError
from vscheduler.model.facts import TaskFacts
from vscheduler.model.podaffinity import (
    NO_POD_AFFINITY,
    PodAffinity,
    PodAffinityTerm,
    SpreadConstraint,
    WeightedPodAffinityTerm,
)
from vscheduler.model.selector import EVERYTHING, LabelRequirement, LabelSelector

Raw = dict[str, Any]
HOST = "kubernetes.io/hostname"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def raw_pod(labels: dict[str, str] | None = None, **spec: Any) -> Raw:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p1", "namespace": "team", "uid": "u1", "labels": labels or {}},
        "spec": {"schedulerName": "vscheduler", "containers": [{"name": "c"}], **spec},
        "status": {"phase": "Pending"},
    }


def convert(obj: Raw) -> TaskFacts:
    task = convert_pod(obj, priority_classes={}, scheduler_name="vscheduler")
    assert task is not None
    return task


def term(key: str = HOST, **extra: Any) -> Raw:
    return {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": key, **extra}


def with_affinity(**kinds: Raw) -> Raw:
    return raw_pod(affinity=kinds)


WEB = LabelSelector(match_labels={"app": "web"})


# --- pod affinity ---------------------------------------------------------------------------------
def test_a_pod_without_pod_affinity_has_none() -> None:
    assert convert(raw_pod()).pod_affinity is NO_POD_AFFINITY
    assert convert(raw_pod(affinity={"nodeAffinity": {}})).pod_affinity is NO_POD_AFFINITY


def test_required_and_preferred_terms_of_both_kinds_are_read() -> None:
    task = convert(
        with_affinity(
            podAffinity={
                REQUIRED: [term("zone")],
                PREFERRED: [{"weight": 5, "podAffinityTerm": term()}],
            },
            podAntiAffinity={
                REQUIRED: [term()],
                PREFERRED: [{"weight": 100, "podAffinityTerm": term("zone")}],
            },
        )
    )
    own = frozenset({"team"})
    zone = PodAffinityTerm(selector=WEB, namespaces=own, topology_key="zone")
    host = PodAffinityTerm(selector=WEB, namespaces=own, topology_key=HOST)
    assert task.pod_affinity == PodAffinity(
        required=(zone,),
        preferred=(WeightedPodAffinityTerm(weight=5, term=host),),
        anti_required=(host,),
        anti_preferred=(WeightedPodAffinityTerm(weight=100, term=zone),),
    )
    assert task.problem == ""


def test_a_term_naming_namespaces_selects_pods_of_those_namespaces_only() -> None:
    task = convert(with_affinity(podAntiAffinity={REQUIRED: [term(namespaces=["a", "b"])]}))
    found = task.pod_affinity.anti_required[0]
    assert found.namespaces == frozenset({"a", "b"})
    assert found.matches("a", {"app": "web"})
    assert not found.matches("team", {"app": "web"})


def test_an_empty_namespace_selector_selects_every_namespace() -> None:
    task = convert(with_affinity(podAntiAffinity={REQUIRED: [term(namespaceSelector={})]}))
    found = task.pod_affinity.anti_required[0]
    assert found.namespaces == frozenset()
    assert found.namespace_selector == EVERYTHING
    assert found.matches("anywhere", {"app": "web"})


def test_a_namespace_selector_on_the_namespace_name_label_is_evaluated() -> None:
    selector = {"matchLabels": {"kubernetes.io/metadata.name": "other"}}
    task = convert(with_affinity(podAntiAffinity={REQUIRED: [term(namespaceSelector=selector)]}))
    found = task.pod_affinity.anti_required[0]
    assert found.matches("other", {"app": "web"})
    assert not found.matches("team", {"app": "web"})
    assert task.problem == ""


def test_a_namespace_selector_on_other_namespace_labels_is_a_problem_of_the_pod() -> None:
    selector = {"matchLabels": {"env": "prod"}}
    task = convert(with_affinity(podAffinity={REQUIRED: [term(namespaceSelector=selector)]}))
    assert task.problem == (
        "Pod team/p1: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".namespaceSelector: only kubernetes.io/metadata.name can be selected on: vscheduler "
        "does not see other namespace labels"
    )


def test_a_term_without_a_label_selector_selects_no_pod() -> None:
    task = convert(with_affinity(podAntiAffinity={REQUIRED: [{"topologyKey": HOST}]}))
    found = task.pod_affinity.anti_required[0]
    assert found.selector is None
    assert not found.matches("team", {})


@pytest.mark.parametrize(
    ("affinity", "message"),
    [
        (
            {"podAffinity": {REQUIRED: [{"labelSelector": {}}]}},
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
            ".topologyKey: must be a non-empty string",
        ),
        (
            {"podAntiAffinity": {PREFERRED: [{"weight": 0, "podAffinityTerm": term()}]}},
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
            ".weight: must be an integer from 1 to 100, got 0",
        ),
        (
            {"podAntiAffinity": {PREFERRED: [{"weight": 1}]}},
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
            ".podAffinityTerm: is required",
        ),
        (
            {"podAffinity": {REQUIRED: [term(labelSelector={"matchExpressions": [{"key": "a"}]})]}},
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
            ".labelSelector.matchExpressions[0].operator: must be one of In, NotIn, Exists, "
            "DoesNotExist, got null",
        ),
    ],
)
def test_a_malformed_term_is_an_error_naming_the_field(affinity: Raw, message: str) -> None:
    with pytest.raises(InputError) as caught:
        convert(raw_pod(affinity=affinity))
    assert str(caught.value) == f"Pod team/p1: {message}"


# --- topology spread ------------------------------------------------------------------------------
def spread_entry(**extra: Any) -> Raw:
    return {
        "maxSkew": 2,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
        **extra,
    }


def test_a_spread_constraint_gets_kubes_defaults() -> None:
    task = convert(raw_pod(topologySpreadConstraints=[spread_entry()]))
    assert task.topology_spread == (
        SpreadConstraint(max_skew=2, topology_key="zone", hard=True, selector=WEB),
    )
    constraint = task.topology_spread[0]
    assert (constraint.min_domains, constraint.honor_node_affinity) == (1, True)
    assert not constraint.honor_node_taints


def test_the_inclusion_policies_min_domains_and_schedule_anyway_are_read() -> None:
    task = convert(
        raw_pod(
            topologySpreadConstraints=[
                spread_entry(minDomains=3, nodeAffinityPolicy="Ignore", nodeTaintsPolicy="Honor"),
                spread_entry(whenUnsatisfiable="ScheduleAnyway", maxSkew=1),
            ]
        )
    )
    hard, soft = task.topology_spread
    assert (hard.hard, hard.min_domains, hard.honor_node_affinity, hard.honor_node_taints) == (
        True,
        3,
        False,
        True,
    )
    assert (soft.hard, soft.max_skew) == (False, 1)


def test_match_label_keys_become_requirements_on_the_pods_own_values() -> None:
    entry = spread_entry(matchLabelKeys=["pod-template-hash", "absent"])
    task = convert(
        raw_pod({"app": "web", "pod-template-hash": "abc"}, topologySpreadConstraints=[entry])
    )
    assert task.topology_spread[0].selector == LabelSelector(
        match_labels={"app": "web"},
        match_expressions=(
            LabelRequirement(key="pod-template-hash", operator="In", values=("abc",)),
        ),
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (spread_entry(maxSkew=0), "[0].maxSkew: must be an integer from 1 to 2147483647, got 0"),
        (spread_entry(topologyKey=""), "[0].topologyKey: must be a non-empty string"),
        (
            spread_entry(whenUnsatisfiable="Never"),
            "[0].whenUnsatisfiable: must be one of DoNotSchedule, ScheduleAnyway, got 'Never'",
        ),
        (
            spread_entry(whenUnsatisfiable="ScheduleAnyway", minDomains=2),
            "[0].minDomains: can only be set with DoNotSchedule",
        ),
        (
            spread_entry(nodeTaintsPolicy="Always"),
            "[0].nodeTaintsPolicy: must be one of Honor, Ignore, got 'Always'",
        ),
        (
            {**spread_entry(matchLabelKeys=["app"])},
            "[0].matchLabelKeys: key 'app' is also in labelSelector",
        ),
        (
            {k: v for k, v in spread_entry(matchLabelKeys=["x"]).items() if k != "labelSelector"},
            "[0].matchLabelKeys: must not be set when labelSelector is not set",
        ),
    ],
)
def test_a_malformed_spread_constraint_is_an_error_naming_the_field(
    entry: Raw, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        convert(raw_pod(topologySpreadConstraints=[entry]))
    assert str(caught.value) == f"Pod team/p1: spec.topologySpreadConstraints{message}"


def test_two_constraints_on_one_key_and_action_are_an_error() -> None:
    with pytest.raises(InputError) as caught:
        convert(raw_pod(topologySpreadConstraints=[spread_entry(), spread_entry(maxSkew=1)]))
    assert str(caught.value) == (
        "Pod team/p1: spec.topologySpreadConstraints[1]: duplicate of another constraint on "
        "zone, DoNotSchedule"
    )


# --- the template key -----------------------------------------------------------------------------
def test_pods_without_inter_pod_terms_keep_labels_out_of_their_template() -> None:
    a = convert(raw_pod({"app": "web", "index": "0"}))
    b = convert(raw_pod({"app": "web", "index": "1"}))
    assert a.template_key() == b.template_key()


def test_pods_whose_own_labels_meet_their_terms_differently_are_of_different_templates() -> None:
    constraints = [spread_entry()]
    web = convert(raw_pod({"app": "web"}, topologySpreadConstraints=constraints))
    web_again = convert(
        raw_pod({"app": "web", "index": "1"}, topologySpreadConstraints=constraints)
    )
    other = convert(raw_pod({"app": "db"}, topologySpreadConstraints=constraints))
    assert web.template_key() == web_again.template_key()
    assert web.template_key() != other.template_key()


def test_pods_with_different_terms_are_of_different_templates() -> None:
    near = convert(with_affinity(podAffinity={REQUIRED: [term("zone")]}))
    far = convert(with_affinity(podAntiAffinity={REQUIRED: [term("zone")]}))
    plain = convert(raw_pod())
    assert len({near.template_key(), far.template_key(), plain.template_key()}) == 3
