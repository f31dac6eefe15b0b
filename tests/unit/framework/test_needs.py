"""What a plugin factory declares it needs (`framework.needs`), collected by `registry.build`:
the usage periods of the pipeline, and the conflicts checked once per tier."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from vscheduler import catalog
from vscheduler.conf.parse import parse_policy
from vscheduler.errors import PolicyError
from vscheduler.framework.needs import NOTHING, Needs, TierConflict, needs_of
from vscheduler.framework.registry import Registry, build

HIERARCHICAL_DRF = "  - name: drf\n    enableHierarchy: true\n"


def errors_of(text: str) -> tuple[str, ...]:
    with pytest.raises(PolicyError) as caught:
        catalog.load_pipeline(text)
    return caught.value.errors


def test_hierarchical_drf_with_proportion_in_one_tier_is_an_error() -> None:
    text = "actions: allocate\ntiers:\n- plugins:\n" + HIERARCHICAL_DRF + "  - name: proportion\n"
    assert errors_of(text) == (
        "tiers[0]: drf with enableHierarchy: true conflicts with proportion in one tier",
    )


@pytest.mark.parametrize(
    "tiers",
    [
        "- plugins:\n  - name: drf\n  - name: proportion\n",
        "- plugins:\n  - name: drf\n    enableHierarchy: false\n  - name: proportion\n",
        "- plugins:\n" + HIERARCHICAL_DRF + "- plugins:\n  - name: proportion\n",
    ],
    ids=["flag-off-by-default", "flag-off", "other-tier"],
)
def test_drf_and_proportion_conflict_only_hierarchical_and_in_one_tier(tiers: str) -> None:
    catalog.load_pipeline("actions: allocate\ntiers:\n" + tiers)


class _Plain:
    name = "plain"
    plugin = object

    def open(self, _session: object) -> object:
        return object()


class _Exclusive:
    name = "exclusive"
    plugin = object
    needs = Needs(conflicts=(TierConflict(flag="enablePreemptable", plugin="plain"),))

    def open(self, _session: object) -> object:
        return object()


def _plain(arguments: Mapping[str, object]) -> _Plain:
    assert arguments == {}
    return _Plain()


def _exclusive(arguments: Mapping[str, object]) -> _Exclusive:
    assert arguments == {}
    return _Exclusive()


def _registry() -> Registry:
    return Registry(plugins={"plain": _plain, "exclusive": _exclusive}, actions={})


def _build(tiers: str) -> tuple[str, ...]:
    text = 'actions: ""\ntiers:\n' + tiers
    policy = parse_policy(text, known_actions=(), known_plugins=("plain", "exclusive"))
    with pytest.raises(PolicyError) as caught:
        build(policy, _registry())
    return caught.value.errors


def test_a_declared_conflict_is_reported_naming_its_tier() -> None:
    tiers = "- plugins: []\n- plugins:\n  - name: exclusive\n  - name: plain\n"
    assert _build(tiers) == (
        "tiers[1]: exclusive with enablePreemptable: true conflicts with plain in one tier",
    )


def test_a_factory_without_needs_needs_nothing() -> None:
    assert needs_of(_Plain()) is NOTHING
    assert needs_of(_Exclusive()).conflicts == (TierConflict("enablePreemptable", "plain"),)


def test_the_pipeline_asks_for_each_declared_usage_period_in_tier_order() -> None:
    text = (
        "actions: allocate\ntiers:\n"
        "- plugins:\n  - name: rescheduling\n    arguments:\n      metricsPeriod: 1h\n"
        "- plugins:\n  - name: usage\n    arguments:\n      period: 5m\n"
    )
    assert catalog.load_pipeline(text).usage_periods == ("10m", "1h", "5m")
