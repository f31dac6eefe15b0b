"""The nodeorder adapter: the weights, the per-session plugin and its builder (see the package
docstring for what it registers and how each score is computed).

Per session it keeps per-class caches of the scores that depend only on the nodes' facts
(nodeaffinity, imagelocality) and the task's request row; the resource scores are computed over
the nodes asked for; the batch scores (tainttoleration, podaffinity, podtopologyspread) over the
feasible nodes the session compares.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    CPU,
    MEMORY,
    AllocateEvent,
    ArgumentReader,
    BatchNodeOrder,
    BoolArray,
    DeallocateEvent,
    FloatArray,
    IntArray,
    NodeFacts,
    NodeMemo,
    NodeOrder as NodeOrderPoint,
    NodeOrderNode,
    PluginSession,
    SpreadConstraint,
    Taint,
    TaskState,
    TemplateTable,
)
from vscheduler.plugins.nodeorder.formulas import (
    GPU,
    MAX_NODE_SCORE,
    PREFER_NO_SCHEDULE,
    balanced_allocation,
    image_index,
    image_locality,
    intolerable_prefer_no_schedule,
    least_requested,
    most_requested,
    node_affinity_matches,
    normalized_image_name,
    reverse_normalised,
    term_matches,
    tolerates_all,
)
from vscheduler.plugins.nodeorder.topology import TopologyScores

NAME: Final = "nodeorder"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Weights:
    """Each score's weight."""

    least_requested: int = 1
    most_requested: int = 0
    balanced_resource: int = 1
    node_affinity: int = 2
    image_locality: int = 1
    taint_toleration: int = 3
    pod_affinity: int = 2
    pod_topology_spread: int = 2
    selector_spread: int = 0
    volume_binding: int = 1


ARGUMENTS: Final = (
    ("leastrequested.weight", "least_requested"),
    ("mostrequested.weight", "most_requested"),
    ("balancedresource.weight", "balanced_resource"),
    ("nodeaffinity.weight", "node_affinity"),
    ("imagelocality.weight", "image_locality"),
    ("tainttoleration.weight", "taint_toleration"),
    ("podaffinity.weight", "pod_affinity"),
    ("podtopologyspread.weight", "pod_topology_spread"),
    ("selectorspread.weight", "selector_spread"),
    ("volumebinding.weight", "volume_binding"),
)
"""Argument key -> Weights field."""


# --- the plugin ---------------------------------------------------------------------------------
class NodeOrder(NodeOrderPoint, NodeOrderNode, BatchNodeOrder, AllocateEvent, DeallocateEvent):
    """The per-session plugin."""

    def __init__(self, session: PluginSession, weights: Weights, views: NodeViews) -> None:
        ledger = session.ledger
        self._w = weights
        self._ledger = ledger
        self._views = views
        self._cpu_memory = [ledger.dim_index[CPU], ledger.dim_index[MEMORY]]
        self._gpu = ledger.dim_index.get(GPU)
        self._requests: dict[int, IntArray] = {}
        self._static: dict[int, FloatArray] = {}
        self._prefer_counts: dict[int, IntArray] = {}
        if self._cpu_memory != [0, 1]:
            msg = "the ledger's first two dims must be cpu and memory"
            raise AssertionError(msg)
        self._alloc_cm = views.alloc_cm
        self._cm_present = views.cm_present
        """Every node has cpu and memory: the two-resource formulas apply (the fast path)."""
        self._opinions: dict[int, bool] = {}
        self._inclusion: dict[tuple[int, bool, bool], BoolArray] = {}
        self._topology: TopologyScores | None = None
        if (weights.pod_affinity or weights.pod_topology_spread) and session.tasks_with_terms:
            self._topology = TopologyScores(
                session, weights.pod_affinity, weights.pod_topology_spread, self._included
            )

    def score_nodes(self, task: TaskState, idx: IntArray) -> FloatArray:
        """The weighted nodeOrder scores of the nodes `idx`."""
        w, ledger = self._w, self._ledger
        static = self._static_scores(task)
        if not (w.least_requested or w.most_requested or w.balanced_resource):
            return static[idx]  # a copy: idx is an index array
        req = self._request(task)
        gpu = self._gpu is not None and bool(req[self._gpu])
        if self._cm_present and not gpu:
            return static[idx] + self._two_resource_scores(req, idx)
        total = static[idx]
        requested = ledger.used[idx] + req
        allocatable = ledger.allocatable[idx]
        cm = self._cpu_memory
        if w.least_requested:
            total += w.least_requested * least_requested(requested[:, cm], allocatable[:, cm])
        if w.most_requested:
            total += w.most_requested * most_requested(requested[:, cm], allocatable[:, cm])
        if w.balanced_resource:
            cols = [*cm, self._gpu] if gpu and self._gpu is not None else cm
            score = balanced_allocation(requested[:, cols], allocatable[:, cols])
            total += w.balanced_resource * score
        return total

    def score_node(self, task: TaskState, i: int) -> float:
        """`score_nodes` of the one node `i`, in scalars on the two-resource path (the same
        float), else through `score_nodes`."""
        w = self._w
        static = self._static_scores(task)
        if not (w.least_requested or w.most_requested or w.balanced_resource):
            return float(static.item(i))
        req = self._request(task)
        if self._cm_present and not (self._gpu is not None and req.item(self._gpu)):
            return float(static.item(i)) + self._two_resource_score(req.item(0), req.item(1), i)
        return float(self.score_nodes(task, np.array((i,), dtype=np.int64)).item(0))

    def _two_resource_scores(self, req: IntArray, idx: IntArray) -> FloatArray:
        """least, most and balanced over cpu and memory when every node has both: the same
        formulas as the general path, with the per-resource bookkeeping folded away."""
        w = self._w
        alloc = self._alloc_cm[idx]
        requested = self._ledger.used[idx, :2] + req[:2]  # the ledger's first dims: cpu, memory
        total = np.zeros(len(idx), dtype=np.float64)
        if w.least_requested:
            free = alloc - requested
            per = np.where(free < 0, 0, free * MAX_NODE_SCORE // alloc)
            total += w.least_requested * (per.sum(axis=1) // 2)
        if w.most_requested:
            per = np.minimum(requested, alloc) * MAX_NODE_SCORE // alloc
            total += w.most_requested * (per.sum(axis=1) // 2)
        if w.balanced_resource:
            f = np.minimum(requested / alloc, 1.0)
            std = np.abs((f[:, 0] - f[:, 1]) / 2)
            total += w.balanced_resource * np.floor((1.0 - std) * MAX_NODE_SCORE)
        return total

    def _two_resource_score(self, cpu: int, memory: int, i: int) -> float:
        """`_two_resource_scores` of the one node `i`, in Python numbers: the same operations in
        the same order, so the same float (cpu and memory fit in float64 exactly: < 2**53)."""
        w, used, alloc = self._w, self._ledger.used, self._alloc_cm
        alloc_cpu, alloc_memory = alloc.item(i, 0), alloc.item(i, 1)
        want_cpu, want_memory = used.item(i, 0) + cpu, used.item(i, 1) + memory
        total = 0.0
        if w.least_requested:
            free_cpu, free_memory = alloc_cpu - want_cpu, alloc_memory - want_memory
            per_cpu = 0 if free_cpu < 0 else free_cpu * MAX_NODE_SCORE // alloc_cpu
            per_memory = 0 if free_memory < 0 else free_memory * MAX_NODE_SCORE // alloc_memory
            total += w.least_requested * ((per_cpu + per_memory) // 2)
        if w.most_requested:
            per_cpu = min(want_cpu, alloc_cpu) * MAX_NODE_SCORE // alloc_cpu
            per_memory = min(want_memory, alloc_memory) * MAX_NODE_SCORE // alloc_memory
            total += w.most_requested * ((per_cpu + per_memory) // 2)
        if w.balanced_resource:
            f_cpu = min(float(want_cpu) / float(alloc_cpu), 1.0)
            f_memory = min(float(want_memory) / float(alloc_memory), 1.0)
            std = abs((f_cpu - f_memory) / 2)
            total += w.balanced_resource * float(math.floor((1.0 - std) * MAX_NODE_SCORE))
        return total

    def batch_score_nodes(self, task: TaskState, idx: IntArray) -> FloatArray | None:
        """tainttoleration, podaffinity and podtopologyspread over the nodes `idx`; None when
        none of them has an opinion on the task's class."""
        taints = self._taint_scores(task, idx)
        topology = self._topology
        if topology is None or not self._topology_opinion(task):
            return taints
        scores = topology.scores(task, idx)
        return scores if taints is None else scores + taints

    def _topology_opinion(self, task: TaskState) -> bool:
        found = self._opinions.get(task.class_id)
        if found is None and self._topology is not None:
            found = self._opinions[task.class_id] = self._topology.has_opinion(task)
        return bool(found)

    def on_allocate(self, task: TaskState) -> None:
        """`task` now holds its node: it counts for podaffinity and podtopologyspread."""
        if self._topology is not None:
            self._topology.add(task)

    def on_deallocate(self, task: TaskState) -> None:
        """`task` no longer holds its node."""
        if self._topology is not None:
            self._topology.remove(task)

    def _taint_scores(self, task: TaskState, idx: IntArray) -> FloatArray | None:
        """tainttoleration over the nodes `idx`, or None when none has an intolerable
        PreferNoSchedule taint."""
        views = self._views
        if not self._w.taint_toleration or not views.any_prefer:
            return None
        counts = self._prefer_counts.get(task.class_id)
        if counts is None:
            template = task.facts.template_key()
            counts = views.prefer_counts.get(template)
            if counts is None:
                tolerations = task.facts.tolerations
                per_group = [intolerable_prefer_no_schedule(t, tolerations) for t in views.lists]
                counts = np.array(per_group, dtype=np.int64)[views.group]
                counts.flags.writeable = False  # shared by the sessions over these nodes
                views.prefer_counts.put(template, counts)
            self._prefer_counts[task.class_id] = counts
        score = reverse_normalised(counts[idx])
        if score is None:
            return None
        weighted: FloatArray = (self._w.taint_toleration * score).astype(np.float64)
        return weighted

    def _included(self, task: TaskState, c: SpreadConstraint) -> BoolArray:
        """The nodes a spread constraint's node inclusion policies keep for the task's class:
        matching its nodeSelector and required node affinity (Honor, the default), tolerating
        its NoSchedule/NoExecute taints (Honor; Ignore is the default)."""
        key = (task.class_id, c.honor_node_affinity, c.honor_node_taints)
        mask = self._inclusion.get(key)
        if mask is None:
            facts = task.facts
            mask = np.fromiter(
                (
                    (
                        not c.honor_node_affinity
                        or node_affinity_matches(facts.node_selector, facts.affinity.required, node)
                    )
                    and (not c.honor_node_taints or tolerates_all(facts.tolerations, node.taints))
                    for node in self._ledger.nodes
                ),
                dtype=np.bool_,
                count=len(self._ledger),
            )
            self._inclusion[key] = mask
        return mask

    def _request(self, task: TaskState) -> IntArray:
        req = self._requests.get(task.class_id)
        if req is None:
            req = self._requests[task.class_id] = self._ledger.vector(task.resreq)
        return req

    def _static_scores(self, task: TaskState) -> FloatArray:
        """nodeaffinity and imagelocality, weighted: they depend on the nodes' facts only."""
        scores = self._static.get(task.class_id)
        if scores is None:
            template = task.facts.template_key()
            scores = self._views.static.get(template)
            if scores is None:
                scores = np.zeros(len(self._ledger), dtype=np.float64)
                facts = task.facts
                if self._w.node_affinity and facts.affinity.preferred:
                    scores += self._w.node_affinity * self._affinity(task)
                if self._w.image_locality and facts.images:
                    scores += self._w.image_locality * self._image_locality(task)
                scores.flags.writeable = False  # shared by the sessions over these nodes
                self._views.static.put(template, scores)
            self._static[task.class_id] = scores
        return scores

    def _affinity(self, task: TaskState) -> IntArray:
        preferred = [p for p in task.facts.affinity.preferred if p.weight]
        return np.array(
            [
                sum(p.weight for p in preferred if term_matches(p.term, node.labels, node.name))
                for node in self._ledger.nodes
            ],
            dtype=np.int64,
        )

    def _image_locality(self, task: TaskState) -> IntArray:
        sums = np.zeros(len(self._ledger), dtype=np.int64)
        for name in task.facts.images:
            found = self._views.images.get(normalized_image_name(name))
            if found is not None:
                nodes, sizes = found
                spread = len(nodes) / len(self._ledger)
                sums[nodes] += (sizes * spread).astype(np.int64)
        return image_locality(sums, len(task.facts.images))


class Factory:
    """Lives as long as the policy."""

    name = NAME
    plugin = NodeOrder

    def __init__(self, weights: Weights) -> None:
        self.weights = weights
        self._views = NodeMemo(NodeViews)

    def open(self, session: PluginSession) -> NodeOrder:
        """A fresh plugin for `session` (what it derives from the nodes alone is kept while the
        nodes are the same)."""
        return NodeOrder(session, self.weights, self._views.get(session.ledger.nodes))


class NodeViews:
    """What nodeorder derives from the nodes alone: the image index, the nodes grouped by their
    PreferNoSchedule taints, allocatable cpu and memory, and per pod template the scores and
    taint counts that depend only on template and node facts (`NodeMemo`: kept across sessions
    while the nodes are the same objects)."""

    def __init__(self, nodes: tuple[NodeFacts, ...]) -> None:
        self.images = image_index(nodes)
        prefer = [tuple(t for t in n.taints if t.effect == PREFER_NO_SCHEDULE) for n in nodes]
        groups: dict[tuple[Taint, ...], int] = {}
        self.group: IntArray = np.array(
            [groups.setdefault(t, len(groups)) for t in prefer], dtype=np.int64
        )
        self.lists = tuple(groups)
        self.any_prefer = any(prefer)
        self.alloc_cm: IntArray = np.array(
            [(n.allocatable.get(CPU), n.allocatable.get(MEMORY)) for n in nodes], dtype=np.int64
        ).reshape(len(nodes), 2)
        self.alloc_cm.flags.writeable = False
        self.cm_present = bool((self.alloc_cm > 0).all())
        self.static: TemplateTable[FloatArray] = TemplateTable()
        self.prefer_counts: TemplateTable[IntArray] = TemplateTable()


def build(arguments: Mapping[str, object]) -> Factory:
    """Read the weights (Volcano's keys and defaults); every problem is reported at once."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    defaults = Weights()
    weights = {field: reader.int(key, getattr(defaults, field)) for key, field in ARGUMENTS}
    reader.finish()
    return Factory(Weights(**weights))
