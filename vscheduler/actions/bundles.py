"""Victim bundles: the unit gangpreempt and gangreclaim evict, and the order they are taken in.

Volcano's `actions/utils/bundle.go`. A victim job's candidate tasks in the domain split into at
most two bundles, each evicted all together:

- the *safe* bundle: tasks the job can lose and stay gang-ready: its surplus over minMember,
  taken lowest pod priority first (then uid), while each task's role stays at its
  minTaskMember (checked only when minMember is at least the roles' sum, the gang plugin's
  rule); every candidate of a job already below minMember is safe (it cannot break more);
- the *whole* bundle: the rest, whose eviction breaks the gang.

Bundles are sorted safe before whole, then by the action's victim order (`Order`), then by
efficiency, "local relief per unit of global disruption": over the resources the asking job
requests, the sum of min(freed here, needed) / needed, divided by the sum of (what the bundle's
eviction costs the cluster) / needed; a safe bundle costs nothing (infinitely efficient), a
whole one costs every task of its job. Last ties go to the job uid, the first task's uid, the
smaller bundle. Volcano's sub-job (partition) surplus is not modelled: vscheduler has no
sub-jobs. The victim sets worth a trial are the sorted bundles taken one by one, each time the
room plus what they free covers the need (`attempts`).

Must not: choose which tasks are candidates or ask the plugins (`gangevict` does).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence

from vscheduler.framework.state import JobState, TaskState
from vscheduler.model import status as st
from vscheduler.model.resources import EMPTY, Resources
from vscheduler.model.status import TaskStatus


class Kind(enum.IntEnum):
    """A bundle's kind; safe bundles sort first."""

    SAFE = 0
    WHOLE = 1


@dataclasses.dataclass(frozen=True, slots=True)
class Bundle:
    """One victim job's tasks in the domain that are evicted together."""

    kind: Kind
    job: JobState
    tasks: tuple[TaskState, ...]

    @property
    def local(self) -> Resources:
        """What evicting the bundle frees in the domain."""
        return _sum(self.tasks)

    @property
    def cost(self) -> Resources:
        """What evicting the bundle costs the cluster: nothing for a safe bundle, every task of
        the job for a whole one (the gang breaks)."""
        return EMPTY if self.kind is Kind.SAFE else _sum(self.job.tasks.values())


Order = Callable[[JobState, JobState], int]
"""The action's victim order between two bundles' jobs: negative when the first goes first, 0
when it has no say (then efficiency decides)."""


def split(job: JobState, candidates: Iterable[TaskState]) -> list[Bundle]:
    """The job's safe and whole bundles (either may be missing) of `candidates`."""
    tasks = sorted(candidates, key=lambda t: (t.priority, t.uid))
    if not tasks:
        return []
    surplus = job.ready_num() - job.min_member
    if surplus < 0:
        return [Bundle(Kind.SAFE, job, tuple(tasks))]
    roles = _role_surplus(job)
    safe: list[TaskState] = []
    whole: list[TaskState] = []
    for task in tasks:
        role = task.facts.task_role
        if surplus > 0 and roles.get(role, 1) > 0:
            safe.append(task)
            surplus -= 1
            if role in roles:
                roles[role] -= 1
        else:
            whole.append(task)
    return [
        Bundle(kind, job, tuple(part))
        for kind, part in ((Kind.SAFE, safe), (Kind.WHOLE, whole))
        if part
    ]


def _role_surplus(job: JobState) -> dict[str, int]:
    """Per role with a minTaskMember: how many tasks it can lose (placed or finished tasks,
    and pending ones requesting nothing, less its minimum); empty when minMember is below the
    roles' sum (the gang plugin then checks no role)."""
    wanted = job.facts.min_task_member
    if not wanted or job.min_member < sum(wanted.values()):
        return {}
    ready: Counter[str] = Counter()
    for task in job.tasks.values():
        if task.status in st.READY_FOR_GANG or (
            task.status is TaskStatus.PENDING and task.facts.best_effort
        ):
            ready[task.facts.task_role] += 1
    return {role: ready[role] - minimum for role, minimum in wanted.items()}


def keep_allowed(bundles: Sequence[Bundle], allowed: set[str]) -> list[Bundle]:
    """The bundles after the plugins' answer (task uids): a whole bundle stays only if every
    task of it is allowed; a safe bundle shrinks to its allowed tasks."""
    kept: list[Bundle] = []
    for bundle in bundles:
        tasks = tuple(t for t in bundle.tasks if t.uid in allowed)
        if bundle.kind is Kind.WHOLE:
            if len(tasks) == len(bundle.tasks):
                kept.append(bundle)
        elif tasks:
            kept.append(dataclasses.replace(bundle, tasks=tasks))
    return kept


def ordered(bundles: Iterable[Bundle], need: Resources, order: Order) -> list[Bundle]:
    """`bundles` sorted: safe first, then `order`, then efficiency against `need`, then uids."""
    bundles = list(bundles)
    efficiency = {id(b): _efficiency(b, need) for b in bundles}

    def compare(a: Bundle, b: Bundle) -> int:
        if a.kind != b.kind:
            return -1 if a.kind < b.kind else 1
        if a.job is not b.job:
            by_order = order(a.job, b.job)
            if by_order:
                return by_order
        ea, eb = efficiency[id(a)], efficiency[id(b)]
        if ea != eb:
            return -1 if ea > eb else 1
        ka, kb = _tie_key(a), _tie_key(b)
        return (ka > kb) - (ka < kb)

    return sorted(bundles, key=functools.cmp_to_key(compare))


def attempts(
    bundles: Iterable[Bundle], need: Resources, room: Resources, *, allow_whole: bool
) -> Iterator[tuple[TaskState, ...]]:
    """The victim sets worth a trial, in turn: `bundles` (sorted) taken one by one, a whole
    bundle only when `allow_whole`, each time `room` plus what the taken bundles free covers
    `need` (Volcano's actions' loop; its `SelectBundles`, which they do not call, returns the
    first prefix that covers, or all bundles when none does)."""
    chosen: list[TaskState] = []
    freed = EMPTY
    for bundle in bundles:
        if bundle.kind is Kind.WHOLE and not allow_whole:
            continue
        chosen.extend(bundle.tasks)
        freed = freed + bundle.local
        if need.fits_in(room + freed):
            yield tuple(chosen)


def flatten(bundles: Iterable[Bundle]) -> list[TaskState]:
    """Every task of `bundles`, in bundle order."""
    return [t for b in bundles for t in b.tasks]


def _efficiency(bundle: Bundle, need: Resources) -> float:
    local, cost = bundle.local, bundle.cost
    gain = spent = 0.0
    for name, amount in need.items():
        if amount <= 0:
            continue
        gain += min(local.get(name), amount) / amount
        spent += cost.get(name) / amount
    return math.inf if spent == 0 else gain / spent


def _tie_key(bundle: Bundle) -> tuple[str, str, int]:
    return (bundle.job.uid, bundle.tasks[0].uid if bundle.tasks else "", len(bundle.tasks))


def _sum(tasks: Iterable[TaskState]) -> Resources:
    total = EMPTY
    for task in tasks:
        total = total + task.resreq
    return total
