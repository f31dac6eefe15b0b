"""Node selector terms against a node's labels and name, as Kubernetes matches them.

Owns: kube's `labels.NewRequirement` validity rules and the component-helpers selector semantics
(`v1helper.MatchNodeSelectorTerms`): a pod's required node affinity, a PersistentVolume's node
affinity and a StorageClass's allowed topologies are all terms of this kind. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from vscheduler.model.facts import Requirement, SelectorTerm

NAME_FIELD: Final = "metadata.name"
_INT64: Final = re.compile(r"[+-]?[0-9]+")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_LABEL_OPERATORS: Final = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})


def parse_int64(text: str) -> int | None:
    """Go's `strconv.ParseInt(text, 10, 64)`, or None when it fails."""
    if not _INT64.fullmatch(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def label_requirement_valid(req: Requirement) -> bool:
    """Whether kube's `labels.NewRequirement` accepts `req` (an invalid one matches no node)."""
    if req.operator not in _LABEL_OPERATORS:
        return False
    if req.operator in ("In", "NotIn"):
        return len(req.values) > 0
    if req.operator in ("Exists", "DoesNotExist"):
        return not req.values
    return len(req.values) == 1 and parse_int64(req.values[0]) is not None


def field_requirement_valid(req: Requirement) -> bool:
    """Whether kube accepts `req` as a node field selector (In or NotIn with one value)."""
    return req.operator in ("In", "NotIn") and len(req.values) == 1


def label_matches(req: Requirement, value: str | None) -> bool:
    """A valid label requirement against a node's value for its key (None: no such label)."""
    op = req.operator
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op == "In":
        return value is not None and value in req.values
    if op == "NotIn":
        return value is None or value not in req.values
    number = parse_int64(value) if value is not None else None
    if number is None:
        return False
    bound = parse_int64(req.values[0])
    assert bound is not None  # checked by label_requirement_valid
    return number > bound if op == "Gt" else number < bound


def field_value(key: str, node_name: str) -> str:
    """A node's value for a field selector key: its name for `metadata.name`, else empty."""
    return node_name if key == NAME_FIELD else ""


def term_valid(term: SelectorTerm) -> bool:
    """Not empty, and every requirement well formed (kube skips the others: they match nothing)."""
    if not term.match_expressions and not term.match_fields:
        return False
    return all(map(label_requirement_valid, term.match_expressions)) and all(
        map(field_requirement_valid, term.match_fields)
    )


def term_matches(term: SelectorTerm, labels: Mapping[str, str], node_name: str) -> bool:
    """A node-selector term: valid, and all its expressions and field expressions match (AND)."""
    if not term_valid(term):
        return False
    for req in term.match_expressions:
        if not label_matches(req, labels.get(req.key)):
            return False
    for req in term.match_fields:
        if (field_value(req.key, node_name) == req.values[0]) != (req.operator == "In"):
            return False
    return True


def required_matches(
    required: Sequence[SelectorTerm] | None, labels: Mapping[str, str], node_name: str
) -> bool:
    """Required node affinity: no requirement (None), or some term matches (OR); an empty list
    of terms matches nothing."""
    if required is None:
        return True
    return any(term_matches(term, labels, node_name) for term in required)
