"""The strategy chain (design doc): narrow and order the eligible pods, in the configured order.

Owns the meaning of the non-selecting strategies:

- `offlineOnly` keeps only preemptable pods (`volcano.sh/preemptable`);
- `lowPriorityFirst` orders by pod priority, lowest first;
- `shortLifeTimeFirst` orders by `status.startTime`, youngest first (not started: last);
- `bigObjectFirst` orders by dominant share (the largest request/total ratio over the resources the
  pod requests, against the allocatable of the cluster's Ready nodes), biggest first;
- `moreReplicasFirst` orders by how many running replicas the pod's workload has among the
  candidates shuffle offered, most first.

Orderings compose lexicographically: the first configured is the primary key. Every order ends in
priority (lowest first), QoS (BestEffort, Burstable, Guaranteed), pod key and uid, so it is total.
Decides no victim: `lowNodeUtilization` (lnu.py) or the plugin does.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from vscheduler.plugin_api import QoSClass, Resources, TaskState
from vscheduler.plugins.rescheduling.config import OFFLINE_ONLY, ORDERINGS
from vscheduler.plugins.rescheduling.state import workload_of

QOS_RANK: Final = {QoSClass.BEST_EFFORT: 0, QoSClass.BURSTABLE: 1, QoSClass.GUARANTEED: 2}

SortKey = Callable[[TaskState], float]
Rank = tuple[tuple[float, ...], int, int, str, str]


def dominant_share(request: Resources, total: Resources) -> float:
    """The largest request/total ratio over the resources both name (0 for an empty request)."""
    shares = [request.get(r) / total.get(r) for r in request.names() if total.get(r) > 0]
    return max(shares, default=0.0)


def _started_key(task: TaskState) -> float:
    started = task.facts.started
    return math.inf if started is None else -started.timestamp()


def sort_keys(
    strategies: Sequence[str], total: Resources, offered: Iterable[TaskState]
) -> list[SortKey]:
    """The configured orderings' keys, primary first (ascending sorts them right)."""
    keys: list[SortKey] = []
    replicas = Counter(workload_of(t) for t in offered) if "moreReplicasFirst" in strategies else {}
    for name in strategies:
        if name == "lowPriorityFirst":
            keys.append(lambda t: float(t.priority))
        elif name == "shortLifeTimeFirst":
            keys.append(_started_key)
        elif name == "bigObjectFirst":
            keys.append(lambda t: -dominant_share(t.resreq, total))
        elif name == "moreReplicasFirst":
            keys.append(lambda t: -float(replicas.get(workload_of(t), 0)))
    return keys


def rank(task: TaskState, keys: Sequence[SortKey]) -> Rank:
    """The task's place: the configured keys, then priority, QoS, pod key, uid."""
    own = tuple(k(task) for k in keys)
    return own, task.priority, QOS_RANK.get(task.facts.qos, 0), task.key, task.uid


def apply(
    strategies: Sequence[str],
    tasks: Iterable[TaskState],
    *,
    total: Resources,
    offered: Iterable[TaskState],
) -> list[TaskState]:
    """`tasks` narrowed by the filters and sorted by the orderings of `strategies`."""
    kept = list(tasks)
    if OFFLINE_ONLY in strategies:
        kept = [t for t in kept if t.facts.preemptable]
    keys = sort_keys([s for s in strategies if s in ORDERINGS], total, offered)
    return sorted(kept, key=lambda t: rank(t, keys))


def chain_label(strategies: Sequence[str]) -> str:
    """The chain as it labels a victim: `offlineOnly+lowPriorityFirst`."""
    return "+".join(strategies)
