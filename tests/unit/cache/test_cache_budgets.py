"""The cache's snapshots carry PodDisruptionBudgets as facts; a malformed one is a problem and
protects its whole namespace; an unchanged one is not converted again."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.informer.kinds import PDB
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.selector import EVERYTHING, DisruptionBudget, LabelSelector

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def raw_pdb(
    name: str, *, selector: object, allowed: int | None = None, version: str = "1"
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": version},
        "spec": {"selector": selector, "maxUnavailable": 1},
    }
    if allowed is not None:
        obj["status"] = {"disruptionsAllowed": allowed}
    return obj


@pytest.fixture
def cache() -> SchedulerCache:
    return SchedulerCache(clock=FixedClock(START))


def test_a_snapshot_carries_the_budgets_sorted_by_key(cache: SchedulerCache) -> None:
    cache.replace(
        PDB,
        [
            raw_pdb("web", selector={"matchLabels": {"app": "web"}}, allowed=1),
            raw_pdb("db", selector={"matchLabels": {"app": "db"}}),
        ],
    )

    snap = cache.snapshot()

    assert snap.disruption_budgets == (
        DisruptionBudget(
            namespace="ns", name="db", selector=LabelSelector(match_labels={"app": "db"})
        ),
        DisruptionBudget(
            namespace="ns",
            name="web",
            selector=LabelSelector(match_labels={"app": "web"}),
            disruptions_allowed=1,
        ),
    )
    assert len(snap.pod_disruption_budgets) == 2
    assert cache.problems() == {}


def test_a_malformed_budget_is_a_problem_and_protects_its_whole_namespace(
    cache: SchedulerCache,
) -> None:
    cache.replace(PDB, [raw_pdb("web", selector={"matchLabels": ["app"]}, allowed=4)])

    assert cache.problems() == {
        "PodDisruptionBudget ns/web": "PodDisruptionBudget ns/web: spec.selector.matchLabels:"
        " must be a mapping, got a list"
    }
    [budget] = cache.snapshot().disruption_budgets
    assert (budget.key, budget.selector, budget.disruptions_allowed) == ("ns/web", EVERYTHING, 0)
    assert budget.problem.startswith("PodDisruptionBudget ns/web: spec.selector.matchLabels")


def test_fixing_or_deleting_a_budget_updates_the_next_snapshot(cache: SchedulerCache) -> None:
    cache.apply(PDB, WatchEvent("ADDED", raw_pdb("web", selector="bad")))
    assert cache.snapshot().disruption_budgets[0].problem

    fixed = raw_pdb("web", selector={"matchLabels": {"app": "web"}}, allowed=2, version="2")
    cache.apply(PDB, WatchEvent("MODIFIED", fixed))
    [budget] = cache.snapshot().disruption_budgets
    assert (budget.problem, budget.disruptions_allowed) == ("", 2)
    assert cache.problems() == {}

    cache.apply(PDB, WatchEvent("DELETED", fixed))
    assert cache.snapshot().disruption_budgets == ()


def test_an_unchanged_budget_is_the_same_fact_in_every_snapshot(cache: SchedulerCache) -> None:
    cache.replace(PDB, [raw_pdb("web", selector={}, allowed=1)])
    first = cache.snapshot().disruption_budgets

    cache.replace(PDB, [raw_pdb("web", selector={}, allowed=1)])  # same resourceVersion

    assert cache.snapshot().disruption_budgets is first
