"""docs/policy.md is the complete reference: every action of the registry and every plugin it
documents, every argument each of their builders reads (with its default), every flag, every
`metrics` key, and which plugins serve each extension point, checked against the code itself.

The registry is the one list of plugins. The documented plugins are those with a section of
their own in policy.md; every other list of plugins in the docs (the README, policy.md's
opening, the migration guide, the extension-point table) names exactly those. Every Volcano
plugin the registry provides and every plugin of the default policy must be documented; a new
plugin of vscheduler's own passes the suite before it has its section (docs/writing-a-plugin.md).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from vscheduler import cli
from vscheduler.catalog import PLUGINS, builtin_registry
from vscheduler.conf.arguments import ArgumentReader
from vscheduler.conf.default import DEFAULT_POLICY_TEXT
from vscheduler.conf.schema import (
    ENABLE_FLAGS,
    FLAG_ALIASES,
    METRICS_KEYS,
    OFF_BY_DEFAULT,
    VOLCANO_ACTIONS,
    VOLCANO_PLUGINS,
)
from vscheduler.framework.points import POINTS
from vscheduler.runtime.foreign_flags import FOREIGN_FLAGS

ROOT = Path(__file__).resolve().parents[3]
POLICY_DOC = ROOT / "docs" / "policy.md"
README = ROOT / "README.md"
REGISTRY = builtin_registry()
DOCUMENTED = frozenset(
    re.findall(r"^### 5\.\d+ `([a-z-]+)`", POLICY_DOC.read_text(encoding="utf-8"), re.MULTILINE)
)
"""The plugins with a section of their own in docs/policy.md."""
TYPED_READS = ("int", "float", "bool", "str", "duration")

RESCHEDULING_SAMPLE: dict[str, object] = {
    "strategies": [
        {"name": "lowPriorityFirst"},
        {
            "name": "lowNodeUtilization",
            "params": {
                "thresholds": {"cpu": 20, "memory": 20, "pods": 20},
                "targetThresholds": {"cpu": 85, "memory": 85, "pods": 85},
                "nodeFit": True,
            },
        },
    ],
}
SAMPLES: dict[str, tuple[dict[str, object], dict[str, str]]] = {
    "plugin binpack": (
        {"binpack.resources": "nvidia.com/gpu", "binpack.resources.nvidia.com/gpu": 2},
        {"binpack.resources.nvidia.com/gpu": "binpack.resources.<name>"},
    ),
    "plugin overcommit": (
        {"overcommit-factor.cpu": 1.5},
        {"overcommit-factor.cpu": "overcommit-factor.<resource>"},
    ),
    "plugin predicates": (
        {
            "predicate.resources": "nvidia.com/gpu",
            "predicate.resources.nvidia.com/gpu.cpu": 2,
            "predicate.resources.nvidia.com/gpu.memory": 8,
        },
        {
            "predicate.resources.nvidia.com/gpu.cpu": "predicate.resources.<name>.cpu",
            # the table row reads "`predicate.resources.<name>.cpu`, `.memory`"
            "predicate.resources.nvidia.com/gpu.memory": ".memory",
        },
    ),
    "plugin tdm": (
        {"tdm.revocable-zone.rz1": "10:00-21:00"},
        {"tdm.revocable-zone.rz1": "tdm.revocable-zone.<zone>"},
    ),
    "plugin usage": ({"thresholds": {"cpu": 80, "mem": 70}}, {}),
    "plugin network-topology-aware": (
        {
            "hypernode.binpack.resources": "nvidia.com/gpu",
            "hypernode.binpack.resources.nvidia.com/gpu": 2,
        },
        {"hypernode.binpack.resources.nvidia.com/gpu": "hypernode.binpack.resources.<name>"},
    ),
    "plugin rescheduling": (RESCHEDULING_SAMPLE, {}),
}
"""Arguments that make a builder read its keys with a variable part, and how the doc spells
those keys."""
DEFAULT_SPELLING: dict[tuple[str, str], str] = {("plugin sla", "sla-waiting-time"): "none"}
"""Defaults the doc states in words."""


def policy_text() -> str:
    return POLICY_DOC.read_text(encoding="utf-8")


def builders() -> Iterator[tuple[str, Any]]:
    for name, action in sorted(REGISTRY.actions.items()):
        yield f"action {name}", action
    for name, plugin in sorted(REGISTRY.plugins.items()):
        if name in DOCUMENTED:
            yield f"plugin {name}", plugin


def read_keys(
    monkeypatch: pytest.MonkeyPatch, owner: str, builder: Any
) -> dict[str, tuple[bool, object]]:
    """Every key `builder` reads, as the doc spells it -> (typed, default): whether it is a
    typed read with a default of its own when no argument is given (a default read while
    reading the sample may depend on the sample, and is not one)."""
    asked: dict[str, tuple[bool, object]] = {}
    sampling = False

    def recording(method: str) -> Any:
        original = getattr(ArgumentReader, method)

        def wrapper(self: ArgumentReader, key: str, default: object, *a: Any, **k: Any) -> Any:
            if sampling:
                asked.setdefault(key, (False, None))
            else:
                asked[key] = (True, default)
            return original(self, key, default, *a, **k)

        return wrapper

    original_raw = ArgumentReader.raw

    def raw(self: ArgumentReader, key: str) -> object | None:
        asked.setdefault(key, (False, None))
        return original_raw(self, key)

    for method in TYPED_READS:
        monkeypatch.setattr(ArgumentReader, method, recording(method))
    monkeypatch.setattr(ArgumentReader, "raw", raw)
    sample, spelling = SAMPLES.get(owner, ({}, {}))
    builder({})
    sampling = True
    builder(sample)
    out: dict[str, tuple[bool, object]] = {}
    for key, read in asked.items():
        out[spelling.get(key, re.sub(r"\[\d+\]", "[]", key))] = read
    return out


def documented(key: str, text: str) -> bool:
    """`key` in backticks, or a dotted ancestor of it (`thresholds` for `thresholds.cpu`)."""
    parts = key.split(".")
    return any(f"`{'.'.join(parts[:n])}`" in text for n in range(len(parts), 0, -1))


def spelt(owner: str, key: str, default: object) -> str:
    if (owner, key) in DEFAULT_SPELLING:
        return DEFAULT_SPELLING[(owner, key)]
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, str):
        return default or '""'
    if isinstance(default, float) and default.is_integer() and "duration" not in owner:
        return str(int(default))
    return str(default)


def duration_text(seconds: float) -> str:
    whole = int(seconds)
    for unit, size in (("h", 3600), ("m", 60)):
        if whole and whole % size == 0:
            return f"{whole // size}{unit}"
    return f"{whole}s"


@pytest.mark.parametrize(("owner", "builder"), list(builders()), ids=[o for o, _ in builders()])
def test_every_argument_a_builder_reads_is_in_policy_md(
    monkeypatch: pytest.MonkeyPatch, owner: str, builder: Any
) -> None:
    text = policy_text()
    keys = read_keys(monkeypatch, owner, builder)
    missing = sorted(key for key in keys if not documented(key, text))
    assert missing == [], f"{owner}: not in docs/policy.md: {missing}"


@pytest.mark.parametrize(("owner", "builder"), list(builders()), ids=[o for o, _ in builders()])
def test_every_default_is_stated_in_a_table_row_naming_its_argument(
    monkeypatch: pytest.MonkeyPatch, owner: str, builder: Any
) -> None:
    rows = [line for line in policy_text().splitlines() if line.startswith("|")]
    durations: set[str] = set()
    original = ArgumentReader.duration

    def duration(self: ArgumentReader, key: str, default: float) -> float:
        durations.add(re.sub(r"\[\d+\]", "[]", key))
        return original(self, key, default)

    monkeypatch.setattr(ArgumentReader, "duration", duration)
    keys = read_keys(monkeypatch, owner, builder)
    wrong = []
    for key, (typed, default) in keys.items():
        if not typed:
            continue
        parts = key.split(".")
        named = next(
            f"`{'.'.join(parts[:n])}`"
            for n in range(len(parts), 0, -1)
            if any(f"`{'.'.join(parts[:n])}`" in row for row in rows)
        )
        value = (
            duration_text(float(str(default)))
            if key in durations and (owner, key) not in DEFAULT_SPELLING
            else spelt(owner, key, default)
        )
        pattern = re.compile(r"(?<![\w.])" + re.escape(value) + r"(?![\w.])")
        if not any(named in row and pattern.search(row) for row in rows):
            wrong.append(f"{key} (default {value})")
    assert wrong == [], f"{owner}: default not in its row: {wrong}"


def test_every_action_and_every_shipped_plugin_has_its_own_section() -> None:
    text = policy_text()
    actions = set(re.findall(r"^### 4\.\d+ `([a-z-]+)`", text, re.MULTILINE))
    assert actions == set(REGISTRY.actions)
    assert DOCUMENTED.issubset(REGISTRY.plugins)
    assert set(REGISTRY.plugins) & set(VOLCANO_PLUGINS) <= DOCUMENTED
    default = yaml.safe_load(DEFAULT_POLICY_TEXT)
    assert {p["name"] for tier in default["tiers"] for p in tier["plugins"]} <= DOCUMENTED


def backticked(text: str) -> list[str]:
    """The names in backticks in `text`, in order."""
    return re.findall(r"`([a-z-]+)`", text)


@pytest.mark.parametrize(
    ("doc", "start", "end"),
    [
        ("README.md", "- **Plugins**:", "- **Commands**:"),
        ("docs/policy.md", "and the plugins `", "This page is the"),
        ("docs/migrating-from-volcano.md", "| **Plugins** |", "\n"),
    ],
)
def test_every_list_of_plugins_names_exactly_the_documented_ones(
    doc: str, start: str, end: str
) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    begin = text.index(start)
    named = backticked(text[begin : text.index(end, begin + len(start))])
    assert sorted(named) == sorted(DOCUMENTED)


def test_every_enable_flag_and_alias_is_in_the_flag_table_with_its_default() -> None:
    rows = {
        m.group(1): m.group(2)
        for m in re.finditer(r"^\| `(\w+)` \| (on|\*\*off\*\*) \|", policy_text(), re.MULTILINE)
    }
    assert set(rows) == set(ENABLE_FLAGS)
    assert {flag for flag, default in rows.items() if default != "on"} == set(OFF_BY_DEFAULT)
    for alias in FLAG_ALIASES:
        assert f"`{alias}`" in policy_text()


def section(title_prefix: str) -> str:
    text = policy_text()
    start = text.index(f"\n### {title_prefix}")
    end = text.index("\n### ", start + 1)
    return text[start:end]


def test_every_metrics_key_is_in_the_metrics_section() -> None:
    block = section("1.7")
    missing = [key for key in METRICS_KEYS if f"`{key}`" not in block]
    assert missing == []


def plugin_modules(name: str) -> list[ModuleType]:
    """The modules of the plugin named `name` (its module's name may differ: a `-` is `_`)."""
    module = next(
        loaded
        for loaded in (importlib.import_module(f"vscheduler.plugins.{m}") for m in PLUGINS)
        if name == loaded.NAME
    )
    found = [module]
    if hasattr(module, "__path__"):
        for info in pkgutil.walk_packages(module.__path__, module.__name__ + "."):
            found.append(importlib.import_module(info.name))
    return found


def served_points(name: str) -> set[str]:
    """The extension points some class of plugin `name` implements."""
    points = set()
    for module in plugin_modules(name):
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            # A plugin class serves the points its own methods or its bases' serve (a typing
            # Protocol only declares them).
            own = [
                k for k in cls.__mro__ if k is not object and not getattr(k, "_is_protocol", False)
            ]
            points |= {p.name for p in POINTS if any(p.method in vars(k) for k in own)}
    return points


ROW_OF_POINT = {
    "allocateEvent": "allocate / deallocate events",
    "deallocateEvent": "allocate / deallocate events",
    "sessionClose": "session close",
}


def test_the_extension_point_table_names_exactly_the_plugins_that_serve_each_point() -> None:
    table: dict[str, set[str]] = {}
    for line in section("3.2").splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("|") and len(cells) == 5 and cells[0] not in ("point", "---"):
            table[cells[0]] = {p.strip() for p in cells[3].split(",")} - {"—", ""}
    code: dict[str, set[str]] = {}
    for name in sorted(DOCUMENTED):
        for point in served_points(name):
            code.setdefault(ROW_OF_POINT.get(point, point), set()).add(name)
    rows = {ROW_OF_POINT.get(p.name, p.name) for p in POINTS}
    assert set(table) == rows
    assert {row: table[row] for row in rows} == {row: code.get(row, set()) for row in rows}


def fenced_after(heading: str, lang: str) -> str:
    text = section(heading)
    match = re.search(rf"```{lang}\n(.*?)```", text, re.DOTALL)
    assert match is not None
    return match.group(1)


def test_the_default_policy_section_is_the_shipped_default() -> None:
    shown = yaml.safe_load(fenced_after("1.8", "yaml"))
    assert shown == yaml.safe_load(DEFAULT_POLICY_TEXT)
    assert shown == yaml.safe_load((ROOT / "config" / "default-policy.yaml").read_text())


def test_the_annotated_example_is_a_valid_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "example.yaml"
    path.write_text(fenced_after("1.1", "yaml"))
    assert cli.main(["validate-config", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: OK\n"


def test_section_6_lists_exactly_the_volcano_actions_and_plugins_not_provided() -> None:
    rows = section_6().splitlines()
    row = next(line for line in rows if line.startswith("| plugins |"))
    assert set(re.findall(r"`([a-z-]+)`", row)) == set(VOLCANO_PLUGINS) - set(REGISTRY.plugins)
    row = next(line for line in rows if line.startswith("| actions |"))
    assert set(re.findall(r"`([a-z-]+)`", row)) == set(VOLCANO_ACTIONS) - set(REGISTRY.actions)


def section_6() -> str:
    text = policy_text()
    return text[text.index("\n## 6.") : text.index("\n## 7.")]


def test_the_readme_names_every_action_and_documented_plugin() -> None:
    text = README.read_text(encoding="utf-8")
    works = text[text.index("## What works today") :]
    named = [*REGISTRY.actions, *sorted(DOCUMENTED)]
    assert [name for name in named if f"`{name}`" not in works] == []


def run_options() -> dict[str, object]:
    """Every option of `vscheduler run` -> its default (argparse keeps them on its actions)."""
    parser = cli._parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    run: argparse.ArgumentParser = sub.choices["run"]
    return {
        a.option_strings[0]: a.default
        for a in run._actions
        if a.option_strings and a.option_strings[0] != "-h"
    }


def test_the_readme_lists_every_flag_of_run_with_its_default() -> None:
    rows = [
        line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("|")
    ]
    foreign = {f"--{flag.names[0]}" for flag in FOREIGN_FLAGS}
    missing = []
    for option, default in run_options().items():
        if option in foreign:
            continue
        [row] = [r for r in rows if f"`{option}`" in r.split("|")[1]]
        if default is None or default == argparse.SUPPRESS or option in NAMED_DEFAULTS:
            continue
        shown = f"{default:g}" if isinstance(default, float) else str(default).lower()
        if shown and f"`{shown}`" not in row and f"`{shown}s`" not in row:
            missing.append(f"{option} ({shown})")
    assert missing == []


def test_the_migration_guide_lists_every_volcano_flag_accepted_without_effect() -> None:
    guide = (ROOT / "docs" / "migrating-from-volcano.md").read_text(encoding="utf-8")
    section = guide[guide.index("\n## Command-line flags") : guide.index("\n## What Volcano")]
    rows = [line for line in section.splitlines() if line.startswith("| `--")]
    for flag in FOREIGN_FLAGS:
        [row] = [r for r in rows if r.startswith(f"| `--{flag.names[0]}`")]
        assert flag.reason in row


NAMED_DEFAULTS = ("--leader-elect-resource-namespace",)
"""Flags whose default the README states in words (it comes from $POD_NAMESPACE)."""
