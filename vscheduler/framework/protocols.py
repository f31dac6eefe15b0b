"""The typed plugin contract: one small Protocol per extension point, named after Volcano's.

Owns: each point's exact hook signature (parameters positional, as the dispatcher calls them).
A plugin's per-session class subclasses the Protocols of the points it serves, so mypy checks
every hook against its point; `framework.points` names each point's Protocol, and
`framework.contract` checks at policy load that a plugin class defines no other public method.
Must not: hold behaviour (the combination rules are `framework.dispatch`'s) or import the
session (hooks are told about tasks, jobs and queues; the session view is handed to `open`).

Like kube-scheduler's `FilterPlugin`/`ScorePlugin` interfaces: a plugin serves a point by
implementing its interface, not by the accident of a method name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from vscheduler.framework.ledger import BoolArray, FloatArray, IntArray
from vscheduler.framework.results import Abstain, Refusal, Status, Vote
from vscheduler.framework.state import JobState, QueueState, TaskState


class JobOrder(Protocol):
    """jobOrder: negative when `a` goes first, positive when `b` does, 0 for no opinion."""

    def compare_jobs(self, a: JobState, b: JobState, /) -> int: ...


class JobOrderKey(Protocol):
    """jobOrderKey: the plugin's job order as one value a job has, for jobs sorted (and heaped)
    by key instead of by comparisons: `compare_jobs(a, b)` must have the sign of comparing
    `job_order_key(a)` with `job_order_key(b)` (-1 when less, 1 when greater, 0 when equal),
    for any two jobs. Optional; used only while every jobOrder plugin serves it."""

    def job_order_key(self, job: JobState, /) -> Any: ...


class TaskOrder(Protocol):
    """taskOrder: negative when `a` goes first, positive when `b` does, 0 for no opinion."""

    def compare_tasks(self, a: TaskState, b: TaskState, /) -> int: ...


class QueueOrder(Protocol):
    """queueOrder: negative when `a` goes first, positive when `b` does, 0 for no opinion."""

    def compare_queues(self, a: QueueState, b: QueueState, /) -> int: ...


class JobValid(Protocol):
    """jobValid: None when the job is valid, the objection otherwise."""

    def validate_job(self, job: JobState, /) -> Status | None: ...


class JobEnqueueable(Protocol):
    """jobEnqueueable: the plugin's vote on admitting the job (tier vote; a `Refusal` is a
    REJECT with its reason)."""

    def vote_enqueue(self, job: JobState, /) -> Vote | Refusal: ...


class JobEnqueued(Protocol):
    """jobEnqueued: the job was admitted (Pending -> Inqueue)."""

    def on_enqueued(self, job: JobState, /) -> None: ...


class PrePredicate(Protocol):
    """prePredicate: None when the task may be tried on nodes at all."""

    def prefilter(self, task: TaskState, /) -> Status | None: ...


class Predicate(Protocol):
    """predicate: which of the nodes at indices `idx` may take the task (vectorised; hot path)."""

    def filter_nodes(self, task: TaskState, idx: IntArray, /) -> BoolArray: ...


class PredicateNode(Protocol):
    """predicateNode: `filter_nodes` of the one node `i`, answered in Python scalars: the same
    answer as `filter_nodes(task, [i])[0]`. Optional; after each decision the placement asks
    each predicate about the node the decision took, where an array of one costs more than the
    answer."""

    def filter_node(self, task: TaskState, i: int, /) -> bool: ...


class PredicateReason(Protocol):
    """predicateReason: why node `i` failed this plugin's predicate (None: it did not)."""

    def explain_node(self, task: TaskState, i: int, /) -> Status | None: ...


class PredicateResolvable(Protocol):
    """predicateResolvable: which of the nodes at indices `idx` pass this plugin's predicate or
    fail it only in ways evicting pods may resolve (kube's Unschedulable, not
    UnschedulableAndUnresolvable): the nodes preempt and reclaim may try. A plugin serving
    predicate but not this point makes every failure of its predicate unresolvable.
    `simulated`: whether the action tells this plugin of the pods it takes away (Volcano's
    SimulateRemoveTask); when False, what the plugin counts of other pods (inter-pod terms,
    spread) stays as it is through the evictions, and a failure of it is not resolvable."""

    def filter_nodes_resolvable(
        self, task: TaskState, idx: IntArray, simulated: bool, /
    ) -> BoolArray: ...


class NodeOrder(Protocol):
    """nodeOrder: the nodes' scores at indices `idx`, weights applied; None for no opinion."""

    def score_nodes(self, task: TaskState, idx: IntArray, /) -> FloatArray | None: ...


class NodeOrderNode(Protocol):
    """nodeOrderNode: `score_nodes` of the one node `i`, in Python scalars: the same float as
    `score_nodes(task, [i])[0]` (None for no opinion, as there). Optional, as predicateNode."""

    def score_node(self, task: TaskState, i: int, /) -> float | None: ...


class BatchNodeOrder(Protocol):
    """batchNodeOrder: as nodeOrder; None over every node means no opinion on the task's class."""

    def batch_score_nodes(self, task: TaskState, idx: IntArray, /) -> FloatArray | None: ...


class HyperNodeOrder(Protocol):
    """hyperNodeOrder: the scores of the HyperNodes `domains` (names; `CLUSTER_TOP` for the
    whole cluster), one per name, as candidates to place the whole of `job` in (a job with a
    `spec.networkTopology`); None for no opinion."""

    def score_hypernodes(
        self, job: JobState, domains: Sequence[str], /
    ) -> Sequence[float] | FloatArray | None: ...


class BestNode(Protocol):
    """bestNode: the node to place the task on, given every node's score; None for no answer."""

    def pick_best_node(self, task: TaskState, scores: dict[str, float], /) -> str | None: ...


class JobReady(Protocol):
    """jobReady: whether the job may start (its gang is complete)."""

    def is_job_ready(self, job: JobState, /) -> bool: ...


class JobPipelined(Protocol):
    """jobPipelined: the plugin's vote on keeping the job's pipelined places (tier vote)."""

    def vote_pipelined(self, job: JobState, /) -> Vote: ...


class JobStarving(Protocol):
    """jobStarving: whether the job still wants resources (preempt asks for it)."""

    def is_job_starving(self, job: JobState, /) -> bool: ...


class Allocatable(Protocol):
    """allocatable: whether the queue has room for the task (a `Refusal` says no and why)."""

    def allows_allocation(self, queue: QueueState, task: TaskState, /) -> bool | Refusal: ...


class Overused(Protocol):
    """overused: whether the queue uses more than its share."""

    def is_overused(self, queue: QueueState, /) -> bool: ...


class Preemptive(Protocol):
    """preemptive: whether the queue may reclaim for the task."""

    def allows_reclaim(self, queue: QueueState, task: TaskState, /) -> bool: ...


class Preemptable(Protocol):
    """preemptable: the candidates the preemptor may evict, or ABSTAIN."""

    def select_preemptees(
        self, preemptor: TaskState, candidates: Sequence[TaskState], /
    ) -> Sequence[TaskState] | Abstain: ...


class Reclaimable(Protocol):
    """reclaimable: the candidates the reclaimer may evict, or ABSTAIN."""

    def select_reclaimees(
        self, reclaimer: TaskState, candidates: Sequence[TaskState], /
    ) -> Sequence[TaskState] | Abstain: ...


EvictionKind = Literal["gangpreempt", "gangreclaim"]
"""Which gang-aware action asks the unifiedEvictable point (Volcano's `EvictionKind`)."""


@dataclasses.dataclass(frozen=True, slots=True)
class EvictionContext:
    """What a gang-aware eviction is for (Volcano's `EvictionContext`): the action asking, the
    job that needs the room, and the domain searched (always the whole cluster here:
    `<cluster-top-hypernode>`, Volcano's name for it when no topology plugin narrows it)."""

    kind: EvictionKind
    job: JobState
    domain: str


class UnifiedEvictable(Protocol):
    """unifiedEvictable: of `candidates` (every task of the domain's victim bundles, cheapest
    bundle first), those gangpreempt or gangreclaim may evict for `context.job`, or ABSTAIN.
    Asked once per job and domain with the whole ordered list, so a plugin that spends an
    allowance (a queue's room above its guarantee) spends it in bundle order."""

    def select_gang_victims(
        self, context: EvictionContext, candidates: Sequence[TaskState], /
    ) -> Sequence[TaskState] | Abstain: ...


class VictimTasks(Protocol):
    """victimTasks: the candidates the plugin wants evicted (shuffle); may note why with
    `PluginSession.note_victim`."""

    def propose_victims(self, candidates: Sequence[TaskState], /) -> Sequence[TaskState]: ...


class VictimFilter(Protocol):
    """victimFilter: the victims that may go (a subset of `victims`: it only removes)."""

    def filter_victims(self, victims: Sequence[TaskState], /) -> Sequence[TaskState]: ...


class AllocateEvent(Protocol):
    """allocateEvent: the task now holds resources (allocated, pipelined, or un-evicted)."""

    def on_allocate(self, task: TaskState, /) -> None: ...


class DeallocateEvent(Protocol):
    """deallocateEvent: the task gave its resources back (evicted, or its placement undone)."""

    def on_deallocate(self, task: TaskState, /) -> None: ...


class SessionClose(Protocol):
    """sessionClose: write end-of-session findings (queue figures, job conditions, ...)."""

    def on_session_close(self) -> None: ...
