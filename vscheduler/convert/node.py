"""A raw `v1` Node becomes a `NodeFacts`.

Owns: a node's allocatable and capacity (the `pods` entry becomes `max_pods`), taints,
unschedulable flag, readiness (Volcano's rule: only a Ready condition that is not True makes a
node not ready) and image sizes; the warning an allocatable amount above the scheduler's ceiling
gets (`quantity.CEILING`; capacity is held within it silently, the scheduler fits against
allocatable).
Must not: account for the pods on the node (the session ledger does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from vscheduler.convert import placement
from vscheduler.convert.fields import (
    Raw,
    as_mapping,
    boolean,
    checked_int,
    items,
    mapping,
    read_meta,
    string,
    string_list,
)
from vscheduler.model.facts import NodeFacts, clamped
from vscheduler.model.quantity import over_ceiling, parse_resource_nanos, to_count, to_resources
from vscheduler.model.resources import PODS

DEFAULT_MAX_PODS: Final = 110


def convert_node(obj: Mapping[str, object]) -> NodeFacts:
    """The facts of a raw Node; allocatable defaults to capacity."""
    meta = read_meta(obj, "Node", namespaced=False)
    label = meta.label
    spec = mapping(obj, "spec", label, "")
    status = mapping(obj, "status", label, "")
    capacity = parse_resource_nanos(status.get("capacity"), where=f"{label}: status.capacity")
    allocatable = (
        capacity
        if status.get("allocatable") is None
        else parse_resource_nanos(status["allocatable"], where=f"{label}: status.allocatable")
    )
    pods = allocatable.get(PODS, capacity.get(PODS))
    read_from = "status.capacity" if status.get("allocatable") is None else "status.allocatable"
    return NodeFacts(
        name=meta.name,
        allocatable=to_resources({n: a for n, a in allocatable.items() if n != PODS}),
        capacity=to_resources({n: a for n, a in capacity.items() if n != PODS}),
        max_pods=DEFAULT_MAX_PODS if pods is None else to_count(pods),
        labels=meta.labels,
        annotations=meta.annotations,
        taints=placement.taints(spec, label),
        unschedulable=boolean(spec, "unschedulable", label, "spec", False),
        ready=_ready(status, label),
        images=_images(status, label),
        created=meta.created,
        warnings=clamped(over_ceiling(allocatable, where=f"{label}: {read_from}")),
    )


def _ready(status: Raw, label: str) -> bool:
    ready = True
    for i, raw in enumerate(items(status, "conditions", label, "status")):
        path = f"status.conditions[{i}]"
        condition = as_mapping(raw, label, path)
        if string(condition, "type", label, path) == "Ready":
            ready = string(condition, "status", label, path) == "True"
    return ready


def _images(status: Raw, label: str) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for i, raw in enumerate(items(status, "images", label, "status")):
        path = f"status.images[{i}]"
        image = as_mapping(raw, label, path)
        size = checked_int(image.get("sizeBytes", 0), label, f"{path}.sizeBytes", minimum=0)
        for name in string_list(image, "names", label, path):
            sizes[name] = size
    return sizes
