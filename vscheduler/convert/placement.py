"""Placement constraints read from raw pods and nodes: node affinity, tolerations, taints, ports.

Owns: the shape and validity rules (as the API server validates them) of node selector terms,
node affinity, tolerations, taints, container host ports and container images.
Must not: decide whether a pod fits a node (that is the predicates plugin's job).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from vscheduler.convert.fields import (
    Raw,
    as_mapping,
    checked_int,
    choice,
    error,
    is_int,
    items,
    join,
    mapping,
    show,
    string,
    string_list,
)
from vscheduler.model.facts import (
    HostPort,
    NodeAffinity,
    PreferredTerm,
    Requirement,
    SelectorTerm,
    Taint,
    Toleration,
)

_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS: Final = ("In", "NotIn")
_TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_TOLERATION_EFFECTS: Final = ("", *_TAINT_EFFECTS)
_TOLERATION_OPERATORS: Final = ("Equal", "Exists")
_PROTOCOLS: Final = ("TCP", "UDP", "SCTP")
_NO_AFFINITY: Final = NodeAffinity()
_REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED: Final = "preferredDuringSchedulingIgnoredDuringExecution"


def node_affinity(spec: Raw, label: str) -> NodeAffinity:
    """`spec.affinity.nodeAffinity`: required terms (ORed) and weighted preferred terms."""
    if spec.get("affinity") is None:
        return _NO_AFFINITY
    path = "spec.affinity.nodeAffinity"
    raw = mapping(mapping(spec, "affinity", label, "spec"), "nodeAffinity", label, "spec.affinity")
    if not raw:
        return _NO_AFFINITY
    required: tuple[SelectorTerm, ...] | None = None
    selector = raw.get(_REQUIRED)
    if selector is not None:
        sel_path = join(path, _REQUIRED)
        selector = as_mapping(selector, label, sel_path)
        terms = items(selector, "nodeSelectorTerms", label, sel_path)
        if not terms:
            raise error(label, f"{sel_path}.nodeSelectorTerms", "must hold at least one term")
        required = tuple(
            selector_term(term, label, f"{sel_path}.nodeSelectorTerms[{i}]")
            for i, term in enumerate(terms)
        )
    preferred = []
    for i, entry in enumerate(items(raw, _PREFERRED, label, path)):
        entry_path = f"{path}.{_PREFERRED}[{i}]"
        entry = as_mapping(entry, label, entry_path)
        weight = checked_int(
            entry.get("weight"), label, f"{entry_path}.weight", minimum=1, maximum=100
        )
        term = selector_term(entry.get("preference") or {}, label, f"{entry_path}.preference")
        preferred.append(PreferredTerm(weight=weight, term=term))
    return NodeAffinity(required=required, preferred=tuple(preferred))


def selector_term(raw: object, label: str, path: str) -> SelectorTerm:
    """One node selector term: matchExpressions on labels, matchFields on `metadata.name`."""
    term = as_mapping(raw, label, path)
    expressions = tuple(
        _requirement(req, label, f"{path}.matchExpressions[{i}]", fields=False)
        for i, req in enumerate(items(term, "matchExpressions", label, path))
    )
    fields = tuple(
        _requirement(req, label, f"{path}.matchFields[{i}]", fields=True)
        for i, req in enumerate(items(term, "matchFields", label, path))
    )
    return SelectorTerm(match_expressions=expressions, match_fields=fields)


def _requirement(raw: object, label: str, path: str, *, fields: bool) -> Requirement:
    req = as_mapping(raw, label, path)
    key = string(req, "key", label, path)
    if not key:
        raise error(label, join(path, "key"), "must be a non-empty string")
    if fields and key != "metadata.name":
        raise error(label, join(path, "key"), f"must be 'metadata.name', got {show(key)}")
    allowed = _FIELD_OPERATORS if fields else _OPERATORS
    operator = choice(req, "operator", label, path, allowed, "")
    if not operator:
        raise error(label, join(path, "operator"), f"must be one of {', '.join(allowed)}")
    values = string_list(req, "values", label, path)
    problem = _values_problem(operator, values, fields=fields)
    if problem:
        raise error(label, join(path, "values"), problem)
    return Requirement(key=key, operator=operator, values=values)


def _values_problem(operator: str, values: Sequence[str], *, fields: bool) -> str:
    if fields and len(values) != 1:
        return f"must hold exactly one value for a field selector, got {len(values)}"
    if operator in ("In", "NotIn") and not values:
        return f"must not be empty for operator {operator}"
    if operator in ("Exists", "DoesNotExist") and values:
        return f"must be empty for operator {operator}"
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            return f"must hold exactly one value for operator {operator}, got {len(values)}"
        try:
            int(values[0])
        except ValueError:
            return f"must be an integer for operator {operator}, got {show(values[0])}"
    return ""


def tolerations(spec: Raw, label: str) -> tuple[Toleration, ...]:
    """`spec.tolerations` (an empty operator means Equal)."""
    out = []
    for i, raw in enumerate(items(spec, "tolerations", label, "spec")):
        path = f"spec.tolerations[{i}]"
        tol = as_mapping(raw, label, path)
        key = string(tol, "key", label, path)
        operator = choice(tol, "operator", label, path, ("", *_TOLERATION_OPERATORS), "") or "Equal"
        value = string(tol, "value", label, path)
        effect = choice(tol, "effect", label, path, _TOLERATION_EFFECTS, "")
        if not key and operator != "Exists":
            raise error(label, join(path, "operator"), "must be Exists when the key is empty")
        if operator == "Exists" and value:
            raise error(label, join(path, "value"), "must be empty when the operator is Exists")
        out.append(Toleration(key=key, operator=operator, value=value, effect=effect))
    return tuple(out)


def taints(spec: Raw, label: str) -> tuple[Taint, ...]:
    """A node's `spec.taints`."""
    out = []
    for i, raw in enumerate(items(spec, "taints", label, "spec")):
        path = f"spec.taints[{i}]"
        taint = as_mapping(raw, label, path)
        key = string(taint, "key", label, path)
        if not key:
            raise error(label, join(path, "key"), "must be a non-empty string")
        effect = choice(taint, "effect", label, path, _TAINT_EFFECTS, "")
        if not effect:
            raise error(label, join(path, "effect"), f"must be one of {', '.join(_TAINT_EFFECTS)}")
        out.append(Taint(key=key, value=string(taint, "value", label, path), effect=effect))
    return tuple(out)


def host_ports(
    containers: Iterable[tuple[Raw, str]], label: str, *, host_network: bool
) -> tuple[HostPort, ...]:
    """Ports the given containers (each with its path) publish on the host.

    The pod converter passes the containers and the restartable init containers. With
    `hostNetwork: true` a port's hostPort defaults to its containerPort, as the API server
    defaults it.
    """
    out: list[HostPort] = []
    for container, path in containers:
        ports = container.get("ports")
        if not ports:
            continue
        for j, port in enumerate(items(container, "ports", label, path)):
            found = _host_port(port, label, f"{path}.ports[{j}]", host_network=host_network)
            if found is not None:
                out.append(found)
    return tuple(out)


def _host_port(raw: object, label: str, path: str, *, host_network: bool) -> HostPort | None:
    port = as_mapping(raw, label, path)
    container_port: Any = port.get("containerPort")
    if not is_int(container_port, 1, 65535):
        checked_int(container_port, label, f"{path}.containerPort", minimum=1, maximum=65535)
    value: Any = port.get("hostPort")
    if value is None:
        value = container_port if host_network else 0
    elif not is_int(value, 0, 65535):
        checked_int(value, label, f"{path}.hostPort", minimum=0, maximum=65535)
    host_port: int = value
    if host_port == 0:
        return None
    protocol = choice(port, "protocol", label, path, _PROTOCOLS, "TCP")
    host_ip = string(port, "hostIP", label, path) or "0.0.0.0"
    return HostPort(port=host_port, protocol=protocol, host_ip=host_ip)


def images(spec: Raw, label: str) -> tuple[str, ...]:
    """The container images (containers, then init containers), each once, in order."""
    seen: dict[str, None] = {}
    for key in ("containers", "initContainers"):
        for i, raw in enumerate(items(spec, key, label, "spec")):
            container = raw if type(raw) is dict else as_mapping(raw, label, f"spec.{key}[{i}]")
            image = container.get("image")
            if type(image) is str:
                if image:
                    seen[image] = None
            elif image is not None:
                string(container, "image", label, f"spec.{key}[{i}]")  # raises
    return tuple(seen)
