"""A Queue's `status.allocated` as Volcano's scheduler writes it, and whether it needs writing.

Owns: the ResourceList written (`allocated_list`: cpu and memory always, any other resource the
queue holds; each in the text Kubernetes writes for the quantity, `quantity.canonical`) and the
merge patch from the watched Queue (`allocated_patch`): none when the watched `status.allocated`
holds the same amounts (compared as numbers, so `1000m` and `1` agree) and names cpu and memory;
else the whole list, with every other resource the watched one names set to null (removed), so
the status holds what Volcano's `UpdateStatus` would have left.
Must not: call the API server, or raise on a malformed Queue (a status that does not parse reads
as different, so writing repairs it).
"""

from __future__ import annotations

from collections.abc import Mapping

from vscheduler.errors import QuantityError
from vscheduler.model.quantity import canonical, parse_resource_list
from vscheduler.model.resources import CPU, MEMORY, Resources

Raw = Mapping[str, object]


def allocated_list(allocated: Resources) -> dict[str, str]:
    """`allocated` as the ResourceList Volcano writes (`util.ConvertRes2ResList`)."""
    held = allocated.clamp_min_zero()
    out = {CPU: canonical(CPU, held.milli_cpu), MEMORY: canonical(MEMORY, held.memory)}
    for name, amount in held.items():
        out.setdefault(name, canonical(name, amount))
    return out


def allocated_patch(allocated: Resources, queue: Raw) -> dict[str, object] | None:
    """The status merge patch (`{"allocated": {...}}`) that makes `queue` (raw, as watched)
    show `allocated`, or None when it already does."""
    status = queue.get("status")
    watched = status.get("allocated") if isinstance(status, Mapping) else None
    if isinstance(watched, Mapping) and CPU in watched and MEMORY in watched:
        try:
            shown = parse_resource_list(watched, where="status.allocated")
        except QuantityError:
            shown = None
        if shown is not None and shown == allocated.clamp_min_zero():
            return None
    listed: dict[str, object] = dict(allocated_list(allocated))
    if isinstance(watched, Mapping):
        for name in watched:
            if isinstance(name, str) and name not in listed:
                listed[name] = None
    return {"allocated": listed}
