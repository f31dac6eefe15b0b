"""The built-in registry: every action and plugin vscheduler ships, by its Volcano name.

Explicit tables, nothing registers itself on import. Adding an action or a plugin is one module
and one entry here: its name in the import list and its line in the table
(docs/writing-a-plugin.md; tests/unit/docs/test_new_plugin_in_a_clone.py proves it).
"""

from __future__ import annotations

from vscheduler.actions import allocate, backfill, enqueue, preempt, reclaim, shuffle
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
from vscheduler.plugins import (
    binpack,
    capacity,
    conformance,
    drf,
    gang,
    nodeorder,
    overcommit,
    pdb,
    predicates,
    priority,
    proportion,
    rescheduling,
    reservation,
    resourcequota,
    sla,
    tdm,
    usage,
)


def builtin_registry() -> Registry:
    """The registry of built-in actions and plugins."""
    actions: dict[str, ActionBuilder] = {
        enqueue.NAME: enqueue.build,
        allocate.NAME: allocate.build,
        backfill.NAME: backfill.build,
        preempt.NAME: preempt.build,
        reclaim.NAME: reclaim.build,
        shuffle.NAME: shuffle.build,
    }
    plugins: dict[str, PluginBuilder] = {
        priority.NAME: priority.build,
        gang.NAME: gang.build,
        conformance.NAME: conformance.build,
        drf.NAME: drf.build,
        proportion.NAME: proportion.build,
        capacity.NAME: capacity.build,
        overcommit.NAME: overcommit.build,
        predicates.NAME: predicates.build,
        nodeorder.NAME: nodeorder.build,
        binpack.NAME: binpack.build,
        usage.NAME: usage.build,
        pdb.NAME: pdb.build,
        rescheduling.NAME: rescheduling.build,
        resourcequota.NAME: resourcequota.build,
        sla.NAME: sla.build,
        tdm.NAME: tdm.build,
        reservation.NAME: reservation.build,
    }
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
