"""Placing one pending task by evicting others: the core preempt and reclaim share.

Neither action binds: whatever it places is *pipelined* (held on the node for this session),
and binding is left to a later allocate, as in Volcano (`preempt.go` `normalPreempt`,
`reclaim.go` `reclaimForTask`). For a task (the *asker*) the `Evictor`:

1. pipelines it without evicting anything when it can: its queue allows it (allocatable) and
   some candidate node fits it in future idle resources, the best-scored one (ties to the node
   listed first). Preempt considers every node; reclaim only nodes holding at least one of the
   action's candidates (a reclaimee), as Volcano's reclaim visits no other node;
2. otherwise searches for a *plan* the nodes whose predicate failures, if any, are all resolvable
   by evicting (`Placer.resolvable`, Volcano's `PredicateForPreemptAction`: kube's Unschedulable
   codes, e.g. a full pod count, host ports, inter-pod anti-affinity, a spread skew; a node
   failing one needs one victim at least): the candidates on the node that the action's mask
   keeps, ordered cheapest first (the victim order below), narrowed by the
   plugins (`select`: the preemptable or reclaimable point), then the shortest prefix of them
   whose requests, with the node's future idle, cover the task's request, less any victim the
   rest already covers. Plans rank by (victims, highest victim priority, node score descending,
   node order); nodes are visited best lower bound first and the search ends when no node left
   can beat the best plan, or once `Limits` viable plans have been compared;
3. applies the best plan in a statement of its own: evicts its victims, evicts more of the
   node's selected candidates while the task does not yet fit, re-running the predicates after
   each eviction (a queue limit can ask for more than the node does; an evicted pod frees its
   pod slot and leaves the anti-affinity domains at once), pipelines the task, and asks the
   action's `rail` about the result (the asker's placement counted). A plan that cannot
   be completed is undone and the node left out of a new search (at most `ATTEMPTS` times).

The statements of one asker job are a `Transaction`, settled as Volcano settles a job's
statement: when the job is pipelined (or ready) its evictions and pipelines are committed,
otherwise everything is discarded, so a job that still cannot run evicts nothing (Volcano PRs
#5011 and #5067); its evictions carry the plan `<action> <job key>`, which the effects carry out
all or none (`Evict.plan`). Victim order (cheapest first): within one job the reverse of the
task order; within one queue the reverse of the job order as the plugins give it, and where
they tie the reverse of the task order (Volcano's `BuildVictimsPriorityQueue` since ebbab911d:
the lower pod priority first across jobs of equal priority); across queues the reverse of the
queue order.

Must not: decide which jobs ask (`askers` and the actions do) or settle a job on its own.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence

import numpy as np

from vscheduler.actions.evictables import Evictables
from vscheduler.framework.ledger import BoolArray, FloatArray, IntArray, LedgerView
from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState, QueueState, TaskState
from vscheduler.framework.statement import Statement

Select = Callable[[TaskState, Sequence[TaskState]], tuple[TaskState, ...]]
"""The plugins' answer: which of the candidates may go (session.dispatch.select_preemptees...)."""
Rail = Callable[[TaskState, Sequence[TaskState]], bool]
"""The action's last word on a plan, asked after its evictions, before the asker is placed."""
Rank = tuple[int, float, float, int]
ATTEMPTS = 16
"""How many plans may fail to apply (a queue limit or the rail) before a task gives up; its
message then says what a search that found no plan says (no victims that would do)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Limits:
    """How many viable plans the node search compares at most, as Volcano's preempt arguments
    bound its candidate nodes: `percentage` of the nodes, at least `minimum`, at most `maximum`."""

    percentage: int = 10
    minimum: int = 1
    maximum: int = 100

    def plans(self, nodes: int) -> int:
        """The number of viable plans to compare in a cluster of `nodes` nodes."""
        return max(self.minimum, min(self.maximum, nodes * self.percentage // 100), 1)


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    """Victims on one node that make room for the asker, and the node's other selected
    candidates (cheapest first) to take if a queue limit asks for more."""

    node: int
    victims: tuple[TaskState, ...]
    spare: tuple[TaskState, ...]
    rank: Rank


@dataclasses.dataclass(slots=True)
class Memo:
    """What one job's searches keep for its later tasks of the same template: the nodes where
    no plan exists, and the bounds with the ledger position they were computed at."""

    dead: list[int] = dataclasses.field(default_factory=list)
    bounds: tuple[FloatArray, FloatArray] | None = None
    position: int = 0


class Transaction:
    """The statements of one asker job, settled together: all committed (evictions carried out,
    pipelines held for the session) when the job is ready or pipelined, all discarded
    otherwise."""

    def __init__(self, table: Evictables) -> None:
        self._table = table
        self._parts: list[tuple[Statement, list[TaskState]]] = []

    def add(self, stmt: Statement, victims: list[TaskState]) -> None:
        """One placement: the statement holding it and the tasks it evicts."""
        self._parts.append((stmt, victims))

    @property
    def victims(self) -> list[TaskState]:
        """Every task evicted so far."""
        return [v for _, victims in self._parts for v in victims]

    def settle(self, *, ready: bool, pipelined: bool) -> bool:
        """Commit or discard as the job's state says; True unless discarded."""
        if not (ready or pipelined):
            self.discard()
            return False
        for stmt, _ in self._parts:
            stmt.commit()
        return True

    def discard(self) -> None:
        """Everything is undone, last first."""
        for stmt, victims in reversed(self._parts):
            stmt.discard()
            for task in victims:
                self._table.revive(task)


class Evictor:
    """Finds and applies plans for one action run."""

    def __init__(
        self, session: Session, *, action: str, limits: Limits, simulate: bool = True
    ) -> None:
        self.session = session
        self.action = action
        self.simulate = simulate
        """Whether the plugins are told of the pods a plan takes away (`Placer.resolvable`):
        preempt's `enableTopologyAwarePreemption`; reclaim always."""
        self.table = Evictables(session)
        self._plans = limits.plans(len(session.ledger))
        self._victim_key = functools.cmp_to_key(self._compare_victims)
        self._memos: dict[tuple[str, str, int], Memo] = {}
        self._passed_over: dict[str, set[str]] = {}
        """Per asker job: the pods in eviction backoff that a failed search could otherwise
        have taken (on a node passing the predicates, within the action's mask)."""

    # --- the one entry point ----------------------------------------------------------------
    def place(
        self,
        txn: Transaction,
        task: TaskState,
        queue: QueueState,
        *,
        mask: BoolArray,
        select: Select,
        reason: str,
        rail: Rail | None = None,
        held_only: bool = False,
        memo: str = "",
    ) -> bool:
        """Pipeline `task` into `txn`, evicting only when nothing else works; `mask` keeps the
        candidates the action allows. With `held_only`, only on a node holding some candidate
        (even when nothing needs evicting). False when no plan works (nothing is left changed).

        With `memo` (the same for every call of one job and mask), nodes where a task found no
        plan are not searched again for the job's later tasks of the same template: within one
        job the plugins' answers only narrow (victims' jobs lose members, budgets are spent, the
        preemptor's share grows) and a node's room only shrinks. A task nominated to a node sees
        the room held there for it free (`Session.own_room`)."""
        with self.session.own_room(task):
            return self._place(
                txn,
                task,
                queue,
                mask=mask,
                select=select,
                reason=reason,
                rail=rail,
                held_only=held_only,
                memo=memo,
            )

    def _place(
        self,
        txn: Transaction,
        task: TaskState,
        queue: QueueState,
        *,
        mask: BoolArray,
        select: Select,
        reason: str,
        rail: Rail | None,
        held_only: bool,
        memo: str,
    ) -> bool:
        session = self.session
        pre = session.dispatch.prefilter(task)
        if pre is not None:
            self._note_attempt(task, pre.reason)
            return False
        if self._pipeline_without_evicting(txn, task, queue, mask if held_only else None):
            return True
        excluded = np.zeros(len(session.ledger), dtype=np.bool_)
        key = (memo, task.job.key if task.job else "", task.class_id)
        remembered = self._memos.setdefault(key, Memo()) if memo else Memo()
        excluded[remembered.dead] = True
        for _ in range(ATTEMPTS):
            plan = self._search(task, mask & self.table.alive, select, excluded, remembered)
            if plan is None:
                break
            if self._apply(txn, task, queue, plan, reason, rail):
                return True
            excluded[plan.node] = True
        self._note_refused(task, mask)
        self._note_attempt(task, None)
        return False

    def _note_attempt(self, task: TaskState, prefiltered: str | None) -> None:
        """Say on `task`'s message what this action found, in kube-scheduler's words for a
        failed preemption with the action's name for `preemption`: `reclaim: 0/3 nodes are
        available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for
        incoming pod.` (a node failing a predicate no eviction resolves is not helpful, every
        other node had no victims that would do). After a pre-predicate failure (`prefiltered`,
        its reason) no node is helpful, and the reason comes first, as kube-scheduler's FitError
        gives it (`0/3 nodes are available: persistentvolumeclaim "data" not found. reclaim:
        ...`). The pod's message shows it only when nothing more specific applies (allocate did
        not try it)."""
        total = len(self.session.ledger)
        if not total:
            return
        head = f"0/{total} nodes are available"
        if prefiltered is not None:
            helpful = 0
            found = f"{head}: {prefiltered.rstrip('.')}. "
        else:
            helpful = int(self.session.placer.resolvable(task, simulate=self.simulate).sum())
            found = ""
        counts = []
        if total - helpful:
            counts.append(f"{total - helpful} Preemption is not helpful for scheduling")
        if helpful:
            counts.append(f"{helpful} No preemption victims found for incoming pod")
        self.session.findings.note_attempt(
            task.uid, f"{found}{self.action}: {head}: {', '.join(sorted(counts))}."
        )

    def _note_refused(self, task: TaskState, mask: BoolArray) -> None:
        """Remember the pods in eviction backoff that `task` could have taken."""
        rows = np.flatnonzero(mask & self.table.refused)
        if not len(rows) or task.job is None:
            return
        _, ok = self.session.placer.feasible(task)
        keys = {self.table.tasks[r].key for r in rows if ok[self.table.node[r]]}
        if keys:
            self._passed_over.setdefault(task.job.key, set()).update(keys)

    def explain_refusals(self, job: JobState) -> None:
        """After `job` could not be placed: name, on its pending pods' messages, the pods its
        searches passed over because their eviction was refused lately."""
        keys = sorted(self._passed_over.get(job.key, ()))
        if not keys:
            return
        shown = ", ".join(keys[:3]) + (", ..." if len(keys) > 3 else "")
        self.session.hint_job(
            job,
            f"{self.action} passed over {len(keys)} pod(s) whose eviction a PodDisruptionBudget"
            f" refused lately ({shown}): they may be taken after a backoff",
        )

    def _pipeline_without_evicting(
        self, txn: Transaction, task: TaskState, queue: QueueState, held: BoolArray | None
    ) -> bool:
        """Pipeline `task` where it already fits, if its queue allows it (with `held`, only on
        a node holding a candidate that mask keeps)."""
        session = self.session
        if not session.dispatch.allows_allocation(queue, task):
            return False
        prefer = session.nominations.get(task.uid)
        node = session.placer.best_pipelined(task, prefer=prefer)
        if node is not None and held is not None:  # the node table only when some node fits
            node = session.placer.best_pipelined(task, self.table.holding(held), prefer)
        if node is None:
            return False
        stmt = session.statement()
        stmt.pipeline(task, node)
        txn.add(stmt, [])
        session.findings.record_schedulable(task)
        return True

    # --- searching ----------------------------------------------------------------------------
    def _search(
        self,
        task: TaskState,
        mask: BoolArray,
        select: Select,
        excluded: BoolArray,
        memo: Memo,
    ) -> Plan | None:
        placer = self.session.placer
        c, ok = placer.feasible(task)
        candidates = placer.resolvable(task, simulate=self.simulate)
        ledger = self.session.ledger
        deficit = np.zeros_like(ledger.future)
        deficit[:, c.cols] = np.maximum(c.req[c.cols] - ledger.future[:, c.cols], 0)
        fewest, lowest = self._bounds(memo, mask, deficit, c.cols)
        fewest, blocked = _blocked(ledger, ok, fewest)
        nodes = np.flatnonzero(candidates & ~excluded & np.isfinite(fewest))
        if not len(nodes):
            return None
        score = c.score

        def bound(i: int) -> Rank:
            return (int(fewest[i]), float(lowest[i]), float(-score[i]), i)

        def plan_on(i: int) -> Plan | None:
            plan = self._plan(
                task, i, mask, select, deficit[i], c.cols, float(score[i]), slot=bool(blocked[i])
            )
            if plan is None:
                memo.dead.append(i)
            return plan

        # The node of the best bound first: a plan meeting its own bound beats every other node.
        first = _best_bound(nodes, fewest, lowest, score)
        best = plan_on(first)
        if best is not None and best.rank <= bound(first):
            return best
        order = nodes[np.lexsort((nodes, -score[nodes], lowest[nodes], fewest[nodes]))]
        viable = int(best is not None)
        for i in (int(n) for n in order):
            if i == first:
                continue
            if best is not None and best.rank <= bound(i):
                break
            plan = plan_on(i)
            if plan is None:
                continue
            viable += 1
            if best is None or plan.rank < best.rank:
                best = plan
            if viable >= self._plans:
                break
        return best

    def _bounds(
        self, memo: Memo, mask: BoolArray, deficit: IntArray, cols: IntArray
    ) -> tuple[FloatArray, FloatArray]:
        """The table's bounds, recomputed only for the nodes changed since the memo's last
        search (the mask's fixed part is the memo's; its alive part and every node's room change
        only on nodes the ledger logs)."""
        ledger = self.session.ledger
        position = ledger.log_position
        if memo.bounds is not None:
            changed = set(ledger.changed_since(memo.position))
            if len(changed) * 8 < len(ledger):
                fewest, lowest = memo.bounds
                for node in changed:
                    fewest[node], lowest[node] = self.table.node_bounds(
                        node, mask, deficit[node], cols
                    )
                memo.position = position
                return fewest, lowest
        memo.bounds = self.table.bounds(mask, deficit, cols)
        memo.position = position
        return memo.bounds

    def _plan(
        self,
        task: TaskState,
        node: int,
        mask: BoolArray,
        select: Select,
        deficit: IntArray,
        cols: IntArray,
        score: float,
        *,
        slot: bool,
    ) -> Plan | None:
        """The node's best plan (`slot`: the node lacks a pod slot or fails a resolvable
        predicate, so one victim at least).
        Plugins that allow only so many victims per job (gang's minMember) spend that allowance
        in the order they are asked; when what they allowed is not enough but they turned some
        candidate down, they are asked again with the largest candidates first."""
        candidates = sorted(self.table.on_node(node, mask), key=self._victim_key)
        if not candidates:
            return None
        need = deficit[cols]
        chosen = self._chosen(select(task, candidates), candidates)
        best = self._prefix(node, chosen, need, cols, score, slot)
        if best is None and chosen and len(chosen) < len(candidates) and need.any():
            size = {t.uid: self._share_of_need(t, need, cols) for t in candidates}
            largest = sorted(candidates, key=lambda t: -size[t.uid])
            best = self._prefix(
                node, self._chosen(select(task, largest), candidates), need, cols, score, slot
            )
        return best

    @staticmethod
    def _chosen(answer: Sequence[TaskState], candidates: Sequence[TaskState]) -> list[TaskState]:
        """The plugins' answer, in the candidates' (cheapest first) order."""
        allowed = {t.uid for t in answer}
        return [t for t in candidates if t.uid in allowed]

    def _share_of_need(self, task: TaskState, need: IntArray, cols: IntArray) -> float:
        row = self.table.req[self.table.row[task.uid]][cols]
        wanted = need > 0
        return float(np.minimum(row[wanted] / need[wanted], 1.0).sum())

    def _prefix(
        self,
        node: int,
        selected: list[TaskState],
        need: IntArray,
        cols: IntArray,
        score: float,
        slot: bool,
    ) -> Plan | None:
        """The shortest prefix of `selected` covering `need`, less any victim the others
        already cover (tried from the most expensive down); with `slot`, one victim at least
        (the cheapest), the others kept as spare to take until the predicates pass."""
        if not selected:
            return None
        rows = self.table.req[[self.table.row[t.uid] for t in selected]][:, cols]
        covered = np.cumsum(rows, axis=0) >= need
        enough = np.flatnonzero(covered.all(axis=1)) if need.any() else np.array([-1])
        if not len(enough):
            return None
        prefix = list(range(int(enough[0]) + 1))
        for k in reversed(range(len(prefix))):
            rest = [j for j in prefix if j != k]
            if (rows[rest].sum(axis=0) >= need).all():
                prefix = rest
        if slot and not prefix:
            prefix = [0]
        victims = tuple(selected[j] for j in prefix)
        spare = tuple(t for j, t in enumerate(selected) if j not in prefix)
        highest = max((float(v.priority) for v in victims), default=float("-inf"))
        return Plan(node, victims, spare, (len(victims), highest, -score, node))

    # --- applying -----------------------------------------------------------------------------
    def _apply(
        self,
        txn: Transaction,
        task: TaskState,
        queue: QueueState,
        plan: Plan,
        reason: str,
        rail: Rail | None,
    ) -> bool:
        stmt = self.session.statement()
        evicted: list[TaskState] = []
        key = task.job.key if task.job is not None else task.key
        for victim in plan.victims:
            self._evict(stmt, victim, reason, key, evicted)
        spare = list(plan.spare)
        while not self._fits(task, queue, plan.node):
            if not spare:
                break
            self._evict(stmt, spare.pop(0), reason, key, evicted)
        if len(evicted) > max(len(plan.victims), 1) and self._fits(task, queue, plan.node):
            stmt, evicted = self._reprieve(stmt, task, queue, plan.node, evicted, reason, key)
        if not self._fits(task, queue, plan.node):
            self._undo(stmt, evicted)
            return False
        stmt.pipeline(task, plan.node)
        if rail is not None and not rail(task, [*txn.victims, *evicted]):
            self._undo(stmt, evicted)
            return False
        # Not recorded as schedulable: room that needs victims is no node's room as the cluster
        # stands, so if the job is discarded the task keeps the nodes' verdict (Volcano counts a
        # pipelined task Unschedulable).
        txn.add(stmt, evicted)
        return True

    def _reprieve(
        self,
        stmt: Statement,
        task: TaskState,
        queue: QueueState,
        node: int,
        evicted: list[TaskState],
        reason: str,
        key: str,
    ) -> tuple[Statement, list[TaskState]]:
        """Victims taken one by one until the task fitted (past the plan: the predicates or a
        queue limit asked for more) are spared again where the task fits without them, the
        most expensive first (kube's reprieve): an anti-affine pod taken last does not leave
        the cheaper pods evicted before it gone for nothing."""
        kept = list(evicted)
        for victim in reversed(evicted):
            self._undo(stmt, kept)
            trial = [v for v in kept if v is not victim]
            stmt = self.session.statement()
            done: list[TaskState] = []
            for v in trial:
                self._evict(stmt, v, reason, key, done)
            if self._fits(task, queue, node):
                kept = trial
                continue
            self._undo(stmt, done)
            stmt = self.session.statement()
            done = []
            for v in kept:
                self._evict(stmt, v, reason, key, done)
        return stmt, kept

    def _undo(self, stmt: Statement, evicted: list[TaskState]) -> None:
        stmt.discard()
        for victim in evicted:
            self.table.revive(victim)

    def _evict(
        self, stmt: Statement, victim: TaskState, reason: str, plan: str, evicted: list[TaskState]
    ) -> None:
        stmt.evict(victim, reason, action=self.action, plan=f"{self.action} {plan}")
        self.table.kill(victim)
        evicted.append(victim)

    def _fits(self, task: TaskState, queue: QueueState, node: int) -> bool:
        c, ok = self.session.placer.feasible(task)
        return (
            bool(ok[node])
            and bool(c.fit_future[node])
            and self.session.dispatch.allows_allocation(queue, task)
        )

    # --- victim order -------------------------------------------------------------------------
    def _compare_victims(self, a: TaskState, b: TaskState) -> int:
        """Cheapest first: the reverse of the order in which the scheduler would place them."""
        dispatch = self.session.dispatch
        ja, jb = a.job, b.job
        if ja is None or jb is None or ja is jb:
            return -dispatch.compare_tasks(a, b)
        if ja.queue != jb.queue:
            qa, qb = self.session.queues.get(ja.queue), self.session.queues.get(jb.queue)
            if qa is not None and qb is not None:
                return -dispatch.compare_queues(qa, qb)
        return -(dispatch.compare_jobs_by_plugins(ja, jb) or dispatch.compare_tasks(a, b))


def _best_bound(nodes: IntArray, fewest: FloatArray, lowest: FloatArray, score: FloatArray) -> int:
    """The node of `nodes` with the smallest (fewest, lowest, -score, index), in linear time."""
    tier = nodes[fewest[nodes] == fewest[nodes].min()]
    tier = tier[lowest[tier] == lowest[tier].min()]
    return int(tier[int(np.argmax(score[tier]))])


def _blocked(ledger: LedgerView, ok: BoolArray, fewest: FloatArray) -> tuple[FloatArray, BoolArray]:
    """The nodes needing one victim at least (without a pod slot, or failing a resolvable
    predicate), and the bound `fewest` raised to 1 there."""
    blocked: BoolArray = ~ok
    if ledger.full_future:
        blocked |= ledger.pods_free_future <= 0
    if blocked.any():
        fewest = np.where(blocked, np.maximum(fewest, 1.0), fewest)
    return fewest, blocked
