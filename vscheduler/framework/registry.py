"""Registries of plugins and actions, and building a policy into a runnable pipeline.

A registry is a value (name -> builder), never filled by import side effects. `build` checks a
whole policy at load time: every plugin's and action's arguments are parsed by its builder, every
plugin's classes are checked against the extension-point Protocols (`framework.contract`: an
unknown public method, a hook without its Protocol base or with the wrong number of parameters),
and all errors are reported together. The resulting `Pipeline` lives as long as the policy; its
plugin factories are where cross-cycle plugin state belongs. What a factory declares it needs
(`framework.needs`) is collected here: the usage periods, and the conflicts checked per tier.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Protocol

from vscheduler.conf.metrics_block import usage_periods
from vscheduler.conf.schema import MetricsConfig
from vscheduler.errors import PluginArgsError, PolicyError
from vscheduler.framework import contract
from vscheduler.framework.needs import needs_of
from vscheduler.framework.session import PluginEntry, PluginFactory, Session


class Action(Protocol):
    """One step of a cycle (enqueue, allocate, ...)."""

    name: str

    def execute(self, session: Session) -> None:
        """Run on the session; change it only through statements."""
        ...


class PluginBuilder(Protocol):
    """Parses a plugin entry's `arguments` (raising PluginArgsError) into its factory."""

    def __call__(self, arguments: Mapping[str, object]) -> PluginFactory[object]: ...


class ActionBuilder(Protocol):
    """Parses an action's `configurations` arguments (raising PluginArgsError) into the action."""

    def __call__(self, arguments: Mapping[str, object]) -> Action: ...


class PolicyLike(Protocol):
    """What `build` needs of a parsed policy (vscheduler.conf.schema.Policy)."""

    @property
    def actions(self) -> tuple[str, ...]: ...

    @property
    def tiers(self) -> tuple[TierLike, ...]: ...

    @property
    def metrics(self) -> MetricsConfig | None: ...

    def plugins(self) -> tuple[OptionLike, ...]: ...

    def action_arguments(self, action: str) -> Mapping[str, object]: ...

    def configured_actions(self) -> tuple[str, ...]: ...


class OptionLike(Protocol):
    """A policy plugin entry."""

    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> Mapping[str, object]: ...

    def is_enabled(self, flag: str) -> bool: ...


class TierLike(Protocol):
    """A policy tier."""

    @property
    def plugins(self) -> tuple[OptionLike, ...]: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Registry:
    """Known plugins and actions, by their Volcano names."""

    plugins: Mapping[str, PluginBuilder]
    actions: Mapping[str, ActionBuilder]


@dataclasses.dataclass(frozen=True, slots=True)
class Pipeline:
    """A built policy: the actions to run, in order, and the plugin tiers; for the node-usage
    collector, the `metrics` block and every usage period the policy's plugins read (the block's
    `period` first, then each plugin's declared `Needs.usage_periods`); for the ConfigMap watches,
    every ConfigMap a plugin declares it reads (`Needs.config_maps`, sorted, once each); for the
    effects, whether binds bind their pods' volumes first (`Needs.volume_binding`, some plugin
    declares it) and the seconds a bind waits for them (`Needs.volume_bind_timeout`, the first
    plugin's that declares one; None: none does)."""

    actions: tuple[Action, ...]
    tiers: tuple[tuple[PluginEntry, ...], ...]
    metrics: MetricsConfig | None = None
    usage_periods: tuple[str, ...] = ()
    config_maps: tuple[tuple[str, str], ...] = ()
    volume_binding: bool = False
    volume_bind_timeout: float | None = None


def build(policy: PolicyLike, registry: Registry, *, source: str = "policy") -> Pipeline:
    """Build every action and plugin of `policy`; raise PolicyError listing every problem."""
    errors: list[str] = []
    actions: list[Action] = []
    for name in policy.actions:
        builder = registry.actions.get(name)
        if builder is None:
            errors.append(f"actions: unknown action '{name}'")
            continue
        try:
            actions.append(builder(policy.action_arguments(name)))
        except PluginArgsError as exc:
            errors.extend(exc.problems)
    for name in policy.configured_actions():
        # arguments of an action configured but not run are still checked: they are a typo or
        # a policy half-edited, and run the day the action is listed.
        if name in registry.actions and name not in policy.actions:
            try:
                registry.actions[name](policy.action_arguments(name))
            except PluginArgsError as exc:
                errors.extend(exc.problems)
    tiers: list[tuple[PluginEntry, ...]] = []
    for t, tier in enumerate(policy.tiers):
        entries: list[PluginEntry] = []
        for p, option in enumerate(tier.plugins):
            plugin_builder = registry.plugins.get(option.name)
            if plugin_builder is None:
                errors.append(f"tiers[{t}].plugins[{p}].name: unknown plugin '{option.name}'")
                continue
            try:
                factory = plugin_builder(option.arguments)
            except PluginArgsError as exc:
                errors.extend(f"tiers[{t}].plugins[{p}]: {problem}" for problem in exc.problems)
                continue
            broken = contract.problems(option.name, factory)
            errors.extend(f"tiers[{t}].plugins[{p}]: {problem}" for problem in broken)
            entries.append(PluginEntry(option, factory))
        errors.extend(f"tiers[{t}]: {problem}" for problem in _conflicts(tier, entries))
        tiers.append(tuple(entries))
    if errors:
        raise PolicyError(errors, source=source)
    needs = [needs_of(entry.factory) for tier in tiers for entry in tier]
    asked = [period for each in needs for period in each.usage_periods]
    return Pipeline(
        tuple(actions),
        tuple(tiers),
        metrics=policy.metrics,
        usage_periods=usage_periods(policy.metrics, asked),
        config_maps=tuple(sorted({cm for each in needs for cm in each.config_maps})),
        volume_binding=any(each.volume_binding for each in needs),
        volume_bind_timeout=next(
            (each.volume_bind_timeout for each in needs if each.volume_bind_timeout is not None),
            None,
        ),
    )


def _conflicts(tier: TierLike, entries: list[PluginEntry]) -> list[str]:
    """The problems of the tier's declared conflicts (`Needs.conflicts`)."""
    names = {option.name for option in tier.plugins}
    return [
        rule.problem(entry.option.name)
        for entry in entries
        for rule in needs_of(entry.factory).conflicts
        if rule.plugin in names and entry.option.is_enabled(rule.flag)
    ]
