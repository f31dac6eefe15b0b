"""nodegroup: queues keep to node groups (node label `volcano.sh/nodegroup-name`), by the node-group
affinity on the queue (`spec.affinity`), optionally within per-group resource limits.

A queue's affinity names groups under `nodeGroupAffinity` and `nodeGroupAntiAffinity`, each
`requiredDuringSchedulingIgnoredDuringExecution` (required) and
`preferredDuringSchedulingIgnoredDuringExecution` (preferred). Its annotation
`volcano.sh/nodegroup-resource-limits` (JSON, group -> ResourceList) caps what the queue's pods
may hold in a group, in the resources listed only.

Registers (Volcano's nodegroup plugin):
    filter_nodes   for a pod of queue Q on node N, in order: Q's limits annotation malformed ->
                   fails ("node group resource limit annotation invalid"); N without the label
                   -> passes only when `strict` is false and Q has no affinity, else fails
                   ("node group label not found"); Q without affinity (none, or every list
                   empty) -> fails ("node group affinity not specified"); N's group not allowed
                   -> fails ("node does not satisfy the node group affinity"); the pod's request
                   added to what Q holds in the group exceeds a listed limit -> fails ("node
                   group resource limit exceeded"). A group is allowed when it is required or
                   preferred and not anti-required, or when it is anti-preferred. Every failure
                   is UnschedulableAndUnresolvable (preemption does not try the node)
    explain_node   the failure's reason, in Volcano's words
    score_nodes    for N's group: +100 when required, +50 when preferred (with
                   `enablePreferredOrder`, 50 * (n - i) / n for the i-th of n preferred groups);
                   -1 when anti-preferred, whatever else; 0 for a node without the label or a
                   queue without affinity
    on_allocate / on_deallocate   keep what each queue holds in each group (tasks holding a node
                   at open, then every placement and eviction of the session)

With `enableHierarchy: true` on the plugin's entry, a queue without `spec.affinity` takes its
nearest ancestor's (`spec.parent`, default `root`; stopping at a missing parent or a cycle). An
affinity of `{}` is the queue's own, empty. Limits are never inherited.

Arguments:
    strict                bool, default true: without it, a pod of a queue without affinity may
                          use nodes without the label
    enablePreferredOrder  bool, default false: rank preferred groups by their list order

A deliberate difference from Volcano: none in the rules. Volcano reads a non-bool argument as its
default; here it is a policy error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    EMPTY,
    AllocateEvent,
    ArgumentReader,
    BoolArray,
    DeallocateEvent,
    FloatArray,
    IntArray,
    NodeOrder,
    PluginSession,
    Predicate,
    PredicateReason,
    QueueState,
    Resources,
    Status,
    TaskState,
    TaskStatus,
    task_status,
    unresolvable,
)

NAME: Final = "nodegroup"
NODE_GROUP_LABEL: Final = "volcano.sh/nodegroup-name"
ROOT: Final = "root"
BASE_SCORE: Final = 100.0
ANTI_PREFERRED_SCORE: Final = -1.0

AFFINITY_NOT_FOUND: Final = "node group affinity not specified"
LABEL_NOT_FOUND: Final = "node group label not found"
UNSATISFIED: Final = "node does not satisfy the node group affinity"
LIMIT_INVALID: Final = "node group resource limit annotation invalid"
LIMIT_EXCEEDED: Final = "node group resource limit exceeded"


@dataclasses.dataclass(frozen=True, slots=True)
class Affinity:
    """A queue's effective node-group affinity, as sets (and the preferred groups' ranks)."""

    required: frozenset[str]
    preferred: frozenset[str]
    anti_required: frozenset[str]
    anti_preferred: frozenset[str]
    rank: tuple[tuple[str, int], ...]
    """Each preferred group and its index in the list (the last, for a repeated group)."""

    @property
    def is_unset(self) -> bool:
        """No group named at all."""
        return not (self.required or self.preferred or self.anti_required or self.anti_preferred)

    def allows(self, group: str) -> bool:
        """Required or preferred and not anti-required; or anti-preferred (Volcano's order)."""
        allowed = group in self.required or group in self.preferred
        if group in self.anti_required:
            allowed = False
        return allowed or group in self.anti_preferred

    def score(self, group: str, ordered: bool) -> float:
        """+100 required, +50 (or ranked) preferred; -1 for anti-preferred, whatever else."""
        if group in self.anti_preferred:
            return ANTI_PREFERRED_SCORE
        score = BASE_SCORE if group in self.required else 0.0
        if ordered:
            ranks = dict(self.rank)
            if group in ranks:
                score += 0.5 * BASE_SCORE * (len(ranks) - ranks[group]) / len(ranks)
        elif group in self.preferred:
            score += 0.5 * BASE_SCORE
        return score


def affinity_of(queue: QueueState) -> Affinity | None:
    """The queue's own affinity, or None without `spec.affinity`."""
    own = queue.facts.node_group_affinity
    if own is None:
        return None
    return Affinity(
        required=frozenset(own.required),
        preferred=frozenset(own.preferred),
        anti_required=frozenset(own.anti_required),
        anti_preferred=frozenset(own.anti_preferred),
        rank=tuple({group: i for i, group in enumerate(own.preferred)}.items()),
    )


def ancestors(queues: Mapping[str, QueueState], name: str) -> list[str]:
    """The queue's ancestors, nearest first: `spec.parent`, or `root` when unset (root has
    none). The walk stops at a missing parent or at a queue seen already (a cycle)."""
    out: list[str] = []
    seen = {name}
    current = queues.get(name)
    while current is not None and current.name != ROOT:
        parent = current.facts.parent or ROOT
        if parent in seen or parent not in queues:
            break
        out.append(parent)
        seen.add(parent)
        current = queues[parent]
    return out


def effective_affinity(
    queues: Mapping[str, QueueState], name: str, *, hierarchy: bool
) -> Affinity | None:
    """The queue's affinity; with hierarchy, a queue without one takes its nearest ancestor's."""
    queue = queues.get(name)
    if queue is None:
        return None
    own = affinity_of(queue)
    if own is not None or not hierarchy:
        return own
    for ancestor in ancestors(queues, name):
        inherited = affinity_of(queues[ancestor])
        if inherited is not None:
            return inherited
    return None


@dataclasses.dataclass(frozen=True, slots=True)
class QueueRules:
    """What the plugin applies to one queue's pods."""

    affinity: Affinity | None
    limits: Mapping[str, tuple[tuple[str, ...], Resources]]
    """Group -> (the resources listed, their amounts)."""
    limits_problem: str

    @property
    def unset(self) -> bool:
        """No affinity, or one naming no group."""
        return self.affinity is None or self.affinity.is_unset


_NO_RULES: Final = QueueRules(None, {}, "")


def exceeded(used: Resources, names: tuple[str, ...], limit: Resources) -> tuple[str, ...]:
    """The listed resources whose use is above the limit."""
    return tuple(name for name in names if used.get(name) > limit.get(name))


class NodeGroup(Predicate, PredicateReason, NodeOrder, AllocateEvent, DeallocateEvent):
    """The per-session plugin: each node's group, each queue's rules, and what each queue holds
    in each group."""

    def __init__(self, session: PluginSession, *, strict: bool, ordered: bool) -> None:
        self._strict = strict
        self._ordered = ordered
        hierarchy = session.hierarchy_enabled(NAME)
        queues = session.queues
        self._rules: dict[str, QueueRules] = {
            name: QueueRules(
                effective_affinity(queues, name, hierarchy=hierarchy),
                {
                    limit.group: (limit.names, limit.amounts)
                    for limit in queue.facts.node_group_limits
                },
                queue.facts.node_group_limits_problem,
            )
            for name, queue in queues.items()
        }
        labels = [node.labels.get(NODE_GROUP_LABEL) for node in session.ledger.nodes]
        self._groups: tuple[str, ...] = tuple(sorted({g for g in labels if g is not None}))
        index = {group: i for i, group in enumerate(self._groups)}
        none = len(self._groups)
        self._node_group: IntArray = np.array(
            [none if g is None else index[g] for g in labels], dtype=np.int64
        )
        """Each node's group index; len(groups) for a node without the label."""
        self._allowed: dict[str, BoolArray] = {}
        self._scores: dict[str, FloatArray] = {}
        self._used: dict[tuple[str, str], Resources] = {}
        for job in session.jobs.values():
            for task in job.tasks.values():
                if task.status in task_status.OCCUPYING:
                    self._hold(task, 1)
        placing = [
            self._rules.get(job.queue, _NO_RULES)
            for job in session.jobs.values()
            if job.count(TaskStatus.PENDING)
        ]
        self.node_local = len({(r.affinity, r.limits_problem) for r in placing}) <= 1 and not any(
            r.limits for r in placing
        )
        """The answers depend on the pod's queue (not part of its template) and, with limits, on
        what the queue holds across a group's nodes: shared per class only when the queues of
        every pending pod are alike and none has limits."""

    # --- per queue --------------------------------------------------------------------------------
    def _rules_of(self, task: TaskState) -> tuple[str, QueueRules]:
        job = task.job
        if job is None:
            return "", _NO_RULES
        return job.queue, self._rules.get(job.queue, _NO_RULES)

    def _reason(self, rules: QueueRules, group: str | None) -> str | None:
        """Why a node of `group` (None: without the label) fails the queue's affinity."""
        if rules.limits_problem:
            return LIMIT_INVALID
        if group is None:
            return None if not self._strict and rules.unset else LABEL_NOT_FOUND
        if rules.affinity is None or rules.unset:
            return AFFINITY_NOT_FOUND
        return None if rules.affinity.allows(group) else UNSATISFIED

    def _allowed_groups(self, queue: str, rules: QueueRules) -> BoolArray:
        """Per group index (the last: no label), whether the affinity lets the node pass."""
        allowed = self._allowed.get(queue)
        if allowed is None:
            groups: list[str | None] = [*self._groups, None]
            allowed = np.array([self._reason(rules, g) is None for g in groups], dtype=np.bool_)
            self._allowed[queue] = allowed
        return allowed

    def _over_limit(self, queue: str, rules: QueueRules, task: TaskState, group: str) -> bool:
        """The task's request would take the queue above a listed limit in `group`."""
        limit = rules.limits.get(group)
        if limit is None:
            return False
        used = self._used.get((queue, group), EMPTY) + task.resreq
        return bool(exceeded(used, *limit))

    # --- the points -------------------------------------------------------------------------------
    def filter_nodes(self, task: TaskState, idx: IntArray) -> BoolArray:
        """The nodes whose group the queue's affinity allows, within its limits."""
        queue, rules = self._rules_of(task)
        groups = self._node_group[idx]
        ok = self._allowed_groups(queue, rules)[groups]
        for group, _limit in rules.limits.items():
            if group in self._groups and self._over_limit(queue, rules, task, group):
                ok &= groups != self._groups.index(group)
        return ok

    def explain_node(self, task: TaskState, i: int) -> Status | None:
        """Volcano's reason for node `i`, or None when it passes."""
        queue, rules = self._rules_of(task)
        g = int(self._node_group[i])
        group = self._groups[g] if g < len(self._groups) else None
        reason = self._reason(rules, group)
        if reason is None and group is not None and self._over_limit(queue, rules, task, group):
            reason = LIMIT_EXCEEDED
        return None if reason is None else unresolvable(reason)

    def score_nodes(self, task: TaskState, idx: IntArray) -> FloatArray | None:
        """The queue's affinity score of each node's group; no opinion without any."""
        queue, rules = self._rules_of(task)
        if rules.affinity is None or not self._groups:
            return None
        scores = self._scores.get(queue)
        if scores is None:
            affinity = rules.affinity
            per_group = [affinity.score(group, self._ordered) for group in self._groups]
            scores = np.array([*per_group, 0.0], dtype=np.float64)
            self._scores[queue] = scores
        return scores[self._node_group[idx]]

    def on_allocate(self, task: TaskState) -> None:
        """The task's queue holds its request in the node's group."""
        self._hold(task, 1)

    def on_deallocate(self, task: TaskState) -> None:
        """The task's queue no longer holds its request there."""
        self._hold(task, -1)

    def _hold(self, task: TaskState, sign: int) -> None:
        job, i = task.job, task.node_index
        if job is None or i < 0 or job.queue not in self._rules:
            return
        g = int(self._node_group[i])
        if g == len(self._groups):
            return
        key = (job.queue, self._groups[g])
        held = self._used.get(key, EMPTY)
        self._used[key] = held + task.resreq if sign > 0 else held - task.resreq


class Factory:
    """Lives as long as the policy; holds the arguments."""

    name = NAME
    plugin = NodeGroup

    def __init__(self, *, strict: bool, ordered: bool) -> None:
        self.strict = strict
        self.ordered = ordered

    def open(self, session: PluginSession) -> NodeGroup:
        """A fresh plugin for `session`."""
        return NodeGroup(session, strict=self.strict, ordered=self.ordered)


def build(arguments: Mapping[str, object]) -> Factory:
    """Reads `strict` (default true) and `enablePreferredOrder` (default false)."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    strict = reader.bool("strict", True)
    ordered = reader.bool("enablePreferredOrder", False)
    reader.finish()
    return Factory(strict=strict, ordered=ordered)
