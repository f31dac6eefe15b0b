"""The front doors stay true: the package map in `vscheduler/__init__.py` names every subpackage and
top-level module, every built-in action and every CLI command, its layer order is the
import-linter `layers` contract, and the tree in `vscheduler/errors.py` is the exception classes
defined there, each under its real base."""

from __future__ import annotations

import argparse
import inspect
import pkgutil
import re
import tomllib
from pathlib import Path

import vscheduler
from vscheduler import catalog, cli, errors

ROOT = Path(__file__).resolve().parents[3]
ENTRY = re.compile(r"^    (\S+)\s{2,}(\S.*)$")
CONTINUED = re.compile(r"^ {8,}(\S.*)$")


def block_after(doc: str, heading: str) -> list[str]:
    """The indented literal block (`::`) that follows the paragraph starting with `heading`."""
    rest = doc[doc.index(heading) :]
    lines = rest[rest.index("::\n") + 3 :].splitlines()
    block: list[str] = []
    for line in lines[1:] if lines and not lines[0].strip() else lines:
        if line and not line.startswith("    "):
            break
        block.append(line)
    return [line for line in block if line.strip()]


def block_after_tree(doc: str) -> list[str]:
    """The tree's lines: from the root class to the first blank line."""
    lines = doc[doc.index("VSchedulerError\n") :].splitlines()
    return lines[: lines.index("")]


def package_map() -> dict[str, str]:
    """`{"model/": "pure, frozen ...", "cli.py": "argv -> ..."}`, continuation lines joined."""
    entries: dict[str, str] = {}
    last = ""
    for line in block_after(vscheduler.__doc__ or "", "Every subpackage and top-level module"):
        if entry := ENTRY.match(line):
            last = entry.group(1)
            entries[last] = entry.group(2)
        elif more := CONTINUED.match(line):
            entries[last] += " " + more.group(1)
        else:
            raise AssertionError(f"not a map line: {line!r}")
    return entries


def words(text: str) -> set[str]:
    return set(re.findall(r"[\w-]+", text))


def test_the_package_map_names_every_subpackage_and_top_level_module() -> None:
    present = {
        f"{info.name}/" if info.ispkg else f"{info.name}.py"
        for info in pkgutil.iter_modules(vscheduler.__path__)
    }

    assert set(package_map()) == present


def test_the_package_map_names_every_built_in_action() -> None:
    assert set(catalog.builtin_registry().actions) <= words(package_map()["actions/"])


def test_the_package_map_names_every_cli_command() -> None:
    parser = cli._parser()
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))

    assert set(commands.choices) <= words(package_map()["cli.py"])


def test_the_layer_order_is_the_import_linter_layers_contract() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = (c for c in config["contracts"] if c["type"] == "layers")
    expected = [
        " | ".join(part.strip().removeprefix("vscheduler.") for part in layer.split("|"))
        for layer in contract["layers"]
    ]

    documented = [line.strip() for line in block_after(vscheduler.__doc__ or "", "Layers, top")]

    assert documented == expected


def test_the_errors_tree_is_every_exception_class_under_its_real_base() -> None:
    defined = {
        name: cls.__bases__[0].__name__
        for name, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, BaseException) and cls.__module__ == errors.__name__
    }
    drawn: dict[str, str] = {}
    parents: list[str] = []
    for line in block_after_tree(errors.__doc__ or ""):
        name_at = re.search(r"\w", line)
        assert name_at is not None
        depth = name_at.start() // 4
        name = line[name_at.start() :].split()[0]
        parents[depth:] = [name]
        drawn[name] = parents[depth - 1] if depth else "Exception"

    assert drawn == defined
