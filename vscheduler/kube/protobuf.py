"""Kubernetes' protobuf encoding for the few objects the scheduler writes most: a Binding per
pod and an Event per decision, and the Status the API server answers a failure with.

kube-scheduler sends both as protobuf (`application/vnd.kubernetes.protobuf`); sent as JSON
they cost the API server a reflective JSON decode each (its profile over a W3 run: 0.59 s of
JSON decoding under us against 0.16 s under kube-scheduler, 0.23 s once these went as protobuf;
docs/design.md, twentieth session). CRDs (PodGroups) and patches have no protobuf form: they
stay JSON.

The wire form: the 4 magic bytes `k8s\\0`, then a `runtime.Unknown` message (field 1: TypeMeta
{apiVersion = 1, kind = 2}; field 2: the object's own message). Messages are written from the
same JSON-shaped mappings the JSON path sends, through `SCHEMA`: per message, each JSON key's
field number and type, as k8s.io/api core/v1 and apimachinery meta/v1 `generated.proto` give
them (v0.34). Only the fields these objects use are listed; a key outside `SCHEMA` is a
`ValueError`, so a field added to a body without its number here fails its tests instead of
being dropped on the wire. `decode` reads the same messages back (the API server's Status
answers; the tests' fake server), skipping fields it does not know, as protobuf readers do.
"""

from __future__ import annotations

import datetime as dt
import functools
import time
from collections.abc import Mapping
from typing import Any, Final

PROTOBUF: Final = "application/vnd.kubernetes.protobuf"
MAGIC: Final = b"k8s\x00"

# A field: (number, type); a type is "string", "int" (varint), "time" (meta/v1 Time: seconds
# and nanos, RFC 3339 in JSON) or the name of a message in SCHEMA.
Field = tuple[int, str]
SCHEMA: Final[dict[str, dict[str, Field]]] = {
    "Unknown": {"typeMeta": (1, "TypeMeta"), "raw": (2, "bytes")},
    "TypeMeta": {"apiVersion": (1, "string"), "kind": (2, "string")},
    "ObjectMeta": {
        "name": (1, "string"),
        "generateName": (2, "string"),
        "namespace": (3, "string"),
        "uid": (5, "string"),
        "resourceVersion": (6, "string"),
    },
    "ObjectReference": {
        "kind": (1, "string"),
        "namespace": (2, "string"),
        "name": (3, "string"),
        "uid": (4, "string"),
        "apiVersion": (5, "string"),
        "resourceVersion": (6, "string"),
        "fieldPath": (7, "string"),
    },
    "Binding": {"metadata": (1, "ObjectMeta"), "target": (2, "ObjectReference")},
    "EventSource": {"component": (1, "string"), "host": (2, "string")},
    "Event": {
        "metadata": (1, "ObjectMeta"),
        "involvedObject": (2, "ObjectReference"),
        "reason": (3, "string"),
        "message": (4, "string"),
        "source": (5, "EventSource"),
        "firstTimestamp": (6, "time"),
        "lastTimestamp": (7, "time"),
        "count": (8, "int"),
        "type": (9, "string"),
        "action": (12, "string"),
        "reportingComponent": (14, "string"),
        "reportingInstance": (15, "string"),
    },
    "Status": {
        "status": (2, "string"),
        "message": (3, "string"),
        "reason": (4, "string"),
        "details": (5, "StatusDetails"),
        "code": (6, "int"),
    },
    "StatusDetails": {
        "name": (1, "string"),
        "group": (2, "string"),
        "kind": (3, "string"),
        "causes": (4, "StatusCause*"),
        "retryAfterSeconds": (5, "int"),
        "uid": (6, "string"),
    },
    "StatusCause": {"reason": (1, "string"), "message": (2, "string"), "field": (3, "string")},
    "Time": {"seconds": (1, "int"), "nanos": (2, "int")},
}
_KINDS: Final = {"Binding", "Event", "Status"}


def encode_object(obj: Mapping[str, Any]) -> bytes:
    """A Binding, Event or Status mapping (as JSON would carry it, `apiVersion` and `kind`
    included) in the protobuf wire form the API server reads."""
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    if kind not in _KINDS or not isinstance(api_version, str):
        raise ValueError(f"no protobuf form here for kind {kind!r} ({api_version!r})")
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    envelope = {"typeMeta": {"apiVersion": api_version, "kind": kind}, "raw": _message(body, kind)}
    return MAGIC + _message(envelope, "Unknown")


def decode_object(data: bytes) -> dict[str, Any]:
    """The mapping `encode_object` was given (fields outside `SCHEMA` are skipped); ValueError
    for bytes that are not a protobuf object of a kind listed here."""
    if not data.startswith(MAGIC):
        raise ValueError("not a Kubernetes protobuf object (no k8s\\0 prefix)")
    envelope = decode(data[len(MAGIC) :], "Unknown")
    meta = envelope.get("typeMeta", {})
    kind = meta.get("kind")
    if kind not in _KINDS:
        raise ValueError(f"no protobuf form here for kind {kind!r}")
    return {
        "apiVersion": meta.get("apiVersion", ""),
        "kind": kind,
        **decode(envelope.get("raw", b""), kind),
    }


# --- writing ------------------------------------------------------------------------------------
def _message(obj: Mapping[str, Any], message: str) -> bytes:
    fields = SCHEMA[message]
    out = bytearray()
    for key, value in obj.items():
        spec = fields.get(key)
        if spec is None:
            raise ValueError(f"{message}.{key}: no protobuf field number known here")
        number, kind = spec
        if kind.endswith("*"):
            for item in value:
                _length_delimited(out, number, _message(item, kind[:-1]))
        elif kind == "string":
            _length_delimited(out, number, str(value).encode("utf-8", "replace"))
        elif kind == "bytes":
            _length_delimited(out, number, bytes(value))
        elif kind == "int":
            _varint(out, number << 3)
            _varint(out, int(value) & 0xFFFFFFFFFFFFFFFF)  # negatives as 64-bit two's complement
        elif kind == "time":
            _length_delimited(out, number, _message(_time(value), "Time"))
        else:
            _length_delimited(out, number, _message(value, kind))
    return bytes(out)


def _length_delimited(out: bytearray, number: int, payload: bytes) -> None:
    tag, size = number << 3 | 2, len(payload)
    if tag < 0x80 and size < 0x80:  # most fields of these objects: one byte each
        out.append(tag)
        out.append(size)
    else:
        _varint(out, tag)
        _varint(out, size)
    out += payload


def _varint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)


def _time(text: object) -> dict[str, int]:
    """An RFC 3339 time (as JSON carries meta/v1 Time) as seconds since the epoch."""
    return {"seconds": _seconds(str(text))}


@functools.lru_cache(maxsize=64)
def _seconds(text: str) -> int:
    """`_time`'s seconds, remembered: an Event's first and last times are the same second, and
    so are the Events of one second."""
    when = dt.datetime.fromisoformat(text)
    if when.tzinfo is None:
        raise ValueError(f"time {text!r} has no zone")
    return int(when.timestamp())


# --- reading ------------------------------------------------------------------------------------
def decode(data: bytes, message: str) -> dict[str, Any]:
    """One message of `SCHEMA` read from `data`; fields it does not list are skipped."""
    by_number = {number: (key, kind) for key, (number, kind) in SCHEMA[message].items()}
    out: dict[str, Any] = {}
    at = 0
    while at < len(data):
        tag, at = read_varint(data, at)
        number, wire = tag >> 3, tag & 7
        value: int | bytes
        if wire == 0:
            value, at = read_varint(data, at)
        elif wire == 2:
            size, at = read_varint(data, at)
            if at + size > len(data):
                raise ValueError(f"{message}: field {number} runs past the end")
            value, at = data[at : at + size], at + size
        elif wire == 1:
            value, at = data[at : at + 8], at + 8
        elif wire == 5:
            value, at = data[at : at + 4], at + 4
        else:
            raise ValueError(f"{message}: field {number} has wire type {wire}")
        known = by_number.get(number)
        if known is not None:
            key, kind = known
            _store(out, key, kind, value)
    return out


def _store(out: dict[str, Any], key: str, kind: str, value: Any) -> None:
    if kind.endswith("*"):
        out.setdefault(key, []).append(decode(value, kind[:-1]))
    elif kind == "string":
        out[key] = bytes(value).decode("utf-8", "replace")
    elif kind == "bytes":
        out[key] = bytes(value)
    elif kind == "int":
        out[key] = value - (1 << 64) if value >= 1 << 63 else value
    elif kind == "time":
        out[key] = rfc3339(decode(value, "Time").get("seconds", 0))
    else:
        out[key] = decode(value, kind)


class ProtobufError(ValueError):
    """Bytes that are not the protobuf they should be."""


def read_varint(data: bytes, at: int) -> tuple[int, int]:
    """The varint at `at` and the position after it."""
    value = shift = 0
    while True:
        if at >= len(data):
            raise ProtobufError("a varint runs past the end")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise ProtobufError("a varint longer than 10 bytes")


@functools.lru_cache(maxsize=4096)
def rfc3339(seconds: int) -> str | None:
    """Go's RFC 3339 of a Unix time in UTC (a `metav1.Time` in JSON); None where Go's JSON
    could not write it either (a year outside 0-9999)."""
    try:
        t = time.gmtime(seconds)
    except (OverflowError, OSError, ValueError):
        return None
    if not 0 <= t.tm_year <= 9999:
        return None
    return (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
        f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}Z"
    )
