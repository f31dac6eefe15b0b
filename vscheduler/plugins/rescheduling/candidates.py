"""Which running pods rescheduling may propose at all: the selectors and the safety exclusions.

Owns the rules that take a pod out before any strategy looks at it: `queueSelector` and
`labelSelector` (the design's resource filters), and never a pod nothing would recreate (no
controlling owner), a DaemonSet's pod (it would come back on the same node), a mirror (static)
pod, a system-critical pod (priority >= 2000000000), a pod not on a node, or a pod of a workload
still cooling down after one of its pods was moved. Decides no order and no victim.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from vscheduler.plugin_api import TaskState
from vscheduler.plugins.rescheduling.config import Config
from vscheduler.plugins.rescheduling.state import Memory, workload_of

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000


def why_not(task: TaskState, config: Config, memory: Memory, now: dt.datetime) -> str | None:
    """Why `task` may not be proposed, or None when it may."""
    facts = task.facts
    if config.queues and (task.job is None or task.job.queue not in config.queues):
        return "not in a selected queue"
    if any(facts.labels.get(k) != v for k, v in config.labels.items()):
        return "labels do not match labelSelector"
    if not facts.owner:
        return "no controlling owner would recreate it"
    if facts.owner.startswith("DaemonSet/"):
        return "a DaemonSet pod"
    if MIRROR_ANNOTATION in facts.annotations:
        return "a mirror pod"
    if facts.priority >= SYSTEM_CRITICAL_PRIORITY:
        return "system-critical"
    if task.node_index < 0:
        return "not on a node"
    if memory.cooling(workload_of(task), now):
        return "its workload is cooling down"
    return None


def eligible(
    candidates: Iterable[TaskState], config: Config, memory: Memory, now: dt.datetime
) -> list[TaskState]:
    """The candidates that may be proposed, in the order given."""
    return [t for t in candidates if why_not(t, config, memory, now) is None]
