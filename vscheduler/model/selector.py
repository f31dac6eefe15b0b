"""Label selectors (Kubernetes `metav1.LabelSelector`) and the disruption budgets that use them.

Owns: `LabelSelector` and its matching rules (matchLabels ANDed with matchExpressions using In,
NotIn, Exists and DoesNotExist, as Kubernetes evaluates them), and `DisruptionBudget`, the
scheduler's fact for one `policy/v1` PodDisruptionBudget: which pods it selects and how many
of them may still be disrupted.
Must not: parse raw objects (`vscheduler.convert.pdb` does, and checks operators and values),
or decide which victims to spare (the pdb plugin does).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Final

IN: Final = "In"
NOT_IN: Final = "NotIn"
EXISTS: Final = "Exists"
DOES_NOT_EXIST: Final = "DoesNotExist"
OPERATORS: Final = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)
"""The operators of a label selector's matchExpressions."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LabelRequirement:
    """One matchExpressions entry: `key`, an operator of `OPERATORS`, and its values."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Kubernetes' rule: In needs the label with one of the values; NotIn passes a pod
        without the label; Exists and DoesNotExist look at the key only. An unknown operator
        matches nothing."""
        if self.operator == IN:
            return self.key in labels and labels[self.key] in self.values
        if self.operator == NOT_IN:
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == EXISTS:
            return self.key in labels
        if self.operator == DOES_NOT_EXIST:
            return self.key not in labels
        return False


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LabelSelector:
    """matchLabels and matchExpressions, all of which must hold. An empty selector matches
    every set of labels."""

    match_labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    match_expressions: tuple[LabelRequirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether `labels` satisfy every label and every expression."""
        for key, value in self.match_labels.items():
            if labels.get(key) != value:
                return False
        return all(req.matches(labels) for req in self.match_expressions)

    @property
    def is_empty(self) -> bool:
        """No labels and no expressions: selects everything."""
        return not self.match_labels and not self.match_expressions


EVERYTHING: Final = LabelSelector()
"""The empty selector."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DisruptionBudget:
    """One `policy/v1` PodDisruptionBudget, as the scheduler needs it.

    `selector` None selects nothing (policy/v1: a null selector); an empty selector selects
    every pod of `namespace`. `disruptions_allowed` is `status.disruptionsAllowed` (0 before the
    disruption controller has written a status). `disrupted_pods` are the pod names of
    `status.disruptedPods`: evictions the API server already counted. A malformed object
    becomes a budget that protects its whole namespace (empty selector, 0 allowed) with the
    converter's message in `problem`.
    """

    namespace: str
    name: str
    selector: LabelSelector | None
    disruptions_allowed: int = 0
    disrupted_pods: frozenset[str] = frozenset()
    problem: str = ""

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return f"{self.namespace}/{self.name}"

    def selects(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """Whether a pod of `namespace` with `labels` is covered by this budget."""
        return (
            self.selector is not None
            and namespace == self.namespace
            and self.selector.matches(labels)
        )

    def counts(self, namespace: str, name: str, labels: Mapping[str, str]) -> bool:
        """Whether evicting the pod `namespace/name` with `labels` spends one of this budget's
        disruptions: it selects the pod, and the API server has not counted it already."""
        return self.selects(namespace, labels) and name not in self.disrupted_pods


def spend(left: list[int], counting: Iterable[int]) -> int | None:
    """One eviction against the budgets at indices `counting`, whose allowances are `left`: all
    allow it (each is spent, None), or the index of the first that has none left (nothing is
    spent). The greedy rule both the pdb plugin and the effects' check of a plan apply."""
    indices = tuple(counting)
    over = next((k for k in indices if left[k] < 1), None)
    if over is None:
        for k in indices:
            left[k] -= 1
    return over
