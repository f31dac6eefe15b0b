"""`KubeWriter`: `effects.ports.ClusterWriter` against the API server, in raw JSON.

- bind: POST `pods/{name}/binding` with a core/v1 Binding whose `metadata.uid` is the pod's UID:
  the API server uses it as a precondition (as kube-scheduler's and Volcano's binders send it),
  so a pod deleted and recreated under the same name answers 409 instead of being bound.
- evict: POST `pods/{name}/eviction` with a policy/v1 Eviction preconditioned on the UID; the
  API server enforces PodDisruptionBudgets (refusal: `DisruptionBudgetError`).
- set_pod_condition: PATCH `pods/{name}/status`, strategic merge (`conditions` merge by `type`).
- patch_podgroup_status: PATCH `podgroups/{name}/status`, JSON merge patch.
- record_event: POST a core/v1 Event (legacy fields, which `kubectl describe` shows).
- remove_config_map_keys: PATCH a ConfigMap, JSON merge patch `{"data": {key: null, ...}}`: no
  uid or resourceVersion precondition, so it is idempotent and never conflicts with an edit of
  other keys (the reservation plugin's releases; `effects.ports.ConfigMapWriter`).

Every call goes through `KubeApi` (rate limited); failures raise ClusterError subclasses. No
retries here: the effects layer decides (tenacity, with a deadline).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from vscheduler.clock import Clock
from vscheduler.effects.ports import ObjectRef
from vscheduler.kube.client import MERGE_PATCH, STRATEGIC_MERGE_PATCH, KubeApi
from vscheduler.kube.paths import namespaced_collection, object_path, pod_path

PODGROUP_API = ("scheduling.volcano.sh", "v1beta1", "podgroups")
EVENT_MESSAGE_LIMIT = 1024
"""Longer Event messages are cut (with an ellipsis): an Event is a notice, not a log."""


class KubeWriter:
    """Every write the scheduler makes; `component` names the scheduler in Events."""

    def __init__(
        self, api: KubeApi, *, clock: Clock, component: str = "vscheduler", instance: str = ""
    ) -> None:
        self._api = api
        self._clock = clock
        self._component = component
        self._instance = instance

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """POST pods/binding (409 when the pod is already bound or was replaced)."""
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        self._api.request("POST", pod_path(namespace, name, "binding"), body=body)

    def evict(self, namespace: str, name: str, uid: str) -> None:
        """POST pods/eviction (policy/v1) for the pod with this UID only."""
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
            "deleteOptions": {"preconditions": {"uid": uid}},
        }
        self._api.request("POST", pod_path(namespace, name, "eviction"), body=body)

    def set_pod_condition(self, namespace: str, name: str, condition: Mapping[str, str]) -> None:
        """Strategic-merge one condition (by type) into the pod's status."""
        body = {"status": {"conditions": [dict(condition)]}}
        path = pod_path(namespace, name, "status")
        self._api.request("PATCH", path, body=body, content_type=STRATEGIC_MERGE_PATCH)

    def patch_podgroup_status(
        self, namespace: str, name: str, status: Mapping[str, object]
    ) -> None:
        """Merge-patch the PodGroup's status subresource."""
        path = object_path(*PODGROUP_API, name, namespace=namespace, subresource="status")
        body = {"status": dict(status)}
        self._api.request("PATCH", path, body=body, content_type=MERGE_PATCH)

    def remove_config_map_keys(self, namespace: str, name: str, keys: Sequence[str]) -> None:
        """Merge-patch `data` of the ConfigMap, each of `keys` set to null (removed)."""
        path = object_path("", "v1", "configmaps", name, namespace=namespace)
        body = {"data": dict.fromkeys(keys)}
        self._api.request("PATCH", path, body=body, content_type=MERGE_PATCH)

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        """Create a core/v1 Event about `ref` (in its namespace, `default` if cluster-scoped)."""
        namespace = ref.namespace or "default"
        body = self.event_body(ref, type_, reason, message)
        self._api.request("POST", namespaced_collection("", "v1", "events", namespace), body=body)

    def event_body(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> dict[str, object]:
        """The Event `record_event` posts."""
        now = self._clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        involved: dict[str, object] = {
            "kind": ref.kind,
            "apiVersion": ref.api_version,
            "name": ref.name,
            "uid": ref.uid,
        }
        if ref.namespace:
            involved["namespace"] = ref.namespace
        event: dict[str, object] = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{ref.name}.", "namespace": ref.namespace or "default"},
            "involvedObject": involved,
            "reason": reason,
            "message": _cut(message, EVENT_MESSAGE_LIMIT),
            "type": type_,
            "source": {"component": self._component},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "reportingComponent": self._component,
        }
        if self._instance:
            event["reportingInstance"] = self._instance
        return event


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
