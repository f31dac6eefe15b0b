"""What each queue of a session holds at its close, as Volcano writes it to the Queue's
`status.allocated` (`updateQueueStatus`, called from `closeSession`).

A queue's allocated is the sum of the requests of its jobs' tasks in OCCUPYING statuses
(Allocated, Binding, Bound, Running: Volcano's `AllocatedStatus`; Pipelined tasks wait for room
and do not count). When the session has a queue named `root`, each queue's sum is also added to
every queue up its `spec.parent` chain (no parent: `root`) to the root, as Volcano adds each
task's request up the chain; a chain that names a queue the session does not hold, or comes
back on itself, stops there (Volcano would fail on it). A job in `root` itself counts once in
`root` (Volcano adds it twice: once as the root's own, once as its own parent).

Owns: that sum and its roll-up. Must not: walk every job: the session's `QueueTotals` carries
each queue's sum as it opened (`QueueTotals.occupied`), and only the jobs the session changed
(`touched`) are read again, so a queue of thousands of lone pods' jobs costs nothing more.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from vscheduler.framework.state import JobState, QueueState, QueueTotals, occupied_by
from vscheduler.model.resources import Resources

ROOT: Final = "root"
"""Volcano's root queue: with it, a queue's allocated also counts in its ancestors'."""


def allocated_by_queue(
    queues: Mapping[str, QueueState],
    jobs: Mapping[str, JobState],
    totals: QueueTotals,
    touched: Iterable[str],
) -> dict[str, Resources]:
    """Every queue of `queues` (by name, in their order) -> what its tasks hold at the
    session's close: the totals of its open, with the jobs `touched` since counted again; and,
    with a `root` queue, what every queue below it holds."""
    own = {name: totals.occupied(name) for name in queues}
    for key in touched:
        job = jobs.get(key)
        counted = totals.occupied_of(key)
        if counted is not None and counted[0] in own:
            own[counted[0]] = own[counted[0]] - counted[1]
        if job is not None and job.facts.queue in own:
            own[job.facts.queue] = own[job.facts.queue] + occupied_by(job)
    if ROOT not in queues:
        return own
    out = dict(own)
    for name, held in own.items():
        if name != ROOT and not held.is_empty():
            for ancestor in _ancestors(name, queues):
                out[ancestor] = out[ancestor] + held
    return out


def _ancestors(name: str, queues: Mapping[str, QueueState]) -> Iterator[str]:
    """The queues up `name`'s `spec.parent` chain to `root` (no parent: `root`), stopping at a
    queue the session does not hold or one already passed."""
    seen = {name}
    queue = queues[name]
    while True:
        parent = queue.facts.parent or ROOT
        if parent in seen or parent not in queues:
            return
        yield parent
        if parent == ROOT:
            return
        seen.add(parent)
        queue = queues[parent]
