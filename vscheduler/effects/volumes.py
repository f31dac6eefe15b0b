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
write carries the resourceVersion the cache held, a precondition (kube sends an Update). With
the writes, what the Binding then waits for (kube's `checkBindings` reads the same two lists):
each claim to be provisioned for the node (`Provisioned`, written now or annotated for it
already) and each pre-made volume chosen (`Claimed`), with the resourceVersion a write was
preconditioned on (the cache's object still at that version has not shown the write yet).
Must not: do I/O (the executor sends the writes), or decide when the claims are bound
(`effects.volume_wait` does).
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
class Provisioned:
    """The claim `namespace/name`, to be provisioned for the pod's node: the Binding waits until
    the provisioner made its volume and the PV controller bound them. `written`: the
    resourceVersion the annotation was written on (None: the claim named the node already)."""

    namespace: str
    name: str
    written: str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class Claimed:
    """The claim `namespace/name` and the pre-made volume chosen for it: the Binding waits until
    the PV controller bound them. `written`: the volume's resourceVersion its claimRef was
    written on (None: the volume named the claim already)."""

    namespace: str
    name: str
    volume: str
    written: str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


ClaimWait = Provisioned | Claimed


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    """The writes to send before the pod's Binding, then the claims it waits for (none: it goes
    at once)."""

    writes: tuple[VolumeWrite, ...] = ()
    waits: tuple[ClaimWait, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Refusal:
    """Why the pod's Binding must not be sent now (the pod is placed again next cycle)."""

    reason: str


def volume_writes(pod: PodVolumes) -> Plan | Refusal:
    """The writes that bind the volumes of `pod` to its node, in the order of its claims, and
    the claims the Binding then waits for; or why the bind must not go."""
    writes: list[VolumeWrite] = []
    waits: list[ClaimWait] = []
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
        written = None if write is None else write.resource_version
        waits.append(Provisioned(claim.namespace, claim.name, written))
    claimed = _pre_made(pod, premade)
    if isinstance(claimed, Refusal):
        return claimed
    return Plan((*writes, *claimed[0]), (*waits, *claimed[1]))


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


def _pre_made(
    pod: PodVolumes, premade: list[PodClaim]
) -> tuple[list[ClaimVolume], list[Claimed]] | Refusal:
    """The claims of a class of pre-made volumes: the volumes kube would choose for them on the
    node (`choose_volumes`), each claimed for its claim (nothing to write for a volume whose
    claimRef names the claim already), and each pair to wait for."""
    if not premade:
        return [], []
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
    waits = []
    for claim in claims:
        volume = chosen[claim.key]
        if volume.claim == claim.key and volume.claim_uid == claim.uid:
            waits.append(Claimed(claim.namespace, claim.name, volume.name))
            continue  # claimed for it already: the PV controller binds them
        version = versions[volume.name]
        writes.append(ClaimVolume(volume.name, claim.namespace, claim.name, claim.uid, version))
        waits.append(Claimed(claim.namespace, claim.name, volume.name, version))
    return writes, waits
