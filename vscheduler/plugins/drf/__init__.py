"""drf: dominant resource fairness between jobs.

A job's share is its dominant share: the largest `allocated / total` over the resources of the
cluster total (the allocatable of the Ready nodes), where `allocated` is what its tasks hold
(Allocated, Binding, Bound, Running or Pipelined): the job's `allocated`, which the session keeps
in step with every allocation, pipelining and eviction (Volcano's drf follows them with event
handlers; reading the job's own figure gives the same share without a per-job map).

Registers (Volcano's drf plugin, without hierarchy):
    compare_jobs        the job of lower share first
    job_order_key       the same as a key: the dominant share (jobOrderKey, ours)
    select_preemptees   the candidates whose job, after losing them (one after another, per job),
                        keeps a share at least the preemptor job's share once it holds the
                        preemptor (within 1e-6); the tasks of jobs that would drop below it are kept

It takes no arguments. Not supported, and said so:
- `enableHierarchy: true` (hierarchical DRF: Volcano then also registers a queue order and a
  reclaim function over the queue tree of `volcano.sh/hierarchy` annotations) is accepted, but drf
  behaves as without it.
- `enableNamespaceOrder` (namespace fair share weighted by `volcano.sh/namespace.weight` quotas,
  also applied first when choosing preemptees) is accepted and switches nothing: vscheduler has no
  namespace-order extension point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import (
    EMPTY,
    ArgumentReader,
    JobOrder,
    JobOrderKey,
    JobState,
    Needs,
    PluginSession,
    Preemptable,
    Resources,
    TaskState,
    TierConflict,
    cluster_total,
)

NAME: Final = "drf"
SHARE_DELTA: Final = 0.000001
"""Shares this close count as equal when choosing preemptees (Volcano's `shareDelta`)."""


def dominant_share(allocated: Resources, total: Resources) -> float:
    """The largest allocated/total ratio over the cluster's resources (0 when it has none)."""
    return _share(allocated, _divisors(total))


Divisors = tuple[tuple[str, int], ...]
"""The cluster's resources with a positive total, and the totals."""


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


class Factory:
    """Lives as long as the policy; holds nothing across cycles. Hierarchical drf and
    proportion both divide the cluster among queues: one tier holds one of them."""

    name = NAME
    plugin = Drf
    needs = Needs(conflicts=(TierConflict(flag="enableHierarchy", plugin="proportion"),))

    def open(self, session: PluginSession) -> Drf:
        """A fresh plugin for `session`."""
        return Drf(session)


def build(arguments: Mapping[str, object]) -> Factory:
    """drf takes no arguments."""
    ArgumentReader(arguments, owner=f"plugin {NAME}").finish()
    return Factory()
