"""The built-in registry: every action and plugin vscheduler ships, by its Volcano name.

Explicit tables, nothing registers itself on import. Adding a plugin is one module and one line
here, its module name in `PLUGINS` (docs/writing-a-plugin.md;
tests/unit/docs/test_new_plugin_in_a_clone.py proves it); adding an action, one module and its
import and table line.
"""

from __future__ import annotations

import importlib
from typing import Final

from vscheduler.actions import (
    allocate,
    backfill,
    enqueue,
    gangpreempt,
    gangreclaim,
    preempt,
    reclaim,
    shuffle,
)
from vscheduler.conf.default import DEFAULT_POLICY_TEXT
from vscheduler.conf.parse import parse_policy
from vscheduler.conf.schema import Policy
from vscheduler.framework.registry import (
    ActionBuilder,
    Pipeline,
    PluginBuilder,
    Registry,
    build,
)

PLUGINS: Final = (
    "priority",
    "gang",
    "conformance",
    "drf",
    "proportion",
    "capacity",
    "overcommit",
    "predicates",
    "nodeorder",
    "binpack",
    "usage",
    "pdb",
    "cdp",
    "rescheduling",
    "resourcequota",
    "sla",
    "tdm",
    "nodegroup",
    "reservation",
    "resource_strategy_fit",
    "task_topology",
    "network_topology_aware",
)
"""The built-in plugins, one line each: the module's name under `vscheduler/plugins/` (a module
or a package), whose `NAME` and `build` the registry takes."""


def _plugin(module: str) -> tuple[str, PluginBuilder]:
    """The plugin module's name and builder (imported here, when the registry is built)."""
    loaded = importlib.import_module(f"vscheduler.plugins.{module}")
    name: str = loaded.NAME
    builder: PluginBuilder = loaded.build
    return name, builder


def builtin_registry() -> Registry:
    """The registry of built-in actions and plugins."""
    actions: dict[str, ActionBuilder] = {
        enqueue.NAME: enqueue.build,
        allocate.NAME: allocate.build,
        backfill.NAME: backfill.build,
        preempt.NAME: preempt.build,
        reclaim.NAME: reclaim.build,
        shuffle.NAME: shuffle.build,
        gangpreempt.NAME: gangpreempt.build,
        gangreclaim.NAME: gangreclaim.build,
    }
    plugins = dict(_plugin(module) for module in PLUGINS)
    return Registry(plugins=plugins, actions=actions)


def parse(text: str, *, source: str = "policy") -> Policy:
    """Parse a policy document against the built-in actions and plugins."""
    registry = builtin_registry()
    return parse_policy(
        text, known_actions=registry.actions, known_plugins=registry.plugins, source=source
    )


def load_pipeline(text: str | None = None, *, source: str = "policy") -> Pipeline:
    """Parse and build a policy (the default policy when `text` is None); raises PolicyError
    listing every problem, structural and in arguments."""
    if text is None:
        text, source = DEFAULT_POLICY_TEXT, "default policy"
    return build(parse(text, source=source), builtin_registry(), source=source)
