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
the resources it deserves; a queue that deserves nothing is best-effort, with share 1.

Registers (Volcano's capacity plugin, flat queues):
    compare_queues      higher `spec.priority` first, then lower share first, then (shares
                        equal) a queue that deserves something before a best-effort one
    allows_allocation   queue Open, and allocated + the task's request <= realCapability in every
                        resource the task requests: a queue may run beyond its deserved (borrow)
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

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import (
    EMPTY,
    Allocatable,
    AllocateEvent,
    ArgumentReader,
    DeallocateEvent,
    JobEnqueueable,
    JobEnqueued,
    JobState,
    PluginSession,
    PodGroupPhase,
    Preemptive,
    QueueFigures,
    QueueOrder,
    QueueState,
    Reclaimable,
    Resources,
    SessionClose,
    TaskState,
    TaskStatus,
    Vote,
    all_guarantees,
    cluster_total,
    counted,
    exceeds,
    is_counted,
    note_guarantee_excess,
    real_capability,
    share_of,
    task_status,
    within,
)

NAME: Final = "capacity"


# --- resources as Volcano counts them ------------------------------------------------------------


def reserved(job: JobState) -> Resources:
    """What an admitted job's minResources still hold in its queue beyond what the job has
    allocated: while the PodGroup is Inqueue, or Running with its gang placed."""
    if job.facts.min_resources is None:
        return EMPTY
    if job.phase is PodGroupPhase.INQUEUE or (
        job.phase is PodGroupPhase.RUNNING and job.count(*task_status.OCCUPYING) >= job.min_member
    ):
        return (counted(job.facts.min_resources) - job.allocated).clamp_min_zero()
    return EMPTY


# --- queue attributes ---------------------------------------------------------------------------
@dataclasses.dataclass(slots=True)
class QueueAttr:
    """One queue's capacity attributes for this session."""

    name: str
    deserved: Resources
    guarantee: Resources
    capability: Resources | None
    real_capability: Resources
    bounded: frozenset[str]
    """The resources realCapability limits (cpu and memory always; others only when named)."""
    allocated: Resources = EMPTY
    request: Resources = EMPTY
    inqueue: Resources = EMPTY
    elastic: Resources = EMPTY
    share: float = 0.0

    def update_share(self) -> None:
        """Recompute `share` from allocated and deserved."""
        self.share = share_of(self.allocated, self.deserved, if_nothing_deserved=1.0)


def build_attrs(session: PluginSession, total: Resources) -> dict[str, QueueAttr]:
    """Attributes for every queue holding a job (jobs whose queue is missing are left out)."""
    total_guarantee = all_guarantees(session)
    attrs: dict[str, QueueAttr] = {}
    for job in session.jobs.values():
        queue = session.queue_of(job)
        if queue is None:
            continue
        attr = attrs.get(queue.name)
        if attr is None:
            attr = attrs[queue.name] = _new_attr(queue, total, total_guarantee)
        _add_job(attr, job)
    for attr in attrs.values():
        _settle(attr)
    return attrs


def _settle(attr: QueueAttr) -> None:
    """Deserved within realCapability and at least the guarantee; the share to match."""
    capped = within(attr.deserved, attr.real_capability, attr.bounded)
    attr.deserved = capped.max(attr.guarantee)
    attr.update_share()


def _new_attr(queue: QueueState, total: Resources, total_guarantee: Resources) -> QueueAttr:
    facts = queue.facts
    guarantee = counted(facts.guarantee)
    capability = None if facts.capability is None else counted(facts.capability)
    real, bounded = real_capability(total, total_guarantee, guarantee, capability)
    return QueueAttr(
        name=queue.name,
        deserved=EMPTY if facts.deserved is None else counted(facts.deserved),
        guarantee=guarantee,
        capability=capability,
        real_capability=real,
        bounded=bounded,
    )


def _add_job(attr: QueueAttr, job: JobState) -> None:
    pending = EMPTY
    for task in job.with_status(TaskStatus.PENDING):
        pending = pending + task.resreq
    attr.allocated = attr.allocated + job.allocated
    attr.request = attr.request + job.allocated + pending
    attr.inqueue = attr.inqueue + reserved(job)
    minimum = EMPTY if job.facts.min_resources is None else counted(job.facts.min_resources)
    attr.elastic = attr.elastic + (job.allocated - minimum).clamp_min_zero()


def shares_a_resource(a: Resources, b: Resources) -> bool:
    """Both request some counted resource of the same name."""
    return any(is_counted(n) and b.get(n) > 0 for n, amount in a.items() if amount > 0)


def above_deserved(allocated: Resources, deserved: Resources, asked: Resources) -> bool:
    """Volcano's reclaim test for one candidate: true when the candidate requests nothing the
    queue deserves (an immediate victim), or the queue's allocation is above its deserved in a
    resource both the candidate requests and the queue deserves."""
    relevant = [n for n, a in asked.items() if a > 0 and deserved.get(n) > 0]
    return not relevant or any(allocated.get(n) > deserved.get(n) for n in relevant)


# --- the plugin ---------------------------------------------------------------------------------
class Capacity(
    QueueOrder,
    JobEnqueueable,
    JobEnqueued,
    Allocatable,
    Preemptive,
    Reclaimable,
    AllocateEvent,
    DeallocateEvent,
    SessionClose,
):
    """The per-session plugin: queue attributes, kept in step with allocations."""

    def __init__(self, session: PluginSession) -> None:
        self._session = session
        self.total = cluster_total(session)
        self.attrs = build_attrs(session, self.total)
        self.excess = note_guarantee_excess(session)

    def _attr_of(self, task: TaskState) -> QueueAttr | None:
        return None if task.job is None else self.attrs.get(task.job.queue)

    # --- queue order and allocatable ----------------------------------------------------------
    def compare_queues(self, a: QueueState, b: QueueState) -> int:
        """Higher priority first, then the lower share, then a queue that deserves something."""
        if a.facts.priority != b.facts.priority:
            return -1 if a.facts.priority > b.facts.priority else 1
        left, right = self._order_key(a), self._order_key(b)
        return (left > right) - (left < right)

    def _order_key(self, queue: QueueState) -> tuple[float, bool]:
        attr = self.attrs.get(queue.name)
        if attr is not None:
            return attr.share, attr.deserved.is_empty()
        deserved = EMPTY if queue.facts.deserved is None else counted(queue.facts.deserved)
        return share_of(EMPTY, deserved, if_nothing_deserved=1.0), deserved.is_empty()

    def allows_allocation(self, queue: QueueState, task: TaskState) -> bool:
        """The queue is Open and the task fits in its realCapability (it may borrow beyond
        deserved)."""
        if not queue.facts.is_open:
            return False
        attr = self.attrs.get(queue.name)
        if attr is None:
            return True
        return not exceeds(attr.allocated + task.resreq, attr.real_capability, task.resreq)

    def allows_reclaim(self, queue: QueueState, task: TaskState) -> bool:
        """Volcano's preemptive function: the task fits in the queue's realCapability and keeps
        the queue within its deserved in at least one resource the task requests."""
        if not self.allows_allocation(queue, task):
            return False
        attr = self.attrs.get(queue.name)
        if attr is None:
            return True
        future = attr.allocated + task.resreq
        asked = [n for n, a in task.resreq.items() if a > 0 and is_counted(n)]
        return any(future.get(n) <= attr.deserved.get(n) for n in asked)

    # --- enqueue ------------------------------------------------------------------------------
    def vote_enqueue(self, job: JobState) -> Vote:
        """PERMIT when the job's minResources fit in its queue's realCapability beside what the
        queue holds and has admitted (less its elastic part); REJECT otherwise."""
        queue = self._session.queue_of(job)
        attr = None if queue is None else self.attrs.get(queue.name)
        if queue is None or attr is None:
            return Vote.ABSTAIN
        if not queue.facts.is_open:
            return Vote.REJECT
        if job.facts.min_resources is None:
            return Vote.PERMIT
        minimum = counted(job.facts.min_resources)
        wanted = minimum + attr.allocated + attr.inqueue - attr.elastic
        return Vote.REJECT if exceeds(wanted, attr.real_capability, minimum) else Vote.PERMIT

    def on_enqueued(self, job: JobState) -> None:
        """The admitted job's minResources now count as its queue's inqueue."""
        attr = self.attrs.get(job.queue)
        if attr is not None and job.facts.min_resources is not None:
            attr.inqueue = attr.inqueue + counted(job.facts.min_resources)

    # --- reclaim ------------------------------------------------------------------------------
    def select_reclaimees(
        self, reclaimer: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Candidates of reclaimable queues above their deserved, keeping their guarantee."""
        if self._attr_of(reclaimer) is None:
            return ()
        left: dict[str, Resources] = {}
        victims: list[TaskState] = []
        for task in candidates:
            attr = self._attr_of(task)
            if attr is None or not self._session.queues[attr.name].facts.reclaimable:
                continue
            if not shares_a_resource(task.resreq, reclaimer.resreq):
                continue
            allocated = left.setdefault(attr.name, attr.allocated)
            if not attr.guarantee.fits_in(allocated - task.resreq):
                continue
            if above_deserved(allocated, attr.deserved, task.resreq):
                left[attr.name] = allocated - task.resreq
                victims.append(task)
        return tuple(victims)

    # --- events -------------------------------------------------------------------------------
    def on_allocate(self, task: TaskState) -> None:
        """The task's queue holds its request."""
        self._change(task, task.resreq)

    def on_deallocate(self, task: TaskState) -> None:
        """The task's queue gives its request back."""
        self._change(task, -task.resreq)

    def _change(self, task: TaskState, delta: Resources) -> None:
        attr = self._attr_of(task)
        if attr is not None:
            attr.allocated = attr.allocated + delta
            attr.update_share()

    # --- session close ------------------------------------------------------------------------
    def on_session_close(self) -> None:
        """Report every queue's figures, in name order, for the queue metrics."""
        session = self._session
        guarantees = all_guarantees(session)
        for name in sorted(session.queues):
            queue = session.queues[name]
            attr = self.attrs.get(name)
            if attr is None:
                attr = _new_attr(queue, self.total, guarantees)
                _settle(attr)
            figures = QueueFigures(
                name=name,
                allocated=attr.allocated,
                request=attr.request,
                deserved=attr.deserved,
                capability=attr.capability,
                real_capability=attr.real_capability,
                share=attr.share,
                weight=queue.weight,
                overused=name in self.attrs and attr.deserved.fits_in(attr.allocated),
            )
            if self.excess is not None:
                figures = dataclasses.replace(figures, warning=self.excess.warning(name))
            session.report_queue(figures)


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
