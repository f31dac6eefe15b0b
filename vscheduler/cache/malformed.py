"""Identity and minimal facts for objects the converters reject, so nothing malformed is lost.

Owns: reading an object's identity (name, namespace, uid) without raising, and building the
minimal `TaskFacts` / `JobFacts` that carry a converter's message in `problem`: a malformed pod
of this scheduler is then reported unschedulable with that message, a malformed PodGroup's pods
are reported with it. Every field is read defensively: a malformed value is skipped.
Must not: raise, judge validity (the converters do), or guess resources (a malformed pod
requests nothing).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import Final

from vscheduler.convert.fields import timestamp
from vscheduler.convert.pod import DEFAULT_SCHEDULER, GROUP_NAME_KEYS
from vscheduler.errors import InputError
from vscheduler.model.cluster import lone_job_name
from vscheduler.model.facts import EPOCH, JobFacts, PodGroupCondition, TaskFacts
from vscheduler.model.resources import EMPTY
from vscheduler.model.status import PodGroupPhase, TaskStatus

_POD_PHASES: Final = frozenset({"Pending", "Running", "Succeeded", "Failed", "Unknown"})
_GROUP_PHASES: Final = frozenset(phase.value for phase in PodGroupPhase)
_NO_MAP: Final[Mapping[object, object]] = {}


@dataclasses.dataclass(frozen=True, slots=True)
class Identity:
    """Who an object is, read without judging the rest of it."""

    name: str
    namespace: str
    """Empty for a cluster-scoped object."""
    uid: str
    """`metadata.uid`, or the key when it has none (as the converters do)."""

    @property
    def key(self) -> str:
        """`namespace/name`, or `name` when cluster-scoped."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def identity(obj: Mapping[str, object], *, namespaced: bool) -> Identity | None:
    """The object's identity, or None when its metadata cannot name it."""
    meta = _map(obj.get("metadata"))
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return None
    namespace = ""
    if namespaced:
        raw_namespace = meta.get("namespace") or "default"
        if not isinstance(raw_namespace, str):
            return None
        namespace = raw_namespace
    key = f"{namespace}/{name}" if namespace else name
    uid = meta.get("uid")
    return Identity(name, namespace, uid if isinstance(uid, str) and uid else key)


def malformed_task(
    obj: Mapping[str, object], who: Identity, problem: str, *, scheduler_name: str
) -> TaskFacts | None:
    """A task carrying `problem`, requesting nothing; None when the pod does not matter here.

    Relevance follows the converter: a pod of another scheduler matters only while it occupies
    a node, and a pod deleted before it was placed not at all. A pod on a node keeps its node
    and status (so it is never reported unschedulable); a pod to place stays Pending.
    """
    meta, spec, status = _map(obj.get("metadata")), _map(obj.get("spec")), _map(obj.get("status"))
    scheduler = _text(spec.get("schedulerName")) or DEFAULT_SCHEDULER
    node = _text(spec.get("nodeName")) or None
    phase = _text(status.get("phase"))
    phase = phase if phase in _POD_PHASES else "Pending"
    ours = scheduler == scheduler_name
    if not ours and (node is None or phase in ("Succeeded", "Failed")):
        return None
    task_status = _task_status(phase, node, deleting=meta.get("deletionTimestamp") is not None)
    if task_status is None:
        return None
    annotations = _strings(meta.get("annotations"))
    job, group = _job(who, annotations) if ours else ("", None)
    return TaskFacts(
        uid=who.uid,
        namespace=who.namespace,
        name=who.name,
        job=job,
        group_name=group,
        resreq=EMPTY,
        status=task_status,
        node_name=node,
        scheduler_name=scheduler,
        created=_created(meta),
        labels=_strings(meta.get("labels")),
        annotations=annotations,
        problem=problem,
    )


def malformed_job(obj: Mapping[str, object], who: Identity, problem: str) -> JobFacts:
    """The job of a PodGroup the converter rejected, carrying `problem`.

    Queue, gang size, phase and conditions are kept when readable, so the job's status is
    reported as it stands and its pods name the problem.
    """
    meta, spec, status = _map(obj.get("metadata")), _map(obj.get("spec")), _map(obj.get("status"))
    min_member = spec.get("minMember")
    phase = _text(status.get("phase"))
    return JobFacts(
        uid=who.uid,
        namespace=who.namespace,
        name=who.name,
        queue=_text(spec.get("queue")) or "default",
        min_member=max(min_member, 0) if type(min_member) is int else 1,
        phase=PodGroupPhase(phase) if phase in _GROUP_PHASES else PodGroupPhase.PENDING,
        conditions=_conditions(status.get("conditions")),
        created=_created(meta),
        annotations=_strings(meta.get("annotations")),
        problem=problem,
    )


def _task_status(phase: str, node: str | None, *, deleting: bool) -> TaskStatus | None:
    if deleting and phase in ("Pending", "Running"):
        return TaskStatus.RELEASING if node else None
    if phase == "Pending":
        return TaskStatus.BOUND if node else TaskStatus.PENDING
    return TaskStatus(phase)


def _job(who: Identity, annotations: Mapping[str, str]) -> tuple[str, str | None]:
    for key in GROUP_NAME_KEYS:
        group = annotations.get(key)
        if group:
            return f"{who.namespace}/{group}", group
    return f"{who.namespace}/{lone_job_name(who.uid)}", None


def _conditions(raw: object) -> tuple[PodGroupCondition, ...]:
    """The readable conditions (a mapping with a string `type`); the rest are skipped."""
    if not isinstance(raw, list):
        return ()
    out = []
    for item in raw:
        cond = _map(item)
        kind = _text(cond.get("type"))
        if kind:
            out.append(
                PodGroupCondition(
                    type=kind,
                    status=_text(cond.get("status")),
                    reason=_text(cond.get("reason")),
                    message=_text(cond.get("message")),
                    transition_id=_text(cond.get("transitionID")),
                    last_transition_time=_text(cond.get("lastTransitionTime")),
                )
            )
    return tuple(out)


def _created(meta: Mapping[object, object]) -> dt.datetime:
    try:
        return timestamp(meta.get("creationTimestamp"), "", "")
    except InputError:
        return EPOCH


def _map(value: object) -> Mapping[object, object]:
    return value if isinstance(value, Mapping) else _NO_MAP


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _strings(value: object) -> dict[str, str]:
    """The string-to-string entries of a mapping (labels, annotations); others are skipped."""
    return {k: v for k, v in _map(value).items() if isinstance(k, str) and isinstance(v, str)}
