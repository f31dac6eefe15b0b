"""`kube.protobuf`: the bytes of a Binding and an Event, read back as they were made, and a
protobuf Status answer read as the error it names. (The real API server's reading of the same
bytes: integration/test_protobuf_writes.py.)"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, strategies as st

from vscheduler.clock import FixedClock
from vscheduler.effects.ports import ObjectRef
from vscheduler.errors import ConflictError, DisruptionBudgetError
from vscheduler.kube import protobuf
from vscheduler.kube.client import KubeApi
from vscheduler.kube.errors import from_answer
from vscheduler.kube.writers import KubeWriter

CLOCK = FixedClock(dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.UTC))


def writer() -> KubeWriter:
    return KubeWriter(KubeApi.__new__(KubeApi), clock=CLOCK, instance="vscheduler-0")


def test_a_binding_is_the_bytes_its_proto_definition_gives() -> None:
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "a"},
        "target": {"name": "n"},
    }
    # Unknown{typeMeta(1): {apiVersion(1) "v1", kind(2) "Binding"}, raw(2): Binding{
    #   metadata(1): ObjectMeta{name(1) "a"}, target(2): ObjectReference{name(3) "n"}}}
    assert protobuf.encode_object(binding) == (
        b"k8s\x00"
        + b"\x0a\x0d" + b"\x0a\x02v1" + b"\x12\x07Binding"
        + b"\x12\x0a" + b"\x0a\x03\x0a\x01a" + b"\x12\x03\x1a\x01n"
    )  # fmt: skip


def test_integers_are_varints_and_times_are_seconds_since_the_epoch() -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "count": 300,
        "firstTimestamp": "1970-01-01T00:02:00Z",
    }
    raw = protobuf.encode_object(event)
    # count(8) = 300: tag 0x40, varint ac 02; firstTimestamp(6): Time{seconds(1) = 120}
    assert raw.endswith(b"\x40\xac\x02" + b"\x32\x02\x08\x78")
    negative = {"apiVersion": "v1", "kind": "Status", "code": -1}
    assert protobuf.encode_object(negative).endswith(b"\x30" + b"\xff" * 9 + b"\x01")
    assert protobuf.decode_object(protobuf.encode_object(negative))["code"] == -1


def test_the_bind_and_event_bodies_read_back_as_they_were_made() -> None:
    w = writer()
    ref = ObjectRef("Pod", "v1", "team-a", "worker-0", "uid-1")
    event = w.event_body(ref, "Normal", "Scheduled", "Successfully assigned team-a/worker-0 to n1")
    assert protobuf.decode_object(protobuf.encode_object(event)) == event
    queue = ObjectRef("Queue", "scheduling.volcano.sh/v1beta1", "", "research", "uid-q")
    cluster_scoped = w.event_body(queue, "Warning", "Overused", "over")
    assert protobuf.decode_object(protobuf.encode_object(cluster_scoped)) == cluster_scoped


@given(
    reason=st.text(max_size=40),
    message=st.text(max_size=300),
    name=st.text(min_size=1, max_size=60),
    namespace=st.text(max_size=20),
)
def test_any_event_text_reads_back_as_it_was_made(
    reason: str, message: str, name: str, namespace: str
) -> None:
    ref = ObjectRef("Pod", "v1", namespace, name, "uid-" + name)
    event = writer().event_body(ref, "Warning", reason, message)
    assert protobuf.decode_object(protobuf.encode_object(event)) == event


def test_a_lone_surrogate_is_replaced_not_a_crash() -> None:
    ref = ObjectRef("Pod", "v1", "ns", "p", "uid")
    event = writer().event_body(ref, "Warning", "Odd", "bad \ud800 text")
    assert protobuf.decode_object(protobuf.encode_object(event))["message"] == "bad ? text"


def test_a_field_without_a_known_number_is_an_error_not_dropped() -> None:
    with pytest.raises(ValueError, match=r"Event\.note: no protobuf field number"):
        protobuf.encode_object({"apiVersion": "v1", "kind": "Event", "note": "x"})
    with pytest.raises(ValueError, match="no protobuf form here for kind 'Pod'"):
        protobuf.encode_object({"apiVersion": "v1", "kind": "Pod"})


def test_reading_skips_fields_it_does_not_know_and_refuses_cut_bytes() -> None:
    known = protobuf.encode_object({"apiVersion": "v1", "kind": "Status", "message": "m"})
    envelope = protobuf.decode(known[4:], "Unknown")
    extra = (
        b"\xf8\x06\x05"  # field 111, varint
        + b"\xfa\x06\x02hi"  # field 111, length-delimited
        + b"\xf9\x06" + b"\x00" * 8  # field 111, fixed64
        + b"\xfd\x06" + b"\x00" * 4  # field 111, fixed32
    )  # fmt: skip
    raw = envelope["raw"] + extra
    type_meta = b"\x0a\x02v1\x12\x06Status"
    body = b"k8s\x00\x0a\x0c" + type_meta + b"\x12" + bytes([len(raw)]) + raw
    assert protobuf.decode_object(body) == {"apiVersion": "v1", "kind": "Status", "message": "m"}
    with pytest.raises(ValueError, match="runs past the end"):
        protobuf.decode_object(known[:-1])
    with pytest.raises(ValueError, match="no k8s"):
        protobuf.decode_object(b'{"kind": "Status"}')


def test_a_protobuf_status_answer_reads_as_the_error_it_names() -> None:
    conflict = protobuf.encode_object(
        {
            "apiVersion": "v1",
            "kind": "Status",
            "status": "Failure",
            "message": "pod worker-0 is already assigned to node n1",
            "reason": "Conflict",
            "code": 409,
        }
    )
    error = from_answer(409, "Conflict", conflict, retry_after=None, path="/pods/binding")
    assert isinstance(error, ConflictError)
    assert "already assigned to node n1" in str(error)
    budget = protobuf.encode_object(
        {
            "apiVersion": "v1",
            "kind": "Status",
            "message": "Cannot evict pod",
            "reason": "TooManyRequests",
            "details": {
                "causes": [{"reason": "DisruptionBudget", "message": "needs 2"}],
                "retryAfterSeconds": 7,
            },
            "code": 429,
        }
    )
    refused = from_answer(429, "", budget, retry_after=None, path="/ns/x/pods/p/eviction")
    assert isinstance(refused, DisruptionBudgetError)
    assert refused.retry_after == 7.0
    garbled = from_answer(500, "", b"k8s\x00\x0a\xff", retry_after=None, path="/x")
    assert "unreadable protobuf Status" in str(garbled)
