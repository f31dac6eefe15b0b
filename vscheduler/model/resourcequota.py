"""ResourceQuotaFacts: one namespace ResourceQuota, as the resourcequota plugin reads it.

Owns: the quota's limits (`hard`) and consumption (`used`) under the names a pod's requests use,
and the rule that puts a PodGroup's `minResources` under the same names (`quota_request`), so
the two compare exactly. Kubernetes counts a quota's `cpu` and `requests.cpu` (likewise
`memory`, `ephemeral-storage`, `hugepages-*` and extended resources) from the same pod requests;
both are held here under the plain name (cpu in millicores), the tighter of the two when a quota
names both. Every other name (`pods`, `count/pods`, `limits.cpu`, ...) is kept as written.
Must not: parse raw objects (`vscheduler.convert.resourcequota` does) or decide admission (the
resourcequota plugin does).
"""

from __future__ import annotations

import dataclasses
from typing import Final

from vscheduler.model.resources import CPU, EMPTY, Resources

REQUESTS_PREFIX: Final = "requests."


def canonical_name(name: str) -> str:
    """The name a quota's resource is held under: `requests.cpu` -> `cpu`, others unchanged."""
    return name.removeprefix(REQUESTS_PREFIX) if name.startswith(REQUESTS_PREFIX) else name


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ResourceQuotaFacts:
    """One `v1` ResourceQuota.

    `hard` is `status.hard` (what the quota controller enforces), or `spec.hard` when no status
    has been written; `used` is `status.used`. `limited` holds every name `hard` names, a limit
    of 0 included (`Resources` drops zero amounts). A malformed object carries the converter's
    message in `problem` and limits nothing else: the plugin refuses its namespace's jobs.
    """

    namespace: str
    name: str
    hard: Resources = EMPTY
    used: Resources = EMPTY
    limited: frozenset[str] = frozenset()
    problem: str = ""

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return f"{self.namespace}/{self.name}"

    def exceeded(self, asked: Resources, admitted: Resources = EMPTY) -> tuple[str, ...]:
        """The limited names (sorted) where `used + admitted + asked` would pass `hard`, among
        those `asked` names with a positive amount (both already under quota names)."""
        return tuple(
            name
            for name, amount in asked.items()
            if amount > 0
            and name in self.limited
            and self.used.get(name) + admitted.get(name) + amount > self.hard.get(name)
        )


def quota_request(min_resources: Resources) -> Resources:
    """A PodGroup's `minResources` under quota names: `requests.<name>` counts as `<name>` when
    `<name>` itself is absent (`requests.cpu`, held in whole cores, becomes millicores); a
    `<name>` given both ways counts once, as `<name>`."""
    out = {n: a for n, a in min_resources.items() if not n.startswith(REQUESTS_PREFIX)}
    for name, amount in min_resources.items():
        base = canonical_name(name)
        if base != name and base not in out:
            out[base] = amount * 1000 if base == CPU else amount
    return Resources(out)
