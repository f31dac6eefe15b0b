"""The plugin contract, checked at policy load: every public method of a plugin class is a
point's hook, subclasses that point's Protocol, and takes its parameters."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping

import numpy as np
import pytest

from vscheduler.catalog import builtin_registry
from vscheduler.conf.parse import parse_policy
from vscheduler.errors import PolicyError
from vscheduler.framework import contract
from vscheduler.framework.registry import Registry, build
from vscheduler.plugin_api import (
    BoolArray,
    IntArray,
    JobOrder,
    JobState,
    PluginSession,
    Predicate,
    TaskState,
)


class Misspelt(Predicate):
    def filter_modes(self, task: TaskState, idx: IntArray) -> BoolArray:
        return np.ones(len(idx), dtype=np.bool_)


class WrongArity(JobOrder):
    def compare_jobs(self, a: JobState) -> int:  # type: ignore[override]
        return 0


class NoProtocol:
    def filter_nodes(self, task: TaskState, idx: IntArray) -> BoolArray:
        return np.ones(len(idx), dtype=np.bool_)


class PublicHelper(JobOrder):
    def compare_jobs(self, a: JobState, b: JobState) -> int:
        return self._helper() - self.helper()

    def _helper(self) -> int:
        return 0

    def helper(self) -> int:
        return 0


class Good(Predicate, JobOrder):
    node_local = True

    def filter_nodes(self, task: TaskState, idx: IntArray) -> BoolArray:
        return np.ones(len(idx), dtype=np.bool_)

    def compare_jobs(self, a: JobState, b: JobState) -> int:
        return 0

    def _private(self) -> None:
        pass


class Inherits(Good):
    """A subclass inherits its base's Protocols: no problem."""


def test_a_misspelt_hook_is_named_with_a_suggestion() -> None:
    assert contract.class_problems("toy", Misspelt) == [
        "plugin 'toy': Misspelt.filter_modes is not an extension point's method "
        "(did you mean 'filter_nodes'?)"
    ]


def test_a_hook_with_the_wrong_number_of_parameters_is_named() -> None:
    assert contract.class_problems("toy", WrongArity) == [
        "plugin 'toy': WrongArity.compare_jobs takes 1 positional parameter(s); jobOrder passes 2"
    ]


def test_a_hook_without_its_protocol_base_is_named() -> None:
    assert contract.class_problems("toy", NoProtocol) == [
        "plugin 'toy': NoProtocol.filter_nodes serves predicate but the class does not "
        "subclass Predicate (vscheduler.plugin_api)"
    ]


def test_a_public_helper_must_be_private() -> None:
    assert contract.class_problems("toy", PublicHelper) == [
        "plugin 'toy': PublicHelper.helper is not an extension point's method "
        "(make a helper private: '_x')"
    ]


def test_a_class_keeping_the_contract_has_no_problems() -> None:
    assert contract.class_problems("toy", Good) == []
    assert contract.class_problems("toy", Inherits) == []


def test_every_class_a_factory_declares_is_checked() -> None:
    @dataclasses.dataclass
    class Factory:
        name: str = "toy"
        plugin: tuple[type, ...] = (Good, NoProtocol)

        def open(self, _session: PluginSession) -> Good | NoProtocol:
            return Good()

    assert contract.problems("toy", Factory()) == contract.class_problems("toy", NoProtocol)


@pytest.mark.parametrize("name", sorted(builtin_registry().plugins))
def test_every_built_in_plugin_keeps_the_contract(name: str) -> None:
    builder = builtin_registry().plugins[name]
    factory = importlib.import_module(builder.__module__).Factory
    assert contract.problems(name, factory) == []


def test_building_a_policy_with_a_broken_plugin_is_a_policy_error_naming_plugin_and_method() -> (
    None
):
    class Factory:
        name = "toy"
        plugin = Misspelt

        def open(self, _session: PluginSession) -> Misspelt:
            return Misspelt()  # type: ignore[abstract]  # mypy, too, sees the misspelling

    def toy(_arguments: Mapping[str, object]) -> Factory:
        return Factory()

    text = "actions: allocate\ntiers:\n- plugins:\n  - name: toy\n"
    policy = parse_policy(text, known_actions=("allocate",), known_plugins=("toy",))
    plugins = {"toy": toy}  # mypy refuses it too (an abstract plugin class): the load check
    registry = Registry(plugins=plugins, actions=builtin_registry().actions)  # type: ignore[arg-type]
    with pytest.raises(PolicyError) as caught:
        build(policy, registry)
    assert caught.value.errors == (
        "tiers[0].plugins[0]: plugin 'toy': Misspelt.filter_modes is not an extension point's "
        "method (did you mean 'filter_nodes'?)",
    )
