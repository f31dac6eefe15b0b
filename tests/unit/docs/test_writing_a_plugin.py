"""docs/writing-a-plugin.md's worked example is a plugin that works: its module, loaded as the
guide shows it, imports only the plugin API; its registry line is the shape of the registry's
lines; and the policy the guide shows binds what the guide says, with the plugin and without."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest

from vscheduler import catalog, cycle
from vscheduler.catalog import builtin_registry
from vscheduler.clock import FixedClock
from vscheduler.conf.parse import parse_policy
from vscheduler.errors import PluginArgsError
from vscheduler.framework.registry import Pipeline, Registry, build
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.testing.builders import START, node, pod, podgroup, snapshot

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "writing-a-plugin.md"
ALLOWED_IMPORTS = {"__future__", "collections.abc", "typing", "vscheduler.plugin_api"}


def fenced(lang: str) -> list[str]:
    """The guide's fenced blocks of `lang`, in order."""
    text = GUIDE.read_text(encoding="utf-8")
    return re.findall(rf"^```{lang}\n(.*?)^```$", text, re.DOTALL | re.MULTILINE)


def example_source() -> str:
    return fenced("python")[0]


def registry_line() -> str:
    """The one line the guide adds to the registry: the last entry of its `PLUGINS` block."""
    block = fenced("python")[1]
    return [line for line in block.splitlines(keepends=True) if line.strip().startswith('"')][-1]


def load_example(tmp_path: Path) -> ModuleType:
    path = tmp_path / "smallfirst.py"
    path.write_text(example_source(), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("writing_a_plugin_example", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_imports_only_the_plugin_api_and_the_standard_library() -> None:
    tree = ast.parse(example_source())
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported <= ALLOWED_IMPORTS


def test_the_registry_line_is_shaped_like_the_registrys_own(tmp_path: Path) -> None:
    name = load_example(tmp_path).NAME
    assert registry_line() == f'    "{name}",\n'
    registry_file = Path(inspect.getfile(builtin_registry)).relative_to(ROOT)
    assert f"`{registry_file}`" in GUIDE.read_text(encoding="utf-8")
    assert '    "priority",\n' in (ROOT / registry_file).read_text()
    assert "priority" in catalog.PLUGINS


def gang_and_single() -> ClusterSnapshot:
    return snapshot(
        node("n1").resources(cpu="2", memory="8Gi"),
        podgroup("gang").min_member(2).created(0),
        *(pod(f"gang-{i}").group("gang").requests(cpu="1").created(i) for i in range(2)),
        podgroup("single").min_member(1).created(10),
        pod("single-0").group("single").requests(cpu="2").created(10),
    )


def binds(pipeline: Pipeline) -> dict[str, str]:
    report = cycle.run_cycle(gang_and_single(), pipeline, clock=FixedClock(START))
    return {b.pod: b.node for b in report.result.binds}


def test_with_the_example_plugin_the_single_pod_is_bound(tmp_path: Path) -> None:
    module = load_example(tmp_path)
    builtin = builtin_registry()
    registry = Registry(
        plugins={**builtin.plugins, module.NAME: module.build}, actions=builtin.actions
    )
    [policy] = fenced("yaml")
    parsed = parse_policy(policy, known_actions=registry.actions, known_plugins=registry.plugins)
    assert binds(build(parsed, registry)) == {"default/single-0": "n1"}


def test_without_the_example_plugin_the_older_gang_is_bound() -> None:
    [policy] = fenced("yaml")
    without = policy.replace("- plugins:\n  - name: smallfirst\n", "")
    assert "smallfirst" not in without
    assert binds(catalog.load_pipeline(without)) == {
        "default/gang-0": "n1",
        "default/gang-1": "n1",
    }


def test_the_example_rejects_arguments(tmp_path: Path) -> None:
    module = load_example(tmp_path)
    with pytest.raises(PluginArgsError, match="plugin smallfirst"):
        module.build({"reverse": True})
