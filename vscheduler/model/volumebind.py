"""What binding a pod's volumes reads at bind time, and kube's choice of a pre-made volume.

Owns: `PodVolumes` (the pod's claims, their classes, the volumes and the node, as the cache held
them at one moment, each claim and volume with the resourceVersion it was read at),
`HeldBinding` (the claims and volumes a pod's Binding waits for, as the cache holds them now) and
`find_matching_volume`, kube's `FindMatchingVolume` on the scheduler's path (component-helpers
`storage/volume`): a volume already claimed by the claim wins (or none, if its node affinity
does not match the node); else the smallest available volume that fits, by name on a tie.
Must not: do I/O, or decide what to write (`effects.volumes` does).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container, Iterable, Mapping, Sequence

from vscheduler.model.nodeselect import required_matches
from vscheduler.model.volumes import (
    ClaimFacts,
    StorageClassFacts,
    VolumeFacts,
    bound_to,
    volume_matches,
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodClaim:
    """One claim of a pod's volumes, as the cache holds it."""

    name: str
    ephemeral: bool
    """A generic ephemeral volume's claim (`<pod>-<volume>`): the pod must own it."""
    facts: ClaimFacts | None
    """None: no such claim is held."""
    resource_version: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HeldVolume:
    """A PersistentVolume with the resourceVersion its facts were read at."""

    facts: VolumeFacts
    resource_version: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodVolumes:
    """What binding the volumes of the pod `namespace/name` (uid `uid`) to `node` reads."""

    namespace: str
    name: str
    uid: str
    node: str
    node_labels: Mapping[str, str]
    claims: tuple[PodClaim, ...]
    classes: Mapping[str, StorageClassFacts]
    """The StorageClasses the claims name and the cache holds, by name."""
    volumes: tuple[HeldVolume, ...]
    """Every PersistentVolume held, by name."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HeldClaim:
    """A PersistentVolumeClaim with the resourceVersion its facts were read at."""

    facts: ClaimFacts
    resource_version: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HeldBinding:
    """The claims (by `namespace/name`) and volumes (by name) a pod's Binding waits for, as the
    cache holds them now: one not held is absent."""

    claims: Mapping[str, HeldClaim]
    volumes: Mapping[str, HeldVolume]
    node_labels: Mapping[str, str]


def choose_volumes(
    claims: Iterable[ClaimFacts],
    volumes: Sequence[VolumeFacts],
    labels: Mapping[str, str],
) -> dict[str, VolumeFacts] | None:
    """Per claim key, the pre-made volume each claim is to be bound to on the node with
    `labels`, or None when one of them finds none: kube's `findMatchingVolumes` (claims by
    smallest request first, no volume chosen twice)."""
    chosen: dict[str, VolumeFacts] = {}
    taken: set[str] = set()
    for claim in sorted(claims, key=lambda c: (c.request, c.key)):
        volume = find_matching_volume(claim, volumes, labels, taken)
        if volume is None:
            return None
        chosen[claim.key] = volume
        taken.add(volume.name)
    return chosen


def find_matching_volume(
    claim: ClaimFacts,
    volumes: Iterable[VolumeFacts],
    labels: Mapping[str, str],
    excluded: Container[str] = (),
) -> VolumeFacts | None:
    """The volume `claim` is to be bound to on the node with `labels`, or None: kube's
    `FindMatchingVolume` with a node (the volumes named in `excluded` are taken by the pod's
    other claims)."""
    best: VolumeFacts | None = None
    for volume in sorted(volumes, key=lambda v: v.name):
        if volume.name in excluded or not volume_matches(volume, claim):
            continue
        fits_node = required_matches(volume.node_affinity, labels, "")  # labels only, as kube
        if bound_to(volume, claim):
            return volume if fits_node else None
        if fits_node and (best is None or volume.capacity < best.capacity):
            best = volume
    return best
