"""Queue resource arithmetic as Volcano does it, shared by the queue and fairness plugins.

proportion, capacity, overcommit and drf all need the same few rules: which resource names
Volcano compares, the cluster total (Ready nodes only) and what its pods use, what an admitted
job's minResources reserve (`reserved`), a queue's real capability and share, and the reclaim
tests on one candidate. They live here, once, under the queue accounts
(`framework.queue_accounts`), and reach plugins through `vscheduler.plugin_api`.

A cluster smaller than the sum of the queues' guarantees (`guarantee_excess`) leaves every other
queue only its own guarantee in the resources concerned: its real capability is the cluster less
every guarantee (nothing) plus its own. proportion and capacity then name the guaranteeing
queues and the amounts in the pending messages of the other queues and on those queues.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Final

from vscheduler.model import status as task_status
from vscheduler.model.resources import CPU, EMPTY, MEMORY, Resources, format_amount
from vscheduler.model.status import PodGroupPhase, TaskStatus

if TYPE_CHECKING:
    from vscheduler.framework.state import JobState
    from vscheduler.framework.view import PluginSession

ALWAYS_BOUNDED: Final = frozenset({CPU, MEMORY})
"""Resources a queue's real capability always limits."""


def is_counted(name: str) -> bool:
    """Whether Volcano keeps `name` as a compared dimension (`pods` is dropped: Volcano ignores
    it wherever a request is compared)."""
    if name in (CPU, MEMORY, "ephemeral-storage"):
        return True
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    if "/" not in name:
        return False  # pods, requests.cpu, limits.memory, services, ...
    if "kubernetes.io/" in name:
        return True
    return not name.startswith(("requests.", "count/"))


def counted(res: Resources) -> Resources:
    """`res` without the names Volcano does not compare."""
    return Resources({n: a for n, a in res.items() if is_counted(n)})


def exceeds(used: Resources, limit: Resources, asked: Resources) -> tuple[str, ...]:
    """The resources `asked` names (a positive amount) where `used` is above `limit` (absent
    counts as 0): Volcano's `LessEqualWithDimensionAndResourcesName` failures."""
    return tuple(n for n, a in asked.items() if a > 0 and used.get(n) > limit.get(n))


def would_exceed(held: Resources, asked: Resources, limit: Resources) -> bool:
    """`exceeds(held + asked, limit, asked)` is not empty, found without making the sum (the
    allocate action asks it once per task)."""
    return any(a > 0 and held.get(n) + a > limit.get(n) for n, a in asked.unordered_items())


def cluster_total(session: PluginSession) -> Resources:
    """The allocatable of the Ready nodes (Volcano's snapshot holds only those)."""
    return cluster_total_and_used(session)[0]


def cluster_total_and_used(session: PluginSession) -> tuple[Resources, Resources]:
    """`cluster_total` and what the pods on the Ready nodes hold (Volcano's `node.Used`: every
    non-pipelined pod placed there, releasing ones included), summed over the ledger's rows
    (its dimensions cover every resource a node has allocatable)."""
    return session.ledger.ready_sums()


def reserved(job: JobState, *, less_allocated: bool = False) -> Resources:
    """What an admitted job's minResources hold in its queue (Volcano's inqueue share of it).

    While the PodGroup is Inqueue: all of it (overcommit), or with `less_allocated` the part the
    job has not yet allocated (proportion, capacity). While it is Running with its gang placed:
    the part not yet allocated. Otherwise nothing. Less, in every case, the requests of its
    pending pods with a scheduling gate (Volcano's `DeductSchGatedResources`: a gated pod does
    not keep other jobs out of the queue).
    """
    if job.facts.min_resources is None:
        return EMPTY
    minimum = ungated_minimum(job)
    if job.phase is PodGroupPhase.INQUEUE:
        return (minimum - job.allocated).clamp_min_zero() if less_allocated else minimum
    placed = job.count(*task_status.OCCUPYING)
    if job.phase is PodGroupPhase.RUNNING and placed >= job.min_member:
        return (minimum - job.allocated).clamp_min_zero()
    return EMPTY


def ungated_minimum(job: JobState) -> Resources:
    """The job's counted minResources (EMPTY without) less the requests of its pending gated
    pods, each resource at least 0 and only the resources minResources names (Volcano's
    `DeductSchGatedResources`): what admitting the job reserves. The admission vote itself
    compares all of minResources, as Volcano's do."""
    if job.facts.min_resources is None:
        return EMPTY
    minimum = counted(job.facts.min_resources)
    gated = EMPTY
    for task in job.with_status(TaskStatus.PENDING):
        if task.facts.scheduling_gated:
            gated = gated + task.resreq
    if gated is EMPTY:
        return minimum
    return Resources({n: max(a - gated.get(n), 0) for n, a in minimum.items()})


def all_guarantees(session: PluginSession) -> Resources:
    """The sum of every queue's guarantee (what real capabilities are carved from)."""
    total = EMPTY
    for each in session.queues.values():
        total = total + counted(each.facts.guarantee)
    return total


@dataclasses.dataclass(frozen=True, slots=True)
class GuaranteeExcess:
    """The queues' guarantees add up to more than the cluster's allocatable: `queues` guarantee
    the resources concerned (by name), `guaranteed` is the sum of every queue's guarantee and
    `allocatable` the cluster's (Ready nodes), both in those resources only."""

    queues: tuple[str, ...]
    names: tuple[str, ...]
    """The resources in excess, sorted."""
    guaranteed: Resources
    allocatable: Resources

    def message(self) -> str:
        """`queue big's guarantee (cpu 100) exceeds the cluster's allocatable (cpu 16)`."""
        cluster = f"the cluster's allocatable ({self._amounts(self.allocatable)})"
        guaranteed = self._amounts(self.guaranteed)
        if len(self.queues) == 1:
            return f"queue {self.queues[0]}'s guarantee ({guaranteed}) exceeds {cluster}"
        names = ", ".join(self.queues)
        return f"the guarantees of queues {names} ({guaranteed} together) exceed {cluster}"

    def warning(self, queue: str) -> str:
        """The message for `queue` if it is one of the guaranteeing queues, else empty."""
        return self.message() if queue in self.queues else ""

    def _amounts(self, res: Resources) -> str:
        return ", ".join(f"{n} {format_amount(n, res.get(n))}" for n in self.names)


def guarantee_excess(
    session: PluginSession, cluster: Resources | None = None
) -> GuaranteeExcess | None:
    """How the queues' guarantees exceed the cluster (`cluster_total`, unless given), or None
    when the cluster holds them (or has no Ready node at all: nothing runs anyway, and a cluster
    starting up is not reported)."""
    if cluster is None:
        cluster = cluster_total(session)
    if cluster.is_empty():
        return None
    guarantees = {name: counted(q.facts.guarantee) for name, q in sorted(session.queues.items())}
    total = EMPTY
    for guarantee in guarantees.values():
        total = total + guarantee
    over = sorted(n for n, a in total.items() if a > cluster.get(n))
    if not over:
        return None
    queues = tuple(n for n, g in guarantees.items() if any(g.get(r) > 0 for r in over))
    return GuaranteeExcess(
        queues,
        tuple(over),
        Resources({n: total.get(n) for n in over}),
        Resources({n: cluster.get(n) for n in over}),
    )


def note_guarantee_excess(
    session: PluginSession, cluster: Resources | None = None
) -> GuaranteeExcess | None:
    """`guarantee_excess`, noted (`session.note_queue`) on every other queue: their pending
    messages then name the guaranteeing queues and the amounts."""
    excess = guarantee_excess(session, cluster)
    if excess is not None:
        message = excess.message()
        for name in sorted(session.queues):
            if name not in excess.queues:
                session.note_queue(name, message)
    return excess


def share_of(allocated: Resources, deserved: Resources, *, if_nothing_deserved: float) -> float:
    """The largest allocated/deserved ratio over the resources deserved, `if_nothing_deserved`
    when the queue deserves nothing (proportion: 0, as Volcano's updateShare over no resource;
    capacity: 1, a best-effort queue goes after every queue still below its deserved)."""
    if deserved.is_empty():
        return if_nothing_deserved
    return max(allocated.get(n) / a for n, a in deserved.unordered_items() if a > 0)


def real_capability(
    total: Resources,
    total_guarantee: Resources,
    guarantee: Resources,
    capability: Resources | None,
) -> tuple[Resources, frozenset[str]]:
    """Volcano's realCapability and the resources it bounds.

    `(total - all guarantees)` clipped at 0, plus the queue's own guarantee; a resource other than
    cpu and memory is bounded only where that leaves a positive amount or the guarantee names it.
    Then within the capability, in the bounded resources it names (a cpu or memory capability of
    0 or less means no limit, as in Volcano).
    """
    spare = (total - total_guarantee).clamp_min_zero()
    base = spare + guarantee
    bounded = ALWAYS_BOUNDED | frozenset(spare.names()) | frozenset(guarantee.names())
    if capability is None:
        return base, bounded
    values = {n: base.get(n) for n in bounded}
    for name, limit in capability.items():
        if name in bounded and (limit > 0 or name not in ALWAYS_BOUNDED):
            values[name] = min(values[name], limit)
    return Resources(values), bounded


def within(res: Resources, limit: Resources, bounded: frozenset[str]) -> Resources:
    """`res` capped by `limit` in the bounded resources (Volcano's
    `MinDimensionResource(limit, Infinity)`)."""
    return Resources({n: min(a, limit.get(n)) if n in bounded else a for n, a in res.items()})


def shares_a_resource(a: Resources, b: Resources) -> bool:
    """Both request some counted resource of the same name."""
    return any(is_counted(n) and b.get(n) > 0 for n, amount in a.items() if amount > 0)


def above_deserved(allocated: Resources, deserved: Resources, asked: Resources) -> bool:
    """Capacity's reclaim test for one candidate: true when the candidate requests nothing the
    queue deserves (an immediate victim), or the queue's allocation is above its deserved in a
    resource both the candidate requests and the queue deserves."""
    relevant = [n for n, a in asked.items() if a > 0 and deserved.get(n) > 0]
    return not relevant or any(allocated.get(n) > deserved.get(n) for n in relevant)
