"""Session: one scheduling cycle's view of the cluster, its plugins, and what it decided.

Opened on a `ClusterSnapshot` and the policy's plugin tiers; actions read it and change it only
through Statements; `close()` returns the `CycleResult`. Its parts: the read view (`tasks`,
`jobs`, `queues`, `snapshot`, `now`: `framework.view.SessionView`), the `ledger` (node
accounting), the `findings` (pending reasons, conditions, fit failures: `framework.findings`,
written only through methods), the `dispatch` (the plugins' hooks, combined per point), the
`placer`, and the `decisions` (binds, evictions, releases, queue figures:
`framework.decisions`), recorded only by committed Statements and the plugin calls of
`framework.view.PluginSession`. Plugins are handed the session as a `PluginSession`. It does no
I/O and reads time only from the clock it is handed (and, to time each plugin's session open
and close for the metrics, from the optional `timer`; no decision reads it).

Nominations (kube-scheduler's `status.nominatedNodeName`): a pending pod of ours that carries one
has its request held on that node from the session's open (counted as used, as kube-scheduler's
`addNominatedPods` counts a nominated pod when filtering others), so no other pod, of its queue or
another, takes the room freed for it; the pod itself sees the room free while it is placed
(`own_room`), and takes its nominated node when it fits there; pipelined again, it keeps the node's
idle room too (`Ledger.keep_idle`), so nothing binds into room freed meanwhile. A nomination is
honoured, by priority then age, while the node exists and its room once the releasing pods are gone
still holds the pod; otherwise it is dropped (the nominated node no longer helps, as kube-scheduler
drops it). `close` reports the nominations each pending pod should carry: where it is pipelined,
else its honoured nomination.

`contained(action, job, undo)` is the actions' boundary around one job: an exception while an
action works on one job undoes that job's statement, reports the job (its pending pods carry the
error) and lets the action go on with the next job; `action_errors` lists each one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import enum
import functools
import itertools
import operator
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set as AbstractSet
from typing import Protocol, TypeVar, cast

from vscheduler.clock import Clock
from vscheduler.framework import messages, podindex, queue_status
from vscheduler.framework.decisions import Decisions, podgroup_statuses
from vscheduler.framework.dispatch import Dispatcher, EnabledFlags
from vscheduler.framework.findings import Findings
from vscheduler.framework.ledger import IntArray, Ledger, Loaded, Placed
from vscheduler.framework.placement import Placer
from vscheduler.framework.state import JobState, QueueState, QueueTotals, TaskState
from vscheduler.framework.statement import Statement
from vscheduler.framework.topology import SessionTopology
from vscheduler.framework.view import PluginSession
from vscheduler.model import status as st
from vscheduler.model.cluster import (
    ClusterSnapshot,
    cache_job_order,
    cache_task_order,
    implicit_job_order,
)
from vscheduler.model.commands import (
    Bind,
    CycleResult,
    Evict,
    PodGroupStatus,
    QueueFigures,
    ReservationRelease,
)
from vscheduler.model.compact import compacted
from vscheduler.model.facts import JobFacts, PodGroupCondition, TaskFacts, TemplateKey
from vscheduler.model.resources import Resources
from vscheduler.model.status import PodGroupPhase, TaskStatus

Plugin_co = TypeVar("Plugin_co", covariant=True)
_V = TypeVar("_V")
_STAMP_RESOLUTION = dt.timedelta(seconds=1)
"""A creationTimestamp has whole seconds: the pod was created up to this much after it."""


class PluginFactory(Protocol[Plugin_co]):
    """Lives as long as the policy; opens a fresh plugin instance for every session."""

    @property
    def name(self) -> str:
        """The plugin's policy name."""
        ...

    @property
    def plugin(self) -> type[Plugin_co] | tuple[type[Plugin_co], ...]:
        """The class `open` returns (or each class it may return): checked against the
        extension-point Protocols at policy load (`framework.contract`)."""
        ...

    def open(self, session: PluginSession, /) -> Plugin_co:
        """A new plugin instance for `session`: it serves the points whose Protocols its
        class subclasses."""
        ...


class Watch(Protocol):
    """Told when allocate decides a task: the session as it stands, the task, and its queue's
    verdict (`queue q allows this pod`, or the refusal)."""

    def __call__(self, session: Session, task: TaskState, verdict: str, /) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class PluginEntry:
    """A policy plugin entry (its flags) and the factory that serves it."""

    option: EnabledFlags
    factory: PluginFactory[object]


_STAGED = frozenset({TaskStatus.ALLOCATED, TaskStatus.PIPELINED})
"""The statuses a task is placed in within a session, before its bind or its room is free."""
_NOTHING_HELD: contextlib.nullcontext[None] = contextlib.nullcontext()
"""`Session.own_room` when no pod is nominated: entered and left for free."""


class Session:
    """One cycle: the snapshot's tasks, jobs, queues and nodes, and the plugins' hooks."""

    _revisit: dt.datetime | None = None
    """When an answer of this session changes by itself (`revisit`), the earliest (set on the
    session when asked; the class's None until then)."""
    _topology: SessionTopology | None = None
    """The HyperNode tree over the session's nodes (`topology`: made on first use)."""
    _pending_jobs: tuple[JobState, ...] | None = None
    """`pending_jobs` (made on first use)."""

    def __init__(
        self,
        snapshot: ClusterSnapshot,
        tiers: Sequence[Sequence[PluginEntry]],
        *,
        clock: Clock,
        actions: Sequence[str] = (),
        uid: str = "session",
        timer: Callable[[], float] | None = None,
        carried: Carried | None = None,
        arrival_grace: float = 0.0,
    ) -> None:
        self.snapshot, self._arrival_grace = snapshot, dt.timedelta(seconds=arrival_grace)
        self.clock = clock
        self.now: dt.datetime = clock.now()
        self._now_text = self.now.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.uid = uid
        self.actions = tuple(actions)
        self.ledger: Ledger
        """Node accounting (made by `_load_tasks`)."""
        self._opening: Opening
        """What this session's open read, for the next session (made by `_load_tasks`)."""
        self.queue_totals: QueueTotals
        """Per queue: its plain jobs' allocation and every job's pending request, summed as
        the session opened (made by `_load_tasks`)."""
        self.queues: dict[str, QueueState] = {
            name: QueueState(q) for name, q in snapshot.queues.items()
        }
        if carried is not None and not carried.usable():
            carried = None
        self._touched_tasks: set[str] = set()
        """Tasks whose record this session changed (moved): the next session makes them anew."""
        self._touched_jobs: set[str] = set()
        """Jobs whose record this session changed (a task moved, its phase set)."""
        self._class_ids: dict[TemplateKey, int] = {} if carried is None else carried.class_ids
        self._with_terms: tuple[TaskState, ...] | None = None
        self._statuses: dict[str, PodGroupStatus] = {}
        """The PodGroup statuses this session made from the job alone (see `podgroup_statuses`),
        for the next session (set at close)."""
        self._rows: dict[int, IntArray] = {}
        self.jobs: dict[str, JobState] = {}
        self.tasks: dict[str, TaskState] = {}
        self.findings = Findings()
        """What the cycle found out (pending reasons, conditions, fit failures, ...): written
        only through its methods (or this session's, for plugins)."""
        self.decisions = Decisions()
        """Binds, evictions, releases and queue figures: recorded by committed Statements and
        the plugins' reports, through this session's methods."""
        self.on_bind: Callable[[Bind], None] | None = None
        """Told of each bind as its statement commits, while the cycle goes on (the runtime
        sends it at once: a backlog's first binds leave before the cycle ends). A committed
        bind is final: nothing later in the session undoes it."""
        self.watch: Watch | None = None
        """Told each time allocate decides a task, with its queue's verdict (`decided`):
        `simulate --explain` reads the nodes as they stood then. None in the live scheduler."""
        self.jobs_with_pending: tuple[JobState, ...] = ()
        """The jobs that had a pending task at open, in job order (no task becomes pending in a
        session unless it was pending at open: a job with a pending task now is one of these)."""
        nominated = self._load_tasks(snapshot, carried)
        self.nominations: dict[str, int] = {}
        """Task uid -> the node row of its honoured nomination (`status.nominatedNodeName`)."""
        self._held: set[str] = set()
        """The nominated tasks whose request is held on their node now."""
        self._tried: set[str] = set()
        """Tasks an action tried to place (`own_room`)."""
        self._hold_nominations(nominated)
        self.plugins: dict[str, object] = {}
        self._hierarchy: dict[str, bool] = {}
        for tier in tiers:
            for entry in tier:
                self._hierarchy.setdefault(
                    entry.option.name, entry.option.is_enabled("enableHierarchy")
                )
        self.open_seconds: dict[str, float] = {}
        """Plugin -> seconds its factory took to open it (Volcano's `OnSessionOpen`), when the
        session was handed a `timer`."""
        opened: list[list[tuple[EnabledFlags, object]]] = []
        for tier in tiers:
            row: list[tuple[EnabledFlags, object]] = []
            for entry in tier:
                started = timer() if timer is not None else 0.0
                plugin = entry.factory.open(self)
                if timer is not None:
                    self.open_seconds[entry.option.name] = timer() - started
                self.plugins[entry.option.name] = plugin
                row.append((entry.option, plugin))
            opened.append(row)
        self.dispatch = Dispatcher(opened, timer)
        self.placer = Placer(
            self.ledger,
            filters=self.dispatch.hooks("predicate"),
            scorers=self.dispatch.hooks("nodeOrder"),
            batch_scorers=self.dispatch.hooks("batchNodeOrder"),
            node_local={n: bool(getattr(p, "node_local", True)) for n, p in self.plugins.items()},
            explainers={h.plugin: h.fn for h in self.dispatch.hooks("predicateReason")},
            resolvers={h.plugin: h.fn for h in self.dispatch.hooks("predicateResolvable")},
            node_filters={h.plugin: h.fn for h in self.dispatch.hooks("predicateNode")},
            node_scorers={h.plugin: h.fn for h in self.dispatch.hooks("nodeOrderNode")},
            simulators=frozenset(
                entry.option.name
                for tier in tiers
                for entry in tier
                if entry.option.is_enabled("enablePreemptable")
                or entry.option.is_enabled("enabledAllocatable")
            ),
            report=self.dispatch.record_failure,
            failed_tasks=self.dispatch.failed_tasks,
        )

    # --- opening ------------------------------------------------------------------------------
    def _load_tasks(self, snapshot: ClusterSnapshot, carried: Carried | None) -> list[TaskState]:
        """Every job and task into the session and every task into the ledger; returns the
        pending ones that carry a nomination (for `_hold_nominations`). The records `carried`
        from the last session are taken again where nothing of theirs changed; over the same
        nodes (by name), the ledger starts from the last session's load and loads only the
        tasks whose facts changed, came or went (see `Opening`)."""
        if carried is None:
            changes = Changes(dict(snapshot.tasks), {}, None)
            remade: set[str] = set()
            stale: list[str] = []
            made: set[str] = set()
        else:
            changes = _changes(snapshot, carried.opening)
            stale, gone = _job_changes(snapshot, carried.opening, changes)
            remade = _remade(snapshot, carried, changes, gone)
            remade.update(stale)
            made = _to_make(snapshot.tasks, carried, changes.tasks, remade)
        taken = None if carried is None else carried.take()
        job_holes = self._load_jobs(snapshot, taken, remade, stale)
        self._remade = remade
        """The jobs whose records this session made anew."""
        self._carried_statuses = None if carried is None else carried.statuses
        self._carried_phase = None if carried is None else carried.opening.phase_pending
        made, task_holes = self._records(snapshot, taken, changes, made)
        self._holes = Holes(task_holes, job_holes)
        """The keys popped from `tasks` and `jobs` since each was built (`Carried.take`)."""
        self._total(None if taken is None else taken.totals, remade)
        if carried is None or changes.nodes is None:
            return self._load_all(snapshot)
        return self._load_changes(snapshot, carried.opening, changes, made)

    def _records(
        self, snapshot: ClusterSnapshot, carried: Taken | None, changes: Changes, made: set[str]
    ) -> tuple[set[str], int]:
        """Every task's record into `tasks` and its job's: the carried one unless it is in
        `made` (`_to_make`: its facts changed, the last session moved it, or its job is made
        anew, it is then added to the new job record); returns the uids whose records were made
        or re-added, and the keys popped from the map since it was built (`Holes`)."""
        now = snapshot.tasks
        if carried is None:
            self.tasks = {uid: self._record(facts, None) for uid, facts in now.items()}
            return set(self.tasks), 0
        touched, changed = carried.touched_tasks, changes.tasks
        tasks = cast(dict[str, TaskState | None], carried.tasks)
        holes = carried.holes.tasks
        for uid in changes.gone:
            holes += tasks.pop(uid, None) is not None
        last, held = next(reversed(tasks), None), len(tasks)
        for uid in _in_task_order(snapshot, made):  # a job's tasks are added in task order
            fresh = uid in changed or uid in touched
            tasks[uid] = self._record(now[uid], None if fresh else tasks.get(uid))
        order = _task_order(snapshot, carried.opening, changes, tasks, last)
        if order is _Order.TAIL:
            holes += _mend_tail(tasks, len(tasks) - held, lambda uid: cache_task_order(now[uid]))
        elif order is _Order.UNKNOWN:
            tasks, holes = dict(zip(now, map(tasks.get, now), strict=True)), 0
        self.tasks = cast(dict[str, TaskState], tasks)  # a uid without a record came: made
        return made, holes

    def _load_all(self, snapshot: ClusterSnapshot) -> list[TaskState]:
        """Every task into a new ledger."""
        requested = _requested_dims(snapshot.tasks.values())
        self.ledger = ledger = Ledger(snapshot.nodes, requested)
        on_nodes: set[str] = set()
        for node in snapshot.nodes:
            on_nodes.update(node.allocatable.names())
        loading = _Loading()
        for task in self.tasks.values():
            loading.note(task, ledger.index)
            if task.node_index >= 0:
                self._count(task.facts, task.node_index, loading.placed)
        ledger.load(*loading.placed)
        return self._loaded(snapshot, loading, frozenset(on_nodes), frozenset(requested - on_nodes))

    def _load_changes(
        self, snapshot: ClusterSnapshot, opening: Opening, changes: Changes, made: set[str]
    ) -> list[TaskState]:
        """`_load_all`'s result from the last session's load and what changed since: `made`,
        the tasks whose records were made or re-added (the others are as the last load noted
        them)."""
        changed, gone = changes.tasks, changes.gone
        self.ledger = ledger = Ledger.resumed(opening.ledger, snapshot.nodes, changes.nodes or ())
        tasks = self.tasks
        loading = _Loading()
        for uid in made:
            loading.note(tasks[uid], ledger.index)
        noted = made.union(gone)
        loading.pending.update(opening.pending.difference(noted))
        loading.nominated.update(opening.nominated.difference(noted))
        loading.orphans.update(opening.orphans.difference(noted))
        loading.homeless.update(opening.homeless.difference(noted))
        loading.terms.update(opening.terms.difference(noted))
        loading.staged.update(opening.staged.difference(noted))
        loading.ports.update(opening.ports.difference(noted))
        before = opening.tasks
        out = _Loading()
        for uid in itertools.chain(changed, gone):
            was = before.get(uid)
            if was is not None:
                self._count(was, ledger.index.get(was.node_name or "", -1), out.placed)
        for facts in changed.values():
            self._count(facts, tasks[facts.uid].node_index, loading.placed)
        ledger.load(*out.placed, sign=-1)
        ledger.load(*loading.placed)
        return self._loaded(snapshot, loading, opening.on_nodes, opening.extra)

    def _total(self, totals: QueueTotals | None, remade: set[str]) -> None:
        """`queue_totals`: the last session's (taken, `Carried.take`), patched with the jobs
        made anew or gone."""
        if totals is None:
            self.queue_totals = QueueTotals().patched(self.jobs, self.jobs)
        else:
            totals.patch(self.jobs, remade)
            self.queue_totals = totals

    def _loaded(
        self,
        snapshot: ClusterSnapshot,
        loading: _Loading,
        on_nodes: frozenset[str],
        extra: frozenset[str],
    ) -> list[TaskState]:
        """The load's end, both ways: notes, the jobs with a pending task, the `Opening`."""
        tasks = self.tasks
        if loading.orphans:
            for uid, facts in snapshot.tasks.items():
                if uid in loading.orphans:
                    self.findings.note_task(uid, f"podgroup {facts.job} not found")
        if loading.pending:
            pending = {tasks[uid].facts.job for uid in loading.pending}
            self.jobs_with_pending = self._jobs_of(pending)
        self._opening = Opening(
            snapshot.tasks,
            self.ledger.loaded(),
            self.queue_totals,
            frozenset(loading.pending),
            frozenset(loading.nominated),
            frozenset(loading.orphans),
            frozenset(loading.homeless),
            frozenset(loading.ports),
            frozenset(loading.terms),
            frozenset(loading.staged),
            on_nodes,
            extra,
            snapshot.serial,
            snapshot.jobs,
            snapshot.podgroups,
            self._phase_pending(),
        )
        return [tasks[uid] for uid in loading.nominated]

    def _phase_pending(self) -> frozenset[str]:
        """The keys of the jobs whose phase is Pending at open: the last session's, patched
        with the jobs made anew (a job taken again has the phase its facts gave it then: a
        session that admits a job touches it, and the next makes it anew)."""
        jobs, before = self.jobs, self._carried_phase
        if before is None:
            return frozenset(k for k, j in jobs.items() if j.phase is PodGroupPhase.PENDING)
        keys = set(before)
        keys.difference_update(self._remade)
        for key in self._remade:
            job = jobs.get(key)
            if job is not None and job.phase is PodGroupPhase.PENDING:
                keys.add(key)
        return frozenset(keys)

    def _count(self, facts: TaskFacts, i: int, placed: tuple[Placed, Placed, Placed]) -> None:
        """Into `placed` (occupying, pipelined, releasing), the task of `facts` on node row
        `i` (-1: on no node of the snapshot) when it counts there."""
        if i < 0 or facts.status in st.TERMINATED or facts.status is TaskStatus.UNKNOWN:
            return
        req = self._row(self._class_of(facts), facts.resreq)
        into = placed[1] if facts.status is TaskStatus.PIPELINED else placed[0]
        into[0].append(i)
        into[1].append(req)
        if facts.status is TaskStatus.RELEASING:
            placed[2][0].append(i)
            placed[2][1].append(req)

    def _load_jobs(
        self,
        snapshot: ClusterSnapshot,
        carried: Taken | None,
        remade: set[str],
        stale: list[str],
    ) -> int:
        """Every job into the session, its record taken from `carried` unless its key is in
        `remade` (`stale` among them: the jobs whose facts came or changed, in job order): a
        C-level copy of the carried map, patched. Without `carried`, every key is added to
        `remade`. Returns the keys popped from the map since it was built (`Holes`)."""
        now = snapshot.jobs
        holes = 0
        if carried is None:
            self.jobs = jobs = {key: JobState(facts) for key, facts in now.items()}
            remade.update(jobs)
        else:
            jobs, holes = carried.jobs, carried.holes.jobs
            for key in remade:
                if key not in now:
                    holes += jobs.pop(key, None) is not None
            last, held = next(reversed(jobs), None), len(jobs)
            for key in stale:
                jobs[key] = JobState(now[key])
            made = set(stale)
            for key in remade:
                if key not in made and key in now:
                    jobs[key] = JobState(now[key])
            order = _job_order(snapshot, carried.opening, jobs, last, stale)
            if order is _Order.TAIL:  # new lone pods' jobs, behind held ones (no PodGroup came)
                holes += _mend_tail(
                    jobs,
                    len(jobs) - held,
                    lambda key: implicit_job_order(now[key]),
                    lambda key: now[key].synthetic,
                )
            elif order is _Order.UNKNOWN:
                in_order = dict.fromkeys(now, cast(JobState, None))
                in_order.update(jobs)
                jobs, holes = in_order, 0
            self.jobs = jobs
        keys = snapshot.podgroups
        if keys is None:
            keys = tuple(k for k, j in jobs.items() if not j.facts.synthetic)
        self.podgroup_jobs: tuple[JobState, ...] = tuple(map(jobs.__getitem__, keys))
        """The jobs that are PodGroups (not a lone pod's implicit job), in job order: what
        plugins that read only PodGroups walk, not every job."""
        return holes

    def _record(self, facts: TaskFacts, kept: TaskState | None) -> TaskState:
        """The task's record, added to its job's: `kept` (a carried record of these very facts,
        whose job was made anew), else a new one."""
        job = self.jobs.get(facts.job)
        if kept is not None and kept.facts is facts:
            kept.job = job
            task = kept
        else:
            task = TaskState(facts, job, self._class_of(facts))
        if job is not None:
            job.add(task)
        return task

    def _hold_nominations(self, candidates: list[TaskState]) -> None:
        """Hold each nominated pending pod's request on its node, by priority then age, while
        the node's room once its releasing pods are gone still takes it."""
        ledger = self.ledger
        nominated = [
            t
            for t in candidates
            if t.status is TaskStatus.PENDING
            and t.job is not None
            and not t.facts.problem
            and not t.facts.scheduling_gated
        ]
        nominated.sort(key=lambda t: (-t.priority, t.facts.created, t.key))
        for task in nominated:
            i = ledger.index.get(task.facts.nominated_node or "", -1)
            req = self.request_row(task)
            if i < 0 or (req > ledger.future[i]).any() or ledger.pods_free_future[i] <= 0:
                continue
            ledger.occupy(i, req)
            self.nominations[task.uid] = i
            self._held.add(task.uid)

    def _hold(self, task: TaskState) -> None:
        """Hold `task`'s nominated room again (it is pending once more)."""
        i = self.nominations.get(task.uid)
        if i is not None and task.uid not in self._held and task.status is TaskStatus.PENDING:
            self.ledger.occupy(i, self.request_row(task))
            self._held.add(task.uid)

    def _unhold(self, task: TaskState) -> None:
        if task.uid in self._held:
            self._held.discard(task.uid)
            self.ledger.occupy(self.nominations[task.uid], self.request_row(task), -1)

    def own_room(self, task: TaskState) -> contextlib.AbstractContextManager[None]:
        """While `task` is placed, the room nominated for it, and the room nominated for pods of
        lower priority, is free to it (kube-scheduler counts only nominated pods of higher or
        equal priority against a pod); held again after, unless it was placed. `task` counts as
        tried: left pending, it loses its nomination at close. Without any nomination in the
        session (the common case) there is nothing to free: a shared no-op (the hot path)."""
        if not self.nominations:
            return _NOTHING_HELD
        return self._own_room(task)

    @contextlib.contextmanager
    def _own_room(self, task: TaskState) -> Iterator[None]:
        self._tried.add(task.uid)
        others = [
            self.tasks[uid]
            for uid in sorted(self._held)
            if uid != task.uid and self.tasks[uid].priority < task.priority
        ]
        self._unhold(task)
        for other in others:
            self._unhold(other)
        try:
            yield
        finally:
            self._hold(task)
            for other in others:
                self._hold(other)

    def _class_of(self, facts: TaskFacts) -> int:
        return self._class_ids.setdefault(facts.template_key(), len(self._class_ids))

    def request_row(self, task: TaskState) -> IntArray:
        """The task's request as a ledger row (shared per class: do not modify)."""
        return self._row(task.class_id, task.resreq)

    def _row(self, class_id: int, resreq: Resources) -> IntArray:
        row = self._rows.get(class_id)
        if row is None:
            row = self._rows[class_id] = self.ledger.vector(resreq)
        return row

    # --- reading ------------------------------------------------------------------------------
    @property
    def topology(self) -> SessionTopology:
        """The HyperNode tree over this session's nodes, made on first use (a session that
        places no job with a network topology, with no plugin reading it, never makes it)."""
        if self._topology is None:
            self._topology = SessionTopology(self.snapshot.topology, self.ledger)
        return self._topology

    def statement(self) -> Statement:
        """A new statement on this session."""
        return Statement(self)

    @property
    def tasks_with_host_ports(self) -> tuple[TaskState, ...]:
        """The tasks that ask host ports, by uid (read from the open: a pass over only them)."""
        tasks = self.tasks
        return tuple(tasks[uid] for uid in sorted(self._opening.ports))

    @property
    def tasks_with_terms(self) -> tuple[TaskState, ...]:
        """The tasks with inter-pod terms or spread constraints, in task order (one pass per
        session, however many plugins ask)."""
        if self._with_terms is None:
            self._with_terms = self._in_order(self._opening.terms)
        return self._with_terms

    @property
    def pending_jobs(self) -> tuple[JobState, ...]:
        """The jobs whose phase was Pending at open, in job order (a job's phase only leaves
        Pending in a session: the jobs enqueue may admit are among these)."""
        if self._pending_jobs is None:
            self._pending_jobs = self._jobs_of(self._opening.phase_pending)
        return self._pending_jobs

    def _jobs_of(self, keys: AbstractSet[str]) -> tuple[JobState, ...]:
        """The jobs of `keys` that are in the session, in job order: sorted when the snapshot is
        in the cache's order (`ClusterSnapshot.cache_order`) and they are few, else by one
        C-level pass over the jobs."""
        jobs = self.jobs
        if not keys:
            return ()
        if self.snapshot.cache_order and len(keys) * _FEW < len(jobs):
            present = [key for key in keys if key in jobs]
            present.sort(key=lambda key: cache_job_order(jobs[key].facts))
            return tuple(map(jobs.__getitem__, present))
        return tuple(map(jobs.__getitem__, filter(keys.__contains__, jobs)))

    def _in_order(self, uids: AbstractSet[str]) -> tuple[TaskState, ...]:
        """The tasks of `uids` in task order (`_in_task_order`)."""
        return tuple(map(self.tasks.__getitem__, _in_task_order(self.snapshot, uids)))

    def queue_of(self, job: JobState) -> QueueState | None:
        """The job's queue, or None if it does not exist."""
        return self.queues.get(job.queue)

    def ordered_queues(self, queues: Iterable[QueueState]) -> list[QueueState]:
        """`queues` sorted by the queue order (`Dispatcher.compare_queues`, total)."""
        return sorted(queues, key=functools.cmp_to_key(self.dispatch.compare_queues))

    def ordered_jobs(self, jobs: Iterable[JobState]) -> list[JobState]:
        """`jobs` sorted by the job order (by `Dispatcher.job_key` while the plugins give keys)."""
        jobs = list(jobs)
        keys: list[tuple[object, ...]] = []
        for job in jobs:
            key = self.dispatch.job_key(job)
            if key is None:
                return sorted(jobs, key=functools.cmp_to_key(self.dispatch.compare_jobs))
            keys.append(key)
        return [jobs[i] for i in sorted(range(len(jobs)), key=keys.__getitem__)]

    def pending_tasks(self, job: JobState, *, best_effort: bool) -> list[TaskState]:
        """The job's pending tasks of one kind, in task order, leaving out malformed pods, pods
        a plugin raised about (`dispatch.failed_tasks`) and pods with a scheduling gate."""
        failed = self.dispatch.failed_tasks
        tasks = [
            t
            for t in job.with_status(TaskStatus.PENDING)
            if t.facts.best_effort == best_effort
            and not t.facts.problem
            and not t.facts.scheduling_gated
            and t.uid not in failed
        ]
        return sorted(tasks, key=functools.cmp_to_key(self.dispatch.compare_tasks))

    # --- mutations (Statement only) -----------------------------------------------------------
    def _move(self, task: TaskState, new: TaskStatus) -> None:
        st.check_transition(task.key, task.status, new)
        self._touched_tasks.add(task.uid)
        if task.job is not None:
            self._touched_jobs.add(task.job.key)
            task.job.move(task, new)
        task.status = new

    def admit(self, job: JobState) -> None:
        """The job's PodGroup is admitted: phase Inqueue (enqueue, or the placing actions when
        no enqueue is configured)."""
        self._touched_jobs.add(job.key)
        job.phase = PodGroupPhase.INQUEUE

    def carried(self) -> Carried:
        """What the next session may take from this one (once this one is done)."""
        return Carried(
            self.tasks,
            self.jobs,
            self._class_ids,
            self._touched_tasks,
            self._touched_jobs,
            self._opening,
            statuses=self._statuses,
            holes=self._holes,
        )

    def apply_allocate(self, task: TaskState, node: int) -> None:
        """Task Pending -> Allocated on `node`."""
        self._move(task, TaskStatus.ALLOCATED)
        task.node_index, task.node = node, self.ledger.names[node]
        self.ledger.occupy(node, self.request_row(task))
        self.dispatch.allocated(task)

    def apply_pipeline(self, task: TaskState, node: int) -> None:
        """Task Pending -> Pipelined on `node`."""
        self._move(task, TaskStatus.PIPELINED)
        task.node_index, task.node = node, self.ledger.names[node]
        self.ledger.pipeline(node, self.request_row(task))
        if task.uid in self.nominations:  # it waits for the idle room there too
            self.ledger.keep_idle(node, self.request_row(task))
        self.dispatch.allocated(task)

    def apply_evict(self, task: TaskState) -> None:
        """A task on a node -> Releasing."""
        self._move(task, TaskStatus.RELEASING)
        self.ledger.release(task.node_index, self.request_row(task))
        self.dispatch.deallocated(task)

    def undo_allocate(self, task: TaskState) -> None:
        """Allocated -> Pending."""
        self._move(task, TaskStatus.PENDING)
        self.ledger.occupy(task.node_index, self.request_row(task), -1)
        self.dispatch.deallocated(task)  # handlers still see the node it leaves, as in Volcano
        task.node_index, task.node = -1, None
        self._hold(task)

    def undo_pipeline(self, task: TaskState) -> None:
        """Pipelined -> Pending."""
        self._move(task, TaskStatus.PENDING)
        self.ledger.pipeline(task.node_index, self.request_row(task), -1)
        if task.uid in self.nominations:
            self.ledger.keep_idle(task.node_index, self.request_row(task), -1)
        self.dispatch.deallocated(task)  # handlers still see the node it leaves, as in Volcano
        task.node_index, task.node = -1, None
        self._hold(task)

    def undo_evict(self, task: TaskState) -> None:
        """Releasing -> Running (the eviction is abandoned)."""
        self._move(task, TaskStatus.RUNNING)
        self.ledger.release(task.node_index, self.request_row(task), -1)
        self.dispatch.allocated(task)

    def record_bind(self, task: TaskState) -> None:
        """A committed allocation: Allocated -> Binding, and a Bind decision."""
        self._move(task, TaskStatus.BINDING)
        bind = self.decisions.bind(task)
        if self.on_bind is not None:
            self.on_bind(bind)

    def record_evict(
        self, task: TaskState, reason: str, *, action: str = "", strategy: str = "", plan: str = ""
    ) -> None:
        """A committed eviction (`plan`: see `Evict`)."""
        self.decisions.evict(task, reason, action=action, strategy=strategy, plan=plan)

    def record_release(self, release: ReservationRelease) -> None:
        """A reservation is done (its pod placed, or expired): its ConfigMap key goes."""
        self.decisions.release(release)

    def report_queue(self, figures: QueueFigures) -> None:
        """A queue plugin's figures for one queue (at session close). A later report of the
        same queue replaces an earlier one: with two queue plugins, the one later in the policy
        (tier order, then order in the tier) wins."""
        self.decisions.report_queue(figures)

    @property
    def evictions(self) -> tuple[Evict, ...]:
        """The evictions committed so far this session (plugins read them at session close)."""
        return self.decisions.evictions

    # --- what actions and plugins report (kept in `findings`) --------------------------------
    def set_job_condition(self, job: JobState, condition: PodGroupCondition) -> None:
        """Set (replace by type) a condition on the job's PodGroup status."""
        self.findings.set_job_condition(job.key, condition)

    def decided(self, task: TaskState, queue: QueueState, refusal: str = "") -> None:
        """Allocate is deciding `task` now (its queue refused it with `refusal`, or allowed it;
        its nodes not yet tried): tell the watch, if any."""
        if self.watch is not None:
            self.watch(self, task, refusal or f"queue {queue.name} allows this pod")

    def note_task(self, task: TaskState, reason: str) -> None:
        """Why a pending task was not tried."""
        self.findings.note_task(task.uid, reason)

    @contextlib.contextmanager
    def contained(
        self, action: str, job: JobState, undo: Callable[[], None] = lambda: None
    ) -> Iterator[None]:
        """Run an action's work on `job`; if it raises, call `undo` (discard the job's
        statement), report the job and swallow the exception, so the action goes on."""
        try:
            yield
        except Exception as exc:
            with contextlib.suppress(Exception):  # a statement already settled cannot be undone
                undo()
            error = f"{type(exc).__name__}: {exc}"
            frames = traceback.extract_tb(exc.__traceback__)
            where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
            self.findings.action_failed(
                job.key,
                f"{action} failed for podgroup {job.key}: {error}",
                f"{action}: podgroup {job.key}: {error}{where}",
            )

    @property
    def action_errors(self) -> tuple[str, ...]:
        """`action: podgroup ns/name: Type: message (at file:line)`, one per contained failure."""
        return self.findings.action_errors

    def hint_job(self, job: JobState, hint: str) -> None:
        """Add `hint` to the end of the job's pending pods' messages (the first hint stays)."""
        self.findings.hint_job(job.key, hint)

    def note_queue(self, name: str, reason: str) -> None:
        """Why queue `name` has little or no room (the first note stays)."""
        self.findings.note_queue(name, reason)

    def queue_note(self, name: str) -> str:
        """`: <note>` for queue `name`, to end a message with; empty without a note."""
        return self.findings.queue_note(name)

    def note_job(self, job: JobState, reason: str) -> None:
        """Why a job's tasks were not tried (not admitted, invalid, queue missing)."""
        self.findings.note_job(job.key, reason)

    def hold_job(self, job: JobState, reason: str) -> None:
        """Something holds back every one of the job's pods, whatever they ask (its queue is not
        Open; no HyperNode holds it whole), for `reason`, the note its pods carry: its gang
        message names it too."""
        self.findings.hold_job(job.key, reason)

    def job_hold(self, job: JobState) -> str | None:
        """Why every one of the job's pods is held back this session, if it is."""
        return self.findings.job_hold(job.key)

    def hierarchy_enabled(self, plugin: str) -> bool:
        """Whether the policy entry of `plugin` (the first, by that name) sets
        `enableHierarchy: true` (Volcano's `ssn.HierarchyEnabled`)."""
        return self._hierarchy.get(plugin, False)

    def job_changed(self, job: JobState) -> bool:
        """Whether this session changed the job's record (moved one of its tasks, set its
        phase)."""
        return job.key in self._touched_jobs

    def job_note(self, job: JobState) -> str | None:
        """Why the job's tasks were not tried this session, if noted."""
        return self.findings.job_note(job.key)

    def schedulable_count(self, job: JobState) -> int:
        """How many of the job's pending tasks found a node this session."""
        return self.findings.schedulable_count(job)

    def queue_allows_progress(self, job: JobState) -> bool:
        """Whether the job's queue would let it allocate one of its pending tasks now (the
        allocatable point, asked once per task class); True without a queue or a pending task."""
        queue = self.queue_of(job)
        if queue is None:
            return True
        asked: set[int] = set()
        for task in job.with_status(TaskStatus.PENDING):
            if task.class_id in asked:
                continue
            asked.add(task.class_id)
            if self.dispatch.allows_allocation(queue, task):
                return True
        return not asked

    def note_victim(
        self, task: TaskState, strategy: str, reason: str, *, budgeted: bool = False
    ) -> None:
        """Why a victim-tasks plugin proposes `task` (shuffle puts it on the eviction; the
        strategy labels the metrics); `budgeted`: within the plugin's own disruption budget."""
        self.findings.note_victim(task.uid, strategy, reason, budgeted=budgeted)

    def now_rfc3339(self) -> str:
        """The session's clock as RFC3339 (for condition timestamps)."""
        return self._now_text

    def revisit(self, at: dt.datetime) -> None:
        """An answer of this session changes by itself at `at` (cdp's protection ends): the
        result's `revisit_at` is the earliest such time (or an arriving gang's, sooner). A time
        not after the session's is ignored: the answer already changed."""
        if at > self.now and (self._revisit is None or at < self._revisit):
            self._revisit = at

    # --- closing ------------------------------------------------------------------------------
    def close(self) -> CycleResult:
        """Let plugins report, then gather the cycle's decisions and findings."""
        self.dispatch.session_closing()
        staged = self._in_order(self._touched_tasks.union(self._opening.staged))
        pipelined = {t.key: t.node or "" for t in staged if t.status in _STAGED}
        nominated = {
            t.key: self.ledger.names[i]
            for uid, i in self.nominations.items()
            if (t := self.tasks[uid]).status is TaskStatus.PENDING and uid not in self._tried
        }
        untried = dict(nominated)
        waiting = [
            t for t in staged if t.status is TaskStatus.PIPELINED and t.facts.node_name is None
        ]
        nominated |= {t.key: t.node or "" for t in waiting}
        statuses, plain = podgroup_statuses(
            self.podgroup_jobs, self.findings, self.uid, self._reusable_statuses()
        )
        self._statuses.update(plain)  # in place: a `Carried` taken before close sees them
        pending = self._in_order(self._opening.pending)
        result = self.decisions.result(
            pipelined,
            nominated,
            statuses,
            messages.unschedulable(
                self, pending, self.findings, self.dispatch, self.placer, untried
            ),
            queue_status.allocated_by_queue(
                self.queues, self.jobs, self.queue_totals, self._touched_jobs
            ),
            waiting={t.key: messages.waiting(t) for t in waiting},
        )
        if self._arrival_grace:
            arriving, groups, phased, soonest = self._arriving(pending, result.unschedulable)
            if soonest is not None:
                self.revisit(soonest)
            result = dataclasses.replace(
                result, arriving=arriving, arriving_groups=groups, phased_groups=phased
            )
        if self._revisit is None:
            return result
        return dataclasses.replace(result, revisit_at=self._revisit)

    def _arriving(
        self, pending: Iterable[TaskState], unschedulable: Mapping[str, str]
    ) -> tuple[frozenset[str], frozenset[str], frozenset[str], dt.datetime | None]:
        """The pods left pending whose PodGroup has fewer pods than its minMember, the newest
        created under `arrival_grace` ago (a creationTimestamp, whole seconds, read as the end
        of its second): their gang is still being created, one pod after
        another, and will most likely start whole within moments. Their pending message (a
        PodScheduled=False condition and a FailedScheduling Event each, what most of a gang
        workload's status writes were) waits until the gang has not grown for the grace; then
        it is written as usual. A PodGroup with no pod yet, made under the grace ago, is
        arriving too (its pods come next). Returns them, their PodGroups, those of the
        PodGroups whose phase is written meanwhile (`phased_groups`: with minResources, or
        with no pod yet and a controller, which may create the pods only once it is Inqueue),
        and when the first falls due."""
        keys: list[str] = []
        due: dict[str, dt.datetime | None] = {}
        phased: list[str] = []
        for task in pending:
            job = task.job
            if task.key not in unschedulable or job is None or job.facts.synthetic:
                continue
            if job.key not in due:
                newest = max(t.facts.created for t in job.tasks.values())
                growing = len(job.tasks) < job.facts.min_member
                due[job.key] = self._grace_end(newest) if growing else None
                if due[job.key] is not None and job.facts.min_resources is not None:
                    phased.append(job.key)
            if due[job.key] is not None:
                keys.append(task.key)
        for job in self.podgroup_jobs:
            if not job.tasks and job.facts.min_member > 0:
                due[job.key] = ends = self._grace_end(job.facts.created)
                facts = job.facts
                if ends is not None and (facts.controlled or facts.min_resources is not None):
                    phased.append(job.key)
        ends_at = {k: d for k, d in due.items() if d is not None}
        soonest = min(ends_at.values(), default=None)
        return frozenset(keys), frozenset(ends_at), frozenset(phased), soonest

    def _grace_end(self, newest: dt.datetime) -> dt.datetime | None:
        """When the arrival grace from `newest` (a creation time) ends, if it has not yet."""
        if not newest.microsecond:  # a creationTimestamp: made within that second
            newest += _STAMP_RESOLUTION
        ends = newest + self._arrival_grace
        return ends if ends > self.now else None

    def release(self) -> None:
        """Drop everything this session holds, once its report and `carried` are taken.

        Plugins, their hooks and closures hold the session and the session holds them: without
        this the whole graph (thousands of objects a cycle at 500 nodes) is cyclic garbage that
        only the collector frees, and young-generation collections scanned it again and again
        (a W1 run spent about a second of its ~10 s in them). Cleared, reference counting frees
        it at once; what `carried()` returned stays whole (it holds the records and the
        opening, not the session)."""
        vars(self).clear()

    def _reusable_statuses(self) -> dict[str, PodGroupStatus]:
        """The last session's statuses made from the job alone, for the jobs whose record this
        session took unchanged (`_remade` leaves them out) and did not change."""
        if self._carried_statuses is None:
            return {}
        left_out = self._remade | self._touched_jobs
        return {k: s for k, s in self._carried_statuses.items() if k not in left_out}


class Carried:
    """A session's task and job records, for the next session to take again where nothing of
    theirs changed: a record is taken when its facts are the very same object (the cache hands
    every cycle the same facts until the object changes) and the session did not move it; a job
    is made anew when its facts changed, the session changed it, or one of its tasks was
    added, changed, moved or gone (its tasks are then added to the new record). A cycle over
    thousands of running pods so makes records only for what changed since the last one; the
    ledger, the plugins and the actions still read every record, as before."""

    __slots__ = (
        "class_ids",
        "holes",
        "jobs",
        "opening",
        "statuses",
        "tasks",
        "touched_jobs",
        "touched_tasks",
    )

    CLASSES_HELD = 65_536
    """Distinct task classes a chain of sessions numbers at most; past that it starts again."""

    def __init__(
        self,
        tasks: dict[str, TaskState],
        jobs: dict[str, JobState],
        class_ids: dict[TemplateKey, int],
        touched_tasks: set[str],
        touched_jobs: set[str],
        opening: Opening,
        *,
        statuses: Mapping[str, PodGroupStatus],
        holes: Holes,
    ) -> None:
        self.tasks, self.jobs, self.class_ids = tasks, jobs, class_ids
        self.touched_tasks, self.touched_jobs = touched_tasks, touched_jobs
        self.opening = opening
        self.statuses = statuses
        """The PodGroup statuses the session made from the job alone, by job key: the next
        session takes them again for the jobs it takes unchanged and does not change."""
        self.holes = holes

    def usable(self) -> bool:
        """Whether a session may start from these records."""
        return len(self.class_ids) < self.CLASSES_HELD

    def take(self) -> Taken:
        """Copies of the task and job maps and of the queue totals, for a session to patch
        (C-level copies: these records stay as they are, and may open another session; a map
        rebuilt first when the keys popped from it reach a quarter, `model.compact`)."""
        opening = self.opening
        tasks, task_holes = compacted(self.tasks, self.holes.tasks)
        jobs, job_holes = compacted(self.jobs, self.holes.jobs)
        return Taken(
            tasks.copy(),
            jobs.copy(),
            opening.totals.copy(),
            self.touched_tasks,
            opening,
            Holes(task_holes, job_holes),
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Taken:
    """A `Carried`'s maps and queue totals, copied for one session to patch in place."""

    tasks: dict[str, TaskState]
    jobs: dict[str, JobState]
    totals: QueueTotals
    touched_tasks: set[str]
    opening: Opening
    holes: Holes


@dataclasses.dataclass(frozen=True, slots=True)
class Holes:
    """The keys popped from a session's task and job maps since each was built: the maps are
    copied from one session to the next (`Carried.take`) and rebuilt when these reach a
    quarter (`model.compact`)."""

    tasks: int = 0
    jobs: int = 0


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class Opening:
    """What a session's open read from its snapshot, for the next session: when that one's
    nodes are the same by name and order, each with the same resource names, and its tasks
    request no resource in or out of the dimensions, it resumes this ledger (reading again
    only the rows of nodes whose allocatable or pod count changed) and loads only the tasks
    whose facts changed, came or went (`_changes`; the cache hands every snapshot the same
    facts objects until an object changes); the other records are taken again as `Carried`
    says, so a cycle over thousands of running pods costs a C-level copy of the task map and
    light passes for the few tasks it must read again, not a load of every task."""

    tasks: Mapping[str, TaskFacts]
    """The snapshot's tasks the ledger was loaded from."""
    ledger: Loaded
    totals: QueueTotals
    pending: frozenset[str]
    """Uids of the pending tasks."""
    nominated: frozenset[str]
    """Uids of the tasks on no node that carry a nomination."""
    orphans: frozenset[str]
    """Uids of the pending tasks whose PodGroup is not in the snapshot."""
    homeless: frozenset[str]
    """Uids of the tasks, of any status, that name a job not in the snapshot."""
    ports: frozenset[str]
    """Uids of the tasks that ask host ports."""
    terms: frozenset[str]
    """Uids of the tasks with inter-pod terms or spread constraints."""
    staged: frozenset[str]
    """Uids of the tasks whose facts read Allocated or Pipelined."""
    on_nodes: frozenset[str]
    """The resource names some node's allocatable has."""
    extra: frozenset[str]
    """The resource names tasks request that no node has (dimensions of their own)."""
    serial: int
    """The snapshot's serial (`ClusterSnapshot.serial`)."""
    jobs: Mapping[str, JobFacts]
    """The snapshot's jobs the records were made from (`_job_changes`)."""
    podgroups: tuple[str, ...] | None
    """The snapshot's `podgroups`."""
    phase_pending: frozenset[str]
    """Keys of the jobs whose phase was Pending at open (`Session.pending_jobs`)."""


class _Loading:
    """What a session's open reads of the task records it makes or takes."""

    __slots__ = (
        "homeless",
        "nominated",
        "orphans",
        "pending",
        "placed",
        "ports",
        "staged",
        "terms",
    )

    def __init__(self) -> None:
        self.pending: set[str] = set()
        self.nominated: set[str] = set()
        self.orphans: set[str] = set()
        self.homeless: set[str] = set()
        self.ports: set[str] = set()
        self.terms: set[str] = set()
        self.staged: set[str] = set()
        self.placed: tuple[Placed, Placed, Placed] = (([], []), ([], []), ([], []))
        """Tasks counted on nodes: occupying, pipelined, releasing (see `Ledger.load`)."""

    def note(self, task: TaskState, index: Mapping[str, int]) -> None:
        """The record's node row (set on it), and whether it is pending, nominated, or
        without its job (pending or not)."""
        facts = task.facts
        if task.job is None and facts.job:
            self.homeless.add(facts.uid)
            if facts.status is TaskStatus.PENDING:
                self.orphans.add(facts.uid)
        if facts.status is TaskStatus.PENDING:
            self.pending.add(facts.uid)
        if facts.host_ports:
            self.ports.add(facts.uid)
        if podindex.has_terms(facts):
            self.terms.add(facts.uid)
        if facts.status in _STAGED:
            self.staged.add(facts.uid)
        if facts.node_name is None:
            if facts.nominated_node is not None:
                self.nominated.add(facts.uid)
        else:
            task.node_index = index.get(facts.node_name, -1)


@dataclasses.dataclass(frozen=True, slots=True)
class Changes:
    """What changed since an `Opening`, by uid: tasks whose facts changed or came, tasks gone;
    the rows of nodes whose allocatable or pod count changed (same name, same resource names),
    or None when the ledger cannot resume (see `_changes`)."""

    tasks: dict[str, TaskFacts]
    gone: dict[str, TaskFacts]
    nodes: list[int] | None


def _changes(snapshot: ClusterSnapshot, opening: Opening) -> Changes:
    """What changed since `opening`: read from the tasks the snapshot names when it names them
    against the opening's own snapshot (`ClusterSnapshot.changes`), else found by comparing
    every task. The ledger cannot resume (`nodes` None) when a node came or went, or its
    allocatable names another set of resources, or a task's request would add or drop a
    dimension of the ledger."""
    before, now_tasks = opening.tasks, snapshot.tasks
    told = snapshot.changes
    if told is not None and _told(snapshot, opening):
        changed: dict[str, TaskFacts] = {}
        gone: dict[str, TaskFacts] = {}
        for uid in sorted(told.uids):
            facts = now_tasks.get(uid)
            was = before.get(uid)
            if facts is not None and facts is not was:
                changed[uid] = facts
            elif facts is None and was is not None:
                gone[uid] = was
        return Changes(changed, gone, _node_rows(snapshot, opening, changed, gone))
    changed = {uid: facts for uid, facts in now_tasks.items() if before.get(uid) is not facts}
    came = sum(1 for uid in changed if uid not in before)
    gone = {}
    if len(now_tasks) - came != len(before):
        gone = {uid: facts for uid, facts in before.items() if uid not in now_tasks}
    return Changes(changed, gone, _node_rows(snapshot, opening, changed, gone))


class _Order(enum.Enum):
    """How a patched task map stands against the snapshot's order (`_task_order`)."""

    IN_ORDER = "in order"
    TAIL = "in order but for a tail"
    """In order up to the first new task, which comes before some held ones (`_mend_tail`)."""
    UNKNOWN = "not known to be in order"


def _task_order(
    snapshot: ClusterSnapshot,
    opening: Opening,
    changes: Changes,
    tasks: Mapping[str, object],
    last: str | None,
) -> _Order:
    """How `tasks` (the last session's map, the gone tasks deleted, the changed ones put in
    place, the new ones added after `last`, its last key then, in task order) stands against
    the snapshot's task order. Known from the changes when both snapshots keep their tasks in
    (creation time, uid) order and no changed task moved: in order when the first new one
    comes after `last`, else but for a tail (pods created in the same second arrive in any uid
    order); else found by comparing every key (C-level)."""
    now = snapshot.tasks
    if len(tasks) != len(now):
        return _Order.UNKNOWN
    if not (snapshot.cache_order and _told(snapshot, opening)):
        return _Order.IN_ORDER if list(tasks) == list(now) else _Order.UNKNOWN
    before = opening.tasks
    first: tuple[dt.datetime, str] | None = None
    for uid, facts in changes.tasks.items():
        old = before.get(uid)
        if old is None:
            key = cache_task_order(facts)
            first = key if first is None or key < first else first
        elif old.created != facts.created:
            return _Order.UNKNOWN
    if first is None or last is None or cache_task_order(now[last]) < first:
        return _Order.IN_ORDER
    return _Order.TAIL


def _mend_tail(
    entries: dict[str, _V],
    added: int,
    order: Callable[[str], tuple[dt.datetime, str]],
    movable: Callable[[str], bool] = lambda _key: True,
) -> int:
    """Put the last `added` entries (new tasks or lone pods' jobs; the ones before them in
    `order`) in their places: the held ones that come after the first new one in `order`
    (creation time, then uid), and are `movable`, are taken out with the new ones and put back
    in order behind the others. They are the pods created in the same second, so a few.
    Returns how many were taken out (`Holes`)."""
    keys = reversed(entries)
    tail = [next(keys) for _ in range(added)]
    first = min(map(order, tail))
    for key in keys:
        if not movable(key) or order(key) < first:
            break
        tail.append(key)
    tail.sort(key=order)
    moved = [(key, entries.pop(key)) for key in tail]
    entries.update(moved)
    return len(moved)


def _job_order(
    snapshot: ClusterSnapshot,
    opening: Opening,
    jobs: Mapping[str, object],
    last: str | None,
    stale: Sequence[str],
) -> _Order:
    """How `jobs` (patched as `_task_order` says of tasks, `stale` the jobs put in place or
    added) stands against the snapshot's job order: its PodGroups, then the lone pods' implicit
    jobs in the order of their pods. Known from the changes when the snapshots keep their tasks
    in (creation time, uid) order and name the same PodGroups: no changed job moved, and in
    order when the first new one comes after `last`, else but for a tail (the new jobs are lone
    pods' of the same second as held ones: `_mend_tail`); else found by comparing every
    key (C-level)."""
    now = snapshot.jobs
    if len(jobs) != len(now):
        return _Order.UNKNOWN
    if not (
        snapshot.cache_order
        and _told(snapshot, opening)
        and snapshot.podgroups == opening.podgroups
    ):
        return _Order.IN_ORDER if list(jobs) == list(now) else _Order.UNKNOWN
    before = opening.jobs
    first: str | None = None
    for key in stale:
        old = before.get(key)
        if old is None:
            first = key if first is None else first  # `stale` is in job order
        elif old.created != now[key].created:
            return _Order.UNKNOWN
    if first is None or last is None or not now[last].synthetic:
        return _Order.IN_ORDER
    if implicit_job_order(now[last]) < implicit_job_order(now[first]):
        return _Order.IN_ORDER
    return _Order.TAIL


def _told(snapshot: ClusterSnapshot, opening: Opening) -> bool:
    """Whether the snapshot names the tasks that may differ from the opening's own snapshot."""
    told = snapshot.changes
    return told is not None and told.since == opening.serial and bool(opening.serial)


def _node_rows(
    snapshot: ClusterSnapshot,
    opening: Opening,
    changed: Mapping[str, TaskFacts],
    gone: Mapping[str, TaskFacts],
) -> list[int] | None:
    """The rows of the nodes whose allocatable or pod count changed, or None when the ledger
    cannot resume (a node's other facts, such as its labels, are not in the ledger)."""
    nodes = opening.ledger.nodes
    if len(nodes) != len(snapshot.nodes):
        return None
    rows: list[int] = []
    now_nodes = snapshot.nodes
    for i in itertools.compress(itertools.count(), map(operator.is_not, nodes, now_nodes)):
        was, now = nodes[i], now_nodes[i]  # only the nodes whose facts changed (C-level pass)
        if was.name != now.name or was.allocatable.names() != now.allocatable.names():
            return None
        if was.allocatable != now.allocatable or was.max_pods != now.max_pods:
            rows.append(i)
    dims = opening.ledger.dim_index
    for facts in changed.values():
        for name, _ in facts.resreq.unordered_items():
            if name not in dims:
                return None
    if opening.extra:
        for uid in itertools.chain(changed, gone):
            was_task = opening.tasks.get(uid)
            if was_task is not None and opening.extra.intersection(was_task.resreq.names()):
                return None
    return rows


def _job_changes(
    snapshot: ClusterSnapshot, opening: Opening, changes: Changes
) -> tuple[list[str], list[str]]:
    """The keys of the snapshot's jobs whose facts came or changed since `opening` (in job
    order, near enough: `_load_jobs` puts them in order), and of the jobs gone. When the
    snapshot names its changed tasks against the opening's (`_told`) and both name their
    PodGroups, only the PodGroups and the jobs of the tasks that changed, came or went are
    looked at: a lone pod's implicit job is made again only from new task facts
    (`complete_jobs`); else every job, by C-level passes (identity of each job's facts)."""
    now, before = snapshot.jobs, opening.jobs
    if not _told(snapshot, opening) or snapshot.podgroups is None or opening.podgroups is None:
        flags = map(operator.is_not, map(before.get, now), now.values())
        stale = list(itertools.compress(now, flags))
        came = sum(1 for key in stale if key not in before)
        gone: list[str] = []
        if len(now) - came != len(before):
            gone = [key for key in before if key not in now]
        return stale, gone
    keys = dict.fromkeys(snapshot.podgroups)
    keys.update(dict.fromkeys(opening.podgroups))
    was = opening.tasks
    for uid in _in_task_order(snapshot, changes.tasks.keys()):
        keys[changes.tasks[uid].job] = None
        old = was.get(uid)
        if old is not None:
            keys[old.job] = None
    for old in changes.gone.values():
        keys[old.job] = None
    stale = [k for k in keys if (f := now.get(k)) is not None and before.get(k) is not f]
    return stale, [k for k in keys if k in before and k not in now]


def _remade(
    snapshot: ClusterSnapshot, carried: Carried, changes: Changes, gone: Iterable[str]
) -> set[str]:
    """The job keys whose records must be made anew: a task of theirs added, changed, moved or
    gone, or the job itself changed in the last session or `gone` (jobs whose facts changed are
    added as they are loaded, `Session._load_jobs`)."""
    remade = set(carried.touched_jobs)
    for uid in itertools.chain(changes.tasks, changes.gone, carried.touched_tasks):
        old = carried.tasks.get(uid)
        if old is not None:
            remade.add(old.facts.job)
        facts = snapshot.tasks.get(uid)
        if facts is not None:
            remade.add(facts.job)
    remade.update(gone)
    return remade


def _to_make(
    now: Mapping[str, TaskFacts],
    carried: Carried,
    changed: Mapping[str, TaskFacts],
    remade: set[str],
) -> set[str]:
    """The uids whose records a session opening from `carried` makes (or adds again to a job
    made anew): tasks that came or changed, tasks the last session moved, and every task of a
    job made anew. A job's tasks are the ones its last record held, and the ones that named
    it while it was missing (`Opening.homeless`); a task that named another job then changed."""
    made = set(changed)
    made.update(uid for uid in carried.touched_tasks if uid in now)
    old_jobs = carried.jobs
    for key in remade:
        old = old_jobs.get(key)
        if old is not None:
            made.update(uid for uid in old.tasks if uid in now)
    made.update(
        uid
        for uid in carried.opening.homeless
        if (facts := now.get(uid)) is not None and facts.job in remade
    )
    return made


_FEW = 8
"""Uids at most one in `_FEW` of the tasks are put in task order by sorting them."""


def _in_task_order(snapshot: ClusterSnapshot, uids: AbstractSet[str]) -> list[str]:
    """Those of `uids` that are tasks of `snapshot`, in task order: sorted by creation time and
    uid when the snapshot keeps its tasks in that order (`cache_order`) and they are few,
    else by one C-level pass over the tasks. Python passes over every task, several a cycle,
    were most of what a cycle of a steady stream cost beside thousands of running pods."""
    if not uids:
        return []
    tasks = snapshot.tasks
    if snapshot.cache_order and len(uids) * _FEW < len(tasks):
        present = [uid for uid in uids if uid in tasks]
        present.sort(key=lambda uid: cache_task_order(tasks[uid]))
        return present
    return list(filter(uids.__contains__, tasks))


def _requested_dims(tasks: Iterable[TaskFacts]) -> set[str]:
    names: set[str] = set()
    seen: set[TemplateKey] = set()  # most pods share a handful of templates, each one object
    for task in tasks:
        template = task.template_key()
        if template not in seen:
            seen.add(template)
            names.update(task.resreq.names())
    return names
