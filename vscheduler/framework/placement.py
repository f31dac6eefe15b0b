"""Finding a node for a task, fast: per-class, incrementally maintained node evaluations.

Tasks with equal `TaskFacts.template_key()` form an equivalence class. For each class the
session keeps, over all nodes: whether every predicate passes, whether the request fits the
node's idle and future-idle resources, and the summed node-order score. The first task of a
class computes these for every node at once (vectorised); later tasks recompute only the nodes
the ledger logged as changed since: when that is one node (the one the last task took, the
common case) in Python numbers, as the array operations' fixed cost would be most of a decision;
plugins may answer one node in scalars too, with the same floats. Plugins must honour that
contract: a predicate's or a node-order score's answer for a node depends only on the task's
template and on that node's state. A plugin that cannot promise it sets `node_local = False`
and is re-evaluated in full for every task; batch node-order scorers are always evaluated over
the feasible set. A class evaluated while a plugin raised about its task is not kept: the next
task of the class is evaluated afresh.

Every task asks one pod slot, as every task asks one `pods` in Volcano (`api/pod_info.go`): it
fits idle where the node holds fewer pods than its limit (pipelined ones counted), and fits
future idle where it does once its releasing pods are gone, with or without the predicates
plugin; evicting any pod frees a slot for a pipelined task at once.

Choosing among feasible nodes follows Volcano: nodes whose idle fits come first; only if none
does, nodes whose future idle fits (the task is then pipelined). The highest total score wins,
ties going to the node listed first. Every feasible node is scored (the incremental caches make
that cheap), so the adaptive `percentageOfNodesToFind` sampling of kube-scheduler is not needed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import cast

import numpy as np

from vscheduler.framework.dispatch import Hook
from vscheduler.framework.ledger import BoolArray, FloatArray, IntArray, Ledger
from vscheduler.framework.results import Code, Status
from vscheduler.framework.state import TaskState

RESOURCE_FIT = "NodeResourcesFit"


@dataclasses.dataclass(slots=True)
class ClassEval:
    """The cached evaluation of one equivalence class over every node."""

    req: IntArray
    cols: IntArray
    need: IntArray
    """The request with unrequested resources at the int64 minimum, so a whole-row compare
    checks only the resources the task names."""
    synced: int
    pred_ok: BoolArray
    fit_idle: BoolArray
    fit_future: BoolArray
    score: FloatArray
    idle_score: FloatArray
    """score where every predicate passes and idle fits, -inf elsewhere."""
    future_score: FloatArray
    """score where every predicate passes and future idle fits, -inf elsewhere."""
    batch: tuple[Hook, ...] = ()
    """The batch scorers with an opinion on this class (asked once, over every node)."""
    wants: tuple[tuple[int, int], ...] = ()
    """(column, amount) of each resource requested: `need` for one node in Python numbers."""


@dataclasses.dataclass(frozen=True, slots=True)
class FitFailure:
    """Why a task found no node, captured at the moment it failed."""

    prefilter: Status | None
    pred_ok: BoolArray
    short: BoolArray
    """short[i, k]: node i's future idle lacks the k-th requested resource (the last: a pod
    slot, which every task asks)."""
    short_names: tuple[str, ...]
    within: BoolArray | None = None
    """The nodes the task was tried on (a HyperNode's), or None: every node."""
    domain: str = ""
    """The HyperNode the task was tried in, or empty (every node: the cluster's top)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Choice:
    """Where a task goes, and whether it fits now (allocate) or after releases (pipeline)."""

    node: int
    fits_idle: bool


class Placer:
    """Evaluates nodes for tasks, class by class."""

    def __init__(
        self,
        ledger: Ledger,
        *,
        filters: Sequence[Hook],
        scorers: Sequence[Hook],
        batch_scorers: Sequence[Hook],
        node_local: dict[str, bool],
        explainers: dict[str, Callable[..., object]],
        report: Callable[[Hook, str, Exception, TaskState], None],
        failed_tasks: Mapping[str, str] | None = None,
        resolvers: Mapping[str, Callable[[TaskState, IntArray, bool], object]] | None = None,
        simulators: frozenset[str] = frozenset(),
        node_filters: Mapping[str, Callable[[TaskState, int], object]] | None = None,
        node_scorers: Mapping[str, Callable[[TaskState, int], object]] | None = None,
    ) -> None:
        self.ledger = ledger
        self.local_filters = [h for h in filters if node_local.get(h.plugin, True)]
        self.global_filters = [h for h in filters if not node_local.get(h.plugin, True)]
        self.local_scorers = [h for h in scorers if node_local.get(h.plugin, True)]
        ones, scalar = node_filters or {}, node_scorers or {}
        self._filters_one = [(h, ones.get(h.plugin)) for h in self.local_filters]
        """Each local predicate with its plugin's predicateNode answer, if it serves one."""
        self._scorers_one = [(h, scalar.get(h.plugin)) for h in self.local_scorers]
        """Each local nodeOrder hook with its plugin's nodeOrderNode answer, if it serves one."""
        self.global_scorers = [h for h in scorers if not node_local.get(h.plugin, True)]
        self.batch_scorers = list(batch_scorers)
        self.filters = list(filters)
        self.explainers = explainers
        self.resolvers: Mapping[str, Callable[[TaskState, IntArray, bool], object]] = (
            resolvers or {}
        )
        """Per plugin, its predicateResolvable answer (`resolvable`)."""
        self.simulators = simulators
        """The plugins an eviction search tells of the pods it takes away (`resolvable`)."""
        self.report = report
        """Where a raising plugin is recorded (the dispatcher's error list)."""
        self.failed_tasks: Mapping[str, str] = failed_tasks if failed_tasks is not None else {}
        """Tasks a plugin raised about (the dispatcher's): `choose` finds them no node."""
        self._classes: dict[int, ClassEval] = {}
        self._all: IntArray = np.arange(len(ledger), dtype=np.int64)

    # --- the cache ----------------------------------------------------------------------------
    def _evaluate(self, task: TaskState) -> ClassEval:
        cached = self._classes.get(task.class_id)
        ledger = self.ledger
        if cached is None:
            req = ledger.vector(task.resreq)
            count = len(ledger)
            cached = ClassEval(
                req=req,
                cols=np.flatnonzero(req),
                need=np.where(req > 0, req, np.iinfo(np.int64).min),
                synced=ledger.log_position,
                pred_ok=np.zeros(count, dtype=np.bool_),
                fit_idle=np.zeros(count, dtype=np.bool_),
                fit_future=np.zeros(count, dtype=np.bool_),
                score=np.zeros(count, dtype=np.float64),
                idle_score=np.full(count, -np.inf),
                future_score=np.full(count, -np.inf),
            )
            cached.wants = tuple((k, v) for k, v in enumerate(req.tolist()) if v > 0)
            self._refresh(cached, task, self._all)
            cached.batch = tuple(
                h for h in self.batch_scorers if self._opinion(h, task, self._all) is not None
            )
            self._classes[task.class_id] = cached
        elif cached.synced != ledger.log_position:
            changed = ledger.changed_since(cached.synced)
            rows = set(changed) if len(changed) * 4 < len(ledger) else None
            if rows is None:
                self._refresh(cached, task, self._all)
            elif len(rows) == 1:  # the common case: the node the last task took
                self._refresh_one(cached, task, changed[0])
            else:
                self._refresh(cached, task, np.array(sorted(rows), dtype=np.int64))
            cached.synced = ledger.log_position
        if task.uid in self.failed_tasks:  # a plugin raised: its answers are not the class's
            self._classes.pop(task.class_id, None)
        return cached

    def _refresh(self, c: ClassEval, task: TaskState, idx: IntArray) -> None:
        ok = self._passes(self.local_filters, task, idx)
        c.pred_ok[idx] = ok
        ledger, need = self.ledger, c.need
        c.fit_idle[idx] = (ledger.idle[idx] >= need).all(axis=1)
        c.fit_future[idx] = (ledger.future[idx] >= need).all(axis=1)
        if ledger.full_now:  # no node full: every slot check passes
            c.fit_idle[idx] &= ledger.pods_free[idx] > 0
        if ledger.full_future:
            c.fit_future[idx] &= ledger.pods_free_future[idx] > 0
        total = np.zeros(len(idx), dtype=np.float64)
        for hook in self.local_scorers:
            total = total + self._score(hook, task, idx)
        c.score[idx] = total
        c.idle_score[idx] = np.where(ok & c.fit_idle[idx], total, -np.inf)
        c.future_score[idx] = np.where(ok & c.fit_future[idx], total, -np.inf)

    def _refresh_one(self, c: ClassEval, task: TaskState, i: int) -> None:
        """`_refresh` of the one node `i`, in scalars: the same answers without the fixed cost
        of some thirty array operations (most of a decision's time at thousands of nodes).
        A plugin serving predicateNode or nodeOrderNode answers in scalars; the others are
        asked about `[i]`."""
        idx = np.array((i,), dtype=np.int64)
        ok = True
        for hook, one in self._filters_one:
            try:
                if one is not None:
                    passed = bool(one(task, i))
                else:
                    passed = bool(np.asarray(hook.fn(task, idx), dtype=np.bool_)[0])
            except Exception as exc:
                self.report(hook, "predicate", exc, task)
                passed = False
            ok = ok and passed
        ledger = self.ledger
        idle, future = ledger.idle, ledger.future
        fit_idle = all(idle.item(i, k) >= v for k, v in c.wants) and (
            not ledger.full_now or ledger.pods_free.item(i) > 0
        )
        fit_future = all(future.item(i, k) >= v for k, v in c.wants) and (
            not ledger.full_future or ledger.pods_free_future.item(i) > 0
        )
        total = 0.0
        for hook, scalar in self._scorers_one:
            try:
                if scalar is not None:
                    score = scalar(task, i)
                    total = total + (0.0 if score is None else float(cast(float, score)))
                    continue
                result = hook.fn(task, idx)
            except Exception as exc:
                self.report(hook, "nodeOrder", exc, task)
                result = None  # a raising scorer scores 0, as in `_opinion`
            total = total + (0.0 if result is None else np.asarray(result, np.float64).item(0))
        c.pred_ok[i] = ok
        c.fit_idle[i] = fit_idle
        c.fit_future[i] = fit_future
        c.score[i] = total
        c.idle_score[i] = total if ok and fit_idle else -np.inf
        c.future_score[i] = total if ok and fit_future else -np.inf

    def _passes(self, hooks: Sequence[Hook], task: TaskState, idx: IntArray) -> BoolArray:
        ok = np.ones(len(idx), dtype=np.bool_)
        for hook in hooks:
            try:
                ok &= np.asarray(hook.fn(task, idx), dtype=np.bool_)
            except Exception as exc:
                self.report(hook, "predicate", exc, task)
                ok[:] = False
        return ok

    def _opinion(self, hook: Hook, task: TaskState, idx: IntArray) -> FloatArray | None:
        """A scorer's scores of `idx`, None for no opinion (a raising scorer scores 0)."""
        try:
            result = hook.fn(task, idx)
        except Exception as exc:
            self.report(hook, "nodeOrder", exc, task)
            return np.zeros(len(idx), dtype=np.float64)
        return None if result is None else np.asarray(result, dtype=np.float64)

    def _score(self, hook: Hook, task: TaskState, idx: IntArray) -> FloatArray:
        result = self._opinion(hook, task, idx)
        return np.zeros(len(idx), dtype=np.float64) if result is None else result

    # --- choosing -----------------------------------------------------------------------------
    def feasible(self, task: TaskState) -> tuple[ClassEval, BoolArray]:
        """The class evaluation and the mask of nodes passing every predicate."""
        c = self._evaluate(task)
        ok = c.pred_ok
        if self.global_filters:
            ok = ok & self._passes(self.global_filters, task, self._all)
        return c, ok

    def resolvable(self, task: TaskState, *, simulate: bool = True) -> BoolArray:
        """The nodes preempt and reclaim may try for `task` (Volcano's
        `PredicateForPreemptAction`): every predicate passes, or fails only in ways its plugin
        calls resolvable (predicateResolvable); a plugin without that answer resolves nothing.
        Resources aside. Nothing for a task a plugin raised about. `simulate`: whether the
        search tells the plugins of the pods it takes away, as Volcano's topology-aware
        preemption does, and then only those of `simulators` (Volcano calls a plugin's
        SimulateRemoveTask only when its entry enables preemptable or allocatable)."""
        _c, ok = self.feasible(task)
        failing = np.flatnonzero(~ok)
        if not self.resolvers or task.uid in self.failed_tasks or not len(failing):
            return ok
        passes = np.ones(len(failing), dtype=np.bool_)
        for hook in self.filters:
            resolver = self.resolvers.get(hook.plugin)
            try:
                if resolver is None:
                    passes &= np.asarray(hook.fn(task, failing), dtype=np.bool_)
                else:
                    simulated = simulate and hook.plugin in self.simulators
                    passes &= np.asarray(resolver(task, failing, simulated), dtype=np.bool_)
            except Exception as exc:
                self.report(hook, "predicate", exc, task)
                return ok
        result = ok.copy()
        result[failing] = passes
        return result

    def choose(
        self,
        task: TaskState,
        prefer: int | None = None,
        within: BoolArray | None = None,
        domain: str = "",
    ) -> Choice | FitFailure:
        """The best node for `task`, or why there is none (none for a task a plugin raised
        about, now or earlier in the session). `prefer` (the node nominated for the task) is
        taken when it passes every predicate and fits now, or when the task fits nowhere now
        and it fits in the future (kube-scheduler tries the nominated node first). `within`:
        only those nodes are tried (HyperNode `domain`'s, for a job with a network topology)."""
        if not len(self.ledger):
            return self.failure(task, None, None, None)  # no node at all
        c = self._evaluate(task)
        if within is None:
            choice = self._choose(task, c)
        else:
            choice = self._choose_slow(task, c, within)
            if isinstance(choice, FitFailure):
                choice = dataclasses.replace(choice, within=within.copy(), domain=domain)
        failed = self.failed_tasks.get(task.uid)
        if failed is not None:
            return self.failure(task, None, None, Status(Code.ERROR, failed))
        return self._preferred(task, c, choice, prefer, within)

    def _preferred(
        self,
        task: TaskState,
        c: ClassEval,
        choice: Choice | FitFailure,
        prefer: int | None,
        within: BoolArray | None,
    ) -> Choice | FitFailure:
        """`choice`, or the nominated node `prefer` instead when it passes every predicate (and
        is within `within`) and fits now, or fits in the future while `choice` does too."""
        if prefer is None or not isinstance(choice, Choice) or choice.node == prefer:
            return choice
        _c, ok = self.feasible(task)
        if within is not None:
            ok = ok & within
        if ok[prefer] and c.fit_idle[prefer]:
            return Choice(prefer, True)
        if not choice.fits_idle and ok[prefer] and c.fit_future[prefer]:
            return Choice(prefer, False)
        return choice

    def _choose(self, task: TaskState, c: ClassEval) -> Choice | FitFailure:
        if self.global_filters or self.global_scorers or c.batch:
            return self._choose_slow(task, c)
        for scores, fits_idle in ((c.idle_score, True), (c.future_score, False)):
            best = int(scores.argmax())
            if scores[best] > -np.inf:
                return Choice(best, fits_idle)
        return self.failure(task, c, c.pred_ok, None)

    def _choose_slow(
        self, task: TaskState, c: ClassEval, within: BoolArray | None = None
    ) -> Choice | FitFailure:
        """The general path, with plugins that look across nodes, or among the nodes of
        `within` only."""
        ok = c.pred_ok
        if self.global_filters:
            ok = ok & self._passes(self.global_filters, task, self._all)
        among = ok if within is None else ok & within
        for mask, fits_idle in ((among & c.fit_idle, True), (among & c.fit_future, False)):
            if not mask.any():
                continue
            return Choice(self._best(task, c, mask), fits_idle)
        return self.failure(task, c, ok, None)

    def best_pipelined(
        self, task: TaskState, among: BoolArray | None = None, prefer: int | None = None
    ) -> int | None:
        """The node preempt and reclaim pipeline `task` onto without evicting: `prefer` (the
        node nominated for it) when it is one of them, else the best-scored of the nodes passing
        every predicate whose future idle fits it (within `among`), or None (also for a task a
        plugin raised about)."""
        c, ok = self.feasible(task)
        mask = ok & c.fit_future
        if among is not None:
            mask &= among
        if task.uid in self.failed_tasks or not mask.any():
            return None
        if prefer is not None and mask[prefer]:
            return prefer
        return self._best(task, c, mask)

    def _best(self, task: TaskState, c: ClassEval, mask: BoolArray) -> int:
        idx = np.flatnonzero(mask)
        total = c.score[idx].copy()
        for hook in (*self.global_scorers, *c.batch):
            total += self._score(hook, task, idx)
        return int(idx[int(total.argmax())])

    def failure(
        self, task: TaskState, c: ClassEval | None, ok: BoolArray | None, pre: Status | None
    ) -> FitFailure:
        """A record of why `task` fits nowhere (computed now; turned into text at close)."""
        ledger = self.ledger
        if c is None or ok is None:
            empty = np.zeros((len(ledger), 0), dtype=np.bool_)
            return FitFailure(pre, np.zeros(len(ledger), dtype=np.bool_), empty, ())
        future = ledger.future_idle()[:, c.cols]
        slots = ledger.pods_free_future <= 0
        short = np.column_stack((future < c.req[c.cols], slots))
        names = (*(ledger.dims[int(k)] for k in c.cols), "pods")
        return FitFailure(None, ok.copy(), short, names)

    # --- explaining ---------------------------------------------------------------------------
    def node_status(self, task: TaskState, i: int) -> Status | None:
        """The first predicate failing `task` on node `i` (for messages and --explain)."""
        one = np.array([i], dtype=np.int64)
        for hook in self.filters:
            why = self.explainers.get(hook.plugin)
            try:
                passed = bool(np.asarray(hook.fn(task, one))[0])
                if passed:
                    continue
                status = why(task, i) if why is not None else None
            except Exception as exc:
                self.report(hook, "predicate", exc, task)
                return Status(Code.ERROR, f"plugin {hook.plugin} failed: {exc}", hook.plugin)
            if isinstance(status, Status):
                return dataclasses.replace(status, plugin=hook.plugin)
            return Status(Code.UNSCHEDULABLE, f"node(s) rejected by {hook.plugin}", hook.plugin)
        return None

    def scores(self, task: TaskState, i: int) -> tuple[dict[str, float], dict[str, float]]:
        """Each scoring plugin's score of node `i`: (nodeOrder, batchNodeOrder)."""
        one = np.array([i], dtype=np.int64)
        node_order = {
            h.plugin: float(self._score(h, task, one)[0])
            for h in (*self.local_scorers, *self.global_scorers)
        }
        _c, ok = self.feasible(task)
        idx = np.flatnonzero(ok) if ok.any() else self._all
        batch: dict[str, float] = {}
        for h in self.batch_scorers:
            values = self._score(h, task, idx)
            where = np.flatnonzero(idx == i)
            batch[h.plugin] = float(values[where[0]]) if len(where) else 0.0
        return node_order, batch
