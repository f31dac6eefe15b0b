"""proportion: queues share the cluster by weight, within capability, honouring guarantee.

At session open every queue that holds a job gets Volcano's attributes: `weight`, `capability`,
`guarantee`, `realCapability` (the cluster total less every other queue's guarantee, within the
capability), `allocated` (tasks Allocated, Binding, Bound, Running or Pipelined), `request`
(allocated plus every Pending task), `inqueue` (the minResources of Inqueue PodGroups, and what a
Running gang's minResources still reserves), `elastic` (what jobs hold beyond their
minResources) and `deserved`, found by Volcano's weighted water-filling over the cluster total
(the allocatable of the Ready nodes): each round gives every unsatisfied queue its weight's part
of what remains, capped by its realCapability and its request and raised to its guarantee, until
nothing remains or nothing changes. A queue's `share` is the largest allocated/deserved ratio over
the resources it deserves.

Registers (Volcano's proportion plugin):
    compare_queues      higher `spec.priority` first, then lower share first
    is_overused         deserved <= allocated in every resource
    allows_allocation   queue Open, and allocated + the task's request <= deserved in every
                        resource the task requests (also `allows_reclaim`, Volcano's preemptive
                        function)
    vote_enqueue        queue Open, and minResources + allocated + inqueue - elastic <=
                        realCapability in every resource the minResources names; PERMIT or REJECT
    on_enqueued         the job's minResources join its queue's inqueue
    select_reclaimees   tasks of reclaimable queues while their queue's allocated (less the victims
                        already chosen) exceeds its deserved in some resource; a candidate is
                        skipped while that allocation is below the reclaimer's request in some
                        resource
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

It takes no arguments. Queue hierarchy (`enableHierarchy`) is not supported, as in Volcano (whose
`capacity` plugin serves hierarchies): the flag is accepted and changes nothing.

Differences from Volcano, on purpose:
- Amounts are integers: each round's part is rounded down to whole units (millicores, bytes), so
  at most a unit per queue per round stays undistributed, and comparisons are exact where Volcano
  compares float64 with a 0.1 tolerance.
- The inqueue reservation is made by `on_enqueued`, when the job is really admitted; Volcano adds
  it inside the vote, even when a later plugin rejects the job.
- `pods` (one per task in Volcano since 1.9) is not a dimension here. Volcano ignores it where a
  request is compared (allocatable, enqueue) but lets it into deserved, share and overused, where
  it mostly keeps a queue from counting as overused; allocatable then refuses the same tasks.
- Resource names Volcano does not count in a minResources, capability or guarantee (`pods`,
  `count/...`, `requests.*`, `limits.*`) are dropped from them, as Volcano's `NewResource` does.
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
    Overused,
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
    note_guarantee_excess,
    real_capability,
    share_of,
    task_status,
    within,
)

NAME: Final = "proportion"


# --- resources as Volcano counts them ------------------------------------------------------------


# --- queue attributes ---------------------------------------------------------------------------
@dataclasses.dataclass(slots=True)
class QueueAttr:
    """One queue's proportion attributes for this session."""

    name: str
    weight: int
    guarantee: Resources
    capability: Resources | None
    real_capability: Resources
    bounded: frozenset[str]
    """The resources realCapability limits (cpu and memory always; others only when named)."""
    allocated: Resources = EMPTY
    request: Resources = EMPTY
    inqueue: Resources = EMPTY
    elastic: Resources = EMPTY
    deserved: Resources = EMPTY
    share: float = 0.0

    def update_share(self) -> None:
        """Recompute `share` from allocated and deserved."""
        self.share = share_of(self.allocated, self.deserved, if_nothing_deserved=0.0)


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
    return attrs


def _new_attr(queue: QueueState, total: Resources, total_guarantee: Resources) -> QueueAttr:
    facts = queue.facts
    guarantee = counted(facts.guarantee)
    capability = None if facts.capability is None else counted(facts.capability)
    real, bounded = real_capability(total, total_guarantee, guarantee, capability)
    return QueueAttr(
        name=queue.name,
        weight=queue.weight,
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


def reserved(job: JobState) -> Resources:
    """What an admitted job's minResources hold in its queue: all of it while the PodGroup is
    Inqueue; while it is Running with its gang placed, the part not yet allocated."""
    if job.facts.min_resources is None:
        return EMPTY
    minimum = counted(job.facts.min_resources)
    if job.phase is PodGroupPhase.INQUEUE:
        return minimum
    placed = job.count(*task_status.OCCUPYING)
    if job.phase is PodGroupPhase.RUNNING and placed >= job.min_member:
        return (minimum - job.allocated).clamp_min_zero()
    return EMPTY


def water_fill(attrs: Sequence[QueueAttr], total: Resources) -> None:
    """Set every queue's deserved by Volcano's iterative weighted water-filling.

    A round gives each queue not yet satisfied `remaining * weight / total weight` (rounded
    down) on top of its deserved, caps it by realCapability and by request, raises it to the
    guarantee; a queue whose request is met, or whose deserved did not change, is satisfied.
    Deserved never shrinks, so `remaining` only shrinks and the loop ends.
    """
    remaining = total
    satisfied: set[str] = set()
    while True:
        hungry = [a for a in attrs if a.name not in satisfied]
        weights = sum(a.weight for a in hungry)
        if weights == 0:
            break
        before, grown, shrunk = remaining, EMPTY, EMPTY
        for attr in hungry:
            old = attr.deserved
            part = Resources({n: a * attr.weight // weights for n, a in remaining.items()})
            capped = within(old + part, attr.real_capability, attr.bounded)
            attr.deserved = capped.min(attr.request).max(attr.guarantee)
            attr.update_share()
            if attr.request.fits_in(attr.deserved) or attr.deserved == old:
                satisfied.add(attr.name)
            grown = grown + (attr.deserved - old).clamp_min_zero()
            shrunk = shrunk + (old - attr.deserved).clamp_min_zero()
        remaining = (remaining + shrunk - grown).clamp_min_zero()
        if remaining.is_empty() or remaining == before:
            break


# --- the plugin ---------------------------------------------------------------------------------
class Proportion(
    QueueOrder,
    JobEnqueueable,
    JobEnqueued,
    Allocatable,
    Overused,
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
        water_fill(sorted(self.attrs.values(), key=lambda a: a.name), self.total)

    def _attr_of(self, task: TaskState) -> QueueAttr | None:
        return None if task.job is None else self.attrs.get(task.job.queue)

    # --- queue order, overused, allocatable ---------------------------------------------------
    def compare_queues(self, a: QueueState, b: QueueState) -> int:
        """Higher priority first, then the lower share."""
        if a.facts.priority != b.facts.priority:
            return -1 if a.facts.priority > b.facts.priority else 1
        left, right = self._share(a), self._share(b)
        return (left > right) - (left < right)

    def _share(self, queue: QueueState) -> float:
        attr = self.attrs.get(queue.name)
        return 0.0 if attr is None else attr.share

    def is_overused(self, queue: QueueState) -> bool:
        """Allocated has reached deserved in every resource."""
        attr = self.attrs.get(queue.name)
        return attr is not None and attr.deserved.fits_in(attr.allocated)

    def allows_allocation(self, queue: QueueState, task: TaskState) -> bool:
        """The queue is Open and the task fits in what the queue deserves."""
        if not queue.facts.is_open:
            return False
        attr = self.attrs.get(queue.name)
        if attr is None:
            return True
        return not exceeds(attr.allocated + task.resreq, attr.deserved, task.resreq)

    def allows_reclaim(self, queue: QueueState, task: TaskState) -> bool:
        """Volcano's preemptive function: the same test as `allows_allocation`."""
        return self.allows_allocation(queue, task)

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
        """Candidates of reclaimable queues, taken while their queue stays above its deserved."""
        left: dict[str, Resources] = {}
        victims: list[TaskState] = []
        for task in candidates:
            attr = self._attr_of(task)
            if attr is None or not self._session.queues[attr.name].facts.reclaimable:
                continue
            allocated = left.setdefault(attr.name, attr.allocated)
            if allocated.any_less_than(reclaimer.resreq):
                continue
            if not allocated.fits_in(attr.deserved):
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
            attr = self.attrs.get(name) or _new_attr(queue, self.total, guarantees)
            figures = QueueFigures(
                name=name,
                allocated=attr.allocated,
                request=attr.request,
                deserved=attr.deserved,
                capability=attr.capability,
                real_capability=attr.real_capability,
                share=attr.share,
                weight=attr.weight,
                overused=self.is_overused(queue),
            )
            if self.excess is not None:
                figures = dataclasses.replace(figures, warning=self.excess.warning(name))
            session.report_queue(figures)


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
