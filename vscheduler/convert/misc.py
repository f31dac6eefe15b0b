"""The small kinds: PriorityClass, Namespace, NodeUsage, and the objects kept raw.

Owns: converting `scheduling.k8s.io/v1` PriorityClass, `v1` Namespace and
`vscheduler.dev/v1alpha1` NodeUsage; choosing the global default PriorityClass; checking the
kinds kept raw for later plugins (ConfigMap, ResourceQuota, PodDisruptionBudget).
Must not: do I/O, or resolve a pod's priority (the pod converter does, with these facts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from vscheduler.convert.fields import (
    Raw,
    as_mapping,
    boolean,
    choice,
    error,
    integer,
    items,
    mapping,
    read_meta,
    show,
    timestamp,
)
from vscheduler.model.facts import NodeUsage, PriorityClassFacts

PREEMPTION_POLICIES: Final = ("PreemptLowerPriority", "Never")
"""The values of `preemptionPolicy`, on a PriorityClass or a pod's spec."""
_MAX_PRIORITY: Final = 2_000_001_000
"""The highest value Kubernetes allows (system-node-critical)."""


def convert_priority_class(obj: Raw) -> PriorityClassFacts:
    """A `scheduling.k8s.io/v1` PriorityClass: value (required), globalDefault, preemptionPolicy."""
    meta = read_meta(obj, "PriorityClass", namespaced=False)
    if obj.get("value") is None:
        raise error(meta.label, "value", "is required")
    value = integer(obj, "value", meta.label, "", 0, minimum=-(2**31), maximum=_MAX_PRIORITY)
    global_default = obj.get("globalDefault", False)
    if not isinstance(global_default, bool):
        raise error(
            meta.label, "globalDefault", f"must be true or false, got {show(global_default)}"
        )
    policy = choice(
        obj, "preemptionPolicy", meta.label, "", PREEMPTION_POLICIES, "PreemptLowerPriority"
    )
    return PriorityClassFacts(
        name=meta.name, value=value, global_default=global_default, preemption_policy=policy
    )


def default_priority_class(
    classes: Mapping[str, PriorityClassFacts],
) -> PriorityClassFacts | None:
    """The global default class; of several, the lowest value (then name), as admission picks."""
    defaults = [pc for pc in classes.values() if pc.global_default]
    return min(defaults, key=lambda pc: (pc.value, pc.name)) if defaults else None


def resolve_priority(class_name: str, classes: Mapping[str, PriorityClassFacts]) -> tuple[int, str]:
    """(value, class name) for a named class, else the global default's, else (0, name)."""
    named = classes.get(class_name) if class_name else None
    if named is not None:
        return named.value, class_name
    default = default_priority_class(classes)
    if default is None:
        return 0, class_name
    return default.value, class_name or default.name


def convert_namespace(obj: Raw) -> str:
    """A `v1` Namespace: its name."""
    return read_meta(obj, "Namespace", namespaced=False).name


def convert_node_usage(obj: Raw) -> NodeUsage:
    """A `vscheduler.dev/v1alpha1` NodeUsage: percent used by resource and period.

    `metadata.name` is the node; `usage: {cpu: {"10m": 41.5}}` holds percents from 0 to 100;
    `metricsTime` (RFC3339) is required. Optional: `stale: true` (the latest collection failed)
    and `history`, earlier consecutive collections shaped like `usage`, oldest first.
    """
    meta = read_meta(obj, "NodeUsage", namespaced=False)
    usage = _usage_map(mapping(obj, "usage", meta.label, ""), meta.label, "usage")
    history = tuple(
        _usage_map(as_mapping(entry, meta.label, f"history[{i}]"), meta.label, f"history[{i}]")
        for i, entry in enumerate(items(obj, "history", meta.label, ""))
    )
    if obj.get("metricsTime") is None:
        raise error(meta.label, "metricsTime", "is required")
    when = timestamp(obj["metricsTime"], meta.label, "metricsTime")
    stale = boolean(obj, "stale", meta.label, "", default=False)
    return NodeUsage(node=meta.name, usage=usage, metrics_time=when, stale=stale, history=history)


def _usage_map(raw: Raw, label: str, where: str) -> dict[str, dict[str, float]]:
    usage: dict[str, dict[str, float]] = {}
    for resource, periods in raw.items():
        path = f"{where}.{resource}"
        if not isinstance(periods, Mapping):
            raise error(label, path, f"must be a mapping of period to percent, got {show(periods)}")
        usage[str(resource)] = {
            str(period): _percent(value, label, f"{path}.{period}")
            for period, value in periods.items()
        }
    return usage


def _percent(value: object, label: str, path: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 100:
        return float(value)
    raise error(label, path, f"must be a percent from 0 to 100, got {show(value)}")


def check_raw(obj: Raw, kind: str, *, namespaced: bool) -> str:
    """The `namespace/name` (or name) of an object kept raw, after checking its metadata."""
    meta = read_meta(obj, kind, namespaced=namespaced)
    return f"{meta.namespace}/{meta.name}" if namespaced else meta.name
