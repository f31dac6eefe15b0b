from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from vscheduler.clock import FixedClock
from vscheduler.effects.ports import EVENT_MESSAGE_LIMIT, ClusterWriter, ObjectRef
from vscheduler.errors import (
    ClusterError,
    ConflictError,
    DisruptionBudgetError,
    NotFoundError,
    TransientClusterError,
)
from vscheduler.kube.client import KubeApi
from vscheduler.kube.writers import KubeWriter

if TYPE_CHECKING:
    from conftest import FakeApiServer

POD = "/api/v1/namespaces/team-a/pods/worker-0"
PODGROUP_STATUS = "/apis/scheduling.volcano.sh/v1beta1/namespaces/team-a/podgroups/pg-1/status"


@pytest.fixture
def writer(api: KubeApi, clock: FixedClock) -> KubeWriter:
    return KubeWriter(api, clock=clock, component="vscheduler", instance="vscheduler-0")


def test_kube_writer_is_a_cluster_writer(writer: KubeWriter) -> None:
    port: ClusterWriter = writer
    assert port is writer


@pytest.mark.timeout(10)
def test_bind_posts_a_binding_preconditioned_on_the_pod_uid(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    apiserver.reply("POST", f"{POD}/binding", 201, {"kind": "Status", "status": "Success"})
    writer.bind("team-a", "worker-0", "uid-1", "node-7")
    (request,) = apiserver.requests()
    assert request.headers["content-type"] == "application/vnd.kubernetes.protobuf"
    assert request.headers["accept"] == "application/vnd.kubernetes.protobuf, application/json"
    assert request.body == binding("team-a", "worker-0", "uid-1", "node-7")


def binding(namespace: str, name: str, uid: str, node: str) -> dict[str, Any]:
    """The Binding a writer sends."""
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "namespace": namespace, "uid": uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


@pytest.mark.timeout(10)
def test_bindings_written_together_go_on_one_connection_each_with_its_outcome(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    other = "/api/v1/namespaces/team-b/pods/worker-1"
    apiserver.reply("POST", f"{POD}/binding", 201, {"kind": "Status", "status": "Success"})
    body = apiserver.status(409, "Conflict", "pod worker-1 is already assigned to node node-1")
    apiserver.reply("POST", f"{other}/binding", 409, body)
    done = writer.bind_many(
        [("team-a", "worker-0", "uid-1", "node-7"), ("team-b", "worker-1", "uid-2", "node-8")]
    )
    assert done[0] is None
    assert isinstance(done[1], ConflictError)
    assert "already assigned" in str(done[1])
    first, second = apiserver.requests("POST")
    assert (first.path, second.path) == (f"{POD}/binding", f"{other}/binding")
    assert first.peer == second.peer  # one connection
    assert first.headers["content-type"] == "application/vnd.kubernetes.protobuf"
    assert first.body == binding("team-a", "worker-0", "uid-1", "node-7")
    assert second.body == binding("team-b", "worker-1", "uid-2", "node-8")
    assert writer.bind_many([]) == []


@pytest.mark.timeout(10)
def test_a_writer_made_for_json_sends_bindings_and_events_as_json(
    apiserver: FakeApiServer, api: KubeApi, clock: FixedClock
) -> None:
    """`--kube-api-content-type=application/json`: the same bodies, as JSON."""
    writer = KubeWriter(api, clock=clock, instance="vscheduler-0", protobuf=False)
    apiserver.reply("POST", f"{POD}/binding", 201, {"kind": "Status", "status": "Success"})
    apiserver.reply("POST", "/api/v1/namespaces/team-a/events", 201, {})
    writer.bind("team-a", "worker-0", "uid-1", "node-7")
    ref = ObjectRef("Pod", "v1", "team-a", "worker-0", "uid-1")
    writer.record_event(ref, "Normal", "Scheduled", "assigned")
    bind, event = apiserver.requests()
    assert [bind.headers["content-type"], event.headers["content-type"]] == ["application/json"] * 2
    assert bind.body["target"]["name"] == "node-7"
    assert event.body == writer.event_body(ref, "Normal", "Scheduled", "assigned")


@pytest.mark.timeout(10)
def test_binding_an_already_bound_pod_raises_conflict(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    body = apiserver.status(409, "Conflict", "pod worker-0 is already assigned to node node-1")
    apiserver.reply("POST", f"{POD}/binding", 409, body)
    with pytest.raises(ConflictError, match="already assigned") as caught:
        writer.bind("team-a", "worker-0", "uid-1", "node-7")
    assert caught.value.status == 409


@pytest.mark.timeout(10)
def test_evict_posts_a_policy_v1_eviction_preconditioned_on_the_uid(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    apiserver.reply("POST", f"{POD}/eviction", 201, {"kind": "Status", "status": "Success"})
    writer.evict("team-a", "worker-0", "uid-1")
    (request,) = apiserver.requests()
    assert request.path == f"{POD}/eviction"
    assert request.body == {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "worker-0", "namespace": "team-a"},
        "deleteOptions": {"preconditions": {"uid": "uid-1"}},
    }


@pytest.mark.timeout(10)
def test_an_eviction_refused_with_429_raises_disruption_budget(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    body = apiserver.status(
        429,
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget.",
        details={"causes": [{"type": "DisruptionBudget", "message": "needs 2 healthy pods"}]},
    )
    apiserver.reply("POST", f"{POD}/eviction", 429, body)
    with pytest.raises(DisruptionBudgetError, match="disruption budget"):
        writer.evict("team-a", "worker-0", "uid-1")


@pytest.mark.timeout(10)
def test_a_refused_eviction_carries_the_retry_after_the_api_server_sent(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    body = apiserver.status(429, "TooManyRequests", "Cannot evict pod.")
    apiserver.reply("POST", f"{POD}/eviction", 429, body, headers={"Retry-After": "12"})
    with pytest.raises(DisruptionBudgetError) as refused:
        writer.evict("team-a", "worker-0", "uid-1")
    assert refused.value.retry_after == 12.0


@pytest.mark.timeout(10)
def test_a_dry_run_eviction_asks_with_dry_run_all(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    apiserver.reply("POST", f"{POD}/eviction", 201, {"kind": "Status", "status": "Success"})
    writer.evict("team-a", "worker-0", "uid-1", dry_run=True)
    (request,) = apiserver.requests()
    assert (request.path, request.query) == (f"{POD}/eviction", {"dryRun": ["All"]})


@pytest.mark.timeout(10)
def test_evicting_a_vanished_pod_raises_not_found(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    apiserver.reply(
        "POST", f"{POD}/eviction", 404, apiserver.status(404, "NotFound", "pods not found")
    )
    with pytest.raises(NotFoundError):
        writer.evict("team-a", "worker-0", "uid-1")


@pytest.mark.timeout(10)
def test_a_throttled_bind_raises_transient(apiserver: FakeApiServer, writer: KubeWriter) -> None:
    apiserver.reply("POST", f"{POD}/binding", 429, apiserver.status(429, "TooManyRequests"))
    with pytest.raises(TransientClusterError):
        writer.bind("team-a", "worker-0", "uid-1", "node-7")


@pytest.mark.timeout(10)
def test_set_pod_condition_strategic_merges_the_condition_into_the_status(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    apiserver.reply("PATCH", f"{POD}/status", 200, {"kind": "Pod"})
    condition = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/3 nodes are available",
    }
    writer.set_pod_condition("team-a", "worker-0", condition)
    (request,) = apiserver.requests()
    assert request.method == "PATCH"
    assert request.headers["content-type"] == "application/strategic-merge-patch+json"
    assert request.body == {"status": {"conditions": [condition]}}


@pytest.mark.timeout(10)
def test_patch_podgroup_status_merge_patches_the_status_subresource(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    apiserver.reply("PATCH", PODGROUP_STATUS, 200, {"kind": "PodGroup"})
    writer.patch_podgroup_status("team-a", "pg-1", {"phase": "Running", "running": 4})
    (request,) = apiserver.requests()
    assert request.path == PODGROUP_STATUS
    assert request.headers["content-type"] == "application/merge-patch+json"
    assert request.body == {"status": {"phase": "Running", "running": 4}}


@pytest.mark.timeout(10)
def test_a_claims_selected_node_is_merge_patched_into_its_annotations_on_its_version(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    path = "/api/v1/namespaces/team-a/persistentvolumeclaims/data-0"
    apiserver.reply("PATCH", path, 200, {"kind": "PersistentVolumeClaim"})
    writer.set_claim_selected_node("team-a", "data-0", "node-7", "41")
    (request,) = apiserver.requests()
    assert (request.method, request.path) == ("PATCH", path)
    assert request.headers["content-type"] == "application/merge-patch+json"
    assert request.body == {
        "metadata": {
            "annotations": {"volume.kubernetes.io/selected-node": "node-7"},
            "resourceVersion": "41",
        }
    }


@pytest.mark.timeout(10)
def test_a_volume_is_claimed_by_merge_patching_its_claim_ref_as_kube_binds_it(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    path = "/api/v1/persistentvolumes/local-1"
    apiserver.reply("PATCH", path, 200, {"kind": "PersistentVolume"})
    writer.set_volume_claim_ref("local-1", "team-a", "data-0", "uid-c", "17")
    (request,) = apiserver.requests()
    assert (request.method, request.path) == ("PATCH", path)
    assert request.headers["content-type"] == "application/merge-patch+json"
    assert request.body == {
        "metadata": {
            "annotations": {"pv.kubernetes.io/bound-by-controller": "yes"},
            "resourceVersion": "17",
        },
        "spec": {
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": "team-a",
                "name": "data-0",
                "uid": "uid-c",
            }
        },
    }


@pytest.mark.timeout(10)
def test_a_volume_write_refused_for_a_changed_object_raises_conflict(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    path = "/api/v1/persistentvolumes/local-1"
    body = apiserver.status(409, "Conflict", "the object has been modified")
    apiserver.reply("PATCH", path, 409, body)
    with pytest.raises(ConflictError, match="modified"):
        writer.set_volume_claim_ref("local-1", "team-a", "data-0", "uid-c", "17")


@pytest.mark.timeout(10)
def test_record_event_posts_a_core_event_about_the_object(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    apiserver.reply("POST", "/api/v1/namespaces/team-a/events", 201, {"kind": "Event"})
    ref = ObjectRef("Pod", "v1", "team-a", "worker-0", "uid-1")
    writer.record_event(ref, "Normal", "Scheduled", "Successfully assigned team-a/worker-0 to n1")
    (request,) = apiserver.requests()
    assert request.body == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": "worker-0.", "namespace": "team-a"},
        "involvedObject": {
            "kind": "Pod",
            "apiVersion": "v1",
            "namespace": "team-a",
            "name": "worker-0",
            "uid": "uid-1",
        },
        "reason": "Scheduled",
        "message": "Successfully assigned team-a/worker-0 to n1",
        "type": "Normal",
        "source": {"component": "vscheduler"},
        "firstTimestamp": "2024-05-01T12:00:00Z",
        "lastTimestamp": "2024-05-01T12:00:00Z",
        "count": 1,
        "reportingComponent": "vscheduler",
        "reportingInstance": "vscheduler-0",
    }


@pytest.mark.timeout(10)
def test_an_event_about_a_cluster_scoped_object_goes_to_the_default_namespace(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    apiserver.reply("POST", "/api/v1/namespaces/default/events", 201, {"kind": "Event"})
    ref = ObjectRef("Queue", "scheduling.volcano.sh/v1beta1", "", "research", "uid-q")
    writer.record_event(ref, "Warning", "Overused", "x" * 5000)
    (request,) = apiserver.requests()
    assert "namespace" not in request.body["involvedObject"]
    assert len(request.body["message"]) == 1024
    assert request.body["message"].endswith("...")


@pytest.mark.timeout(10)
def test_a_forbidden_write_raises_a_plain_cluster_error(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    apiserver.reply(
        "PATCH", PODGROUP_STATUS, 403, apiserver.status(403, "Forbidden", "RBAC says no")
    )
    with pytest.raises(ClusterError, match="RBAC says no") as caught:
        writer.patch_podgroup_status("team-a", "pg-1", {"phase": "Running"})
    assert type(caught.value) is ClusterError


@pytest.mark.timeout(10)
def test_a_fenced_client_sends_no_write_once_the_fence_closes_but_still_reads(
    apiserver: FakeApiServer, kubeconfig: Path, clock: FixedClock
) -> None:
    from vscheduler.errors import FencedError
    from vscheduler.kube.client import build_api_client
    from vscheduler.kube.ratelimit import TokenBucket

    leading = [False]
    api = KubeApi(
        build_api_client(str(kubeconfig), pool_maxsize=2),
        TokenBucket(0, 0, clock=clock),
        fence=lambda: leading[0],
    )
    try:
        writer = KubeWriter(api, clock=clock)
        with pytest.raises(FencedError):
            writer.bind("team-a", "worker-0", "uid-0", "node-a")
        assert apiserver.requests("POST") == []
        apiserver.reply("GET", POD, 200, {"kind": "Pod", "metadata": {"name": "worker-0"}})
        assert api.request("GET", POD)["kind"] == "Pod"
        leading[0] = True
        apiserver.reply("POST", f"{POD}/binding", 201, {"kind": "Status", "status": "Success"})
        writer.bind("team-a", "worker-0", "uid-0", "node-a")
        assert len(apiserver.requests("POST")) == 1
    finally:
        api.close()


@pytest.mark.timeout(10)
def test_events_recorded_together_go_on_one_connection_each_with_its_outcome(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    events = "/api/v1/namespaces/team-a/events"
    apiserver.reply("POST", events, 201, {"kind": "Event"})
    apiserver.reply("POST", events, 403, apiserver.status(403, "Forbidden", "namespace closing"))
    apiserver.reply("POST", "/api/v1/namespaces/default/events", 201, {"kind": "Event"})
    pod = ObjectRef("Pod", "v1", "team-a", "worker-0", "uid-1")
    other = ObjectRef("Pod", "v1", "team-a", "worker-1", "uid-2")
    queue = ObjectRef("Queue", "scheduling.volcano.sh/v1beta1", "", "research", "uid-q")
    done = writer.record_events(
        [
            (pod, "Normal", "Scheduled", "Successfully assigned team-a/worker-0 to n1"),
            (other, "Normal", "Scheduled", "Successfully assigned team-a/worker-1 to n1"),
            (queue, "Warning", "Overused", "x" * 5000),
        ]
    )
    assert done[0] is None
    assert isinstance(done[1], ClusterError)
    assert "namespace closing" in str(done[1])
    assert done[2] is None
    sent = apiserver.requests("POST")
    assert len({r.peer for r in sent}) == 1  # one connection
    assert [(r.path, r.body["involvedObject"]["name"]) for r in sent] == [
        (events, "worker-0"),
        (events, "worker-1"),
        ("/api/v1/namespaces/default/events", "research"),
    ]
    assert sent[0].body == writer.event_body(pod, "Normal", "Scheduled", sent[0].body["message"])
    assert len(sent[2].body["message"]) == EVENT_MESSAGE_LIMIT
    assert writer.record_events([]) == []
