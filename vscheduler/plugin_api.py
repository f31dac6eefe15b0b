"""The plugin API: everything a plugin may import, in one place.

A plugin is a module with a builder `build(arguments) -> factory`. The factory (lives as long as
the policy; holds any cross-cycle state as typed attributes) is a `PluginFactory`: `name`,
`plugin` (the class `open` returns, or a tuple of the classes it may return) and
`open(session)`, which returns a fresh per-session plugin object. That class serves an
extension point by subclassing the point's Protocol and implementing its one method; the exact
signatures are the Protocols themselves (`vscheduler.framework.protocols`, re-exported here:
`JobOrder.compare_jobs(a, b) -> int`, `Predicate.filter_nodes(task, idx) -> BoolArray`, ...),
and the point table with each point's Volcano flag and combination rule is
`vscheduler.framework.points`. mypy --strict checks every hook against its Protocol; at policy
load every class a factory declares is checked too (`framework.contract`): a public method that
is no point's method (`filter_nodez`), a hook whose Protocol is not among the class's bases, or
one with the wrong number of parameters is a `PolicyError` naming plugin and method. Helpers on
a plugin class are private (`_x`).

    class Spread(Predicate, PredicateReason):
        def filter_nodes(self, task: TaskState, idx: IntArray) -> BoolArray: ...
        def explain_node(self, task: TaskState, i: int) -> Status | None: ...

`open` is handed a `PluginSession`, not the whole session: what a plugin may read (`clock`,
`now`, `uid`, `snapshot`, `tasks`, `jobs`, `queues`, `ledger`, `queue_of`, `request_row`,
`evictions`, `job_note`, `schedulable_count`, `job_hold`, `hierarchy_enabled`, and from a hook
`queue_allows_progress`: whether a job's queue lets it allocate now) and the few calls it may
make (`report_queue`, `note_queue`, `note_job`, `note_victim`, `set_job_condition`,
`record_release`, and `revisit(at)`: an answer changes by itself then, so the cycle asks for
another at that time). Only actions, through Statements, change session state.

Contracts. Hooks are pure functions of the session (no I/O, time only from `session.clock` /
`session.now`). Predicates and nodeOrder scores must depend only on the task's template (its
`class_id`) and the node's own state, because the session caches them per class and recomputes
only the nodes whose accounting changed; a plugin that cannot promise this sets the attribute
`node_local = False`. A batch node-order scorer returning None over every node means it has no
opinion on that task's class: the session stops asking it for that class. Node arrays live on
`session.ledger`, a read-only `LedgerView` (rows = nodes, columns = `ledger.dims`). An
exception inside a hook is caught and counts as the conservative answer.
`gang_shortfall(job, schedulable, held)` is Volcano's "N/M tasks in gang unschedulable: ..." text,
after `held` (`session.job_hold(job)`: what held back every pod of the job at its queue) if given.
A queue plugin keeps its queues' figures in a `QueueAccounts` (allocated, request, inqueue,
deserved, guarantee, real capability, share, overused; a tree under a root) opened with its
`Rules`; `QueuePlugin` maps every queue point onto them. It reports each queue's `QueueFigures`
at session close with `session.report_queue(figures)`: they feed the queue metrics. A queue
plugin that finds a queue short of room for a reason its figures do not show (other queues'
guarantees exceed the cluster: `guarantee_excess`) says so with `session.note_queue(name,
reason)`: the pending messages of the queue's refused pods end with it; `QueueFigures.warning`
reports it on the guaranteeing queues. An allocatable hook that refuses a task may return a
`Refusal(reason, headline=...)` instead of False, and an enqueue vote a `Refusal(reason)`
instead of REJECT: the pod's pending message gives the reason (`queue q has no room left for
this pod (plugin: reason)`, `podgroup ns/pg is Pending: not admitted to queue q (plugin:
reason)`); a plain False or REJECT gives none.
A victim-tasks plugin says why it proposes a task with `session.note_victim(task, strategy,
reason)`: shuffle puts the reason on the eviction and the strategy labels the metrics; with
`budgeted=True` the plugin says it held the victim to a disruption budget of its own, and
shuffle's per-node and per-run caps leave it alone.
`podindex.PodIndex` counts the session's pods by node, for checks that look at other pods.
`session.topology` (a `SessionTopology`, made on first use) is the HyperNode tree over the
session's nodes: each domain's rows and sums, the domain a job's placed pods share; a
hyperNodeOrder hook (`score_hypernodes`) scores the HyperNodes a job with a network topology
may be placed in (`CLUSTER_TOP`: the whole cluster).
A factory may keep what its plugin derives from the nodes alone across sessions with a
`NodeMemo` (made again when the nodes change), per pod template in a bounded `TemplateTable`.
A factory that needs something of the rest of the policy declares it in a `needs` attribute
(`Needs`): the node-usage periods it reads (the collector queries each), and `TierConflict`s,
plugins it must not share a tier with while one of its flags is on. Most factories need nothing
and have no `needs`.
"""

from __future__ import annotations

from vscheduler.conf.arguments import ArgumentReader, parse_go_duration
from vscheduler.errors import PluginArgsError
from vscheduler.framework import podindex
from vscheduler.framework.ledger import BoolArray, FloatArray, IntArray, LedgerView
from vscheduler.framework.messages import gang_shortfall
from vscheduler.framework.needs import Needs, TierConflict
from vscheduler.framework.nodememo import NodeMemo, TemplateTable
from vscheduler.framework.protocols import (
    Allocatable,
    AllocateEvent,
    BatchNodeOrder,
    BestNode,
    DeallocateEvent,
    EvictionContext,
    HyperNodeOrder,
    JobEnqueueable,
    JobEnqueued,
    JobOrder,
    JobOrderKey,
    JobPipelined,
    JobReady,
    JobStarving,
    JobValid,
    NodeOrder,
    NodeOrderNode,
    Overused,
    Predicate,
    PredicateNode,
    PredicateReason,
    PredicateResolvable,
    Preemptable,
    Preemptive,
    PrePredicate,
    QueueOrder,
    Reclaimable,
    SessionClose,
    TaskOrder,
    UnifiedEvictable,
    VictimFilter,
    VictimTasks,
)
from vscheduler.framework.queue_accounts import (
    Deserved,
    Limit,
    QueueAccount,
    QueueAccounts,
    Reclaim,
    Rules,
)
from vscheduler.framework.queue_plugin import QueuePlugin
from vscheduler.framework.quota import (
    ALWAYS_BOUNDED,
    GuaranteeExcess,
    all_guarantees,
    cluster_total,
    cluster_total_and_used,
    counted,
    exceeds,
    guarantee_excess,
    is_counted,
    note_guarantee_excess,
    real_capability,
    reserved,
    share_of,
    ungated_minimum,
    within,
)
from vscheduler.framework.results import (
    ABSTAIN,
    Abstain,
    Code,
    Refusal,
    Status,
    Vote,
    unresolvable,
    unschedulable,
)
from vscheduler.framework.session import PluginFactory
from vscheduler.framework.state import JobState, QueueState, TaskState
from vscheduler.framework.topology import SessionTopology
from vscheduler.framework.view import PluginSession
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
    TaskTopology,
    Toleration,
    says_unschedulable,
)
from vscheduler.model.nodeselect import (
    field_requirement_valid,
    field_value,
    label_matches,
    label_requirement_valid,
    parse_int64,
    required_matches,
    term_matches,
    term_valid,
)
from vscheduler.model.podaffinity import PodAffinityTerm, SpreadConstraint
from vscheduler.model.reservation import Reservation, ReservationBook
from vscheduler.model.resourcequota import ResourceQuotaFacts, quota_request
from vscheduler.model.resources import CPU, EMPTY, MEMORY, Resources, format_amount
from vscheduler.model.selector import DisruptionBudget, spend
from vscheduler.model.status import PodGroupPhase, QoSClass, TaskStatus
from vscheduler.model.topology import CLUSTER_TOP, Domain, Topology
from vscheduler.model.volumebind import choose_volumes
from vscheduler.model.volumes import (
    ClaimFacts,
    StorageClassFacts,
    VolumeFacts,
    claim_problem,
    volume_matches,
)

__all__ = [
    "ABSTAIN",
    "ALWAYS_BOUNDED",
    "CLUSTER_TOP",
    "CPU",
    "EMPTY",
    "MEMORY",
    "Abstain",
    "Allocatable",
    "AllocateEvent",
    "ArgumentReader",
    "BatchNodeOrder",
    "BestNode",
    "BoolArray",
    "ClaimFacts",
    "Code",
    "DeallocateEvent",
    "Deserved",
    "DisruptionBudget",
    "Domain",
    "EvictionContext",
    "FloatArray",
    "GuaranteeExcess",
    "HostPort",
    "HyperNodeOrder",
    "IntArray",
    "JobEnqueueable",
    "JobEnqueued",
    "JobOrder",
    "JobOrderKey",
    "JobPipelined",
    "JobReady",
    "JobStarving",
    "JobState",
    "JobValid",
    "LedgerView",
    "Limit",
    "Needs",
    "NodeAffinity",
    "NodeFacts",
    "NodeMemo",
    "NodeOrder",
    "NodeOrderNode",
    "NodeUsage",
    "Overused",
    "PluginArgsError",
    "PluginFactory",
    "PluginSession",
    "PodAffinityTerm",
    "PodGroupCondition",
    "PodGroupPhase",
    "PrePredicate",
    "Predicate",
    "PredicateNode",
    "PredicateReason",
    "PredicateResolvable",
    "Preemptable",
    "Preemptive",
    "PreferredTerm",
    "QoSClass",
    "QueueAccount",
    "QueueAccounts",
    "QueueFigures",
    "QueueOrder",
    "QueuePlugin",
    "QueueState",
    "Reclaim",
    "Reclaimable",
    "Refusal",
    "Requirement",
    "Reservation",
    "ReservationBook",
    "ReservationRelease",
    "ResourceQuotaFacts",
    "Resources",
    "Rules",
    "SelectorTerm",
    "SessionClose",
    "SessionTopology",
    "SpreadConstraint",
    "Status",
    "StorageClassFacts",
    "Taint",
    "TaskOrder",
    "TaskState",
    "TaskStatus",
    "TaskTopology",
    "TemplateTable",
    "TierConflict",
    "Toleration",
    "Topology",
    "UnifiedEvictable",
    "VictimFilter",
    "VictimTasks",
    "VolumeFacts",
    "Vote",
    "all_guarantees",
    "choose_volumes",
    "claim_problem",
    "cluster_total",
    "cluster_total_and_used",
    "counted",
    "exceeds",
    "field_requirement_valid",
    "field_value",
    "format_amount",
    "gang_shortfall",
    "guarantee_excess",
    "is_counted",
    "label_matches",
    "label_requirement_valid",
    "note_guarantee_excess",
    "parse_go_duration",
    "parse_int64",
    "podindex",
    "quota_request",
    "real_capability",
    "required_matches",
    "reserved",
    "says_unschedulable",
    "share_of",
    "spend",
    "task_status",
    "term_matches",
    "term_valid",
    "ungated_minimum",
    "unresolvable",
    "unschedulable",
    "volume_matches",
    "within",
]
