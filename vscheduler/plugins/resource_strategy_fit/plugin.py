"""resource-strategy-fit's per-session plugin classes: the nodeOrder part (`Scorer`), the
proportional predicate (`Filter`), both, or neither (`Inert`).

Owns: the vectorised scores and predicate over the session's ledger, with per-class caches (the
scored columns, every node's allocatable of them and the sra score read only the nodes'
allocatable, which is fixed for the session).
Must not: read arguments (`config` does).
"""

from __future__ import annotations

import dataclasses
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    CPU,
    MEMORY,
    BoolArray,
    FloatArray,
    IntArray,
    NodeOrder,
    PluginSession,
    Predicate,
    PredicateReason,
    Status,
    TaskState,
    unresolvable,
)
from vscheduler.plugins.resource_strategy_fit.config import (
    MAX_NODE_SCORE,
    MOST,
    PODS,
    Proportion,
    Settings,
    Strategy,
    strategy_for,
)

_GB: Final = 1e9
_MILLI: Final = 1000.0


@dataclasses.dataclass(frozen=True, slots=True)
class _Terms:
    """A task class's scored resources of weight != 0 (a weight of 0 adds nothing to the sum,
    to the weights' sum or to the overflow check): ledger columns, request, weight, strategy,
    every node's allocatable of them (fixed for the session), and the pod slot's strategy."""

    cols: IntArray
    request: FloatArray
    weight: FloatArray
    sign: FloatArray
    """1 for MostAllocated (final), -1 for LeastAllocated (alloc - final)."""
    lead: FloatArray
    """0 for MostAllocated, 1 for LeastAllocated."""
    alloc: FloatArray
    pods: Strategy | None
    weight_sum: float


class _Base:
    """What every serving class holds: the settings, the ledger, per-class caches."""

    def __init__(self, session: PluginSession, settings: Settings) -> None:
        self._settings = settings
        self._session = session
        self._ledger = session.ledger
        self._pods_dim = PODS in session.ledger.dim_index
        self._terms_of: dict[int, _Terms] = {}
        self._sra_of: dict[int, FloatArray] = {}
        self._exempt: dict[int, bool] = {}


class Scorer(_Base, NodeOrder):
    """The nodeOrder part (opened when the strategy or sra weight is above 0)."""

    def score_nodes(self, task: TaskState, idx: IntArray) -> FloatArray:
        """The strategy score plus the sra score of each node of `idx`."""
        if self._settings.weight > 0:
            score = self._strategy_score(task, idx)
            if self._settings.sra_weight > 0:
                score += self._sra(task)[idx]
            return score
        if self._settings.sra_weight > 0:
            sra: FloatArray = self._sra(task)[idx]
            return sra
        return np.zeros(len(idx), dtype=np.float64)

    def _strategy_score(self, task: TaskState, idx: IntArray) -> FloatArray:
        terms = self._terms(task)
        ledger = self._ledger
        if not len(terms.cols) and terms.pods is None:
            return np.zeros(len(idx), dtype=np.float64)
        alloc = terms.alloc[idx]
        final = ledger.used[idx][:, terms.cols] + terms.request
        sign, lead, weight = terms.sign, terms.lead, terms.weight
        if terms.pods is not None and terms.pods.weight:
            most = terms.pods.most
            alloc = np.column_stack((alloc, ledger.pods_max[idx].astype(np.float64)))
            final = np.column_stack((final, ledger.pods_used[idx] + 1.0))
            sign = np.append(sign, 1.0 if most else -1.0)
            lead = np.append(lead, 0.0 if most else 1.0)
            weight = np.append(weight, float(terms.pods.weight))
        counted = alloc != 0
        safe = np.where(counted, alloc, 1.0)
        per = (final * sign + alloc * lead) * weight / safe
        total: FloatArray = np.where(counted, per, 0.0).sum(axis=1)
        if terms.weight_sum > 0:
            total /= terms.weight_sum
        total *= float(MAX_NODE_SCORE * self._settings.weight)
        overflow = (final > alloc) & counted
        if overflow.any():
            total[overflow.any(axis=1)] = 0.0
        return total

    def _sra(self, task: TaskState) -> FloatArray:
        """The sra score of every node for the task's class: it reads only the nodes'
        allocatable, fixed for the session (cached per class)."""
        found = self._sra_of.get(task.class_id)
        if found is None:
            found = self._sra_of[task.class_id] = self._compute_sra(task)
        return found

    def _compute_sra(self, task: TaskState) -> FloatArray:
        ledger = self._ledger
        needed = np.flatnonzero(self._session.request_row(task) > 0)
        lacking = (ledger.allocatable[:, needed] == 0).any(axis=1) | (ledger.pods_max == 0)
        held = np.zeros(len(ledger.names), dtype=np.float64)
        weight_sum = 0
        for name, weight in self._settings.sra_resources:
            weight_sum += weight
            held += weight * self._has(name)
        score = 1.0 - held / weight_sum if weight_sum > 0 else held
        score *= float(MAX_NODE_SCORE * self._settings.sra_weight)
        out: FloatArray = np.where(lacking, 0.0, score)
        return out

    def _has(self, name: str) -> BoolArray:
        """Whether each node has some of `name` (its pod slots for `pods`)."""
        col = self._ledger.dim_index.get(name)
        if col is not None:
            has: BoolArray = self._ledger.allocatable[:, col] > 0
            return has
        if name == PODS:
            slots: BoolArray = self._ledger.pods_max > 0
            return slots
        return np.zeros(len(self._ledger.names), dtype=np.bool_)

    def _terms(self, task: TaskState) -> _Terms:
        """The scored resources of the task's class (cached per class)."""
        found = self._terms_of.get(task.class_id)
        if found is None:
            found = self._terms_of[task.class_id] = self._compute_terms(task)
        return found

    def _compute_terms(self, task: TaskState) -> _Terms:
        override = task.facts.scoring
        if override is not None:
            own = dict(override.weights)
            most = override.strategy == MOST

            def lookup(name: str) -> Strategy | None:
                weight = own.get(name)
                return None if weight is None else Strategy(most, weight)

        else:

            def lookup(name: str) -> Strategy | None:
                return strategy_for(name, self._settings.resources)

        row = self._session.request_row(task)
        dims = self._ledger.dims
        found = [(int(k), lookup(dims[k])) for k in np.flatnonzero(row > 0)]
        scored = [(k, s) for k, s in found if s is not None]
        pods = None if self._pods_dim else lookup(PODS)
        weight_sum = sum(s.weight for _, s in scored) + (pods.weight if pods else 0)
        kept = [(k, s) for k, s in scored if s.weight]
        cols = np.array([k for k, _ in kept], dtype=np.int64)
        return _Terms(
            cols=cols,
            request=row[cols].astype(np.float64),
            weight=np.array([s.weight for _, s in kept], dtype=np.float64),
            sign=np.array([1.0 if s.most else -1.0 for _, s in kept], dtype=np.float64),
            lead=np.array([0.0 if s.most else 1.0 for _, s in kept], dtype=np.float64),
            alloc=self._ledger.allocatable[:, cols].astype(np.float64),
            pods=pods,
            weight_sum=float(weight_sum),
        )


class Filter(_Base, Predicate, PredicateReason):
    """The proportional predicate (opened when `proportional.enable` is true)."""

    def filter_nodes(self, task: TaskState, idx: IntArray) -> BoolArray:
        """False where a proportional resource's cpu and memory share would be taken."""
        ok = np.ones(len(idx), dtype=np.bool_)
        if self._is_exempt(task):
            return ok
        for proportion in self._settings.proportional or ():
            ok &= ~self._fails(task, proportion, idx)
        return ok

    def explain_node(self, task: TaskState, i: int) -> Status | None:
        """Volcano's reason, naming the first proportional resource that fails on node `i`."""
        if self._is_exempt(task):
            return None
        at = np.array([i], dtype=np.int64)
        for proportion in self._settings.proportional or ():
            if self._fails(task, proportion, at)[0]:
                return unresolvable(f"proportional of resource {proportion.resource} check failed")
        return None

    def _fails(self, task: TaskState, proportion: Proportion, idx: IntArray) -> BoolArray:
        ledger = self._ledger
        col = ledger.dim_index.get(proportion.resource)
        if col is None:
            return np.zeros(len(idx), dtype=np.bool_)
        row = self._session.request_row(task)
        cpu, memory = ledger.dim_index[CPU], ledger.dim_index[MEMORY]
        idle = ledger.idle[idx]
        scarce = idle[:, col].astype(np.float64)
        cpu_left = idle[:, cpu] - row[cpu]
        memory_left = idle[:, memory] - row[memory]
        short = (cpu_left < scarce * (_MILLI * proportion.cpu)) | (
            memory_left < scarce * (_GB * proportion.memory)
        )
        fails: BoolArray = (ledger.allocatable[idx, col] > 0) & short
        return fails

    def _is_exempt(self, task: TaskState) -> bool:
        """Whether the task requests one of the proportional resources (cached per class)."""
        found = self._exempt.get(task.class_id)
        if found is None:
            row = self._session.request_row(task)
            index = self._ledger.dim_index
            found = any(
                p.resource in index and row[index[p.resource]] > 0
                for p in self._settings.proportional or ()
            )
            self._exempt[task.class_id] = found
        return found


class ScorerAndFilter(Scorer, Filter):
    """Both parts."""


class Inert:
    """Neither part: every weight is 0 or below and `proportional` is off."""
