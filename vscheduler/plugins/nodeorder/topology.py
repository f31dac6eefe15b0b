"""nodeorder's batch scores that look at other pods: podaffinity (kube's InterPodAffinity score)
and podtopologyspread (kube's PodTopologySpread score), over the feasible nodes being compared.

podaffinity. For each topology key, each domain collects: + weight for every pod on its nodes
that a preferred affinity term of the task selects, − weight for a preferred anti-affinity
term; + weight for every placed pod whose preferred affinity term selects the task, − weight
for its preferred anti-affinity term. A node's raw score is the sum over the keys of its
domains' values; normalised over the compared nodes as `int(100 × (s − min) / (max − min))`
(0 everywhere when max = min), times `podaffinity.weight`. Existing pods' required affinity
terms add nothing (Volcano builds kube's plugin with hardPodAffinityWeight 0).

podtopologyspread, over the task's `ScheduleAnyway` constraints. Compared nodes lacking one of their
topology labels are ignored (score 0). For the others, per constraint: `count × log(size + 2) +
maxSkew − 1`, where for `kubernetes.io/hostname` count is the matching pods on the node and size the
number of nodes not ignored; for any other key count is the matching pods on the domain's eligible
nodes (Ready, with every constraint label, passing the node inclusion policies) and size the number
of domains among the compared nodes. Matching pods are the live pods of the task's namespace the
constraint's selector matches. The sum is rounded half away from zero; normalised as `100 × (max +
min − s) // max` over the nodes not ignored (100 when max is 0), times `podtopologyspread.weight`.

Owns: those computations over a `PodIndex` it builds on first use and keeps current through the
plugin's event handlers. Must not: filter nodes, or read anything but pods, labels and taints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    BoolArray,
    FloatArray,
    IntArray,
    PluginSession,
    PodAffinityTerm,
    SpreadConstraint,
    TaskState,
    podindex,
)

MAX_NODE_SCORE: Final = 100
HOSTNAME: Final = "kubernetes.io/hostname"

Inclusion = Callable[[TaskState, SpreadConstraint], BoolArray]
"""The nodes (over all nodes) a constraint's node inclusion policies keep for a task's class."""


def _preferred_terms(tasks: Iterable[TaskState]) -> dict[tuple[object, ...], PodAffinityTerm]:
    """Every distinct preferred term any task of the session carries."""
    found: dict[tuple[object, ...], PodAffinityTerm] = {}
    for task in tasks:
        affinity = task.facts.pod_affinity
        for weighted in (*affinity.preferred, *affinity.anti_preferred):
            found.setdefault(weighted.term.key(), weighted.term)
    return found


class TopologyScores:
    """podaffinity and podtopologyspread for one session."""

    def __init__(
        self, session: PluginSession, affinity_weight: int, spread_weight: int, inclusion: Inclusion
    ) -> None:
        self._session = session
        self._affinity_weight = affinity_weight
        self._spread_weight = spread_weight
        self._inclusion = inclusion
        self._carried_terms = tuple(_preferred_terms(session.tasks_with_terms).values())
        self._index: podindex.PodIndex | None = None
        self._raw: dict[tuple[object, ...], tuple[tuple[int, ...], IntArray]] = {}

    @property
    def index(self) -> podindex.PodIndex:
        """The session's pods by node (built on first use)."""
        if self._index is None:
            ledger = self._session.ledger
            self._index = podindex.PodIndex(ledger.nodes, self._session.tasks.values())
        return self._index

    def add(self, task: TaskState) -> None:
        """`task` now holds its node."""
        if self._index is not None:
            self._index.add(task)

    def remove(self, task: TaskState) -> None:
        """`task` no longer holds its node."""
        if self._index is not None:
            self._index.remove(task)

    def has_opinion(self, task: TaskState) -> bool:
        """Whether some task of `task`'s class may score nodes differently: it has preferred
        terms or soft spread constraints, or some pod of the session has a preferred term whose
        namespaces include the task's."""
        facts = task.facts
        affinity = facts.pod_affinity
        if self._spread_weight and any(not c.hard for c in facts.topology_spread):
            return True
        if not self._affinity_weight:
            return False
        return bool(affinity.preferred or affinity.anti_preferred) or any(
            t.admits(facts.namespace) for t in self._carried_terms
        )

    def scores(self, task: TaskState, idx: IntArray) -> FloatArray:
        """The weighted podaffinity plus podtopologyspread scores of the nodes `idx`."""
        total = np.zeros(len(idx), dtype=np.float64)
        if self._affinity_weight:
            raw = self._affinity_raw(task)
            if raw is not None:
                total += self._affinity_weight * normalised(raw[idx])
        if self._spread_weight:
            soft = [c for c in task.facts.topology_spread if not c.hard]
            if soft:
                total += self._spread_weight * self._spread(task, soft, idx)
        return total

    # --- podaffinity -----------------------------------------------------------------------------
    def _affinity_raw(self, task: TaskState) -> IntArray | None:
        """Every node's raw podaffinity score, or None when no term applies."""
        facts = task.facts
        affinity = facts.pod_affinity
        index = self.index
        parts: list[tuple[int, PodAffinityTerm, podindex.Counts]] = []
        key: list[object] = [task.class_id]
        for weighted in affinity.preferred:
            counts = index.count(podindex.Matcher((weighted.term,)))
            parts.append((weighted.weight, weighted.term, counts))
        for weighted in affinity.anti_preferred:
            counts = index.count(podindex.Matcher((weighted.term,)))
            parts.append((-weighted.weight, weighted.term, counts))
        for kind, sign in ((podindex.PREFERRED, 1), (podindex.PREFERRED_ANTI, -1)):
            for carried in index.carried(kind, facts.namespace, facts.labels):
                parts.append((sign * carried.weight, carried.term, carried.counts))
                key.append(carried.order)
        if not parts:
            return None
        versions = tuple(p[2].version for p in parts)
        cached = self._raw.get(tuple(key))
        if cached is not None and cached[0] == versions:
            return cached[1]
        raw = np.zeros(len(self._session.ledger), dtype=np.int64)
        for weight, term, counts in parts:
            raw += weight * index.totals(term.topology_key, counts.per_node)
        self._raw[tuple(key)] = (versions, raw)
        return raw

    # --- podtopologyspread -----------------------------------------------------------------------
    def _spread(self, task: TaskState, soft: list[SpreadConstraint], idx: IntArray) -> FloatArray:
        """The normalised podtopologyspread scores of `idx` (before the weight)."""
        index = self.index
        has_all = np.ones(len(self._session.ledger), dtype=np.bool_)
        for c in soft:
            has_all &= index.domains(c.topology_key)[0] >= 0
        kept = has_all[idx]
        compared = idx[kept]
        score = np.zeros(len(compared), dtype=np.float64)
        namespace = frozenset({task.facts.namespace})
        for c in soft:
            term = PodAffinityTerm(selector=c.selector, namespaces=namespace)
            per_node = index.count(podindex.Matcher((term,), live_only=True)).per_node
            codes, size = index.domains(c.topology_key)
            if c.topology_key == HOSTNAME:
                count, domains = per_node[compared], len(compared)
            else:
                eligible = has_all & index.ready & self._inclusion(task, c)
                per_dom = podindex.per_domain(codes, size, per_node, eligible)
                count = per_dom[codes[compared]]
                domains = len(np.unique(codes[compared]))
            score = score + (count * np.log(domains + 2) + (c.max_skew - 1))
        rounded = np.where(score - np.floor(score) >= 0.5, np.ceil(score), np.floor(score))
        out = np.zeros(len(idx), dtype=np.float64)
        out[kept] = spread_normalised(rounded.astype(np.int64))
        return out


def normalised(raw: IntArray) -> IntArray:
    """kube's InterPodAffinity NormalizeScore over the compared nodes."""
    if not len(raw):
        return raw
    low, high = int(raw.min()), int(raw.max())
    if high == low:
        return np.zeros(len(raw), dtype=np.int64)
    result: IntArray = (MAX_NODE_SCORE * ((raw - low) / (high - low))).astype(np.int64)
    return result


def spread_normalised(raw: IntArray) -> IntArray:
    """kube's PodTopologySpread NormalizeScore over the nodes not ignored."""
    if not len(raw):
        return raw
    low, high = int(raw.min()), max(int(raw.max()), 0)
    if high == 0:
        return np.full(len(raw), MAX_NODE_SCORE, dtype=np.int64)
    result: IntArray = MAX_NODE_SCORE * (high + low - raw) // high
    return result
