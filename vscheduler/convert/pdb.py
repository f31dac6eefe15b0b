"""`policy/v1` PodDisruptionBudgets become `DisruptionBudget` facts.

Owns: reading a PDB's selector (`spec.selector`: matchLabels, matchExpressions with In, NotIn,
Exists, DoesNotExist, checked as the API server checks them), `status.disruptionsAllowed` (0 when
the disruption controller has not written a status yet) and `status.disruptedPods`; the lenient
form the cache uses (`guarded_budget`: a malformed PDB protects every pod of its namespace, the
conservative reading; the cache converts each object once with `convert.memo.FactsMemo`).
Must not: do I/O, or decide which pods a budget spares (the pdb plugin does).
"""

from __future__ import annotations

from typing import Final

from vscheduler.convert.fields import (
    INT32_MAX,
    Raw,
    as_mapping,
    error,
    integer,
    items,
    join,
    mapping,
    read_meta,
    salvaged_name,
    show,
    string,
    string_list,
    string_map,
)
from vscheduler.errors import InputError
from vscheduler.model.selector import (
    DOES_NOT_EXIST,
    EVERYTHING,
    EXISTS,
    OPERATORS,
    DisruptionBudget,
    LabelRequirement,
    LabelSelector,
)

KIND: Final = "PodDisruptionBudget"


def convert_budget(obj: Raw) -> DisruptionBudget:
    """A `policy/v1` PodDisruptionBudget; raises `InputError` naming the object and the field."""
    meta = read_meta(obj, KIND, namespaced=True)
    spec = mapping(obj, "spec", meta.label, "")
    raw_selector = spec.get("selector")
    selector = (
        None
        if raw_selector is None
        else convert_selector(raw_selector, meta.label, "spec.selector")
    )
    status = mapping(obj, "status", meta.label, "")
    allowed = integer(
        status, "disruptionsAllowed", meta.label, "status", 0, minimum=0, maximum=INT32_MAX
    )
    disrupted = mapping(status, "disruptedPods", meta.label, "status")
    for pod in disrupted:
        if not isinstance(pod, str):
            raise error(
                meta.label, "status.disruptedPods", f"keys must be strings, got {show(pod)}"
            )
    return DisruptionBudget(
        namespace=meta.namespace,
        name=meta.name,
        selector=selector,
        disruptions_allowed=allowed,
        disrupted_pods=frozenset(disrupted),
    )


def convert_selector(value: object, label: str, path: str) -> LabelSelector:
    """A `metav1.LabelSelector` at `path` (a mapping; an empty one selects everything)."""
    raw = as_mapping(value, label, path)
    labels = string_map(raw, "matchLabels", label, path)
    expressions = tuple(
        _requirement(entry, label, f"{join(path, 'matchExpressions')}[{i}]")
        for i, entry in enumerate(items(raw, "matchExpressions", label, path))
    )
    if not labels and not expressions:
        return EVERYTHING
    return LabelSelector(match_labels=labels, match_expressions=expressions)


def _requirement(value: object, label: str, path: str) -> LabelRequirement:
    raw = as_mapping(value, label, path)
    key = string(raw, "key", label, path)
    if not key:
        raise error(label, join(path, "key"), "is required")
    operator = raw.get("operator")
    if operator not in OPERATORS:
        listed = ", ".join(OPERATORS)
        raise error(label, join(path, "operator"), f"must be one of {listed}, got {show(operator)}")
    values = string_list(raw, "values", label, path)
    if operator in (EXISTS, DOES_NOT_EXIST) and values:
        raise error(label, join(path, "values"), f"must be empty when the operator is {operator}")
    if operator not in (EXISTS, DOES_NOT_EXIST) and not values:
        raise error(
            label, join(path, "values"), f"must not be empty when the operator is {operator}"
        )
    return LabelRequirement(key=key, operator=str(operator), values=values)


def guarded_budget(obj: Raw) -> DisruptionBudget:
    """`convert_budget`, except that a malformed PDB becomes a budget protecting every pod of its
    namespace (empty selector, nothing allowed) that carries the message in `problem`: the
    scheduler must not disrupt pods an unreadable budget may protect. Never raises."""
    try:
        return convert_budget(obj)
    except InputError as err:
        namespace, name = salvaged_name(obj)
        return DisruptionBudget(
            namespace=namespace,
            name=name,
            selector=EVERYTHING,
            disruptions_allowed=0,
            problem=str(err),
        )
