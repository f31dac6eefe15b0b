"""A raw `scheduling.volcano.sh/v1beta1` Queue becomes a `QueueFacts`.

Owns: a queue's weight (default 1; 0 read as 1 with a warning, as Volcano's admission sets it),
capability, guarantee, deserved share, reclaimable flag (default true), parent, priority and
state (default Open), with Volcano's field names.
Must not: check the queue hierarchy (parents that exist, cycles): that is the scheduler's.
"""

from __future__ import annotations

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
)
from vscheduler.model.facts import UNUSUAL_VALUE, FieldWarning, QueueFacts
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
        created=meta.created,
        warnings=tuple(warnings),
    )


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
