"""PersistentVolumeClaims, PersistentVolumes and StorageClasses, as volume binding reads them.

Owns: `ClaimFacts`, `VolumeFacts`, `StorageClassFacts` and the names Kubernetes gives their
annotations and special values. Kubernetes' meaning throughout (`pkg/scheduler/framework/
plugins/volumebinding`, `component-helpers/storage/volume`): a claim is *fully bound* when it
names a volume and carries `pv.kubernetes.io/bind-completed`; its class is the beta annotation,
else `spec.storageClassName`; a class delays binding when its `volumeBindingMode` is
`WaitForFirstConsumer`; a claim whose class is "" or unknown binds at once (`Immediate`).
Must not: decide whether a pod fits a node (the predicates plugin does).
"""

from __future__ import annotations

import dataclasses
from typing import Final

from vscheduler.model.facts import SelectorTerm
from vscheduler.model.selector import LabelSelector

SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
"""The claim annotation naming the node a delayed claim is to be provisioned for."""
BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
BETA_CLASS: Final = "volume.beta.kubernetes.io/storage-class"
NO_PROVISIONER: Final = "kubernetes.io/no-provisioner"
"""The provisioner of a class of pre-made (static) volumes only."""
WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClaimFacts:
    """One PersistentVolumeClaim."""

    namespace: str
    name: str
    uid: str = ""
    volume_name: str = ""
    """`spec.volumeName`: the volume it is (or is being) bound to, "" for none."""
    bind_completed: bool = False
    storage_class: str = ""
    selected_node: str = ""
    """The `volume.kubernetes.io/selected-node` annotation, "" for none."""
    request: int = 0
    """`spec.resources.requests.storage`, in bytes."""
    access_modes: frozenset[str] = frozenset()
    volume_mode: str = "Filesystem"
    selector: LabelSelector | None = None
    """`spec.selector`: the labels a pre-made volume must have (None: no selector)."""
    lost: bool = False
    """`status.phase` is `Lost`: its volume is gone."""
    deleting: bool = False
    owner_uids: frozenset[str] = frozenset()
    """The uids of its controlling owners (a pod's generic ephemeral volume is owned by it)."""
    problem: str = ""
    """Why the claim cannot be read (a pod using it is not placed)."""

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return f"{self.namespace}/{self.name}"

    @property
    def fully_bound(self) -> bool:
        """Bound to its volume, as the volume binder reads it."""
        return bool(self.volume_name) and self.bind_completed


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class VolumeFacts:
    """One PersistentVolume."""

    name: str
    claim: str = ""
    """`spec.claimRef` as `namespace/name`, "" for none."""
    claim_uid: str = ""
    phase: str = ""
    storage_class: str = ""
    capacity: int = 0
    """`spec.capacity.storage`, in bytes."""
    access_modes: frozenset[str] = frozenset()
    volume_mode: str = "Filesystem"
    node_affinity: tuple[SelectorTerm, ...] | None = None
    """`spec.nodeAffinity.required.nodeSelectorTerms` (ORed), None when the volume has none."""
    labels: tuple[tuple[str, str], ...] = ()
    deleting: bool = False
    problem: str = ""
    """Why the volume cannot be read: it matches no node."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StorageClassFacts:
    """One StorageClass."""

    name: str
    provisioner: str = ""
    wait_for_first_consumer: bool = False
    allowed_topologies: tuple[SelectorTerm, ...] | None = None
    """`allowedTopologies` as node selector terms (ORed), None when the class has none."""
    problem: str = ""
    """Why the class cannot be read: no node may provision for it."""

    @property
    def provisions(self) -> bool:
        """Whether a delayed claim of this class can be provisioned (not only bound to a
        pre-made volume)."""
        return bool(self.provisioner) and self.provisioner != NO_PROVISIONER


def volume_matches(volume: VolumeFacts, claim: ClaimFacts) -> bool:
    """Whether a pre-made volume could be bound to the claim, the node aside (kube's
    `FindMatchingVolume`): not being deleted, at least the claim's size and of its volume mode,
    and either already claimed for it, or available and alike in class, access modes and
    labels."""
    if volume.problem or volume.deleting:
        return False
    if volume.claim and not bound_to(volume, claim):
        return False
    if volume.capacity < claim.request or volume.volume_mode != claim.volume_mode:
        return False
    if volume.claim:
        return True
    if volume.phase != "Available" or volume.storage_class != claim.storage_class:
        return False
    if not claim.access_modes <= volume.access_modes:
        return False
    return claim.selector is None or claim.selector.matches(dict(volume.labels))


def bound_to(volume: VolumeFacts, claim: ClaimFacts) -> bool:
    """kube's `IsVolumeBoundToClaim`: the volume's claimRef names the claim (and its uid, when
    the claimRef carries one)."""
    if volume.claim != claim.key:
        return False
    return not volume.claim_uid or volume.claim_uid == claim.uid


def claim_problem(
    name: str, claim: ClaimFacts | None, *, ephemeral: bool, pod: str, pod_uid: str
) -> str | None:
    """Why the claim `name` of pod `pod` (`namespace/name`, uid `pod_uid`) keeps the pod off
    every node, in kube-scheduler's words (its VolumeBinding `podHasPVCs`), or None: missing
    (an ephemeral volume's claim: not made yet), unreadable, lost, being deleted, or an
    ephemeral claim the pod does not own."""
    if claim is None:
        if ephemeral:
            return (
                "waiting for ephemeral volume controller to create the persistentvolumeclaim"
                f' "{name}"'
            )
        return f'persistentvolumeclaim "{name}" not found'
    if claim.problem:
        return f'persistentvolumeclaim "{name}" cannot be read: {claim.problem}'
    if claim.lost:
        return (
            f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume'
            f' "{claim.volume_name}"'
        )
    if claim.deleting:
        return f'persistentvolumeclaim "{name}" is being deleted'
    if ephemeral and pod_uid not in claim.owner_uids:
        return f"PVC {claim.key} was not created for pod {pod} (pod is not owner)"
    return None
