"""Queue accounting: one account per queue for a session, as Volcano's proportion and capacity
plugins keep them, with the real differences between the two as explicit rules.

Owns: the per-queue figures of one session and the tests both plugins make on them. An account
(`QueueAccount`) holds `allocated` (tasks Allocated, Binding, Bound, Running or Pipelined),
`request` (allocated plus every Pending task), `inqueue` (what admitted jobs' minResources still
hold beyond what the jobs have allocated: `quota.reserved`), `elastic` (what jobs hold beyond their
minResources), `deserved`, `guarantee`, `capability`, `real_capability` with the resources it
`bounded`, `share` and, from those, overused. `QueueAccounts` opens them from the session, keeps
them in step with allocations and answers the queue points. Must not: change the session (it only
notes queues and reports figures), or know a plugin by name: a plugin states its `Rules`.

The accounts form a tree: every account has a `parent` and `children` under `QueueAccounts.root`,
the cluster (its deserved and real capability are the cluster total, its guarantee the sum of
every queue's; what a subtree holds is `held()`). Flat (the default), every queue is a child of
the root; every queue in the session has an account; only one whose queue holds a job (`active`)
takes part in the queue points, as in Volcano, whose plugins build attributes from the jobs.

With `hierarchy` (capacity's `enableHierarchy`; Volcano capacity's `buildHierarchicalQueueAttrs`
and `checkHierarchicalQueue`) a queue hangs below its `spec.parent` (none: below `root`; the
session's queue named `root`, when there is one, is the root, else a root without limits stands
in). Every account in the tree takes part in the queue points; `active` (for overused) says its
subtree holds a job. Top down from the root: a queue's capability takes its
parent's amount in every resource it does not name (cpu or memory of 0 or less counts as not
named); its deserved is at least its guarantee (not capped: Volcano's hierarchy does not cap
it); its realCapability is its parent's realCapability less all its siblings' guarantees (at 0),
plus its own guarantee, within its capability. The root's capability is the `root` queue's
(unbounded where it names nothing: Volcano's root is infinite by default, not the cluster), its
guarantee and deserved the sums of its children's. Allocated, request, inqueue and elastic of a
queue count its whole subtree, and move with every allocation (shares move only on the leaf, as
in Volcano, whose ancestors' shares are those of session open). Only a leaf runs jobs: a task is
allocatable, and a job enqueueable, when the test holds at the leaf and every ancestor up to the
root. Reclaim keeps the leaf's rules and, with `reclaim_level` (`ancestorReclaimLevel`) N > 0,
also compares the victim's ancestors 1..N levels up that the reclaimer does not share.
What is wrong with the tree is reported on the queue (`problems`, a warning on its figures and a
note in its pods' pending messages) and never fails the cycle: a parent that does not exist or a
cycle of parents (that queue and every queue below it run nothing), a job in a queue that has
children (its queue runs nothing), a child whose capability exceeds its parent's, children whose
guarantees or deserved add up to more than their parent's, a guarantee above the parent's
capability.

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
                      while their queue is above deserved in some resource (Volcano >= 1.12,
                      commit 975277f55, dropped the "covers the reclaimer's request" skip).
                      KEEP_GUARANTEE (capacity): preemptive also wants the queue within deserved
                      in one resource the task requests; victims share a resource with the
                      reclaimer, keep their queue at its guarantee, and their queue is above
                      deserved in a resource both the victim requests and the queue deserves
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
from vscheduler.model.resources import EMPTY, Resources, format_resources, total

if TYPE_CHECKING:
    from vscheduler.framework.state import JobState, QueueState, TaskState
    from vscheduler.framework.view import PluginSession

ROOT: Final = "root"
"""The name of the tree's root account (Volcano's root queue)."""
HIERARCHY_REASON: Final = "InvalidQueueHierarchy"
"""The Warning Event reason of a queue whose place in the tree is wrong (hierarchy)."""
GUARANTEE_REASON: Final = "GuaranteeUnsatisfiable"
"""The Warning Event reason of a queue whose guarantee the cluster cannot hold (flat)."""


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
    _share: float = dataclasses.field(default=0.0, init=False, repr=False)
    _share_rule: float | None = dataclasses.field(default=None, init=False, repr=False)
    """Set by `update_share` (its `if_nothing_deserved`): `share` is found again on its next
    read. An allocation changes allocated once per task and the share is read once per job
    (the queue order), so a gang's tasks do not each pay for it."""
    active: bool = False
    """The queue holds a job (with hierarchy: its subtree does): flat, it takes part in the
    queue points only then."""
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

    def add_jobs(
        self,
        reserving: Sequence[JobState],
        sums: tuple[Resources, Resources],
    ) -> None:
        """The queue's jobs' tasks and reservations count in this queue: `reserving`, its jobs
        with minResources; `sums`, its plain jobs' allocation and every job's pending request
        (`QueueTotals`: a queue may hold thousands of lone pods' jobs)."""
        plain, pending = sums
        allocated = plain + total(job.allocated for job in reserving)
        self.allocated = self.allocated + allocated
        self.request = self.request + allocated + pending
        self.inqueue = self.inqueue + total(
            quota.reserved(job, less_allocated=True) for job in reserving
        )
        # a job without minResources is elastic in all it holds (requests are never negative)
        self.elastic = self.elastic + plain + total(_elastic(job) for job in reserving)
        self.active = True

    def settle(self) -> None:
        """Deserved within realCapability and at least the guarantee (capacity's rule)."""
        capped = quota.within(self.deserved, self.real_capability, self.bounded)
        self.deserved = capped.max(self.guarantee)

    @property
    def share(self) -> float:
        """The largest allocated/deserved ratio (`quota.share_of`), as of the last
        `update_share` (found on the read after it)."""
        rule = self._share_rule
        if rule is not None:
            self._share = quota.share_of(self.allocated, self.deserved, if_nothing_deserved=rule)
            self._share_rule = None
        return self._share

    @share.setter
    def share(self, value: float) -> None:
        self._share, self._share_rule = value, None

    def update_share(self, if_nothing_deserved: float) -> None:
        """`share` from allocated and deserved as they are now (`if_nothing_deserved` when it
        deserves nothing), found when it is next read: allocated and deserved change only
        before an `update_share`, so the share read is the one they give."""
        self._share_rule = if_nothing_deserved

    def is_overused(self) -> bool:
        """Active, and allocated has reached deserved in every resource."""
        return self.active and self.deserved.fits_in(self.allocated)


def _elastic(job: JobState) -> Resources:
    """What the job holds beyond its minResources."""
    minimum = job.facts.min_resources
    if minimum is None:
        return job.allocated.clamp_min_zero()
    return (job.allocated - quota.counted(minimum)).clamp_min_zero()


def _by_queue(session: PluginSession) -> dict[str, tuple[JobState, list[JobState]]]:
    """For each existing queue that holds a job: its first job and its jobs with minResources,
    in job order."""
    out: dict[str, tuple[JobState, list[JobState]]] = {}
    queues = session.queues
    for job in session.jobs.values():
        name = job.facts.queue
        if name in queues:
            held = out.get(name)
            if held is None:
                held = out[name] = (job, [])
            if job.facts.min_resources is not None:
                held[1].append(job)
    return out


def _reserving(session: PluginSession) -> dict[str, list[JobState]]:
    """For each existing queue that some job names (`QueueTotals.held`, carried from session
    to session): its jobs with minResources, in job order (only PodGroups have minResources:
    a queue of thousands of lone pods' jobs is not walked)."""
    queues = session.queues
    out: dict[str, list[JobState]] = {
        name: [] for name in sorted(session.queue_totals.held()) if name in queues
    }
    for job in session.podgroup_jobs:
        if job.facts.min_resources is not None and job.facts.queue in out:
            out[job.facts.queue].append(job)
    return out


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


def _within_real(account: QueueAccount, used: Resources, asked: Resources) -> bool:
    """`used` within the account's realCapability in every resource `asked` names that the
    realCapability bounds (Volcano's `LessEqualWithDimensionAndResourcesName`; a resource no
    capability in the tree names is unbounded, as Volcano's infinite root)."""
    real, bounded = account.real_capability, account.bounded
    return all(used.get(n) <= real.get(n) for n, a in asked.items() if a > 0 and n in bounded)


def _set_real_capability(
    child: QueueAccount, parent_bounded: frozenset[str], spare: Resources
) -> None:
    """The parent's realCapability less the siblings' guarantees (`spare`), plus the child's
    own guarantee, within its capability; a resource only the child's capability bounds is
    bounded by it alone."""
    limit = EMPTY if child.capability is None else child.capability
    bounded = parent_bounded | frozenset(limit.names())
    real: dict[str, int] = {}
    for name in bounded:
        carved = spare.get(name) + child.guarantee.get(name)
        if name not in parent_bounded:
            real[name] = limit.get(name)
        elif limit.get(name) > 0:
            real[name] = min(carved, limit.get(name))
        else:
            real[name] = carved
    child.real_capability, child.bounded = Resources(real), bounded


def _relevant(asked: Resources, deserved: Resources) -> bool:
    """`asked` requests a resource `deserved` names (Volcano's `hasRelevantDeserved`)."""
    return any(a > 0 and deserved.get(n) > 0 for n, a in asked.items())


def _parent_name(queue: QueueState) -> str:
    return queue.facts.parent or ROOT


def _less_partly(have: Resources, need: Resources) -> bool:
    """`have` is below `need` in some resource `need` names (Volcano's `LessPartly`)."""
    return any(have.get(n) < a for n, a in need.items())


def _tree_account(queue: QueueState) -> QueueAccount:
    """A queue's account before its place in the tree is known (Volcano's `newQueueAttr`)."""
    facts = queue.facts
    capability = None if facts.capability is None else quota.counted(facts.capability)
    positive = (
        None if capability is None else Resources({n: a for n, a in capability.items() if a > 0})
    )
    return QueueAccount(
        name=queue.name,
        weight=queue.weight,
        guarantee=quota.counted(facts.guarantee),
        capability=positive or None,
        real_capability=EMPTY,
        bounded=frozenset(),
        deserved=_spec_deserved(queue),
        reclaimable=facts.reclaimable,
    )


def _spec_deserved(queue: QueueState) -> Resources:
    return EMPTY if queue.facts.deserved is None else quota.counted(queue.facts.deserved)


class QueueAccounts:
    """Every queue's account for one session, kept in step with allocations; the queue points'
    answers under the plugin's `Rules`."""

    def __init__(
        self,
        session: PluginSession,
        rules: Rules,
        *,
        hierarchy: bool = False,
        reclaim_level: int = 0,
    ) -> None:
        self._session = session
        self.rules = rules
        self._limit_is_deserved = rules.allocation_limit is Limit.DESERVED
        self._if_nothing_deserved = rules.share_if_nothing_deserved
        self.hierarchy = hierarchy
        self.reclaim_level = reclaim_level if hierarchy else 0
        self.problems: dict[str, list[str]] = {}
        """Queue -> what is wrong with its place in the tree (hierarchy only), in order found."""
        self._refused: dict[str, str] = {}
        """Queue -> why it runs nothing (a broken parent chain, a job in a non-leaf queue)."""
        self.total = quota.cluster_total(session)
        if hierarchy:
            self.excess: quota.GuaranteeExcess | None = None
            self._open_tree(session)
            return
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

    # --- the tree (hierarchy) -------------------------------------------------------------------
    def _open_tree(self, session: PluginSession) -> None:
        queues = session.queues
        self.accounts = {name: _tree_account(queues[name]) for name in sorted(queues)}
        root = self.accounts.get(ROOT)
        if root is None:
            root = QueueAccount(
                name=ROOT,
                weight=1,
                guarantee=EMPTY,
                capability=None,
                real_capability=EMPTY,
                bounded=frozenset(),
            )
        self.root = root
        for name, account in self.accounts.items():
            if account is root:
                continue
            broken = self._broken_chain(name)
            if broken is not None:
                self._refuse(name, broken)
                continue
            parent = self.accounts.get(_parent_name(queues[name]), root)
            account.parent = parent
            parent.children.append(account)
        totals = session.queue_totals
        for name, (first, reserving) in _by_queue(session).items():
            account = self.accounts[name]
            account.add_jobs(reserving, totals.of(name))
            if account.children:
                self._refuse(name, f"The Queue <{name}> of Job <{first.key}> is not leaf queue")
        self._sum_up(root)
        root.real_capability = EMPTY if root.capability is None else root.capability
        root.bounded = frozenset(() if root.capability is None else root.capability.names())
        self._settle_tree(root)
        for account in self.accounts.values():
            account.update_share(self._if_nothing_deserved)
        self._active = dict(self.accounts)
        for name, reasons in self.problems.items():
            session.note_queue(name, reasons[0])

    def _broken_chain(self, name: str) -> str | None:
        """Why `name`'s parents do not lead to the root (Volcano's `updateAncestors` errors)."""
        queues = self._session.queues
        seen: set[str] = set()
        current = name
        while current != ROOT:
            if current in seen:
                return f"cycle detected in queue hierarchy for queue {current}"
            seen.add(current)
            parent = _parent_name(queues[current])
            if parent != ROOT and parent not in queues:
                return f"the queue {current} has invalid parent queue {parent}"
            current = parent
        return None

    def _problem(self, name: str, problem: str) -> None:
        found = self.problems.setdefault(name, [])
        if problem not in found:
            found.append(problem)

    def _refuse(self, name: str, problem: str) -> None:
        self._problem(name, problem)
        self._refused.setdefault(name, problem)

    def _sum_up(self, account: QueueAccount) -> None:
        """A queue's figures count its whole subtree (children first)."""
        for child in account.children:
            self._sum_up(child)
            account.allocated = account.allocated + child.allocated
            account.request = account.request + child.request
            account.inqueue = account.inqueue + child.inqueue
            account.elastic = account.elastic + child.elastic
            account.active = account.active or child.active

    def _settle_tree(self, parent: QueueAccount) -> None:
        """Volcano's `checkHierarchicalQueue`, top down: the children's capability, deserved and
        realCapability from their parent's, and what does not add up reported."""
        guarantees, deserved = EMPTY, EMPTY
        for child in parent.children:
            child.deserved = child.deserved.max(child.guarantee)
            deserved = deserved + child.deserved
            guarantees = guarantees + child.guarantee
            self._inherit(parent, child)
        if parent is self.root:
            parent.guarantee = guarantees
            parent.deserved = deserved
        spare = (parent.real_capability - guarantees).clamp_min_zero()
        for child in parent.children:
            _set_real_capability(child, parent.bounded, spare)
        if _less_partly(parent.deserved, deserved):
            self._problem(
                parent.name,
                f"Sum of child queue deserved ({format_resources(deserved)}) exceeds parent "
                f"queue {parent.name} deserved ({format_resources(parent.deserved)}). This may "
                "affect resource distribution during scheduling.",
            )
        if _less_partly(parent.guarantee, guarantees):
            self._problem(
                parent.name,
                f"Sum of child queue guarantees ({format_resources(guarantees)}) exceeds parent "
                f"queue {parent.name} guarantee ({format_resources(parent.guarantee)}). Not all "
                "child guarantees can be satisfied simultaneously.",
            )
        for child in parent.children:
            self._settle_tree(child)

    def _inherit(self, parent: QueueAccount, child: QueueAccount) -> None:
        """The child's capability takes the parent's amount where it names none; a child asking
        for more than its parent allows is reported."""
        cap, own = parent.capability, child.capability
        if cap is None:
            return
        if own is not None:
            over = sorted(n for n, a in own.items() if 0 < cap.get(n) < a)
            if over:
                self._problem(
                    child.name,
                    f"Child queue {child.name} capability ({format_resources(own)}) exceeds "
                    f"parent queue {parent.name} capability ({format_resources(cap)}) on "
                    f"resources [{' '.join(over)}]. Child's effective capability will be "
                    "limited by parent.",
                )
        child.capability = Resources(cap.as_dict() | ({} if own is None else own.as_dict()))
        if not child.guarantee.fits_in_named(cap):
            self._problem(
                child.name,
                f"queue {child.name}'s guarantee ({format_resources(child.guarantee)}) exceeds "
                f"its parent queue {parent.name}'s capability ({format_resources(cap)})",
            )

    def _chain(self, account: QueueAccount) -> Iterator[QueueAccount]:
        """The account, then its ancestors up to the root (hierarchy), or the account alone."""
        yield account
        if self.hierarchy:
            yield from account.ancestors()

    def _path(self, account: QueueAccount) -> list[QueueAccount]:
        """The root first, down to the account's parent (Volcano's `ancestors`)."""
        path = list(account.ancestors())
        path.reverse()
        return path

    def _ancestor_at(self, account: QueueAccount, level: int) -> QueueAccount | None:
        """The ancestor `level` levels up (1: the parent), None past the root or at it."""
        node: QueueAccount | None = account
        for _ in range(level):
            node = None if node is None else node.parent
        return None if node is None or node is self.root else node

    def _add_jobs(self, session: PluginSession) -> None:
        totals = session.queue_totals
        for name, reserving in _reserving(session).items():
            self.accounts[name].add_jobs(reserving, totals.of(name))

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
        return {name: self._active[name] for name in sorted(self._active)}

    def refused(self, name: str) -> str | None:
        """Why queue `name` runs nothing (hierarchy: a broken parent chain, a job in a queue
        with children), or None."""
        return self._refused.get(name)

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
        if self.hierarchy:
            return self._compare_in_tree(a, b)
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

    def _compare_in_tree(self, a: QueueState, b: QueueState) -> int:
        """Volcano's hierarchical queue order: a leaf before a queue with children; two leaves
        by the shares of their ancestors just below the deepest ancestor they share."""
        left, right = self.accounts[a.name], self.accounts[b.name]
        left_leaf, right_leaf = not left.children, not right.children
        if left_leaf != right_leaf:
            return -1 if left_leaf else 1
        if left_leaf:
            left_path, right_path = self._path(left), self._path(right)
            level = 0
            for i in range(min(len(left_path), len(right_path))):
                if left_path[i] is not right_path[i]:
                    break
                level = i
            if level + 1 < len(left_path):
                left = left_path[level + 1]
            if level + 1 < len(right_path):
                right = right_path[level + 1]
        best_effort_last = self.rules.best_effort_last
        keys = [(x.share, best_effort_last and x.deserved.is_empty()) for x in (left, right)]
        return (keys[0] > keys[1]) - (keys[0] < keys[1])

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
        asked = task.resreq
        if self.hierarchy:
            if queue.name in self._refused or account.children:
                return queue_refusals.off_the_tree()
            for each in self._chain(account):
                used = each.allocated + asked
                if not _within_real(each, used, asked):
                    return queue_refusals.over_tree_limit(each, account, asked, used)
            return True
        limit = account.deserved if self._limit_is_deserved else account.real_capability
        if not quota.would_exceed(account.allocated, asked, limit):
            return True
        over = quota.exceeds(account.allocated + asked, limit, asked)
        return queue_refusals.over_limit(
            account, asked, over, total=self.total, limit_is_deserved=self._limit_is_deserved
        )

    def allows_reclaim(self, queue: QueueState, task: TaskState) -> bool:
        """Volcano's preemptive function (see `Reclaim`)."""
        if self.hierarchy:
            return self._allows_reclaim_in_tree(queue, task)
        if not self.allows_allocation(queue, task):
            return False
        account = self.active(queue.name)
        if self.rules.reclaim is Reclaim.ABOVE_DESERVED or account is None:
            return True
        future = account.allocated + task.resreq
        asked = [n for n, a in task.resreq.items() if a > 0 and quota.is_counted(n)]
        return any(future.get(n) <= account.deserved.get(n) for n in asked)

    def _allows_reclaim_in_tree(self, queue: QueueState, task: TaskState) -> bool:
        """Volcano's hierarchical preemptive function: the queue Open, within its own
        realCapability, and within deserved in one requested resource, at the queue or (with
        `reclaim_level`) at an ancestor up to that many levels, the root excepted."""
        account = self._active.get(queue.name)
        if not queue.facts.is_open or account is None or queue.name in self._refused:
            return False
        asked = task.resreq
        if not _within_real(account, account.allocated + asked, asked):
            return False
        counted = [n for n, a in asked.items() if a > 0 and quota.is_counted(n)]
        for level in range(self.reclaim_level + 1):
            each = account if level == 0 else self._ancestor_at(account, level)
            if each is None:
                continue
            future = each.allocated + asked
            if any(future.get(n) <= each.deserved.get(n) for n in counted):
                return True
        return False

    # --- enqueue --------------------------------------------------------------------------------
    def vote_enqueue(self, job: JobState) -> Vote | Refusal:
        """PERMIT when the job's minResources fit in its queue's realCapability beside what the
        queue holds and has admitted (less its elastic part); else a `Refusal` naming the limit
        and the amounts (or the queue's state)."""
        queue = self._session.queue_of(job)
        account = None if queue is None else self.active(queue.name)
        if queue is None or account is None:
            return Vote.ABSTAIN
        if self.hierarchy and (queue.name in self._refused or account.children):
            return queue_refusals.off_the_tree()
        if not queue.facts.is_open:
            return queue_refusals.closed(queue)
        if job.facts.min_resources is None:
            return Vote.PERMIT
        minimum = quota.counted(job.facts.min_resources)
        if self.hierarchy:
            for each in self._chain(account):
                wanted = minimum + each.allocated + each.inqueue - each.elastic
                if not _within_real(each, wanted, minimum):
                    return queue_refusals.over_tree_limit(each, account, minimum, wanted, job=True)
            return Vote.PERMIT
        wanted = minimum + account.allocated + account.inqueue - account.elastic
        over = quota.exceeds(wanted, account.real_capability, minimum)
        if not over:
            return Vote.PERMIT
        return queue_refusals.not_admitted(account, minimum, wanted, over, total=self.total)

    def enqueued(self, job: JobState) -> None:
        """The admitted job's minResources now count as its queue's inqueue."""
        account = self.active(job.queue)
        if account is not None and job.facts.min_resources is not None:
            minimum = quota.ungated_minimum(job)
            for each in self._chain(account):
                each.inqueue = each.inqueue + minimum

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
        if self.hierarchy:
            candidates = self._victim_queue_order(reclaimer, candidates)
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
                taken = not allocated.fits_in(account.deserved)
            if taken and self.reclaim_level:
                taken = self._ancestors_give(reclaimer, task, account, left)
            if taken:
                left[account.name] = allocated - task.resreq
                victims.append(task)
        return tuple(victims)

    def gang_reclaimees(self, candidates: Sequence[TaskState]) -> tuple[TaskState, ...]:
        """gangreclaim's candidates (Volcano capacity's gang-level evictable function), in the
        order given: one whose eviction keeps its queue at or above its guarantee, while the
        queue (less the victims already chosen) is above its deserved by `above_deserved`. Only
        the leaf queue's figures count, with or without hierarchy, as in Volcano."""
        left: dict[str, Resources] = {}
        victims: list[TaskState] = []
        for task in candidates:
            account = self.of_task(task)
            if account is None:
                continue
            allocated = left.get(account.name, account.allocated)
            if account.guarantee.fits_in(allocated - task.resreq) and quota.above_deserved(
                allocated, account.deserved, task.resreq
            ):
                left[account.name] = allocated - task.resreq
                victims.append(task)
        return tuple(victims)

    def _victim_queue_order(
        self, reclaimer: TaskState, candidates: Sequence[TaskState]
    ) -> list[TaskState]:
        """Volcano capacity's hierarchical victim queue order: candidates of a queue sharing a
        deeper ancestor with the reclaimer's queue first (a stable sort)."""
        mine = self.of_task(reclaimer)
        if mine is None:
            return list(candidates)
        path = self._path(mine)

        def shared(task: TaskState) -> int:
            theirs = self.of_task(task)
            if theirs is None:
                return 0
            level = 0
            for i, (a, b) in enumerate(zip(path, self._path(theirs), strict=False)):
                if a is not b:
                    break
                level = i
            return -level

        return sorted(candidates, key=shared)

    def _ancestors_give(
        self,
        reclaimer: TaskState,
        task: TaskState,
        account: QueueAccount,
        left: dict[str, Resources],
    ) -> bool:
        """Volcano capacity's ancestor reclaim (`ancestorReclaimLevel` N): for each level 1..N,
        the victim's ancestor there, unless it is the root or also the reclaimer's ancestor at
        that level, must be above its deserved in a resource the victim requests (or deserve
        nothing it requests); then those ancestors give the victim up. A victim that requests
        nothing its own queue deserves is spared when the two queues share an ancestor within
        N levels (the root excepted) and the reclaimer's queue deserves nothing it requests."""
        mine = self.of_task(reclaimer)
        if mine is None:
            return False
        asked = task.resreq
        spared = not _relevant(asked, account.deserved) and not _relevant(
            reclaimer.resreq, mine.deserved
        )
        if spared and self._share_ancestor(mine, account):
            return False
        checked: list[QueueAccount] = []
        for level in range(1, self.reclaim_level + 1):
            theirs = self._ancestor_at(account, level)
            if theirs is None or theirs is self._ancestor_at(mine, level):
                continue
            allocated = left.get(theirs.name, theirs.allocated)
            if not quota.above_deserved(allocated, theirs.deserved, asked):
                return False
            checked.append(theirs)
        for theirs in checked:
            left[theirs.name] = left.get(theirs.name, theirs.allocated) - asked
        return True

    def _share_ancestor(self, a: QueueAccount, b: QueueAccount) -> bool:
        """`a` and `b` have an ancestor in common within `reclaim_level` levels (root aside)."""
        levels = range(1, self.reclaim_level + 1)
        ours = {id(x) for x in (self._ancestor_at(a, n) for n in levels) if x is not None}
        return any(
            id(x) in ours for x in (self._ancestor_at(b, n) for n in levels) if x is not None
        )

    # --- events and figures ---------------------------------------------------------------------
    def change(self, task: TaskState, delta: Resources) -> None:
        """The task's queue holds `delta` more."""
        job = task.job
        account = None if job is None else self._active.get(job.queue)
        if account is None:
            return
        account.allocated = account.allocated + delta
        account.update_share(self._if_nothing_deserved)
        if self.hierarchy:
            for each in account.ancestors():
                _ = each.share  # as at its last update_share: an ancestor's is not updated here
                each.allocated = each.allocated + delta

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
                inqueue=account.inqueue,
                capability=account.capability,
                real_capability=account.real_capability,
                share=account.share,
                weight=account.weight,
                overused=account.is_overused(),
                warning=self._warning(name),
                warning_reason=HIERARCHY_REASON if self.hierarchy else GUARANTEE_REASON,
            )
            session.report_queue(figures)

    def _warning(self, name: str) -> str:
        if self.hierarchy:
            return "; ".join(self.problems.get(name, ()))
        return "" if self.excess is None else self.excess.warning(name)
