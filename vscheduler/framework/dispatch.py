"""The dispatcher: one method per extension point, each applying its combination rule once.

Built at session open from the policy's tiers: a plugin instance serves a point when it has the
point's method and the point's flag is enabled in its policy entry (a loaded policy's plugin
classes were checked once, at load, to implement exactly their points' Protocols:
`framework.contract`; nothing is checked per call). Exceptions raised inside a
hook never escape: they are recorded on `errors` and the hook counts as the conservative answer
(a failed filter, a REJECT vote, "not ready", an order of 0).

A hook that raises while asked about one task (`TASK_POINTS`: pre-predicates, predicates, scores,
the queue's allocatable and preemptive votes, victim selection for a preemptor, best node) is
recorded with that task, and the task is put in `failed_tasks`: the actions skip it for the rest
of the session and it is reported pending with the plugin's error (`task_error`). The other
tasks are scheduled as usual. A notification hook (`allocateEvent`, `deallocateEvent`) that
raises is recorded with its task, but the decision it was told of stands.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import Final, Protocol

from vscheduler.framework import points
from vscheduler.framework.protocols import EvictionContext
from vscheduler.framework.results import ABSTAIN, Abstain, Code, Refusal, Status, Vote
from vscheduler.framework.state import JobState, QueueState, TaskState


class EnabledFlags(Protocol):
    """What the dispatcher needs of a policy plugin entry."""

    @property
    def name(self) -> str:
        """The plugin name."""
        ...

    def is_enabled(self, flag: str) -> bool:
        """Whether `flag` is on for this entry (Volcano's defaults apply)."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class Hook:
    """One plugin's method serving one point."""

    plugin: str
    fn: Callable[..., object]


Tiers = tuple[tuple[Hook, ...], ...]


TASK_POINTS: Final = frozenset(
    {
        "prePredicate",
        "predicate",
        "nodeOrder",
        "batchNodeOrder",
        "allocatable",
        "preemptive",
        "preemptable",
        "reclaimable",
        "bestNode",
    }
)
"""Points whose hook is asked about one task: a hook raising there skips that task."""


@dataclasses.dataclass(frozen=True, slots=True)
class PluginError:
    """A plugin hook raised: which plugin, at which point, and what (and about which pod)."""

    plugin: str
    point: str
    message: str
    task: str = ""
    """`namespace/name` of the pod the hook was asked about, or empty."""

    def __str__(self) -> str:
        """`plugin point: message`, then `(pod ns/name)` when about one pod."""
        text = f"{self.plugin} {self.point}: {self.message}"
        return f"{text} (pod {self.task})" if self.task else text


def task_error(error: PluginError) -> str:
    """The pending message of a task skipped because a plugin raised about it."""
    return f"plugin {error.plugin} failed at {error.point} for this pod: {error.message}"


Plan = tuple[tuple[str, Tiers | None, tuple[tuple[int, int, str, str], ...]], ...]
"""Per point: its name; its tiers when no plugin serves it (empty ones), else None; and for
each plugin serving it (tier, the plugin's place in the tier, its name, the point's method)."""

_PLANS: collections.OrderedDict[tuple[object, ...], tuple[Plan, object]] = collections.OrderedDict()
"""The plans of the last `_PLANS_HELD` shapes of tiers, each kept with the tiers it was made
from (their options stay alive, so the ids in its key stay theirs)."""
_PLANS_HELD: Final = 16
_PLANS_LOCK = threading.Lock()


def collect(tiers: Sequence[Sequence[tuple[EnabledFlags, object]]]) -> dict[str, Tiers]:
    """Per point, the hooks serving it, tier by tier, in policy order: a plugin serves a point
    when it has the point's method and its entry enables the point's flag.

    Which plugins serve a point depends only on their entries and their classes (a class
    serves exactly the points it declares, checked at load: `framework.contract`), so that is
    worked out once per shape of tiers (the same entries, plugins of the same classes: a
    policy's every session, but where a plugin's class varies with the session) and each
    session only binds the methods. A plugin object holding a point's method of its own (a
    stand-in in a test) is asked afresh."""
    key = tuple(tuple((id(option), type(plugin)) for option, plugin in tier) for tier in tiers)
    with _PLANS_LOCK:
        held = _PLANS.get(key)
        if held is not None:
            _PLANS.move_to_end(key)
    if any(_own_hooks(plugin) for tier in tiers for _, plugin in tier):
        held = (_plan(tiers), tiers)  # this object's alone: not kept
    elif held is None:
        held = (_plan(tiers), tiers)
        with _PLANS_LOCK:
            _PLANS[key] = held
            if len(_PLANS) > _PLANS_HELD:
                _PLANS.popitem(last=False)
    out: dict[str, Tiers] = {}
    for name, unserved, places in held[0]:
        if unserved is not None:
            out[name] = unserved
            continue
        by_tier: list[list[Hook]] = [[] for _ in tiers]
        for t, i, plugin, method in places:
            by_tier[t].append(Hook(plugin, getattr(tiers[t][i][1], method)))
        out[name] = tuple(map(tuple, by_tier))
    return out


def _plan(tiers: Sequence[Sequence[tuple[EnabledFlags, object]]]) -> Plan:
    plan = []
    for point in points.POINTS:
        places = tuple(
            (t, i, option.name, point.method)
            for t, tier in enumerate(tiers)
            for i, (option, plugin) in enumerate(tier)
            if getattr(plugin, point.method, None) is not None
            and (point.flag is None or option.is_enabled(point.flag))
        )
        plan.append((point.name, None if places else tuple(() for _ in tiers), places))
    return tuple(plan)


_METHODS: Final = frozenset(point.method for point in points.POINTS)


def _own_hooks(plugin: object) -> bool:
    """Whether the plugin object itself (not its class) holds a point's method."""
    own: dict[str, object] | None = getattr(plugin, "__dict__", None)
    return own is not None and not _METHODS.isdisjoint(own)


class Dispatcher:
    """Calls the hooks of every point and combines their answers.

    With a `timer` (seconds, e.g. `vscheduler.clock.perf_counter`; the framework reads no clock
    of its own), each plugin's `sessionClose` hook is timed into `close_seconds` (Volcano's
    `OnSessionClose` latency). The hooks asked per task or per node are not timed: they are the
    hot path, and Volcano times only session open and close per plugin."""

    def __init__(
        self,
        tiers: Sequence[Sequence[tuple[EnabledFlags, object]]],
        timer: Callable[[], float] | None = None,
    ) -> None:
        self.tiers: dict[str, Tiers] = collect(tiers)
        self._timer = timer
        self.close_seconds: dict[str, float] = {}
        """Plugin -> seconds its `sessionClose` hook took (only with a `timer`)."""
        self.errors: list[PluginError] = []
        order, keys = self.hooks("jobOrder"), self.hooks("jobOrderKey")
        self._job_keys: tuple[Hook, ...] | None = (
            keys if [h.plugin for h in order] == [h.plugin for h in keys] else None
        )
        """The jobOrderKey hooks, while they stand for the jobOrder ones (see `job_key`)."""
        self.failed_tasks: dict[str, str] = {}
        """Task uid -> `task_error` of the first hook that raised about it (at `TASK_POINTS`)."""

    def hooks(self, point: str) -> tuple[Hook, ...]:
        """Every hook of `point`, tiers flattened."""
        return tuple(h for tier in self.tiers[point] for h in tier)

    def has(self, point: str) -> bool:
        """Whether any plugin serves `point`."""
        return any(self.tiers[point])

    def record_failure(
        self, hook: Hook, point: str, exc: Exception, task: TaskState | None = None
    ) -> None:
        """Note that `hook` raised at `point`, about `task` if given (the cycle goes on)."""
        self._failed(hook, point, exc, task)

    def _failed(self, hook: Hook, point: str, exc: Exception, *args: object) -> None:
        task = next((a for a in args if isinstance(a, TaskState)), None)
        error = PluginError(
            hook.plugin, point, f"{type(exc).__name__}: {exc}", task.key if task else ""
        )
        self.errors.append(error)
        if task is not None and point in TASK_POINTS:
            self.failed_tasks.setdefault(task.uid, task_error(error))

    # --- ordering: first non-zero -------------------------------------------------------------
    def _first_nonzero(self, point: str, a: object, b: object) -> int:
        for tier in self.tiers[point]:
            for hook in tier:
                try:
                    result = hook.fn(a, b)
                except Exception as exc:
                    self._failed(hook, point, exc)
                    continue
                if result:
                    return -1 if result < 0 else 1  # type: ignore[operator]
        return 0

    def compare_jobs(self, a: JobState, b: JobState) -> int:
        """Job order, made total by creation time then uid."""
        return self._first_nonzero("jobOrder", a, b) or _tie((a.created, a.uid), (b.created, b.uid))

    def compare_jobs_by_plugins(self, a: JobState, b: JobState) -> int:
        """Job order as the plugins give it, 0 when they tie (Volcano's `JobOrderCompareFn`)."""
        return self._first_nonzero("jobOrder", a, b)

    def job_key(self, job: JobState) -> tuple[object, ...] | None:
        """`job`'s place in the job order as one tuple: each jobOrder plugin's key (jobOrderKey,
        in the jobOrder hooks' order), then creation time and uid; jobs in tuple order are in
        `compare_jobs` order. None when jobs are to be compared instead: a jobOrder plugin
        serves no key, or a key raised (recorded as a jobOrder error; from then on this
        session compares)."""
        hooks = self._job_keys
        if hooks is None:
            return None
        parts: list[object] = []
        for hook in hooks:
            try:
                parts.append(hook.fn(job))
            except Exception as exc:
                self._failed(hook, "jobOrder", exc)
                self._job_keys = None
                return None
        parts.append(job.created)
        parts.append(job.uid)
        return tuple(parts)

    def compare_tasks(self, a: TaskState, b: TaskState) -> int:
        """Task order, made total by pod index, creation time, uid."""
        result = self._first_nonzero("taskOrder", a, b)
        if result:
            return result
        ai, bi = a.facts.index, b.facts.index
        if ai is not None and bi is not None and ai != bi:
            return -1 if ai < bi else 1
        return _tie((a.facts.created, a.uid), (b.facts.created, b.uid))

    def compare_queues(self, a: QueueState, b: QueueState) -> int:
        """Queue order, made total by creation time then name."""
        return self._first_nonzero("queueOrder", a, b) or _tie(
            (a.facts.created, a.name), (b.facts.created, b.name)
        )

    # --- all must pass ------------------------------------------------------------------------
    def _first_failure(self, point: str, *args: object) -> Status | None:
        for tier in self.tiers[point]:
            for hook in tier:
                try:
                    result = hook.fn(*args)
                except Exception as exc:
                    self._failed(hook, point, exc, *args)
                    return Status(Code.ERROR, f"plugin {hook.plugin} failed: {exc}", hook.plugin)
                if isinstance(result, Status):
                    return dataclasses.replace(result, plugin=hook.plugin)
        return None

    def validate_job(self, job: JobState) -> Status | None:
        """None when valid; the first plugin's objection otherwise."""
        return self._first_failure("jobValid", job)

    def prefilter(self, task: TaskState) -> Status | None:
        """None when every pre-predicate passes."""
        return self._first_failure("prePredicate", task)

    def _all_true(self, point: str, *args: object, default: bool = True) -> bool:
        for tier in self.tiers[point]:
            for hook in tier:
                try:
                    if not hook.fn(*args):
                        return False
                except Exception as exc:
                    self._failed(hook, point, exc, *args)
                    return False
        return default

    def is_job_ready(self, job: JobState) -> bool:
        """Every jobReady plugin agrees."""
        return self._all_true("jobReady", job)

    def allows_allocation(self, queue: QueueState, task: TaskState) -> bool:
        """Every allocatable plugin agrees."""
        return self.allocation_refuser(queue, task) is None

    def allocation_refuser(self, queue: QueueState, task: TaskState) -> tuple[str, Refusal] | None:
        """The first allocatable plugin that refuses `task` in `queue` and its `Refusal` (an
        empty reason when it said a plain False, or raised), or None: all must agree."""
        for tier in self.tiers["allocatable"]:
            for hook in tier:
                try:
                    answer = hook.fn(queue, task)
                except Exception as exc:
                    self._failed(hook, "allocatable", exc, task)
                    return hook.plugin, Refusal("")
                if not answer:
                    return hook.plugin, answer if isinstance(answer, Refusal) else Refusal("")
        return None

    def allows_reclaim(self, queue: QueueState, task: TaskState) -> bool:
        """Every preemptive plugin agrees."""
        return self._all_true("preemptive", queue, task)

    def is_overused(self, queue: QueueState) -> bool:
        """Any overused plugin says so."""
        for tier in self.tiers["overused"]:
            for hook in tier:
                try:
                    if hook.fn(queue):
                        return True
                except Exception as exc:
                    self._failed(hook, "overused", exc)
                    return True
        return False

    def is_job_starving(self, job: JobState) -> bool:
        """The first tier with a jobStarving plugin decides; all of it must agree."""
        for tier in self.tiers["jobStarving"]:
            if not tier:
                continue
            for hook in tier:
                try:
                    if not hook.fn(job):
                        return False
                except Exception as exc:
                    self._failed(hook, "jobStarving", exc)
                    return False
            return True
        return False

    # --- tier votes ---------------------------------------------------------------------------
    def _tier_vote(self, point: str, job: JobState) -> tuple[str, Refusal] | None:
        """None when the tiers admit `job`, else the plugin that rejected it and its `Refusal`
        (an empty reason for a plain REJECT, or a hook that raised)."""
        for tier in self.tiers[point]:
            permitted = False
            for hook in tier:
                try:
                    vote = hook.fn(job)
                except Exception as exc:
                    self._failed(hook, point, exc)
                    return hook.plugin, Refusal("")
                if isinstance(vote, Refusal):
                    return hook.plugin, vote
                if vote == Vote.REJECT:
                    return hook.plugin, Refusal("")
                permitted = permitted or vote == Vote.PERMIT
            if permitted:
                return None
        return None

    def is_job_enqueueable(self, job: JobState) -> bool:
        """The enqueue vote."""
        return self._tier_vote("jobEnqueueable", job) is None

    def enqueue_refuser(self, job: JobState) -> tuple[str, Refusal] | None:
        """The enqueue vote: None when it admits `job`, else the plugin that rejected it and its
        `Refusal` (the reason the job's pods are given; empty for a plain REJECT)."""
        return self._tier_vote("jobEnqueueable", job)

    def is_job_pipelined(self, job: JobState) -> bool:
        """The pipelined vote."""
        return self._tier_vote("jobPipelined", job) is None

    # --- notifications ------------------------------------------------------------------------
    def _broadcast(self, point: str, *args: object) -> None:
        for tier in self.tiers[point]:
            for hook in tier:
                try:
                    hook.fn(*args)
                except Exception as exc:
                    self._failed(hook, point, exc, *args)

    def job_enqueued(self, job: JobState) -> None:
        """Tell every jobEnqueued plugin."""
        self._broadcast("jobEnqueued", job)

    def allocated(self, task: TaskState) -> None:
        """Tell every plugin that `task` now holds resources (allocated, pipelined, un-evicted)."""
        self._broadcast("allocateEvent", task)

    def deallocated(self, task: TaskState) -> None:
        """Tell every plugin that `task` gave its resources back."""
        self._broadcast("deallocateEvent", task)

    def session_closing(self) -> None:
        """Let every plugin write its end-of-session findings (timed with a `timer`)."""
        timer = self._timer
        if timer is None:
            self._broadcast("sessionClose")
            return
        for hook in self.hooks("sessionClose"):
            started = timer()
            try:
                hook.fn()
            except Exception as exc:
                self._failed(hook, "sessionClose", exc)
            self.close_seconds[hook.plugin] = (
                self.close_seconds.get(hook.plugin, 0.0) + timer() - started
            )

    # --- HyperNodes ----------------------------------------------------------------------------
    def score_hypernodes(self, job: JobState, domains: Sequence[str]) -> list[float]:
        """Each domain's summed hyperNodeOrder score (0 from a plugin with no opinion, or one
        that raised)."""
        total = [0.0] * len(domains)
        for tier in self.tiers["hyperNodeOrder"]:
            for hook in tier:
                try:
                    scores = hook.fn(job, domains)
                    if scores is None:
                        continue
                    values = [float(v) for v in scores]  # type: ignore[attr-defined]
                    if len(values) != len(domains):
                        raise ValueError(f"{len(values)} scores for {len(domains)} HyperNodes")
                except Exception as exc:
                    self._failed(hook, "hyperNodeOrder", exc, job)
                    continue
                total = [a + b for a, b in zip(total, values, strict=True)]
        return total

    # --- best node ----------------------------------------------------------------------------
    def pick_best_node(self, task: TaskState, scores: dict[str, float]) -> str | None:
        """The first bestNode plugin with an answer decides."""
        for tier in self.tiers["bestNode"]:
            for hook in tier:
                try:
                    node = hook.fn(task, scores)
                except Exception as exc:
                    self._failed(hook, "bestNode", exc, task)
                    continue
                if isinstance(node, str):
                    return node
        return None

    # --- victims ------------------------------------------------------------------------------
    def _tier_intersect(self, point: str, *args: object) -> tuple[TaskState, ...]:
        for tier in self.tiers[point]:
            chosen: dict[str, TaskState] | None = None
            for hook in tier:
                try:
                    answer = hook.fn(*args)
                except Exception as exc:
                    self._failed(hook, point, exc, args[0])
                    chosen = {}
                    break
                if isinstance(answer, Abstain):
                    continue
                proposed = {t.uid: t for t in answer}  # type: ignore[attr-defined]
                chosen = (
                    proposed
                    if chosen is None
                    else {u: t for u, t in chosen.items() if u in proposed}
                )
                if not chosen:
                    break
            if chosen is not None:
                return tuple(chosen.values())
        return ()

    def select_preemptees(
        self, preemptor: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Victims every non-abstaining plugin of the deciding tier agrees on."""
        return self._tier_intersect("preemptable", preemptor, candidates)

    def select_reclaimees(
        self, reclaimer: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Victims every non-abstaining plugin of the deciding tier agrees on."""
        return self._tier_intersect("reclaimable", reclaimer, candidates)

    def select_gang_victims(
        self, context: EvictionContext, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Victims every non-abstaining plugin of the deciding tier agrees on (Volcano's
        `UnifiedEvictable`: no flag switches a plugin's answer off)."""
        return self._tier_intersect("unifiedEvictable", context, candidates)

    def propose_victims(self, candidates: Sequence[TaskState]) -> tuple[TaskState, ...]:
        """The union of the first tier that proposes anything."""
        for tier in self.tiers["victimTasks"]:
            union: dict[str, TaskState] = {}
            for hook in tier:
                try:
                    for task in hook.fn(candidates):  # type: ignore[attr-defined]
                        union[task.uid] = task
                except Exception as exc:
                    self._failed(hook, "victimTasks", exc)
            if union:
                return tuple(union.values())
        return ()

    def filter_victims(self, victims: Sequence[TaskState]) -> tuple[TaskState, ...]:
        """`victims` narrowed by every victim filter in order (order of `victims` kept)."""
        kept = tuple(victims)
        for tier in self.tiers["victimFilter"]:
            for hook in tier:
                if not kept:
                    return ()
                try:
                    allowed = {t.uid for t in hook.fn(kept)}  # type: ignore[attr-defined]
                except Exception as exc:
                    self._failed(hook, "victimFilter", exc)
                    return ()
                kept = tuple(t for t in kept if t.uid in allowed)
        return kept


def _tie(a: tuple[object, str], b: tuple[object, str]) -> int:
    if a == b:
        return 0
    return -1 if a < b else 1


__all__ = ["ABSTAIN", "TASK_POINTS", "Dispatcher", "Hook", "PluginError", "task_error"]
