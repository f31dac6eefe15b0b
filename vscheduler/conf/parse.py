"""Turns policy YAML text into a frozen `Policy`, or a `PolicyError` listing every problem found.

Accepts every policy Volcano accepts (its scheduler ConfigMap format) and rejects, with the place
and a suggestion, what Volcano would silently ignore: unknown keys, misspelt flags and names.
Scalars are typed as Volcano's YAML library types them (see `yaml_text`). Does no I/O; the known
action and plugin names are passed in.

Decisions where Volcano is silent or stricter:
- empty policy text is an error (Volcano rejects it too and keeps its previous policy);
- `actions: ""` (or only commas and spaces) means "run no action"; `actions` may also be a YAML
  list; a missing `actions` key is an error;
- missing or empty `tiers` is allowed (a session with no plugins), as in Volcano;
- a duplicate YAML key, a plugin configured twice, an action listed twice and a second
  `configurations` entry for one action are errors (Volcano keeps one of them silently);
- `metrics` accepts Volcano's flat dotted keys (`tls.insecureSkipVerify`) and also the nested form
  Volcano's design document shows (`tls: {insecureSkipVerify: ...}`); `metrics_block` owns it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from vscheduler.conf.metrics_block import parse_metrics
from vscheduler.conf.schema import (
    CONFIGURATION_KEYS,
    ENABLE_FLAGS,
    FLAG_ALIASES,
    PLUGIN_KEYS,
    TIER_KEYS,
    TOP_LEVEL_KEYS,
    VOLCANO_ACTIONS,
    VOLCANO_PLUGINS,
    ActionConfiguration,
    PluginOption,
    Policy,
    Tier,
)
from vscheduler.conf.suggest import describe, did_you_mean
from vscheduler.conf.yaml_text import load_yaml
from vscheduler.errors import PolicyError

TOP: Final = "top level"
_NOTHING: Final[Mapping[str, object]] = MappingProxyType({})


@dataclass(slots=True)
class _Check:
    """The names a policy may use, and every error found so far."""

    known_actions: frozenset[str]
    known_plugins: frozenset[str]
    errors: list[str] = field(default_factory=list)

    def error(self, where: str, message: str) -> None:
        self.errors.append(f"{where}: {message}")

    def unknown_name(self, where: str, kind: str, name: str, known: frozenset[str]) -> None:
        volcano = VOLCANO_ACTIONS if kind == "action" else VOLCANO_PLUGINS
        if name in volcano:
            self.error(
                where,
                f"{kind} {name!r} is a Volcano {kind} this version of vscheduler does not "
                f"provide yet; available: {', '.join(sorted(known))}",
            )
            return
        hint = did_you_mean(name, known | volcano)
        if not hint:
            hint = f"; known {kind}s: {', '.join(sorted(known)) or '(none)'}"
        self.error(where, f"unknown {kind} {name!r}{hint}")


def parse_policy(
    text: str,
    *,
    known_actions: Collection[str],
    known_plugins: Collection[str],
    source: str = "policy",
) -> Policy:
    """Parse a whole policy, or raise PolicyError carrying every error found."""
    check = _Check(known_actions=frozenset(known_actions), known_plugins=frozenset(known_plugins))
    loaded = load_yaml(text)
    check.errors.extend(loaded.problems)
    policy = _policy(loaded.document, check) if loaded.readable else None
    if check.errors or policy is None:
        raise PolicyError(check.errors, source=source)
    return policy


def _policy(document: object, check: _Check) -> Policy | None:
    if document is None:
        check.error(TOP, "the policy is empty; it needs at least 'actions' and 'tiers'")
        return None
    if not isinstance(document, dict):
        check.error(TOP, f"must be a mapping with 'actions' and 'tiers', got {describe(document)}")
        return None
    _check_keys(document, TOP_LEVEL_KEYS, TOP, check)
    if "actions" in document:
        actions = _actions(document["actions"], check)
    else:
        check.error(TOP, "missing 'actions' (write actions: \"\" for a policy that runs no action)")
        actions = ()
    return Policy(
        actions=actions,
        tiers=_tiers(document.get("tiers"), check),
        configurations=_configurations(document.get("configurations"), check),
        metrics=parse_metrics(document.get("metrics"), check.error),
    )


def _check_keys(
    mapping: dict[Any, Any], allowed: tuple[str, ...], path: str, check: _Check
) -> None:
    for key in mapping:
        if key in allowed:
            continue
        hint = did_you_mean(key, allowed) if isinstance(key, str) else ""
        if path == TOP:
            check.error(TOP, f"unknown key {describe(key)}{hint}")
        else:
            check.error(f"{path}.{key}", f"unknown key{hint}")


def _actions(raw: object, check: _Check) -> tuple[str, ...]:
    if isinstance(raw, str):
        named = [(part.strip(), "actions") for part in raw.split(",") if part.strip()]
    elif isinstance(raw, list):
        named = []
        for index, item in enumerate(raw):
            if isinstance(item, str) and item.strip():
                named.append((item.strip(), f"actions[{index}]"))
            else:
                check.error(f"actions[{index}]", f"must be an action name, got {describe(item)}")
    else:
        shape = "a comma-separated string or a list of action names"
        check.error("actions", f"must be {shape}, got {describe(raw)}")
        return ()
    actions: list[str] = []
    for name, where in named:
        if name not in check.known_actions:
            check.unknown_name(where, "action", name, check.known_actions)
        elif name in actions:
            check.error(where, f"duplicate action {name!r}")
        else:
            actions.append(name)
    return tuple(actions)


def _tiers(raw: object, check: _Check) -> tuple[Tier, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        check.error("tiers", f"must be a list of tiers, each with 'plugins', got {describe(raw)}")
        return ()
    first_seen: dict[str, str] = {}
    tiers: list[Tier] = []
    for index, tier_raw in enumerate(raw):
        path = f"tiers[{index}]"
        if tier_raw is None:
            tiers.append(Tier())
            continue
        if not isinstance(tier_raw, dict):
            check.error(path, f"must be a mapping with 'plugins', got {describe(tier_raw)}")
            continue
        _check_keys(tier_raw, TIER_KEYS, path, check)
        tier = Tier(plugins=_plugins(tier_raw.get("plugins"), path, check, first_seen))
        tiers.append(tier)
    return tuple(tiers)


def _plugins(
    raw: object, tier_path: str, check: _Check, first_seen: dict[str, str]
) -> tuple[PluginOption, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        check.error(f"{tier_path}.plugins", f"must be a list of plugins, got {describe(raw)}")
        return ()
    plugins: list[PluginOption] = []
    for index, plugin_raw in enumerate(raw):
        path = f"{tier_path}.plugins[{index}]"
        plugin = _plugin(plugin_raw, path, check)
        if plugin is None:
            continue
        if plugin.name in first_seen:
            first = first_seen[plugin.name]
            check.error(f"{path}.name", f"duplicate plugin {plugin.name!r} (first at {first})")
            continue
        first_seen[plugin.name] = path
        plugins.append(plugin)
    return tuple(plugins)


def _plugin(raw: object, path: str, check: _Check) -> PluginOption | None:
    if not isinstance(raw, dict):
        check.error(path, f"must be a mapping with 'name', got {describe(raw)}")
        return None
    name = _name(raw, path, check)
    if name is not None and name not in check.known_plugins:
        check.unknown_name(f"{path}.name", "plugin", name, check.known_plugins)
        name = None
    flags = _flags(raw, path, check)
    arguments = _arguments(raw.get("arguments"), f"{path}.arguments", check)
    if name is None:
        return None
    return PluginOption(name=name, flags=flags, arguments=arguments)


def _flags(raw: dict[Any, Any], path: str, check: _Check) -> Mapping[str, bool]:
    flags: dict[str, bool] = {}
    spelled: dict[str, str] = {}
    for key, value in raw.items():
        if key in ("name", "arguments"):
            continue
        canonical = FLAG_ALIASES.get(key, key) if isinstance(key, str) else None
        if canonical not in ENABLE_FLAGS:
            hint = did_you_mean(key, PLUGIN_KEYS) if isinstance(key, str) else ""
            check.error(f"{path}.{key}", f"unknown key{hint}")
        elif canonical in spelled:
            check.error(f"{path}.{key}", f"the same flag as {spelled[canonical]!r}; give it once")
        elif not isinstance(value, bool):
            check.error(f"{path}.{key}", f"must be true or false, got {describe(value)}")
        else:
            flags[canonical] = value
            spelled[canonical] = key
    return MappingProxyType(flags)


def _name(raw: dict[Any, Any], path: str, check: _Check) -> str | None:
    if "name" not in raw:
        check.error(path, "missing 'name'")
        return None
    name = raw["name"]
    if not isinstance(name, str) or not name.strip():
        check.error(f"{path}.name", f"must be a non-empty string, got {describe(name)}")
        return None
    return name


def _arguments(raw: object, path: str, check: _Check) -> Mapping[str, object]:
    if raw is None:
        return _NOTHING
    if not isinstance(raw, dict):
        check.error(path, f"must be a mapping, got {describe(raw)}")
        return _NOTHING
    return MappingProxyType({_text(key): _freeze(value) for key, value in raw.items()})


def _text(scalar: object) -> str:
    """A scalar as yaml.v2 renders it into a Go string."""
    if isinstance(scalar, bool):
        return "true" if scalar else "false"
    if scalar is None:
        return ""
    return scalar if isinstance(scalar, str) else repr(scalar)


def _freeze(value: object) -> object:
    if isinstance(value, dict):
        return MappingProxyType({key: _freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(item) for item in value)
    if isinstance(value, set):
        return frozenset(value)
    return value


def _configurations(raw: object, check: _Check) -> tuple[ActionConfiguration, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        check.error("configurations", f"must be a list of {{name, arguments}}, got {describe(raw)}")
        return ()
    configurations: list[ActionConfiguration] = []
    first_seen: dict[str, str] = {}
    for index, item in enumerate(raw):
        path = f"configurations[{index}]"
        if not isinstance(item, dict):
            check.error(path, f"must be a mapping with 'name', got {describe(item)}")
            continue
        _check_keys(item, CONFIGURATION_KEYS, path, check)
        arguments = _arguments(item.get("arguments"), f"{path}.arguments", check)
        name = _name(item, path, check)
        if name is None:
            continue
        if name not in check.known_actions:
            check.unknown_name(f"{path}.name", "action", name, check.known_actions)
        elif name in first_seen:
            first = first_seen[name]
            check.error(f"{path}.name", f"duplicate configuration for {name!r} (first at {first})")
        else:
            first_seen[name] = path
            configurations.append(ActionConfiguration(name=name, arguments=arguments))
    return tuple(configurations)
