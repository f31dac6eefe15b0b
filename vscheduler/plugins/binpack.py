"""binpack: prefer nodes that are already full, to keep whole nodes free (Volcano's binpack).

Registers `score_nodes(task, idx)` (nodeOrder), vectorised over node indices, as Volcano's
`BinPackingScore`: for each resource the task requests that has a weight (cpu, memory, and the
`binpack.resources` names),

    resource score = weight * (used + request) / allocatable

(0 when the node has none of it or its weight is 0), where `used` is the node's `ledger.used`.
The node's score is the sum of the resource scores divided by the sum of those resources'
weights (a resource scoring 0 still counts in the sum), times 100, times `binpack.weight`. When
`used + request` exceeds the allocatable of any such resource (with a weight above 0, on a node
that has some of it), the whole node scores 0, as Volcano's `BinPackingScore` returns 0 there.
Resources the task does not request contribute nothing; a task that requests none of the
weighted resources scores 0 everywhere. With `binpack.weight` 0 nothing is registered, as in
Volcano.

Arguments (Volcano's names and defaults): `binpack.weight` (1), `binpack.cpu` (1),
`binpack.memory` (1), `binpack.resources` ("", comma-separated extra resource names, e.g.
"nvidia.com/gpu, example.com/foo") and `binpack.resources.<name>` (1) for each name listed. A
negative resource weight means 1, as in Volcano. cpu and memory weights come only from
`binpack.cpu` and `binpack.memory`, even when `binpack.resources` lists them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    CPU,
    MEMORY,
    ArgumentReader,
    FloatArray,
    IntArray,
    NodeOrder,
    NodeOrderNode,
    PluginSession,
    TaskState,
)

NAME: Final = "binpack"
MAX_NODE_SCORE: Final = 100
RESOURCES: Final = "binpack.resources"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Weights:
    """The plugin weight and each resource's weight."""

    weight: int = 1
    resources: Mapping[str, int] = dataclasses.field(default_factory=lambda: {CPU: 1, MEMORY: 1})


class Binpack(NodeOrder, NodeOrderNode):
    """The per-session plugin (only opened when `binpack.weight` is not 0)."""

    def __init__(self, session: PluginSession, weights: Weights) -> None:
        self._weights = weights
        self._ledger = session.ledger
        self._classes: dict[int, _Columns] = {}
        self._scale = MAX_NODE_SCORE * weights.weight

    def score_nodes(self, task: TaskState, idx: IntArray) -> FloatArray:
        """Volcano's binpack score of each node of `idx`."""
        found = self._columns(task)
        if not found.terms or not found.weight_sum:
            return np.zeros(len(idx), dtype=np.float64)
        ledger = self._ledger
        final = ledger.used[idx][:, found.cols] + found.request
        allocatable = ledger.allocatable[idx][:, found.cols]
        counted = allocatable != 0
        per = np.where(counted, final * found.weight / np.where(counted, allocatable, 1), 0.0)
        score: FloatArray = per.sum(axis=1) / found.weight_sum * self._scale
        overflow = counted & (final > allocatable)
        if overflow.any():
            score[overflow.any(axis=1)] = 0.0
        return score

    def score_node(self, task: TaskState, i: int) -> float:
        """`score_nodes` of the one node `i` (in scalars when it takes them there)."""
        found = self._columns(task)
        if not found.terms or not found.weight_sum:
            return 0.0
        if len(found.terms) < 8:  # numpy sums fewer than 8 terms in order: the same float
            return self._score_one(i, found)
        return float(self.score_nodes(task, np.array((i,), dtype=np.int64)).item(0))

    def _score_one(self, i: int, found: _Columns) -> float:
        """`score_nodes` of the one node `i`, in Python floats: the same operations in the same
        order, so the same float."""
        used, allocatable = self._ledger.used, self._ledger.allocatable
        total = 0.0
        for k, want, weight in found.terms:
            alloc = allocatable.item(i, k)
            if not alloc:
                continue
            final = float(used.item(i, k)) + want
            if final > alloc:
                return 0.0
            total += final * weight / float(alloc)
        return total / found.weight_sum * self._scale

    def _columns(self, task: TaskState) -> _Columns:
        """The ledger columns the task requests that have a weight above 0, the request and the
        weights on them (cached per class). A resource of weight 0 adds nothing to the score or
        to the weights' sum, and its overflow does not count (Volcano checks none of it)."""
        found = self._classes.get(task.class_id)
        if found is None:
            dims = self._ledger.dims
            req = self._ledger.vector(task.resreq)
            weights = self._weights.resources
            cols = [k for k, d in enumerate(dims) if req[k] and weights.get(d, 0) > 0]
            weight = np.array([weights[dims[k]] for k in cols], dtype=np.float64)
            request = req[cols].astype(np.float64)
            found = _Columns(
                cols=np.array(cols, dtype=np.int64),
                request=request,
                weight=weight,
                weight_sum=float(weight.sum()),
                terms=tuple(zip(cols, request.tolist(), weight.tolist(), strict=True)),
            )
            self._classes[task.class_id] = found
        return found


@dataclasses.dataclass(frozen=True, slots=True)
class _Columns:
    """One task class's binpack terms: as arrays for many nodes, as numbers for one."""

    cols: IntArray
    request: FloatArray
    weight: FloatArray
    weight_sum: float
    terms: tuple[tuple[int, float, float], ...]
    """(column, request, weight) of each resource counted."""


class Inert:
    """What `binpack.weight: 0` opens: a plugin with no hooks."""


class Factory:
    """Lives as long as the policy."""

    name = NAME
    plugin = (Binpack, Inert)

    def __init__(self, weights: Weights) -> None:
        self.weights = weights

    def open(self, session: PluginSession) -> Binpack | Inert:
        """A fresh plugin for `session`."""
        return Binpack(session, self.weights) if self.weights.weight else Inert()


def build(arguments: Mapping[str, object]) -> Factory:
    """Read Volcano's binpack arguments; every problem is reported at once."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    weight = reader.int("binpack.weight", 1)
    resources: dict[str, int] = {}
    for name in (n.strip() for n in reader.str(RESOURCES, "").split(",")):
        if name:
            resources[name] = _non_negative(reader.int(f"{RESOURCES}.{name}", 1))
    resources[CPU] = _non_negative(reader.int("binpack.cpu", 1))
    resources[MEMORY] = _non_negative(reader.int("binpack.memory", 1))
    reader.finish()
    return Factory(Weights(weight=weight, resources=resources))


def _non_negative(weight: int) -> int:
    """Volcano's rule: a negative resource weight is taken as 1."""
    return weight if weight >= 0 else 1
