"""capacity: queues get what their `spec.deserved` names, borrow idle resources up to their real
capability, and give the loan back when another queue reclaims.

At session open every queue that holds a job gets Volcano's attributes: `deserved` (the queue's
`spec.deserved`, capped by its realCapability in the resources that bounds, and raised to its
guarantee), `capability`, `guarantee`, `realCapability` (the cluster total less every queue's
guarantee, plus its own guarantee, within the capability), `allocated` (tasks Allocated, Binding,
Bound, Running or Pipelined), `request` (allocated plus every Pending task), `inqueue` (what the
minResources of an Inqueue PodGroup, or of a Running gang, still reserve beyond what the job
holds) and `elastic` (what jobs hold beyond their minResources). The cluster total is the
allocatable of the Ready nodes. A queue's `share` is the largest allocated/deserved ratio over
the resources it deserves; a queue that deserves nothing is best-effort, with share 1. The
figures live in the framework's queue accounts (`QueueAccounts`), opened with capacity's rules
(`RULES`); the plugin maps its points onto them.

Registers (Volcano's capacity plugin; flat queues, the default):
    compare_queues      higher `spec.priority` first, then lower share first, then (shares
                        equal) a queue that deserves something before a best-effort one
    allows_allocation   queue Open, and allocated + the task's request <= realCapability in every
                        resource the task requests: a queue may run beyond its deserved (borrow);
                        a no is a `Refusal` naming the state (Closed) or the limit (its
                        capability, what the other queues' guarantees leave it, the cluster's
                        allocatable) with the amounts, which the pod's pending message gives
    allows_reclaim      queue Open, allocated + the task's request within realCapability as above,
                        and <= deserved in at least one resource the task requests (Volcano's
                        preemptive function)
    vote_enqueue        queue Open, and minResources + allocated + inqueue - elastic <=
                        realCapability in every resource the minResources names; PERMIT or
                        REJECT (a job without minResources is PERMIT)
    on_enqueued         the job's minResources join its queue's inqueue
    select_reclaimees   from reclaimable queues, candidates sharing a resource with the reclaimer,
                        whose eviction keeps their queue at or above its guarantee, while their
                        queue (less the victims already chosen) is above its deserved in a
                        resource both the candidate requests and the queue deserves; a candidate
                        requesting nothing the queue deserves is always a victim
    select_gang_victims (unifiedEvictable) gangpreempt: every candidate; gangreclaim: in the
                        order given, a candidate whose eviction keeps its queue at or above its
                        guarantee, while its queue (less the victims already chosen) is above
                        its deserved in a resource both the candidate requests and the queue
                        deserves (or the candidate requests nothing the queue deserves): as
                        select_reclaimees without the shared-resource test and, with hierarchy,
                        without the ancestor checks (Volcano's gang-level evictable function)
    on_allocate / on_deallocate keep allocated and share in step
    on_session_close    reports every queue's figures (`session.report_queue`) for the queue
                        metrics: allocated, request, deserved, capability, realCapability, share,
                        `spec.weight`, and overused when allocated has reached deserved in every
                        resource (the test Volcano's preemptive function reports); a queue
                        holding no job reports nothing allocated or requested, its deserved as
                        above, and not overused; when the queues' guarantees exceed the cluster,
                        the guaranteeing queues carry the warning (`QueueFigures.warning`)
    at session open     when the queues' guarantees exceed the cluster (`guarantee_excess`),
                        every other queue is noted (`session.note_queue`): its pods' pending
                        messages name the guaranteeing queues and the amounts
It registers no `is_overused`, as Volcano's capacity does not: going beyond deserved is
borrowing, bounded only by realCapability.

Arguments:
    ancestorReclaimLevel                    int, default 0 (a negative value counts as 0, as
                                            Volcano falls back): with hierarchy, reclaim also
                                            compares the victim's ancestors 1..N levels up
    capacity.DynamicResourceAllocationEnable bool, default false: DRA claims are not modelled
    capacity.DRAConsumableCapacityEnable     bool, default false: as above

Hierarchical queues (`enableHierarchy: true` on the capacity entry; Volcano's
`buildHierarchicalQueueAttrs`): queues form a tree through `spec.parent` under `root` (the
session's `root` queue, or an unbounded root when there is none). A queue's unset capability
dimensions are its parent's; its realCapability is its parent's less its siblings' guarantees
plus its own, within its capability (the root's realCapability is its capability: unbounded
where it names nothing, not the cluster); deserved is at least the guarantee, per level; a
queue's allocated, request, inqueue and elastic count its subtree. Only a leaf runs jobs:
allocation and enqueue are checked at the leaf and at every ancestor up to the root. Queue order
puts leaves before queues with children and compares two leaves by their ancestors just below
the deepest ancestor they share; reclaim candidates are taken from queues sharing deeper
ancestors with the reclaimer first; `ancestorReclaimLevel` adds the ancestor checks to the
preemptive and reclaimable points. A missing parent, a cycle of parents, a job in a queue with
children (that queue and, for the first two, every queue below it run nothing), a child
capability above its parent's, children's guarantees or deserved adding up to more than their
parent's, a child's guarantee above its parent's capability: each is reported on the queue (the
queue's figures carry it as their warning, a Warning Event; its pods' pending messages end with
the first), in Volcano's words where it logs one, and the rest of the cluster is scheduled
(Volcano stops the capacity plugin's points for the whole cycle instead).

Differences from Volcano, on purpose:
- Amounts are integers (millicores, bytes) and comparisons are exact, where Volcano compares
  float64, some comparisons with a 0.1 tolerance.
- `pods`, and names Volcano does not count in a deserved, capability, guarantee or minResources
  (`count/...`, `requests.*`, `limits.*`), are dropped from them, as Volcano's `NewResource`
  and its ignored-resource list do; a resource stated as 0 is the same as one not stated.
- Candidates for reclaim are taken in the order given (Volcano re-sorts them into its victim
  queue order first), and tasks of a queue that is not `reclaimable` are skipped here (Volcano's
  reclaim action skips them before asking plugins).
- With hierarchy, a queue problem stops only that queue (and, for a broken parent chain, the
  queues below it), never the cycle; a dimension no capability in the tree names is unbounded
  (Volcano's root without a capability is infinite in cpu, memory and the cluster's scalars).
  Capacity's hierarchical victim queue order sorts the candidates it returns, but the reclaim
  action's evictor still takes victims cheapest first in reverse queue order.
- Not modelled: DRA quotas, the queue-admission scheduling gate's reserved tasks, scheduling-gated
  resources in minResources and the simulation hooks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import (
    ArgumentReader,
    Deserved,
    EvictionContext,
    Limit,
    PluginSession,
    QueueAccounts,
    QueuePlugin,
    Reclaim,
    Rules,
    TaskState,
    UnifiedEvictable,
)

NAME: Final = "capacity"
RULES: Final = Rules(
    deserved=Deserved.SPEC,  # spec.deserved, within realCapability, at least the guarantee
    share_if_nothing_deserved=1.0,  # a best-effort queue
    best_effort_last=True,
    allocation_limit=Limit.REAL_CAPABILITY,  # a queue may borrow beyond deserved
    reclaim=Reclaim.KEEP_GUARANTEE,
)
"""Volcano capacity's rules for the queue accounts."""


class Capacity(QueuePlugin, UnifiedEvictable):
    """The per-session plugin: the queue accounts under capacity's rules, every point theirs;
    a queue tree when the policy's capacity entry sets `enableHierarchy`."""

    rules = RULES

    def __init__(self, session: PluginSession, reclaim_level: int = 0) -> None:
        self.accounts = QueueAccounts(
            session,
            RULES,
            hierarchy=session.hierarchy_enabled(NAME),
            reclaim_level=reclaim_level,
        )

    def select_gang_victims(
        self, context: EvictionContext, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """gangpreempt: every candidate; gangreclaim: those above guarantee and deserved."""
        if context.kind == "gangpreempt":
            return tuple(candidates)
        return self.accounts.gang_reclaimees(candidates)


class Factory:
    """Lives as long as the policy; holds only its arguments across cycles."""

    name = NAME
    plugin = Capacity

    def __init__(self, reclaim_level: int = 0) -> None:
        self.reclaim_level = reclaim_level

    def open(self, session: PluginSession) -> Capacity:
        """A fresh plugin for `session`."""
        return Capacity(session, self.reclaim_level)


def build(arguments: Mapping[str, object]) -> Factory:
    """capacity: Volcano's arguments are checked and accepted; none changes anything here."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    level = reader.int("ancestorReclaimLevel", 0)
    reader.bool("capacity.DynamicResourceAllocationEnable", False)
    reader.bool("capacity.DRAConsumableCapacityEnable", False)
    reader.finish()
    return Factory(max(level, 0))
