"""A raw `scheduling.volcano.sh/v1beta1` Queue becomes a `QueueFacts`.

Owns: a queue's weight (default 1; 0 read as 1 with a warning, as Volcano's admission sets it),
capability, guarantee, deserved share, reclaimable flag (default true), parent, priority and
state (default Open), with Volcano's field names; its node-group affinity (`spec.affinity`) and
the per-node-group limits of its `volcano.sh/nodegroup-resource-limits` annotation (a malformed
annotation is a warning on the queue and kept as `node_group_limits_problem`: only the nodegroup
plugin reads it, and it then keeps the queue's pods off every node, as Volcano's does); its
place in hierarchical drf's tree (`convert.queue_hierarchy`).
Must not: check the queue hierarchy (parents that exist, cycles): that is the scheduler's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from vscheduler.convert.fields import (
    INT32_MAX,
    boolean,
    choice,
    crd_resources,
    integer,
    mapping,
    read_meta,
    string,
    string_list,
)
from vscheduler.convert.queue_hierarchy import hierarchy_levels
from vscheduler.errors import QuantityError
from vscheduler.model.facts import (
    NODE_GROUP_LIMITS,
    UNUSUAL_VALUE,
    FieldWarning,
    NodeGroupAffinity,
    NodeGroupLimit,
    QueueFacts,
)
from vscheduler.model.resources import Resources

_STATES: Final = ("Open", "Closed", "Closing", "Unknown")


def convert_queue(obj: Mapping[str, object]) -> QueueFacts:
    """The facts of a raw Queue (cluster-scoped)."""
    meta = read_meta(obj, "Queue", namespaced=False)
    label = meta.label
    spec = mapping(obj, "spec", label, "")
    status = mapping(obj, "status", label, "")
    guarantee = mapping(spec, "guarantee", label, "spec")
    warnings: list[FieldWarning] = []
    weight = _weight(spec, label, warnings)
    limits, limits_problem = node_group_limits(meta.annotations, label, warnings)
    levels = hierarchy_levels(meta.annotations, label, warnings)
    return QueueFacts(
        name=meta.name,
        uid=meta.uid,
        weight=weight,
        capability=_optional_list(spec, "capability", label, warnings),
        guarantee=crd_resources(
            guarantee.get("resource"), f"{label}: spec.guarantee.resource", warnings
        ),
        deserved=_optional_list(spec, "deserved", label, warnings),
        reclaimable=boolean(spec, "reclaimable", label, "spec", True),
        state=choice(status, "state", label, "status", _STATES, "Open"),
        parent=string(spec, "parent", label, "spec"),
        priority=integer(
            spec, "priority", label, "spec", 0, minimum=-INT32_MAX - 1, maximum=INT32_MAX
        ),
        node_group_affinity=_node_group_affinity(spec, label),
        node_group_limits=limits,
        node_group_limits_problem=limits_problem,
        hierarchy=levels,
        created=meta.created,
        warnings=tuple(warnings),
    )


_REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED: Final = "preferredDuringSchedulingIgnoredDuringExecution"


def _node_group_affinity(spec: Mapping[str, object], label: str) -> NodeGroupAffinity | None:
    """`spec.affinity`: None when absent or null; lists of group names otherwise."""
    if spec.get("affinity") is None:
        return None
    affinity = mapping(spec, "affinity", label, "spec")
    on = mapping(affinity, "nodeGroupAffinity", label, "spec.affinity")
    off = mapping(affinity, "nodeGroupAntiAffinity", label, "spec.affinity")
    on_path, off_path = "spec.affinity.nodeGroupAffinity", "spec.affinity.nodeGroupAntiAffinity"
    return NodeGroupAffinity(
        required=string_list(on, _REQUIRED, label, on_path),
        preferred=string_list(on, _PREFERRED, label, on_path),
        anti_required=string_list(off, _REQUIRED, label, off_path),
        anti_preferred=string_list(off, _PREFERRED, label, off_path),
    )


def node_group_limits(
    annotations: Mapping[str, str], label: str, warnings: list[FieldWarning]
) -> tuple[tuple[NodeGroupLimit, ...], str]:
    """The `volcano.sh/nodegroup-resource-limits` annotation (JSON: group -> ResourceList) and
    why it cannot be read (""). Absent or empty: no limit."""
    raw = annotations.get(NODE_GROUP_LIMITS, "")
    if not raw:
        return (), ""
    where = f"{label}: metadata.annotations.{NODE_GROUP_LIMITS}"
    try:
        parsed = json.loads(raw)
        if parsed is None:
            return (), ""
        if not isinstance(parsed, dict):
            raise QuantityError(f"{where}: must be a JSON object of node group to resource list")
        limits = tuple(
            _limit(group, lists, f"{where}.{group}", warnings)
            for group, lists in sorted(parsed.items())
        )
    except (ValueError, QuantityError) as err:
        problem = str(err) if isinstance(err, QuantityError) else f"{where}: not JSON: {err}"
        message = f"{problem} (the nodegroup plugin keeps the queue's pods off every node)"
        warnings.append(FieldWarning(UNUSUAL_VALUE, message))
        return (), problem
    return limits, ""


def _limit(group: str, raw: object, where: str, warnings: list[FieldWarning]) -> NodeGroupLimit:
    """One group's ResourceList; a JSON number is a quantity too and null is 0, as Kubernetes'
    JSON decoding reads them."""
    if isinstance(raw, dict):
        raw = {name: 0 if value is None else value for name, value in raw.items()}
    amounts = crd_resources(raw, where, warnings)
    names = tuple(sorted(raw)) if isinstance(raw, dict) else ()
    return NodeGroupLimit(group=group, names=names, amounts=amounts)


def _weight(spec: Mapping[str, object], label: str, warnings: list[FieldWarning]) -> int:
    """`spec.weight`, default 1; 0 is read as 1 with a warning, as Volcano's admission
    (`mutate_queue.go`) writes 1 over it. A negative weight is an error (its admission
    rejects it)."""
    weight = integer(spec, "weight", label, "spec", 1, minimum=0, maximum=INT32_MAX)
    if weight:
        return weight
    message = (
        f"{label}: spec.weight: 0 is read as 1, as Volcano's admission sets it"
        " (a queue's share of the cluster is in proportion to its weight)"
    )
    warnings.append(FieldWarning(UNUSUAL_VALUE, message))
    return 1


def _optional_list(
    spec: Mapping[str, object], key: str, label: str, warnings: list[FieldWarning]
) -> Resources | None:
    """A ResourceList that means "no limit" when absent or empty (Volcano omits empty lists)."""
    raw = spec.get(key)
    if raw is None or raw == {}:
        return None
    return crd_resources(raw, f"{label}: spec.{key}", warnings)
