"""A PodGroup's task topology (the task-topology plugin's facts): its three annotations.

Owns: reading `volcano.sh/task-topology-affinity` and `volcano.sh/task-topology-anti-affinity`
(groups of task roles: `;` between groups, `,` within one) and `volcano.sh/task-topology-task-order`
(roles, `,`-separated) as Volcano's `readTopologyFromPgAnnotations` splits them: nothing trimmed,
empty names kept (`ps,,worker;` names `ps`, `""`, `worker`, then `""`: an empty name names no
pod); the warnings on the PodGroup, naming the annotation: a role repeated within one group
(Volcano then ignores the job's whole topology, so it is read as absent), and a name no label can
hold (`ps worker`, `ps|worker`: likely another separator than `,` and `;`; read as written).
Must not: look at the job's pods (the plugin checks, each session, that every role named has a
pod: Volcano ignores the topology of a job that names a role none of its pods has).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from vscheduler.model.facts import UNUSUAL_VALUE, FieldWarning, TaskTopology

AFFINITY_KEY: Final = "volcano.sh/task-topology-affinity"
"""Volcano's `JobAffinityAnnotations`."""
ANTI_AFFINITY_KEY: Final = "volcano.sh/task-topology-anti-affinity"
"""Volcano's `JobAntiAffinityAnnotations`."""
TASK_ORDER_KEY: Final = "volcano.sh/task-topology-task-order"
"""Volcano's `TaskOrderAnnotations`."""
_LABEL_VALUE: Final = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")
"""A label value (what a `volcano.sh/task-spec` label may hold)."""


def task_topology(
    annotations: Mapping[str, str], label: str
) -> tuple[TaskTopology | None, tuple[FieldWarning, ...]]:
    """The PodGroup's task topology (None when it has none of the three annotations, or when a
    role is repeated within one group) and the warnings."""
    affinity = annotations.get(AFFINITY_KEY)
    anti = annotations.get(ANTI_AFFINITY_KEY)
    order = annotations.get(TASK_ORDER_KEY)
    if affinity is None and anti is None and order is None:
        return None, ()
    read: dict[str, tuple[tuple[str, ...], ...]] = {}
    warnings: list[FieldWarning] = []
    repeated = False
    for key, value, separator in (
        (AFFINITY_KEY, affinity, ";"),
        (ANTI_AFFINITY_KEY, anti, ";"),
        (TASK_ORDER_KEY, order, None),
    ):
        if value is None:
            continue
        groups = _split(value, separator)
        read[key] = groups
        where = f"{label}: metadata.annotations[{key}]: {_short(value)}"
        twice = _repeated(groups)
        if twice is not None:
            repeated = True
            message = (
                f"{where} names {twice!r} twice in one group; the job's task topology is"
                " ignored, as Volcano ignores it"
            )
            warnings.append(FieldWarning(UNUSUAL_VALUE, message))
        odd = sorted({r for g in groups for r in g if not _LABEL_VALUE.fullmatch(r)})
        if odd:
            names = ", ".join(repr(r) for r in odd[:3]) + (", ..." if len(odd) > 3 else "")
            message = (
                f"{where} names {names}, which no label can hold (roles are separated by ','"
                " and groups by ';'); read as written, as Volcano reads it: unless a pod of"
                " the job has that role, the job's task topology is ignored"
            )
            warnings.append(FieldWarning(UNUSUAL_VALUE, message))
    if repeated:
        return None, tuple(warnings)
    topology = TaskTopology(
        affinity=read.get(AFFINITY_KEY, ()),
        anti_affinity=read.get(ANTI_AFFINITY_KEY, ()),
        order=read[TASK_ORDER_KEY][0] if TASK_ORDER_KEY in read else (),
    )
    return topology, tuple(warnings)


def _split(value: str, separator: str | None) -> tuple[tuple[str, ...], ...]:
    """Go's `strings.Split` by `separator` (None: one group), then each part by `,`."""
    parts = value.split(separator) if separator is not None else [value]
    return tuple(tuple(part.split(",")) for part in parts)


def _repeated(groups: tuple[tuple[str, ...], ...]) -> str | None:
    """The first role named twice within one group (the empty name may repeat), or None."""
    for group in groups:
        seen: set[str] = set()
        for role in group:
            if role in seen:
                return role
            if role:
                seen.add(role)
    return None


def _short(text: str) -> str:
    """The value, quoted, cut to a readable length."""
    return f"'{text}'" if len(text) <= 80 else f"'{text[:77]}...'"
