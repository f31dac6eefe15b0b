"""A reservation ConfigMap becomes a `ReservationBook` (seed 004's reservations).

Owns: the format of one reservation, a JSON object held as the value of one data key:

    {"node": "n1", "pod": "team/train-0", "resources": {"cpu": "2", "memory": "4Gi"},
     "expiresAt": "2026-01-25T12:00:00Z"}

every field required (`resources` a Kubernetes ResourceList naming at least one non-zero amount,
`pod` as `namespace/name`, `expiresAt` RFC3339), no other field allowed; and reading every
entry of a ConfigMap leniently: an entry that does not read becomes a problem naming the
ConfigMap, the key and the field, and is left out, while the others are kept.
Must not: do I/O, raise on a bad entry, or decide what a reservation does (the reservation
plugin does).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from vscheduler.convert.fields import Raw, error, read_meta, show, timestamp
from vscheduler.errors import InputError
from vscheduler.model.quantity import parse_resource_nanos, to_resources
from vscheduler.model.reservation import Reservation, ReservationBook
from vscheduler.model.resources import Resources

KIND: Final = "ConfigMap"
FIELDS: Final = ("node", "pod", "resources", "expiresAt")
"""The fields of one reservation, all required."""


def read_book(obj: Raw) -> ReservationBook:
    """Every reservation of a ConfigMap; raises `InputError` only when its metadata does not
    read (a bad entry, or a `data` that is not a mapping, is a problem in the book)."""
    meta = read_meta(obj, KIND, namespaced=True)
    data = obj.get("data")
    if data is None:
        return ReservationBook(namespace=meta.namespace, name=meta.name)
    if not isinstance(data, Mapping):
        problem = f"{meta.label}: data: must be a mapping, got {show(data)}"
        return ReservationBook(namespace=meta.namespace, name=meta.name, problems=(problem,))
    entries: list[Reservation] = []
    problems: list[str] = []
    for key in sorted(data, key=str):
        try:
            entries.append(read_entry(meta.label, str(key), data[key]))
        except InputError as err:
            problems.append(str(err))
    return ReservationBook(
        namespace=meta.namespace, name=meta.name, entries=tuple(entries), problems=tuple(problems)
    )


def guarded_book(obj: Raw) -> ReservationBook:
    """`read_book`, except that a ConfigMap whose metadata does not read becomes an empty book
    carrying the message. Never raises."""
    try:
        return read_book(obj)
    except InputError as err:
        return ReservationBook(namespace="", name="", problems=(str(err),))


def read_entry(label: str, key: str, value: object) -> Reservation:
    """The reservation held under data key `key` of the ConfigMap `label`."""
    path = f"data.{key}"
    if not isinstance(value, str):
        raise error(label, path, f"must be a JSON object in a string, got {show(value)}")
    try:
        raw = json.loads(value)
    except ValueError as exc:
        raise error(label, path, f"not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise error(label, path, f"must be a JSON object, got {show(raw)}")
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise error(label, f"{path}.{unknown[0]}", f"unknown field; the fields are {_listed()}")
    for name in FIELDS:
        if raw.get(name) is None:
            raise error(label, f"{path}.{name}", "is required")
    return Reservation(
        key=key,
        node=_node(raw["node"], label, f"{path}.node"),
        pod=_pod(raw["pod"], label, f"{path}.pod"),
        resources=_resources(raw["resources"], label, f"{path}.resources"),
        expires_at=timestamp(raw["expiresAt"], label, f"{path}.expiresAt"),
    )


def _node(value: object, label: str, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise error(label, path, f"must be a node name, got {show(value)}")
    return value


def _pod(value: object, label: str, path: str) -> str:
    if isinstance(value, str):
        namespace, slash, name = value.partition("/")
        if slash and namespace and name and "/" not in name:
            return value
    raise error(label, path, f"must be 'namespace/name', got {show(value)}")


def _resources(value: object, label: str, path: str) -> Resources:
    resources = to_resources(parse_resource_nanos(value, where=f"{label}: {path}"))
    if resources.is_empty():
        raise error(label, path, "must reserve a non-zero amount of some resource")
    return resources


def _listed() -> str:
    return ", ".join(FIELDS)
