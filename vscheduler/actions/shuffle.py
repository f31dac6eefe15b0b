"""shuffle: evict the running tasks that the victim-tasks plugins name, within safety rails.

Owns gathering the candidates, asking the victimTasks and victimFilter points, the rails and the
evictions. Candidates are the RUNNING tasks of jobs this scheduler owns (tasks whose PodGroup,
or implicit job of one, is in the session) on a node the session knows, ordered by node name,
then pod key, then uid; other schedulers' pods never are, nor pods whose eviction the API server
refused lately (`TaskFacts.eviction_refused`, in backoff: see `cache.refusals`). Victims are
`dispatch.filter_victims(dispatch.propose_victims(candidates))`: the first tier with a non-empty
union, then narrowed by every filter. Each victim, in the order of that list, is then held to
the rails, the first that fails deciding (`Rail`):

- it must be one of the candidates, still running (a plugin cannot reach beyond them);
- a real PodGroup (not a lone pod's implicit job) keeps at least `minMember` running tasks;
- at most `maxEvictionsPerNode` evictions per node and `maxEvictionsPerRun` per run, unless
  the proposing plugin held the victim to a disruption budget of its own
  (`note_victim(..., budgeted=True)`: tdm's `volcano.sh/jdb-min-available` /
  `jdb-max-unavailable`, default 1 per job). The caps are the default for victims no budget
  bounds (rescheduling's); an explicit budget is the user's word on how much disruption a job
  takes, and a cap that silently cut it would override it. Budgeted evictions still count
  toward the caps of the victims that follow.

A kept victim is evicted in a statement of its own, committed at once, so a failed eviction
(logged at WARNING) undoes nothing else and is not tried again in the cycle. The eviction's
reason is `shuffle: <why>` with the proposing plugin's reason from `session.findings`
(plain `shuffle` without one), and its strategy labels the eviction metrics. Skipped victims are
logged at DEBUG, one line each, and counted by rail in one DEBUG summary line per run.

Must not: evict anything that is not a candidate, retry a failed eviction, read a clock, or do
any I/O beyond logging.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from vscheduler.conf.arguments import ArgumentReader
from vscheduler.errors import InvariantError
from vscheduler.framework.session import Session
from vscheduler.framework.state import TaskState
from vscheduler.model.status import TaskStatus

logger = logging.getLogger(__name__)

NAME: Final = "shuffle"
DEFAULT_MAX_PER_NODE: Final = 2
DEFAULT_MAX_PER_RUN: Final = 10


class Rail(enum.Enum):
    """Why a proposed victim was not evicted."""

    NOT_CANDIDATE = "not a running pod of this scheduler's jobs"
    GANG = "its gang would fall below minMember"
    NODE_CAP = "maxEvictionsPerNode reached on its node"
    RUN_CAP = "maxEvictionsPerRun reached"
    FAILED = "the eviction failed"


@dataclasses.dataclass(frozen=True, slots=True)
class Limits:
    """The caps on one run: evictions per node and in all."""

    per_node: int = DEFAULT_MAX_PER_NODE
    per_run: int = DEFAULT_MAX_PER_RUN


@dataclasses.dataclass(slots=True)
class Tally:
    """What one run did: the tasks evicted, in order, and the victims skipped with their rail."""

    evicted: list[TaskState] = dataclasses.field(default_factory=list)
    skipped: list[tuple[TaskState, Rail]] = dataclasses.field(default_factory=list)
    per_node: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)

    def counts(self) -> dict[str, int]:
        """Skipped victims by rail name, in `Rail` order (rails that skipped none left out)."""
        by_rail = collections.Counter(rail for _, rail in self.skipped)
        return {rail.name.lower(): by_rail[rail] for rail in Rail if by_rail[rail]}


class Shuffle:
    """The shuffle action."""

    name = NAME

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    def execute(self, session: Session) -> None:
        """Evict what the plugins name, within the rails."""
        pool = candidates(session)
        victims = session.dispatch.filter_victims(session.dispatch.propose_victims(pool))
        tally = evict_victims(session, victims, pool, self.limits)
        if victims and logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "shuffle: %d candidates, %d victims, %d evicted, skipped %s",
                len(pool),
                len(victims),
                len(tally.evicted),
                ", ".join(f"{rail} {n}" for rail, n in tally.counts().items()) or "none",
            )


def candidates(session: Session) -> list[TaskState]:
    """The running tasks of the session's jobs on known nodes: by node, pod key, uid."""
    tasks = [
        t
        for t in session.tasks.values()
        if t.status is TaskStatus.RUNNING
        and t.job is not None
        and t.node_index >= 0
        and not t.facts.eviction_refused
    ]
    return sorted(tasks, key=lambda t: (t.node or "", t.key, t.uid))


def evict_victims(
    session: Session, victims: Sequence[TaskState], pool: Iterable[TaskState], limits: Limits
) -> Tally:
    """Evict each of `victims` in order that passes the rails; `pool` are the candidates."""
    allowed = {t.uid for t in pool}
    tally = Tally()
    for task in victims:
        budgeted = session.findings.budgeted(task.uid)
        rail = _rail(task, allowed, tally, limits, budgeted=budgeted)
        if rail is None:
            allowed.discard(task.uid)  # tried once: never again in this run
            if not _evict(session, task):
                rail = Rail.FAILED
        if rail is not None:
            tally.skipped.append((task, rail))
            logger.debug("shuffle: %s not evicted: %s", task.key, rail.value)
            continue
        tally.evicted.append(task)
        tally.per_node[task.node or ""] += 1
    return tally


def _rail(
    task: TaskState, allowed: set[str], tally: Tally, limits: Limits, *, budgeted: bool
) -> Rail | None:
    """The first rail `task` fails, or None (a `budgeted` victim is not held to the caps).
    Counts are live: the statuses of tasks evicted earlier in the run are already Releasing."""
    job = task.job
    if task.uid not in allowed or task.status is not TaskStatus.RUNNING or job is None:
        return Rail.NOT_CANDIDATE
    if not job.facts.synthetic and job.count(TaskStatus.RUNNING) - 1 < job.min_member:
        return Rail.GANG
    if budgeted:
        return None
    if tally.per_node[task.node or ""] >= limits.per_node:
        return Rail.NODE_CAP
    if len(tally.evicted) >= limits.per_run:
        return Rail.RUN_CAP
    return None


def _evict(session: Session, task: TaskState) -> bool:
    """Evict `task` in a statement of its own; False (logged) if the statement refused."""
    strategy, why = session.findings.victim_note(task.uid)
    reason = f"{NAME}: {why}" if why else NAME
    stmt = session.statement()
    try:
        stmt.evict(task, reason, action=NAME, strategy=strategy)
    except InvariantError as exc:
        stmt.discard()
        logger.warning("shuffle: evicting %s failed, skipped this cycle: %s", task.key, exc)
        return False
    stmt.commit()
    return True


def build(arguments: Mapping[str, object]) -> Shuffle:
    """The shuffle action; `maxEvictionsPerNode` (default 2) and `maxEvictionsPerRun`
    (default 10) cap its evictions (0 evicts nothing)."""
    reader = ArgumentReader(arguments, owner=f"action {NAME}")
    per_node = reader.int("maxEvictionsPerNode", DEFAULT_MAX_PER_NODE, minimum=0)
    per_run = reader.int("maxEvictionsPerRun", DEFAULT_MAX_PER_RUN, minimum=0)
    reader.finish()
    return Shuffle(Limits(per_node=per_node, per_run=per_run))
