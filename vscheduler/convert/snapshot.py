"""A stream of raw objects becomes one `ClusterSnapshot`.

Owns: which kinds a snapshot may hold (by apiVersion and kind), conversion order (PriorityClasses
first, then document order), duplicate detection, the implicit `default` queue and the implicit
jobs of pods without a PodGroup, leaving out the PodGroups of other schedulers (named only by
their pods: see `ownership`), and prefixing every error with the document it came from.
Must not: read files (see `files`), or treat a pod whose PodGroup or Queue is missing as an
error: as in a live cluster, the scheduler reports it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final, TypeVar

from vscheduler.convert.files import SourcedObject
from vscheduler.convert.hypernode import convert_hypernode
from vscheduler.convert.misc import (
    check_raw,
    convert_namespace,
    convert_node_usage,
    convert_priority_class,
)
from vscheduler.convert.node import convert_node
from vscheduler.convert.ownership import Claim, foreign_groups, group_claim
from vscheduler.convert.pdb import convert_budget
from vscheduler.convert.pod import PodConverter
from vscheduler.convert.podgroup import convert_podgroup
from vscheduler.convert.queue import convert_queue
from vscheduler.convert.reservation import read_book
from vscheduler.convert.resourcequota import convert_resource_quota
from vscheduler.convert.volumes import convert_claim, convert_class, convert_volume
from vscheduler.errors import InputError
from vscheduler.model.cluster import (
    DEFAULT_SCHEDULER_NAME,
    ClusterSnapshot,
    complete_jobs,
    default_queues,
)
from vscheduler.model.facts import (
    EPOCH,
    JobFacts,
    NodeFacts,
    NodeUsage,
    PriorityClassFacts,
    QueueFacts,
    TaskFacts,
)
from vscheduler.model.reservation import ReservationBook
from vscheduler.model.resourcequota import ResourceQuotaFacts
from vscheduler.model.selector import DisruptionBudget
from vscheduler.model.topology import HyperNodeFacts, build_topology
from vscheduler.model.volumes import ClaimFacts, StorageClassFacts, VolumeFacts

KINDS: Final[Mapping[str, str]] = {
    "Node": "v1",
    "Pod": "v1",
    "Namespace": "v1",
    "ConfigMap": "v1",
    "ResourceQuota": "v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "PodDisruptionBudget": "policy/v1",
    "PersistentVolumeClaim": "v1",
    "PersistentVolume": "v1",
    "StorageClass": "storage.k8s.io/v1",
    "PodGroup": "scheduling.volcano.sh/v1beta1",
    "Queue": "scheduling.volcano.sh/v1beta1",
    "HyperNode": "topology.volcano.sh/v1alpha1",
    "NodeUsage": "vscheduler.dev/v1alpha1",
}
"""Every kind a snapshot may hold, with its apiVersion."""

_T = TypeVar("_T")
_R = TypeVar("_R")
_NAMESPACED: Final = frozenset(
    {
        "Pod",
        "ConfigMap",
        "ResourceQuota",
        "PodDisruptionBudget",
        "PodGroup",
        "PersistentVolumeClaim",
    }
)


class _Builder:
    """The snapshot under construction: one pass over the documents, in order."""

    def __init__(self, scheduler_name: str, classes: Mapping[str, PriorityClassFacts]) -> None:
        self.scheduler_name = scheduler_name
        self.priority_classes = classes
        self.pods = PodConverter(priority_classes=classes, scheduler_name=scheduler_name)
        self.nodes: list[NodeFacts] = []
        self.tasks: dict[str, TaskFacts] = {}
        self.task_sources: dict[str, str] = {}
        self.jobs: dict[str, JobFacts] = {}
        self.claims: list[Claim | None] = []
        self.queues: dict[str, QueueFacts] = {}
        self.hypernodes: dict[str, HyperNodeFacts] = {}
        self.namespaces: list[str] = []
        self.usage: dict[str, NodeUsage] = {}
        self.budgets: list[DisruptionBudget] = []
        self.quotas: list[ResourceQuotaFacts] = []
        self.reservations: dict[str, ReservationBook] = {}
        self.volume_claims: dict[str, ClaimFacts] = {}
        self.volumes: dict[str, VolumeFacts] = {}
        self.storage_classes: dict[str, StorageClassFacts] = {}
        self.raw: dict[str, list[Mapping[str, object]]] = {
            "ResourceQuota": [],
            "PodDisruptionBudget": [],
            "ConfigMap": [],
        }
        self.handlers: Mapping[str, Callable[[SourcedObject], None]] = {
            "Node": self._node,
            "Pod": self._pod,
            "Namespace": self._namespace,
            "PodGroup": self._podgroup,
            "Queue": self._queue,
            "HyperNode": self._hypernode,
            "NodeUsage": self._node_usage,
            "PriorityClass": lambda _item: None,
            "ConfigMap": self._config_map,
            "ResourceQuota": self._quota,
            "PodDisruptionBudget": self._budget,
            "PersistentVolumeClaim": self._volume_claim,
            "PersistentVolume": self._volume,
            "StorageClass": self._storage_class,
        }

    def _node(self, item: SourcedObject) -> None:
        self.nodes.append(convert_node(item.obj))

    def _pod(self, item: SourcedObject) -> None:
        self.claims.append(group_claim(item.obj, self.scheduler_name))
        task = self.pods.convert(item.obj)
        if task is None:
            return
        if task.uid in self.tasks:
            other = self.tasks[task.uid]
            raise InputError(
                f"Pod {task.key}: metadata.uid: '{task.uid}' is also the uid of Pod {other.key}"
                f" ({self.task_sources[task.uid]})"
            )
        self.tasks[task.uid] = task
        self.task_sources[task.uid] = item.source

    def _volume_claim(self, item: SourcedObject) -> None:
        claim = convert_claim(item.obj)
        self.volume_claims[claim.key] = claim

    def _volume(self, item: SourcedObject) -> None:
        volume = convert_volume(item.obj)
        self.volumes[volume.name] = volume

    def _storage_class(self, item: SourcedObject) -> None:
        storage_class = convert_class(item.obj)
        self.storage_classes[storage_class.name] = storage_class

    def _namespace(self, item: SourcedObject) -> None:
        self.namespaces.append(convert_namespace(item.obj))

    def _podgroup(self, item: SourcedObject) -> None:
        job = convert_podgroup(item.obj, priority_classes=self.priority_classes)
        self.jobs[job.key] = job

    def _queue(self, item: SourcedObject) -> None:
        queue = convert_queue(item.obj)
        self.queues[queue.name] = queue

    def _hypernode(self, item: SourcedObject) -> None:
        hypernode = convert_hypernode(item.obj)
        self.hypernodes[hypernode.name] = hypernode

    def _node_usage(self, item: SourcedObject) -> None:
        usage = convert_node_usage(item.obj)
        self.usage[usage.node] = usage

    def _quota(self, item: SourcedObject) -> None:
        self.quotas.append(convert_resource_quota(item.obj))
        self.raw["ResourceQuota"].append(item.obj)

    def _budget(self, item: SourcedObject) -> None:
        self.budgets.append(convert_budget(item.obj))
        self.raw["PodDisruptionBudget"].append(item.obj)

    def _config_map(self, item: SourcedObject) -> None:
        self._raw(item)
        book = read_book(item.obj)
        self.reservations[book.key] = book

    def _raw(self, item: SourcedObject) -> None:
        kind = str(item.obj["kind"])
        check_raw(item.obj, kind, namespaced=kind in _NAMESPACED)
        self.raw[kind].append(item.obj)


def build_snapshot(
    objects: Sequence[SourcedObject],
    *,
    scheduler_name: str = DEFAULT_SCHEDULER_NAME,
    taken_at: dt.datetime = EPOCH,
) -> ClusterSnapshot:
    """The snapshot of `objects` (see `KINDS`), as `scheduler_name` sees the cluster.

    Nodes keep document order; tasks, jobs and queues are in document order too; HyperNodes
    are by name, and the tree they make is built once (`topology`). Raises `InputError`
    prefixed with the document's source (`cluster.yaml#3: Pod default/p1: ...`) for an
    unsupported kind, a malformed object or a duplicate one; a HyperNode whose spec cannot be
    read is not refused but kept with its `problem` (the tree leaves it out; `simulate` says
    so), as the running scheduler reports and skips it.
    """
    with _collector_paused():
        return _build(objects, scheduler_name, taken_at)


def _build(
    objects: Sequence[SourcedObject], scheduler_name: str, taken_at: dt.datetime
) -> ClusterSnapshot:
    seen: dict[tuple[str, str], str] = {}
    kinds = [_kind_of(item) for item in objects]
    classes: dict[str, PriorityClassFacts] = {}
    for item, kind in zip(objects, kinds, strict=True):
        if kind == "PriorityClass":
            pc = _at(item, convert_priority_class, item.obj)
            classes[pc.name] = pc
    builder = _Builder(scheduler_name, classes)
    for item, kind in zip(objects, kinds, strict=True):
        _check_unique(item, kind, seen)
        _at(item, builder.handlers[kind], item)
    foreign = foreign_groups(builder.claims)
    jobs = {key: job for key, job in builder.jobs.items() if key not in foreign}
    nodes = tuple(builder.nodes)
    hypernodes = tuple(builder.hypernodes[name] for name in sorted(builder.hypernodes))
    return ClusterSnapshot(
        nodes=nodes,
        tasks=builder.tasks,
        jobs=complete_jobs(builder.tasks, jobs),
        podgroups=tuple(jobs),
        queues=default_queues(builder.queues),
        priority_classes=classes,
        namespaces=tuple(builder.namespaces),
        usage=builder.usage,
        resource_quotas=tuple(builder.raw["ResourceQuota"]),
        quotas=tuple(builder.quotas),
        pod_disruption_budgets=tuple(builder.raw["PodDisruptionBudget"]),
        disruption_budgets=tuple(builder.budgets),
        claims=builder.volume_claims,
        volumes=builder.volumes,
        storage_classes=builder.storage_classes,
        config_maps=tuple(builder.raw["ConfigMap"]),
        reservations=builder.reservations,
        hypernodes=hypernodes,
        topology=build_topology(hypernodes, nodes),
        scheduler_name=scheduler_name,
        taken_at=taken_at,
    )


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while converting (restoring it after).

    Conversion creates no reference cycles, but allocates enough objects to trigger full
    collections that walk every raw object again and again: a third of the time at 50,000 pods.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _at(item: SourcedObject, convert: Callable[[_T], _R], arg: _T) -> _R:
    """`convert(arg)`, with any `InputError` prefixed by the document's source."""
    try:
        return convert(arg)
    except InputError as err:
        raise type(err)(f"{item.source}: {err}") from err


def _kind_of(item: SourcedObject) -> str:
    kind = item.obj.get("kind")
    api_version = item.obj.get("apiVersion")
    if not isinstance(kind, str) or kind not in KINDS:
        supported = ", ".join(sorted(KINDS))
        raise InputError(
            f"{item.source}: unsupported kind '{kind}' (apiVersion '{api_version}');"
            f" a snapshot holds {supported}"
        )
    if api_version != KINDS[kind]:
        raise InputError(
            f"{item.source}: {kind}: apiVersion must be '{KINDS[kind]}', got '{api_version}'"
        )
    return kind


def _check_unique(item: SourcedObject, kind: str, seen: dict[tuple[str, str], str]) -> None:
    """Raise if another document already held this kind, namespace and name.

    Malformed metadata is left for the converter to report.
    """
    meta = item.obj.get("metadata")
    if not isinstance(meta, Mapping):
        return
    name = meta.get("name")
    namespace = meta.get("namespace") or "default"
    if not isinstance(name, str) or not isinstance(namespace, str):
        return
    if kind in _NAMESPACED:
        name = f"{namespace}/{name}"
    first = seen.get((kind, name))
    if first is not None:
        raise InputError(f"{item.source}: duplicate {kind} {name} (first defined in {first})")
    seen[(kind, name)] = item.source
