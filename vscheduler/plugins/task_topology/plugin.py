"""The task-topology plugin of one session: task order and node scores from the buckets of the
jobs that have a topology (see the package's docstring for the rules).

Owns: which jobs' topologies apply this session, the taskOrder comparison, the nodeOrder score
and keeping the buckets in step with the session's placements.
Must not: look at jobs without a topology beyond one attribute read each at open.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from vscheduler.plugin_api import (
    AllocateEvent,
    DeallocateEvent,
    FloatArray,
    IntArray,
    JobState,
    NodeOrder,
    PluginSession,
    TaskOrder,
    TaskState,
    TaskStatus,
)
from vscheduler.plugins.task_topology.buckets import Bucket, JobBuckets, request_score

MAX_NODE_SCORE = 100.0
"""kube-scheduler's `MaxNodeScore`: a bucket's score is scaled to it."""


def applying(session: PluginSession) -> dict[str, JobBuckets]:
    """The buckets of each job whose topology applies this session (Volcano's `initBucket`): a
    PodGroup with a topology and a pending task, every role it names held by one of its tasks
    (Volcano ignores the topology of a job naming a role none of its tasks has)."""
    made: dict[str, JobBuckets] = {}
    for job in session.podgroup_jobs:
        topology = job.facts.task_topology
        if topology is None or not job.count(TaskStatus.PENDING):
            continue
        roles = {t.facts.task_role for t in job.tasks.values()}
        if not topology.roles() <= roles:
            continue
        made[job.key] = JobBuckets.build(job, topology, session.ledger, session.request_row)
    return made


class Inert:
    """What a session without a job whose topology applies opens: a plugin with no hooks (so
    it costs the other pods nothing)."""


class TaskTopologyPlugin(TaskOrder, NodeOrder, AllocateEvent, DeallocateEvent):
    """The per-session plugin, when some job's topology applies."""

    node_local = False
    """A score depends on the task's bucket and on where its job's tasks went this session."""

    def __init__(self, session: PluginSession, jobs: Mapping[str, JobBuckets], weight: int) -> None:
        self._session = session
        self._ledger = session.ledger
        self._jobs = jobs
        self._weight = weight

    def _buckets(self, job: JobState | None) -> JobBuckets | None:
        return None if job is None else self._jobs.get(job.key)

    def compare_tasks(self, a: TaskState, b: TaskState) -> int:
        """Volcano's `TaskOrderFn`: a task in a bucket before one in none (across jobs too);
        within a job, the bucket with more pending tasks first, then the older bucket; within a
        bucket, the higher-ranked role first. 0 otherwise."""
        ja, jb = self._buckets(a.job), self._buckets(b.job)
        if ja is None or jb is None:
            return 0
        ba, bb = ja.bucket_of.get(a.uid), jb.bucket_of.get(b.uid)
        if (ba is None) != (bb is None):
            return -1 if ba is not None else 1
        if ja is not jb or ba is None or bb is None:
            return 0
        la, lb = len(ba.pending), len(bb.pending)
        if la != lb:
            return -1 if la > lb else 1
        if ba is bb:
            return -ja.affinity_order(a, b)
        return -1 if ba.index < bb.index else 1

    def score_nodes(self, task: TaskState, idx: IntArray) -> FloatArray | None:
        """Volcano's `NodeOrderFn` over the nodes `idx`; no opinion on a task in no bucket."""
        buckets = self._buckets(task.job)
        bucket = None if buckets is None else buckets.bucket_of.get(task.uid)
        if buckets is None or bucket is None:
            return None
        room = self._ledger.future[idx]
        need = self._session.request_row(task)
        cols = np.flatnonzero(need)
        fits = (room[:, cols] >= need[cols]).all(axis=1)
        score = bucket.nodes[idx].astype(np.float64)
        for role in buckets.relations.apart_from(task.facts.task_role):
            placed = buckets.placed.get(role)
            if placed is not None:
                score -= placed[idx]
        score += len(bucket.pending)
        score -= self._taken_out(task, bucket, room)
        score[~fits] = 0.0
        score = score * self._weight
        if buckets.max_size:
            score = score * MAX_NODE_SCORE / buckets.max_size
        return score

    def _taken_out(self, task: TaskState, bucket: Bucket, room: IntArray) -> IntArray:
        """Per node, how many of the bucket's other pending tasks must be taken out before the
        rest (the task with them) fits the node's future idle: the largest requests first, as
        Volcano's bucket score takes them out in no set order."""
        request = bucket.request
        cols = np.flatnonzero(request > 0)
        over = ~(request[cols] <= room[:, cols]).all(axis=1)
        taken = np.zeros(len(room), dtype=np.int64)
        if not over.any():
            return taken
        others = sorted(
            (t for uid, t in bucket.pending.items() if uid != task.uid),
            key=lambda t: (-request_score(t.resreq), bucket.rank[t.uid]),
        )
        if not others:
            return taken
        rows = np.array([self._session.request_row(t) for t in others])
        remains = request - np.vstack((np.zeros_like(request), np.cumsum(rows, axis=0)))
        short = room[over][:, cols]
        fits = (remains[None, 1:, cols] <= short[:, None, :]).all(axis=2)
        first = np.where(fits.any(axis=1), fits.argmax(axis=1) + 1, len(others))
        taken[over] = first
        return taken

    def on_allocate(self, task: TaskState) -> None:
        """A task of a job with a topology was placed this session: its bucket counts it on
        its node (Volcano's `AllocateFunc`)."""
        buckets = self._buckets(task.job)
        if buckets is None or task.uid in buckets.counted or task.uid in buckets.at_open:
            return
        buckets.counted.add(task.uid)
        buckets.bound(task, self._session.request_row(task), 1)

    def on_deallocate(self, task: TaskState) -> None:
        """A placement this session was undone: the bucket forgets it (Volcano does not)."""
        buckets = self._buckets(task.job)
        if buckets is None or task.uid not in buckets.counted:
            return
        buckets.counted.discard(task.uid)
        buckets.bound(task, self._session.request_row(task), -1)
