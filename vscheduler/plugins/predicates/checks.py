"""The predicates' checks for one node at a time, and their reason texts (kube's and Volcano's).

Pure functions of a task's facts and a node's facts: node selector and required node affinity
(kube's `nodeaffinity` with the component-helpers selector semantics), taints and tolerations
(kube's `v1helper.TolerationsTolerateTaint`), and host-port conflicts (kube's `HostPortInfo`).
`vectorised` builds on these to answer for many nodes at once; `explain_node` uses them as they
are, so the two paths check each other in the tests. Owns no session state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import (
    HostPort,
    Taint,
    Toleration,
    field_requirement_valid,
    field_value,
    label_matches,
    label_requirement_valid,
    parse_int64,
    required_matches,
    term_matches,
    term_valid,
)

__all__ = [
    "field_requirement_valid",
    "field_value",
    "label_matches",
    "label_requirement_valid",
    "parse_int64",
    "required_matches",
    "term_matches",
    "term_valid",
]

NOT_READY: Final = "node(s) were not ready"
POD_NUMBER_EXCEEDED: Final = "node(s) pod number exceeded"
UNSCHEDULABLE: Final = "node(s) were unschedulable"
AFFINITY_MISMATCH: Final = "node(s) didn't match Pod's node affinity/selector"
PORTS_IN_USE: Final = "node(s) didn't have free ports for the requested pod ports"

UNSCHEDULABLE_TAINT: Final = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
"""A cordoned node behaves as if it had this taint: a pod tolerating it may still go there."""
FILTER_EFFECTS: Final = frozenset({"NoSchedule", "NoExecute"})
WILDCARD_IP: Final = "0.0.0.0"
NAME_FIELD: Final = "metadata.name"


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
def selector_matches(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """`spec.nodeSelector`: every key present with the same value."""
    return all(labels.get(key) == value for key, value in selector.items())


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
