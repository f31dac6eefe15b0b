"""Where the session's pods are, for the checks that look at other pods: inter-pod affinity and
topology spread (kube's InterPodAffinity and PodTopologySpread).

Owns, for one session, kept current as the session places and removes pods (`add`, `remove`,
called by a plugin's allocate/deallocate handlers):
- for a `Matcher` (pod terms ANDed): how many pods on each node match it;
- for each distinct term that placed pods carry (required anti-affinity; preferred affinity and
  anti-affinity, with their weight): how many pods on each node carry it;
- each node's domain for a topology key (an integer code per label value).
A pod counts while it holds a Ready node: allocated, binding, bound, running, releasing (it is still
there; a matcher with `live_only` leaves pods being deleted out) or pipelined, as in Volcano's node
task list (Volcano's snapshot has no node that is not Ready). Each count carries a version that
changes whenever the count does, so callers can cache what they derive from it. Counts for a matcher
are built the first time it is asked for, from the pods present then, found through a label index
rather than by scanning them all when the matcher names a label value.
Must not: decide anything (the predicates and nodeorder plugins do); mutate tasks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final

import numpy as np

from vscheduler.framework.ledger import BoolArray, IntArray
from vscheduler.framework.state import TaskState
from vscheduler.model import status as st
from vscheduler.model.facts import NodeFacts, TaskFacts
from vscheduler.model.podaffinity import NO_POD_AFFINITY, PodAffinity, PodAffinityTerm
from vscheduler.model.selector import IN
from vscheduler.model.status import TaskStatus

HOLDING: Final = st.OCCUPYING | {TaskStatus.PIPELINED, TaskStatus.RELEASING}
"""Statuses of tasks that count as being on their node."""
REQUIRED_ANTI: Final = "requiredAntiAffinity"
PREFERRED: Final = "preferredAffinity"
PREFERRED_ANTI: Final = "preferredAntiAffinity"

Pair = tuple[str, str]


@dataclasses.dataclass(frozen=True, slots=True)
class Matcher:
    """Pods matching every one of `terms` (their topology keys play no part). With `live_only`,
    pods being deleted are left out, as topology spread leaves them out."""

    terms: tuple[PodAffinityTerm, ...]
    live_only: bool = False

    def key(self) -> tuple[object, ...]:
        """A hashable form."""
        who = tuple(dataclasses.replace(t, topology_key="").key() for t in self.terms)
        return (who, self.live_only)

    def matches(self, namespace: str, labels: Mapping[str, str], terminating: bool) -> bool:
        """Whether a pod counts."""
        if terminating and self.live_only:
            return False
        return all(t.matches(namespace, labels) for t in self.terms)


@dataclasses.dataclass(slots=True)
class Counts:
    """Per-node counts, their total, and a version that changes whenever they do."""

    per_node: IntArray
    total: int = 0
    version: int = 0

    def bump(self, node: int, sign: int) -> None:
        """One pod more (sign 1) or fewer (sign -1) on `node`."""
        self.per_node[node] += sign
        self.total += sign
        self.version += 1


@dataclasses.dataclass(frozen=True, slots=True)
class Carried:
    """A term that placed pods carry, and how many carry it on each node."""

    kind: str
    weight: int
    term: PodAffinityTerm
    counts: Counts
    order: int
    """Registration order (a deterministic tie-break for callers)."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Held:
    node: int
    namespace: str
    labels: Mapping[str, str]
    terminating: bool
    affinity: PodAffinity


def anchors(term: PodAffinityTerm) -> tuple[Pair, ...] | None:
    """Label pairs one of which every pod the term selects must carry, or None if there are
    none (a null selector selects nothing: no pair at all)."""
    selector = term.selector
    if selector is None:
        return ()
    for pair in selector.match_labels.items():
        return (pair,)
    for req in selector.match_expressions:
        if req.operator == IN:
            return tuple((req.key, v) for v in req.values)
    return None


def carried_terms(affinity: PodAffinity) -> Iterator[tuple[str, int, PodAffinityTerm]]:
    """(kind, weight, term) of every term of `affinity` other pods must answer to."""
    for term in affinity.anti_required:
        yield REQUIRED_ANTI, 1, term
    for weighted in affinity.preferred:
        yield PREFERRED, weighted.weight, weighted.term
    for weighted in affinity.anti_preferred:
        yield PREFERRED_ANTI, weighted.weight, weighted.term


def has_terms(facts: TaskFacts) -> bool:
    """Whether the pod has inter-pod terms or spread constraints (most have neither)."""
    return (facts.pod_affinity is not NO_POD_AFFINITY and not facts.pod_affinity.is_empty) or bool(
        facts.topology_spread
    )


class PodIndex:
    """The session's pods by node, counted by matcher and by carried term."""

    def __init__(self, nodes: Sequence[NodeFacts], tasks: Iterable[TaskState]) -> None:
        self._nodes = nodes
        self.ready: BoolArray = np.array([n.ready for n in nodes], dtype=np.bool_)
        """Nodes that are Ready. The others are left out as Volcano leaves them out of its
        snapshot: their pods do not count, and callers keep them out of every domain."""
        self._held: dict[str, _Held] = {}
        self._by_label: dict[Pair, set[str]] | None = None
        self._counts: dict[tuple[object, ...], tuple[Matcher, Counts]] = {}
        self._watch: dict[Pair, list[tuple[object, ...]]] = {}
        self._watch_any: list[tuple[object, ...]] = []
        self._carried: dict[tuple[object, ...], Carried] = {}
        self._carried_by: dict[str, dict[Pair, list[Carried]]] = {}
        self._carried_any: dict[str, list[Carried]] = {}
        self._domains: dict[str, tuple[IntArray, int]] = {}
        self._singletons: dict[str, bool] = {}
        for task in tasks:
            self.add(task)

    # --- pods coming and going ----------------------------------------------------------------
    def add(self, task: TaskState) -> None:
        """`task` now holds its node (if its status says it does)."""
        if task.uid in self._held:
            self.remove(task)
        if task.node_index < 0 or task.status not in HOLDING or not self.ready[task.node_index]:
            return
        facts = task.facts
        held = _Held(
            node=task.node_index,
            namespace=facts.namespace,
            labels=facts.labels,
            terminating=task.status is TaskStatus.RELEASING,
            affinity=facts.pod_affinity,
        )
        self._held[task.uid] = held
        if self._by_label is not None:
            for pair in held.labels.items():
                self._by_label.setdefault(pair, set()).add(task.uid)
        self._apply(held, 1)

    def remove(self, task: TaskState) -> None:
        """`task` no longer holds a node (its allocation undone, or it is evicted)."""
        held = self._held.pop(task.uid, None)
        if held is None:
            return
        if self._by_label is not None:
            for pair in held.labels.items():
                self._by_label[pair].discard(task.uid)
        self._apply(held, -1)

    def _apply(self, held: _Held, sign: int) -> None:
        for key in self._watching(held.labels):
            matcher, counts = self._counts[key]
            if matcher.matches(held.namespace, held.labels, held.terminating):
                counts.bump(held.node, sign)
        if not held.affinity.is_empty:
            for kind, weight, term in carried_terms(held.affinity):
                self._carried_entry(kind, weight, term).counts.bump(held.node, sign)

    def _watching(self, labels: Mapping[str, str]) -> Iterable[tuple[object, ...]]:
        """The matchers a pod with `labels` may match."""
        if not self._counts:
            return ()
        found = list(self._watch_any)
        for pair in labels.items():
            found.extend(self._watch.get(pair, ()))
        return dict.fromkeys(found)

    # --- what callers ask -----------------------------------------------------------------------
    def count(self, matcher: Matcher) -> Counts:
        """How many pods on each node match `matcher` (kept current from now on)."""
        key = matcher.key()
        found = self._counts.get(key)
        if found is None:
            counts = Counts(np.zeros(len(self._nodes), dtype=np.int64))
            pairs = next((a for a in map(anchors, matcher.terms) if a is not None), None)
            for uid in self._candidates(pairs):
                held = self._held[uid]
                if matcher.matches(held.namespace, held.labels, held.terminating):
                    counts.per_node[held.node] += 1
                    counts.total += 1
            found = self._counts[key] = (matcher, counts)
            if pairs is None:
                self._watch_any.append(key)
            for pair in pairs or ():
                self._watch.setdefault(pair, []).append(key)
        return found[1]

    def _candidates(self, pairs: tuple[Pair, ...] | None) -> list[str]:
        """Pods that may match: those carrying one of `pairs`, or all (sorted: deterministic)."""
        if pairs is None:
            return list(self._held)
        index = self._label_index()
        return sorted({uid for pair in pairs for uid in index.get(pair, ())})

    def _label_index(self) -> dict[Pair, set[str]]:
        if self._by_label is None:
            self._by_label = {}
            for uid, held in self._held.items():
                for pair in held.labels.items():
                    self._by_label.setdefault(pair, set()).add(uid)
        return self._by_label

    def carried(self, kind: str, namespace: str, labels: Mapping[str, str]) -> list[Carried]:
        """The terms of `kind` placed pods carry (some pod still does) that select a pod of
        `namespace` with `labels`, in registration order."""
        candidates = list(self._carried_any.get(kind, ()))
        by_pair = self._carried_by.get(kind)
        if by_pair:
            for pair in labels.items():
                candidates.extend(by_pair.get(pair, ()))
        found = {
            c.order: c
            for c in candidates
            if c.counts.total > 0 and c.term.matches(namespace, labels)
        }
        return [found[k] for k in sorted(found)]

    def has_carried(self, kind: str) -> bool:
        """Whether some placed pod carries a term of `kind`."""
        return any(c.kind == kind and c.counts.total > 0 for c in self._carried.values())

    def _carried_entry(self, kind: str, weight: int, term: PodAffinityTerm) -> Carried:
        key = (kind, weight, term.key())
        entry = self._carried.get(key)
        if entry is None:
            counts = Counts(np.zeros(len(self._nodes), dtype=np.int64))
            entry = self._carried[key] = Carried(kind, weight, term, counts, len(self._carried))
            pairs = anchors(term)
            if pairs is None:
                self._carried_any.setdefault(kind, []).append(entry)
            for pair in pairs or ():
                self._carried_by.setdefault(kind, {}).setdefault(pair, []).append(entry)
        return entry

    def domains(self, key: str) -> tuple[IntArray, int]:
        """Each node's domain for topology key `key` (a code per distinct value, in node order;
        -1 where the node lacks the label), and how many domains there are."""
        found = self._domains.get(key)
        if found is None:
            values: dict[str, int] = {}
            codes = np.fromiter(
                (
                    -1 if (v := n.labels.get(key)) is None else values.setdefault(v, len(values))
                    for n in self._nodes
                ),
                dtype=np.int64,
                count=len(self._nodes),
            )
            found = self._domains[key] = (codes, len(values))
            self._singletons[key] = len(values) == int((codes >= 0).sum())
        return found

    def totals(self, key: str, per_node: IntArray, where: BoolArray | None = None) -> IntArray:
        """For each node, the sum of `per_node` over the nodes of its domain for topology key
        `key` (0 for a node without the label); with `where`, over the nodes it marks only.
        Domains of one node each (a hostname key) need no grouping."""
        codes, size = self.domains(key)
        if self._singletons[key]:
            keep = codes >= 0 if where is None else (codes >= 0) & where
            result: IntArray = np.where(keep, per_node, 0)
            return result
        return at_nodes(codes, per_domain(codes, size, per_node, where))


def per_domain(
    codes: IntArray, size: int, per_node: IntArray, where: BoolArray | None = None
) -> IntArray:
    """Sum `per_node` over the nodes of each domain (nodes without the label left out; with a
    boolean mask `where`, only the nodes it marks)."""
    keep = codes >= 0 if where is None else (codes >= 0) & where
    sums = np.bincount(codes[keep], weights=per_node[keep], minlength=max(size, 1))
    result: IntArray = sums.astype(np.int64)
    return result


def at_nodes(codes: IntArray, per_dom: IntArray) -> IntArray:
    """A per-domain value spread back over the nodes (0 where a node lacks the label)."""
    result: IntArray = np.where(codes >= 0, per_dom[np.maximum(codes, 0)], 0)
    return result
