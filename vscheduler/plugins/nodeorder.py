"""nodeorder: kube-scheduler's scores for a node, weighted (Volcano's nodeorder plugin).

Registers:

- `score_nodes(task, idx)` (nodeOrder), vectorised over node indices, the sum of:
  - leastrequested (kube NodeResourcesFit, LeastAllocated, cpu and memory weighted equally):
    per resource `(alloc - req) * 100 // alloc` (0 if req > alloc), then the integer mean over
    the resources the node has (alloc > 0);
  - mostrequested (MostAllocated, cpu and memory weight 1): per resource
    `min(req, alloc) * 100 // alloc`, integer mean likewise;
  - balancedresource (NodeResourcesBalancedAllocation over cpu, memory and nvidia.com/gpu, the
    GPU only when the task requests it): fractions `min(req / alloc, 1)`; std is `|f1 - f2| / 2`
    for two resources, the population standard deviation for three, 0 otherwise; score
    `int((1 - std) * 100)`;
  - nodeaffinity: the sum of the weights of the preferred terms the node matches, not
    normalised (Volcano calls kube's Score without NormalizeScore);
  - imagelocality (kube ImageLocality): for each of the task's images on the node,
    `int(size * nodes_with_image / all_nodes)`, summed, clamped to [23 MiB, 1000 MiB * images],
    scaled to 0..100 with integer division;

  where `req` is the node's used resources (`ledger.used`: tasks allocated, binding, bound,
  running or releasing there) plus the task's request, `alloc` the node's allocatable, and each
  score is multiplied by its weight.
- `batch_score_nodes(task, idx)` (batchNodeOrder): tainttoleration, the count of PreferNoSchedule
  taints the task does not tolerate (tolerations with effect PreferNoSchedule or empty),
  normalised over `idx` as kube's DefaultNormalizeScore(reverse): `100 - 100 * count // max`,
  times the weight. None when no node of `idx` has such a taint: kube would give every node the
  same 100 * weight, which cannot change the choice.

Arguments (Volcano's names; defaults as in Volcano's nodeorder.go): `leastrequested.weight` (1),
`mostrequested.weight` (0), `balancedresource.weight` (1), `nodeaffinity.weight` (2),
`imagelocality.weight` (1), `tainttoleration.weight` (3), and, accepted but not scored yet,
`podaffinity.weight` (2), `podtopologyspread.weight` (2), `selectorspread.weight` (0) and
`volumebinding.weight` (1). A weight of 0 skips its score.

Differences from kube, all small: requests are the pods' effective requests (kube scores cpu and
memory of containers without requests as 100m and 200Mi in least/mostrequested); imagelocality
counts each distinct image once (kube counts containers); balancedresource and the
requested-to-capacity scores see pipelined tasks only once they are allocated.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    CPU,
    MEMORY,
    ArgumentReader,
    BoolArray,
    FloatArray,
    IntArray,
    NodeFacts,
    Requirement,
    SelectorTerm,
    Session,
    Taint,
    TaskState,
    Toleration,
)

NAME: Final = "nodeorder"
MAX_NODE_SCORE: Final = 100
MIB: Final = 1024 * 1024
MIN_IMAGE_THRESHOLD: Final = 23 * MIB
MAX_CONTAINER_IMAGE_THRESHOLD: Final = 1000 * MIB
GPU: Final = "nvidia.com/gpu"
PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
_INT_TEXT: Final = re.compile(r"[+-]?[0-9]+")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Weights:
    """Each score's weight."""

    least_requested: int = 1
    most_requested: int = 0
    balanced_resource: int = 1
    node_affinity: int = 2
    image_locality: int = 1
    taint_toleration: int = 3
    pod_affinity: int = 2
    pod_topology_spread: int = 2
    selector_spread: int = 0
    volume_binding: int = 1


ARGUMENTS: Final = (
    ("leastrequested.weight", "least_requested"),
    ("mostrequested.weight", "most_requested"),
    ("balancedresource.weight", "balanced_resource"),
    ("nodeaffinity.weight", "node_affinity"),
    ("imagelocality.weight", "image_locality"),
    ("tainttoleration.weight", "taint_toleration"),
    ("podaffinity.weight", "pod_affinity"),
    ("podtopologyspread.weight", "pod_topology_spread"),
    ("selectorspread.weight", "selector_spread"),
    ("volumebinding.weight", "volume_binding"),
)
"""Argument key -> Weights field."""


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


# --- the plugin ---------------------------------------------------------------------------------
class NodeOrder:
    """The per-session plugin."""

    def __init__(self, session: Session, weights: Weights) -> None:
        ledger = session.ledger
        self._w = weights
        self._ledger = ledger
        self._cpu_memory = [ledger.dim_index[CPU], ledger.dim_index[MEMORY]]
        self._gpu = ledger.dim_index.get(GPU)
        self._images = _image_index(ledger.nodes)
        prefer = [
            tuple(t for t in n.taints if t.effect == PREFER_NO_SCHEDULE) for n in ledger.nodes
        ]
        groups: dict[tuple[Taint, ...], int] = {}
        self._taint_group: IntArray = np.array(
            [groups.setdefault(t, len(groups)) for t in prefer], dtype=np.int64
        )
        self._taint_lists = tuple(groups)
        self._requests: dict[int, IntArray] = {}
        self._static: dict[int, FloatArray] = {}
        self._prefer_counts: dict[int, IntArray] = {}
        self._any_prefer = any(prefer)
        if self._cpu_memory != [0, 1]:
            msg = "the ledger's first two dims must be cpu and memory"
            raise AssertionError(msg)
        self._alloc_cm: IntArray = np.ascontiguousarray(ledger.allocatable[:, :2])
        self._cm_present = bool((self._alloc_cm > 0).all())
        """Every node has cpu and memory: the two-resource formulas apply (the fast path)."""

    def score_nodes(self, task: TaskState, idx: IntArray) -> FloatArray:
        """The weighted nodeOrder scores of the nodes `idx`."""
        w, ledger = self._w, self._ledger
        total = self._static_scores(task)[idx]  # a copy: idx is an index array
        if not (w.least_requested or w.most_requested or w.balanced_resource):
            return total
        req = self._request(task)
        gpu = self._gpu is not None and bool(req[self._gpu])
        if self._cm_present and not gpu:
            return total + self._two_resource_scores(req, idx)
        requested = ledger.used[idx] + req
        allocatable = ledger.allocatable[idx]
        cm = self._cpu_memory
        if w.least_requested:
            total += w.least_requested * least_requested(requested[:, cm], allocatable[:, cm])
        if w.most_requested:
            total += w.most_requested * most_requested(requested[:, cm], allocatable[:, cm])
        if w.balanced_resource:
            cols = [*cm, self._gpu] if gpu and self._gpu is not None else cm
            score = balanced_allocation(requested[:, cols], allocatable[:, cols])
            total += w.balanced_resource * score
        return total

    def _two_resource_scores(self, req: IntArray, idx: IntArray) -> FloatArray:
        """least, most and balanced over cpu and memory when every node has both: the same
        formulas as the general path, with the per-resource bookkeeping folded away."""
        w = self._w
        alloc = self._alloc_cm[idx]
        requested = self._ledger.used[idx, :2] + req[:2]  # the ledger's first dims: cpu, memory
        total = np.zeros(len(idx), dtype=np.float64)
        if w.least_requested:
            free = alloc - requested
            per = np.where(free < 0, 0, free * MAX_NODE_SCORE // alloc)
            total += w.least_requested * (per.sum(axis=1) // 2)
        if w.most_requested:
            per = np.minimum(requested, alloc) * MAX_NODE_SCORE // alloc
            total += w.most_requested * (per.sum(axis=1) // 2)
        if w.balanced_resource:
            f = np.minimum(requested / alloc, 1.0)
            std = np.abs((f[:, 0] - f[:, 1]) / 2)
            total += w.balanced_resource * np.floor((1.0 - std) * MAX_NODE_SCORE)
        return total

    def batch_score_nodes(self, task: TaskState, idx: IntArray) -> FloatArray | None:
        """tainttoleration over the nodes `idx`, or None when none has an intolerable
        PreferNoSchedule taint."""
        if not self._w.taint_toleration or not self._any_prefer:
            return None
        counts = self._prefer_counts.get(task.class_id)
        if counts is None:
            tolerations = task.facts.tolerations
            per_group = [intolerable_prefer_no_schedule(t, tolerations) for t in self._taint_lists]
            counts = np.array(per_group, dtype=np.int64)[self._taint_group]
            self._prefer_counts[task.class_id] = counts
        score = reverse_normalised(counts[idx])
        if score is None:
            return None
        weighted: FloatArray = (self._w.taint_toleration * score).astype(np.float64)
        return weighted

    def _request(self, task: TaskState) -> IntArray:
        req = self._requests.get(task.class_id)
        if req is None:
            req = self._requests[task.class_id] = self._ledger.vector(task.resreq)
        return req

    def _static_scores(self, task: TaskState) -> FloatArray:
        """nodeaffinity and imagelocality, weighted: they depend on the nodes' facts only."""
        scores = self._static.get(task.class_id)
        if scores is None:
            scores = np.zeros(len(self._ledger), dtype=np.float64)
            facts = task.facts
            if self._w.node_affinity and facts.affinity.preferred:
                scores += self._w.node_affinity * self._affinity(task)
            if self._w.image_locality and facts.images:
                scores += self._w.image_locality * self._image_locality(task)
            self._static[task.class_id] = scores
        return scores

    def _affinity(self, task: TaskState) -> IntArray:
        preferred = [p for p in task.facts.affinity.preferred if p.weight]
        return np.array(
            [
                sum(p.weight for p in preferred if term_matches(p.term, node.labels, node.name))
                for node in self._ledger.nodes
            ],
            dtype=np.int64,
        )

    def _image_locality(self, task: TaskState) -> IntArray:
        sums = np.zeros(len(self._ledger), dtype=np.int64)
        for name in task.facts.images:
            found = self._images.get(normalized_image_name(name))
            if found is not None:
                nodes, sizes = found
                spread = len(nodes) / len(self._ledger)
                sums[nodes] += (sizes * spread).astype(np.int64)
        return image_locality(sums, len(task.facts.images))


def _image_index(nodes: Sequence[NodeFacts]) -> dict[str, tuple[IntArray, FloatArray]]:
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


class Factory:
    """Lives as long as the policy."""

    name = NAME

    def __init__(self, weights: Weights) -> None:
        self.weights = weights

    def open(self, session: Session) -> NodeOrder:
        """A fresh plugin for `session`."""
        return NodeOrder(session, self.weights)


def build(arguments: Mapping[str, object]) -> Factory:
    """Read the weights (Volcano's keys and defaults); every problem is reported at once."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    defaults = Weights()
    weights = {field: reader.int(key, getattr(defaults, field)) for key, field in ARGUMENTS}
    reader.finish()
    return Factory(Weights(**weights))
