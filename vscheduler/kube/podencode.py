"""A Pod in protobuf as the API server writes it, from the mapping its JSON gives: for the tests
of `kube.protodecode` and for `bench.podwatch`, which need a Pod's bytes without a server.

Written from the same generated schema `protodecode` reads (`kube.podschema`), so only the
fields it keeps are written (a real Pod's `SKIPPED` fields, its managedFields among them, are
not); fields in number order, and the non-pointer scalars JSON leaves out when empty written as
their zero value, as gogo-protobuf always writes them. The real API server's bytes are checked
against their JSON in integration/test_protobuf_watch.py.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from vscheduler.kube import podschema as ps, protobuf


def varint(value: int) -> bytes:
    """`value` as a protobuf varint (a negative one as its 64-bit two's complement)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tagged(number: int, payload: bytes) -> bytes:
    """Field `number`, length-delimited, holding `payload`."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def _seconds(text: str) -> int:
    return int(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def _one(number: int, kind: int, sub: str, value: Any) -> bytes:
    if kind == ps.STRING:
        return tagged(number, value.encode("utf-8", "surrogatepass"))
    if kind in (ps.INT, ps.BOOL):
        return varint(number << 3) + varint(int(value))
    if kind == ps.MESSAGE:
        return tagged(number, encode(value, sub))
    if kind == ps.QUANTITY:
        return tagged(number, tagged(1, value.encode()))
    if kind in (ps.TIME, ps.MICROTIME):
        if value is None:
            return tagged(number, b"")  # the zero time: gogo writes an empty message
        stamp = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        body = varint(1 << 3) + varint(_seconds(value))
        if kind == ps.MICROTIME:
            body += varint(2 << 3) + varint(stamp.microsecond * 1000)
        return tagged(number, body)
    if kind == ps.INTORSTRING:
        if isinstance(value, str):
            return tagged(number, b"\x08\x01" + tagged(3, value.encode()))
        return tagged(number, b"\x08\x00" + varint(2 << 3) + varint(value))
    if kind == ps.MAP:
        _, value_kind, _ = sub.split(",")
        out = b""
        for key, item in value.items():
            inner = _one(2, getattr(ps, value_kind), "", item)
            out += tagged(number, tagged(1, key.encode()) + inner)
        return out
    raise ValueError(f"no writer for kind {kind}")


def encode(obj: dict[str, Any], message: str = "core.v1.Pod") -> bytes:
    """`obj` (a Pod, or the part of one `message` names) as gogo-protobuf writes it: fields in
    number order, non-pointer scalars that JSON leaves out when empty written as their zero
    value."""
    out = b""
    for number, (key, kind, sub, flags) in sorted(ps.MESSAGES[message].items()):
        if flags & ps.INLINE:
            out += tagged(number, encode(obj, sub))
            continue
        if key not in obj:
            if flags & ps.OMIT_ZERO:
                out += _one(number, kind, sub, {ps.STRING: "", ps.INT: 0, ps.BOOL: False}[kind])
            continue
        values = obj[key] if flags & ps.REPEATED else [obj[key]]
        for value in values:
            out += _one(number, kind, sub, value)
    return out


def wrapped(obj: dict[str, Any]) -> bytes:
    """`k8s\\0` + runtime.Unknown of a v1 Pod: the object as a GET in protobuf answers it."""
    return protobuf.MAGIC + tagged(1, tagged(1, b"v1") + tagged(2, b"Pod")) + tagged(2, encode(obj))


def frame(type_: str, body: bytes) -> bytes:
    """One frame of a protobuf watch: its 4-byte length, then a WatchEvent of `type_` whose
    object (a runtime.RawExtension) holds `body`, the object as `wrapped` writes it."""
    event = tagged(1, type_.encode()) + tagged(2, tagged(1, body))
    return len(event).to_bytes(4, "big") + event
