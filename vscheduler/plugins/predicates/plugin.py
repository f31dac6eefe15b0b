"""The predicates adapter: the checks wired into `filter_nodes`, `explain_node` and the event
handlers that keep host ports current (see the package docstring for what it registers).

Per session it computes, once, each node's static facts as arrays (ready, cordoned, taint group)
and, once per task class, the mask of nodes passing every check that depends only on labels and
taints. Each `filter_nodes` call then indexes that mask and adds the two checks that change
within a session: the pod count and host ports.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    ArgumentReader,
    BoolArray,
    HostPort,
    IntArray,
    Session,
    Status,
    TaskState,
    TaskStatus,
    task_status,
    unresolvable,
    unschedulable,
)
from vscheduler.plugins.predicates import checks
from vscheduler.plugins.predicates.vectorised import LabelColumns, PortBook, TaintGroups

NAME: Final = "predicates"
HOLDING_PORTS: Final = task_status.OCCUPYING | {TaskStatus.PIPELINED, TaskStatus.RELEASING}
"""Statuses of tasks on a node whose host ports count as in use (Volcano's node task list)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """The arguments that change what the plugin checks."""

    node_affinity: bool = True
    node_ports: bool = True
    taint_toleration: bool = True
    cache: bool = False
    proportional: bool = False
    proportional_resources: Mapping[str, tuple[float, float]] = dataclasses.field(
        default_factory=dict
    )
    """resource -> (cpu, memory) per unit, for the proportional check (not yet applied)."""


class Predicates:
    """The per-session plugin."""

    def __init__(self, session: Session, config: Config) -> None:
        ledger = session.ledger
        nodes = ledger.nodes
        self._config = config
        self._ledger = ledger
        self._ready: BoolArray = np.array([n.ready for n in nodes], dtype=np.bool_)
        self._cordoned: BoolArray = np.array([n.unschedulable for n in nodes], dtype=np.bool_)
        self._labels = LabelColumns([n.labels for n in nodes], ledger.names)
        self._taints = TaintGroups([n.taints for n in nodes])
        self._static: dict[int, BoolArray] = {}
        self._ports = PortBook()
        self._placed: dict[str, tuple[int, tuple[HostPort, ...]]] = {}
        for task in session.tasks.values():
            if task.node_index >= 0 and task.status in HOLDING_PORTS:
                self.on_allocate(task)

    # --- predicate ------------------------------------------------------------------------------
    def filter_nodes(self, task: TaskState, idx: IntArray) -> BoolArray:
        """Whether each node of `idx` passes every check."""
        ledger = self._ledger
        ok = self._static_mask(task)[idx]
        ok &= ledger.pods_used[idx] < ledger.pods_max[idx]
        ports = task.facts.host_ports
        if self._config.node_ports and ports:
            ok &= self._ports.free(idx, ports)
        return ok

    def _static_mask(self, task: TaskState) -> BoolArray:
        """Nodes passing the checks that depend only on the class and the node's facts."""
        mask = self._static.get(task.class_id)
        if mask is None:
            facts = task.facts
            tolerations = facts.tolerations
            mask = self._ready.copy()
            if not checks.tolerated(tolerations, checks.UNSCHEDULABLE_TAINT):
                mask &= ~self._cordoned
            if self._config.node_affinity:
                mask &= self._labels.selector(facts.node_selector)
                mask &= self._labels.required(facts.affinity.required)
            if self._config.taint_toleration:
                mask &= self._taints.per_group(
                    checks.first_untolerated(taints, tolerations) is None
                    for taints in self._taints.lists
                )
            self._static[task.class_id] = mask
        return mask

    def explain_node(self, task: TaskState, i: int) -> Status | None:
        """The first check `task` fails on node `i`, in Volcano's order, or None."""
        node = self._ledger.nodes[i]
        facts = task.facts
        if not node.ready:
            return unresolvable(checks.NOT_READY)
        if self._ledger.pods_used[i] >= self._ledger.pods_max[i]:
            return unschedulable(checks.POD_NUMBER_EXCEEDED)
        if node.unschedulable and not checks.tolerated(
            facts.tolerations, checks.UNSCHEDULABLE_TAINT
        ):
            return unresolvable(checks.UNSCHEDULABLE)
        if self._config.node_affinity and not (
            checks.selector_matches(facts.node_selector, node.labels)
            and checks.required_matches(facts.affinity.required, node.labels, node.name)
        ):
            return unresolvable(checks.AFFINITY_MISMATCH)
        if self._config.taint_toleration:
            taint = checks.first_untolerated(node.taints, facts.tolerations)
            if taint is not None:
                return unresolvable(checks.untolerated_taint(taint))
        if self._config.node_ports and not self._ports.free_on(i, facts.host_ports):
            return unschedulable(checks.PORTS_IN_USE)
        return None

    # --- event handlers -------------------------------------------------------------------------
    def on_allocate(self, task: TaskState) -> None:
        """`task` now holds its host ports on its node (allocated, pipelined, eviction undone)."""
        ports = task.facts.host_ports
        if not ports or task.node_index < 0:
            return
        self.on_deallocate(task)
        self._placed[task.uid] = (task.node_index, ports)
        self._ports.add(task.node_index, ports)

    def on_deallocate(self, task: TaskState) -> None:
        """`task` no longer holds host ports (allocation undone, or evicted)."""
        placed = self._placed.pop(task.uid, None)
        if placed is not None:
            self._ports.add(placed[0], placed[1], -1)


class Factory:
    """Lives as long as the policy."""

    name = NAME

    def __init__(self, config: Config) -> None:
        self.config = config

    def open(self, session: Session) -> Predicates:
        """A fresh plugin for `session`."""
        return Predicates(session, self.config)


ACCEPTED_FLAGS: Final = (
    ("predicate.PodAffinityEnable", True),
    ("predicate.NodeVolumeLimitsEnable", True),
    ("predicate.VolumeZoneEnable", True),
    ("predicate.PodTopologySpreadEnable", True),
    ("predicate.VolumeBindingEnable", True),
    ("predicate.DynamicResourceAllocationEnable", False),
    ("predicate.GPUSharingEnable", False),
    ("predicate.GPUNumberEnable", False),
    ("predicate.MemoryPressureEnable", False),
    ("predicate.DiskPressureEnable", False),
    ("predicate.PIDPressureEnable", False),
)
"""Flags Volcano documents for checks vscheduler does not have: read, checked, no effect."""
ACCEPTED_INTS: Final = (
    ("volumebinding.weight", 1),
    ("volumebinding.bindTimeoutSeconds", 30),
    ("dynamicresources.filterTimeoutSeconds", 10),
)
RESOURCES: Final = "predicate.resources"


def build(arguments: Mapping[str, object]) -> Factory:
    """Read Volcano's predicates arguments (every problem reported at once)."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    config = Config(
        node_affinity=reader.bool("predicate.NodeAffinityEnable", True),
        node_ports=reader.bool("predicate.NodePortsEnable", True),
        taint_toleration=reader.bool("predicate.TaintTolerationEnable", True),
        cache=reader.bool("predicate.CacheEnable", False),
        proportional=reader.bool("predicate.ProportionalEnable", False),
        proportional_resources=_proportional_resources(reader),
    )
    for key, flag in ACCEPTED_FLAGS:
        reader.bool(key, flag)
    for key, number in ACCEPTED_INTS:
        reader.int(key, number)
    reader.raw("volumebinding.shape")
    reader.finish()
    return Factory(config)


def _proportional_resources(reader: ArgumentReader) -> dict[str, tuple[float, float]]:
    """`predicate.resources` names and their `.cpu` / `.memory` rates (a negative rate is 1, as
    in Volcano)."""
    rates: dict[str, tuple[float, float]] = {}
    for name in (n.strip() for n in reader.str(RESOURCES, "").split(",")):
        if name:
            cpu = reader.float(f"{RESOURCES}.{name}.cpu", 1.0)
            memory = reader.float(f"{RESOURCES}.{name}.memory", 1.0)
            rates[name] = (cpu if cpu >= 0 else 1.0, memory if memory >= 0 else 1.0)
    return rates
