"""proportion: queues share the cluster by weight, within capability, honouring guarantee.

At session open every queue that holds a job gets Volcano's attributes: `weight`, `capability`,
`guarantee`, `realCapability` (the cluster total less every other queue's guarantee, within the
capability), `allocated` (tasks Allocated, Binding, Bound, Running or Pipelined), `request`
(allocated plus every Pending task), `inqueue` (what the minResources of an Inqueue PodGroup, or of
a Running gang, still reserve beyond what the job has allocated: its pods Binding while its
PodGroup is still Inqueue count once, as Volcano's do since 6db3122b4), `elastic` (what jobs hold
beyond their minResources) and `deserved`, found by Volcano's weighted water-filling over the
cluster total (the allocatable of the Ready nodes): each round gives every unsatisfied queue its
weight's part of what remains, capped by its realCapability and its request and raised to its
guarantee, until nothing remains or nothing changes. A queue's `share` is the largest
allocated/deserved ratio over the resources it deserves. The figures live in the framework's queue
accounts (`QueueAccounts`), opened with proportion's rules (`RULES`); the plugin maps its points
onto them.

Registers (Volcano's proportion plugin):
    compare_queues      higher `spec.priority` first, then lower share first
    is_overused         deserved <= allocated in every resource
    allows_allocation   queue Open, and allocated + the task's request <= deserved in every
                        resource the task requests (also `allows_reclaim`, Volcano's preemptive
                        function); a no is a `Refusal` naming the state (Closed) or the limit
                        (its deserved share, its capability, what the other queues' guarantees
                        leave it, the Ready nodes' allocatable) with the amounts, which the
                        pod's pending message gives
    vote_enqueue        queue Open, and minResources + allocated + inqueue - elastic <=
                        realCapability in every resource the minResources names; PERMIT or REJECT
    on_enqueued         the job's minResources join its queue's inqueue
    select_reclaimees   tasks of reclaimable queues while their queue's allocated (less the victims
                        already chosen) exceeds its deserved in some resource (Volcano >= 1.12:
                        no skip for an allocation below the reclaimer's request)
    on_allocate / on_deallocate keep allocated and share in step
    on_session_close    reports every queue's figures (`session.report_queue`) for the queue
                        metrics: allocated, request, deserved, capability, realCapability,
                        share, weight, and overused by the `is_overused` rule; a queue holding no
                        job reports nothing allocated, requested or deserved, and not overused;
                        when the queues' guarantees exceed the cluster, the guaranteeing queues
                        carry the warning (`QueueFigures.warning`)
    at session open     when the queues' guarantees exceed the cluster (`guarantee_excess`),
                        every other queue is noted (`session.note_queue`): its pods' pending
                        messages name the guaranteeing queues and the amounts

It takes no arguments. Queue hierarchy (`enableHierarchy`) is not proportion's, as in Volcano
(whose `capacity` plugin serves hierarchies, as capacity does here): the flag is accepted and
changes nothing, and `spec.parent` is ignored (every queue is the root's child).

Differences from Volcano, on purpose:
- Amounts are integers: each round's part is rounded down to whole units (millicores, bytes), so
  at most a unit per queue per round stays undistributed, and comparisons are exact where Volcano
  compares float64 with a 0.1 tolerance.
- The inqueue reservation is made by `on_enqueued`, when the job is really admitted; Volcano
  before 1.16 adds it inside the vote, even when a later plugin rejects the job (1.16, commit
  5be98af37, does as here).
- `pods` (one per task in Volcano since 1.9) is not a dimension here. Volcano ignores it where a
  request is compared (allocatable, enqueue) but lets it into deserved, share and overused, where
  it mostly keeps a queue from counting as overused; allocatable then refuses the same tasks.
- Resource names Volcano does not count in a minResources, capability or guarantee (`pods`,
  `count/...`, `requests.*`, `limits.*`) are dropped from them, as Volcano's `NewResource` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from vscheduler.plugin_api import (
    ArgumentReader,
    Deserved,
    Limit,
    Overused,
    PluginSession,
    QueuePlugin,
    QueueState,
    Reclaim,
    Rules,
)

NAME: Final = "proportion"
RULES: Final = Rules(
    deserved=Deserved.WATER_FILL,  # weighted water-filling over the cluster
    share_if_nothing_deserved=0.0,  # updateShare over no resource
    best_effort_last=False,
    allocation_limit=Limit.DESERVED,  # allocatable: within deserved
    reclaim=Reclaim.ABOVE_DESERVED,  # preemptive is allocatable
)
"""Volcano proportion's rules for the queue accounts."""


class Proportion(QueuePlugin, Overused):
    """The per-session plugin: the queue accounts under proportion's rules, every point theirs."""

    rules = RULES

    def is_overused(self, queue: QueueState) -> bool:
        """Allocated has reached deserved in every resource."""
        return self.accounts.is_overused(queue)


class Factory:
    """Lives as long as the policy; holds nothing across cycles."""

    name = NAME
    plugin = Proportion

    def open(self, session: PluginSession) -> Proportion:
        """A fresh plugin for `session`."""
        return Proportion(session)


def build(arguments: Mapping[str, object]) -> Factory:
    """proportion takes no arguments."""
    ArgumentReader(arguments, owner=f"plugin {NAME}").finish()
    return Factory()
