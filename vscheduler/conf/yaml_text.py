"""YAML text into plain Python values, typed as Volcano's YAML library (yaml.v2) types them.

Syntax errors and duplicate keys are reported by line and column instead of raised. Volcano uses
gopkg.in/yaml.v2, which follows YAML 1.1 like PyYAML's SafeLoader, with differences that matter for
a policy: `y`/`n` are booleans too, `1e3` is a number, dates (`2024-01-01`) and `1:30` stay strings,
and a map's keys keep the text they were written with (Volcano reads them into Go strings). Owns
only the loading; what the values mean is `parse`'s business.

Whatever the text, loading never raises: besides syntax errors, a value its explicit tag cannot
take (`!!int abc`, an integer of more than 4300 digits), nesting too deep for the parser, an alias
inside the node it names (a document containing itself) and aliases expanding to more than
`MAX_VALUES` values are problems reported with their place where there is one.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Final

import yaml

_TIMESTAMP_TAG: Final = "tag:yaml.org,2002:timestamp"
_INT_TAG: Final = "tag:yaml.org,2002:int"
_FLOAT_TAG: Final = "tag:yaml.org,2002:float"
_BOOL_TAG: Final = "tag:yaml.org,2002:bool"
_MERGE_TAG: Final = "tag:yaml.org,2002:merge"
_STR_TAG: Final = "tag:yaml.org,2002:str"
# YAML 1.1 numbers without the sexagesimal forms (`1:30`), which yaml.v2 leaves as strings.
_INT_PATTERN: Final = re.compile(
    r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$"
)
_FLOAT_PATTERN: Final = re.compile(
    r"^(?:[-+]?(?:[0-9][0-9_]*\.[0-9_]*|\.[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_SHORT_BOOL_PATTERN: Final = re.compile(r"^(?:y|Y|n|N)$")
MAX_VALUES: Final = 100_000
"""The most values a document may hold once its aliases are expanded (a policy holds hundreds)."""


def _yaml_v2_resolvers() -> dict[Any, list[tuple[str, re.Pattern[str]]]]:
    """SafeLoader's implicit resolvers, retuned to type scalars the way yaml.v2 does."""
    replaced = {_TIMESTAMP_TAG, _INT_TAG, _FLOAT_TAG}
    table: dict[Any, list[tuple[str, re.Pattern[str]]]] = {
        first: [(tag, rx) for tag, rx in entries if tag not in replaced]
        for first, entries in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    for first in "-+0123456789":
        table.setdefault(first, []).append((_INT_TAG, _INT_PATTERN))
    for first in "-+.0123456789":
        table.setdefault(first, []).append((_FLOAT_TAG, _FLOAT_PATTERN))
    for first in "yYnN":
        table.setdefault(first, []).append((_BOOL_TAG, _SHORT_BOOL_PATTERN))
    return table


class _PolicyLoader(yaml.SafeLoader):
    """A SafeLoader typing scalars like yaml.v2 and noting duplicate keys instead of hiding them.

    Mapping keys are always strings, spelled as written (`n:` stays "n", `1:` is "1"): Volcano
    reads its maps' keys into Go strings, which keep the key's text.
    """

    # PyYAML keeps these tables on the class; they are built once and never changed.
    yaml_implicit_resolvers = _yaml_v2_resolvers()
    bool_values = {**yaml.SafeLoader.bool_values, "y": True, "n": False}  # noqa: RUF012

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[str] = []

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """A value, or a ConstructorError at the node for a value its tag cannot take."""
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as exc:
            tag = str(node.tag).rsplit(":", 1)[-1]
            reason = str(exc)
            if "Exceeds the limit" in reason:
                reason = "more than 4300 digits"
            problem = f"invalid !!{tag} value: {reason}"
            raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark) from None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[str] = set()
        for index, (key_node, value_node) in enumerate(node.value):
            if key_node.tag == _MERGE_TAG or not isinstance(key_node, yaml.ScalarNode):
                continue
            if key_node.tag != _STR_TAG:
                key_node = yaml.ScalarNode(
                    _STR_TAG, key_node.value, key_node.start_mark, key_node.end_mark
                )
                node.value[index] = (key_node, value_node)
            if key_node.value in seen:
                mark = key_node.start_mark
                where = f"line {mark.line + 1}, column {mark.column + 1}"
                self.duplicates.append(f"{where}: duplicate key {key_node.value!r}")
            seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


@dataclass(frozen=True, slots=True)
class LoadedYaml:
    """A loaded document (None for an empty text) and the problems found while loading it.

    `readable` is False when the text is not YAML at all; `document` is then None.
    """

    document: object
    problems: tuple[str, ...]
    readable: bool


def syntax_error_detail(exc: yaml.MarkedYAMLError) -> str:
    """` at line L, column C: <problem>`, and where the construct it broke began when that is
    elsewhere (`(while scanning a quoted scalar at line 1, column 10)`): an unclosed quote or
    bracket is reported where the text ran out, far from the line to fix."""
    mark = exc.problem_mark or exc.context_mark
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    detail = exc.problem or exc.context or "malformed YAML"
    start = exc.context_mark
    if exc.problem and exc.context and start is not None and start is not mark:
        detail += f" ({exc.context} at line {start.line + 1}, column {start.column + 1})"
    return f"{where}: {detail}"


def load_yaml(text: str) -> LoadedYaml:
    """Load one YAML document, reporting syntax errors and duplicate keys instead of raising."""
    loader: _PolicyLoader | None = None
    try:
        loader = _PolicyLoader(text)
        document = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        return LoadedYaml(None, (f"YAML syntax error{syntax_error_detail(exc)}",), readable=False)
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (NUL, ...)
        problem = f"YAML error at character {exc.position}: {str(exc).splitlines()[0]}"
        return LoadedYaml(None, (problem,), readable=False)
    except yaml.YAMLError as exc:
        return LoadedYaml(None, (f"YAML error: {exc}",), readable=False)
    except RecursionError:
        return LoadedYaml(None, ("YAML error: nested too deeply",), readable=False)
    finally:
        if loader is not None:
            loader.dispose()
    shape = _shape_problem(document)
    if shape is not None:
        return LoadedYaml(None, (shape,), readable=False)
    return LoadedYaml(document, tuple(loader.duplicates), readable=True)


def _shape_problem(document: object) -> str | None:
    """A document containing itself, or expanding to too many values (alias bombs), else None."""
    count = 0
    stack: list[tuple[object, frozenset[int]]] = [(document, frozenset())]
    while stack:
        value, ancestors = stack.pop()
        count += 1
        if count > MAX_VALUES:
            return f"YAML error: the aliases expand to more than {MAX_VALUES} values"
        if isinstance(value, dict | list | set):
            if id(value) in ancestors:
                return "YAML error: an alias refers to a node that contains it"
            inner = ancestors | {id(value)}
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, inner) for item in items)
    return None
