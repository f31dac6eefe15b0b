"""Snapshot files and folders become a list of raw objects, each with where it came from.

Owns: finding the files (folders recursively: `.yaml`, `.yml`, `.json`, sorted by path), reading
multi-document YAML (empty documents skipped) and JSON, unwrapping `List` / `*List` documents,
and naming every document (`cluster.yaml#3`, 1-based) in errors.
Must not: interpret objects beyond `kind`, `apiVersion` and `items` (see `snapshot`); this is
the only module of `vscheduler.convert` that does I/O, and it only reads the paths it is given.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Final

import yaml

from vscheduler.errors import InputError

_SUFFIXES: Final = (".yaml", ".yml", ".json")
_TIMESTAMP_TAG: Final = "tag:yaml.org,2002:timestamp"
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc]
    """YAML's safe loader, keeping timestamps as text (as the API server's YAML-to-JSON does)."""

    yaml_implicit_resolvers: ClassVar[dict[str, list[tuple[str, Any]]]] = {
        first: [(tag, pattern) for tag, pattern in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    }


@dataclasses.dataclass(frozen=True, slots=True)
class SourcedObject:
    """A raw object and where it came from: `cluster.yaml#3` (file, 1-based document number)."""

    source: str
    obj: Mapping[str, object]


def load_objects(paths: Sequence[str]) -> list[SourcedObject]:
    """Every object in `paths` (files or folders), in order; raises `InputError` naming the file."""
    out: list[SourcedObject] = []
    for path in paths:
        for file in _files(path):
            out.extend(_load_file(file))
    return out


def _files(path: str) -> list[str]:
    root = Path(path)
    if root.is_dir():
        found = (p for p in root.rglob("*") if p.suffix in _SUFFIXES and p.is_file())
        return sorted(str(p) for p in found)
    if root.is_file():
        return [path]
    raise InputError(f"{path}: no such file or directory")


def _load_file(file: str) -> Iterator[SourcedObject]:
    try:
        text = Path(file).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"{file}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except OSError as err:
        raise InputError(f"{file}: cannot read: {err.strerror}") from None
    documents = (
        _json_documents(file, text) if file.endswith(".json") else _yaml_documents(file, text)
    )
    for number, document in enumerate(documents, start=1):
        if document is not None:
            yield from _objects(document, f"{file}#{number}")


def _json_documents(file: str, text: str) -> list[object]:
    try:
        return [json.loads(text)]
    except json.JSONDecodeError as err:
        raise InputError(
            f"{file}: JSON syntax error at line {err.lineno}, column {err.colno}: {err.msg}"
        ) from None


def _syntax_error_detail(err: yaml.MarkedYAMLError) -> str:
    """` at line L, column C: <problem>`, and where the construct it broke began when that is
    elsewhere: an unclosed quote or bracket is reported where the text ran out. (The policy's
    loader, conf.yaml_text, words its errors the same; conf and convert share no module.)"""
    mark = err.problem_mark or err.context_mark
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = err.problem or err.context or "malformed"
    start = err.context_mark
    if err.problem and err.context and start is not None and start is not mark:
        problem += f" ({err.context} at line {start.line + 1}, column {start.column + 1})"
    return f"{where}: {problem}"


def _yaml_documents(file: str, text: str) -> list[object]:
    documents: list[object] = []
    try:
        for document in yaml.load_all(text, Loader=_Loader):
            documents.append(document)
    except yaml.MarkedYAMLError as err:
        raise InputError(
            f"{file}#{len(documents) + 1}: YAML syntax error{_syntax_error_detail(err)}"
        ) from None
    except yaml.YAMLError as err:
        raise InputError(f"{file}#{len(documents) + 1}: YAML error: {err}") from None
    return documents


def _objects(document: object, source: str) -> Iterator[SourcedObject]:
    """The object a document holds, or the items of a `List` / `<Kind>List` document."""
    obj = _checked(document, source)
    kind = str(obj["kind"])
    if kind != "List" and not (kind.endswith("List") and "items" in obj):
        yield SourcedObject(source, obj)
        return
    items = obj.get("items")
    if items is None:
        return
    if not isinstance(items, list):
        raise InputError(f"{source}: items: must be a list")
    item_kind = kind.removesuffix("List")
    for i, item in enumerate(items):
        if (
            isinstance(item, Mapping)
            and item_kind
            and ("kind" not in item or "apiVersion" not in item)
        ):
            item = {"apiVersion": obj["apiVersion"], "kind": item_kind, **item}
        yield SourcedObject(f"{source}.items[{i}]", _checked(item, f"{source}.items[{i}]"))


def _checked(document: object, source: str) -> Mapping[str, object]:
    if not isinstance(document, Mapping):
        raise InputError(
            f"{source}: must be a mapping (a Kubernetes object), got {_describe(document)}"
        )
    for key in ("apiVersion", "kind"):
        value = document.get(key)
        if not isinstance(value, str) or not value:
            raise InputError(f"{source}: missing '{key}'")
    return document


def _describe(document: object) -> str:
    if isinstance(document, list):
        return "a list"
    return f"'{document}'" if isinstance(document, str) else str(document)
