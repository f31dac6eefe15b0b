"""Typed reads of raw JSON fields, each failure an `InputError` naming the object and the field.

Owns: how a field of a raw object (a plain dict from YAML or JSON) is read as a str, int, bool,
list, mapping, string map, RFC3339 time or a CRD's ResourceList; object metadata; the wording of
every such error.
Must not: know any Kubernetes kind beyond `metadata`; do I/O; copy whole objects.

Every reader takes the parent mapping, the key, the object's label (`Pod default/p1`) and the
parent's path (`spec.containers[0]`); paths are only formatted when something is wrong.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

from vscheduler.errors import InputError
from vscheduler.model.facts import EPOCH, UNUSUAL_VALUE, FieldWarning, clamped
from vscheduler.model.quantity import parse_resource_list, show as show
from vscheduler.model.resources import Resources

Raw = Mapping[str, Any]
"""A raw Kubernetes object or sub-object, as decoded from YAML or JSON."""

_RFC3339: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})"
)
INT32_MAX: Final = 2**31 - 1
_TIMES_LIMIT: Final = 65536


def join(path: str, key: str) -> str:
    """`path.key`, or `key` at the top."""
    return f"{path}.{key}" if path else key


def error(label: str, path: str, reason: str) -> InputError:
    """`Pod default/p1: spec.priority: must be an integer, got 'high'`."""
    return InputError(f"{label}: {path}: {reason}")


def mapping(parent: Raw, key: str, label: str, path: str) -> Raw:
    """The mapping at `key`; an empty one when absent or null."""
    value = parent.get(key)
    if value is None:
        return {}
    if type(value) is not dict and not isinstance(value, Mapping):
        raise error(label, join(path, key), f"must be a mapping, got {show(value)}")
    return value


def as_mapping(value: object, label: str, path: str) -> Raw:
    """`value` itself, which must be a mapping (a list element)."""
    if type(value) is not dict and not isinstance(value, Mapping):
        raise error(label, path, f"must be a mapping, got {show(value)}")
    return value


def items(parent: Raw, key: str, label: str, path: str) -> Sequence[Any]:
    """The list at `key`; an empty one when absent or null."""
    value = parent.get(key)
    if value is None:
        return ()
    if type(value) is not list and not isinstance(value, list | tuple):
        raise error(label, join(path, key), f"must be a list, got {show(value)}")
    return value


def string(parent: Raw, key: str, label: str, path: str, default: str = "") -> str:
    """The string at `key`; `default` when absent or null."""
    value = parent.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise error(label, join(path, key), f"must be a string, got {show(value)}")
    return value


def choice(
    parent: Raw, key: str, label: str, path: str, allowed: Sequence[str], default: str
) -> str:
    """The string at `key`, which must be one of `allowed`; `default` when absent or null."""
    value = parent.get(key)
    if value is None:
        return default
    if not isinstance(value, str) or value not in allowed:
        listed = ", ".join(a for a in allowed if a) + (" (or empty)" if "" in allowed else "")
        raise error(label, join(path, key), f"must be one of {listed}, got {show(value)}")
    return value


def integer(
    parent: Raw,
    key: str,
    label: str,
    path: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """The integer at `key` (bool and float are not integers); `default` when absent or null."""
    value = parent.get(key)
    if value is None:
        return default
    return checked_int(value, label, join(path, key), minimum=minimum, maximum=maximum)


def is_int(value: object, minimum: int, maximum: int) -> bool:
    """`value` is an integer (not a bool) from `minimum` to `maximum`."""
    return type(value) is int and minimum <= value <= maximum


def checked_int(
    value: object, label: str, path: str, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """`value`, which must be an integer within the bounds given."""
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and (minimum is None or value >= minimum)
        and (maximum is None or value <= maximum)
    ):
        return value
    if minimum is not None and maximum is not None:
        wanted = f"an integer from {minimum} to {maximum}"
    elif minimum is not None:
        wanted = f"an integer >= {minimum}"
    elif maximum is not None:
        wanted = f"an integer <= {maximum}"
    else:
        wanted = "an integer"
    raise error(label, path, f"must be {wanted}, got {show(value)}")


def boolean(parent: Raw, key: str, label: str, path: str, default: bool) -> bool:
    """The bool at `key`; `default` when absent or null."""
    value = parent.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise error(label, join(path, key), f"must be true or false, got {show(value)}")
    return value


def controller_owner(obj: Raw, label: str) -> str:
    """`Kind/name` of the owner reference marked `controller: true`, else empty."""
    metadata = mapping(obj, "metadata", label, "")
    for i, ref in enumerate(items(metadata, "ownerReferences", label, "metadata")):
        path = f"metadata.ownerReferences[{i}]"
        ref_map = as_mapping(ref, label, path)
        if boolean(ref_map, "controller", label, path, default=False):
            return f"{string(ref_map, 'kind', label, path)}/{string(ref_map, 'name', label, path)}"
    return ""


def string_map(parent: Raw, key: str, label: str, path: str) -> dict[str, str]:
    """The string-to-string mapping at `key` (labels, annotations, nodeSelector), copied."""
    value = parent.get(key)
    if value is None:
        return {}
    if type(value) is dict or isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise error(label, join(path, key), f"keys must be strings, got {show(k)}")
            if not isinstance(v, str):
                raise error(label, f"{join(path, key)}.{k}", f"must be a string, got {show(v)}")
        return dict(value)
    raise error(label, join(path, key), f"must be a mapping, got {show(value)}")


def string_list(parent: Raw, key: str, label: str, path: str) -> tuple[str, ...]:
    """The list of strings at `key`; empty when absent or null."""
    values = items(parent, key, label, path)
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise error(label, f"{join(path, key)}[{i}]", f"must be a string, got {show(value)}")
    return tuple(values)


def crd_resources(raw: object, where: str, warnings: list[FieldWarning]) -> Resources:
    """A ResourceList of a Volcano CRD (a Queue's, a PodGroup's) as `Resources`; `where` names
    the field (`Queue q: spec.capability`). Its pattern lets a sign through: a negative amount
    is read as 0 (an `UNUSUAL_VALUE` warning); an amount above the ceiling is read as the
    ceiling (a `QUANTITY_CLAMPED` one)."""
    clamps: list[str] = []
    negatives: list[str] = []
    out = parse_resource_list(raw, where=where, warnings=clamps, negatives=negatives)
    warnings.extend(FieldWarning(UNUSUAL_VALUE, message) for message in negatives)
    warnings.extend(clamped(clamps))
    return out


def timestamp(value: object, label: str, path: str) -> dt.datetime:
    """An RFC3339 time (`2006-01-02T15:04:05Z`), in UTC."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC)
    if isinstance(value, str) and _RFC3339.fullmatch(value):
        try:
            return dt.datetime.fromisoformat(value).astimezone(dt.UTC)
        except ValueError:
            pass
    raise error(
        label, path, f"must be an RFC3339 time like 2006-01-02T15:04:05Z, got {show(value)}"
    )


class Meta(NamedTuple):
    """An object's metadata, as the converters need it."""

    label: str
    """`Kind namespace/name` (or `Kind name` when cluster-scoped), for messages."""
    name: str
    namespace: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    created: dt.datetime
    deleting: bool


def read_meta(
    obj: Raw, kind: str, *, namespaced: bool, times: dict[str, dt.datetime] | None = None
) -> Meta:
    """The metadata of `obj`: name required; namespace `default`; uid `namespace/name` if absent.

    `times`, when given, remembers parsed creation times across objects of one conversion run.
    """
    meta = obj.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        raise InputError(f"{kind} (unnamed): metadata: must be a mapping, got {show(meta)}")
    name = meta.get("name")
    namespace = meta.get("namespace") if namespaced else ""
    if namespaced and namespace is None:
        namespace = "default"
    if not isinstance(name, str) or not name:
        raise InputError(f"{kind} (unnamed): metadata.name: must be a non-empty string")
    if not isinstance(namespace, str) or (namespaced and not namespace):
        raise InputError(f"{kind} {name}: metadata.namespace: must be a non-empty string")
    label = f"{kind} {namespace}/{name}" if namespaced else f"{kind} {name}"
    uid = meta.get("uid")
    if uid is None:
        uid = f"{namespace}/{name}" if namespaced else name
    elif not isinstance(uid, str) or not uid:
        raise error(label, "metadata.uid", f"must be a non-empty string, got {show(uid)}")
    return Meta(
        label=label,
        name=name,
        namespace=namespace,
        uid=uid,
        labels=string_map(meta, "labels", label, "metadata"),
        annotations=string_map(meta, "annotations", label, "metadata"),
        created=_created(meta.get("creationTimestamp"), label, times),
        deleting=meta.get("deletionTimestamp") is not None,
    )


def _created(value: object, label: str, times: dict[str, dt.datetime] | None) -> dt.datetime:
    if value is None:
        return EPOCH
    if times is None or type(value) is not str:
        return timestamp(value, label, "metadata.creationTimestamp")
    when = times.get(value)
    if when is None:
        when = timestamp(value, label, "metadata.creationTimestamp")
        if len(times) < _TIMES_LIMIT:
            times[value] = when
    return when


def salvaged_name(obj: Raw) -> tuple[str, str]:
    """`(namespace, name)` of an object whose metadata may be malformed, as far as they can be
    read: namespace `default` and name "" where they cannot (for a problem report)."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    namespace, name = meta.get("namespace"), meta.get("name")
    return (
        namespace if isinstance(namespace, str) and namespace else "default",
        name if isinstance(name, str) else "",
    )
