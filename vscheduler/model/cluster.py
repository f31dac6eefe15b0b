"""ClusterSnapshot: one consistent, read-only view of the cluster for one cycle."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping

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
    config_maps: tuple[Mapping[str, object], ...] = ()
    """Raw `v1` ConfigMap objects (e.g. the reservation ConfigMap)."""
    reservations: Mapping[str, ReservationBook] = dataclasses.field(default_factory=dict)
    """The reservations of every ConfigMap held, by `namespace/name` of the ConfigMap (the
    reservation plugin reads the one its arguments name)."""
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    taken_at: dt.datetime = EPOCH
    serial: int = 0
    """The cache's number for this snapshot, unique in the process (0: not from a cache)."""
    changes: TaskChanges | None = None
    """The tasks that may differ from the cache's previous snapshot (None: not known)."""
    podgroups: tuple[str, ...] | None = None
    """The keys of `jobs` that are PodGroups (not a lone pod's implicit job), in job order
    (None: not told; a session then finds them in `jobs`)."""


QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"


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


ImplicitJobs = dict[str, tuple[TaskFacts, JobFacts]]
"""Implicit jobs made before, by job key, with the task each was made from."""


def complete_jobs(
    tasks: Mapping[str, TaskFacts],
    jobs: Mapping[str, JobFacts],
    memo: ImplicitJobs | None = None,
) -> dict[str, JobFacts]:
    """`jobs` plus an implicit job for every task without a PodGroup (`group_name` None).

    With a `memo` (kept by the caller from one call to the next), a job made from the very same
    task facts object before is taken from it, not made again; the memo is left holding only
    the implicit jobs of this call, so it never outgrows the cluster."""
    out = dict(jobs)
    made: ImplicitJobs = {}
    earlier = memo if memo is not None else {}
    for task in tasks.values():
        key = task.job
        if task.group_name is None and key and key not in out:
            seen = earlier.get(key)
            job = seen[1] if seen is not None and seen[0] is task else implicit_job(task)
            out[key] = job
            made[key] = (task, job)
    if memo is not None:
        memo.clear()
        memo.update(made)
    return out


def default_queues(queues: Mapping[str, QueueFacts]) -> dict[str, QueueFacts]:
    """`queues` plus the `default` queue (weight 1) if it is missing."""
    out = dict(queues)
    out.setdefault(DEFAULT_QUEUE, QueueFacts(name=DEFAULT_QUEUE))
    return out
