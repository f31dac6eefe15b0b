"""kube-scheduler's node score formulas and the node-term and toleration rules they use, as
vectorised functions over rows of nodes (the nodeorder plugin weights and sums them).

Owns: least/most requested, balanced allocation, image locality, reverse normalisation, kube's
node-selector term, required node affinity and toleration matching. Must not: keep session
state or read weights.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    BoolArray,
    FloatArray,
    IntArray,
    NodeFacts,
    Requirement,
    SelectorTerm,
    Taint,
    Toleration,
)

MAX_NODE_SCORE: Final = 100
MIB: Final = 1024 * 1024
MIN_IMAGE_THRESHOLD: Final = 23 * MIB
MAX_CONTAINER_IMAGE_THRESHOLD: Final = 1000 * MIB
GPU: Final = "nvidia.com/gpu"
PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
_INT_TEXT: Final = re.compile(r"[+-]?[0-9]+")


# --- kube's formulas, over rows of nodes ---------------------------------------------------------
def _mean_over_present(per: IntArray, present: BoolArray) -> IntArray:
    counted = np.where(present, per, 0).sum(axis=1)
    weight = present.sum(axis=1)
    result: IntArray = np.where(weight > 0, counted // np.maximum(weight, 1), 0)
    return result


def least_requested(requested: IntArray, allocatable: IntArray) -> IntArray:
    """kube's LeastAllocated score (rows: nodes, columns: resources weighted equally)."""
    present = allocatable > 0
    safe = np.where(present, allocatable, 1)
    per = np.where(requested > allocatable, 0, (allocatable - requested) * MAX_NODE_SCORE // safe)
    return _mean_over_present(per, present)


def most_requested(requested: IntArray, allocatable: IntArray) -> IntArray:
    """kube's MostAllocated score (rows: nodes, columns: resources weighted equally)."""
    present = allocatable > 0
    safe = np.where(present, allocatable, 1)
    per = np.minimum(requested, allocatable) * MAX_NODE_SCORE // safe
    return _mean_over_present(per, present)


def balanced_allocation(requested: IntArray, allocatable: IntArray) -> IntArray:
    """kube's BalancedAllocation score: 100 * (1 - std of the used fractions), truncated."""
    present = allocatable > 0
    fraction = np.minimum(requested / np.where(present, allocatable, 1), 1.0)
    count = present.sum(axis=1)
    order = np.argsort(~present, axis=1, kind="stable")
    f = np.take_along_axis(fraction, order, axis=1)
    std = np.zeros(len(requested), dtype=np.float64)
    if f.shape[1] >= 2:
        two = count == 2
        std[two] = np.abs((f[two, 0] - f[two, 1]) / 2)
    if f.shape[1] >= 3:
        three = count == 3
        a, b, c = f[three, 0], f[three, 1], f[three, 2]
        mean = (a + b + c) / 3
        std[three] = np.sqrt(((a - mean) ** 2 + (b - mean) ** 2 + (c - mean) ** 2) / 3)
    score: IntArray = np.floor((1.0 - std) * MAX_NODE_SCORE).astype(np.int64)
    return score


def image_locality(sums: IntArray, images: int) -> IntArray:
    """kube's ImageLocality score from each node's summed, spread-scaled image sizes."""
    top = MAX_CONTAINER_IMAGE_THRESHOLD * images
    clamped = np.clip(sums, MIN_IMAGE_THRESHOLD, top)
    score: IntArray = (
        MAX_NODE_SCORE * (clamped - MIN_IMAGE_THRESHOLD) // (top - MIN_IMAGE_THRESHOLD)
    )
    return score


def reverse_normalised(counts: IntArray) -> IntArray | None:
    """kube's DefaultNormalizeScore(MaxNodeScore, reverse=True), or None when every count is 0."""
    top = int(counts.max()) if len(counts) else 0
    if top == 0:
        return None
    result: IntArray = MAX_NODE_SCORE - MAX_NODE_SCORE * counts // top
    return result


def normalized_image_name(name: str) -> str:
    """kube's normalizedImageName: `:latest` added to an image named without a tag."""
    return name if name.rfind(":") > name.rfind("/") else f"{name}:latest"


# --- node selector terms and tolerations (kube's semantics) --------------------------------------
def _int64(text: str | None) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64), or None."""
    if text is None or not _INT_TEXT.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _requirement_matches(req: Requirement, value: str | None) -> bool | None:
    """Whether a label requirement matches a node's value (None: absent); None if malformed."""
    op, values = req.operator, req.values
    if op in ("Exists", "DoesNotExist"):
        return None if values else (value is not None) == (op == "Exists")
    if op in ("In", "NotIn"):
        return None if not values else (value is not None and value in values) == (op == "In")
    bound = _int64(values[0]) if op in ("Gt", "Lt") and len(values) == 1 else None
    if bound is None:
        return None
    number = _int64(value)
    return number is not None and (number > bound if op == "Gt" else number < bound)


def term_matches(term: SelectorTerm, labels: Mapping[str, str], node_name: str) -> bool:
    """A node-selector term matches (ANDed requirements); empty or malformed terms never do."""
    if not term.match_expressions and not term.match_fields:
        return False
    answers = [_requirement_matches(r, labels.get(r.key)) for r in term.match_expressions]
    for req in term.match_fields:
        if req.operator not in ("In", "NotIn") or len(req.values) != 1:
            return False
        value = node_name if req.key == "metadata.name" else ""
        answers.append((value == req.values[0]) == (req.operator == "In"))
    return None not in answers and all(answers)


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """kube's Toleration.ToleratesTaint."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def tolerates_all(tolerations: Sequence[Toleration], taints: Sequence[Taint]) -> bool:
    """Every NoSchedule and NoExecute taint is tolerated (kube's DoNotScheduleTaintsFilterFunc)."""
    return all(
        any(tolerates(t, taint) for t in tolerations)
        for taint in taints
        if taint.effect in ("NoSchedule", "NoExecute")
    )


def node_affinity_matches(
    node_selector: Mapping[str, str], required: Sequence[SelectorTerm] | None, node: NodeFacts
) -> bool:
    """kube's `GetRequiredNodeAffinity(pod).Match(node)`: the nodeSelector, and some required
    node-affinity term (None: no requirement)."""
    labels = node.labels
    if any(labels.get(k) != v for k, v in node_selector.items()):
        return False
    return required is None or any(term_matches(t, labels, node.name) for t in required)


def intolerable_prefer_no_schedule(
    taints: Sequence[Taint], tolerations: Sequence[Toleration]
) -> int:
    """How many PreferNoSchedule taints no toleration with effect PreferNoSchedule (or empty)
    tolerates."""
    usable = [t for t in tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]
    return sum(
        1
        for taint in taints
        if taint.effect == PREFER_NO_SCHEDULE and not any(tolerates(t, taint) for t in usable)
    )


def image_index(nodes: Sequence[NodeFacts]) -> dict[str, tuple[IntArray, FloatArray]]:
    """Image name -> (the nodes that have it, its size on each of them)."""
    found: dict[str, tuple[list[int], list[int]]] = {}
    for i, node in enumerate(nodes):
        for name, size in node.images.items():
            where, sizes = found.setdefault(name, ([], []))
            where.append(i)
            sizes.append(size)
    return {
        name: (np.array(where, dtype=np.int64), np.array(sizes, dtype=np.float64))
        for name, (where, sizes) in found.items()
    }
