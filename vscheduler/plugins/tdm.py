"""tdm (time division multiplexing): revocable nodes lend themselves to preemptable pods, inside
their zone's daily time window, and get them back when the window closes.

A node is revocable when it has the label `volcano.sh/revocable-zone: <zone>`; the argument
`tdm.revocable-zone.<zone>: "HH:MM-HH:MM"` gives the zone's window, read on the session's clock
in UTC (an end before the start runs past midnight; equal ends mean all day). A pod may use
revocable nodes when its annotation `volcano.sh/revocable-zone` is `*`, or, without that
annotation, its annotation `volcano.sh/preemptable` is true. A pod is preemptable unless it
opted out: its `volcano.sh/preemptable` (annotation, else label) is set and does not read true
(Volcano's `TaskInfo.Preemptable`, true without the key since Volcano 1.7). A job is preemptable
when its PodGroup's annotation `volcano.sh/preemptable` is true (a lone pod's job: when the pod
sets it true; Volcano's `JobInfo.Preemptable`, false without the key).

Registers (Volcano's tdm plugin):
    filter_nodes      a revocable node passes only while its zone is configured and open, and
                      only for a pod that may use revocable nodes; other nodes always pass
    score_nodes       100 for an open revocable node, for a pod that may use it; 0 otherwise
    select_preemptees none when the preemptor is preemptable or may use revocable nodes;
                      otherwise the Running preemptable candidates on non-revocable nodes,
                      at most the job's eviction budget per job, in candidate order
    propose_victims   at most once per `tdm.evict.period`: the Running preemptable candidates
                      on revocable nodes whose zone is closed, at most the eviction budget per
                      job, each noted with `session.note_victim` as ("tdm", why), budgeted:
                      shuffle's per-node and per-run caps do not cut them (the budget rules)
    compare_jobs      non-preemptable jobs first
    job_order_key     the same as a key: 1 when preemptable (jobOrderKey, ours)
    vote_pipelined    PERMIT when placed plus pipelined tasks reach minMember, else REJECT
    is_job_starving   a non-preemptable job with pending tasks

A job's eviction budget: with the PodGroup annotation `volcano.sh/jdb-min-available: N` (an
integer or a percentage of its tasks, rounded up), its Running tasks beyond N; else with
`volcano.sh/jdb-max-unavailable: N`, N less its tasks that are neither Running nor finished;
else 1. An annotation that is not a non-negative integer or percentage gives 0.

Arguments:
    tdm.revocable-zone.<zone>  "HH:MM-HH:MM", the zone's daily window (UTC)
    tdm.evict.period           Go duration >= 0, default 1m: the least time between two
                               evaluations of propose_victims (kept on the factory)

Differences from Volcano, on purpose:
- A window that runs past midnight is open after midnight too (Volcano anchors both ends to the
  current day, so "22:00-06:00" is open only until midnight); a window closes at its end minute.
- A malformed window or period is a policy error; Volcano ignores a bad period and fails every
  predicate on a bad window.
- A minAvailable budget a job is already below gives 0 victims (Volcano gives 1), and a
  malformed budget 0 (Volcano reads it as 0, which with minAvailable evicts every Running task).
- propose_victims takes victims only among the candidates it is given, and the budget applies
  per job across zones (Volcano: per zone).
- A PodGroup's `volcano.sh/preemptable` is read from its annotations only (PodGroup labels are
  not part of the snapshot).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    ArgumentReader,
    BoolArray,
    FloatArray,
    IntArray,
    JobOrder,
    JobOrderKey,
    JobPipelined,
    JobStarving,
    JobState,
    NodeOrder,
    PluginArgsError,
    PluginSession,
    Predicate,
    PredicateReason,
    Preemptable,
    Status,
    TaskState,
    TaskStatus,
    VictimTasks,
    Vote,
    unresolvable,
)

NAME: Final = "tdm"
ZONE_PREFIX: Final = "tdm.revocable-zone."
EVICT_PERIOD: Final = "tdm.evict.period"
DEFAULT_EVICT_PERIOD: Final = 60.0
REVOCABLE_ZONE: Final = "volcano.sh/revocable-zone"
"""The node label naming a node's zone; as a pod annotation, `*` lets the pod use any zone."""
PREEMPTABLE: Final = "volcano.sh/preemptable"
JDB_MIN_AVAILABLE: Final = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE: Final = "volcano.sh/jdb-max-unavailable"
DEFAULT_EVICT_NUM: Final = 1
MAX_SCORE: Final = 100.0

_WINDOW: Final = re.compile(r"\s*([0-9]{1,2}):([0-9]{2})\s*-\s*([0-9]{1,2}):([0-9]{2})\s*")
_GO_TRUE: Final = frozenset({"1", "t", "T", "true", "TRUE", "True"})
_COUNT: Final = re.compile(r"\+?([0-9]+)")
_PERCENT: Final = re.compile(r"([0-9]+)%")


@dataclasses.dataclass(frozen=True, slots=True)
class Window:
    """A daily time window, in minutes after midnight UTC: [start, end)."""

    start: int
    end: int
    text: str

    def is_open(self, when: dt.datetime) -> bool:
        """Whether `when` falls inside the window (wrapping past midnight when end < start)."""
        utc = when.astimezone(dt.UTC)
        minute = utc.hour * 60 + utc.minute
        if self.start < self.end:
            return self.start <= minute < self.end
        if self.start > self.end:
            return minute >= self.start or minute < self.end
        return True


def parse_window(text: str) -> Window:
    """`HH:MM-HH:MM` (the hour may have one digit); raises ValueError."""
    match = _WINDOW.fullmatch(text)
    if match is None:
        raise ValueError(f"must be a time window like '10:00-21:00', got '{text}'")
    h1, m1, h2, m2 = (int(part) for part in match.groups())
    if h1 > 23 or h2 > 23 or m1 > 59 or m2 > 59:
        raise ValueError(f"must hold times from 00:00 to 23:59, got '{text}'")
    return Window(h1 * 60 + m1, h2 * 60 + m2, text.strip())


def may_use_revocable(task: TaskState) -> bool:
    """Volcano's task revocable zone: annotation `volcano.sh/revocable-zone: "*"`, or without
    that annotation, annotation `volcano.sh/preemptable` true."""
    annotations = task.facts.annotations
    zone = annotations.get(REVOCABLE_ZONE)
    if zone is not None:
        return zone == "*"
    return annotations.get(PREEMPTABLE) in _GO_TRUE


def _job_annotations(job: JobState) -> Mapping[str, str]:
    """The PodGroup's annotations; a lone pod's job (no PodGroup object) has its pod's."""
    lone = next(iter(job.tasks.values()), None) if job.facts.synthetic else None
    return job.facts.annotations if lone is None else lone.facts.annotations


def is_preemptable_job(job: JobState) -> bool:
    """The PodGroup's `volcano.sh/preemptable` annotation (a lone pod's job: the pod's, which
    Volcano's controller copies onto the PodGroup it makes); false without it, unlike a pod."""
    if job.facts.synthetic:
        return any(task.facts.preemptable for task in job.tasks.values())
    return job.facts.annotations.get(PREEMPTABLE) in _GO_TRUE


def is_preemptable(task: TaskState) -> bool:
    """Volcano's `TaskInfo.Preemptable` (`GetPodPreemptable`): `volcano.sh/preemptable`
    (annotation, else label) read as a Go boolean, malformed false, absent true."""
    return not task.facts.preemption_opt_out


def _amount(text: str, total: int) -> int | None:
    """An integer, or a percentage of `total` rounded up; None when malformed."""
    count = _COUNT.fullmatch(text)
    if count is not None:
        return int(count.group(1))
    percent = _PERCENT.fullmatch(text)
    if percent is not None:
        return math.ceil(int(percent.group(1)) * total / 100)
    return None


def eviction_budget(job: JobState) -> int:
    """How many of the job's tasks may be evicted now (Volcano's getMaxPodEvictNum)."""
    annotations = _job_annotations(job)
    total, running = len(job.tasks), job.count(TaskStatus.RUNNING)
    if JDB_MIN_AVAILABLE in annotations:
        least = _amount(annotations[JDB_MIN_AVAILABLE], total)
        return 0 if least is None else max(running - least, 0)
    if JDB_MAX_UNAVAILABLE in annotations:
        most = _amount(annotations[JDB_MAX_UNAVAILABLE], total)
        finished = job.count(TaskStatus.SUCCEEDED, TaskStatus.FAILED)
        unavailable = total - finished - running
        return 0 if most is None else max(most - unavailable, 0)
    return DEFAULT_EVICT_NUM


def within_budgets(tasks: Sequence[TaskState]) -> list[TaskState]:
    """`tasks` (in order), keeping at most each job's eviction budget of its tasks."""
    left: dict[str, int] = {}
    kept: list[TaskState] = []
    for task in tasks:
        job = task.job
        if job is None:
            continue
        if job.key not in left:
            left[job.key] = eviction_budget(job)
        if left[job.key] > 0:
            left[job.key] -= 1
            kept.append(task)
    return kept


class Tdm(
    JobOrder,
    JobOrderKey,
    Predicate,
    PredicateReason,
    NodeOrder,
    JobPipelined,
    JobStarving,
    Preemptable,
    VictimTasks,
):
    """The per-session plugin: each node's zone, and whether it is open now."""

    def __init__(self, session: PluginSession, factory: Factory) -> None:
        self._session = session
        self._factory = factory
        self.now = session.now
        windows = factory.windows
        self.zones: tuple[str, ...] = tuple(
            node.labels.get(REVOCABLE_ZONE, "") for node in session.ledger.nodes
        )
        self.revocable = np.array([zone != "" for zone in self.zones], dtype=np.bool_)
        self.open_now = np.array(
            [zone in windows and windows[zone].is_open(self.now) for zone in self.zones],
            dtype=np.bool_,
        )
        self.node_local = not self.revocable.any()
        """With a revocable node, the predicate and the score read the pod's annotations, which
        are not part of its template: the session must not share their answers per class."""

    # --- placement ----------------------------------------------------------------------------
    def filter_nodes(self, task: TaskState, idx: IntArray) -> BoolArray:
        """Non-revocable nodes pass; an open revocable one only for a pod that may use it."""
        if not self.revocable.any():
            return np.ones(len(idx), dtype=np.bool_)
        return ~self.revocable[idx] | (self.open_now[idx] & may_use_revocable(task))

    def explain_node(self, task: TaskState, i: int) -> Status | None:
        """Why node `i` is refused (its zone unknown or closed, or the pod not revocable)."""
        if not self.revocable[i]:
            return None
        zone = self.zones[i]
        window = self._factory.windows.get(zone)
        if window is None:
            return unresolvable(f"node(s) in revocable zone {zone}, not configured in plugin tdm")
        if not self.open_now[i]:
            return unresolvable(f"node(s) in revocable zone {zone}, closed now ({window.text})")
        if not may_use_revocable(task):
            return unresolvable("node(s) were revocable and the pod may not use revocable nodes")
        return None

    def score_nodes(self, task: TaskState, idx: IntArray) -> FloatArray | None:
        """100 for an open revocable node when the pod may use it; no opinion otherwise."""
        if not may_use_revocable(task) or not self.open_now.any():
            return None
        return np.where(self.revocable[idx] & self.open_now[idx], MAX_SCORE, 0.0)

    # --- victims ------------------------------------------------------------------------------
    def select_preemptees(
        self, preemptor: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Running preemptable tasks on non-revocable nodes, within their jobs' budgets; none
        for a preemptor that is itself preemptable or may use revocable nodes."""
        if is_preemptable(preemptor) or may_use_revocable(preemptor):
            return ()
        chosen = [
            t
            for t in candidates
            if _running_preemptable(t) and t.node_index >= 0 and not self.revocable[t.node_index]
        ]
        return tuple(within_budgets(chosen))

    def propose_victims(self, candidates: Sequence[TaskState]) -> tuple[TaskState, ...]:
        """Once per eviction period: running preemptable tasks on revocable nodes of closed
        zones, within their jobs' budgets."""
        factory = self._factory
        last = factory.last_evict_at
        if last is not None and self.now < last + dt.timedelta(seconds=factory.evict_period):
            return ()
        factory.last_evict_at = self.now
        closed = {z for z, w in factory.windows.items() if not w.is_open(self.now)}
        chosen = [
            t
            for t in candidates
            if _running_preemptable(t) and t.node_index >= 0 and self.zones[t.node_index] in closed
        ]
        victims = within_budgets(chosen)
        for task in victims:
            zone = self.zones[task.node_index]
            window = factory.windows[zone].text
            why = f"revocable zone {zone} of node {task.node} is closed ({window})"
            self._session.note_victim(task, NAME, why, budgeted=True)
        return tuple(victims)

    # --- jobs ---------------------------------------------------------------------------------
    def compare_jobs(self, a: JobState, b: JobState) -> int:
        """Non-preemptable jobs first."""
        return int(is_preemptable_job(a)) - int(is_preemptable_job(b))

    def job_order_key(self, job: JobState) -> int:
        """`compare_jobs` as a key: 1 when preemptable."""
        return int(is_preemptable_job(job))

    def vote_pipelined(self, job: JobState) -> Vote:
        """PERMIT when placed plus pipelined tasks reach minMember, REJECT otherwise."""
        enough = job.ready_num() + job.waiting_num() >= job.min_member
        return Vote.PERMIT if enough else Vote.REJECT

    def is_job_starving(self, job: JobState) -> bool:
        """A non-preemptable job with pending tasks."""
        return not is_preemptable_job(job) and job.count(TaskStatus.PENDING) > 0


def _running_preemptable(task: TaskState) -> bool:
    return is_preemptable(task) and task.status is TaskStatus.RUNNING


class Factory:
    """Lives as long as the policy: the zones' windows, the eviction period, and when victims
    were last looked for (so at most once per period, across sessions)."""

    name = NAME
    plugin = Tdm

    def __init__(self, windows: Mapping[str, Window], evict_period: float) -> None:
        self.windows = dict(windows)
        self.evict_period = evict_period
        self.last_evict_at: dt.datetime | None = None

    def open(self, session: PluginSession) -> Tdm:
        """A fresh plugin for `session`."""
        return Tdm(session, self)


def build(arguments: Mapping[str, object]) -> Factory:
    """Read `tdm.revocable-zone.<zone>` windows and `tdm.evict.period` (default 1m)."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    windows: dict[str, Window] = {}
    bad: list[str] = []
    for key in reader.keys_with_prefix(ZONE_PREFIX):
        text = reader.str(key, "")
        zone = key.removeprefix(ZONE_PREFIX)
        try:
            if not zone:
                raise ValueError("must name a zone after 'tdm.revocable-zone.'")
            windows[zone] = parse_window(text)
        except ValueError as err:
            if isinstance(arguments[key], str):
                bad.append(f"plugin {NAME}: arguments.{key}: {err}")
    period = reader.duration(EVICT_PERIOD, DEFAULT_EVICT_PERIOD)
    try:
        reader.finish()
    except PluginArgsError as err:
        raise PluginArgsError(*err.problems, *bad) from None
    if bad:
        raise PluginArgsError(*bad)
    return Factory(windows, period)
