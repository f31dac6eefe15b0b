"""`kube.protodecode`: protobuf Pods read into the mappings their JSON gives, the watch stream's
frames, and the lister's protobuf pod watch. Pods are written by `kube.podencode`, a writer
driven by the same generated schema, filling in the zero values gogo-protobuf always writes;
the real API server's bytes against its JSON: integration/test_protobuf_watch.py."""

from __future__ import annotations

import copy
import datetime as dt
import threading
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from vscheduler.cache import entries
from vscheduler.convert import pod as pod_module
from vscheduler.convert.pod import PodConverter
from vscheduler.errors import ExpiredError, TransientClusterError
from vscheduler.informer.kinds import NODE, POD
from vscheduler.kube import podschema as ps, protobuf, protodecode as pd, protowatch as pw
from vscheduler.kube.client import KubeApi
from vscheduler.kube.lister import KubeLister
from vscheduler.kube.podencode import encode, frame, tagged, varint, wrapped

if TYPE_CHECKING:
    from conftest import FakeApiServer

PODS = "/api/v1/pods"


POD_JSON: dict[str, Any] = {
    "metadata": {
        "name": "worker-0",
        "namespace": "team-a",
        "uid": "1b9f",
        "resourceVersion": "4242",
        "creationTimestamp": "2026-11-30T18:21:33Z",
        "labels": {"app": "train", "volcano.sh/job-name": "j"},
        "annotations": {"scheduling.k8s.io/group-name": "pg-1", "empty": ""},
        "ownerReferences": [
            {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u", "controller": True}
        ],
    },
    "spec": {
        "schedulerName": "vscheduler",
        "priority": 0,
        "terminationGracePeriodSeconds": 30,
        "volumes": [
            {"name": "cfg", "configMap": {"name": "c", "defaultMode": 420}},
            {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
        ],
        "containers": [
            {
                "name": "main",
                "image": "trainer:1",
                "resources": {
                    "requests": {"cpu": "100m", "memory": "256Mi", "nvidia.com/gpu": "1"},
                    "limits": {"cpu": "10P"},
                },
                "ports": [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}],
                "readinessProbe": {"httpGet": {"port": "http", "path": "/"}, "periodSeconds": 5},
                "livenessProbe": {"tcpSocket": {"port": 8080}},
            }
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "zone", "operator": "In", "values": ["a", "b"]}
                            ]
                        }
                    ]
                }
            }
        },
        "tolerations": [
            {"key": "gpu", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": -5}
        ],
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "train"}},
            }
        ],
        "overhead": {"cpu": "250m"},
    },
    "status": {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/3 nodes are available: 3 Insufficient cpu. ✓",
                "lastProbeTime": None,
                "lastTransitionTime": "1969-07-20T20:17:40Z",
            }
        ],
        "startTime": "2026-11-30T18:21:34Z",
    },
}


# --- reading a Pod ------------------------------------------------------------------------------
def test_a_pod_reads_back_with_the_keys_and_values_its_json_has() -> None:
    assert "volumes" in POD_JSON["spec"]
    assert pd.pod(encode(POD_JSON)) == pd.as_decoded(POD_JSON)


def test_a_pods_claims_read_from_its_protobuf_as_from_its_json() -> None:
    pod = copy.deepcopy(POD_JSON)
    pod["spec"]["volumes"] += [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-0", "readOnly": True}},
        {"name": "tmp", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["X"]}}}},
    ]
    convert = PodConverter(priority_classes={}, scheduler_name="vscheduler").convert
    task = convert(pd.pod(encode(pod)))
    assert task is not None
    assert task.claims == (("data-0", False), (f"{pod['metadata']['name']}-tmp", True))
    from_json = convert(pod)
    assert from_json is not None
    assert task.claims == from_json.claims


def test_pods_with_the_same_spec_bytes_share_one_spec_read_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pd, "_SPECS", {})
    one = pd.pod(encode(POD_JSON))
    other = copy.deepcopy(POD_JSON)
    other["metadata"]["name"] = "worker-1"
    two = pd.pod(encode(other))
    assert two["metadata"]["name"] == "worker-1"
    assert two["spec"] is one["spec"]
    other["spec"]["nodeName"] = "n1"
    three = pd.pod(encode(other))
    assert three["spec"] is not one["spec"]
    assert three["spec"] == {**one["spec"], "nodeName": "n1"}
    monkeypatch.setattr(pd, "_SPECS_HELD", 2)
    pd.pod(encode({**other, "spec": {"nodeName": "n2"}}))  # the third: the table starts again
    assert len(pd._SPECS) == 1
    assert pd.pod(encode(POD_JSON))["spec"] is not one["spec"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    node_name=st.text(min_size=1, max_size=80),
    grace=st.integers(min_value=-(2**63), max_value=2**63 - 1),
    selector=st.dictionaries(st.text(max_size=20), st.text(max_size=20), max_size=3),
    token=st.text(min_size=1, max_size=30),
    known=st.booleans(),
)
def test_a_binds_echo_reads_as_its_spec_read_in_full_sharing_the_pending_specs_values(
    monkeypatch: pytest.MonkeyPatch,
    node_name: str,
    grace: int,
    selector: dict[str, str],
    token: str,
    known: bool,
) -> None:
    monkeypatch.setattr(pd, "_SPECS", {})
    pending = copy.deepcopy(POD_JSON)
    pending["spec"].update(terminationGracePeriodSeconds=grace, nodeSelector=selector)
    pending["spec"]["volumes"][0]["name"] = token
    bound = copy.deepcopy(pending)
    bound["spec"]["nodeName"] = node_name
    before = pd.pod(encode(pending)) if known else None
    echo = pd.pod(encode(bound))
    pd._SPECS.clear()
    full = pd.pod(encode(bound))
    assert echo == full
    assert list(echo["spec"]) == list(full["spec"])  # nodeName where its field comes
    if before is not None:
        assert echo["spec"]["containers"] is before["spec"]["containers"]
    assert pd.pod(encode(bound))["spec"] is full["spec"]  # the echo's bytes read once


def test_a_placed_pods_status_is_read_for_what_the_cache_keeps_of_it() -> None:
    placed = copy.deepcopy(POD_JSON)
    placed["spec"]["nodeName"] = "n1"
    placed["status"].update(phase="Running", nominatedNodeName="n1", qosClass="Burstable")
    scheduled = {"type": "PodScheduled", "status": "True", "lastProbeTime": None}
    kept = {**scheduled, "lastTransitionTime": "2026-11-30T18:21:33Z"}
    ready = {**scheduled, "type": "Ready", "lastTransitionTime": "2026-11-30T18:21:35Z"}
    # a condition's message may carry the bytes a PodScheduled condition starts with
    odd = {**ready, "type": "Odd", "message": "\n\x0cPodScheduled"}
    placed["status"]["conditions"] = [ready, kept, odd]
    decoded = pd.pod(encode(placed))
    assert decoded["status"] == {
        "phase": "Running",
        "startTime": "2026-11-30T18:21:34Z",
        "nominatedNodeName": "n1",
        "conditions": [kept],  # of the conditions, only the PodScheduled ones are read
    }
    assert decoded == pd.as_decoded(placed)
    # the cache keeps these, and of the conditions the PodScheduled ones (cdp reads their time)
    assert (*entries._KEPT_STATUS, "conditions") == pd.PLACED_STATUS
    convert = PodConverter(priority_classes={}, scheduler_name="vscheduler").convert
    facts = convert(decoded)
    assert facts == convert(placed)
    assert facts is not None
    assert facts.scheduled_at is not None
    assert pd.pod(encode(POD_JSON))["status"]["conditions"] == POD_JSON["status"]["conditions"]


_CONDITIONS = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["PodScheduled", "Ready", "PodScheduledX", ""]),
            "status": st.sampled_from(["True", "False", ""]),
            "lastProbeTime": st.none(),
            "lastTransitionTime": st.sampled_from([None, "2026-11-30T18:21:33Z"]),
        },
        optional={"reason": st.text(min_size=1, max_size=8), "message": st.text(min_size=1)},
    ),
    max_size=5,
)


@given(
    phase=st.sampled_from(["", "Running", "Pending", "Succeeded", "Unknown", "Odd"]),
    nominated=st.text(max_size=12),
    start=st.sampled_from([None, "2026-11-30T18:21:34Z", "1970-01-01T00:00:00Z"]),
    conditions=_CONDITIONS,
)
def test_any_placed_status_reads_as_its_json_keeps_it(
    phase: str, nominated: str, start: str | None, conditions: list[dict[str, Any]]
) -> None:
    placed = copy.deepcopy(POD_JSON)
    placed["spec"]["nodeName"] = "n1"
    placed["status"] = {
        "phase": phase,
        "nominatedNodeName": nominated,
        "startTime": start,
        "conditions": conditions,
        "qosClass": "Burstable",
    }
    expected = pd.as_decoded(placed)
    for key in ("phase", "nominatedNodeName"):  # JSON would leave an empty one out
        if not placed["status"][key]:
            expected["status"].pop(key)
    assert pd.pod(encode(placed)) == expected


def test_the_fields_left_out_are_the_ones_no_fact_of_a_pod_reads() -> None:
    """A field may be left out of a decoded pod only if converting a pod never reads it: the
    spec's and containers' are `convert.pod`'s own lists (checked there); the status's are
    checked here."""
    assert set(ps.SKIPPED) == {
        "meta.v1.ObjectMeta",
        "core.v1.PodSpec",
        "core.v1.Container",
        "core.v1.PodStatus",
        "core.v1.VolumeSource",
        "core.v1.EphemeralVolumeSource",
    }
    assert ps.SKIPPED["meta.v1.ObjectMeta"] == ("managedFields",)
    volume_sources = set(ps.SKIPPED["core.v1.VolumeSource"])
    assert {"persistentVolumeClaim", "ephemeral"}.isdisjoint(volume_sources)  # TaskFacts.claims
    assert set(ps.SKIPPED["core.v1.PodSpec"]) <= set(pod_module._UNREAD_SPEC) - {"nodeName"}
    assert set(ps.SKIPPED["core.v1.Container"]) <= pod_module._UNREAD_CONTAINER
    convert = PodConverter(priority_classes={}, scheduler_name="vscheduler").convert
    bare = copy.deepcopy(POD_JSON)
    full = copy.deepcopy(POD_JSON)
    full["spec"]["nodeName"] = bare["spec"]["nodeName"] = "n1"
    full["status"].update(
        containerStatuses=[{"name": "main", "ready": True, "restartCount": 9, "image": "x"}],
        initContainerStatuses=[{"name": "init", "ready": False, "restartCount": 1}],
        ephemeralContainerStatuses=[{"name": "debug", "restartCount": 0}],
        hostIP="10.0.0.1",
        hostIPs=[{"ip": "10.0.0.1"}],
        podIP="10.244.0.1",
        podIPs=[{"ip": "10.244.0.1"}],
    )
    assert set(full["status"]) - set(bare["status"]) == set(ps.SKIPPED["core.v1.PodStatus"])
    assert convert(full) == convert(bare)


def test_the_bytes_of_a_small_pod_read_as_their_proto_definition_says() -> None:
    # Pod{metadata(1): ObjectMeta{name(1) "a", creationTimestamp(8): Time{} (zero),
    #   generation(7) = 0 (omitempty: dropped)}, spec(2): PodSpec{nodeName(10) "n",
    #   priority(25) = -1}, an unknown field 99 = 7 (skipped)}
    data = (
        b"\x0a\x07" + b"\x0a\x01a" + b"\x42\x00" + b"\x38\x00"
        + b"\x12\x0f" + b"\x52\x01n" + b"\xc8\x01" + b"\xff" * 9 + b"\x01"
        + b"\x98\x06\x07"
    )  # fmt: skip
    assert pd.pod(data) == {
        "metadata": {"name": "a", "creationTimestamp": None},
        "spec": {"nodeName": "n", "priority": -1},
    }


def test_a_micro_time_keeps_microseconds_and_a_time_past_year_9999_is_null() -> None:
    assert pd._special(ps.MICROTIME, b"\x08\x78\x10\xc0\x84\x3d", 0, 6) == (
        "1970-01-01T00:02:00.001000Z"
    )
    far = varint(1 << 3) + varint(400_000_000_000)
    assert pd._special(ps.TIME, far, 0, len(far)) is None


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.text(min_size=1, max_size=300),
    labels=st.dictionaries(st.text(max_size=40), st.text(max_size=200), max_size=20),
    priority=st.integers(min_value=-(2**31), max_value=2**31 - 1),
    grace=st.integers(min_value=-(2**63), max_value=2**63 - 1),
    cpu=st.sampled_from(["100m", "10P", "1e3", "0", ".5", "2Ki"]),
    seconds=st.integers(min_value=-62135596800, max_value=253402300799),
)
def test_any_text_integer_and_time_reads_back_as_written(
    name: str, labels: dict[str, str], priority: int, grace: int, cpu: str, seconds: int
) -> None:
    t = dt.datetime.fromtimestamp(seconds, dt.UTC)
    stamp = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"
    obj = {
        "metadata": {"name": name, "labels": labels, "creationTimestamp": stamp},
        "spec": {
            "priority": priority,
            "terminationGracePeriodSeconds": grace,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
        },
    }
    decoded = pd.pod(encode(obj))
    assert decoded["spec"] == obj["spec"]
    assert decoded["metadata"]["creationTimestamp"] == stamp
    assert decoded["metadata"].get("labels", {}) == labels  # an empty map is not written
    assert decoded["metadata"]["name"] == name


def test_a_fixed_width_field_is_read_past_when_unknown_and_refused_where_a_pod_has_none() -> None:
    unknown = b"\x9d\x06" + b"\x00" * 4  # field 99, fixed32
    assert pd.pod(b"\x0a\x09" + b"\x0a\x01a" + unknown) == {"metadata": {"name": "a"}}
    with pytest.raises(protobuf.ProtobufError, match=r"field 1 \(name\) came fixed-width"):
        pd.pod(b"\x0a\x09" + b"\x09" + b"\x00" * 8)


def test_times_are_written_as_go_writes_them_for_both_readers() -> None:
    """One formatter for the pod reader and `kube.protobuf.decode` (Events, Status)."""
    assert protobuf.rfc3339(-30610224001) == "0999-12-31T23:59:59Z"
    assert protobuf.rfc3339(400_000_000_000) is None
    event = {"apiVersion": "v1", "kind": "Event", "firstTimestamp": "0999-12-31T23:59:59Z"}
    assert protobuf.decode_object(protobuf.encode_object(event))["firstTimestamp"] == (
        "0999-12-31T23:59:59Z"
    )


def test_text_that_is_not_utf8_reads_with_replacement_characters_as_json_does() -> None:
    data = b"\x0a\x04" + b"\x0a\x02\xff\x61"
    assert pd.pod(data) == {"metadata": {"name": "\ufffda"}}


@settings(max_examples=300)
@given(data=st.binary(max_size=200))
def test_any_bytes_read_as_a_pod_or_raise_a_protobuf_error(data: bytes) -> None:
    try:
        got = pd.pod(data)
    except protobuf.ProtobufError:
        return
    assert isinstance(got, dict)


def test_every_cut_of_a_pod_reads_as_a_pod_or_raises_a_protobuf_error() -> None:
    whole = encode(POD_JSON)
    errors = 0
    for cut in range(len(whole)):
        try:
            pd.pod(whole[:cut])
        except protobuf.ProtobufError:
            errors += 1
    assert errors > len(whole) // 2  # most cuts land inside a field


# --- the watch stream ---------------------------------------------------------------------------
def test_frames_come_whole_however_the_stream_is_split() -> None:
    one, two = frame("ADDED", wrapped(POD_JSON)), frame("DELETED", wrapped({"metadata": {}}))
    stream = one + two
    for cut in (1, 3, 4, 5, len(one) - 1, len(one), len(one) + 2, len(stream) - 1):
        assert list(pw.frames([stream[:cut], stream[cut:]])) == [one[4:], two[4:]]
    assert list(pw.frames([bytes([b]) for b in stream])) == [one[4:], two[4:]]


def test_a_stream_that_ends_inside_a_frame_or_claims_a_huge_one_raises() -> None:
    one = frame("ADDED", wrapped(POD_JSON))
    with pytest.raises(protobuf.ProtobufError, match="ended inside a frame"):
        list(pw.frames([one[:-1]]))
    with pytest.raises(protobuf.ProtobufError, match="claims"):
        list(pw.frames([b"\x7f\xff\xff\xff" + b"x"]))


def test_a_watch_event_carries_its_type_and_the_pod_with_kind_and_api_version() -> None:
    type_, obj = pw.watch_event(frame("MODIFIED", wrapped(POD_JSON))[4:])
    assert type_ == "MODIFIED"
    assert obj == {**pd.as_decoded(POD_JSON), "kind": "Pod", "apiVersion": "v1"}


def test_an_error_event_carries_the_status_it_names() -> None:
    status = protobuf.encode_object(
        {
            "apiVersion": "v1",
            "kind": "Status",
            "status": "Failure",
            "code": 410,
            "reason": "Expired",
            "message": "too old resource version: 1 (4242)",
        }
    )
    type_, obj = pw.watch_event(frame("ERROR", status)[4:])
    assert type_ == "ERROR"
    assert obj["code"] == 410
    assert obj["reason"] == "Expired"


def test_an_event_without_an_object_or_prefix_raises() -> None:
    with pytest.raises(protobuf.ProtobufError, match="without an object"):
        pw.watch_event(tagged(1, b"ADDED"))
    with pytest.raises(protobuf.ProtobufError, match="prefix"):
        pw.watch_event(frame("ADDED", encode(POD_JSON))[4:])


# --- the lister's pod watch ---------------------------------------------------------------------
def _pod(rv: str) -> dict[str, Any]:
    return {"metadata": {"name": "a", "namespace": "default", "resourceVersion": rv}}


def collect(lister: KubeLister, kind: Any = POD) -> list[tuple[str, str]]:
    events = lister.watch(kind, "10", timeout_seconds=30, stop=threading.Event())
    return [(e.type, str(e.obj["metadata"]["resourceVersion"])) for e in events]  # type: ignore[index]


@pytest.mark.timeout(10)
def test_a_pod_watch_asks_for_protobuf_and_reads_its_frames(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    added, modified = frame("ADDED", wrapped(_pod("11"))), frame("MODIFIED", wrapped(_pod("12")))
    apiserver.stream(
        "GET", PODS, [added[:7], added[7:] + modified[:2], modified[2:]], content_type=pw.WATCH
    )
    assert collect(KubeLister(api)) == [("ADDED", "11"), ("MODIFIED", "12")]
    (request,) = apiserver.requests()
    assert request.headers["accept"] == pw.WATCH


@pytest.mark.timeout(10)
def test_a_server_answering_json_is_read_as_json_and_other_kinds_ask_json(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    apiserver.stream("GET", PODS, [{"type": "ADDED", "object": _pod("11")}])
    assert collect(KubeLister(api)) == [("ADDED", "11")]
    apiserver.stream("GET", "/api/v1/nodes", [])
    apiserver.stream("GET", PODS, [])
    assert collect(KubeLister(api), NODE) == []
    assert collect(KubeLister(api, protobuf_watch=False)) == []
    accepts = [r.headers["accept"] for r in apiserver.requests()]
    assert accepts == [pw.WATCH, "application/json", "application/json"]


@pytest.mark.timeout(10)
def test_a_protobuf_410_raises_expired_and_a_broken_frame_is_transient(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    gone = protobuf.encode_object(
        {"apiVersion": "v1", "kind": "Status", "code": 410, "reason": "Expired", "message": "old"}
    )
    apiserver.stream("GET", PODS, [frame("ERROR", gone)], content_type=pw.WATCH)
    with pytest.raises(ExpiredError):
        collect(KubeLister(api))
    apiserver.stream("GET", PODS, [b"\x00\x00\x00\x02\x0a\x09"], content_type=pw.WATCH)
    with pytest.raises(TransientClusterError, match="malformed watch frame"):
        collect(KubeLister(api))
