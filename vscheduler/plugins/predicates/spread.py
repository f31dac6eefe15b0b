"""The predicates' topology spread check (kube's PodTopologySpread filter), over every node.

For each of the pod's `DoNotSchedule` constraints, in order:
- the node must have the constraint's topology label ("... (missing required label)",
  UnschedulableAndUnresolvable);
- `count(node's domain) + (1 if the pod matches the selector) - global minimum <= maxSkew`
  (Unschedulable), where a domain's count is the number of live pods of the pod's namespace the
  selector matches on the eligible nodes of that domain, and the global minimum is the smallest
  count over the eligible domains (0 when there are fewer than `minDomains` of them; no limit
  when there is none).
A node is eligible when it is Ready (Volcano's snapshot has no other), has the labels of all the
pod's hard constraints and, per constraint, matches the pod's nodeSelector and required node
affinity (nodeAffinityPolicy Honor, the default) and tolerates its NoSchedule/NoExecute taints if
nodeTaintsPolicy is Honor.

Owns: those rules over the session's `PodIndex`, cached per task class while the counts are
unchanged. Must not: count pods itself, or decide node affinity or taints (it is handed them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    BoolArray,
    IntArray,
    PodAffinityTerm,
    SpreadConstraint,
    TaskState,
    podindex,
)

SPREAD_MISMATCH: Final = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL: Final = SPREAD_MISMATCH + " (missing required label)"
_NO_MINIMUM: Final = 2**31 - 1
"""kube's critical path before any domain is seen (math.MaxInt32)."""

Inclusion = Callable[[TaskState, SpreadConstraint], BoolArray]
"""The nodes a constraint's node inclusion policies keep, for a task's class."""


@dataclasses.dataclass(frozen=True, slots=True)
class Verdicts:
    """Per constraint (rows) and node (columns): the label is missing; the skew is too large."""

    missing: BoolArray
    skewed: BoolArray
    ok: BoolArray

    def reason(self, i: int) -> tuple[str, bool] | None:
        """(reason, unresolvable) of the first constraint node `i` fails, or None."""
        for k in range(len(self.missing)):
            if self.missing[k, i]:
                return MISSING_LABEL, True
            if self.skewed[k, i]:
                return SPREAD_MISMATCH, False
        return None


class SpreadFilter:
    """kube's PodTopologySpread filter for one session."""

    def __init__(self, index: podindex.PodIndex, nodes: int, inclusion: Inclusion) -> None:
        self._index = index
        self._nodes = nodes
        self._inclusion = inclusion
        self._sources: dict[int, tuple[podindex.Counts, ...]] = {}
        self._cache: dict[int, tuple[tuple[int, ...], Verdicts]] = {}

    def verdicts(self, task: TaskState) -> Verdicts | None:
        """Every hard constraint over every node, or None when the pod has none."""
        hard = [c for c in task.facts.topology_spread if c.hard]
        if not hard:
            return None
        sources = self._sources.get(task.class_id)
        if sources is None:
            namespace = frozenset({task.facts.namespace})
            sources = tuple(
                self._index.count(
                    podindex.Matcher(
                        (PodAffinityTerm(selector=c.selector, namespaces=namespace),),
                        live_only=True,
                    )
                )
                for c in hard
            )
            self._sources[task.class_id] = sources
        versions = tuple(c.version for c in sources)
        cached = self._cache.get(task.class_id)
        if cached is not None and cached[0] == versions:
            return cached[1]
        verdicts = self._evaluate(task, hard, sources)
        self._cache[task.class_id] = (versions, verdicts)
        return verdicts

    def _evaluate(
        self, task: TaskState, hard: list[SpreadConstraint], sources: tuple[podindex.Counts, ...]
    ) -> Verdicts:
        has_all = self._index.ready.copy()
        for c in hard:
            has_all &= self._index.domains(c.topology_key)[0] >= 0
        missing = np.zeros((len(hard), self._nodes), dtype=np.bool_)
        skewed = np.zeros((len(hard), self._nodes), dtype=np.bool_)
        for k, (c, counts) in enumerate(zip(hard, sources, strict=True)):
            codes, size = self._index.domains(c.topology_key)
            eligible = has_all & self._inclusion(task, c)
            skew = self._skew(c, codes, size, counts.per_node, eligible)
            skew += int(c.selects(task.facts.labels))
            missing[k] = codes < 0
            skewed[k] = (codes >= 0) & (skew > c.max_skew)
        ok: BoolArray = ~(np.any(missing, axis=0) | np.any(skewed, axis=0))
        return Verdicts(missing, skewed, ok)

    def _skew(
        self,
        c: SpreadConstraint,
        codes: IntArray,
        size: int,
        per_node: IntArray,
        eligible: BoolArray,
    ) -> IntArray:
        """Each node's domain count minus the global minimum (before the pod itself)."""
        per_dom = podindex.per_domain(codes, size, per_node, eligible)
        present = np.zeros(max(size, 1), dtype=np.bool_)
        present[codes[eligible & (codes >= 0)]] = True
        domains = int(present.sum())
        minimum = int(per_dom[present].min()) if domains else _NO_MINIMUM
        if domains < c.min_domains:
            minimum = 0
        skew: IntArray = podindex.at_nodes(codes, per_dom) - minimum
        return skew
