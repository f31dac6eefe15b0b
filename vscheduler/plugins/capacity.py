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

Registers (Volcano's capacity plugin, flat queues):
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

Arguments (all accepted for Volcano's policies; none changes anything here):
    ancestorReclaimLevel                    int, default 0: hierarchy only
    capacity.DynamicResourceAllocationEnable bool, default false: DRA claims are not modelled
    capacity.DRAConsumableCapacityEnable     bool, default false: as above
Queue hierarchy (`enableHierarchy: true`, queue `parent`) is not supported: the flag is accepted
and the queues behave flat (every queue is a leaf, no ancestor is checked).

Differences from Volcano, on purpose:
- Amounts are integers (millicores, bytes) and comparisons are exact, where Volcano compares
  float64, some comparisons with a 0.1 tolerance.
- `pods`, and names Volcano does not count in a deserved, capability, guarantee or minResources
  (`count/...`, `requests.*`, `limits.*`), are dropped from them, as Volcano's `NewResource`
  and its ignored-resource list do; a resource stated as 0 is the same as one not stated.
- Candidates for reclaim are taken in the order given (Volcano re-sorts them into its victim
  queue order first), and tasks of a queue that is not `reclaimable` are skipped here (Volcano's
  reclaim action skips them before asking plugins).
- Not modelled: DRA quotas, the queue-admission scheduling gate's reserved tasks, scheduling-gated
  resources in minResources, the simulation hooks and the gang-level evictable function.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from vscheduler.plugin_api import (
    ArgumentReader,
    Deserved,
    Limit,
    PluginSession,
    QueuePlugin,
    Reclaim,
    Rules,
)

NAME: Final = "capacity"
RULES: Final = Rules(
    deserved=Deserved.SPEC,  # spec.deserved, within realCapability, at least the guarantee
    share_if_nothing_deserved=1.0,  # a best-effort queue
    best_effort_last=True,
    allocation_limit=Limit.REAL_CAPABILITY,  # a queue may borrow beyond deserved
    reclaim=Reclaim.KEEP_GUARANTEE,
    inqueue_less_allocated=True,  # minResources less what the job holds
)
"""Volcano capacity's rules for the queue accounts."""


class Capacity(QueuePlugin):
    """The per-session plugin: the queue accounts under capacity's rules, every point theirs."""

    rules = RULES


class Factory:
    """Lives as long as the policy; holds nothing across cycles."""

    name = NAME
    plugin = Capacity

    def open(self, session: PluginSession) -> Capacity:
        """A fresh plugin for `session`."""
        return Capacity(session)


def build(arguments: Mapping[str, object]) -> Factory:
    """capacity: Volcano's arguments are checked and accepted; none changes anything here."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    reader.int("ancestorReclaimLevel", 0)
    reader.bool("capacity.DynamicResourceAllocationEnable", False)
    reader.bool("capacity.DRAConsumableCapacityEnable", False)
    reader.finish()
    return Factory()
