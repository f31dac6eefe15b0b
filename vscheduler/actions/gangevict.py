"""Gang-aware eviction: what gangpreempt and gangreclaim share (Volcano v1.15's design,
docs/design/gang-aware-eviction-design.md; `actions/utils` there).

For one asking job (the asker), in one domain (here always the whole cluster, Volcano's
`<cluster-top-hypernode>`: vscheduler has no HyperNodes):

1. the asker's pending tasks that request something, not gated, in task order, all of them
   (Volcano's worksheet of the job's one sub-job); its need is their requests summed. A job
   with a pending pod whose `preemptionPolicy` is `Never` asks nothing;
2. the action's candidates (`Scope`) grouped per victim job into safe and whole bundles
   (`actions/bundles.py`), sorted, asked of the plugins once as one ordered list (the
   unifiedEvictable point, `Dispatcher.select_gang_victims`), kept as the plugins allow (a whole
   bundle all or nothing, a safe one shrunk), sorted again; whole bundles are dropped when
   `allowWholeBundle` is false;
3. bundles are added one by one, cheapest first; once the cluster's future idle plus what the
   chosen bundles free covers the need, a trial: one statement evicts every chosen victim and
   pipelines each pending task on the node the allocate rules choose (predicates, the queue's
   allocatable, idle room before future room, then the scores; a nominated node is not
   preferred, as in Volcano's simulation); the trial holds only if every task is placed and
   the job is then ready or pipelined. A failed trial is discarded and the next bundle added.
   The first trial that holds is committed: its evictions (one plan, carried out all or none,
   `Evict.plan`) and the pipelined tasks, nominated to their nodes for a later allocate to
   bind. Nothing is evicted without a trial that holds, and nothing is placed without evicting
   (a job that fits as the cluster stands is allocate's).

Must not: decide which jobs ask, or in which order (the actions do).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Final

import numpy as np

from vscheduler.actions import bundles
from vscheduler.actions.askers import never_preempts
from vscheduler.actions.evictables import is_candidate
from vscheduler.conf.arguments import ArgumentReader
from vscheduler.framework.placement import Choice
from vscheduler.framework.protocols import EvictionContext, EvictionKind
from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState, QueueState, TaskState
from vscheduler.framework.statement import Statement
from vscheduler.model.resources import EMPTY, Resources

CLUSTER_DOMAIN: Final = "<cluster-top-hypernode>"
"""The one domain: the whole cluster (Volcano's name for the top of the HyperNode tree)."""
DEFAULT_MAX_DOMAINS: Final = 8


@dataclasses.dataclass(frozen=True, slots=True)
class Arguments:
    """The two actions' arguments (Volcano's `maxDomains`, `allowWholeBundle`)."""

    max_domains: int = DEFAULT_MAX_DOMAINS
    """How many HyperNode domains Volcano searches per job; with one domain, nothing to cap."""
    allow_whole_bundle: bool = True
    """Whether a bundle whose eviction breaks its gang may be taken."""


def read_arguments(reader: ArgumentReader) -> Arguments:
    """`maxDomains` (an integer; 0 or less falls back to 8, as Volcano's) and
    `allowWholeBundle` (default true)."""
    max_domains = reader.int("maxDomains", DEFAULT_MAX_DOMAINS)
    whole = reader.bool("allowWholeBundle", True)
    return Arguments(max_domains if max_domains > 0 else DEFAULT_MAX_DOMAINS, whole)


Scope = Callable[[JobState, TaskState], bool]
"""Whether a candidate (a task evictable at all) may be a victim of the asking job."""
Gate = Callable[[QueueState, Sequence[TaskState]], bool]
"""The action's last check before searching: may the queue ask for these pending tasks."""


class GangEvictor:
    """Runs the gang-aware eviction of one action run for each asking job."""

    def __init__(
        self,
        session: Session,
        *,
        kind: EvictionKind,
        arguments: Arguments,
        scope: Scope,
        order: Callable[[JobState], bundles.Order],
        reason: Callable[[JobState, QueueState], str],
    ) -> None:
        self.session = session
        self.kind: EvictionKind = kind
        self._whole = arguments.allow_whole_bundle
        self._scope = scope
        self._order = order
        self._reason = reason
        self._candidates = sorted(
            (t for t in session.tasks.values() if is_candidate(t)), key=lambda t: t.key
        )
        """Every task the action could evict at all, as the session opened (a task evicted
        since is passed over by its status)."""

    def run(self, queue: QueueState, job: JobState, gate: Gate | None = None) -> bool:
        """Find and commit the cheapest eviction that lets `job` run; True when one was."""
        session = self.session
        pending = session.pending_tasks(job, best_effort=False)
        if not pending or any(never_preempts(session, t) for t in pending):
            return False
        if gate is not None and not gate(queue, pending):
            return False
        need = _sum(pending)
        trying: list[Statement] = []

        def undo() -> None:
            for stmt in trying:
                stmt.discard()

        with session.contained(self.kind, job, undo):
            taken = self._bundles(job, need)
            for victims in bundles.attempts(taken, need, self._room(), allow_whole=self._whole):
                stmt = session.statement()
                trying[:] = [stmt]
                held = self.trial(stmt, queue, job, pending, victims)
                trying.clear()
                if held:
                    stmt.commit()
                    return True
                stmt.discard()
        return False

    # --- victims ------------------------------------------------------------------------------
    def _bundles(self, job: JobState, need: Resources) -> list[bundles.Bundle]:
        """The domain's victim bundles for `job`, in the order they are taken."""
        by_job: dict[str, tuple[JobState, list[TaskState]]] = {}
        for task in self._candidates:
            victim = task.job
            if (
                victim is None
                or victim is job
                or victim.facts.preemption_opt_out
                or not is_candidate(task)
                or not self._scope(job, task)
            ):
                continue
            by_job.setdefault(victim.key, (victim, []))[1].append(task)
        raw = [b for key in sorted(by_job) for b in bundles.split(*by_job[key])]
        if not raw:
            return []
        order = self._order(job)
        first = bundles.ordered(raw, need, order)
        context = EvictionContext(self.kind, job, CLUSTER_DOMAIN)
        allowed = self.session.dispatch.select_gang_victims(context, bundles.flatten(first))
        if not allowed:
            return []
        kept = bundles.keep_allowed(first, {t.uid for t in allowed})
        return bundles.ordered(kept, need, order)

    def _room(self) -> Resources:
        """The cluster's future idle (idle + releasing - pipelined), summed over the nodes."""
        ledger = self.session.ledger
        if not len(ledger):
            return EMPTY
        return ledger.resources_of(np.maximum(ledger.future, 0).sum(axis=0))

    # --- the trial ----------------------------------------------------------------------------
    def trial(
        self,
        stmt: Statement,
        queue: QueueState,
        job: JobState,
        pending: Sequence[TaskState],
        victims: Sequence[TaskState],
    ) -> bool:
        """Evict `victims` and place every pending task in `stmt`; True when the job is then
        ready or pipelined (the caller commits or discards). A task's nomination is no hint here:
        the node is chosen as for a task without one (Volcano's simulation reads none)."""
        session = self.session
        dispatch = session.dispatch
        reason = self._reason(job, queue)
        for victim in victims:
            stmt.evict(victim, reason, action=self.kind, plan=f"{self.kind} {job.key}")
        for task in pending:
            if not dispatch.allows_allocation(queue, task) or dispatch.prefilter(task) is not None:
                return False
            with session.own_room(task):
                choice = session.placer.choose(task)
                if not isinstance(choice, Choice):
                    return False
                stmt.pipeline(task, choice.node)
        return dispatch.is_job_ready(job) or dispatch.is_job_pipelined(job)


def _sum(tasks: Sequence[TaskState]) -> Resources:
    total = EMPTY
    for task in tasks:
        total = total + task.resreq
    return total
