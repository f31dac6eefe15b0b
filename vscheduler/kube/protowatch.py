"""The protobuf watch stream: its length-delimited frames, and each frame's event with its
object (a Pod through `kube.protodecode`, anything else, an ERROR event's Status among them,
through `kube.protobuf.decode_object`).

The stream (`application/vnd.kubernetes.protobuf;stream=watch`): frames of a 4-byte big-endian
length and a `metav1.WatchEvent` (type = 1, object = 2: a `RawExtension` whose bytes, field 1,
are `k8s\\0` and a `runtime.Unknown`: TypeMeta = 1, the object's message = 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Final

from vscheduler.kube.podschema import STRING
from vscheduler.kube.protobuf import MAGIC, ProtobufError, decode_object
from vscheduler.kube.protodecode import Spec, length_delimited, message, pod_message

WATCH: Final = "application/vnd.kubernetes.protobuf;stream=watch"
"""The Accept of a protobuf watch."""
_MAX_FRAME: Final = 256 * 1024 * 1024
"""Bytes at most one frame may claim (a larger length is a broken stream, not an object)."""


def unwrap(data: bytes, pos: int = 0, end: int | None = None) -> tuple[str, str, int, int]:
    """(apiVersion, kind, start, stop of the object's message) of the `k8s\\0` +
    `runtime.Unknown` bytes in `data[pos:end]`."""
    end = len(data) if end is None else end
    if data[pos : pos + len(MAGIC)] != MAGIC:
        raise ProtobufError("an object without the k8s protobuf prefix")
    api_version = kind = ""
    start = stop = pos
    for number, first, last in length_delimited(data, pos + len(MAGIC), end):
        if number == 1:  # TypeMeta
            meta = message(data, first, last, _TYPE_META)
            api_version, kind = meta.get("apiVersion", ""), meta.get("kind", "")
        elif number == 2:
            start, stop = first, last
    return api_version, kind, start, stop


_TYPE_META: Final[dict[int, Spec]] = {
    1: ("apiVersion", STRING, None, 0),
    2: ("kind", STRING, None, 0),
}


def watch_event(frame: bytes) -> tuple[str, dict[str, Any]]:
    """One frame's event: its type and its object as a JSON mapping (a Pod's through the
    schema, with kind and apiVersion; any other kind, an ERROR event's Status among them,
    through `kube.protobuf.decode`)."""
    type_ = ""
    raw: tuple[int, int] | None = None
    for number, first, last in length_delimited(frame, 0, len(frame)):
        if number == 1:
            type_ = frame[first:last].decode("utf-8", "replace")
        elif number == 2:  # RawExtension: its raw bytes are field 1
            for inner, start, stop in length_delimited(frame, first, last):
                if inner == 1:
                    raw = (start, stop)
    if raw is None:
        raise ProtobufError(f"a {type_ or 'watch'} event without an object")
    api_version, kind, start, stop = unwrap(frame, *raw)
    if kind == "Pod" and api_version == "v1":
        obj = pod_message(frame, start, stop)
        obj["kind"] = kind
        obj["apiVersion"] = api_version
    else:
        obj = decode_object(frame[raw[0] : raw[1]])
    return type_, obj


def frames(segments: Iterable[bytes]) -> Iterator[bytes]:
    """The length-delimited frames (4-byte big-endian length, then that many bytes) of a stream
    of byte segments; a stream that ends inside a frame raises."""
    buffer = bytearray()
    start = 0
    for segment in segments:
        buffer += segment
        while len(buffer) - start >= 4:
            size = int.from_bytes(buffer[start : start + 4], "big")
            if size > _MAX_FRAME:
                raise ProtobufError(f"a watch frame claims {size} bytes")
            if len(buffer) - start - 4 < size:
                break
            yield bytes(buffer[start + 4 : start + 4 + size])
            start += 4 + size
        if start:
            del buffer[:start]
            start = 0
    if buffer:
        raise ProtobufError(f"the watch stream ended inside a frame ({len(buffer)} bytes left)")
