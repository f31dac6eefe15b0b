"""lowNodeUtilization (seed 000 §5): move pods off nodes that stay hot while cold nodes have room.

Owns node classification and victim choice. A node counts only when it is schedulable, Ready and
has fresh usage (present, not `stale`, measured at most 5 minutes ago, with the `metricsPeriod`
value for both cpu and memory); stale data never moves a pod. Per resource (cpu and memory from
the measured percent, pods as the pods on the node over its pod capacity):

- low: every resource below `thresholds`;
- high: some resource above `targetThresholds`, where for cpu and memory the current collection and
  the previous `consecutiveCollections - 1` (the usage history) must all be above it.

Nothing is chosen when no node is low, every node is low, or no node is high. Otherwise the room
of the low nodes (target percent of allocatable minus use, summed) is shared out: high nodes by
cpu% + memory% (highest first, then name), their pods in the chain's order; each victim takes its
request (and one pod) off its node and off the room; a node keeps giving while it is still over
target on a resource that made it high and the room stays positive on every resource. A pod whose
request lowers none of those resources is passed over (moving it would not cool the node).
Pure: reads the session, changes nothing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import (
    NodeFacts,
    PluginSession,
    TaskState,
    TaskStatus,
    task_status,
)
from vscheduler.plugins.rescheduling.config import THRESHOLD_RESOURCES, Config, LnuParams

FRESH_FOR: Final = dt.timedelta(minutes=5)
MEASURED: Final = ("cpu", "memory")
ON_NODE: Final = task_status.OCCUPYING | {TaskStatus.RELEASING}


@dataclasses.dataclass(slots=True)
class NodeLoad:
    """One node's load: allocatable and estimated use per resource (cpu millicores, memory
    bytes, pods), the percents measured, and the resources that make it high."""

    index: int
    name: str
    allocatable: dict[str, float]
    used: dict[str, float]
    measured: dict[str, float]
    hot: tuple[str, ...] = ()

    def percent(self, resource: str) -> float:
        """The estimated use of `resource` in percent of allocatable (0 when it has none)."""
        total = self.allocatable[resource]
        return self.used[resource] * 100.0 / total if total > 0 else 0.0


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """The victims with their reasons, and a note saying how the strategy ended."""

    picks: tuple[tuple[TaskState, str], ...]
    note: str


def fresh_percents(
    node: NodeFacts, session: PluginSession, config: Config
) -> tuple[dict[str, float], tuple[Mapping[str, Mapping[str, float]], ...]] | None:
    """The node's measured cpu and memory percents and its usage history, or None when the node
    must be left alone (cordoned, not Ready, usage missing, stale, old or without the period)."""
    usage = session.snapshot.usage.get(node.name)
    if node.unschedulable or not node.ready or usage is None or usage.stale:
        return None
    if session.now - usage.metrics_time > FRESH_FOR:
        return None
    out: dict[str, float] = {}
    for resource in MEASURED:
        value = usage.usage.get(resource, {}).get(config.metrics_period)
        if value is None:
            return None
        out[resource] = value
    return out, usage.history


def _persistent(
    history: Sequence[Mapping[str, Mapping[str, float]]],
    resource: str,
    target: float,
    config: Config,
) -> bool:
    """The last `consecutiveCollections - 1` earlier collections were all above `target`."""
    need = config.consecutive - 1
    if len(history) < need:
        return False
    for earlier in history[len(history) - need :]:
        value = earlier.get(resource, {}).get(config.metrics_period)
        if value is None or value <= target:
            return False
    return True


def load_of(index: int, session: PluginSession, config: Config, pods: int) -> NodeLoad | None:
    """Node `index`'s load, or None when it takes no part."""
    node = session.ledger.nodes[index]
    found = fresh_percents(node, session, config)
    if found is None:
        return None
    percents, history = found
    allocatable = {
        "cpu": float(node.allocatable.milli_cpu),
        "memory": float(node.allocatable.memory),
        "pods": float(node.max_pods),
    }
    used = {r: percents[r] * allocatable[r] / 100.0 for r in MEASURED}
    used["pods"] = float(pods)
    load = NodeLoad(index, node.name, allocatable, used, {})
    load.measured = {r: load.percent(r) for r in THRESHOLD_RESOURCES}
    targets = config.lnu.targets
    load.hot = tuple(
        r
        for r in THRESHOLD_RESOURCES
        if load.measured[r] > targets[r]
        and (r == "pods" or _persistent(history, r, targets[r], config))
    )
    return load


def pods_per_node(session: PluginSession) -> dict[int, int]:
    """How many pods hold a place on each node (occupying or still being released)."""
    counts: dict[int, int] = defaultdict(int)
    for task in session.tasks.values():
        if task.node_index >= 0 and task.status in ON_NODE:
            counts[task.node_index] += 1
    return counts


def is_low(load: NodeLoad, params: LnuParams) -> bool:
    """Every resource is below its threshold."""
    return all(load.percent(r) < params.thresholds[r] for r in THRESHOLD_RESOURCES)


def select(session: PluginSession, config: Config, ordered: Sequence[TaskState]) -> Outcome:
    """The victims, taken from `ordered` (the chain's order), and how the strategy ended."""
    params = config.lnu
    pods = pods_per_node(session)
    loads = [
        load
        for i in range(len(session.ledger))
        if (load := load_of(i, session, config, pods.get(i, 0))) is not None
    ]
    low = [load for load in loads if is_low(load, params)]
    high = [load for load in loads if load.hot and not is_low(load, params)]
    if not low:
        return Outcome((), "no node is below thresholds")
    if len(low) == len(loads):
        return Outcome((), "every node is below thresholds")
    if not high:
        return Outcome((), "no node stays above targetThresholds")
    room = {
        r: sum(params.targets[r] * load.allocatable[r] / 100.0 - load.used[r] for load in low)
        for r in THRESHOLD_RESOURCES
    }
    high.sort(key=lambda load: (-(load.measured["cpu"] + load.measured["memory"]), load.name))
    on_node: dict[int, list[TaskState]] = defaultdict(list)
    for task in ordered:
        on_node[task.node_index].append(task)
    picks: list[tuple[TaskState, str]] = []
    for load in high:
        reason = over_target(load, params)
        for task in on_node.get(load.index, ()):
            if not _keeps_giving(load, room, params):
                break
            if _cools(load, task):
                _take(load, room, task)
                picks.append((task, reason))
    return Outcome(tuple(picks), f"{len(picks)} pods from {len(high)} hot nodes")


def over_target(load: NodeLoad, params: LnuParams) -> str:
    """`node n1 over target (cpu 92% > 80%)`: the measured resources that made it high."""
    parts = ", ".join(
        f"{r} {_pct(load.measured[r])}% > {_pct(params.targets[r])}%" for r in load.hot
    )
    return f"node {load.name} over target ({parts})"


def _pct(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _keeps_giving(load: NodeLoad, room: Mapping[str, float], params: LnuParams) -> bool:
    still_hot = any(load.percent(r) > params.targets[r] for r in load.hot)
    return still_hot and all(left > 0 for left in room.values())


def _cools(load: NodeLoad, task: TaskState) -> bool:
    """Whether moving `task` lowers a resource the node is hot on."""
    return any(_amount(task, r) > 0 for r in load.hot)


def _amount(task: TaskState, resource: str) -> float:
    return 1.0 if resource == "pods" else float(task.resreq.get(resource))


def _take(load: NodeLoad, room: dict[str, float], task: TaskState) -> None:
    for resource in THRESHOLD_RESOURCES:
        amount = _amount(task, resource)
        load.used[resource] -= amount
        room[resource] -= amount
