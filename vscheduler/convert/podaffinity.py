"""Inter-pod affinity and topology spread constraints read from a raw pod spec.

Owns: the shape and validity rules (as the API server validates them) of
`spec.affinity.podAffinity` / `podAntiAffinity` terms and `spec.topologySpreadConstraints`, and
their resolution for the pod: a term naming neither namespaces nor a namespace selector means
the pod's own namespace; a constraint's `matchLabelKeys` become `key In (the pod's value)`
requirements of its selector, as kube-scheduler merges them; kube's defaults (minDomains 1,
nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore).
Must not: decide whether a pod fits a node, or count pods.

What vscheduler cannot evaluate is not an input error but a problem of the pod (it stays
pending, saying why): a `namespaceSelector` that looks at namespace labels other than
`kubernetes.io/metadata.name` (vscheduler knows namespaces by name only). A term's
`matchLabelKeys` / `mismatchLabelKeys` are left to the API server, which merges them into the
label selector when the pod is created.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from vscheduler.convert.fields import (
    INT32_MAX,
    Raw,
    as_mapping,
    checked_int,
    choice,
    error,
    integer,
    items,
    join,
    mapping,
    string,
    string_list,
)
from vscheduler.convert.pdb import convert_selector
from vscheduler.model.podaffinity import (
    DO_NOT_SCHEDULE,
    NAMESPACE_NAME_LABEL,
    NO_POD_AFFINITY,
    SCHEDULE_ANYWAY,
    PodAffinity,
    PodAffinityTerm,
    SpreadConstraint,
    WeightedPodAffinityTerm,
)
from vscheduler.model.selector import IN, LabelRequirement, LabelSelector

_REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED: Final = "preferredDuringSchedulingIgnoredDuringExecution"
_WHEN: Final = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
_POLICIES: Final = ("Honor", "Ignore")


def pod_affinity(spec: Raw, namespace: str, label: str) -> tuple[PodAffinity, str]:
    """`spec.affinity.podAffinity` and `podAntiAffinity`, and the pod's problem ('' if none)."""
    affinity = mapping(spec, "affinity", label, "spec")
    if not affinity or ("podAffinity" not in affinity and "podAntiAffinity" not in affinity):
        return NO_POD_AFFINITY, ""
    problems: list[str] = []
    found: dict[str, tuple[tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        path = f"spec.affinity.{kind}"
        raw = mapping(affinity, kind, label, "spec.affinity")
        required = tuple(
            _term(entry, namespace, label, f"{path}.{_REQUIRED}[{i}]", problems)
            for i, entry in enumerate(items(raw, _REQUIRED, label, path))
        )
        preferred = tuple(
            _weighted(entry, namespace, label, f"{path}.{_PREFERRED}[{i}]", problems)
            for i, entry in enumerate(items(raw, _PREFERRED, label, path))
        )
        found[kind] = (required, preferred)
    result = PodAffinity(
        required=found["podAffinity"][0],
        preferred=found["podAffinity"][1],
        anti_required=found["podAntiAffinity"][0],
        anti_preferred=found["podAntiAffinity"][1],
    )
    return (NO_POD_AFFINITY if result.is_empty else result), (problems[0] if problems else "")


def _weighted(
    raw: object, namespace: str, label: str, path: str, problems: list[str]
) -> WeightedPodAffinityTerm:
    entry = as_mapping(raw, label, path)
    weight = checked_int(entry.get("weight"), label, f"{path}.weight", minimum=1, maximum=100)
    inner = entry.get("podAffinityTerm")
    if inner is None:
        raise error(label, f"{path}.podAffinityTerm", "is required")
    term = _term(inner, namespace, label, f"{path}.podAffinityTerm", problems)
    return WeightedPodAffinityTerm(weight=weight, term=term)


def _term(
    raw: object, namespace: str, label: str, path: str, problems: list[str]
) -> PodAffinityTerm:
    """One PodAffinityTerm, its namespaces resolved for a pod of `namespace`."""
    term = as_mapping(raw, label, path)
    topology_key = string(term, "topologyKey", label, path)
    if not topology_key:
        raise error(label, join(path, "topologyKey"), "must be a non-empty string")
    selector = _selector(term, "labelSelector", label, path)
    namespaces = frozenset(string_list(term, "namespaces", label, path))
    ns_selector = _selector(term, "namespaceSelector", label, path)
    if not namespaces and ns_selector is None:
        namespaces = frozenset({namespace})
    if ns_selector is not None and _needs_namespace_labels(ns_selector):
        problems.append(
            str(
                error(
                    label,
                    join(path, "namespaceSelector"),
                    f"only {NAMESPACE_NAME_LABEL} can be selected on: vscheduler does not "
                    "see other namespace labels",
                )
            )
        )
    return PodAffinityTerm(
        selector=selector,
        namespaces=namespaces,
        namespace_selector=ns_selector,
        topology_key=topology_key,
    )


def _selector(parent: Raw, key: str, label: str, path: str) -> LabelSelector | None:
    raw = parent.get(key)
    return None if raw is None else convert_selector(raw, label, join(path, key))


def _needs_namespace_labels(selector: LabelSelector) -> bool:
    keys = {*selector.match_labels, *(r.key for r in selector.match_expressions)}
    return bool(keys - {NAMESPACE_NAME_LABEL})


def topology_spread(
    spec: Raw, labels: Mapping[str, str], label: str
) -> tuple[SpreadConstraint, ...]:
    """`spec.topologySpreadConstraints`, resolved for a pod with `labels`."""
    out: list[SpreadConstraint] = []
    seen: set[tuple[str, str]] = set()
    for i, raw in enumerate(items(spec, "topologySpreadConstraints", label, "spec")):
        path = f"spec.topologySpreadConstraints[{i}]"
        entry = as_mapping(raw, label, path)
        when = choice(entry, "whenUnsatisfiable", label, path, _WHEN, "")
        if not when:
            listed = ", ".join(_WHEN)
            raise error(label, join(path, "whenUnsatisfiable"), f"must be one of {listed}")
        topology_key = string(entry, "topologyKey", label, path)
        if not topology_key:
            raise error(label, join(path, "topologyKey"), "must be a non-empty string")
        if (topology_key, when) in seen:
            raise error(label, path, f"duplicate of another constraint on {topology_key}, {when}")
        seen.add((topology_key, when))
        out.append(_constraint(entry, topology_key, when, labels, label, path))
    return tuple(out)


def _constraint(
    entry: Raw, topology_key: str, when: str, labels: Mapping[str, str], label: str, path: str
) -> SpreadConstraint:
    raw_max_skew = entry.get("maxSkew")
    max_skew = checked_int(raw_max_skew, label, join(path, "maxSkew"), minimum=1, maximum=INT32_MAX)
    min_domains = integer(entry, "minDomains", label, path, 0, minimum=1, maximum=INT32_MAX)
    if min_domains and when != DO_NOT_SCHEDULE:
        raise error(label, join(path, "minDomains"), f"can only be set with {DO_NOT_SCHEDULE}")
    selector = _selector(entry, "labelSelector", label, path)
    keys = string_list(entry, "matchLabelKeys", label, path)
    if keys:
        selector = _merge_label_keys(selector, keys, labels, label, join(path, "matchLabelKeys"))
    return SpreadConstraint(
        max_skew=max_skew,
        topology_key=topology_key,
        hard=when == DO_NOT_SCHEDULE,
        selector=selector,
        min_domains=min_domains or 1,
        honor_node_affinity=choice(entry, "nodeAffinityPolicy", label, path, _POLICIES, "Honor")
        == "Honor",
        honor_node_taints=choice(entry, "nodeTaintsPolicy", label, path, _POLICIES, "Ignore")
        == "Honor",
    )


def _merge_label_keys(
    selector: LabelSelector | None,
    keys: tuple[str, ...],
    labels: Mapping[str, str],
    label: str,
    path: str,
) -> LabelSelector:
    """kube's merge: `key In (value)` for each key the pod has, ANDed with the selector."""
    if selector is None:
        raise error(label, path, "must not be set when labelSelector is not set")
    used = {*selector.match_labels, *(r.key for r in selector.match_expressions)}
    for key in keys:
        if not key:
            raise error(label, path, "must not hold an empty key")
        if key in used:
            raise error(label, path, f"key {key!r} is also in labelSelector")
    added = tuple(
        LabelRequirement(key=key, operator=IN, values=(labels[key],))
        for key in keys
        if key in labels
    )
    if not added:
        return selector
    return LabelSelector(
        match_labels=selector.match_labels,
        match_expressions=(*selector.match_expressions, *added),
    )
