"""`KubeWriter`: `effects.ports.ClusterWriter` against the API server, in raw JSON (Bindings and
Events in protobuf).

- bind: POST `pods/{name}/binding` with a core/v1 Binding whose `metadata.uid` is the pod's UID:
  the API server uses it as a precondition (as kube-scheduler's and Volcano's binders send it),
  so a pod deleted and recreated under the same name answers 409 instead of being bound. Sent
  as protobuf, as kube-scheduler sends it (`kube.protobuf`: the API server's JSON decode of a
  Binding and an Event was a measured share of its CPU), as is every Event. `bind_many` writes
  several Bindings at once on one connection (`effects.ports.BindBatchWriter`), as
  `record_events` does Events (`KubeApi.request_many`, HTTP/1.1 pipelining).
- evict: POST `pods/{name}/eviction` with a policy/v1 Eviction preconditioned on the UID; the
  API server enforces PodDisruptionBudgets (refusal: `DisruptionBudgetError`).
- set_pod_condition: PATCH `pods/{name}/status`, strategic merge (`conditions` merge by `type`).
- set_nominated_node: PATCH `pods/{name}/status`, JSON merge patch
  `{"status": {"nominatedNodeName": node}}` (null clears it), as kube-scheduler writes it
  (`effects.ports.NominationWriter`).
- patch_podgroup_status: PATCH `podgroups/{name}/status`, JSON merge patch `{"status": ...}`.
  Volcano's own PodGroup CRD has no status subresource: there that PATCH answers 404 though the
  PodGroup exists. Then the same patch goes to the PodGroup itself (`podgroups/{name}`; a 404
  there too means the PodGroup is gone: `NotFoundError`), and the writer remembers, for the life
  of the process, to write there directly (one 404 per process, not one per write). Should the
  CRD gain the subresource later, the API server ignores `status` on the main resource: the
  answer shows the status unchanged, the writer goes back to the subresource and raises
  `TransientClusterError`, so the effects' retry sends the patch there.
- set_claim_selected_node: PATCH a PersistentVolumeClaim, JSON merge patch
  `{"metadata": {"annotations": {"volume.kubernetes.io/selected-node": node}, "resourceVersion":
  ...}}`: the node a WaitForFirstConsumer claim is to be provisioned for (kube-scheduler's
  `AnnSelectedNode`); the resourceVersion makes it conditional, as kube-scheduler's Update.
- set_volume_claim_ref: PATCH a PersistentVolume, JSON merge patch of `spec.claimRef` (the
  claim's apiVersion, kind, namespace, name, uid) and the `pv.kubernetes.io/bound-by-controller:
  "yes"` annotation, with the resourceVersion (kube's `GetBindVolumeToClaim`); the PV controller
  completes the binding.
- patch_queue_status: PATCH `queues/{name}/status` (cluster-scoped), JSON merge patch
  `{"status": ...}` (the effects send `{"status": {"allocated": {...}}}`, Volcano's
  `updateQueueStatus`), with the same fallback to the Queue itself where the Queue CRD has no
  status subresource (Volcano's has one).
- record_event: POST a core/v1 Event (legacy fields, which `kubectl describe` shows).
- remove_config_map_keys: PATCH a ConfigMap, JSON merge patch `{"data": {key: null, ...}}`: no
  uid or resourceVersion precondition, so it is idempotent and never conflicts with an edit of
  other keys (the reservation plugin's releases; `effects.ports.ConfigMapWriter`).

Every call goes through `KubeApi` (rate limited); failures raise ClusterError subclasses. No
retries here: the effects layer decides (`effects.retry`, with a deadline).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Literal

from vscheduler.clock import Clock
from vscheduler.effects.ports import EVENT_MESSAGE_LIMIT, BindRecord, EventRecord, ObjectRef
from vscheduler.errors import ClusterError, NotFoundError, TransientClusterError
from vscheduler.kube import protobuf
from vscheduler.kube.client import JSON, MERGE_PATCH, STRATEGIC_MERGE_PATCH, Body, KubeApi
from vscheduler.kube.paths import namespaced_collection, object_path, pod_path
from vscheduler.kube.protobuf import PROTOBUF
from vscheduler.model.volumes import BOUND_BY_CONTROLLER, SELECTED_NODE

logger = logging.getLogger(__name__)

PODGROUP_API = ("scheduling.volcano.sh", "v1beta1", "podgroups")
QUEUE_API = ("scheduling.volcano.sh", "v1beta1", "queues")
_KIND = {PODGROUP_API: "PodGroup", QUEUE_API: "Queue"}


class KubeWriter:
    """Every write the scheduler makes; `component` names the scheduler in Events."""

    def __init__(
        self,
        api: KubeApi,
        *,
        clock: Clock,
        component: str = "vscheduler",
        instance: str = "",
        protobuf: bool = True,
    ) -> None:
        self._api = api
        self._clock = clock
        self._component = component
        self._instance = instance
        self._protobuf = protobuf
        """Bindings and Events as protobuf (`--kube-api-content-type`); else JSON."""
        self._subresource = {PODGROUP_API: True, QUEUE_API: True}
        """Per custom resource, whether its status goes through its status subresource (see
        `podgroup_status_subresource`)."""

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """POST pods/binding (409 when the pod is already bound or was replaced)."""
        self._post_unread(
            pod_path(namespace, name, "binding"), _binding(namespace, name, uid, node)
        )

    def bind_many(self, binds: Sequence[BindRecord]) -> list[ClusterError | None]:
        """`bind` each (namespace, name, uid, node), posted together on one connection as
        their rate-limiter tokens allow (`KubeApi.request_many`); per pod None, or the error it
        met."""
        return self._post_many(
            [
                (pod_path(ns, name, "binding"), _binding(ns, name, uid, node))
                for ns, name, uid, node in binds
            ]
        )

    def evict(self, namespace: str, name: str, uid: str, *, dry_run: bool = False) -> None:
        """POST pods/eviction (policy/v1) for the pod with this UID only; `dry_run` sends
        `dryRun=All`: the API server checks the disruption budgets and evicts nothing."""
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
            "deleteOptions": {"preconditions": {"uid": uid}},
        }
        query = (("dryRun", "All"),) if dry_run else ()
        self._api.request("POST", pod_path(namespace, name, "eviction"), query=query, body=body)

    def set_pod_condition(self, namespace: str, name: str, condition: Mapping[str, str]) -> None:
        """Strategic-merge one condition (by type) into the pod's status."""
        body = {"status": {"conditions": [dict(condition)]}}
        path = pod_path(namespace, name, "status")
        self._api.request("PATCH", path, body=body, content_type=STRATEGIC_MERGE_PATCH)

    def set_nominated_node(self, namespace: str, name: str, node: str | None) -> None:
        """Merge-patch the pod's `status.nominatedNodeName` (None: remove it)."""
        body = {"status": {"nominatedNodeName": node}}
        path = pod_path(namespace, name, "status")
        self._api.request("PATCH", path, body=body, content_type=MERGE_PATCH)

    @property
    def podgroup_status_subresource(self) -> bool:
        """Whether PodGroup status goes through `podgroups/status` (False once a 404 there, for
        a PodGroup that exists, showed the CRD has no status subresource). Read and written by
        the effects' workers without a lock: a race costs at most one more 404."""
        return self._subresource[PODGROUP_API]

    @podgroup_status_subresource.setter
    def podgroup_status_subresource(self, value: bool) -> None:
        self._subresource[PODGROUP_API] = value

    @property
    def queue_status_subresource(self) -> bool:
        """Whether Queue status goes through `queues/status` (as `podgroup_status_subresource`)."""
        return self._subresource[QUEUE_API]

    @queue_status_subresource.setter
    def queue_status_subresource(self, value: bool) -> None:
        self._subresource[QUEUE_API] = value

    def patch_podgroup_status(
        self, namespace: str, name: str, status: Mapping[str, object]
    ) -> None:
        """Merge-patch the PodGroup's status: through the status subresource, else (a CRD
        without one, such as Volcano's) through the PodGroup itself. NotFoundError: the
        PodGroup is gone."""
        self._patch_status(PODGROUP_API, namespace, name, status)

    def patch_queue_status(self, name: str, status: Mapping[str, object]) -> None:
        """Merge-patch the Queue's status (cluster-scoped): through the status subresource, else
        (a CRD without one) through the Queue itself, as for PodGroups. NotFoundError: the Queue
        is gone."""
        self._patch_status(QUEUE_API, None, name, status)

    def _patch_status(
        self,
        api: tuple[str, str, str],
        namespace: str | None,
        name: str,
        status: Mapping[str, object],
    ) -> None:
        """`{"status": status}` merge-patched to the object's status subresource, or, where its
        CRD has none (see the module docstring), to the object itself."""
        body = {"status": dict(status)}
        if self._subresource[api]:
            path = object_path(*api, name, namespace=namespace, subresource="status")
            try:
                self._api.request("PATCH", path, body=body, content_type=MERGE_PATCH)
                return
            except NotFoundError:
                pass  # the object is gone, or its CRD has no status subresource: ask the object
        path = object_path(*api, name, namespace=namespace)
        answer = self._api.request("PATCH", path, body=body, content_type=MERGE_PATCH)
        if not _status_shows(answer, status):
            self._subresource[api] = True
            raise TransientClusterError(
                f"PATCH {path}: the API server ignored the status (the {_KIND[api]} CRD has a"
                " status subresource now): sending it there"
            )
        if self._subresource[api]:
            self._subresource[api] = False
            kind = _KIND[api]
            logger.warning(
                "the %s CRD has no status subresource%s: %s status is written through the %s"
                " itself from now on",
                kind,
                " (Volcano's CRD)" if api == PODGROUP_API else "",
                kind,
                kind,
            )

    def set_claim_selected_node(
        self, namespace: str, name: str, node: str, resource_version: str
    ) -> None:
        """Merge-patch the claim's `volume.kubernetes.io/selected-node` annotation."""
        path = object_path("", "v1", "persistentvolumeclaims", name, namespace=namespace)
        meta = _preconditioned({"annotations": {SELECTED_NODE: node}}, resource_version)
        self._api.request("PATCH", path, body={"metadata": meta}, content_type=MERGE_PATCH)

    def set_volume_claim_ref(
        self, volume: str, namespace: str, name: str, uid: str, resource_version: str
    ) -> None:
        """Merge-patch the volume's `spec.claimRef` and `bound-by-controller` annotation."""
        path = object_path("", "v1", "persistentvolumes", volume)
        meta = _preconditioned({"annotations": {BOUND_BY_CONTROLLER: "yes"}}, resource_version)
        ref = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "namespace": namespace,
            "name": name,
            "uid": uid,
        }
        body = {"metadata": meta, "spec": {"claimRef": ref}}
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
        self._post_unread(namespaced_collection("", "v1", "events", namespace), body)

    def record_events(self, events: Sequence[EventRecord]) -> list[ClusterError | None]:
        """`record_event` for each (ref, type, reason, message), posted together on one
        connection as their rate-limiter tokens allow (`KubeApi.request_many`); per Event None,
        or the error it met."""
        return self._post_many(
            [
                (
                    namespaced_collection("", "v1", "events", ref.namespace or "default"),
                    self.event_body(ref, type_, reason, message),
                )
                for ref, type_, reason, message in events
            ]
        )

    def _post_many(
        self, posts: Sequence[tuple[str, Mapping[str, object]]]
    ) -> list[ClusterError | None]:
        """`_post_unread` each (path, body), all at once on one connection
        (`KubeApi.request_many`); per post None, or the error it met."""
        requests: list[tuple[str, Body]] = [(path, self._unread_body(body)) for path, body in posts]
        content_type, accept = self._unread_types()
        answers = self._api.request_many("POST", requests, content_type=content_type, accept=accept)
        return [answer if isinstance(answer, ClusterError) else None for answer in answers]

    def _post_unread(self, path: str, body: Mapping[str, object]) -> None:
        """POST `body` as protobuf (as JSON when the writer was made without protobuf),
        asking for a protobuf answer (or JSON, from a server that has none), which is not read:
        a 2xx is all these writes need."""
        content_type, accept = self._unread_types()
        self._api.request(
            "POST", path, body=self._unread_body(body), content_type=content_type, accept=accept
        )

    def _unread_body(self, body: Mapping[str, object]) -> Body:
        """`body` as `_post_unread` sends it: protobuf, or the mapping (JSON)."""
        return protobuf.encode_object(body) if self._protobuf else body

    def _unread_types(self) -> tuple[str, str]:
        """The content type and accept of `_post_unread`'s writes."""
        return (PROTOBUF, f"{PROTOBUF}, {JSON}") if self._protobuf else (JSON, JSON)

    def event_body(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> dict[str, object]:
        """The Event `record_event` posts."""
        moment = self._clock.now()
        now = protobuf.rfc3339(int(moment.timestamp())) or moment.strftime("%Y-%m-%dT%H:%M:%SZ")
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


def _preconditioned(meta: dict[str, object], resource_version: str) -> dict[str, object]:
    """`meta` with `resourceVersion` when one is given: a merge patch carrying it is refused
    with 409 when the object changed since (kube-scheduler sends these writes as Updates)."""
    return {**meta, "resourceVersion": resource_version} if resource_version else meta


def _status_shows(answer: Mapping[str, object], status: Mapping[str, object]) -> bool:
    """Whether the object the API server answered with carries `status` (conditions compared
    by type and status only, so a schema that prunes or reformats their other fields does not
    read as the status being ignored)."""
    held = answer.get("status")
    if not isinstance(held, Mapping):
        return not status
    return all(_kernel(held.get(key)) == _kernel(value) for key, value in status.items())


def _kernel(value: object) -> object:
    """A conditions list as its (type, status) pairs; a mapping without its null values (a
    merge patch's null removes the key); anything else as it is."""
    if isinstance(value, list) and all(isinstance(c, Mapping) for c in value):
        return [(c.get("type"), c.get("status")) for c in value]
    if isinstance(value, Mapping):
        return {k: _kernel(v) for k, v in value.items() if v is not None}
    return value


def _binding(namespace: str, name: str, uid: str, node: str) -> dict[str, object]:
    """The Binding of the pod (this uid only) to `node`."""
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "namespace": namespace, "uid": uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
