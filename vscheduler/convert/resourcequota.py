"""`v1` ResourceQuotas become `ResourceQuotaFacts`.

Owns: reading a quota's limits (`status.hard`, else `spec.hard`) and `status.used` exactly,
holding `requests.<name>` under `<name>` (the tighter limit when both are given: the one with
less room left), and the lenient form the cache uses (`guarded_quota`: a malformed quota becomes
facts carrying the message, which close its namespace to new jobs; the cache holds them in a
`convert.memo.FactsMemo`). Scopes and scope selectors
are not read (Volcano's plugin does not read them either).
Must not: do I/O, or decide admission (the resourcequota plugin does).
"""

from __future__ import annotations

from typing import Final

from vscheduler.convert.fields import Raw, mapping, read_meta, salvaged_name
from vscheduler.errors import InputError
from vscheduler.model.quantity import parse_resource_nanos, to_resources
from vscheduler.model.resourcequota import ResourceQuotaFacts, canonical_name

KIND: Final = "ResourceQuota"


def convert_resource_quota(obj: Raw) -> ResourceQuotaFacts:
    """A `v1` ResourceQuota; raises `InputError` naming the object and the field."""
    meta = read_meta(obj, KIND, namespaced=True)
    label = meta.label
    spec = mapping(obj, "spec", label, "")
    status = mapping(obj, "status", label, "")
    if status.get("hard") is not None:
        hard = parse_resource_nanos(status["hard"], where=f"{label}: status.hard")
    else:
        hard = parse_resource_nanos(spec.get("hard"), where=f"{label}: spec.hard")
    used = parse_resource_nanos(status.get("used"), where=f"{label}: status.used")
    limits: dict[str, tuple[int, int]] = {}
    for name, limit in hard.items():
        base = canonical_name(name)
        entry = (limit, used.get(name, 0))
        held = limits.get(base)
        if held is None or entry[0] - entry[1] < held[0] - held[1]:
            limits[base] = entry
    return ResourceQuotaFacts(
        namespace=meta.namespace,
        name=meta.name,
        hard=to_resources({n: limit for n, (limit, _) in limits.items()}),
        used=to_resources({n: spent for n, (_, spent) in limits.items()}),
        limited=frozenset(limits),
    )


def guarded_quota(obj: Raw) -> ResourceQuotaFacts:
    """`convert_resource_quota`, except that a malformed quota becomes facts carrying the message
    in `problem` (its namespace takes no new job until it is fixed). Never raises."""
    try:
        return convert_resource_quota(obj)
    except InputError as err:
        namespace, name = salvaged_name(obj)
        return ResourceQuotaFacts(
            namespace=namespace,
            name=name,
            problem=str(err),
        )
