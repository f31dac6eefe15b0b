"""What carrying out decisions needs from the cluster: one writer port.

`vscheduler.kube.writers.KubeWriter` implements it against the API server; tests use a
recording fake. Each method raises a `vscheduler.errors.ClusterError` subclass on failure:
TransientClusterError (retry), ConflictError / NotFoundError (drop and resync),
DisruptionBudgetError (eviction refused by a PodDisruptionBudget: skip the victim).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Final, Literal, Protocol, runtime_checkable

from vscheduler.errors import ClusterError

EVENT_MESSAGE_LIMIT: Final = 1024
"""The longest Event message `record_event` sends: a longer one is cut (ending in an ellipsis),
by the executor before it asks and by the writer whoever asks. An Event is a notice, not a log."""


@dataclasses.dataclass(frozen=True, slots=True)
class ObjectRef:
    """The object an Event is about."""

    kind: str
    api_version: str
    namespace: str
    name: str
    uid: str


class ClusterWriter(Protocol):
    """Every kind of write the scheduler makes."""

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """POST pods/binding."""
        ...

    def evict(self, namespace: str, name: str, uid: str, *, dry_run: bool = False) -> None:
        """POST pods/eviction (policy/v1), so the API server enforces disruption budgets;
        `dry_run`: only ask whether it would be allowed (nothing is evicted)."""
        ...

    def set_pod_condition(self, namespace: str, name: str, condition: Mapping[str, str]) -> None:
        """Patch one condition (by type) into the pod's status."""
        ...

    def patch_podgroup_status(
        self, namespace: str, name: str, status: Mapping[str, object]
    ) -> None:
        """Merge-patch the PodGroup's status (NotFoundError: the PodGroup is gone)."""
        ...

    def set_claim_selected_node(
        self, namespace: str, name: str, node: str, resource_version: str
    ) -> None:
        """Merge-patch the PersistentVolumeClaim's `volume.kubernetes.io/selected-node`
        annotation to `node`, preconditioned on `resource_version` (ConflictError: the claim
        changed; NotFoundError: it is gone)."""
        ...

    def set_volume_claim_ref(
        self, volume: str, namespace: str, name: str, uid: str, resource_version: str
    ) -> None:
        """Merge-patch the PersistentVolume's `spec.claimRef` to the claim `namespace/name`
        (`uid`) and its `pv.kubernetes.io/bound-by-controller` annotation to "yes",
        preconditioned on `resource_version` (ConflictError: the volume changed;
        NotFoundError: it is gone)."""
        ...

    def patch_queue_status(self, name: str, status: Mapping[str, object]) -> None:
        """Merge-patch the (cluster-scoped) Queue's status (NotFoundError: the Queue is gone)."""
        ...

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        """Create a core/v1 Event about `ref` (its message cut to `EVENT_MESSAGE_LIMIT`)."""
        ...


BindRecord = tuple[str, str, str, str]
"""A pod to bind: its namespace, name and uid, and the node."""


@runtime_checkable
class BindBatchWriter(Protocol):
    """A writer that binds several pods at once (the API server's: the Bindings written
    together on one connection); the effects use it when their writer has it."""

    def bind_many(self, binds: Sequence[BindRecord]) -> list[ClusterError | None]:
        """`bind` each; per pod None, or the error it met (a refusal of the whole batch
        before anything left, such as the fence's, raises)."""
        ...


EventRecord = tuple[ObjectRef, Literal["Normal", "Warning"], str, str]
"""An Event to record: about `ref`, its type, reason and message."""


@runtime_checkable
class EventBatchWriter(Protocol):
    """A writer that records several Events at once (the API server's: written together on one
    connection); the effects use it for `Scheduled` Events when their writer has it."""

    def record_events(self, events: Sequence[EventRecord]) -> list[ClusterError | None]:
        """Record each Event; per Event None, or the error it met (a refusal of the whole
        batch before anything left, such as the fence's, raises)."""
        ...


class ConfigMapWriter(Protocol):
    """The write the reservation plugin's releases need (a port of its own, so writers that do
    not serve it need not implement it)."""

    def remove_config_map_keys(self, namespace: str, name: str, keys: Sequence[str]) -> None:
        """Remove `keys` from the ConfigMap's `data` (a JSON merge patch without preconditions:
        a key already gone stays gone)."""
        ...


class NominationWriter(Protocol):
    """The write of a pod's `status.nominatedNodeName` (a port of its own, so writers that do
    not serve it need not implement it)."""

    def set_nominated_node(self, namespace: str, name: str, node: str | None) -> None:
        """Set the pod's `status.nominatedNodeName` to `node`, or clear it (None)."""
        ...
