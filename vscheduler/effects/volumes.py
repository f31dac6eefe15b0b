"""The writes that bind a pod's volumes before its Binding is sent (kube-scheduler's PreBind of
its VolumeBinding plugin, `binder.go`: `BindPodVolumes`, `bindAPIUpdate`).

Owns: deciding, from a `PodVolumes` the cache handed, what each claim of a pod bound to a node
needs: nothing (bound already; its class is missing or binds at once, which the predicate kept
pending; provisioned for that node already), the claim annotated with the node to provision
for (`SelectNode`: a class that provisions, as kube's `AnnSelectedNode`), or a pre-made volume
claimed for it (`ClaimVolume`: a class without a provisioner, the volume `find_matching_volume`
chooses, as kube's `GetBindVolumeToClaim` writes it; the PV controller completes the binding);
or why the bind must not go (`Refusal`: a claim missing or unreadable, or not its pod's own
ephemeral claim, provisioned for another node, or no volume left for it on the node). Each
write carries the resourceVersion the cache held, a precondition (kube sends an Update).
Must not: do I/O (the executor sends the writes), or wait for the PV controller (kube waits up
to its bind timeout; here the kubelet waits for the claim to be bound before it mounts).
"""

from __future__ import annotations

import dataclasses

from vscheduler.model.volumebind import PodClaim, PodVolumes, find_matching_volume
from vscheduler.model.volumes import ClaimFacts


@dataclasses.dataclass(frozen=True, slots=True)
class SelectNode:
    """Annotate the claim `namespace/name` with the node its volume is to be provisioned for."""

    namespace: str
    name: str
    node: str
    resource_version: str

    def __str__(self) -> str:
        return f"annotate PersistentVolumeClaim {self.namespace}/{self.name} for node {self.node}"


@dataclasses.dataclass(frozen=True, slots=True)
class ClaimVolume:
    """Set the claimRef of the PersistentVolume `volume` to the claim `namespace/name` (`uid`)."""

    volume: str
    namespace: str
    name: str
    uid: str
    resource_version: str

    def __str__(self) -> str:
        return (
            f"claim PersistentVolume {self.volume} for PersistentVolumeClaim"
            f" {self.namespace}/{self.name}"
        )


VolumeWrite = SelectNode | ClaimVolume


@dataclasses.dataclass(frozen=True, slots=True)
class Refusal:
    """Why the pod's Binding must not be sent now (the pod is placed again next cycle)."""

    reason: str


def volume_writes(pod: PodVolumes) -> tuple[VolumeWrite, ...] | Refusal:
    """The writes that bind the volumes of `pod` to its node, in the order of its claims, or
    why the bind must not go."""
    writes: list[VolumeWrite] = []
    taken: set[str] = set()
    """The volumes chosen for the pod's earlier claims (kube's `excludedVolumes`)."""
    for held in pod.claims:
        refusal = _claim_refusal(pod, held)
        if refusal is not None:
            return refusal
        claim = held.facts
        assert claim is not None  # refused otherwise
        storage_class = pod.classes.get(claim.storage_class)
        if claim.volume_name or storage_class is None:
            continue  # bound, or binds at once: the predicate kept the pod pending until bound
        if not storage_class.wait_for_first_consumer:
            continue
        if storage_class.problem:
            return Refusal(f"storageclass {storage_class.name}: {storage_class.problem}")
        write = (
            _provision(pod, held, claim)
            if storage_class.provisions
            else _pre_made(pod, held, claim, taken)
        )
        if isinstance(write, Refusal):
            return write
        if write is not None:
            writes.append(write)
    return tuple(writes)


def _claim_refusal(pod: PodVolumes, held: PodClaim) -> Refusal | None:
    """Why the claim keeps the pod from binding whatever the node: missing, unreadable, being
    deleted, lost, or an ephemeral claim the pod does not own."""
    claim = held.facts
    key = f"{pod.namespace}/{held.name}"
    if claim is None:
        return Refusal(f'persistentvolumeclaim "{held.name}" not found')
    if claim.problem:
        return Refusal(f"persistentvolumeclaim {key}: {claim.problem}")
    if claim.deleting:
        return Refusal(f'persistentvolumeclaim "{held.name}" is being deleted')
    if claim.lost:
        return Refusal(
            f'persistentvolumeclaim "{held.name}" bound to non-existent persistentvolume'
            f' "{claim.volume_name}"'
        )
    if held.ephemeral and pod.uid not in claim.owner_uids:
        return Refusal(f"PVC {key} was not created for pod {pod.namespace}/{pod.name}")
    return None


def _provision(pod: PodVolumes, held: PodClaim, claim: ClaimFacts) -> SelectNode | Refusal | None:
    """A claim of a class that provisions: annotated with the node, unless it names it."""
    if claim.selected_node == pod.node:
        return None
    if claim.selected_node:
        return Refusal(
            f"persistentvolumeclaim {claim.key} is being provisioned for node {claim.selected_node}"
        )
    return SelectNode(claim.namespace, claim.name, pod.node, held.resource_version)


def _pre_made(
    pod: PodVolumes, held: PodClaim, claim: ClaimFacts, taken: set[str]
) -> ClaimVolume | Refusal | None:
    """A claim of a class of pre-made volumes: the volume kube would choose for it on the node,
    claimed for it (nothing to write when its claimRef names the claim already)."""
    volume = find_matching_volume(
        claim, (v.facts for v in pod.volumes), pod.node_labels, pod.node, taken
    )
    if volume is None:
        return Refusal(
            f"no persistentvolume of class {claim.storage_class} is available for"
            f" persistentvolumeclaim {claim.key} on node {pod.node}"
        )
    taken.add(volume.name)
    if volume.claim == claim.key and volume.claim_uid == claim.uid:
        return None  # claimed for it already: the PV controller binds them
    version = next(v.resource_version for v in pod.volumes if v.facts.name == volume.name)
    return ClaimVolume(volume.name, claim.namespace, claim.name, claim.uid, version)
