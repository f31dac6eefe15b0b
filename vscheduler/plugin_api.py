"""The plugin API: everything a plugin may import, in one place.

A plugin is a module with a builder `build(arguments) -> factory`. The factory (lives as long as
the policy; holds any cross-cycle state as typed attributes) has `name` and `open(session)`,
which returns a fresh per-session plugin object. That object takes part in an extension point
simply by having the point's method (the table in `vscheduler.framework.points`):

    compare_jobs(a, b) -> int          compare_tasks(a, b) -> int     compare_queues(a, b) -> int
    validate_job(job) -> Status | None vote_enqueue(job) -> Vote      on_enqueued(job)
    prefilter(task) -> Status | None
    filter_nodes(task, idx) -> bool array over node indices `idx`     (vectorised predicate)
    explain_node(task, i) -> Status | None                            (the reason for node i)
    score_nodes(task, idx) -> float array | None                      (nodeOrder, weights applied)
    batch_score_nodes(task, idx) -> float array | None                (batchNodeOrder)
    pick_best_node(task, scores) -> node name | None
    is_job_ready(job) -> bool          vote_pipelined(job) -> Vote    is_job_starving(job) -> bool
    allows_allocation(queue, task) -> bool                            is_overused(queue) -> bool
    allows_reclaim(queue, task) -> bool
    select_preemptees(preemptor, candidates) -> tasks | ABSTAIN
    select_reclaimees(reclaimer, candidates) -> tasks | ABSTAIN
    propose_victims(candidates) -> tasks     filter_victims(victims) -> tasks (only removes)
    on_allocate(task) / on_deallocate(task)                           (event handlers)
    on_session_close()                                                (may `report_queue`)

Contracts. Hooks are pure functions of the session (no I/O, time only from `session.clock` /
`session.now`). Predicates and nodeOrder scores must depend only on the task's template (its
`class_id`) and the node's own state, because the session caches them per class and recomputes
only the nodes whose accounting changed; a plugin that cannot promise this sets the attribute
`node_local = False`. A batch node-order scorer returning None over every node means it has no
opinion on that task's class: the session stops asking it for that class. Node arrays live on
`session.ledger` (rows = nodes, columns = `ledger.dims`). An exception inside a hook is caught
and counts as the conservative answer.
`gang_shortfall(job, schedulable)` is Volcano's "N/M tasks in gang unschedulable: ..." text.
A queue plugin reports each queue's `QueueFigures` at session close with
`session.report_queue(figures)`: they feed the queue metrics. A queue plugin that finds a queue
short of room for a reason its figures do not show (other queues' guarantees exceed the cluster:
`guarantee_excess`) says so with `session.note_queue(name, reason)`: the pending messages of the
queue's refused pods end with it; `QueueFigures.warning` reports it on the guaranteeing queues.
`podindex.PodIndex` counts the session's pods by node, for checks that look at other pods.
A factory that needs something of the rest of the policy declares it in a `needs` attribute
(`Needs`): the node-usage periods it reads (the collector queries each), and `TierConflict`s,
plugins it must not share a tier with while one of its flags is on. Most factories need nothing
and have no `needs`.
"""

from __future__ import annotations

from vscheduler.conf.arguments import ArgumentReader, parse_go_duration
from vscheduler.errors import PluginArgsError
from vscheduler.framework import podindex
from vscheduler.framework.ledger import BoolArray, FloatArray, IntArray, Ledger
from vscheduler.framework.messages import gang_shortfall
from vscheduler.framework.needs import Needs, TierConflict
from vscheduler.framework.quota import (
    ALWAYS_BOUNDED,
    GuaranteeExcess,
    all_guarantees,
    cluster_total,
    counted,
    exceeds,
    guarantee_excess,
    is_counted,
    note_guarantee_excess,
    real_capability,
    share_of,
    within,
)
from vscheduler.framework.results import (
    ABSTAIN,
    Abstain,
    Code,
    Status,
    Vote,
    unresolvable,
    unschedulable,
)
from vscheduler.framework.session import PluginFactory, Session
from vscheduler.framework.state import JobState, QueueState, TaskState
from vscheduler.model import status as task_status
from vscheduler.model.commands import QueueFigures, ReservationRelease
from vscheduler.model.facts import (
    HostPort,
    NodeAffinity,
    NodeFacts,
    NodeUsage,
    PodGroupCondition,
    PreferredTerm,
    Requirement,
    SelectorTerm,
    Taint,
    Toleration,
)
from vscheduler.model.podaffinity import PodAffinityTerm, SpreadConstraint
from vscheduler.model.reservation import Reservation, ReservationBook
from vscheduler.model.resourcequota import ResourceQuotaFacts, quota_request
from vscheduler.model.resources import CPU, EMPTY, MEMORY, Resources, format_amount
from vscheduler.model.selector import DisruptionBudget
from vscheduler.model.status import PodGroupPhase, QoSClass, TaskStatus

__all__ = [
    "ABSTAIN",
    "ALWAYS_BOUNDED",
    "CPU",
    "EMPTY",
    "MEMORY",
    "Abstain",
    "ArgumentReader",
    "BoolArray",
    "Code",
    "DisruptionBudget",
    "FloatArray",
    "GuaranteeExcess",
    "HostPort",
    "IntArray",
    "JobState",
    "Ledger",
    "Needs",
    "NodeAffinity",
    "NodeFacts",
    "NodeUsage",
    "PluginArgsError",
    "PluginFactory",
    "PodAffinityTerm",
    "PodGroupCondition",
    "PodGroupPhase",
    "PreferredTerm",
    "QoSClass",
    "QueueFigures",
    "QueueState",
    "Requirement",
    "Reservation",
    "ReservationBook",
    "ReservationRelease",
    "ResourceQuotaFacts",
    "Resources",
    "SelectorTerm",
    "Session",
    "SpreadConstraint",
    "Status",
    "Taint",
    "TaskState",
    "TaskStatus",
    "TierConflict",
    "Toleration",
    "Vote",
    "all_guarantees",
    "cluster_total",
    "counted",
    "exceeds",
    "format_amount",
    "gang_shortfall",
    "guarantee_excess",
    "is_counted",
    "note_guarantee_excess",
    "parse_go_duration",
    "podindex",
    "quota_request",
    "real_capability",
    "share_of",
    "task_status",
    "unresolvable",
    "unschedulable",
    "within",
]
