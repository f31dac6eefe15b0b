"""policy/v1 PodDisruptionBudgets become budgets: selector, allowance, disrupted pods; a malformed
one is an error naming the object and field, or, read leniently, protects its whole namespace."""

from __future__ import annotations

from typing import Any

import pytest

from vscheduler.convert.files import SourcedObject
from vscheduler.convert.memo import FactsMemo
from vscheduler.convert.pdb import convert_budget, guarded_budget
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.errors import InputError
from vscheduler.model.selector import (
    EVERYTHING,
    DisruptionBudget,
    LabelRequirement,
    LabelSelector,
)


def raw_pdb(
    name: str = "web",
    *,
    selector: object = None,
    status: dict[str, Any] | None = None,
    namespace: str = "shop",
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minAvailable": 2},
    }
    if selector is not None:
        obj["spec"]["selector"] = selector
    if status is not None:
        obj["status"] = status
    return obj


def test_a_budget_reads_its_selector_allowance_and_disrupted_pods() -> None:
    raw = raw_pdb(
        selector={
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["front", "edge"]},
                {"key": "canary", "operator": "DoesNotExist"},
            ],
        },
        status={
            "disruptionsAllowed": 2,
            "disruptedPods": {"web-1": "2026-01-01T00:00:00Z"},
            "currentHealthy": 5,
        },
    )

    assert convert_budget(raw) == DisruptionBudget(
        namespace="shop",
        name="web",
        selector=LabelSelector(
            match_labels={"app": "web"},
            match_expressions=(
                LabelRequirement(key="tier", operator="In", values=("front", "edge")),
                LabelRequirement(key="canary", operator="DoesNotExist"),
            ),
        ),
        disruptions_allowed=2,
        disrupted_pods=frozenset({"web-1"}),
    )


def test_a_budget_without_a_status_yet_allows_no_disruption() -> None:
    budget = convert_budget(raw_pdb(selector={"matchLabels": {"app": "web"}}))
    assert budget.disruptions_allowed == 0
    assert budget.disrupted_pods == frozenset()


def test_a_null_selector_selects_nothing_and_an_empty_one_everything() -> None:
    assert convert_budget(raw_pdb()).selector is None
    assert convert_budget(raw_pdb(selector={})).selector == EVERYTHING
    assert convert_budget(raw_pdb(selector={"matchLabels": {}})).selector == EVERYTHING


def test_the_namespace_defaults_to_default() -> None:
    raw = raw_pdb()
    del raw["metadata"]["namespace"]
    assert convert_budget(raw).namespace == "default"


@pytest.mark.parametrize(
    ("selector", "status", "message"),
    [
        pytest.param(
            "app=web",
            None,
            "PodDisruptionBudget shop/web: spec.selector: must be a mapping, got 'app=web'",
            id="selector not a mapping",
        ),
        pytest.param(
            {"matchLabels": {"app": 1}},
            None,
            "PodDisruptionBudget shop/web: spec.selector.matchLabels.app: must be a string, got 1",
            id="label value not a string",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "Like", "values": ["w"]}]},
            None,
            "PodDisruptionBudget shop/web: spec.selector.matchExpressions[0].operator: must be"
            " one of In, NotIn, Exists, DoesNotExist, got 'Like'",
            id="unknown operator",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "In"}]},
            None,
            "PodDisruptionBudget shop/web: spec.selector.matchExpressions[0].values: must not be"
            " empty when the operator is In",
            id="In without values",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]},
            None,
            "PodDisruptionBudget shop/web: spec.selector.matchExpressions[0].values: must be"
            " empty when the operator is Exists",
            id="Exists with values",
        ),
        pytest.param(
            {"matchExpressions": [{"operator": "Exists"}]},
            None,
            "PodDisruptionBudget shop/web: spec.selector.matchExpressions[0].key: is required",
            id="expression without a key",
        ),
        pytest.param(
            {},
            {"disruptionsAllowed": -1},
            "PodDisruptionBudget shop/web: status.disruptionsAllowed: must be an integer from 0"
            " to 2147483647, got -1",
            id="negative allowance",
        ),
        pytest.param(
            {},
            {"disruptionsAllowed": "1"},
            "PodDisruptionBudget shop/web: status.disruptionsAllowed: must be an integer from 0"
            " to 2147483647, got '1'",
            id="allowance not an integer",
        ),
    ],
)
def test_a_malformed_budget_is_an_error_naming_object_and_field(
    selector: object, status: dict[str, Any] | None, message: str
) -> None:
    raw = raw_pdb(selector=selector, status=status)
    with pytest.raises(InputError) as caught:
        convert_budget(raw)
    assert str(caught.value) == message


def test_read_leniently_a_malformed_budget_protects_its_whole_namespace() -> None:
    raw = raw_pdb(selector={"matchLabels": "app=web"}, status={"disruptionsAllowed": 3})

    assert guarded_budget(raw) == DisruptionBudget(
        namespace="shop",
        name="web",
        selector=EVERYTHING,
        disruptions_allowed=0,
        problem="PodDisruptionBudget shop/web: spec.selector.matchLabels: must be a mapping,"
        " got 'app=web'",
    )


def test_read_leniently_a_well_formed_budget_is_the_strict_reading() -> None:
    raw = raw_pdb(selector={"matchLabels": {"app": "web"}}, status={"disruptionsAllowed": 1})
    assert guarded_budget(raw) == convert_budget(raw)


def test_the_memo_converts_an_object_again_only_when_it_is_replaced() -> None:
    memo = FactsMemo(guarded_budget)
    first = raw_pdb("a", selector={}, status={"disruptionsAllowed": 1})
    second = raw_pdb("b", selector={}, status={"disruptionsAllowed": 2})

    view = memo.facts({"shop/b": second, "shop/a": first})
    assert [(b.name, b.disruptions_allowed) for b in view] == [("a", 1), ("b", 2)]
    assert memo.facts({"shop/b": second, "shop/a": first}) is view

    changed = raw_pdb("a", selector={}, status={"disruptionsAllowed": 0})
    again = memo.facts({"shop/b": second, "shop/a": changed})
    assert [(b.name, b.disruptions_allowed) for b in again] == [("a", 0), ("b", 2)]
    assert again[1] is view[1]
    assert memo.facts({"shop/b": second}) == (view[1],)


def test_a_simulate_snapshot_carries_the_budgets_in_document_order() -> None:
    objects = [
        SourcedObject("c.yaml#1", raw_pdb("z", selector={"matchLabels": {"app": "z"}})),
        SourcedObject("c.yaml#2", raw_pdb("a", selector={}, status={"disruptionsAllowed": 1})),
    ]

    snap = build_snapshot(objects)

    assert [b.key for b in snap.disruption_budgets] == ["shop/z", "shop/a"]
    assert snap.disruption_budgets[1].disruptions_allowed == 1
    assert len(snap.pod_disruption_budgets) == 2


def test_a_malformed_budget_in_a_simulate_snapshot_is_an_error_naming_the_document() -> None:
    objects = [SourcedObject("c.yaml#4", raw_pdb(selector={"matchExpressions": "app"}))]

    with pytest.raises(InputError) as caught:
        build_snapshot(objects)

    assert str(caught.value) == (
        "c.yaml#4: PodDisruptionBudget shop/web: spec.selector.matchExpressions: must be a list,"
        " got 'app'"
    )
