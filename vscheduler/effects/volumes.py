"""The writes that bind a pod's volumes before its Binding is sent (kube-scheduler's PreBind of
its VolumeBinding plugin, `binder.go`: `BindPodVolumes`, `bindAPIUpdate`).

Owns: deciding, from a `PodVolumes` the cache handed, what each claim of a pod bound to a node
needs: nothing (bound already; its class is missing or binds at once, which the predicate kept
pending; provisioned for that node already), the claim annotated with the node to provision
for (`SelectNode`: a class that provisions, as kube's `AnnSelectedNode`), or a pre-made volume
claimed for it (`ClaimVolume`: a class without a provisioner, the volume `choose_volumes`
chooses, as kube's `GetBindVolumeToClaim` writes it; the PV controller completes the binding);
or why the bind must not go (`Refusal`: a claim missing or unreadable, or not its pod's own
ephemeral claim, provisioned for another node, or no volume left for it on the node). Each
write carries the resourceVersion the cache held, a precondition (kube sends an Update).
Must not: do I/O (the executor sends the writes), or wait for the PV controller (kube waits up
to its bind timeout; here the kubelet waits for the claim to be bound before it mounts).
"""

from __future__ import annotations

import dataclasses

from vscheduler.model.volumebind import PodClaim, PodVolumes, choose_volumes
from vscheduler.model.volumes import ClaimFacts, claim_problem


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
    premade: list[PodClaim] = []
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
        if not storage_class.provisions:
            premade.append(held)
            continue
        write = _provision(pod, held, claim)
        if isinstance(write, Refusal):
            return write
        if write is not None:
            writes.append(write)
    claimed = _pre_made(pod, premade)
    if isinstance(claimed, Refusal):
        return claimed
    return (*writes, *claimed)


def _claim_refusal(pod: PodVolumes, held: PodClaim) -> Refusal | None:
    """Why the claim keeps the pod from binding whatever the node (the predicate's words:
    `claim_problem`)."""
    problem = claim_problem(
        held.name,
        held.facts,
        ephemeral=held.ephemeral,
        pod=f"{pod.namespace}/{pod.name}",
        pod_uid=pod.uid,
    )
    return None if problem is None else Refusal(problem)


def _provision(pod: PodVolumes, held: PodClaim, claim: ClaimFacts) -> SelectNode | Refusal | None:
    """A claim of a class that provisions: annotated with the node, unless it names it."""
    if claim.selected_node == pod.node:
        return None
    if claim.selected_node:
        return Refusal(
            f"persistentvolumeclaim {claim.key} is being provisioned for node {claim.selected_node}"
        )
    return SelectNode(claim.namespace, claim.name, pod.node, held.resource_version)


def _pre_made(pod: PodVolumes, premade: list[PodClaim]) -> list[ClaimVolume] | Refusal:
    """The claims of a class of pre-made volumes: the volumes kube would choose for them on the
    node (`choose_volumes`), each claimed for its claim (nothing to write for a volume whose
    claimRef names the claim already)."""
    if not premade:
        return []
    claims = [held.facts for held in premade if held.facts is not None]
    volumes = [v.facts for v in pod.volumes]
    chosen = choose_volumes(claims, volumes, pod.node_labels)
    if chosen is None:
        keys = ", ".join(c.key for c in claims)
        return Refusal(
            f"no persistentvolumes are available for persistentvolumeclaims {keys} on node"
            f" {pod.node}"
        )
    versions = {v.facts.name: v.resource_version for v in pod.volumes}
    writes = []
    for claim in claims:
        volume = chosen[claim.key]
        if volume.claim == claim.key and volume.claim_uid == claim.uid:
            continue  # claimed for it already: the PV controller binds them
        writes.append(
            ClaimVolume(volume.name, claim.namespace, claim.name, claim.uid, versions[volume.name])
        )
    return writes
