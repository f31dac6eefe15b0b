"""Bindings and Events go to the API server as protobuf (`vscheduler.kube.protobuf`): a real API
server decodes them into the objects the JSON path made, and its protobuf Status answers to a
refused write read as the same errors."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from vscheduler.clock import SystemClock
from vscheduler.effects.ports import EVENT_MESSAGE_LIMIT, ObjectRef
from vscheduler.errors import ConflictError, NotFoundError
from vscheduler.kube.client import ClientSettings, connect
from vscheduler.kube.writers import KubeWriter

from integration import harness


@pytest.fixture
def writer(cluster: harness.ScopedCluster) -> Iterator[KubeWriter]:
    """The scheduler's writer, on its own client (closed after the test)."""
    clock = SystemClock()
    api = connect(ClientSettings(kubeconfig=str(cluster.kubeconfig_path)), clock=clock)
    yield KubeWriter(api, clock=clock, component="vscheduler", instance="vscheduler-test-0")
    api.close()


def events_about(cluster: harness.ScopedCluster, namespace: str, uid: str) -> list[dict[str, Any]]:
    listed = cluster.request("GET", f"/api/v1/namespaces/{namespace}/events")
    return [e for e in listed["items"] if e.get("involvedObject", {}).get("uid") == uid]


def unscheduled_pod(cluster: harness.ScopedCluster, name: str) -> str:
    """A pod no scheduler places, made in the test's namespace: its UID."""
    made = harness.create(cluster, harness.pod(name, "test", scheduler="nobody"))
    uid: str = made["metadata"]["uid"]
    return uid


def test_a_binding_sent_as_protobuf_binds_and_its_refusals_read_as_conflicts(
    cluster: harness.ScopedCluster, writer: KubeWriter
) -> None:
    namespace = cluster.namespace
    uid = unscheduled_pod(cluster, "p0")

    writer.bind(namespace, "p0", uid, "node-x")

    assert harness.get_pod(cluster, "test", "p0")["spec"]["nodeName"] == "node-x"
    with pytest.raises(ConflictError, match="already assigned to node") as again:
        writer.bind(namespace, "p0", uid, "node-y")
    assert again.value.status == 409
    other = unscheduled_pod(cluster, "p1")
    with pytest.raises(ConflictError, match="Precondition failed: UID in precondition"):
        writer.bind(namespace, "p1", "not-" + other, "node-x")
    assert "nodeName" not in harness.get_pod(cluster, "test", "p1")["spec"]
    with pytest.raises(NotFoundError, match='pods "gone" not found'):
        writer.bind(namespace, "gone", "uid-gone", "node-x")


def test_an_event_sent_as_protobuf_reads_back_as_the_json_body_it_was_made_from(
    cluster: harness.ScopedCluster, writer: KubeWriter
) -> None:
    namespace = cluster.namespace
    uid = unscheduled_pod(cluster, "p0")
    ref = ObjectRef("Pod", "v1", namespace, "p0", uid)
    message = "0/2 nodes are available: 2 Insufficient cpu. — ünïcödé ✓ " + "x" * 2000

    before = int(time.time())
    writer.record_event(ref, "Warning", "FailedScheduling", message)
    sent = writer.event_body(ref, "Warning", "FailedScheduling", message)

    (event,) = cluster.wait_for("the event", lambda: events_about(cluster, namespace, uid) or None)
    assert event["metadata"]["name"].startswith("p0.")
    for key in ("involvedObject", "reason", "message", "type", "source", "count"):
        assert event[key] == sent[key], key
    assert len(event["message"]) == EVENT_MESSAGE_LIMIT
    assert event["message"].startswith("0/2 nodes are available: 2 Insufficient cpu. — ünïcödé ✓")
    assert event["reportingComponent"] == "vscheduler"
    assert event["reportingInstance"] == "vscheduler-test-0"
    first = time.mktime(time.strptime(event["firstTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
    first -= time.timezone  # mktime reads local time; the stamp is UTC
    assert before - 1 <= first <= time.time() + 1
    assert event["lastTimestamp"] == event["firstTimestamp"]


def test_an_event_about_a_cluster_scoped_object_lands_in_default_and_a_refused_one_raises(
    cluster: harness.ScopedCluster, writer: KubeWriter
) -> None:
    queue = ObjectRef("Queue", "scheduling.volcano.sh/v1beta1", "", "research", "uid-queue-1")
    writer.record_event(queue, "Normal", "Overused", "queue research is over its capability")

    (event,) = cluster.wait_for(
        "the queue's event", lambda: events_about(cluster, "default", "uid-queue-1") or None
    )
    assert event["involvedObject"] == {
        "kind": "Queue",
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "name": "research",
        "uid": "uid-queue-1",
    }
    assert event["message"] == "queue research is over its capability"
    ghost = ObjectRef("Pod", "v1", "no-such-namespace-here", "p0", "uid-ghost")
    with pytest.raises(NotFoundError, match='namespaces "no-such-namespace-here" not found'):
        writer.record_event(ghost, "Normal", "Scheduled", "never stored")
