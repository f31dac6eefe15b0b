"""Mutated real policies through `validate-config` and the PolicyHolder: never a traceback (fuzz).

Every policy the repository ships or tests against (config/, deploy/, examples/, Volcano's
policies in tests/fixtures/policies) is mutated the way people and tools break YAML: keys
deleted or misspelt, values of the wrong type, odd strings and unicode, huge and non-finite
numbers, values nested in lists or mappings, plugins and entries duplicated, unknown flags,
plugin arguments of every type, the text cut short. `validate-config` must answer OK (with
warnings) or list errors that each name their place, exit 0 or 1, and print no traceback; the
PolicyHolder must keep the last good policy in force whenever a mutation does not load. The
example count comes from the hypothesis profile (tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import copy
import io
import re
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings, strategies as st

from vscheduler import catalog, cli
from vscheduler.conf.arguments import ArgumentReader
from vscheduler.errors import PolicyError
from vscheduler.runtime.policy import PolicyHolder

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted(
    [
        ROOT / "config" / "default-policy.yaml",
        ROOT / "deploy" / "policy" / "volcano-scheduler.conf",
        *(ROOT / "examples").glob("*/scheduler.conf"),
        *(ROOT / "tests" / "fixtures" / "policies").glob("*.yaml"),
    ]
)
TEXTS = {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in SOURCES}
DOCUMENTS = {name: yaml.safe_load(text) for name, text in TEXTS.items()}


def loads(text: str) -> bool:
    try:
        catalog.load_pipeline(text)
    except PolicyError:
        return False
    return True


VALID = sorted(name for name, text in TEXTS.items() if loads(text))

ODD_TEXT = st.sampled_from(
    [
        "",
        " ",
        "~",
        "null",
        "yes",
        "off",
        "y",
        "1e400",
        "-0",
        "0x1F",
        "NaN",
        ".inf",
        "-.inf",
        "9Ei",
        "1e18",
        "10P",
        "0.0001",
        "1s",
        "-5m",
        "1h30m",
        "500ms",
        "2024-01-01",
        "1:30",
        "gang",
        "predicates",
        "enqueue, allocate",
        "allocate,,allocate",
        "enablePredicate",
        "arguments",
        "\u200b",
        "ｇａｎｇ",
        "gäng",
        "名前",
        "🙂",
        "a" * 300,
        "9" * 40,
        "true",
        "False",
        "\t\n",
        "{",
        "- x",
    ]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([2**63, 2**64, -(2**63) - 1, 10**30, 10**300, 10**400, -(10**400), 0, -1])
    | st.floats(allow_nan=True, allow_infinity=True)
    | ODD_TEXT
    | st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(ODD_TEXT | st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
WRITTEN: dict[str, set[str]] = {}
"""The argument keys the shipped policies give each plugin and action."""
for _document in DOCUMENTS.values():
    for _tier in _document.get("tiers") or []:
        for _plugin in _tier.get("plugins") or []:
            WRITTEN.setdefault(_plugin["name"], set()).update(
                map(str, _plugin.get("arguments") or {})
            )
    for _entry in _document.get("configurations") or []:
        WRITTEN.setdefault(_entry["name"], set()).update(map(str, _entry.get("arguments") or {}))
ARGUMENT_KEYS = st.sampled_from(
    sorted(
        {
            str(key)
            for document in DOCUMENTS.values()
            for tier in (document.get("tiers") or [])
            for plugin in (tier.get("plugins") or [])
            for key in (plugin.get("arguments") or {})
        }
        | {
            str(key)
            for document in DOCUMENTS.values()
            for entry in (document.get("configurations") or [])
            for key in (entry.get("arguments") or {})
        }
    )
)
FLAGS = st.sampled_from(
    ["enableJobOrder", "enablePredicate", "enabledVictim", "enableVictim", "EnabledClusterOrder"]
)


def paths(node: object, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in the document, the root included."""
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += paths(value, (*prefix, index))
    return found


def at(document: object, path: tuple[Any, ...]) -> Any:
    for step in path:
        document = document[step]  # type: ignore[index]
    return document


@st.composite
def mutated(draw: st.DrawFn, names: list[str]) -> str:
    """A policy text: a shipped policy with one to four mutations."""
    document: Any = copy.deepcopy(DOCUMENTS[draw(st.sampled_from(names))])
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        document = mutate(draw, document)
    text = yaml.safe_dump(document, allow_unicode=True, sort_keys=False)
    if draw(st.integers(min_value=0, max_value=9)) == 0:  # cut short, or a raw line appended
        if draw(st.booleans()):
            text = text[: draw(st.integers(min_value=0, max_value=len(text)))]
        else:
            text += draw(
                st.sampled_from(
                    [
                        "actions: x\n",
                        "tiers:\n  - {",
                        "? [a]\n: 1\n",
                        "!!python/object:os.system {}\n",
                        "x: " + "9" * 5000 + "\n",
                        "&a [*a]\n",
                    ]
                )
            )
    return text


def mutate(draw: st.DrawFn, document: Any) -> Any:
    path = draw(st.sampled_from(paths(document)))
    target = at(document, path)
    operation = draw(
        st.sampled_from(["delete", "replace", "wrap", "duplicate", "add", "rename", "arguments"])
    )
    if operation == "replace" or (not path and operation in ("delete", "duplicate")):
        return put(document, path, draw(VALUES))
    if operation == "delete":
        del at(document, path[:-1])[path[-1]]
        return document
    if operation == "wrap":
        return put(document, path, [target] if draw(st.booleans()) else {"name": target})
    if operation == "duplicate":
        parent = at(document, path[:-1])
        if isinstance(parent, list):
            parent.append(copy.deepcopy(target))
        else:
            parent[draw(ODD_TEXT | FLAGS)] = copy.deepcopy(target)
        return document
    if operation == "add" and isinstance(target, dict):
        target[draw(ODD_TEXT | FLAGS | ARGUMENT_KEYS)] = draw(VALUES)
        return document
    if operation == "rename" and path and isinstance(at(document, path[:-1]), dict):
        parent = at(document, path[:-1])
        key = path[-1]
        renamed = draw(st.sampled_from([str(key).upper(), f"{key}s", str(key)[:-1], f" {key}"]))
        parent[renamed] = parent.pop(key)
        return document
    if isinstance(target, dict):
        arguments = draw(st.dictionaries(ARGUMENT_KEYS, VALUES, min_size=1, max_size=4))
        target["arguments"] = arguments
    return document


def put(document: Any, path: tuple[Any, ...], value: object) -> Any:
    if not path:
        return value
    at(document, path[:-1])[path[-1]] = value
    return document


def keys_read() -> dict[str, list[str]]:
    """The argument keys each plugin and action reads (those it asks for given no arguments)."""
    registry = catalog.builtin_registry()
    asked: list[str] = []
    original, original_raw = ArgumentReader._present, ArgumentReader.raw

    def present(self: ArgumentReader, key: str) -> bool:
        asked.append(key)
        return original(self, key)

    def raw(self: ArgumentReader, key: str) -> object | None:
        asked.append(key)
        return original_raw(self, key)

    out: dict[str, list[str]] = {}
    with (
        mock.patch.object(ArgumentReader, "_present", present),
        mock.patch.object(ArgumentReader, "raw", raw),
    ):
        builders: list[tuple[str, Any]] = [*registry.plugins.items(), *registry.actions.items()]
        for name, builder in builders:
            asked.clear()
            builder({})
            out[name] = sorted(set(asked) | set(WRITTEN.get(name, ()))) or ["x"]
    return out


KEYS_READ = keys_read()


@st.composite
def with_odd_arguments(draw: st.DrawFn, names: list[str]) -> str:
    """A valid shipped policy whose one plugin or action gets arguments of every type."""
    document: Any = copy.deepcopy(DOCUMENTS[draw(st.sampled_from(names))])
    plugins: list[Any] = [
        p for tier in document.get("tiers") or [] for p in tier.get("plugins") or []
    ]
    owner: dict[str, Any]
    pick_plugin: bool = draw(st.booleans())
    if plugins and pick_plugin:
        owner = draw(st.sampled_from(plugins))
    else:
        owner = {"name": draw(st.sampled_from(sorted(catalog.builtin_registry().actions)))}
        document.setdefault("configurations", [])
        document["configurations"] = [
            c for c in document["configurations"] if c.get("name") != owner["name"]
        ] + [owner]
    keys = st.sampled_from(KEYS_READ[owner["name"]])
    owner["arguments"] = draw(st.dictionaries(keys, VALUES, min_size=1, max_size=3))
    return yaml.safe_dump(document, allow_unicode=True, sort_keys=False)


FOUND = [
    "tiers:\n- plugins:\n  - name: gang\nx: " + "9" * 5000 + "\n",
    'actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  ? "\\t\\n"\n  : null\n',
    "actions: allocate\ntiers:\n- plugins:\n  - name: overcommit\n    arguments:\n"
    "      overcommit-factor: 1" + "0" * 400 + "\n",
    "actions: allocate\ntiers:\n- plugins:\n  - name: binpack\n    arguments:\n"
    "      binpack.weight: 1" + "0" * 30 + "\n",
    "actions: allocate\ntiers:\n- plugins:\n  - name: sla\n    arguments:\n"
    "      sla-waiting-time: " + "9" * 400 + "h\n",
    "&a [*a]\n",
]
"""Crashes the fuzzing found (each fixed), replayed on every run."""


def found(test: Any) -> Any:
    for text in FOUND:
        test = example(text=text)(test)
    return test


ERROR_LINE = re.compile(r"  \S.*?: .+")


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mutations") / "policy.yaml"


@pytest.mark.timeout(300)
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mutated(sorted(TEXTS)) | with_odd_arguments(VALID))
@found
def test_validate_config_answers_every_mutated_policy_with_ok_or_errors_naming_their_place(
    policy_file: Path, text: str
) -> None:
    policy_file.write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["validate-config", str(policy_file)])
    lines = out.getvalue().splitlines()
    assert err.getvalue() == ""
    if code == 0:
        assert lines[-1] == f"{policy_file}: OK"
        assert all(line.startswith(f"{policy_file}: warning: ") for line in lines[:-1])
        return
    assert code == 1
    header, *errors = lines
    assert header == f"{policy_file}: {len(errors)} error(s):"
    assert errors
    assert [line for line in errors if not ERROR_LINE.fullmatch(line)] == []


@pytest.mark.timeout(300)
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(good=st.sampled_from(VALID), text=mutated(VALID) | with_odd_arguments(VALID))
@example(good="config/default-policy.yaml", text=FOUND[0])
@example(good="config/default-policy.yaml", text=FOUND[2])
def test_the_policy_holder_keeps_the_last_good_policy_when_a_mutation_does_not_load(
    good: str, text: str
) -> None:
    holder = PolicyHolder()
    assert holder.offer(TEXTS[good], good)
    before, generation = holder.current, holder.generation
    if holder.offer(text, "mutated"):
        assert holder.source == "mutated"
        assert holder.generation == generation + (text != TEXTS[good])
        return
    assert holder.current is before
    assert (holder.source, holder.generation) == (good, generation)
    with pytest.raises(PolicyError) as rejected:
        catalog.load_pipeline(text)
    assert rejected.value.errors


def test_the_mutations_start_from_every_shipped_policy_and_most_of_them_load() -> None:
    assert len(TEXTS) == len(SOURCES) >= 14
    assert len(VALID) >= 12
