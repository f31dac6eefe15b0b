"""One raw object of a watched kind becomes its facts (or none) and its problem (or none).

Owns: which converter serves each kind the cache holds; what a converter's `InputError` turns
into (a malformed pod of this scheduler or PodGroup: minimal facts carrying the message; any
other malformed object: left out); any other exception a converter raises on one object is
treated the same way, as that object's problem (`Kind ns/name: cannot be read: Type: message`,
logged with its traceback), so one odd object never stops a watch; the converters' shared
context (scheduler name, priority classes), renewed whenever the priority classes change.
Must not: raise on bad input, store anything, or lock (a `Converters` is used by one thread at
a time: the cache's, under its lock, or a relist's own).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Final, Generic, TypeVar

from vscheduler.cache.malformed import Identity, malformed_job, malformed_task
from vscheduler.convert.hypernode import convert_hypernode
from vscheduler.convert.misc import check_raw, convert_namespace, convert_priority_class
from vscheduler.convert.node import convert_node
from vscheduler.convert.pod import UNREAD, PodConverter, Unread
from vscheduler.convert.podgroup import convert_podgroup
from vscheduler.convert.queue import convert_queue
from vscheduler.errors import InputError
from vscheduler.model.facts import JobFacts, NodeFacts, PriorityClassFacts, QueueFacts, TaskFacts
from vscheduler.model.topology import HyperNodeFacts

Raw = Mapping[str, object]
F = TypeVar("F")
logger = logging.getLogger(__name__)

KEPT_RAW: Final = ("ResourceQuota", "PodDisruptionBudget", "ConfigMap")
"""Kinds the snapshot carries as raw objects (checked for readable metadata only)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Converted(Generic[F]):
    """What became of one object: its facts (None: left out or irrelevant) and its problem."""

    facts: F | None
    problem: str = ""


class Converters:
    """The converters of one generation of priority classes."""

    __slots__ = ("classes", "pods", "scheduler_name")

    def __init__(self, scheduler_name: str, classes: Mapping[str, PriorityClassFacts]) -> None:
        self.scheduler_name = scheduler_name
        self.classes = classes
        self.pods = PodConverter(priority_classes=classes, scheduler_name=scheduler_name)

    def pod(self, obj: Raw, who: Identity) -> Converted[TaskFacts]:
        """A malformed pod of this scheduler (or on a node) keeps minimal facts; an irrelevant
        one, malformed or not, has no facts and no problem."""
        try:
            return Converted(self.pods.convert(obj))
        except Exception as exc:
            problem = _problem("Pod", who, exc)
            task = malformed_task(obj, who, problem, scheduler_name=self.scheduler_name)
            return Converted(task, problem if task is not None else "")

    def pod_update(
        self, held: Raw | None, facts: TaskFacts | None, obj: Raw, who: Identity
    ) -> Converted[TaskFacts]:
        """`pod(obj)`, read from the facts of the pod as held when only its status changed
        (`PodConverter.restatused`); held facts with a problem are never reused."""
        if held is not None and facts is not None and not facts.problem:
            try:
                read = self.pods.restatused(held, facts, obj)
            except Exception:  # the full conversion says what is wrong
                read = UNREAD
            if not isinstance(read, Unread):
                return Converted(read)
        return self.pod(obj, who)

    def podgroup(self, obj: Raw, who: Identity) -> Converted[JobFacts]:
        """A malformed PodGroup keeps minimal facts carrying the problem."""
        try:
            return Converted(convert_podgroup(obj, priority_classes=self.classes))
        except Exception as exc:
            problem = _problem("PodGroup", who, exc)
            return Converted(malformed_job(obj, who, problem), problem)

    def node(self, obj: Raw, who: Identity) -> Converted[NodeFacts]:
        """A malformed node is left out."""
        return _left_out_on_error(convert_node, obj, "Node", who)

    def queue(self, obj: Raw, who: Identity) -> Converted[QueueFacts]:
        """A malformed queue is kept as a queue carrying its problem (its jobs are told)."""
        try:
            return Converted(convert_queue(obj))
        except Exception as exc:
            problem = _problem("Queue", who, exc)
            return Converted(QueueFacts(name=who.name, uid=who.uid, problem=problem), problem)

    def hypernode(self, obj: Raw, who: Identity) -> Converted[HyperNodeFacts]:
        """A HyperNode whose spec cannot be read is kept carrying its problem (the tree leaves
        it out; its problem is reported)."""
        try:
            facts = convert_hypernode(obj)
        except Exception as exc:
            problem = _problem("HyperNode", who, exc)
            return Converted(HyperNodeFacts(name=who.name, problem=problem), problem)
        return Converted(facts, facts.problem)

    def priority_class(self, obj: Raw, who: Identity) -> Converted[PriorityClassFacts]:
        """A malformed PriorityClass is left out."""
        return _left_out_on_error(convert_priority_class, obj, "PriorityClass", who)

    def namespace(self, obj: Raw, who: Identity) -> Converted[str]:
        """A Namespace is its name."""
        return _left_out_on_error(convert_namespace, obj, "Namespace", who)


ConvertFn = Callable[[Converters, Raw, Identity], Converted[F]]
"""A kind's converter, given the current `Converters`."""


_KEPT_STATUS: Final = ("phase", "startTime", "nominatedNodeName")
_SCHEDULED: Final = "PodScheduled"


def kept_pod(obj: Raw) -> Raw:
    """What the cache keeps of a pod's object: what is read of it again, no more.

    Its metadata but `managedFields` and its spec (both for `PodConverter.restatused`, and the
    metadata for references); of its status what `PodConverter.convert` reads (`phase`,
    `startTime`, `nominatedNodeName`, and the PodScheduled conditions, whose time cdp reads:
    pods are converted again from what is kept when priority classes change) and, while it is
    not placed, every condition (the effects compare with them before writing PodScheduled).
    The rest of the status and the managed fields were most of a placed pod's containers: held for
    every pod, they were scanned by the cyclic collector again and again. An object whose metadata
    or status is not an object is kept whole (its problem is read from it)."""
    meta, status, spec = obj.get("metadata"), obj.get("status", {}), obj.get("spec")
    if type(meta) is not dict or type(status) is not dict:
        return obj
    if "managedFields" in meta:
        meta = meta.copy()  # a copy and a del: a seventh of a comprehension's time
        del meta["managedFields"]
    kept = {k: status[k] for k in _KEPT_STATUS if k in status}
    conditions = status.get("conditions")
    if conditions is not None:
        if not (type(spec) is dict and spec.get("nodeName")):
            kept["conditions"] = conditions
        elif type(conditions) is list:
            scheduled = [c for c in conditions if type(c) is dict and c.get("type") == _SCHEDULED]
            if scheduled:
                kept["conditions"] = scheduled
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": meta,
        "spec": spec,
        "status": kept,
    }


def kept_raw(kind: str, *, namespaced: bool) -> ConvertFn[Raw]:
    """The converter of a kind kept raw: the object itself, once its metadata reads."""

    def check(_conv: Converters, obj: Raw, who: Identity) -> Converted[Raw]:
        try:
            check_raw(obj, kind, namespaced=namespaced)
        except Exception as exc:
            return Converted(None, _problem(kind, who, exc))
        return Converted(obj)

    return check


def _left_out_on_error(
    convert: Callable[[Raw], F], obj: Raw, kind: str, who: Identity
) -> Converted[F]:
    try:
        return Converted(convert(obj))
    except Exception as exc:
        return Converted(None, _problem(kind, who, exc))


def _problem(kind: str, who: Identity, exc: Exception) -> str:
    """The converter's message for an `InputError`; for any other exception (a converter that
    cannot handle this object), a message naming the object, logged with its traceback."""
    if isinstance(exc, InputError):
        return str(exc)
    logger.error("cannot convert %s %s", kind, who.key, exc_info=exc)
    return f"{kind} {who.key}: cannot be read: {type(exc).__name__}: {exc}"
