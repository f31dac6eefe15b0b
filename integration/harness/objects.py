"""Kubernetes objects for the tests: builders (pod, PodGroup, Queue, ConfigMap) and reads
(pods, bindings, conditions, Events) through a `Cluster`.

Owns: the shape of every object a test creates, and the small reads its assertions use.
Must not: wait (`waiting`) or know which backend runs the cluster.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TypeVar

from integration.controlplane import ApiError
from integration.harness.clusters import Cluster

T = TypeVar("T")


def pod(
    name: str,
    namespace: str,
    *,
    cpu: str = "1",
    memory: str = "256Mi",
    scheduler: str = "vscheduler",
    group: str | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A pod for the scheduler under test (the `sleep` image is never pulled: kwok runs it)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if group:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "resources": {"requests": {"cpu": cpu, "memory": memory}},
            }
        ],
    }
    spec.update(extra or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def podgroup(
    name: str,
    namespace: str,
    *,
    min_member: int,
    queue: str = "default",
    min_resources: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Volcano PodGroup."""
    spec: dict[str, Any] = {"minMember": min_member, "queue": queue}
    if min_resources:
        spec["minResources"] = min_resources
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def queue(name: str, *, weight: int = 1) -> dict[str, Any]:
    """A Volcano Queue."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": weight, "reclaimable": True},
    }


def create(cp: Cluster, obj: dict[str, Any]) -> Any:
    """POST `obj` to its collection."""
    kind, meta = obj["kind"], obj["metadata"]
    ns = meta.get("namespace")
    paths = {
        "Pod": f"/api/v1/namespaces/{ns}/pods",
        "PodGroup": f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{ns}/podgroups",
        "Queue": "/apis/scheduling.volcano.sh/v1beta1/queues",
        "ConfigMap": f"/api/v1/namespaces/{ns}/configmaps",
        "Job": f"/apis/batch/v1/namespaces/{ns}/jobs",
    }
    return cp.request("POST", paths[kind], obj)


def pods(cp: Cluster, namespace: str) -> list[dict[str, Any]]:
    """Every pod of a namespace."""
    items: list[dict[str, Any]] = cp.request("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
    return items


def bound(cp: Cluster, namespace: str) -> dict[str, str]:
    """pod name -> node, for the bound pods of a namespace."""
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in pods(cp, namespace)
        if p["spec"].get("nodeName")
    }


def condition(pod_obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The pod's condition of type `kind`."""
    for c in pod_obj.get("status", {}).get("conditions", []) or []:
        if c.get("type") == kind:
            return dict(c)
    return None


def events(cp: Cluster, namespace: str) -> list[dict[str, Any]]:
    """The Events of a namespace."""
    items: list[dict[str, Any]] = cp.request("GET", f"/api/v1/namespaces/{namespace}/events")[
        "items"
    ]
    return items


def dump(obj: Any) -> str:
    """For assertion messages."""
    return json.dumps(obj, indent=1, default=str)[:4000]


def is_api_error(exc: BaseException, status: int) -> bool:
    """Whether `exc` is an API error with HTTP `status`."""
    return isinstance(exc, ApiError) and exc.status == status


def iterate(items: Iterator[T]) -> list[T]:
    """A list (for readability in tests)."""
    return list(items)


# --- reading objects and Events -----------------------------------------------------------------
PODGROUPS = "/apis/scheduling.volcano.sh/v1beta1/namespaces/{namespace}/podgroups"


def get_pod(cp: Cluster, namespace: str, name: str) -> dict[str, Any]:
    """One pod, as the API server holds it."""
    found: dict[str, Any] = cp.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
    return found


def get_podgroup(cp: Cluster, namespace: str, name: str) -> dict[str, Any]:
    """One PodGroup, as the API server holds it."""
    found: dict[str, Any] = cp.request("GET", PODGROUPS.format(namespace=namespace) + f"/{name}")
    return found


def pod_condition(
    cp: Cluster, namespace: str, name: str, kind: str = "PodScheduled"
) -> dict[str, Any] | None:
    """The condition of type `kind` of pod `namespace/name`, or None."""
    return condition(get_pod(cp, namespace, name), kind)


def events_about(
    cp: Cluster,
    namespace: str,
    kind: str,
    name: str,
    *,
    reason: str | None = None,
) -> list[dict[str, Any]]:
    """The Events of `namespace` whose involvedObject is `kind` `name` (and, if given, whose
    reason is `reason`). Events about cluster-scoped objects live in `default`."""
    return [
        e
        for e in events(cp, namespace)
        if e.get("involvedObject", {}).get("kind") == kind
        and e.get("involvedObject", {}).get("name") == name
        and (reason is None or e.get("reason") == reason)
    ]


def configmap(name: str, namespace: str, data: dict[str, str]) -> dict[str, Any]:
    """A ConfigMap."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def update_configmap(cp: Cluster, name: str, namespace: str, data: dict[str, str]) -> Any:
    """Merge-patch the `data` of a ConfigMap."""
    return cp.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}/configmaps/{name}",
        {"data": data},
        content_type="application/merge-patch+json",
    )
