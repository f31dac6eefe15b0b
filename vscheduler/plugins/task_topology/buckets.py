"""One job's buckets: its tasks grouped by their roles' affinity, as Volcano's task-topology
`JobManager` groups them when the session opens, and kept as the session places tasks.

Owns: the roles' relations (from the job's `TaskTopology`), the buckets (which task is in
which, the pending ones' summed request, how many tasks each bucket has on each node), the
order of roles within a bucket, and the roles placed on each node this session.
Must not: read the session beyond the job, its tasks and the ledger's shape it is handed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import numpy as np

from vscheduler.plugin_api import (
    CPU,
    MEMORY,
    IntArray,
    JobState,
    LedgerView,
    Resources,
    TaskState,
    TaskTopology,
)

SELF_ANTI_AFFINITY = 4
INTER_AFFINITY = 3
SELF_AFFINITY = 2
INTER_ANTI_AFFINITY = 1
"""Volcano's `affinityPriority`: a role's strongest relation ranks it within a bucket."""
_MIB = 1024.0 * 1024.0


def request_score(request: Resources) -> float:
    """Volcano's bucket `reqScore` of a request: millicores, plus MiB of memory, plus every other
    resource in thousandths (Volcano holds them so: one GPU counts as 1000 millicores)."""
    score = 0.0
    for name, amount in request.unordered_items():
        if name == CPU:
            score += amount
        elif name == MEMORY:
            score += amount / _MIB
        else:
            score += amount * 1000
    return score


@dataclasses.dataclass(frozen=True, slots=True)
class Relations:
    """The roles' relations, as Volcano's `ApplyTaskTopology` makes them."""

    inter_affinity: Mapping[str, frozenset[str]]
    self_affinity: frozenset[str]
    inter_anti: Mapping[str, frozenset[str]]
    self_anti: frozenset[str]
    priority: Mapping[str, int]
    """A role's strongest relation (`SELF_ANTI_AFFINITY` ...); roles without one are absent."""
    order: Mapping[str, int]
    """From `volcano.sh/task-topology-task-order`: the first role named the highest."""

    @staticmethod
    def of(topology: TaskTopology) -> Relations:
        """The relations `topology` states."""
        priority: dict[str, int] = {}
        inter, alone = _pairs(topology.affinity, SELF_AFFINITY, INTER_AFFINITY, priority)
        anti, apart = _pairs(
            topology.anti_affinity, SELF_ANTI_AFFINITY, INTER_ANTI_AFFINITY, priority
        )
        length = len(topology.order)
        order = {role: length - i for i, role in enumerate(topology.order)}
        return Relations(inter, alone, anti, apart, priority, order)

    def affinity(self, role: str, counts: Mapping[str, int], *, only_anti: bool) -> int:
        """Volcano's `checkTaskSetAffinity`: + the tasks of `counts` that `role` goes with
        (unless `only_anti`), - those it goes apart from."""
        if not role:
            return 0
        total = 0
        inter = self.inter_affinity.get(role, frozenset())
        anti = self.inter_anti.get(role, frozenset())
        for other, count in counts.items():
            if other == role:
                together, apart = role in self.self_affinity, role in self.self_anti
            else:
                together, apart = other in inter, other in anti
            if together and not only_anti:
                total += count
            if apart:
                total -= count
        return total

    def apart_from(self, role: str) -> tuple[str, ...]:
        """The roles `role` goes apart from (itself included when self-anti-affine), sorted."""
        apart = set(self.inter_anti.get(role, ()))
        if role in self.self_anti:
            apart.add(role)
        return tuple(sorted(apart))


def _pairs(
    groups: tuple[tuple[str, ...], ...], alone: int, together: int, priority: dict[str, int]
) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """The roles related pairwise (each group of two or more) and alone (a group of one), each
    role's `priority` raised to its relation's rank."""
    pairs: dict[str, set[str]] = {}
    single: set[str] = set()
    for group in groups:
        if len(group) == 1:
            single.add(group[0])
            priority[group[0]] = max(priority.get(group[0], 0), alone)
            continue
        for i, src in enumerate(group):
            for dst in group[:i]:
                pairs.setdefault(src, set()).add(dst)
                pairs.setdefault(dst, set()).add(src)
            priority[src] = max(priority.get(src, 0), together)
    return {k: frozenset(v) for k, v in pairs.items()}, frozenset(single)


class Bucket:
    """Tasks that go together: its pending tasks, its bound ones by node."""

    __slots__ = ("bound", "index", "nodes", "pending", "rank", "request", "request_score", "roles")

    def __init__(self, index: int, width: int, node_count: int) -> None:
        self.index = index
        self.pending: dict[str, TaskState] = {}
        """Uid -> the pending task, in the order they joined."""
        self.rank: dict[str, int] = {}
        """Uid -> the order it joined in (ties of the request taken out first, `score_nodes`)."""
        self.roles: dict[str, int] = {}
        """Role -> how many tasks of it joined (Volcano's `taskNameSet`)."""
        self.request_score = 0.0
        self.request: IntArray = np.zeros(width, dtype=np.int64)
        """The pending tasks' requests, summed (a ledger row)."""
        self.bound = 0
        self.nodes: IntArray = np.zeros(node_count, dtype=np.int64)
        """Per node (ledger row), the bucket's tasks on it."""


class JobBuckets:
    """One job's relations and buckets (Volcano's `JobManager`)."""

    def __init__(self, relations: Relations, ledger: LedgerView) -> None:
        self.relations = relations
        self.buckets: list[Bucket] = []
        self.bucket_of: dict[str, Bucket] = {}
        """Uid -> the task's bucket (tasks out of every bucket are absent)."""
        self.role_of: dict[str, str] = {}
        """Uid -> the role of each task in a bucket."""
        self.max_size = 0
        """The most tasks a bucket held as they were put in (scores are scaled by it)."""
        self.placed: dict[str, IntArray] = {}
        """Role -> per node, its tasks placed this session (Volcano's `nodeTaskSet`)."""
        self.counted: set[str] = set()
        """The tasks placed this session that the buckets count."""
        self.at_open: frozenset[str] = frozenset()
        """The tasks on a node when the session opened (counted already, or never)."""
        self._ledger = ledger

    @staticmethod
    def build(
        job: JobState,
        topology: TaskTopology,
        ledger: LedgerView,
        row: Callable[[TaskState], IntArray],
    ) -> JobBuckets:
        """The job's buckets (Volcano's `ConstructBucket`): the tasks whose role has a relation,
        those on a node first (by node name: one bucket per node), then the others by the
        role's order and relation, then name, each into the bucket it has the most affinity
        with (the lightest on a tie), or a new one when that affinity is negative."""
        made = JobBuckets(Relations.of(topology), ledger)
        made.at_open = frozenset(t.uid for t in job.tasks.values() if t.node is not None)
        ranked = made.relations.priority
        members = [
            t for t in job.tasks.values() if t.facts.task_role and t.facts.task_role in ranked
        ]
        members.sort(key=made._construction_key)
        by_node: dict[str, Bucket] = {}
        for task in members:
            role = task.facts.task_role
            selected: Bucket | None = None
            if task.node is not None:
                best: float = 0
                selected = by_node.get(task.node)
            else:
                best = -np.inf
                for bucket in made.buckets:
                    affinity = made.relations.affinity(role, bucket.roles, only_anti=False)
                    if affinity > best:
                        best, selected = affinity, bucket
                    elif (
                        affinity == best
                        and selected is not None
                        and bucket.request_score < selected.request_score
                    ):
                        selected = bucket
            if best < 0 or selected is None:
                selected = made._new_bucket()
                if task.node is not None:
                    by_node[task.node] = selected
            made._add(selected, task, role, row)
        return made

    def _construction_key(self, task: TaskState) -> tuple[object, ...]:
        """Volcano's `TaskOrder`, reversed: placed tasks first, by node name; then by the
        role's order and priority, higher first; then by name."""
        if task.node is not None:
            return (0, task.node, task.facts.name, task.uid)
        role = task.facts.task_role
        order = self.relations.order.get(role, 0)
        return (1, -order, -self.relations.priority.get(role, 0), task.facts.name, task.uid)

    def _new_bucket(self) -> Bucket:
        ledger = self._ledger
        bucket = Bucket(len(self.buckets), len(ledger.dims), len(ledger))
        self.buckets.append(bucket)
        return bucket

    def _add(
        self, bucket: Bucket, task: TaskState, role: str, row: Callable[[TaskState], IntArray]
    ) -> None:
        self.bucket_of[task.uid] = bucket
        self.role_of[task.uid] = role
        bucket.roles[role] = bucket.roles.get(role, 0) + 1
        i = self._ledger.index.get(task.node, -1) if task.node is not None else -1
        if task.node is not None:
            bucket.bound += 1
            if i >= 0:
                bucket.nodes[i] += 1
        else:
            bucket.pending[task.uid] = task
            bucket.rank[task.uid] = len(bucket.rank)
            bucket.request += row(task)
            bucket.request_score += request_score(task.resreq)
        self.max_size = max(self.max_size, len(bucket.pending) + bucket.bound)

    def affinity_order(self, a: TaskState, b: TaskState) -> int:
        """Volcano's `taskAffinityOrder`: 1 when `a`'s role ranks higher (the user's order,
        then its strongest relation), -1 when lower, 0 for the same role or a tie."""
        ra, rb = self.role_of.get(a.uid, ""), self.role_of.get(b.uid, "")
        if ra == rb:
            return 0
        order = self.relations.order
        oa, ob = order.get(ra, 0), order.get(rb, 0)
        if oa != ob:
            return 1 if oa > ob else -1
        priority = self.relations.priority
        pa, pb = priority.get(ra, 0), priority.get(rb, 0)
        if pa != pb:
            return 1 if pa > pb else -1
        return 0

    def bound(self, task: TaskState, row: IntArray, sign: int) -> None:
        """`task` was placed on its node this session (`sign` 1), or taken off it (-1)."""
        role, i = task.facts.task_role, task.node_index
        if i < 0:
            return
        if role:
            per_node = self.placed.get(role)
            if per_node is None:
                per_node = self.placed[role] = np.zeros(len(self._ledger), dtype=np.int64)
            per_node[i] += sign
        bucket = self.bucket_of.get(task.uid)
        if bucket is None:
            return
        bucket.nodes[i] += sign
        bucket.bound += sign
        if sign > 0:
            del bucket.pending[task.uid]
        else:
            bucket.pending[task.uid] = task
        bucket.request -= sign * row
        bucket.request_score -= sign * request_score(task.resreq)
