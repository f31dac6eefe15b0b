"""The pod watch in protobuf (`vscheduler.kube.protodecode`): a real API server's protobuf Pods
read into the mappings its JSON gives (so the converters see the same pods), and the watch
itself: creates, binds, kwok's status updates and deletes as events. (A 410 in a protobuf
stream: tests/unit/kube/test_kube_protodecode.py; after a compaction, on a real API server:
test_faults.py, whose informers then list again.)"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from vscheduler.clock import SystemClock
from vscheduler.convert.pod import PodConverter
from vscheduler.informer.kinds import POD
from vscheduler.kube.client import ClientSettings, KubeApi, connect
from vscheduler.kube.lister import KubeLister
from vscheduler.kube.protobuf import PROTOBUF
from vscheduler.kube.protodecode import as_decoded, pod_message
from vscheduler.kube.protowatch import unwrap

from integration import harness


@pytest.fixture
def api(cluster: harness.ScopedCluster) -> Iterator[KubeApi]:
    client = connect(ClientSettings(kubeconfig=str(cluster.kubeconfig_path)), clock=SystemClock())
    yield client
    client.close()


def rich_pod(name: str, namespace: str, scheduler: str) -> dict[str, Any]:
    """A pod with most of what a scheduler reads: requests, limits, ports, affinity,
    tolerations, spread, volumes, probes, overhead-free init containers, odd text."""
    pod = harness.pod(
        name,
        namespace,
        cpu="250m",
        scheduler=scheduler,
        group="pg-x",
        extra={
            "priority": 0,
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "tolerations": [
                {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
                {
                    "key": "x",
                    "operator": "Equal",
                    "value": "y",
                    "effect": "NoExecute",
                    "tolerationSeconds": 30,
                },
            ],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/os",
                                        "operator": "In",
                                        "values": ["linux"],
                                    }
                                ]
                            }
                        ]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 3,
                            "preference": {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "NotIn", "values": ["z9"]}
                                ]
                            },
                        }
                    ],
                },
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 10,
                            "podAffinityTerm": {
                                "topologyKey": "kubernetes.io/hostname",
                                "labelSelector": {"matchLabels": {"app": "pb"}},
                            },
                        }
                    ]
                },
            },
            "topologySpreadConstraints": [
                {
                    "maxSkew": 2,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
                }
            ],
            "volumes": [
                {"name": "cfg", "configMap": {"name": "c"}},
                {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
            ],
            "initContainers": [
                {
                    "name": "init",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "2", "memory": "1Gi"}},
                }
            ],
        },
    )
    pod["metadata"]["labels"] = {"app": "pb", "note": "a-b.c_d"}
    pod["metadata"]["annotations"]["note"] = "ünïcode ✓ and a long one " + "x" * 300
    main = pod["spec"]["containers"][0]
    main["resources"]["limits"] = {"cpu": "1", "memory": "256Mi", "example.com/dev": "2"}
    main["resources"]["requests"]["example.com/dev"] = "2"
    main["ports"] = [{"containerPort": 8080, "hostPort": 18080, "protocol": "TCP", "name": "http"}]
    main["readinessProbe"] = {"httpGet": {"port": "http", "path": "/ready"}, "periodSeconds": 7}
    main["livenessProbe"] = {"tcpSocket": {"port": 8080}}
    main["env"] = [
        {"name": "A", "value": ""},
        {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ]
    return pod  # fmt: skip


def read_both(
    cluster: harness.ScopedCluster, api: KubeApi, name: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The pod as JSON and as protobuf read by `protodecode`."""
    path = f"/api/v1/namespaces/{cluster.namespace}/pods/{name}"
    as_json: dict[str, Any] = cluster.request("GET", path)
    raw = api.open("GET", path, accept=PROTOBUF).read()
    api_version, kind, start, stop = unwrap(raw)
    decoded = pod_message(raw, start, stop)
    decoded.update(kind=kind, apiVersion=api_version)
    return as_json, decoded


def test_protobuf_pods_read_as_their_json_and_convert_to_the_same_facts(
    cluster: harness.ScopedCluster, api: KubeApi
) -> None:
    ns, me = cluster.namespace, cluster.scheduler_name
    cluster.add_node("pb-node", cpu=64, memory="256Gi", resources={"example.com/dev": "8"})
    harness.create(cluster, rich_pod("rich", ns, "nobody"))
    harness.create(cluster, harness.pod("plain", ns, scheduler="nobody"))
    harness.create(cluster, rich_pod("mine", ns, me))
    cluster.bind_pod(ns, "plain", "pb-node")
    cluster.wait_for(
        "kwok to run the bound pod",
        lambda: (
            cluster.request("GET", f"/api/v1/namespaces/{ns}/pods/plain")["status"].get("phase")
            == "Running"
        ),
    )
    convert = PodConverter(priority_classes={}, scheduler_name=me).convert
    for name in ("rich", "plain", "mine"):
        as_json, decoded = read_both(cluster, api, name)
        assert decoded == as_decoded(as_json), name
        assert convert(decoded) == convert(as_json), name
    assert convert(read_both(cluster, api, "mine")[1]) is not None  # a pod of ours: facts


def _watch(api: KubeApi, rv: str, stop: threading.Event, into: list[Any]) -> None:
    for event in KubeLister(api).watch(POD, rv, timeout_seconds=60, stop=stop):
        into.append(event)


def test_a_protobuf_pod_watch_sees_a_pod_made_bound_run_and_deleted(
    cluster: harness.ScopedCluster, api: KubeApi
) -> None:
    ns = cluster.namespace
    cluster.add_node("pb-node", cpu=8, memory="16Gi")
    listing = KubeLister(api).list(POD)
    list(listing.items)
    events: list[Any] = []
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(api, listing.resource_version, stop, events))
    watcher.start()
    try:
        harness.create(cluster, harness.pod("w", ns, scheduler="nobody"))
        cluster.bind_pod(ns, "w", "pb-node")
        cluster.wait_for(
            "the watch to show the pod Running",
            lambda: any(
                e.obj["metadata"].get("name") == "w" and e.obj["status"].get("phase") == "Running"
                for e in list(events)
                if e.type != "BOOKMARK"
            ),
        )
        as_json, _ = read_both(cluster, api, "w")
        cluster.request("DELETE", f"/api/v1/namespaces/{ns}/pods/w", {"gracePeriodSeconds": 0})
        cluster.wait_for(
            "the watch to show the delete", lambda: any(e.type == "DELETED" for e in list(events))
        )
    finally:
        stop.set()
        watcher.join(10)
    mine = [e for e in events if e.type != "BOOKMARK" and e.obj["metadata"].get("name") == "w"]
    assert mine[0].type == "ADDED"
    assert "nodeName" not in mine[0].obj["spec"]
    assert any(e.obj["spec"].get("nodeName") == "pb-node" for e in mine if e.type == "MODIFIED")
    running = [e.obj for e in mine if e.obj["status"].get("phase") == "Running"]
    assert running[0]["metadata"]["resourceVersion"] == as_json["metadata"]["resourceVersion"]
    assert running[0] == as_decoded(as_json)
    assert mine[-1].type == "DELETED"
