"""Volume binding: a pod's PersistentVolumeClaims against the nodes (kube-scheduler's
`VolumeBinding` PreFilter and Filter, `pkg/scheduler/framework/plugins/volumebinding`).

Per pod (its claims are its own: a StatefulSet's pods share a spec, not their claims):

- **Before any node** (`prefilter`, UnschedulableAndUnresolvable, kube's words): a claim that does
  not exist (`persistentvolumeclaim "data" not found`; for a generic ephemeral volume `waiting for
  ephemeral volume controller to create the persistentvolumeclaim "p-scratch"`), one not made for
  this pod (an ephemeral claim the pod does not own), one whose volume is lost, one being deleted,
  one that cannot be read, and one not yet bound that binds at once (its class is "", unknown, or
  `Immediate`; or it names a volume not yet bound to it): `pod has unbound immediate
  PersistentVolumeClaims`. The pod is tried again once the claims change.
- **Per node** (`mask`, `reason`): a bound claim's volume must exist (`node(s) unavailable due to
  one or more pvc(s) bound to non-existent pv(s)`) and its node affinity must admit the node
  (`node(s) didn't match PersistentVolume's node affinity`). A claim waiting for its first
  consumer (class `WaitForFirstConsumer`) that names a node (`volume.kubernetes.io/selected-node`,
  or placed this cycle with another pod) admits only that node; otherwise, of a class that
  provisions, the nodes within the class's `allowedTopologies`; of a class of pre-made volumes
  (`kubernetes.io/no-provisioner`), the nodes where an available volume matches the claim (class,
  size, access modes, volume mode, label selector, node affinity) and no pod placed this cycle
  holds it. Elsewhere: `node(s) didn't find available persistent volumes to bind`.

Placing a pod with claims waiting for their first consumer holds, for the rest of the cycle, the
node for each such claim and one matching volume per pre-made claim (`on_allocate`), so two pods
of one claim go to one node and two claims never count one volume; the effects write the node and
the volume when they bind the pod. Those holds change other nodes' answers, so in a session with
such a pending pod the plugin is not node-local.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    BoolArray,
    ClaimFacts,
    NodeFacts,
    SelectorTerm,
    Status,
    StorageClassFacts,
    TaskState,
    TaskStatus,
    VolumeFacts,
    choose_volumes,
    claim_problem,
    required_matches,
    unresolvable,
    volume_matches,
)

UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
NODE_CONFLICT: Final = "node(s) didn't match PersistentVolume's node affinity"
BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
PV_NOT_EXIST: Final = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


class VolumeBinding:
    """The claims of one session's pods against its nodes."""

    def __init__(
        self,
        nodes: Sequence[NodeFacts],
        claims: Mapping[str, ClaimFacts],
        volumes: Mapping[str, VolumeFacts],
        classes: Mapping[str, StorageClassFacts],
    ) -> None:
        self._nodes = nodes
        self._claims = claims
        self._volumes = volumes
        self._classes = classes
        self._affinity: dict[str, BoolArray] = {}
        """Per volume, the nodes its node affinity admits."""
        self._topology: dict[str, BoolArray] = {}
        """Per class, the nodes its allowedTopologies admit."""
        self._selected: dict[str, tuple[int, set[str]]] = {}
        """Per delayed claim placed this cycle: its node, and the pods placed with it."""
        self._held: dict[str, str] = {}
        """Per pre-made volume held this cycle: the claim it is held for."""
        self._volume_of: dict[str, str] = {}
        """Per pre-made claim placed this cycle: the volume held for it."""
        self._holds: dict[str, list[str]] = {}
        """Per pod placed this cycle: the claims it holds."""

    # --- before any node ----------------------------------------------------------------------
    def prefilter(self, task: TaskState) -> Status | None:
        """Why no node may take the pod because of its claims (None: nodes decide)."""
        facts = task.facts
        for name, ephemeral in facts.claims:
            claim = self._claims.get(f"{facts.namespace}/{name}")
            problem = claim_problem(
                name, claim, ephemeral=ephemeral, pod=facts.key, pod_uid=facts.uid
            )
            if problem is not None:
                return unresolvable(problem)
            assert claim is not None  # a missing claim is a problem
            if not claim.fully_bound and (claim.volume_name or self._delayed(claim) is None):
                return unresolvable(UNBOUND_IMMEDIATE)
        return None

    def _delayed(self, claim: ClaimFacts) -> StorageClassFacts | None:
        """The class of an unbound claim that waits for its first consumer, or None."""
        storage_class = self._classes.get(claim.storage_class) if claim.storage_class else None
        if storage_class is None or not storage_class.wait_for_first_consumer:
            return None
        return storage_class

    def waits_for_a_node(self, task: TaskState) -> bool:
        """Whether the pod has a claim that waits for its first consumer (placing it holds a
        node or a volume for the rest of the cycle)."""
        facts = task.facts
        for name, _ in facts.claims:
            claim = self._claims.get(f"{facts.namespace}/{name}")
            if claim is not None and not claim.volume_name and self._delayed(claim) is not None:
                return True
        return False

    # --- per node -----------------------------------------------------------------------------
    def mask(self, task: TaskState) -> BoolArray | None:
        """The nodes the pod's claims admit (None: the pod has no claim). Call after
        `prefilter` passed."""
        facts = task.facts
        if not facts.claims:
            return None
        ok = np.ones(len(self._nodes), dtype=np.bool_)
        for name, _ in facts.claims:
            claim = self._claims.get(f"{facts.namespace}/{name}")
            if claim is None:
                return np.zeros(len(self._nodes), dtype=np.bool_)
            ok &= self._claim_mask(claim)[0]
        premade = self._premade(task)
        if len(premade) > 1:  # one volume each: a volume found for two claims serves one
            for i in np.flatnonzero(ok):
                ok[i] = self._choose(premade, int(i)) is not None
        return ok

    def reason(self, task: TaskState, i: int) -> str | None:
        """Why node `i` fails the pod's claims (None: it does not)."""
        facts = task.facts
        for name, _ in facts.claims:
            claim = self._claims.get(f"{facts.namespace}/{name}")
            if claim is None:
                return BIND_CONFLICT
            mask, why = self._claim_mask(claim)
            if not mask[i]:
                return why
        premade = self._premade(task)
        if len(premade) > 1 and self._choose(premade, i) is None:
            return BIND_CONFLICT
        return None

    def _premade(self, task: TaskState) -> list[ClaimFacts]:
        """The pod's distinct claims that wait for a pre-made volume not yet held for them."""
        facts = task.facts
        found: dict[str, ClaimFacts] = {}
        for name, _ in facts.claims:
            claim = self._claims.get(f"{facts.namespace}/{name}")
            if claim is None or claim.volume_name or claim.key in self._volume_of:
                continue
            storage_class = self._delayed(claim)
            if storage_class is None or storage_class.problem or storage_class.provisions:
                continue
            if self._selected_node(claim) is None:
                found[claim.key] = claim
        return list(found.values())

    def _choose(self, claims: Sequence[ClaimFacts], i: int) -> dict[str, str] | None:
        """kube's `findMatchingVolumes` on node `i` (`choose_volumes`, as the effects choose at
        bind time), among the volumes no other claim holds this cycle: per claim, its volume's
        name; None when some claim finds none."""
        free = [v for v in self._volumes.values() if v.name not in self._held]
        chosen = choose_volumes(claims, free, self._nodes[i].labels)
        return None if chosen is None else {key: v.name for key, v in chosen.items()}

    def _claim_mask(self, claim: ClaimFacts) -> tuple[BoolArray, str]:
        """The nodes one claim admits, and what the others are told."""
        if claim.fully_bound:
            volume = self._volumes.get(claim.volume_name)
            if volume is None:
                return np.zeros(len(self._nodes), dtype=np.bool_), PV_NOT_EXIST
            return self._affinity_of(volume), NODE_CONFLICT
        none = np.zeros(len(self._nodes), dtype=np.bool_)
        storage_class = self._delayed(claim)
        if storage_class is None or claim.volume_name:
            return none, UNBOUND_IMMEDIATE
        selected = self._selected_node(claim)
        if selected is not None:
            if selected >= 0:
                none[selected] = True
            if claim.key in self._selected:  # held by this cycle's placement: decided then
                return none, BIND_CONFLICT
            # annotated: provisioned there, if the class provisions there (kube's
            # checkVolumeProvisions)
            if storage_class.problem or not storage_class.provisions:
                return np.zeros(len(self._nodes), dtype=np.bool_), BIND_CONFLICT
            return none & self._topology_of(storage_class), BIND_CONFLICT
        if storage_class.problem:
            return none, BIND_CONFLICT
        if storage_class.provisions:
            return self._topology_of(storage_class), BIND_CONFLICT
        ok = none
        for volume in self._matching(claim):
            ok = ok | self._affinity_of(volume)
        return ok, BIND_CONFLICT

    def _selected_node(self, claim: ClaimFacts) -> int | None:
        """The node index the claim is bound to provision on (-1: a node not in the cluster),
        from its annotation or this cycle's placements; None when it names none."""
        placed = self._selected.get(claim.key)
        if placed is not None:
            return placed[0]
        if not claim.selected_node:
            return None
        for i, node in enumerate(self._nodes):
            if node.name == claim.selected_node:
                return i
        return -1

    def _matching(self, claim: ClaimFacts) -> list[VolumeFacts]:
        """The pre-made volumes that could be bound to the claim, on some node (kube's
        `FindMatchingVolume` but the node), not held this cycle for another claim."""
        found = []
        for volume in self._volumes.values():
            held = self._held.get(volume.name)
            if held is not None and held != claim.key:
                continue
            if volume_matches(volume, claim):
                found.append(volume)
        return found

    def _affinity_of(self, volume: VolumeFacts) -> BoolArray:
        mask = self._affinity.get(volume.name)
        if mask is None:
            mask = self._affinity[volume.name] = _nodes_matching(self._nodes, volume.node_affinity)
        return mask

    def _topology_of(self, storage_class: StorageClassFacts) -> BoolArray:
        mask = self._topology.get(storage_class.name)
        if mask is None:
            mask = self._topology[storage_class.name] = _nodes_matching(
                self._nodes, storage_class.allowed_topologies
            )
        return mask

    # --- holds --------------------------------------------------------------------------------
    def on_allocate(self, task: TaskState) -> None:
        """The pod holds its node: each claim waiting for its first consumer is held to that
        node, and each pre-made one to a matching volume there (one volume per claim, however
        many of its pods are placed)."""
        i = task.node_index
        facts = task.facts
        if i < 0 or not facts.claims or task.status is TaskStatus.PENDING:
            return
        self.on_deallocate(task)
        premade = self._premade(task)
        holds: list[str] = []
        for name, _ in facts.claims:
            claim = self._claims.get(f"{facts.namespace}/{name}")
            if claim is None or claim.volume_name or claim.key in holds:
                continue
            if self._delayed(claim) is None:
                continue
            self._selected.setdefault(claim.key, (i, set()))[1].add(task.uid)
            holds.append(claim.key)
        for claim_key, volume in (self._choose(premade, i) or {}).items():
            self._held[volume] = claim_key
            self._volume_of[claim_key] = volume
        if holds:
            self._holds[task.uid] = holds

    def on_deallocate(self, task: TaskState) -> None:
        """The pod no longer holds its node: its holds go with the last pod of each claim."""
        for claim_key in self._holds.pop(task.uid, ()):
            placed = self._selected.get(claim_key)
            if placed is None:
                continue
            placed[1].discard(task.uid)
            if not placed[1]:
                del self._selected[claim_key]
                volume = self._volume_of.pop(claim_key, None)
                if volume is not None:
                    self._held.pop(volume, None)


def _nodes_matching(nodes: Sequence[NodeFacts], terms: Sequence[SelectorTerm] | None) -> BoolArray:
    """The nodes some of `terms` admits by their labels (None: every node). As kube's
    `CheckNodeAffinity`, the node is seen by its labels alone: a `metadata.name` field term
    matches no node."""
    if terms is None:
        return np.ones(len(nodes), dtype=np.bool_)
    return np.array([required_matches(terms, node.labels, "") for node in nodes], dtype=np.bool_)
