"""A raw `scheduling.volcano.sh/v1beta1` PodGroup becomes a `JobFacts`.

Owns: the PodGroup's gang (`minMember`, default 1; `minTaskMember`, where the key "" counts
the pods without a task role, as in Volcano), `minResources`, queue (default `default`), priority
(from `priorityClassName`, as for pods), whether it opts out of the gang-aware actions'
evictions (`volcano.sh/preemptable`, annotation else label, as on a pod), its task topology
(`convert.tasktopology`), phase (default Pending) and conditions (any `type`, as the CRD allows),
with Volcano's field names; whether a controller owns it (`controlled`).
Must not: look at the PodGroup's pods or check that its queue exists (the scheduler reports it).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Final

from vscheduler.convert.fields import (
    INT32_MAX,
    Raw,
    as_mapping,
    checked_int,
    choice,
    controller_owner,
    crd_resources,
    error,
    integer,
    is_int,
    items,
    mapping,
    read_meta,
    show,
    string,
    timestamp,
)
from vscheduler.convert.misc import resolve_priority
from vscheduler.convert.pod import preemptable_flags
from vscheduler.convert.tasktopology import task_topology
from vscheduler.model.facts import (
    HARD_TOPOLOGY,
    SOFT_TOPOLOGY,
    UNUSUAL_VALUE,
    FieldWarning,
    JobFacts,
    NetworkTopology,
    PodGroupCondition,
    PriorityClassFacts,
)
from vscheduler.model.status import PodGroupPhase

_PHASES: Final = tuple(phase.value for phase in PodGroupPhase)


def convert_podgroup(
    obj: Mapping[str, object], *, priority_classes: Mapping[str, PriorityClassFacts]
) -> JobFacts:
    """The job of a raw PodGroup."""
    meta = read_meta(obj, "PodGroup", namespaced=True)
    label = meta.label
    spec = mapping(obj, "spec", label, "")
    status = mapping(obj, "status", label, "")
    min_resources = spec.get("minResources")
    class_name = string(spec, "priorityClassName", label, "spec")
    priority, _ = resolve_priority(class_name, priority_classes)
    warnings: list[FieldWarning] = []
    min_member = _min_member(spec, label, warnings)
    min_task_member = _min_task_member(spec, label, warnings)
    topology, topology_warnings = task_topology(meta.annotations, label)
    warnings.extend(topology_warnings)
    return JobFacts(
        uid=meta.uid,
        namespace=meta.namespace,
        name=meta.name,
        queue=string(spec, "queue", label, "spec") or "default",
        min_member=min_member,
        min_task_member=min_task_member,
        min_resources=None
        if min_resources is None
        else crd_resources(min_resources, f"{label}: spec.minResources", warnings),
        priority_class_name=class_name,
        priority=priority,
        phase=PodGroupPhase(choice(status, "phase", label, "status", _PHASES, "Pending")),
        conditions=_conditions(status, label),
        created=meta.created,
        annotations=meta.annotations,
        task_topology=topology,
        preemption_opt_out=preemptable_flags(meta.annotations, meta.labels)[1],
        network_topology=_network_topology(spec, label, warnings),
        controlled=bool(controller_owner(obj, label)),
        warnings=tuple(warnings),
    )


def _network_topology(
    spec: Raw, label: str, warnings: list[FieldWarning]
) -> NetworkTopology | None:
    """`spec.networkTopology` (None without one): `mode` (default hard, as the CRD defaults
    it), `highestTierAllowed`, `highestTierName`. What Volcano's CRD or webhook refuses is read
    as its scheduler reads it, with a warning: another mode (no constraint), both tier fields
    (`highestTierAllowed` wins), a negative tier (no HyperNode is that low: a hard job waits);
    so is a hard mode naming no tier, which constrains nothing in Volcano. `spec.subGroupPolicy`
    (sub-groups) is not provided: warned about, the PodGroup is placed as one group."""
    if spec.get("subGroupPolicy") is not None:
        warnings.append(
            FieldWarning(
                UNUSUAL_VALUE,
                f"{label}: spec.subGroupPolicy: sub-groups are not provided by vscheduler; the"
                " PodGroup is scheduled as one group (its networkTopology, if any, applies to"
                " all of its pods)",
            )
        )
    raw = spec.get("networkTopology")
    if raw is None:
        return None
    path = "spec.networkTopology"
    topology = as_mapping(raw, label, path)
    mode = string(topology, "mode", label, path) or HARD_TOPOLOGY
    tier_value = topology.get("highestTierAllowed")
    tier = (
        None
        if tier_value is None
        else checked_int(
            tier_value,
            label,
            f"{path}.highestTierAllowed",
            minimum=-INT32_MAX - 1,
            maximum=INT32_MAX,
        )
    )
    name = string(topology, "highestTierName", label, path)

    def warn(where: str, text: str) -> None:
        warnings.append(FieldWarning(UNUSUAL_VALUE, f"{label}: {path}{where}: {text}"))

    if mode not in (HARD_TOPOLOGY, SOFT_TOPOLOGY):
        warn(
            ".mode",
            f"{show(mode)} is neither hard nor soft; the job is placed with no network-topology"
            " constraint, as Volcano reads it",
        )
    if tier is not None and name:
        warn(
            "",
            "highestTierAllowed and highestTierName are both set (Volcano's webhook refuses"
            " it); highestTierAllowed is read",
        )
    if tier is not None and tier < 0:
        warn(
            ".highestTierAllowed",
            f"{tier} is below 0 (Volcano's CRD refuses it); no HyperNode is that low, so a hard"
            " job waits",
        )
    if mode == HARD_TOPOLOGY and tier is None and not name:
        warn(
            "",
            "mode hard names no highestTierAllowed or highestTierName; it constrains nothing, as"
            " Volcano reads it",
        )
    return NetworkTopology(mode=mode, highest_tier=tier, highest_tier_name=name)


def _min_member(spec: Raw, label: str, warnings: list[FieldWarning]) -> int:
    """`spec.minMember`, default 1. A negative one (Volcano's CRDs before 1.14 set no minimum)
    is read as 0, with a warning: a job with no gang, as Volcano's checks treat it."""
    value = spec.get("minMember")
    if not is_int(value, -INT32_MAX - 1, -1):
        return integer(spec, "minMember", label, "spec", 1, minimum=0, maximum=INT32_MAX)
    message = f"{label}: spec.minMember: {value} is negative; it is read as 0 (no gang)"
    warnings.append(FieldWarning(UNUSUAL_VALUE, message))
    return 0


def _min_task_member(spec: Raw, label: str, warnings: list[FieldWarning]) -> dict[str, int]:
    """Each task role's minimum, as Volcano reads it (`ParseMinMemberInfo`): the key "" is the
    pods without a role; a negative minimum (int32, as the CRD allows) is kept, with a warning:
    it requires nothing and lowers the sum that minMember is compared with."""
    raw = mapping(spec, "minTaskMember", label, "spec")
    out: dict[str, int] = {}
    for key, value in raw.items():
        task: object = key
        if not isinstance(task, str):
            raise error(
                label, "spec.minTaskMember", f"task names must be strings, got {show(task)}"
            )
        path = f"spec.minTaskMember.{task}" if task else 'spec.minTaskMember[""]'
        out[task] = checked_int(value, label, path, minimum=-INT32_MAX - 1, maximum=INT32_MAX)
        if out[task] < 0:
            message = (
                f"{label}: {path}: {out[task]} is negative: no pod of the task is required,"
                " and the tasks' sum that minMember is compared with is lowered (as Volcano"
                " reads it)"
            )
            warnings.append(FieldWarning(UNUSUAL_VALUE, message))
    return out


def _conditions(status: Raw, label: str) -> tuple[PodGroupCondition, ...]:
    out = []
    for i, raw in enumerate(items(status, "conditions", label, "status")):
        path = f"status.conditions[{i}]"
        cond = as_mapping(raw, label, path)
        out.append(
            PodGroupCondition(
                type=string(cond, "type", label, path),
                status=string(cond, "status", label, path),
                reason=string(cond, "reason", label, path),
                message=string(cond, "message", label, path),
                transition_id=string(cond, "transitionID", label, path),
                last_transition_time=_time_text(cond.get("lastTransitionTime"), label, path),
            )
        )
    return tuple(out)


def _time_text(value: object, label: str, path: str) -> str:
    """A condition's time, checked, kept as RFC3339 text ("" when absent)."""
    if value is None:
        return ""
    when = timestamp(value, label, f"{path}.lastTransitionTime")
    if isinstance(value, str):
        return value
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
