"""Queue accounting: one account per queue for a session, as Volcano's proportion and capacity
plugins keep them, with the real differences between the two as explicit rules.

Owns: the per-queue figures of one session and the tests both plugins make on them. An account
(`QueueAccount`) holds `allocated` (tasks Allocated, Binding, Bound, Running or Pipelined),
`request` (allocated plus every Pending task), `inqueue` (what admitted jobs' minResources still
hold: `quota.reserved`), `elastic` (what jobs hold beyond their minResources), `deserved`,
`guarantee`, `capability`, `real_capability` with the resources it `bounded`, `share` and, from
those, overused. `QueueAccounts` opens them from the session, keeps them in step with allocations
and answers the queue points. Must not: change the session (it only notes queues and reports
figures), or know a plugin by name: a plugin states its `Rules`.

The accounts form a tree: every account has a `parent` and `children` under `QueueAccounts.root`,
the cluster (its deserved and real capability are the cluster total, its guarantee the sum of
every queue's; what a subtree holds is `held()`). Today every queue is a child of the root;
hierarchical queues (Volcano capacity's `buildHierarchicalQueueAttrs`) attach them below their
`spec.parent` instead. Every queue in the session has an account; only one whose queue holds a
job (`active`) takes part in the queue points, as in Volcano, whose plugins build attributes from
the jobs.

The rules (`Rules`), one field per real difference between Volcano's plugins:
    deserved          WATER_FILL (proportion): weighted water-filling over the cluster total among
                      the active queues; each round gives every unsatisfied queue its weight's
                      part of what remains, capped by realCapability and request, raised to the
                      guarantee. SPEC (capacity): the queue's `spec.deserved`, settled within its
                      realCapability and raised to its guarantee, for every queue.
    share_if_nothing_deserved  the share of a queue that deserves nothing: 0.0 (proportion) or
                      1.0 (capacity: a best-effort queue goes after every queue below its deserved)
    best_effort_last  queue order: after priority and share, a queue that deserves something
                      comes before one that deserves nothing (capacity)
    allocation_limit  DESERVED (proportion) or REAL_CAPABILITY (capacity: a queue may borrow):
                      allocated + the task's request must stay within it
    reclaim           ABOVE_DESERVED (proportion): preemptive is the allocation test; victims
                      while their queue is above deserved and covers the reclaimer's request.
                      KEEP_GUARANTEE (capacity): preemptive also wants the queue within deserved
                      in one resource the task requests; victims share a resource with the
                      reclaimer, keep their queue at its guarantee, and their queue is above
                      deserved in a resource both the victim requests and the queue deserves
    inqueue_less_allocated  an Inqueue job reserves its minResources less what it has allocated
                      (capacity) rather than all of it (proportion): `quota.reserved`
An allocation the accounts refuse is a `Refusal` (false, as `False` is), worded by
`queue_refusals`: the queue's state, or the limit and the numbers.
Both plugins report the same figures (`report`): allocated, request, deserved, capability,
realCapability, share, weight, overused (active and allocated has reached deserved everywhere).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Final

from vscheduler.framework import queue_refusals, quota
from vscheduler.framework.results import Refusal, Vote
from vscheduler.model.commands import QueueFigures
from vscheduler.model.resources import EMPTY, Resources
from vscheduler.model.status import TaskStatus

if TYPE_CHECKING:
    from vscheduler.framework.state import JobState, QueueState, TaskState
    from vscheduler.framework.view import PluginSession

ROOT: Final = "root"
"""The name of the tree's root account (Volcano's root queue)."""


class Deserved(enum.Enum):
    """How a queue's deserved is found."""

    WATER_FILL = "water-fill"
    SPEC = "spec"


class Limit(enum.Enum):
    """What allocated + a task's request must stay within for the task to be allocated."""

    DESERVED = "deserved"
    REAL_CAPABILITY = "realCapability"


class Reclaim(enum.Enum):
    """Which queue may reclaim and which tasks it takes (see the module docstring)."""

    ABOVE_DESERVED = "above-deserved"
    KEEP_GUARANTEE = "keep-guarantee"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Rules:
    """Volcano's real differences between its queue plugins (see the module docstring)."""

    deserved: Deserved
    share_if_nothing_deserved: float
    best_effort_last: bool
    allocation_limit: Limit
    reclaim: Reclaim
    inqueue_less_allocated: bool


@dataclasses.dataclass(slots=True, eq=False)
class QueueAccount:
    """One queue's figures for this session, and its place in the queue tree."""

    name: str
    weight: int
    guarantee: Resources
    capability: Resources | None
    real_capability: Resources
    bounded: frozenset[str]
    """The resources realCapability limits (cpu and memory always; others only when named)."""
    deserved: Resources = EMPTY
    allocated: Resources = EMPTY
    request: Resources = EMPTY
    inqueue: Resources = EMPTY
    elastic: Resources = EMPTY
    share: float = 0.0
    active: bool = False
    """The queue holds a job: it takes part in the queue points."""
    reclaimable: bool = True
    parent: QueueAccount | None = None
    children: list[QueueAccount] = dataclasses.field(default_factory=list)

    def ancestors(self) -> Iterator[QueueAccount]:
        """The parent, its parent, ... up to the root."""
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def held(self) -> Resources:
        """What this queue and every queue below it hold (a leaf: its `allocated`)."""
        held = self.allocated
        for child in self.children:
            held = held + child.held()
        return held

    def add_job(self, job: JobState, *, less_allocated: bool) -> None:
        """The job's tasks and reservation count in this queue."""
        pending = EMPTY
        for task in job.with_status(TaskStatus.PENDING):
            pending = pending + task.resreq
        self.allocated = self.allocated + job.allocated
        self.request = self.request + job.allocated + pending
        self.inqueue = self.inqueue + quota.reserved(job, less_allocated=less_allocated)
        facts = job.facts
        minimum = EMPTY if facts.min_resources is None else quota.counted(facts.min_resources)
        self.elastic = self.elastic + (job.allocated - minimum).clamp_min_zero()
        self.active = True

    def settle(self) -> None:
        """Deserved within realCapability and at least the guarantee (capacity's rule)."""
        capped = quota.within(self.deserved, self.real_capability, self.bounded)
        self.deserved = capped.max(self.guarantee)

    def update_share(self, if_nothing_deserved: float) -> None:
        """`share` from allocated and deserved (`if_nothing_deserved` when it deserves nothing)."""
        self.share = quota.share_of(
            self.allocated, self.deserved, if_nothing_deserved=if_nothing_deserved
        )

    def is_overused(self) -> bool:
        """Active, and allocated has reached deserved in every resource."""
        return self.active and self.deserved.fits_in(self.allocated)


def _new_account(queue: QueueState, total: Resources, guarantees: Resources) -> QueueAccount:
    facts = queue.facts
    guarantee = quota.counted(facts.guarantee)
    capability = None if facts.capability is None else quota.counted(facts.capability)
    real, bounded = quota.real_capability(total, guarantees, guarantee, capability)
    return QueueAccount(
        name=queue.name,
        weight=queue.weight,
        guarantee=guarantee,
        capability=capability,
        real_capability=real,
        bounded=bounded,
        reclaimable=facts.reclaimable,
    )


def water_fill(accounts: Sequence[QueueAccount], total: Resources, if_nothing: float) -> None:
    """Set every account's deserved (from nothing) by Volcano's weighted water-filling.

    A round gives each account not yet satisfied `remaining * weight / total weight` (rounded
    down) on top of its deserved, caps it by realCapability and by request, raises it to the
    guarantee; an account whose request is met, or whose deserved did not change, is satisfied.
    Deserved never shrinks, so `remaining` only shrinks and the loop ends.
    """
    remaining = total
    satisfied: set[str] = set()
    while True:
        hungry = [a for a in accounts if a.name not in satisfied]
        weights = sum(a.weight for a in hungry)
        if weights == 0:
            break
        before, grown, shrunk = remaining, EMPTY, EMPTY
        for account in hungry:
            old = account.deserved
            part = Resources({n: a * account.weight // weights for n, a in remaining.items()})
            capped = quota.within(old + part, account.real_capability, account.bounded)
            account.deserved = capped.min(account.request).max(account.guarantee)
            account.update_share(if_nothing)
            if account.request.fits_in(account.deserved) or account.deserved == old:
                satisfied.add(account.name)
            grown = grown + (account.deserved - old).clamp_min_zero()
            shrunk = shrunk + (old - account.deserved).clamp_min_zero()
        remaining = (remaining + shrunk - grown).clamp_min_zero()
        if remaining.is_empty() or remaining == before:
            break


def _spec_deserved(queue: QueueState) -> Resources:
    return EMPTY if queue.facts.deserved is None else quota.counted(queue.facts.deserved)


class QueueAccounts:
    """Every queue's account for one session, kept in step with allocations; the queue points'
    answers under the plugin's `Rules`."""

    def __init__(self, session: PluginSession, rules: Rules) -> None:
        self._session = session
        self.rules = rules
        self._limit_is_deserved = rules.allocation_limit is Limit.DESERVED
        self._if_nothing_deserved = rules.share_if_nothing_deserved
        self.total = quota.cluster_total(session)
        guarantees = quota.all_guarantees(session)
        self.root = QueueAccount(
            name=ROOT,
            weight=1,
            guarantee=guarantees,
            capability=None,
            real_capability=self.total,
            bounded=frozenset(self.total.names()),
            deserved=self.total,
        )
        self.accounts: dict[str, QueueAccount] = {}
        for name in sorted(session.queues):
            account = _new_account(session.queues[name], self.total, guarantees)
            account.parent = self.root
            self.root.children.append(account)
            self.accounts[name] = account
        self._add_jobs(session)
        self._active: dict[str, QueueAccount] = {a.name: a for a in self.root.children if a.active}
        """The accounts of the queues holding a job (the hooks' lookups, on the hot path)."""
        self.excess = quota.note_guarantee_excess(session, self.total)
        self._find_deserved()

    def _add_jobs(self, session: PluginSession) -> None:
        less_allocated = self.rules.inqueue_less_allocated
        for job in session.jobs.values():
            queue = session.queue_of(job)
            if queue is not None:
                self.accounts[queue.name].add_job(job, less_allocated=less_allocated)

    def _find_deserved(self) -> None:
        if_nothing = self.rules.share_if_nothing_deserved
        if self.rules.deserved is Deserved.WATER_FILL:
            water_fill([a for a in self.root.children if a.active], self.total, if_nothing)
            return
        for account in self.root.children:
            account.deserved = _spec_deserved(self._session.queues[account.name])
            account.settle()
            account.update_share(if_nothing)

    def __getitem__(self, name: str) -> QueueAccount:
        """The account of queue `name` (active or not)."""
        return self.accounts[name]

    def holding_jobs(self) -> dict[str, QueueAccount]:
        """The active accounts by queue name, in name order."""
        return {a.name: a for a in self.root.children if a.active}

    def active(self, name: str) -> QueueAccount | None:
        """The account of queue `name` if the queue holds a job, else None."""
        return self._active.get(name)

    def of_task(self, task: TaskState) -> QueueAccount | None:
        """The active account of the task's queue."""
        job = task.job
        return None if job is None else self._active.get(job.queue)

    # --- queue order, overused, allocatable -----------------------------------------------------
    def compare(self, a: QueueState, b: QueueState) -> int:
        """Higher `spec.priority` first, then the lower share (then, best-effort last)."""
        if a.facts.priority != b.facts.priority:
            return -1 if a.facts.priority > b.facts.priority else 1
        left, right = self._order_key(a), self._order_key(b)
        return (left > right) - (left < right)

    def _order_key(self, queue: QueueState) -> tuple[float, bool]:
        account = self.active(queue.name)
        if account is not None:
            share, deserves_nothing = account.share, account.deserved.is_empty()
        else:
            deserved = _spec_deserved(queue)
            if_nothing = self.rules.share_if_nothing_deserved
            share = quota.share_of(EMPTY, deserved, if_nothing_deserved=if_nothing)
            deserves_nothing = deserved.is_empty()
        return share, self.rules.best_effort_last and deserves_nothing

    def is_overused(self, queue: QueueState) -> bool:
        """Allocated has reached deserved in every resource."""
        account = self.accounts.get(queue.name)
        return account is not None and account.is_overused()

    def allows_allocation(self, queue: QueueState, task: TaskState) -> bool | Refusal:
        """The queue is Open and allocated + the task's request stays within the rule's limit in
        every resource the task requests; a `Refusal` names what it is not, with the numbers."""
        if not queue.facts.is_open:
            return queue_refusals.closed(queue)
        account = self._active.get(queue.name)
        if account is None:
            return True
        limit = account.deserved if self._limit_is_deserved else account.real_capability
        asked = task.resreq
        over = quota.exceeds(account.allocated + asked, limit, asked)
        if not over:
            return True
        return queue_refusals.over_limit(
            account, asked, over, total=self.total, limit_is_deserved=self._limit_is_deserved
        )

    def allows_reclaim(self, queue: QueueState, task: TaskState) -> bool:
        """Volcano's preemptive function (see `Reclaim`)."""
        if not self.allows_allocation(queue, task):
            return False
        account = self.active(queue.name)
        if self.rules.reclaim is Reclaim.ABOVE_DESERVED or account is None:
            return True
        future = account.allocated + task.resreq
        asked = [n for n, a in task.resreq.items() if a > 0 and quota.is_counted(n)]
        return any(future.get(n) <= account.deserved.get(n) for n in asked)

    # --- enqueue --------------------------------------------------------------------------------
    def vote_enqueue(self, job: JobState) -> Vote:
        """PERMIT when the job's minResources fit in its queue's realCapability beside what the
        queue holds and has admitted (less its elastic part); REJECT otherwise."""
        queue = self._session.queue_of(job)
        account = None if queue is None else self.active(queue.name)
        if queue is None or account is None:
            return Vote.ABSTAIN
        if not queue.facts.is_open:
            return Vote.REJECT
        if job.facts.min_resources is None:
            return Vote.PERMIT
        minimum = quota.counted(job.facts.min_resources)
        wanted = minimum + account.allocated + account.inqueue - account.elastic
        return (
            Vote.REJECT if quota.exceeds(wanted, account.real_capability, minimum) else Vote.PERMIT
        )

    def enqueued(self, job: JobState) -> None:
        """The admitted job's minResources now count as its queue's inqueue."""
        account = self.active(job.queue)
        if account is not None and job.facts.min_resources is not None:
            account.inqueue = account.inqueue + quota.counted(job.facts.min_resources)

    # --- reclaim --------------------------------------------------------------------------------
    def reclaimees(
        self, reclaimer: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Candidates of reclaimable queues taken while their queue (less the victims already
        chosen) stays above its deserved, by the rule's test."""
        keep_guarantee = self.rules.reclaim is Reclaim.KEEP_GUARANTEE
        if keep_guarantee and self.of_task(reclaimer) is None:
            return ()
        left: dict[str, Resources] = {}
        victims: list[TaskState] = []
        for task in candidates:
            account = self.of_task(task)
            if account is None or not account.reclaimable:
                continue
            allocated = left.get(account.name, account.allocated)
            if keep_guarantee:
                taken = (
                    quota.shares_a_resource(task.resreq, reclaimer.resreq)
                    and account.guarantee.fits_in(allocated - task.resreq)
                    and quota.above_deserved(allocated, account.deserved, task.resreq)
                )
            else:
                taken = not allocated.any_less_than(reclaimer.resreq) and not allocated.fits_in(
                    account.deserved
                )
            if taken:
                left[account.name] = allocated - task.resreq
                victims.append(task)
        return tuple(victims)

    # --- events and figures ---------------------------------------------------------------------
    def change(self, task: TaskState, delta: Resources) -> None:
        """The task's queue holds `delta` more."""
        job = task.job
        account = None if job is None else self._active.get(job.queue)
        if account is None:
            return
        account.allocated = account.allocated + delta
        account.update_share(self._if_nothing_deserved)

    def report(self) -> None:
        """Report every queue's figures, in name order, for the queue metrics."""
        session = self._session
        for name in sorted(session.queues):
            account = self.accounts[name]
            figures = QueueFigures(
                name=name,
                allocated=account.allocated,
                request=account.request,
                deserved=account.deserved,
                capability=account.capability,
                real_capability=account.real_capability,
                share=account.share,
                weight=account.weight,
                overused=account.is_overused(),
                warning="" if self.excess is None else self.excess.warning(name),
            )
            session.report_queue(figures)
