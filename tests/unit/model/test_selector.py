"""Label selectors match as Kubernetes matches them; a budget selects pods of its namespace only."""

from __future__ import annotations

import pytest

from vscheduler.model.selector import (
    EVERYTHING,
    DisruptionBudget,
    LabelRequirement,
    LabelSelector,
)

APP_WEB = {"app": "web", "tier": "front"}


def req(key: str, operator: str, *values: str) -> LabelRequirement:
    return LabelRequirement(key=key, operator=operator, values=values)


@pytest.mark.parametrize(
    ("requirement", "labels", "expected"),
    [
        pytest.param(req("app", "In", "web", "api"), APP_WEB, True, id="In: value listed"),
        pytest.param(req("app", "In", "api"), APP_WEB, False, id="In: value not listed"),
        pytest.param(req("zone", "In", "a"), APP_WEB, False, id="In: label missing"),
        pytest.param(req("app", "NotIn", "api"), APP_WEB, True, id="NotIn: value not listed"),
        pytest.param(req("app", "NotIn", "web"), APP_WEB, False, id="NotIn: value listed"),
        pytest.param(req("zone", "NotIn", "a"), APP_WEB, True, id="NotIn: label missing passes"),
        pytest.param(req("app", "Exists"), APP_WEB, True, id="Exists: present"),
        pytest.param(req("zone", "Exists"), APP_WEB, False, id="Exists: missing"),
        pytest.param(req("zone", "DoesNotExist"), APP_WEB, True, id="DoesNotExist: missing"),
        pytest.param(req("app", "DoesNotExist"), APP_WEB, False, id="DoesNotExist: present"),
        pytest.param(req("app", "Gt", "1"), APP_WEB, False, id="an unknown operator: no match"),
    ],
)
def test_each_operator_matches_as_kubernetes_does(
    requirement: LabelRequirement, labels: dict[str, str], expected: bool
) -> None:
    assert requirement.matches(labels) is expected
    assert LabelSelector(match_expressions=(requirement,)).matches(labels) is expected


def test_match_labels_and_expressions_must_all_hold() -> None:
    selector = LabelSelector(
        match_labels={"app": "web"}, match_expressions=(req("tier", "In", "front"),)
    )

    assert selector.matches(APP_WEB)
    assert not selector.matches({"app": "web", "tier": "back"})
    assert not selector.matches({"app": "api", "tier": "front"})
    assert not selector.matches({"tier": "front"})


def test_the_empty_selector_matches_every_set_of_labels_even_none() -> None:
    assert EVERYTHING.is_empty
    assert EVERYTHING.matches({})
    assert EVERYTHING.matches(APP_WEB)
    assert not LabelSelector(match_labels={"app": "web"}).is_empty


def test_a_budget_selects_only_pods_of_its_own_namespace() -> None:
    budget = DisruptionBudget(
        namespace="shop", name="web", selector=LabelSelector(match_labels={"app": "web"})
    )

    assert budget.key == "shop/web"
    assert budget.selects("shop", APP_WEB)
    assert not budget.selects("other", APP_WEB)
    assert not budget.selects("shop", {"app": "api"})


def test_a_budget_with_a_null_selector_selects_nothing_and_an_empty_one_everything() -> None:
    null = DisruptionBudget(namespace="shop", name="none", selector=None)
    empty = DisruptionBudget(namespace="shop", name="all", selector=EVERYTHING)

    assert not null.selects("shop", APP_WEB)
    assert empty.selects("shop", APP_WEB)
    assert empty.selects("shop", {})
