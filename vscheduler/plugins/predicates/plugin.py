"""The predicates adapter: the checks wired into `filter_nodes`, `explain_node` and the event
handlers that keep host ports and pod placements current (see the package docstring for what it
registers).

Per session it computes, once, each node's static facts as arrays (ready, cordoned, taint group)
and, once per task class, the mask of nodes passing every check that depends only on labels and
taints. Each `filter_nodes` call then indexes that mask and adds the checks that change within a
session: the pod count, host ports, the proportional share, and (only in a session where some
pod has required inter-pod terms or hard spread constraints) inter-pod affinity and topology
spread. Those two look at other nodes' pods, so in such a session the plugin declares itself
not node-local and the session asks it about every node for every task; the answers for pods
without such terms are the cached static mask and two comparisons.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    AllocateEvent,
    ArgumentReader,
    BoolArray,
    DeallocateEvent,
    HostPort,
    IntArray,
    Needs,
    NodeFacts,
    NodeMemo,
    PluginSession,
    Predicate,
    PredicateNode,
    PredicateReason,
    PredicateResolvable,
    PrePredicate,
    SpreadConstraint,
    Status,
    TaskState,
    TaskStatus,
    TemplateTable,
    podindex,
    unresolvable,
    unschedulable,
)
from vscheduler.plugins.predicates import checks
from vscheduler.plugins.predicates.interpod import AFFINITY_MISMATCH, InterPodFilter
from vscheduler.plugins.predicates.proportional import Proportional, reason
from vscheduler.plugins.predicates.spread import SpreadFilter
from vscheduler.plugins.predicates.vectorised import LabelColumns, PortBook, TaintGroups
from vscheduler.plugins.predicates.volumes import VolumeBinding

NAME: Final = "predicates"
HOLDING_PORTS: Final = podindex.HOLDING
"""Statuses of tasks on a node whose host ports count as in use (Volcano's node task list)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """The arguments that change what the plugin checks."""

    node_affinity: bool = True
    node_ports: bool = True
    taint_toleration: bool = True
    pod_affinity: bool = True
    topology_spread: bool = True
    volume_binding: bool = True
    cache: bool = False
    proportional: bool = False
    proportional_resources: Mapping[str, tuple[float, float]] = dataclasses.field(
        default_factory=dict
    )
    """resource -> (cpu cores, memory GB) per unit, for the proportional check."""


class Predicates(
    PrePredicate,
    Predicate,
    PredicateNode,
    PredicateReason,
    PredicateResolvable,
    AllocateEvent,
    DeallocateEvent,
):
    """The per-session plugin."""

    def __init__(self, session: PluginSession, config: Config, views: NodeViews) -> None:
        ledger = session.ledger
        self._config = config
        self._ledger = ledger
        self._views = views
        self._labels = views.labels
        self._taints = views.taints
        self._static: dict[int, BoolArray] = {}
        self._ports = PortBook()
        self._placed: dict[str, tuple[int, tuple[HostPort, ...]]] = {}
        self._proportional = Proportional(
            ledger, config.proportional_resources if config.proportional else {}
        )
        self._requests: dict[int, IntArray] = {}
        self._index: podindex.PodIndex | None = None
        self._interpod: InterPodFilter | None = None
        self._spread: SpreadFilter | None = None
        self._inclusion: dict[tuple[int, bool, bool], BoolArray] = {}
        """Per class, from `views` (kept across sessions per template)."""
        self._volumes: VolumeBinding | None = None
        for task in session.tasks_with_host_ports:  # no index yet: only host ports to take
            if task.node_index >= 0 and task.status in HOLDING_PORTS:
                self.on_allocate(task)
        self._open_topology(session)
        self._volumes = self._open_volumes(session)
        self.node_local = self._node_local(session)
        """False when some check looks at other nodes' pods, or a pending pod has a claim
        waiting for its first consumer (placing a pod then holds nodes and volumes for others):
        the session then asks about every node for every task."""

    def _node_local(self, session: PluginSession) -> bool:
        if self._index is not None:
            return False
        volumes = self._volumes
        return volumes is None or not any(
            volumes.waits_for_a_node(t)
            for t in session.tasks.values()
            if t.status is TaskStatus.PENDING and t.facts.claims
        )

    def _open_volumes(self, session: PluginSession) -> VolumeBinding | None:
        """Volume binding, when on and the cluster has claims."""
        snapshot = session.snapshot
        if not self._config.volume_binding or not snapshot.claims:
            return None
        return VolumeBinding(
            self._ledger.nodes, snapshot.claims, snapshot.volumes, snapshot.storage_classes
        )

    # --- pre-predicate --------------------------------------------------------------------------
    def prefilter(self, task: TaskState) -> Status | None:
        """Why no node may take the pod whatever the node (its volume claims), or None."""
        if not self._config.volume_binding or not task.facts.claims:
            return None
        if self._volumes is None:  # claims named, none exists
            return VolumeBinding(self._ledger.nodes, {}, {}, {}).prefilter(task)
        return self._volumes.prefilter(task)

    def _open_topology(self, session: PluginSession) -> None:
        """The inter-pod and spread filters, if some pod of the session needs them."""
        config, tasks = self._config, session.tasks_with_terms
        interpod = config.pod_affinity and any(_needs_interpod(t) for t in tasks)
        spread = config.topology_spread and any(
            t.status is TaskStatus.PENDING and any(c.hard for c in t.facts.topology_spread)
            for t in tasks
        )
        if not (interpod or spread):
            return
        index = self._index = podindex.PodIndex(self._ledger.nodes, session.tasks.values())
        count = len(self._ledger)
        self._interpod = InterPodFilter(index, count) if interpod else None
        self._spread = SpreadFilter(index, count, self._kept_by) if spread else None

    # --- predicate ------------------------------------------------------------------------------
    def filter_nodes(self, task: TaskState, idx: IntArray) -> BoolArray:
        """Whether each node of `idx` passes every check."""
        ledger = self._ledger
        whole = len(idx) == len(ledger)  # every node, in order: no gathering needed
        ok = self._static_mask(task).copy() if whole else self._static_mask(task)[idx]
        if ledger.full_future:  # some node has no pod slot left (check 2)
            ok &= ledger.pods_free_future > 0 if whole else ledger.pods_free_future[idx] > 0
        ports = task.facts.host_ports
        if self._config.node_ports and ports:
            ok &= self._ports.free(idx, ports)
        if self._index is not None:
            for verdicts in self._topology_verdicts(task):
                ok &= verdicts if len(idx) == len(ledger) else verdicts[idx]
        if self._config.proportional:
            req = self._request(task)
            if self._proportional.applies(req):
                ok &= self._proportional.passes(req, idx)
        return self._with_volumes(task, idx, ok)

    def filter_node(self, task: TaskState, i: int) -> bool:
        """`filter_nodes` of the one node `i`: in scalars when only the class's checks and the
        pod slot apply (no host port, inter-pod or spread term, proportional rule or claim in
        play), else through `filter_nodes`."""
        config = self._config
        if (
            (config.node_ports and task.facts.host_ports)
            or self._index is not None
            or config.proportional
            or (self._volumes is not None and task.facts.claims)
        ):
            return bool(self.filter_nodes(task, np.array((i,), dtype=np.int64))[0])
        if not self._static_mask(task).item(i):
            return False
        ledger = self._ledger
        return not ledger.full_future or ledger.pods_free_future.item(i) > 0

    def _with_volumes(self, task: TaskState, idx: IntArray, ok: BoolArray) -> BoolArray:
        """`ok` narrowed to the nodes the pod's claims admit."""
        if self._volumes is None or not task.facts.claims:
            return ok
        mask = self._volumes.mask(task)
        if mask is not None:
            ok &= mask if len(idx) == len(self._ledger) else mask[idx]
        return ok

    def filter_nodes_resolvable(self, task: TaskState, idx: IntArray, simulated: bool) -> BoolArray:
        """Whether each node of `idx` passes every UnschedulableAndUnresolvable check: its
        failures, if any, are of checks evicting pods may resolve (2, 6, 7b, 7c and the skew of
        8), kube's and Volcano's Unschedulable. 7b, 7c and the skew of 8 count other pods, and
        only an action that tells this plugin of the pods it takes away (`simulated`) sees them
        resolved; otherwise they stay as they are, as in Volcano's preempt without
        `enableTopologyAwarePreemption` (its PreFilter state is not updated by evictions)."""
        ledger = self._ledger
        whole = len(idx) == len(ledger)
        ok = self._static_mask(task).copy() if whole else self._static_mask(task)[idx]
        if self._index is not None:
            verdict_of = self._unresolvable_verdicts if simulated else self._topology_verdicts
            for verdicts in verdict_of(task):
                ok &= verdicts if whole else verdicts[idx]
        if self._config.proportional:
            req = self._request(task)
            if self._proportional.applies(req):
                ok &= self._proportional.passes(req, idx)
        return self._with_volumes(task, idx, ok)

    def _unresolvable_verdicts(self, task: TaskState) -> list[BoolArray]:
        """The inter-pod and spread answers no eviction changes: required pod affinity, and a
        spread constraint's missing topology label."""
        found = []
        if self._interpod is not None:
            interpod = self._interpod.verdicts(task)
            if interpod is not None:
                found.append(interpod.affinity)
        if self._spread is not None:
            spread = self._spread.verdicts(task)
            if spread is not None:
                labelled = np.asarray(~spread.missing.any(axis=0), dtype=np.bool_)
                found.append(labelled)
        return found

    def _topology_verdicts(self, task: TaskState) -> list[BoolArray]:
        """The inter-pod and spread answers over every node, where they apply to `task`."""
        found = []
        if self._interpod is not None:
            interpod = self._interpod.verdicts(task)
            if interpod is not None:
                found.append(interpod.ok)
        if self._spread is not None:
            spread = self._spread.verdicts(task)
            if spread is not None:
                found.append(spread.ok)
        return found

    def _static_mask(self, task: TaskState) -> BoolArray:
        """Nodes passing the checks that depend only on the class and the node's facts."""
        mask = self._static.get(task.class_id)
        if mask is None:
            template = task.facts.template_key()
            mask = self._views.static.get(template)
            if mask is None:
                mask = self._views.static.put(template, self._static_of(task))
            self._static[task.class_id] = mask
        return mask

    def _static_of(self, task: TaskState) -> BoolArray:
        views = self._views
        mask = views.ready.copy()
        if not checks.tolerated(task.facts.tolerations, checks.UNSCHEDULABLE_TAINT):
            mask &= ~views.cordoned
        if self._config.node_affinity:
            mask &= self._included(task, affinity=True, taints=False)
        if self._config.taint_toleration:
            mask &= self._included(task, affinity=False, taints=True)
        mask.flags.writeable = False  # shared by the sessions over these nodes
        return mask

    def _kept_by(self, task: TaskState, c: SpreadConstraint) -> BoolArray:
        """The nodes a spread constraint's node inclusion policies keep for the task's class."""
        return self._included(task, affinity=c.honor_node_affinity, taints=c.honor_node_taints)

    def _included(self, task: TaskState, *, affinity: bool, taints: bool) -> BoolArray:
        """The nodes matching the task's nodeSelector and required node affinity (if `affinity`)
        and tolerating its NoSchedule/NoExecute taints (if `taints`), cached per class."""
        key = (task.class_id, affinity, taints)
        mask = self._inclusion.get(key)
        if mask is None:
            kept = (task.facts.template_key(), affinity, taints)
            mask = self._views.inclusion.get(kept)
            if mask is None:
                mask = self._views.inclusion.put(kept, self._inclusion_of(task, affinity, taints))
            self._inclusion[key] = mask
        return mask

    def _inclusion_of(self, task: TaskState, affinity: bool, taints: bool) -> BoolArray:
        facts = task.facts
        mask = np.ones(len(self._ledger), dtype=np.bool_)
        if affinity:
            mask &= self._labels.selector(facts.node_selector)
            mask &= self._labels.required(facts.affinity.required)
        if taints:
            mask &= self._taints.per_group(
                checks.first_untolerated(list_, facts.tolerations) is None
                for list_ in self._taints.lists
            )
        mask.flags.writeable = False  # shared by the sessions over these nodes
        return mask

    def _request(self, task: TaskState) -> IntArray:
        req = self._requests.get(task.class_id)
        if req is None:
            req = self._requests[task.class_id] = self._ledger.vector(task.resreq)
        return req

    def explain_node(self, task: TaskState, i: int) -> Status | None:
        """The first check `task` fails on node `i`, in Volcano's order, or None."""
        node = self._ledger.nodes[i]
        facts = task.facts
        if not node.ready:
            return unresolvable(checks.NOT_READY)
        ledger = self._ledger
        if ledger.pods_free_future[i] <= 0:
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
        if self._volumes is not None and facts.claims:
            why = self._volumes.reason(task, i)
            if why is not None:
                return unresolvable(why)
        return self._explain_dynamic(task, i)

    def _explain_dynamic(self, task: TaskState, i: int) -> Status | None:
        """Inter-pod affinity, topology spread and the proportional share, in that order."""
        interpod = self._interpod.verdicts(task) if self._interpod is not None else None
        why = interpod.reason(i) if interpod is not None else None
        if why is not None:
            # kube's InterPodAffinity codes, as Volcano >= 1.13 keeps them: a pod-affinity
            # mismatch is unresolvable, an anti-affinity one is resolved by evicting the pod
            return unresolvable(why) if why == AFFINITY_MISMATCH else unschedulable(why)
        spread = self._spread.verdicts(task) if self._spread is not None else None
        failed = spread.reason(i) if spread is not None else None
        if failed is not None:
            return unresolvable(failed[0]) if failed[1] else unschedulable(failed[0])
        resource = self._proportional.first_failing(self._request(task), i)
        if resource is not None:
            return unresolvable(reason(resource))
        return None

    # --- event handlers -------------------------------------------------------------------------
    def on_allocate(self, task: TaskState) -> None:
        """`task` now holds its node (allocated, pipelined, eviction undone): its host ports
        are taken, and it counts for inter-pod affinity and spread."""
        if self._index is not None:
            self._index.add(task)
        if self._volumes is not None:
            self._volumes.on_allocate(task)
        ports = task.facts.host_ports
        if not ports or task.node_index < 0:
            return
        self._release_ports(task)
        self._placed[task.uid] = (task.node_index, ports)
        self._ports.add(task.node_index, ports)

    def on_deallocate(self, task: TaskState) -> None:
        """`task` no longer holds its node (allocation undone, or evicted)."""
        if self._index is not None:
            self._index.remove(task)
        if self._volumes is not None:
            self._volumes.on_deallocate(task)
        self._release_ports(task)

    def _release_ports(self, task: TaskState) -> None:
        placed = self._placed.pop(task.uid, None)
        if placed is not None:
            self._ports.add(placed[0], placed[1], -1)


def _needs_interpod(task: TaskState) -> bool:
    """Whether `task` makes the inter-pod check necessary: it is pending with required terms,
    or it may be placed and carries required anti-affinity (which other pods must respect)."""
    affinity = task.facts.pod_affinity
    if task.status is TaskStatus.PENDING:
        return bool(affinity.required or affinity.anti_required)
    return task.status in podindex.HOLDING and bool(affinity.anti_required)


class Factory:
    """Lives as long as the policy."""

    name = NAME
    plugin = Predicates

    def __init__(self, config: Config, bind_timeout: float) -> None:
        self.config = config
        self.needs = Needs(volume_binding=config.volume_binding, volume_bind_timeout=bind_timeout)
        self._views = NodeMemo(NodeViews)

    def open(self, session: PluginSession) -> Predicates:
        """A fresh plugin for `session` (what it derives from the nodes alone is kept while the
        nodes are the same)."""
        return Predicates(session, self.config, self._views.get(session.ledger.nodes))


class NodeViews:
    """What the predicates derive from the nodes alone: readiness, cordons, label columns, taint
    groups, and per pod template the masks of the checks that depend only on template and node
    facts (`NodeMemo`: kept across sessions while the nodes are the same objects)."""

    def __init__(self, nodes: tuple[NodeFacts, ...]) -> None:
        self.ready: BoolArray = np.array([n.ready for n in nodes], dtype=np.bool_)
        self.cordoned: BoolArray = np.array([n.unschedulable for n in nodes], dtype=np.bool_)
        self.labels = LabelColumns([n.labels for n in nodes], [n.name for n in nodes])
        self.taints = TaintGroups([n.taints for n in nodes])
        self.static: TemplateTable[BoolArray] = TemplateTable()
        self.inclusion: TemplateTable[BoolArray] = TemplateTable()


ACCEPTED_FLAGS: Final = (
    ("predicate.NodeVolumeLimitsEnable", True),
    ("predicate.VolumeZoneEnable", True),
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
    ("dynamicresources.filterTimeoutSeconds", 10),
)
BIND_TIMEOUT: Final = "volumebinding.bindTimeoutSeconds"
"""Seconds a bind waits for its pod's volumes to be bound (Volcano's key and default, 600: kube's
VolumeBindingArgs); the effects read it through `Needs.volume_bind_timeout`."""
DEFAULT_BIND_TIMEOUT: Final = 600
RESOURCES: Final = "predicate.resources"


def build(arguments: Mapping[str, object]) -> Factory:
    """Read Volcano's predicates arguments (every problem reported at once)."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    config = Config(
        node_affinity=reader.bool("predicate.NodeAffinityEnable", True),
        node_ports=reader.bool("predicate.NodePortsEnable", True),
        taint_toleration=reader.bool("predicate.TaintTolerationEnable", True),
        pod_affinity=reader.bool("predicate.PodAffinityEnable", True),
        topology_spread=reader.bool("predicate.PodTopologySpreadEnable", True),
        volume_binding=reader.bool("predicate.VolumeBindingEnable", True),
        cache=reader.bool("predicate.CacheEnable", False),
        proportional=reader.bool("predicate.ProportionalEnable", False),
        proportional_resources=_proportional_resources(reader),
    )
    for key, flag in ACCEPTED_FLAGS:
        reader.bool(key, flag)
    for key, number in ACCEPTED_INTS:
        reader.int(key, number)
    bind_timeout = reader.int(BIND_TIMEOUT, DEFAULT_BIND_TIMEOUT, minimum=0)
    reader.raw("volumebinding.shape")
    reader.finish()
    return Factory(config, float(bind_timeout))


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
