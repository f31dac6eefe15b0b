"""PersistentVolumeClaims, PersistentVolumes and StorageClasses become volume facts.

Owns: reading what volume binding needs of the three kinds (`model.volumes`), as the API server
validates them, and the lenient forms the cache uses (`guarded_claim`, `guarded_volume`,
`guarded_class`: a malformed object becomes facts carrying the message in `problem`, read the
conservative way: a claim that keeps its pods pending, a volume and a class that fit no node).
Must not: do I/O, or decide whether a pod fits a node.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

from vscheduler.convert.fields import (
    Raw,
    as_mapping,
    error,
    items,
    join,
    mapping,
    read_meta,
    salvaged_name,
    show,
    string,
    string_list,
)
from vscheduler.convert.pdb import convert_selector
from vscheduler.convert.placement import selector_term
from vscheduler.errors import InputError, QuantityError
from vscheduler.model.facts import Requirement, SelectorTerm
from vscheduler.model.quantity import parse_quantity, to_units
from vscheduler.model.volumes import (
    BETA_CLASS,
    BIND_COMPLETED,
    SELECTED_NODE,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimFacts,
    StorageClassFacts,
    VolumeFacts,
)

CLAIM: Final = "PersistentVolumeClaim"
VOLUME: Final = "PersistentVolume"
CLASS: Final = "StorageClass"
_MODES: Final = ("Filesystem", "Block")


def convert_claim(obj: Raw) -> ClaimFacts:
    """A `v1` PersistentVolumeClaim; raises `InputError` naming the object and the field."""
    meta = read_meta(obj, CLAIM, namespaced=True)
    label = meta.label
    spec = mapping(obj, "spec", label, "")
    status = mapping(obj, "status", label, "")
    requests = mapping(
        mapping(spec, "resources", label, "spec"), "requests", label, "spec.resources"
    )
    selector = spec.get("selector")
    match = None if selector is None else convert_selector(selector, label, "spec.selector")
    owners = items(meta_of(obj), "ownerReferences", label, "metadata")
    return ClaimFacts(
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        volume_name=string(spec, "volumeName", label, "spec"),
        bind_completed=BIND_COMPLETED in meta.annotations,
        storage_class=_claim_class(meta.annotations, spec, label),
        selected_node=meta.annotations.get(SELECTED_NODE, ""),
        request=_bytes(requests, "storage", label, "spec.resources.requests"),
        access_modes=frozenset(string_list(spec, "accessModes", label, "spec")),
        volume_mode=_mode(spec, label),
        selector=match,
        lost=string(status, "phase", label, "status") == "Lost",
        deleting=meta.deleting,
        owner_uids=frozenset(
            str(o.get("uid"))
            for o in owners
            if isinstance(o, dict) and o.get("controller") is True and o.get("uid")
        ),
    )


def convert_volume(obj: Raw) -> VolumeFacts:
    """A `v1` PersistentVolume; raises `InputError` naming the object and the field."""
    meta = read_meta(obj, VOLUME, namespaced=False)
    label = meta.label
    spec = mapping(obj, "spec", label, "")
    status = mapping(obj, "status", label, "")
    ref = spec.get("claimRef")
    claim = claim_uid = ""
    if ref is not None:  # any claimRef takes the volume; one without a namespace or name
        ref = as_mapping(ref, label, "spec.claimRef")  # names no claim (kube matches none)
        name = string(ref, "name", label, "spec.claimRef")
        namespace = string(ref, "namespace", label, "spec.claimRef")
        claim = f"{namespace}/{name}"
        claim_uid = string(ref, "uid", label, "spec.claimRef")
    affinity: tuple[SelectorTerm, ...] | None = None
    raw_affinity = spec.get("nodeAffinity")
    if raw_affinity is not None:
        path = "spec.nodeAffinity"
        required = as_mapping(raw_affinity, label, path).get("required")
        if required is not None:
            req_path = join(path, "required")
            terms = items(
                as_mapping(required, label, req_path), "nodeSelectorTerms", label, req_path
            )
            affinity = tuple(
                selector_term(term, label, f"{req_path}.nodeSelectorTerms[{i}]")
                for i, term in enumerate(terms)
            )
    class_name = meta.annotations.get(BETA_CLASS)
    if class_name is None:
        class_name = string(spec, "storageClassName", label, "spec")
    return VolumeFacts(
        name=meta.name,
        claim=claim,
        claim_uid=claim_uid,
        phase=string(status, "phase", label, "status"),
        storage_class=class_name,
        capacity=_bytes(
            mapping(spec, "capacity", label, "spec"), "storage", label, "spec.capacity"
        ),
        access_modes=frozenset(string_list(spec, "accessModes", label, "spec")),
        volume_mode=_mode(spec, label),
        node_affinity=affinity,
        labels=tuple(sorted(meta.labels.items())),
        deleting=meta.deleting,
    )


def convert_class(obj: Raw) -> StorageClassFacts:
    """A `storage.k8s.io/v1` StorageClass; raises `InputError` naming the object and the field."""
    meta = read_meta(obj, CLASS, namespaced=False)
    label = meta.label
    mode = string(obj, "volumeBindingMode", label, "")
    topologies: tuple[SelectorTerm, ...] | None = None
    raw_terms = items(obj, "allowedTopologies", label, "")
    if raw_terms:
        terms = []
        for i, raw in enumerate(raw_terms):
            path = f"allowedTopologies[{i}]"
            term = as_mapping(raw, label, path)
            reqs = []
            for j, expr in enumerate(items(term, "matchLabelExpressions", label, path)):
                expr_path = f"{path}.matchLabelExpressions[{j}]"
                expr = as_mapping(expr, label, expr_path)
                key = string(expr, "key", label, expr_path)
                if not key:
                    raise error(label, join(expr_path, "key"), "must be a non-empty string")
                values = string_list(expr, "values", label, expr_path)
                reqs.append(Requirement(key=key, operator="In", values=values))
            terms.append(SelectorTerm(match_expressions=tuple(reqs)))
        topologies = tuple(terms)
    return StorageClassFacts(
        name=meta.name,
        provisioner=string(obj, "provisioner", label, ""),
        wait_for_first_consumer=mode == WAIT_FOR_FIRST_CONSUMER,
        allowed_topologies=topologies,
    )


# --- lenient forms (the cache's) ------------------------------------------------------------------
def guarded_claim(obj: Raw) -> ClaimFacts:
    """`convert_claim`; a malformed claim keeps every pod using it pending. Never raises."""
    try:
        return convert_claim(obj)
    except InputError as err:
        namespace, name = salvaged_name(obj)
        return ClaimFacts(namespace=namespace or "default", name=name, problem=str(err))


def guarded_volume(obj: Raw) -> VolumeFacts:
    """`convert_volume`; a malformed volume matches no node. Never raises."""
    try:
        return convert_volume(obj)
    except InputError as err:
        return VolumeFacts(name=salvaged_name(obj)[1], node_affinity=(), problem=str(err))


def guarded_class(obj: Raw) -> StorageClassFacts:
    """`convert_class`; a malformed class provisions on no node. Never raises."""
    try:
        return convert_class(obj)
    except InputError as err:
        return StorageClassFacts(
            name=salvaged_name(obj)[1],
            wait_for_first_consumer=True,
            allowed_topologies=(),
            problem=str(err),
        )


# --- helpers --------------------------------------------------------------------------------------
def meta_of(obj: Raw) -> Raw:
    """The object's metadata (read_meta has checked it is a mapping)."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _claim_class(annotations: dict[str, str], spec: Raw, label: str) -> str:
    if BETA_CLASS in annotations:
        return annotations[BETA_CLASS]
    if spec.get("storageClassName") is None:
        return ""
    return string(spec, "storageClassName", label, "spec")


def _mode(spec: Raw, label: str) -> str:
    mode = string(spec, "volumeMode", label, "spec") or "Filesystem"
    if mode not in _MODES:
        raise error(
            label, "spec.volumeMode", f"must be one of {', '.join(_MODES)}, got {show(mode)}"
        )
    return mode


def _bytes(amounts: Raw, key: str, label: str, path: str) -> int:
    value = amounts.get(key)
    if value is None:
        return 0
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise error(label, join(path, key), f"must be a quantity, got {show(value)}")
    try:
        amount: Fraction = parse_quantity(value)
    except QuantityError as err:
        raise error(label, join(path, key), str(err)) from err
    if amount < 0:
        raise error(label, join(path, key), f"must not be negative, got {show(value)}")
    return to_units(amount)
