"""The predicates' inter-pod affinity check (kube's InterPodAffinity filter), over every node.

A node passes when, with the pods the session has on nodes now:
1. for the pod's required affinity terms: the node has every term's topology label and, for
   each term, its domain holds a pod matching all the terms; unless no such pod is on any node
   with those labels and the pod matches all its own terms (the first pod of a group that is
   affine to itself may go anywhere the labels exist);
2. for each of its required anti-affinity terms: the node's domain holds no pod the term
   selects (a node without the label passes);
3. no placed pod's required anti-affinity term selects this pod while the node is in the domain
   of that placed pod (the symmetric check).

Owns: those rules over the session's `PodIndex`, and a cache of their answers per task class
and set of placed terms that select the task, valid while the counts it read are unchanged.
Must not: count pods itself (the index does), or look at anything but topology.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Final

import numpy as np

from vscheduler.plugin_api import BoolArray, PodAffinityTerm, TaskState, podindex

AFFINITY_MISMATCH: Final = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_MISMATCH: Final = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY: Final = "node(s) didn't satisfy existing pods anti-affinity rules"


@dataclasses.dataclass(frozen=True, slots=True)
class Verdicts:
    """Per node: whether each of the three rules passes, and all of them."""

    affinity: BoolArray
    anti_affinity: BoolArray
    existing: BoolArray
    ok: BoolArray

    def reason(self, i: int) -> str | None:
        """The first rule node `i` fails, as kube says it, or None."""
        if not self.affinity[i]:
            return AFFINITY_MISMATCH
        if not self.anti_affinity[i]:
            return ANTI_AFFINITY_MISMATCH
        if not self.existing[i]:
            return EXISTING_ANTI_AFFINITY
        return None


@dataclasses.dataclass(frozen=True, slots=True)
class _Own:
    """A class's own required terms and the counts they read."""

    affinity: podindex.Counts | None
    anti: tuple[podindex.Counts, ...]


class InterPodFilter:
    """kube's InterPodAffinity filter for one session."""

    def __init__(self, index: podindex.PodIndex, nodes: int) -> None:
        self._index = index
        self._nodes = nodes
        self._own: dict[int, _Own] = {}
        self._cache: dict[tuple[object, ...], tuple[tuple[int, ...], Verdicts]] = {}

    def verdicts(self, task: TaskState) -> Verdicts | None:
        """The three rules over every node, or None when none applies to `task`."""
        facts = task.facts
        affinity = facts.pod_affinity
        carried = self._index.carried(podindex.REQUIRED_ANTI, facts.namespace, facts.labels)
        if not affinity.required and not affinity.anti_required and not carried:
            return None
        own = self._own_counts(task)
        sources = [c for c in (own.affinity,) if c is not None]
        sources += [*own.anti, *(c.counts for c in carried)]
        versions = tuple(c.version for c in sources)
        key = (task.class_id, tuple(c.order for c in carried))
        cached = self._cache.get(key)
        if cached is not None and cached[0] == versions:
            return cached[1]
        verdicts = self._evaluate(task, own, carried)
        self._cache[key] = (versions, verdicts)
        return verdicts

    def _own_counts(self, task: TaskState) -> _Own:
        own = self._own.get(task.class_id)
        if own is None:
            affinity = task.facts.pod_affinity
            index = self._index
            own = _Own(
                affinity=(
                    index.count(podindex.Matcher(affinity.required)) if affinity.required else None
                ),
                anti=tuple(index.count(podindex.Matcher((t,))) for t in affinity.anti_required),
            )
            self._own[task.class_id] = own
        return own

    def _evaluate(self, task: TaskState, own: _Own, carried: list[podindex.Carried]) -> Verdicts:
        facts = task.facts
        affinity = self._affinity(task, own.affinity)
        anti = self._none_in_domain(zip(facts.pod_affinity.anti_required, own.anti, strict=True))
        existing = self._none_in_domain((c.term, c.counts) for c in carried)
        return Verdicts(affinity, anti, existing, affinity & anti & existing)

    def _affinity(self, task: TaskState, counts: podindex.Counts | None) -> BoolArray:
        """Rule 1 (all nodes pass when the pod has no required affinity term)."""
        has_labels = np.ones(self._nodes, dtype=np.bool_)
        if counts is None:
            return has_labels
        facts = task.facts
        exist = np.ones(self._nodes, dtype=np.bool_)
        matched_somewhere = False
        for term in facts.pod_affinity.required:
            codes, _ = self._index.domains(term.topology_key)
            near = self._index.totals(term.topology_key, counts.per_node)
            matched_somewhere |= bool(near.any())
            has_labels &= codes >= 0
            exist &= near > 0
        if not matched_somewhere and facts.pod_affinity.matches_all_required(
            facts.namespace, facts.labels
        ):
            return has_labels
        result: BoolArray = has_labels & exist
        return result

    def _none_in_domain(
        self, terms: Iterable[tuple[PodAffinityTerm, podindex.Counts]]
    ) -> BoolArray:
        """Rules 2 and 3: no counted pod in the node's domain, for every (term, counts)."""
        ok = np.ones(self._nodes, dtype=np.bool_)
        for term, counts in terms:
            ok &= self._index.totals(term.topology_key, counts.per_node) == 0
        return ok
