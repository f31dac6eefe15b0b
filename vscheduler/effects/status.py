"""What to write back to the cluster, as differences from what it holds.

Owns: a pod's `status.nominatedNodeName` as written (`nominated_node`); the PodScheduled=False
condition (kube-scheduler's shape) and when it needs writing (its status or reason changed, or its
message's cause: `cause` reads a message with its counts left out, so a gang whose pods arrive one
by one, or a cluster whose node count moves, does not rewrite every pending pod's condition and post
an Event per pod per change of a count — one write and one Event per pod per change of cause); a
PodGroup status in Volcano's JSON field names and the merge patch from the current one (only the
fields that differ; a condition whose type, status, reason and message are unchanged keeps its old
transitionID and lastTransitionTime); the Events a PodGroup status change calls for; ObjectRefs of
raw objects.
Must not: call the API server, or raise on a malformed raw object (a malformed field reads as
absent, so writing repairs it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final, Literal

from vscheduler.cache.malformed import identity
from vscheduler.effects.ports import ObjectRef
from vscheduler.informer.kinds import CLUSTER_KINDS
from vscheduler.model.commands import PodGroupStatus
from vscheduler.model.facts import PodGroupCondition
from vscheduler.model.status import PodGroupPhase

Raw = Mapping[str, object]
EventType = Literal["Normal", "Warning"]
Event = tuple[EventType, str, str]
"""(type, reason, message)."""

POD_SCHEDULED: Final = "PodScheduled"
UNSCHEDULABLE: Final = "Unschedulable"
SCHEDULER_ERROR: Final = "SchedulerError"
"""The reason kube-scheduler gives a PodScheduled=False for an error, not a lack of fit (a
failed PreBind)."""
_COUNTS: Final = ("running", "succeeded", "failed")
COUNTS: Final = frozenset(_COUNTS)
"""The count fields of a PodGroup's status."""
_API_VERSIONS: Final = {kind.name: kind.api_version for kind in CLUSTER_KINDS} | {"ConfigMap": "v1"}
_NONE: Final[Mapping[object, object]] = {}


# --- pods ---------------------------------------------------------------------------------------
_COUNT: Final = re.compile(r"(?<![\w.-])\d+(?:\.\d+)?(?:[KMGTPE]i|[mkMGTPE])?(?![\w.-])")
"""A number standing alone (`3/10`, `0/3 nodes`, `cpu 16`) or an amount (`16Gi`, `500m`: a queue
refusal's figures move with every allocation), not part of a name (`node-1`)."""


def cause(message: str) -> str:
    """`message` with every count and amount replaced by `#`: two messages of one cause are
    equal."""
    return _COUNT.sub("#", message)


def pod_scheduled_condition(
    message: str, pod: Raw, now: str, *, reason: str = UNSCHEDULABLE
) -> dict[str, str] | None:
    """The PodScheduled=False condition (`reason`: Unschedulable, or SchedulerError) to write
    on `pod`, or None when the pod
    already carries it with a message of this cause (`cause`: only counts differ), has been
    placed meanwhile, or has a scheduling gate (the API server's SchedulingGated condition
    stays, as kube-scheduler leaves it). `lastTransitionTime` moves only when the condition's
    status does."""
    spec = pod.get("spec")
    if isinstance(spec, Mapping) and (spec.get("nodeName") or spec.get("schedulingGates")):
        return None  # placed meanwhile, or gated: the API server's SchedulingGated stays
    wanted = {"type": POD_SCHEDULED, "status": "False", "reason": reason, "message": message}
    current = _find(_status(pod).get("conditions"), POD_SCHEDULED)
    if current is not None and _same_cause(current, wanted):
        return None
    since = current.get("lastTransitionTime") if current is not None else None
    if current is None or current.get("status") != "False" or not isinstance(since, str):
        since = now
    wanted["lastTransitionTime"] = since
    return wanted


def nominated_node(pod: Raw) -> str | None:
    """The pod's `status.nominatedNodeName` as written (None: absent, empty or malformed)."""
    node = _status(pod).get("nominatedNodeName")
    return node if isinstance(node, str) and node else None


# --- PodGroups ----------------------------------------------------------------------------------
def podgroup_status_patch(status: PodGroupStatus, podgroup: Raw) -> dict[str, object]:
    """The merge patch of `podgroup`'s status to `status`: only what differs (empty: nothing)."""
    current = _status(podgroup)
    patch: dict[str, object] = {}
    if current.get("phase") != status.phase.value:
        patch["phase"] = status.phase.value
    old = current.get("conditions")
    conditions = merged_conditions(status.conditions, old)
    if conditions != ([] if old is None else old):
        patch["conditions"] = conditions
    for name in _COUNTS:
        value = getattr(status, name)
        if _count(current.get(name)) != value:
            patch[name] = value
    return patch


def merged_conditions(
    wanted: Sequence[PodGroupCondition], current: object
) -> list[dict[str, object]]:
    """`wanted` as JSON, each keeping the current condition of its type when only its
    transitionID or lastTransitionTime would change. An `Unschedulable=False` is left out
    where the PodGroup holds no `Unschedulable` condition: the gang plugin sets it only to
    clear a `True` one the session read, and a status written since (the merge patch that made
    the gang Running, decided before that `True` came back on the watch) replaced the
    conditions already."""
    out: list[dict[str, object]] = []
    for condition in wanted:
        old = _find(current, condition.type)
        if old is None and condition.type == UNSCHEDULABLE and condition.status == "False":
            continue
        if old is not None and _substance(old) == _facts_substance(condition):
            out.append({str(k): v for k, v in old.items()})
        else:
            out.append(condition_json(condition))
    return out


def condition_json(condition: PodGroupCondition) -> dict[str, object]:
    """A PodGroup condition in Volcano's JSON (empty optional fields left out)."""
    out: dict[str, object] = {"type": condition.type, "status": condition.status}
    for key, value in (
        ("transitionID", condition.transition_id),
        ("lastTransitionTime", condition.last_transition_time),
        ("reason", condition.reason),
        ("message", condition.message),
    ):
        if value:
            out[key] = value
    return out


def patch_substance(patch: Mapping[str, object]) -> object:
    """What a patch changes, leaving out condition times and transition ids (two cycles that
    want the same change produce the same substance)."""
    conditions = patch.get("conditions")
    shown: list[object] = []
    if isinstance(conditions, list):
        shown = [_substance(c) if isinstance(c, Mapping) else c for c in conditions]
    rest = tuple(sorted((k, repr(v)) for k, v in patch.items() if k != "conditions"))
    return rest, tuple(shown)


def podgroup_events(
    status: PodGroupStatus, podgroup: Raw, patch: Mapping[str, object]
) -> list[Event]:
    """The Events a status change calls for: Warning `Unschedulable` with the condition's message
    when the Unschedulable condition becomes true or its message's cause changes (the condition
    itself follows every count); Normal `Scheduled` when the PodGroup starts running (Volcano's
    reasons)."""
    events: list[Event] = []
    if "conditions" in patch:
        wanted = next((c for c in status.conditions if c.type == UNSCHEDULABLE), None)
        current = _find(_status(podgroup).get("conditions"), UNSCHEDULABLE)
        changed = current is None or _cause_of(_substance(current)) != _cause_of(
            _facts_substance(wanted)
        )
        if wanted is not None and wanted.status == "True" and changed:
            events.append(("Warning", UNSCHEDULABLE, wanted.message))
    if patch.get("phase") == PodGroupPhase.RUNNING.value:
        events.append(("Normal", "Scheduled", "pod group is ready"))
    return events


# --- references ---------------------------------------------------------------------------------
def object_ref(kind: str, obj: Raw) -> ObjectRef | None:
    """The ObjectRef of a raw object, or None when its metadata cannot name it."""
    who = identity(obj, namespaced=kind not in ("Node", "Queue", "Namespace", "PriorityClass"))
    if who is None:
        return None
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str) or not api_version:
        api_version = _API_VERSIONS.get(kind, "v1")
    return ObjectRef(kind, api_version, who.namespace, who.name, who.uid)


def pod_ref(key: str, uid: str) -> ObjectRef:
    """The ObjectRef of pod `namespace/name`."""
    namespace, _, name = key.partition("/")
    return ObjectRef("Pod", "v1", namespace, name, uid)


# --- reading raw objects ------------------------------------------------------------------------
_SUBSTANCE: Final = ("status", "reason", "message")


def _status(obj: Raw) -> Mapping[object, object]:
    status = obj.get("status")
    return status if isinstance(status, Mapping) else _NONE


def _find(conditions: object, type_: str) -> Mapping[object, object] | None:
    if not isinstance(conditions, list):
        return None
    for condition in conditions:
        if isinstance(condition, Mapping) and condition.get("type") == type_:
            return condition
    return None


def _same_cause(current: Mapping[object, object], wanted: Mapping[str, str]) -> bool:
    if any(current.get(k) != wanted[k] for k in ("status", "reason")):
        return False
    message = current.get("message")
    return isinstance(message, str) and cause(message) == cause(wanted["message"])


def _substance(condition: Mapping[object, object]) -> tuple[object, ...]:
    return tuple(condition.get(key) or "" for key in ("type", *_SUBSTANCE))


def _facts_substance(condition: PodGroupCondition | None) -> tuple[object, ...]:
    if condition is None:
        return ()
    return (condition.type, condition.status, condition.reason, condition.message)


def _cause_of(substance: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(cause(v) if isinstance(v, str) else v for v in substance)


def _count(value: object) -> int:
    """A count as written (absent is 0; anything but an integer is -1, so it is rewritten)."""
    if value is None:
        return 0
    return value if type(value) is int else -1
