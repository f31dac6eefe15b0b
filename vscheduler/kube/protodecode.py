"""Pods read from Kubernetes' protobuf into the JSON-shaped mappings the converters take (the
watch stream around them: `kube.protowatch`).

Why: a pod watch in JSON is encoded by the API server for us alone. The API server caches one
encoding per object, event type and content type, and shares it among the watchers that ask
for the same; the controller-manager watches every pod in protobuf, and kube-scheduler does too,
so its pod watch costs the API server next to nothing, while our JSON watch had every create
and every bind encoded for us alone (a W3 run's API server profile: the JSON encoding of watch
events 1.59 s under us against 0.74 s under kube-scheduler, all of it kwok's; docs/design.md,
twenty-first session).

A Pod is read through `podschema` (generated from k8s.io/api `generated.proto` and
`types.go`), so its mapping has
the keys its JSON has: a field that JSON leaves out when empty (`omitempty`, not a pointer) is
left out when it is "", 0 or false; an inlined struct's keys go into its parent; `metav1.Time`
is RFC 3339 in seconds (null when zero), `MicroTime` in microseconds, a `Quantity` its string,
an `IntOrString` its int or string, strings invalid UTF-8 replaced as JSON does. Differences
left: the fields no fact of a pod reads are not decoded at all (`podschema.SKIPPED`:
`managedFields`, the spec's and containers' fields `convert.pod` lists as unread, the status's
container statuses and addresses; and of a placed pod's status all but `PLACED_STATUS`: most of
a running pod's bytes; `as_decoded` gives the same of a JSON pod), a list or map JSON always
writes is missing rather than empty or null when it has no entry (every reader treats them
alike), and fields newer than the schema are skipped, as every protobuf reader skips them. A
spec is read once per distinct bytes (`pod_message`). A reader in Python costs more than
`orjson`: a running bench pod 17.1 µs against 11.7 µs, a pending one 12.2 against 6.6 µs when
its spec was read before; a new pod's spec has not been (see `pod_message`), and reads at ~33 µs
where orjson takes ~7. The API server's CPU it saves is the reason.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from vscheduler.kube import podschema as ps
from vscheduler.kube.protobuf import ProtobufError, read_varint as _varint, rfc3339

_STRING: Final = ps.STRING
_MESSAGE: Final = ps.MESSAGE
_MAP: Final = ps.MAP
_INT: Final = ps.INT
_BOOL: Final = ps.BOOL
_QUANTITY: Final = ps.QUANTITY
_TIME: Final = ps.TIME
_MICROTIME: Final = ps.MICROTIME
_INLINE: Final = ps.INLINE
_REPEATED: Final = ps.REPEATED
_OMIT_ZERO: Final = ps.OMIT_ZERO

Spec = tuple[str, int, Any, int]
"""A compiled field: (JSON key, kind, nested fields or map types, flags)."""
_SKIP: Final = 1 << 8
_UNKNOWN: Final[Spec] = ("", 0, None, _SKIP)
"""A field the schema does not list (newer than it, or left out): read past, not kept."""
_SIGN: Final = 1 << 63
_WRAP: Final = 1 << 64


def _compile() -> dict[str, dict[int, Spec]]:
    compiled: dict[str, dict[int, Spec]] = {name: {} for name in ps.MESSAGES}
    for name, fields in ps.MESSAGES.items():
        table = compiled[name]
        for number, (key, kind, sub, flags) in fields.items():
            nested: Any = None
            if kind == ps.MESSAGE:
                nested = compiled[sub]
            elif kind == ps.MAP:
                _, value_kind, value_sub = sub.split(",")
                nested = (getattr(ps, value_kind), compiled.get(value_sub))
            table[number] = (key, kind, nested, flags)
    return compiled


_MESSAGES: Final = _compile()
POD: Final = _MESSAGES["core.v1.Pod"]


def message(buf: bytes, pos: int, end: int, fields: dict[int, Spec]) -> dict[str, Any]:
    """The message in `buf[pos:end]` as a mapping keyed as its JSON is. One loop for every
    field of a pod (a call per field would cost a fifth more): strings and messages here, the
    other length-delimited kinds in `_store`, varints and fixed widths in `_number`."""
    out: dict[str, Any] = {}
    value: Any
    while pos < end:
        tag = buf[pos]
        pos += 1
        if tag > 0x7F:  # fields past 15: most tags are two bytes
            if pos < end and buf[pos] < 0x80:
                tag = tag & 0x7F | buf[pos] << 7
                pos += 1
            else:
                tag, pos = _varint(buf, pos - 1)
        spec = fields.get(tag >> 3, _UNKNOWN)
        if tag & 7 != 2:
            value, pos = _number(buf, pos, end, tag, spec)
            key, _, _, flags = spec
        else:
            size = buf[pos] if pos < end else 0x80
            pos += 1
            if size > 0x7F:
                size, pos = _varint(buf, pos - 1)
            stop = pos + size
            if stop > end:
                raise ProtobufError("a field runs past its message")
            key, kind, nested, flags = spec
            if kind == _STRING:
                value = buf[pos:stop].decode("utf-8", "replace")
            elif kind == _MESSAGE and not flags & _INLINE:
                value = message(buf, pos, stop, nested)
            else:
                _store(out, spec, buf, pos, stop)
                pos = stop
                continue
            pos = stop
        if flags:
            _put(out, key, value, flags)
        else:
            out[key] = value
    return out


def _put(out: dict[str, Any], key: str, value: Any, flags: int) -> None:
    """`value` into `out` as a field with `flags` reads: left out when zero and JSON omits
    it so, or when the field is unknown; appended when repeated."""
    if flags & _SKIP or (flags & _OMIT_ZERO and not value):
        return
    if flags & _REPEATED:
        listed = out.get(key)
        if listed is None:
            out[key] = [value]
        else:
            listed.append(value)
    else:
        out[key] = value


def _number(buf: bytes, pos: int, end: int, tag: int, spec: Spec) -> tuple[int | float | bool, int]:
    """A varint or fixed-width field's value (as its kind reads it) and the position after it."""
    wire = tag & 7
    if wire == 0:
        value = buf[pos] if pos < end else 0x80
        pos += 1
        if value > 0x7F:
            value, pos = _varint(buf, pos - 1)
        if pos > end:
            raise ProtobufError("a field runs past its message")
        if spec[1] == _BOOL:
            return value != 0, pos
        return (value - _WRAP if value >= _SIGN else value), pos
    width = {1: 8, 5: 4}.get(wire)
    if width is None:
        raise ProtobufError(f"wire type {wire} (field {tag >> 3}) is not one Kubernetes uses")
    if pos + width > end:
        raise ProtobufError("a field runs past its message")
    if not spec[3] & _SKIP:  # no field of a Pod is fixed-width: only an unknown one is
        raise ProtobufError(f"field {tag >> 3} ({spec[0]}) came fixed-width")
    return 0, pos + width


def _store(out: dict[str, Any], spec: Spec, buf: bytes, pos: int, end: int) -> None:
    """A length-delimited field other than a string or a plain message, into `out`: an inlined
    message's keys, a map's entry, packed integers, or a kind with its own JSON form."""
    key, kind, nested, flags = spec
    if flags & _SKIP:
        return
    if kind == _MESSAGE:  # inlined
        out.update(message(buf, pos, end, nested))
        return
    if kind == _MAP:
        entry_key, entry_value = _entry(buf, pos, end, nested)
        table = out.get(key)
        if table is None:
            out[key] = table = {}
        table[entry_key] = entry_value
        return
    value = _special(kind, buf, pos, end)
    if kind == _INT:  # packed: every varint in it
        if flags & _REPEATED:
            out.setdefault(key, []).extend(value)
            return
        value = value[-1] if value else 0
    _put(out, key, value, flags)


def _entry(buf: bytes, pos: int, end: int, types: tuple[int, Any]) -> tuple[str, Any]:
    """A map entry (key = 1, value = 2): its key (a string in every map of a Pod) and value."""
    value_kind, _ = types
    key = ""
    value: Any = "" if value_kind == ps.STRING else None
    while pos < end:
        tag = buf[pos]
        size = buf[pos + 1] if pos + 1 < end else 0x80
        pos += 2
        if tag > 0x7F or size > 0x7F:
            tag, pos = _varint(buf, pos - 2)
            size, pos = _varint(buf, pos)
        stop = pos + size
        if stop > end:
            raise ProtobufError("a map entry runs past its end")
        if tag == 0x0A:
            key = buf[pos:stop].decode("utf-8", "replace")
        elif tag == 0x12:
            value = (
                buf[pos:stop].decode("utf-8", "replace")
                if value_kind == _STRING
                else _special(value_kind, buf, pos, stop)
            )
        elif tag & 7 != 2:
            raise ProtobufError(f"a map entry's field {tag >> 3} is not length-delimited")
        pos = stop
    if value is None and value_kind == ps.QUANTITY:
        value = "0"
    return key, value


def _special(kind: int, buf: bytes, pos: int, end: int) -> Any:
    """A length-delimited field of a kind with its own JSON form."""
    reader = _READERS.get(kind)
    if reader is None:
        raise ProtobufError(f"field kind {kind} is not length-delimited")
    return reader(kind, buf, pos, end)


def _quantity(_kind: int, buf: bytes, pos: int, end: int) -> str:
    text = "0"
    for number, first, last in length_delimited(buf, pos, end):
        if number == 1:
            text = buf[first:last].decode("utf-8", "replace")
    return text


def _time(kind: int, buf: bytes, pos: int, end: int) -> str | None:
    """A Time (RFC 3339, seconds) or MicroTime (microseconds); the zero time (no bytes) null."""
    if pos == end:
        return None
    seconds = nanos = 0
    while pos < end:
        tag, pos = _varint(buf, pos)
        value, pos = _varint(buf, pos)
        if value >= _SIGN:
            value -= _WRAP
        if tag == 0x08:
            seconds = value
        elif tag == 0x10:
            nanos = value
        elif tag & 7:
            raise ProtobufError(f"a timestamp's field {tag >> 3} is not a varint")
    stamp = rfc3339(seconds)
    if kind != _TIME and stamp is not None:
        stamp = f"{stamp[:-1]}.{nanos // 1000:06d}Z"
    return stamp


def _int_or_string(_kind: int, buf: bytes, pos: int, end: int) -> int | str:
    fields = message(buf, pos, end, _INT_OR_STRING)
    value: int | str = (
        fields.get("strVal", "") if fields.get("type") == 1 else fields.get("intVal", 0)
    )
    return value


def _packed(_kind: int, buf: bytes, pos: int, end: int) -> list[int]:
    values = []
    while pos < end:
        value, pos = _varint(buf, pos)
        values.append(value - _WRAP if value >= _SIGN else value)
    return values


_READERS: Final[dict[int, Callable[[int, bytes, int, int], Any]]] = {
    ps.QUANTITY: _quantity,
    ps.TIME: _time,
    ps.MICROTIME: _time,
    ps.INTORSTRING: _int_or_string,
    ps.INT: _packed,
}
_INT_OR_STRING: Final[dict[int, Spec]] = {
    1: ("type", ps.INT, None, 0),
    2: ("intVal", ps.INT, None, 0),
    3: ("strVal", ps.STRING, None, 0),
}


def pod(data: bytes) -> dict[str, Any]:
    """A Pod's message (no envelope) as its JSON mapping, without kind and apiVersion."""
    return pod_message(data, 0, len(data))


def pod_message(buf: bytes, pos: int, end: int) -> dict[str, Any]:
    """The Pod message in `buf[pos:end]`, its spec read once per distinct bytes: a pod's
    later events (its status changing, once placed) repeat its spec. Pods of one template do
    not share bytes where the API server's ServiceAccount admission names each pod's token
    volume anew (its `volumes` and `volumeMounts`, fields no fact reads, are in the bytes): a
    new pod's ADDED event is read in full; its bind's MODIFIED (a new `nodeName`) from the
    spec its ADDED event read (`_bound_spec`). The spec mapping is shared by every event with
    those bytes: like everything the watch hands on, it is read, never changed."""
    out: dict[str, Any] = {}
    for number, first, last in length_delimited(buf, pos, end):
        if number == 2:
            key = buf[first:last]
            spec = _SPECS.get(key)
            if spec is None:
                spec = _bound_spec(buf, first, last) or message(buf, first, last, _POD_SPEC)
                if len(_SPECS) >= _SPECS_HELD:
                    _SPECS.clear()
                _SPECS[key] = spec
            out["spec"] = spec
        elif number == 1:
            out["metadata"] = message(buf, first, last, _OBJECT_META)
        elif number == 3:
            placed = "spec" in out and out["spec"].get("nodeName")
            out["status"] = (
                _placed_status(buf, first, last)
                if placed
                else message(buf, first, last, _POD_STATUS)
            )
    return out


def _bound_spec(buf: bytes, pos: int, end: int) -> dict[str, Any] | None:
    """The spec in `buf[pos:end]` read from the one read before whose bytes differ only in
    naming no node (an empty `nodeName`, which gogo always writes): a bind's echo repeats its
    pending pod's spec with the node set, and that spec's bytes were read moments before. The
    mapping is the pending one's with `nodeName` in its place among the keys (the values
    shared), as reading the bytes in full gives it. None when the spec names no node, the
    fields before it are not in order, or no such spec was read (then it is read in full)."""
    for number, first, last in length_delimited(buf, pos, end):
        if number > _NODE_NAME_FIELD:
            return None
        if number < _NODE_NAME_FIELD:
            continue
        if first == last:
            return None  # no node named
        field = first - 1 - ((last - first).bit_length() + 6) // 7  # its tag and its length
        if field < pos or buf[field] != _NODE_NAME_TAG or _varint(buf, field + 1)[1] != first:
            return None  # the field's head not as gogo writes it
        pending = _SPECS.get(buf[pos:field] + _NO_NODE + buf[last:end])
        if pending is None or "nodeName" in pending:
            return None
        return _with_node(pending, buf[first:last].decode("utf-8", "replace"))
    return None


def _with_node(spec: dict[str, Any], node_name: str) -> dict[str, Any]:
    """`spec` (naming no node) with `nodeName` among its keys where its field comes."""
    out: dict[str, Any] = {}
    for key, value in spec.items():
        if "nodeName" not in out and key not in _BEFORE_NODE_NAME:
            out["nodeName"] = node_name
        out[key] = value
    out.setdefault("nodeName", node_name)
    return out


def _placed_status(buf: bytes, pos: int, end: int) -> dict[str, Any]:
    """A placed pod's status, as `PLACED_STATUS` says: its fields but the conditions read as
    a message, and of its conditions only the `PodScheduled` ones, found by their first bytes
    (the API server writes a message's fields in field order: `type` first). Reading every
    condition of a running pod cost three times what the rest of its status does. One pass:
    each field is found by its number and read as `message` reads it (an empty phase or
    nomination left out, the last of a repeated scalar kept)."""
    status: dict[str, Any] = {}
    for number, first, last in length_delimited(buf, pos, end):
        if number == _CONDITIONS:
            if buf.startswith(_SCHEDULED_TYPE, first):
                status.setdefault("conditions", []).append(message(buf, first, last, _CONDITION))
        elif number == _START_TIME:
            status["startTime"] = _time(_TIME, buf, first, last)
        elif number in _PLACED_TEXTS:
            text = buf[first:last].decode("utf-8", "replace")
            if text:
                status[_PLACED_TEXTS[number]] = text
    return status


_POD_SPEC: Final = _MESSAGES["core.v1.PodSpec"]
_OBJECT_META: Final = _MESSAGES["meta.v1.ObjectMeta"]
_POD_STATUS: Final = _MESSAGES["core.v1.PodStatus"]
PLACED_STATUS: Final = ("phase", "startTime", "nominatedNodeName", "conditions")
"""Of a placed pod's status, what is read: the rest (container statuses, addresses: most of a
running pod's bytes) is neither converted nor kept. Of the conditions only the `PodScheduled`
ones are read, for the time cdp protects a running pod by (`convert.cooldown.scheduled_at`;
`cache.entries.kept_pod` keeps no other)."""
_CONDITIONS, _START_TIME = (
    next(n for n, f in _POD_STATUS.items() if f[0] == key) for key in ("conditions", "startTime")
)
_PLACED_TEXTS: Final = {
    n: f[0] for n, f in _POD_STATUS.items() if f[0] in ("phase", "nominatedNodeName")
}
"""The placed status's strings (each left out when empty), by field number."""
_CONDITION: Final = _MESSAGES["core.v1.PodCondition"]
_SCHEDULED_TYPE: Final = b"\x0a\x0cPodScheduled"
"""The first bytes of a `PodScheduled` condition: field 1 (`type`), 12 bytes, the name."""
_NODE_NAME_FIELD: Final = next(n for n, f in _POD_SPEC.items() if f[0] == "nodeName")
_NODE_NAME_TAG: Final = _NODE_NAME_FIELD << 3 | 2
_NO_NODE: Final = bytes((_NODE_NAME_TAG, 0))
"""A spec's `nodeName` field when it names no node (gogo writes the empty string)."""
_BEFORE_NODE_NAME: Final = frozenset(f[0] for n, f in _POD_SPEC.items() if n < _NODE_NAME_FIELD)
_SPECS: dict[bytes, dict[str, Any]] = {}
"""Specs read, by their bytes (`pod_message`); emptied when `_SPECS_HELD` are held."""
_SPECS_HELD: Final = 8192


def as_decoded(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What `pod` reads from the protobuf of the pod whose JSON is `obj`: `obj` (copied)
    without the fields `podschema.SKIPPED` leaves out. (The tests compare with it.)"""
    out = copy.deepcopy(dict(obj))
    spec = out.get("spec") or {}
    holders = [
        ("meta.v1.ObjectMeta", [out.get("metadata") or {}]),
        ("core.v1.PodSpec", [spec]),
        ("core.v1.PodStatus", [out.get("status") or {}]),
        ("core.v1.Container", [*spec.get("containers", ()), *spec.get("initContainers", ())]),
        ("core.v1.VolumeSource", list(spec.get("volumes", ()))),  # inlined in each volume
        (
            "core.v1.EphemeralVolumeSource",
            [v["ephemeral"] for v in spec.get("volumes", ()) if "ephemeral" in v],
        ),
    ]
    for name, parts in holders:
        for part in parts:
            for key in ps.SKIPPED[name]:
                part.pop(key, None)
    status = out.get("status")
    if spec.get("nodeName") and isinstance(status, dict):
        out["status"] = {k: v for k, v in status.items() if k in PLACED_STATUS}
        conditions = out["status"].pop("conditions", None)
        scheduled = [
            c for c in conditions or () if isinstance(c, dict) and c.get("type") == "PodScheduled"
        ]
        if scheduled:
            out["status"]["conditions"] = scheduled
    return out


def length_delimited(buf: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int]]:
    """(field number, start, stop) of each length-delimited field of `buf[pos:end]`; varints
    and fixed-width fields are skipped, other wire types raise."""
    while pos < end:
        tag, pos = _varint(buf, pos)
        if tag & 7 == 0:
            _, pos = _varint(buf, pos)
            continue
        if tag & 7 in (1, 5):
            pos += 8 if tag & 7 == 1 else 4
            continue
        if tag & 7 != 2:
            raise ProtobufError(f"field {tag >> 3} of wire type {tag & 7} in an envelope")
        size, pos = _varint(buf, pos)
        stop = pos + size
        if stop > end:
            raise ProtobufError("an envelope's field runs past its end")
        yield tag >> 3, pos, stop
        pos = stop
