"""ClusterSnapshot: one consistent, read-only view of the cluster for one cycle."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Reversible, Set as AbstractSet

from vscheduler.model.compact import compacted
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
from vscheduler.model.status import PodGroupPhase
from vscheduler.model.topology import NO_TOPOLOGY, HyperNodeFacts, Topology
from vscheduler.model.volumes import ClaimFacts, StorageClassFacts, VolumeFacts

DEFAULT_SCHEDULER_NAME = "vscheduler"
DEFAULT_QUEUE = "default"


@dataclasses.dataclass(frozen=True, slots=True)
class TaskChanges:
    """Which tasks may differ from an earlier snapshot's: every uid whose facts object in this
    snapshot is not the very one the snapshot numbered `since` held (came, changed, gone, or
    shown otherwise by an assumption), perhaps with some that did not change. A session that
    opened on snapshot `since` reads only these instead of comparing every task."""

    since: int
    uids: frozenset[str]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClusterSnapshot:
    """Everything a session reads. Maps are insertion-ordered deterministically.

    `tasks` holds every pod that matters: the ones this scheduler must place (pending, ours)
    and every pod that occupies a node (of any scheduler). A task whose `job` is not a key of
    `jobs` either occupies a node only (a foreign pod, job "") or names a missing PodGroup.
    """

    nodes: tuple[NodeFacts, ...] = ()
    tasks: Mapping[str, TaskFacts] = dataclasses.field(default_factory=dict)
    jobs: Mapping[str, JobFacts] = dataclasses.field(default_factory=dict)
    queues: Mapping[str, QueueFacts] = dataclasses.field(default_factory=dict)
    priority_classes: Mapping[str, PriorityClassFacts] = dataclasses.field(default_factory=dict)
    namespaces: tuple[str, ...] = ()
    usage: Mapping[str, NodeUsage] = dataclasses.field(default_factory=dict)
    resource_quotas: tuple[Mapping[str, object], ...] = ()
    """Raw `v1` ResourceQuota objects, as watched."""
    quotas: tuple[ResourceQuotaFacts, ...] = ()
    """The ResourceQuotas as facts (a malformed one closes its namespace to new jobs)."""
    pod_disruption_budgets: tuple[Mapping[str, object], ...] = ()
    """Raw `policy/v1` PodDisruptionBudget objects, as watched."""
    disruption_budgets: tuple[DisruptionBudget, ...] = ()
    """The PodDisruptionBudgets as facts (a malformed one protects its whole namespace)."""
    claims: Mapping[str, ClaimFacts] = dataclasses.field(default_factory=dict)
    """The PersistentVolumeClaims, by `namespace/name`."""
    volumes: Mapping[str, VolumeFacts] = dataclasses.field(default_factory=dict)
    """The PersistentVolumes, by name."""
    storage_classes: Mapping[str, StorageClassFacts] = dataclasses.field(default_factory=dict)
    """The StorageClasses, by name."""
    config_maps: tuple[Mapping[str, object], ...] = ()
    """Raw `v1` ConfigMap objects (e.g. the reservation ConfigMap)."""
    reservations: Mapping[str, ReservationBook] = dataclasses.field(default_factory=dict)
    """The reservations of every ConfigMap held, by `namespace/name` of the ConfigMap (the
    reservation plugin reads the one its arguments name)."""
    hypernodes: tuple[HyperNodeFacts, ...] = ()
    """The HyperNodes (`topology.volcano.sh`), by name, unusable ones (a `problem`) included."""
    topology: Topology = NO_TOPOLOGY
    """The tree the usable HyperNodes make over `nodes` (`model.topology.build_topology`),
    built once per change of the HyperNodes (or of the nodes their selectors read)."""
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    taken_at: dt.datetime = EPOCH
    serial: int = 0
    """The cache's number for this snapshot, unique in the process (0: not from a cache)."""
    changes: TaskChanges | None = None
    """The tasks that may differ from the cache's previous snapshot (None: not known)."""
    podgroups: tuple[str, ...] | None = None
    """The keys of `jobs` that are PodGroups (not a lone pod's implicit job), in job order
    (None: not told; a session then finds them in `jobs`)."""
    cache_order: bool = False
    """Whether `tasks` and `jobs` are in the cache's order: tasks by creation time, then uid;
    jobs the PodGroups by key, then the lone pods' implicit jobs in their pods' order
    (`complete_jobs`). A session then puts a few tasks or jobs in order by sorting them, not by
    a pass over all of them."""


QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
_LONE_PREFIX = "podgroup-"


def lone_job_name(pod_uid: str) -> str:
    """The PodGroup name Volcano gives a pod without one: `podgroup-<uid>` (the name of a lone
    pod's implicit job; a PodGroup of that name, made by Volcano's controller, takes its place)."""
    return _LONE_PREFIX + pod_uid


def cache_task_order(task: TaskFacts) -> tuple[dt.datetime, str]:
    """Where `task` comes in the cache's task order (`ClusterSnapshot.cache_order`): by
    creation time, then uid."""
    return task.created, task.uid


def implicit_job_order(job: JobFacts) -> tuple[dt.datetime, str]:
    """Where a lone pod's implicit job comes among the others: its pod's place in task order
    (creation time, then the pod's uid, read back from the job's name, `lone_job_name`)."""
    return job.created, job.name.removeprefix(_LONE_PREFIX)


def cache_job_order(job: JobFacts) -> tuple[int, str] | tuple[int, dt.datetime, str]:
    """Where `job` comes in the cache's job order (`ClusterSnapshot.cache_order`): the
    PodGroups by key, then the lone pods' implicit jobs in their pods' order."""
    if job.synthetic:
        return (1, *implicit_job_order(job))
    return (0, job.key)


def implicit_job(task: TaskFacts) -> JobFacts:
    """The job of one for a pod without a PodGroup (as Volcano's controller would create it):
    min member 1, the queue from the pod's `scheduling.volcano.sh/queue-name` annotation, phase
    Running once the pod is on a node (its one member placed, as the controller's PodGroup would
    read), else Pending (enqueue admits it; it has no minResources to hold)."""
    namespace, _, name = task.job.partition("/")
    return JobFacts(
        uid=task.job,
        namespace=namespace,
        name=name,
        queue=task.annotations.get(QUEUE_ANNOTATION, DEFAULT_QUEUE),
        min_member=1,
        priority=task.priority,
        priority_class_name=task.priority_class_name,
        created=task.created,
        phase=PodGroupPhase.PENDING if task.node_name is None else PodGroupPhase.RUNNING,
        synthetic=True,
    )


class ImplicitJobs:
    """The lone pods' implicit jobs of the last `complete_jobs` call, in task order, kept by
    the caller from one call to the next (one snapshot to the next)."""

    __slots__ = ("holes", "jobs", "key_of", "podgroups", "sources")

    def __init__(self) -> None:
        self.jobs: dict[str, JobFacts] = {}
        """Job key -> job, in task order (each snapshot adds them in one dict update)."""
        self.holes = 0
        """Keys popped from `jobs` since it was built (`model.compact`)."""
        self.sources: dict[str, TaskFacts] = {}
        """Job key -> the task facts its job was made from (a job is made again only for
        other facts)."""
        self.key_of: dict[str, str] = {}
        """Task uid -> its implicit job's key."""
        self.podgroups: frozenset[str] | None = None
        """The keys of the call's `jobs` (None before the first call)."""

    def __len__(self) -> int:
        return len(self.jobs)


def complete_jobs(
    tasks: Mapping[str, TaskFacts],
    jobs: Mapping[str, JobFacts],
    memo: ImplicitJobs | None = None,
    changed: frozenset[str] | None = None,
) -> dict[str, JobFacts]:
    """`jobs` plus an implicit job for every task without a PodGroup (`group_name` None), in
    task order.

    With a `memo` (kept by the caller from one call to the next), a job made from the very same
    task facts object before is taken from it, not made again; the memo is left holding only
    the implicit jobs of this call, so it never outgrows the cluster. With `changed` too (every
    uid whose facts object may differ from the last call's `tasks`, as `TaskChanges.uids`), only
    those tasks are looked at, and the pods whose implicit job a PodGroup that came or went
    since takes or gives back (one named `podgroup-<uid>`, `lone_job_name`): a cycle that
    places a few pods, or a new gang, no longer walks every task. New lone pods are put in
    their place by moving behind them the lone pods held that come after the first of them:
    the newest pods come last, give or take the pods created in the same second (ordered by
    uid), so that is a few; a first call walks every task."""
    if memo is None:
        memo = ImplicitJobs()
    elif changed is not None and memo.podgroups is not None:
        if memo.podgroups != jobs.keys():
            came_or_went = memo.podgroups.symmetric_difference(jobs.keys())
            changed = changed.union(_claimants(came_or_went))
            memo.podgroups = frozenset(jobs)
        if _patch(memo, tasks, jobs, changed):
            memo.jobs, memo.holes = compacted(memo.jobs, memo.holes)
            if not jobs:
                return memo.jobs.copy()
            out = dict(jobs)
            out.update(memo.jobs)
            return out
    return _walk(memo, tasks, jobs)


def _claimants(keys: AbstractSet[str]) -> list[str]:
    """The uids of the pods whose implicit job key is among the PodGroup `keys` (a key
    `<namespace>/podgroup-<uid>`): a PodGroup of that key takes the pod's implicit job's place
    while it exists (whether such a pod exists is the caller's to find)."""
    return [
        name.removeprefix(_LONE_PREFIX)
        for name in (key.partition("/")[2] for key in keys)
        if name.startswith(_LONE_PREFIX)
    ]


def _walk(
    memo: ImplicitJobs, tasks: Mapping[str, TaskFacts], jobs: Mapping[str, JobFacts]
) -> dict[str, JobFacts]:
    """Every task looked at: the memo made again from `tasks`."""
    out = dict(jobs)
    made: dict[str, JobFacts] = {}
    sources: dict[str, TaskFacts] = {}
    key_of: dict[str, str] = {}
    for uid, task in tasks.items():
        key = task.job
        if task.group_name is None and key and key not in out:
            held = memo.jobs.get(key)
            job = held if held is not None and memo.sources[key] is task else implicit_job(task)
            out[key] = made[key] = job
            sources[key] = task
            key_of[uid] = key
    memo.jobs, memo.sources, memo.key_of, memo.holes = made, sources, key_of, 0
    memo.podgroups = frozenset(jobs)
    return out


def _patch(
    memo: ImplicitJobs,
    tasks: Mapping[str, TaskFacts],
    jobs: Mapping[str, JobFacts],
    changed: frozenset[str],
) -> bool:
    """Bring the memo to `tasks` looking at the `changed` tasks, and at the tasks after the
    first new lone pod; False (the memo then half done: the caller walks every task) when a new
    lone pod's job key is held already."""
    order, sources, key_of = memo.jobs, memo.sources, memo.key_of
    added: dict[str, str] = {}
    for uid in changed:
        task = tasks.get(uid)
        key = task.job if task is not None else ""
        lone = task is not None and task.group_name is None and bool(key) and key not in jobs
        old = key_of.get(uid)
        if old is not None and (not lone or old != key):
            del order[old], sources[old], key_of[uid]
            memo.holes += 1
            old = None
        if task is None or not lone:
            continue
        if old is None:
            added[uid] = key
        elif sources[key] is not task:
            order[key] = implicit_job(task)
            sources[key] = task
    if not added:
        return True
    if any(key in order for key in added.values()) or len(set(added.values())) < len(added):
        return False
    for uid in _tail(tasks, added, key_of):
        new = added.get(uid)
        if new is None:  # held, after a new one: moved behind it
            key = key_of[uid]
            order[key] = order.pop(key)
            memo.holes += 1
        else:
            order[new] = implicit_job(tasks[uid])
            sources[new] = tasks[uid]
            key_of[uid] = new
    return True


def _tail(
    tasks: Mapping[str, TaskFacts], added: Mapping[str, str], held: Mapping[str, str]
) -> list[str]:
    """The `added` uids and the `held` ones after the first of them, in task order."""
    keys = tasks.keys()
    tail: list[str] = []
    found = 0
    for uid in reversed(keys) if isinstance(keys, Reversible) else reversed(list(keys)):
        if uid in added:
            tail.append(uid)
            found += 1
            if found == len(added):
                break
        elif uid in held:
            tail.append(uid)
    return tail[::-1]


def default_queues(queues: Mapping[str, QueueFacts]) -> dict[str, QueueFacts]:
    """`queues` plus the `default` queue (weight 1) if it is missing."""
    out = dict(queues)
    out.setdefault(DEFAULT_QUEUE, QueueFacts(name=DEFAULT_QUEUE))
    return out
