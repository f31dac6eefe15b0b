"""Inter-pod affinity terms and topology spread constraints, as the scheduler needs them.

Owns: `PodAffinityTerm` (kube's `PodAffinityTerm`, resolved for the pod that carries it: which
pods it selects, in which namespaces, and the node label that forms its topology domains),
`WeightedPodAffinityTerm`, `PodAffinity` (the pod's required and preferred affinity and
anti-affinity), `SpreadConstraint` (one `topologySpreadConstraints` entry with the defaults kube
applies and `matchLabelKeys` already merged into its selector), and their matching rules; the
hashable `key()` of each, which the task's template key uses.
Must not: parse raw objects (`vscheduler.convert.podaffinity` does) or count pods on nodes (the
session's `PodIndex` does).

Namespaces. A term selects pods of `namespaces`, or of any namespace whose labels its
`namespace_selector` matches. vscheduler knows namespaces by name only, so a namespace's labels
are taken to be its `kubernetes.io/metadata.name` label, which Kubernetes sets on every namespace.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

from vscheduler.model.selector import LabelSelector

NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"
"""The label Kubernetes gives every namespace: its name."""
HOSTNAME_LABEL: Final = "kubernetes.io/hostname"
DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"


def selector_key(selector: LabelSelector | None) -> tuple[object, ...] | None:
    """A hashable, order-independent form of a label selector (None stays None)."""
    if selector is None:
        return None
    return (tuple(sorted(selector.match_labels.items())), selector.match_expressions)


def selects(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """kube's `LabelSelectorAsSelector(s).Matches(labels)`: a null selector matches nothing,
    an empty one everything."""
    return selector is not None and selector.matches(labels)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodAffinityTerm:
    """Pods matching `selector` in the namespaces given, co-located (or not) within the domain
    of `topology_key`.

    `namespaces` is resolved as kube resolves it: the carrying pod's own namespace when the
    term names neither namespaces nor a namespace selector. `namespace_selector` None is a null
    selector (selects no namespace); an empty selector selects every namespace.
    """

    selector: LabelSelector | None
    namespaces: frozenset[str] = frozenset()
    namespace_selector: LabelSelector | None = None
    topology_key: str = ""

    def admits(self, namespace: str) -> bool:
        """Whether pods of `namespace` are in this term's scope."""
        if namespace in self.namespaces:
            return True
        return selects(self.namespace_selector, {NAMESPACE_NAME_LABEL: namespace})

    def matches(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """kube's `AffinityTerm.Matches`: the namespace is in scope and the labels match."""
        return self.admits(namespace) and selects(self.selector, labels)

    def key(self) -> tuple[object, ...]:
        """A hashable form (equal terms, equal keys)."""
        return (
            selector_key(self.selector),
            tuple(sorted(self.namespaces)),
            selector_key(self.namespace_selector),
            self.topology_key,
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WeightedPodAffinityTerm:
    """A preferred term and its weight (1..100)."""

    weight: int
    term: PodAffinityTerm

    def key(self) -> tuple[object, ...]:
        """A hashable form."""
        return (self.weight, self.term.key())


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodAffinity:
    """`spec.affinity.podAffinity` and `podAntiAffinity`: required terms (all must hold) and
    weighted preferred terms of each."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    anti_required: tuple[PodAffinityTerm, ...] = ()
    anti_preferred: tuple[WeightedPodAffinityTerm, ...] = ()

    @property
    def is_empty(self) -> bool:
        """No term at all."""
        return not (self.required or self.preferred or self.anti_required or self.anti_preferred)

    def key(self) -> tuple[object, ...]:
        """A hashable form."""
        return (
            tuple(t.key() for t in self.required),
            tuple(t.key() for t in self.preferred),
            tuple(t.key() for t in self.anti_required),
            tuple(t.key() for t in self.anti_preferred),
        )

    def matches_all_required(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """kube's `podMatchesAllAffinityTerms` over the required affinity terms (False when
        there are none)."""
        return bool(self.required) and all(t.matches(namespace, labels) for t in self.required)


NO_POD_AFFINITY: Final = PodAffinity()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SpreadConstraint:
    """One `topologySpreadConstraints` entry, with kube's defaults applied.

    `hard` is `whenUnsatisfiable: DoNotSchedule` (a filter); otherwise ScheduleAnyway (a score).
    `selector` already holds the `matchLabelKeys` requirements (`key In (the pod's value)`);
    None selects no pod. The pods counted are those of the carrying pod's namespace.
    """

    max_skew: int
    topology_key: str
    hard: bool
    selector: LabelSelector | None
    min_domains: int = 1
    honor_node_affinity: bool = True
    """`nodeAffinityPolicy: Honor` (the default): only nodes matching the pod's nodeSelector
    and required node affinity count."""
    honor_node_taints: bool = False
    """`nodeTaintsPolicy: Honor`: only nodes whose NoSchedule/NoExecute taints the pod tolerates
    count (the default, Ignore, counts every node)."""

    def selects(self, labels: Mapping[str, str]) -> bool:
        """Whether a pod with `labels` (of the same namespace) counts for this constraint."""
        return selects(self.selector, labels)

    def key(self) -> tuple[object, ...]:
        """A hashable form."""
        return (
            self.max_skew,
            self.topology_key,
            self.hard,
            selector_key(self.selector),
            self.min_domains,
            self.honor_node_affinity,
            self.honor_node_taints,
        )
