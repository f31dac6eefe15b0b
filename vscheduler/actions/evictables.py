"""The running tasks preempt and reclaim may evict, as arrays, and lower bounds per node.

Built once per action run from the session: every Running or Bound task of a job, on a node of
the snapshot, that has not opted out of eviction; BestEffort tasks too (they free a pod slot,
and are the only victims a BestEffort preemptor may take, `best_effort`). A pod opts out with
`volcano.sh/preemptable: "false"` (annotation, else label; any value Go's ParseBool does not read
as true). Without the key a pod may be evicted: Volcano's default since 1.7 (volcano#2545). A pod
whose eviction the API server refused lately (`TaskFacts.eviction_refused`: in backoff, see
`cache.refusals`) is no candidate either, so the plan takes victims that can go: it has a row,
marked `refused` and never alive, so the actions can say which pods they passed over.

Rows never move; `alive` follows evictions made and undone during the run (`kill`/`revive`).
`bounds` gives, for every node at once, the fewest victims that could free what a task lacks
there, and the lowest priority among them: the node search evaluates nodes best bound first and
stops when no remaining node can beat the plan it holds.

Owns no decision: which candidates are victims is the plugins' answer, and the session is changed
only by the caller's statements.
"""

from __future__ import annotations

import numpy as np

from vscheduler.framework.ledger import BoolArray, FloatArray, IntArray
from vscheduler.framework.session import Session
from vscheduler.framework.state import TaskState
from vscheduler.model.status import TaskStatus

EVICTABLE_STATUSES = frozenset({TaskStatus.RUNNING, TaskStatus.BOUND})
"""Volcano's PreemptableStatus: a task is a candidate only while Running or Bound."""


def is_candidate(task: TaskState) -> bool:
    """A task an eviction may take at all, whatever the plugins say."""
    return _has_row(task) and not task.facts.eviction_refused


def _has_row(task: TaskState) -> bool:
    """A candidate, or one but for a refused eviction in backoff."""
    return (
        task.job is not None
        and task.status in EVICTABLE_STATUSES
        and task.node_index >= 0
        and not task.facts.preemption_opt_out
    )


class Evictables:
    """The candidate tasks of one action run, one row each, sorted by node then pod key (and the
    tasks in eviction backoff, `refused` and never alive)."""

    def __init__(self, session: Session) -> None:
        rows = sorted(
            (t for t in session.tasks.values() if _has_row(t)),
            key=lambda t: (t.node_index, t.key),
        )
        nodes, dims = len(session.ledger), len(session.ledger.dims)
        self.tasks: list[TaskState] = rows
        self.row: dict[str, int] = {t.uid: i for i, t in enumerate(rows)}
        self.node: IntArray = np.array([t.node_index for t in rows], dtype=np.int64)
        self.req: IntArray = (
            np.stack([session.request_row(t) for t in rows])
            if rows
            else np.zeros((0, dims), dtype=np.int64)
        )
        self.priority: IntArray = np.array([t.priority for t in rows], dtype=np.int64)
        self.queue_names: list[str] = sorted({t.job.queue for t in rows if t.job is not None})
        queue_index = {name: i for i, name in enumerate(self.queue_names)}
        self.queue: IntArray = np.array(
            [queue_index[t.job.queue] for t in rows if t.job is not None], dtype=np.int64
        )
        job_keys = sorted({t.job.key for t in rows if t.job is not None})
        self.job_index: dict[str, int] = {key: i for i, key in enumerate(job_keys)}
        self.job: IntArray = np.array(
            [self.job_index[t.job.key] for t in rows if t.job is not None], dtype=np.int64
        )
        self.refused: BoolArray = np.array([t.facts.eviction_refused for t in rows], dtype=np.bool_)
        self.best_effort: BoolArray = np.array([t.facts.best_effort for t in rows], dtype=np.bool_)
        """Rows of BestEffort tasks (requesting nothing): a BestEffort preemptor's only victims."""
        self.running: BoolArray = np.array(
            [t.status is TaskStatus.RUNNING for t in rows], dtype=np.bool_
        )
        """Rows of Running tasks: reclaim's only candidates (Volcano's skips Bound ones)."""
        self.alive: BoolArray = ~self.refused
        counts = np.bincount(self.node, minlength=nodes)
        self._first: IntArray = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        self._counts: IntArray = counts.astype(np.int64)
        held = np.flatnonzero(counts)
        self._held: IntArray = held.astype(np.int64)
        """The nodes holding rows; in any node-major order their rows are contiguous, starting
        at `_starts` and `_sizes` long."""
        self._starts: IntArray = self._first[held]
        self._sizes: IntArray = self._counts[held]
        self._by_size = [np.lexsort((-self.req[:, d], self.node)) for d in range(dims)]
        self._sorted_req = [self.req[order, d] for d, order in enumerate(self._by_size)]
        self._by_priority = np.lexsort((self.priority, self.node))
        self._sorted_priority = self.priority[self._by_priority].astype(np.float64)
        self._nodes = nodes

    def __len__(self) -> int:
        return len(self.tasks)

    # --- rows -------------------------------------------------------------------------------------
    def on_node(self, node: int, mask: BoolArray) -> list[TaskState]:
        """The alive candidates on `node` that `mask` keeps, in row order."""
        start = int(self._first[node])
        stop = start + int(self._counts[node])
        return [self.tasks[r] for r in range(start, stop) if mask[r]]

    def kill(self, task: TaskState) -> None:
        """`task` was evicted (in a statement not yet settled)."""
        row = self.row.get(task.uid)
        if row is not None:
            self.alive[row] = False

    def revive(self, task: TaskState) -> None:
        """The eviction of `task` was undone."""
        row = self.row.get(task.uid)
        if row is not None:
            self.alive[row] = not self.refused[row]

    def holding(self, mask: BoolArray) -> BoolArray:
        """Per node: whether it holds an alive candidate that `mask` keeps."""
        held: BoolArray = np.bincount(self.node[mask & self.alive], minlength=self._nodes) > 0
        return held

    def queue_mask(self, name: str) -> BoolArray:
        """Rows of queue `name`."""
        if name not in self.queue_names:
            return np.zeros(len(self.tasks), dtype=np.bool_)
        mask: BoolArray = self.queue == self.queue_names.index(name)
        return mask

    def job_mask(self, key: str) -> BoolArray:
        """Rows of job `key`."""
        index = self.job_index.get(key)
        if index is None:
            return np.zeros(len(self.tasks), dtype=np.bool_)
        mask: BoolArray = self.job == index
        return mask

    # --- bounds -----------------------------------------------------------------------------------
    def bounds(
        self, mask: BoolArray, deficit: IntArray, cols: IntArray
    ) -> tuple[FloatArray, FloatArray]:
        """Per node: the fewest rows of `mask` that could cover `deficit` (nodes x dims, only
        `cols` read; inf where even all of them cannot), and the lowest priority among the rows
        (-inf where nothing is lacking, inf where no row is there)."""
        fewest = np.zeros(self._nodes, dtype=np.float64)
        feasible = np.ones(self._nodes, dtype=np.bool_)
        for d in (int(c) for c in cols):
            need = deficit[:, d]
            if not need.any():
                continue
            count, total = self._largest_first(mask, need, d)
            feasible &= total >= need
            np.maximum(fewest, count, out=fewest)
        fewest[~feasible] = np.inf
        lowest = np.full(self._nodes, np.inf)
        if len(self.tasks):
            masked = np.where(mask[self._by_priority], self._sorted_priority, np.inf)
            lowest[self._held] = np.minimum.reduceat(masked, self._starts)
        lowest[fewest == 0] = -np.inf
        return fewest, lowest

    def node_bounds(
        self, node: int, mask: BoolArray, deficit: IntArray, cols: IntArray
    ) -> tuple[float, float]:
        """`bounds` for one node (`deficit` is that node's row): the same answer, computed
        directly from the node's few rows."""
        start = int(self._first[node]) if node < len(self._first) else 0
        rows = [r for r in range(start, start + int(self._counts[node])) if mask[r]]
        fewest = 0
        for d in (int(c) for c in cols):
            need = int(deficit[d])
            if need <= 0:
                continue
            have, taken = 0, 0
            for value in sorted((int(self.req[r, d]) for r in rows), reverse=True):
                if have >= need:
                    break
                have, taken = have + value, taken + 1
            if have < need:
                return np.inf, np.inf
            fewest = max(fewest, taken)
        if fewest == 0:
            return 0.0, -np.inf
        return float(fewest), float(min(int(self.priority[r]) for r in rows))

    def _largest_first(
        self, mask: BoolArray, need: IntArray, d: int
    ) -> tuple[FloatArray, FloatArray]:
        """Per node: how many of the largest masked rows (in resource `d`) it takes to reach
        `need`, and what all of them add up to."""
        count = np.zeros(self._nodes, dtype=np.float64)
        total = np.zeros(self._nodes, dtype=np.float64)
        if not len(self.tasks):
            return count, total
        kept = mask[self._by_size[d]]
        values = self._sorted_req[d] * kept
        running = np.cumsum(values)
        starts, sizes = self._starts, self._sizes
        before_group = np.repeat(running[starts] - values[starts], sizes)
        within = running - values - before_group
        counted = kept & (within < np.repeat(need[self._held], sizes))
        count[self._held] = np.add.reduceat(counted.astype(np.int64), starts)
        total[self._held] = np.add.reduceat(values, starts)
        return count, total
