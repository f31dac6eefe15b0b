"""drf: dominant resource fairness between jobs.

A job's share is its dominant share: the largest `allocated / total` over the resources of the
cluster total (the allocatable of the Ready nodes), where `allocated` is what its tasks hold
(Allocated, Binding, Bound, Running or Pipelined): the job's `allocated`, which the session keeps
in step with every allocation, pipelining and eviction (Volcano's drf follows them with event
handlers; reading the job's own figure gives the same share without a per-job map).

Registers (Volcano's drf plugin):
    compare_jobs        the job of lower share first
    job_order_key       the same as a key: the dominant share (jobOrderKey, ours)
    select_preemptees   the candidates whose job, after losing them (one after another, per job),
                        keeps a share at least the preemptor job's share once it holds the
                        preemptor (within 1e-6); the tasks of jobs that would drop below it are kept
and with `enableHierarchy: true` (hierarchical DRF, `HierarchicalDrf`, over the tree of the
queues' `volcano.sh/hierarchy` annotations: `drf.tree`):
    compare_queues      Volcano's `compareQueues` on the tree as the session stands
    select_reclaimees   the candidates whose queue, once the candidate is gone and the reclaimer
                        placed, stands after the reclaimer's queue in that order
    on_allocate / on_deallocate
                        keep the cluster's total allocation current and mark the tree stale (it
                        is evaluated again, from the jobs' allocations, when next compared)

It takes no arguments. Not supported, and said so:
- `enableNamespaceOrder` (namespace fair share weighted by `volcano.sh/namespace.weight` quotas,
  also applied first when choosing preemptees) is accepted and switches nothing: vscheduler has no
  namespace-order extension point.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import (
    EMPTY,
    AllocateEvent,
    ArgumentReader,
    DeallocateEvent,
    JobOrder,
    JobOrderKey,
    JobState,
    Needs,
    PluginSession,
    Preemptable,
    QueueOrder,
    QueueState,
    Reclaimable,
    Resources,
    TaskState,
    TierConflict,
    cluster_total,
)
from vscheduler.plugins.drf.tree import Divisors, Leaf, NodeShare, Path, Tree

NAME: Final = "drf"
SHARE_DELTA: Final = 0.000001
"""Shares this close count as equal when choosing preemptees (Volcano's `shareDelta`)."""


def dominant_share(allocated: Resources, total: Resources) -> float:
    """The largest allocated/total ratio over the cluster's resources (0 when it has none)."""
    return _share(allocated, _divisors(total))


def _divisors(total: Resources) -> Divisors:
    return tuple((n, a) for n, a in total.items() if a > 0)


def _share(allocated: Resources, divisors: Divisors) -> float:
    if allocated.is_empty():
        return 0.0
    return max((allocated.get(n) / a for n, a in divisors), default=0.0)


class Drf(JobOrder, JobOrderKey, Preemptable):
    """The per-session plugin: every job's dominant share, read from its allocation.

    The session keeps each job's `allocated` in step with every allocation, pipelining,
    eviction and their undoing (the moves Volcano's event handlers follow), so the share is
    computed from it when asked, once per distinct allocation: no per-job map is built at
    open (a cluster of lone pods has a job per running pod, and only the jobs with pending
    tasks are ever compared)."""

    def __init__(self, session: PluginSession) -> None:
        self.total = cluster_total(session)
        self._divisors = _divisors(self.total)
        self._shares: dict[Resources, float] = {}

    def _share_of(self, job: JobState) -> float:
        """The job's dominant share now."""
        allocated = job.allocated
        share = self._shares.get(allocated)
        if share is None:
            share = self._shares[allocated] = _share(allocated, self._divisors)
        return share

    def compare_jobs(self, a: JobState, b: JobState) -> int:
        """The job of lower dominant share first."""
        left, right = self._share_of(a), self._share_of(b)
        return (left > right) - (left < right)

    def job_order_key(self, job: JobState) -> float:
        """`compare_jobs` as a key: the dominant share."""
        return self._share_of(job)

    def select_preemptees(
        self, preemptor: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Candidates whose job would still hold at least the preemptor job's share."""
        own = _allocated(preemptor) + preemptor.resreq
        bar = _share(own, self._divisors)
        left: dict[str, Resources] = {}
        victims: list[TaskState] = []
        for task in candidates:
            if task.job is None:
                continue
            key = task.job.key
            remaining = left.get(key, task.job.allocated) - task.resreq
            left[key] = remaining
            after = _share(remaining, self._divisors)
            if bar < after or abs(bar - after) <= SHARE_DELTA:
                victims.append(task)
        return tuple(victims)


def _allocated(task: TaskState) -> Resources:
    return EMPTY if task.job is None else task.job.allocated


class HierarchicalDrf(Drf, QueueOrder, Reclaimable, AllocateEvent, DeallocateEvent):
    """drf with `enableHierarchy: true`: also the queues' order and reclaim by hierarchical
    share. The tree holds every job of a queue with a path; a node's weight comes from the
    first queue, by name, whose annotations name it (Volcano takes the first job's queue it
    meets, in no set order)."""

    def __init__(self, session: PluginSession) -> None:
        super().__init__(session)
        self._session = session
        weights: dict[Path, float] = {}
        for name in sorted(session.queues):
            levels = session.queues[name].facts.hierarchy
            for depth in range(1, len(levels) + 1):
                weights.setdefault(
                    tuple(level.name for level in levels[:depth]), levels[depth - 1].weight
                )
        leaves: list[Leaf] = []
        total = EMPTY
        for job in session.jobs.values():
            queue = session.queue_of(job)
            if queue is None:
                continue
            total = total + job.allocated
            if queue.facts.hierarchy:
                leaves.append(Leaf(job.key, _path(queue), _total_request(job)))
        self._tree = Tree(leaves, weights, self._divisors)
        self._total_allocated = total
        self._standings: dict[Path, NodeShare] | None = None

    def compare_queues(self, a: QueueState, b: QueueState) -> int:
        """The queue of lower hierarchical share (per weight), level by level, first; a
        saturated level after one that is not."""
        if not self._tree:
            return 0
        ret = self._tree.compare(self._standing(), _path(a), _path(b))
        return (ret > 0) - (ret < 0)

    def select_reclaimees(
        self, reclaimer: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """The candidates whose queue, with the reclaimer placed and the candidate gone,
        would come after the reclaimer's queue (Volcano's reclaim function of hdrf)."""
        job = reclaimer.job
        queue = None if job is None else self._session.queue_of(job)
        if job is None or queue is None:
            return ()
        own, grown = job.key, job.allocated + reclaimer.resreq
        total = self._total_allocated + reclaimer.resreq
        left = _path(queue)
        verdicts: dict[tuple[str, Resources], bool] = {}
        victims: list[TaskState] = []
        for task in candidates:
            other = task.job
            other_queue = None if other is None else self._session.queue_of(other)
            if other is None or other_queue is None:
                continue
            memo = (other.key, task.resreq)
            if memo not in verdicts:
                changed = {own: grown, other.key: other.allocated - task.resreq}
                shares = self._tree.evaluate(self._reader(changed), total - task.resreq)
                verdicts[memo] = self._tree.compare(shares, left, _path(other_queue)) < 0
            if verdicts[memo]:
                victims.append(task)
        return tuple(victims)

    def on_allocate(self, task: TaskState) -> None:
        """The task holds its request now: the tree is stale."""
        if task.job is not None and self._session.queue_of(task.job) is not None:
            self._total_allocated = self._total_allocated + task.resreq
            self._standings = None

    def on_deallocate(self, task: TaskState) -> None:
        """The task gave its request back: the tree is stale."""
        if task.job is not None and self._session.queue_of(task.job) is not None:
            self._total_allocated = self._total_allocated - task.resreq
            self._standings = None

    def _reader(self, changed: Mapping[str, Resources]) -> Callable[[str], Resources]:
        """Each job's allocation, those of `changed` as given there."""
        jobs = self._session.jobs

        def allocated(key: str) -> Resources:
            held = changed.get(key)
            return jobs[key].allocated if held is None else held

        return allocated

    def _standing(self) -> dict[Path, NodeShare]:
        if self._standings is None:
            jobs = self._session.jobs
            self._standings = self._tree.evaluate(
                lambda key: jobs[key].allocated, self._total_allocated
            )
        return self._standings


def _path(queue: QueueState) -> Path:
    return tuple(level.name for level in queue.facts.hierarchy)


def _total_request(job: JobState) -> Resources:
    """Everything the job's tasks ask, whatever their status (Volcano's `TotalRequest`)."""
    total = EMPTY
    for task in job.tasks.values():
        total = total + task.resreq
    return total


class Factory:
    """Lives as long as the policy; holds nothing across cycles. Hierarchical drf and
    proportion both divide the cluster among queues: one tier holds one of them."""

    name = NAME
    plugin = (Drf, HierarchicalDrf)
    needs = Needs(conflicts=(TierConflict(flag="enableHierarchy", plugin="proportion"),))

    def open(self, session: PluginSession) -> Drf:
        """A fresh plugin for `session`: hierarchical when drf's entry enables hierarchy."""
        if session.hierarchy_enabled(NAME):
            return HierarchicalDrf(session)
        return Drf(session)


def build(arguments: Mapping[str, object]) -> Factory:
    """drf takes no arguments."""
    ArgumentReader(arguments, owner=f"plugin {NAME}").finish()
    return Factory()
