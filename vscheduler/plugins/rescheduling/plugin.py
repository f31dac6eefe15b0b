"""rescheduling's factory and per-session objects: the hooks, wired to the strategies.

The factory lives as long as the policy and keeps the plugin's `Memory` (last run, cooldowns,
nodes to avoid). Each session gets the smallest object that does the job: `propose_victims` and
`on_session_close` only when the interval has passed, the avoid predicate (`filter_nodes`,
`explain_node`, with `node_local = False`: it depends on the pod's workload, which is not part of
the placement class) only while some workload has a node to avoid, and otherwise an object with
no hooks at all, so ordinary cycles pay nothing. Does no I/O; time is the session's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np

from vscheduler.plugin_api import (
    BoolArray,
    IntArray,
    Needs,
    PluginSession,
    Predicate,
    PredicateReason,
    SessionClose,
    Status,
    TaskState,
    VictimTasks,
    cluster_total,
    unresolvable,
)
from vscheduler.plugins.rescheduling import lnu, strategies
from vscheduler.plugins.rescheduling.candidates import eligible
from vscheduler.plugins.rescheduling.config import LOW_NODE_UTILIZATION, NAME, Config
from vscheduler.plugins.rescheduling.state import Memory, workload_of

SHUFFLE = "shuffle"
AVOID_REASON = "node(s) gave up a pod of this workload to the rescheduling plugin recently"


class Idle:
    """Not time to run and nothing to avoid: no hooks."""


class Avoiding(Predicate, PredicateReason):
    """Replacement pods of moved workloads stay off the nodes their pods left."""

    node_local = False

    def __init__(self, nodes: dict[str, IntArray]) -> None:
        self._nodes = nodes

    def filter_nodes(self, task: TaskState, idx: IntArray) -> BoolArray:
        """False on the nodes `task`'s workload must avoid."""
        nodes = self._nodes.get(workload_of(task))
        if nodes is None:
            return np.ones(len(idx), dtype=np.bool_)
        return ~np.isin(idx, nodes)

    def explain_node(self, task: TaskState, i: int) -> Status | None:
        """Why node `i` is refused to `task` (None when it is not)."""
        nodes = self._nodes.get(workload_of(task))
        if nodes is not None and i in nodes:
            return unresolvable(AVOID_REASON)
        return None


class Proposing(VictimTasks, SessionClose):
    """Time to run: proposes victims, and at close remembers the ones shuffle evicted."""

    def __init__(self, session: PluginSession, factory: Factory) -> None:
        self._session = session
        self._factory = factory
        self._proposed: dict[str, str] = {}
        """uid -> workload of every task proposed this session."""
        self.outcome = "not asked"
        """How the last proposal ended (for tests and debugging)."""

    def propose_victims(self, candidates: Sequence[TaskState]) -> tuple[TaskState, ...]:
        """The victims the strategy chain picks among shuffle's candidates."""
        session, config, memory = self._session, self._factory.config, self._factory.memory
        memory.last_run = session.now
        allowed = eligible(candidates, config, memory, session.now)
        ordered = strategies.apply(
            config.strategies, allowed, total=cluster_total(session), offered=candidates
        )
        if LOW_NODE_UTILIZATION in config.strategies:
            outcome = lnu.select(session, config, ordered)
            label, picks, self.outcome = LOW_NODE_UTILIZATION, outcome.picks, outcome.note
        else:
            label = strategies.chain_label(config.strategies)
            picks = tuple((t, f"chosen by {label}") for t in ordered)
            self.outcome = f"{len(picks)} pods chosen by {label}"
        for task, reason in picks:
            session.note_victim(task, label, reason)
            self._proposed[task.uid] = workload_of(task)
        return tuple(task for task, _ in picks)

    def on_session_close(self) -> None:
        """Remember the workloads shuffle moved on our proposal, and the nodes they left."""
        config, now = self._factory.config, self._session.now
        for evict in self._session.evictions:
            workload = self._proposed.get(evict.task_uid)
            if evict.action != SHUFFLE or not workload:
                continue
            self._factory.memory.record_move(
                workload, evict.node, now, cooldown=config.cooldown, avoid_for=config.avoid_for
            )


class ProposingAvoiding(Proposing, Avoiding):
    """Time to run, and some workload has nodes to avoid."""

    def __init__(
        self, session: PluginSession, factory: Factory, nodes: dict[str, IntArray]
    ) -> None:
        Proposing.__init__(self, session, factory)
        Avoiding.__init__(self, nodes)


class Factory:
    """Lives as long as the policy; keeps the plugin's memory across cycles."""

    name = NAME
    plugin = (Idle, Avoiding, Proposing, ProposingAvoiding)

    def __init__(self, config: Config) -> None:
        self.config = config
        self.memory = Memory()
        self.needs = Needs(usage_periods=(config.metrics_period,))

    @property
    def last_run(self) -> dt.datetime | None:
        """When the strategies last ran (None before the first run)."""
        return self.memory.last_run

    def open(self, session: PluginSession) -> Idle | Avoiding | Proposing:
        """The smallest plugin object this session needs (expired entries are dropped first)."""
        now = session.now
        self.memory.expire(now)
        nodes = _node_indices(session, self.memory.avoided(now))
        due = self.memory.due(now, self.config.interval)
        if due and nodes:
            return ProposingAvoiding(session, self, nodes)
        if due:
            return Proposing(session, self)
        if nodes:
            return Avoiding(nodes)
        return Idle()


def _node_indices(
    session: PluginSession, avoided: dict[str, tuple[str, ...]]
) -> dict[str, IntArray]:
    """workload -> the session's indices of the nodes it avoids (nodes gone are dropped)."""
    index = session.ledger.index
    out: dict[str, IntArray] = {}
    for workload, names in avoided.items():
        found = [index[n] for n in names if n in index]
        if found:
            out[workload] = np.array(found, dtype=np.int64)
    return out
