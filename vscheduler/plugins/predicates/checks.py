"""The predicates' checks for one node at a time, and their reason texts (kube's and Volcano's).

Pure functions of a task's facts and a node's facts: node selector and required node affinity
(kube's `nodeaffinity` with the component-helpers selector semantics), taints and tolerations
(kube's `v1helper.TolerationsTolerateTaint`), and host-port conflicts (kube's `HostPortInfo`).
`vectorised` builds on these to answer for many nodes at once; `explain_node` uses them as they
are, so the two paths check each other in the tests. Owns no session state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import HostPort, Requirement, SelectorTerm, Taint, Toleration

NOT_READY: Final = "node(s) were not ready"
POD_NUMBER_EXCEEDED: Final = "node(s) pod number exceeded"
UNSCHEDULABLE: Final = "node(s) were unschedulable"
AFFINITY_MISMATCH: Final = "node(s) didn't match Pod's node affinity/selector"
PORTS_IN_USE: Final = "node(s) didn't have free ports for the requested pod ports"

UNSCHEDULABLE_TAINT: Final = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
"""A cordoned node behaves as if it had this taint: a pod tolerating it may still go there."""
FILTER_EFFECTS: Final = frozenset({"NoSchedule", "NoExecute"})
NAME_FIELD: Final = "metadata.name"
WILDCARD_IP: Final = "0.0.0.0"

_INT64: Final = re.compile(r"[+-]?[0-9]+")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_LABEL_OPERATORS: Final = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})


def untolerated_taint(taint: Taint) -> str:
    """kube's TaintToleration reason for the first taint the pod does not tolerate."""
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


# --- taints and tolerations -----------------------------------------------------------------------
def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """kube's `Toleration.ToleratesTaint`: an empty effect matches every effect, an empty key
    every key; operator Exists matches any value, Equal (or empty) the same value."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def tolerated(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """Some toleration tolerates `taint`."""
    return any(tolerates(t, taint) for t in tolerations)


def first_untolerated(
    taints: Iterable[Taint],
    tolerations: Sequence[Toleration],
    effects: frozenset[str] = FILTER_EFFECTS,
) -> Taint | None:
    """The first taint with one of `effects` that no toleration tolerates, in node order."""
    for taint in taints:
        if taint.effect in effects and not tolerated(tolerations, taint):
            return taint
    return None


# --- node selector and node affinity --------------------------------------------------------------
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


def selector_matches(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """`spec.nodeSelector`: every key present with the same value."""
    return all(labels.get(key) == value for key, value in selector.items())


def required_matches(
    required: Sequence[SelectorTerm] | None, labels: Mapping[str, str], node_name: str
) -> bool:
    """Required node affinity: no requirement (None), or some term matches (OR); an empty list
    of terms matches nothing."""
    if required is None:
        return True
    return any(term_matches(term, labels, node_name) for term in required)


# --- host ports -----------------------------------------------------------------------------------
def port_key(port: HostPort) -> tuple[str, int, str]:
    """(protocol, port, host IP) with kube's defaults for an empty protocol (TCP) or IP."""
    return (port.protocol or "TCP", port.port, port.host_ip or WILDCARD_IP)


def port_conflicts(wanted: HostPort, used_ips: Iterable[str]) -> bool:
    """kube's `HostPortInfo.CheckConflict`: one wanted port against the host IPs already using its
    (protocol, port) on a node. 0.0.0.0 conflicts with any IP, an IP with itself and 0.0.0.0."""
    _, number, ip = port_key(wanted)
    if number <= 0:
        return False
    ips = set(used_ips)
    if not ips:
        return False
    return ip == WILDCARD_IP or ip in ips or WILDCARD_IP in ips
