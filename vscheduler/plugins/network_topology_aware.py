"""network-topology-aware: Volcano's choice among HyperNodes, and node scores that keep a job's
pods close in the network (`pkg/scheduler/plugins/network-topology-aware`).

Which HyperNodes a job with a `spec.networkTopology` may be placed in (Volcano's
hyperNodeGradient point, served by this plugin there) is allocate's own here
(`framework.topology.gradient`): a hard constraint holds with or without this plugin. The
plugin serves:

- `score_hypernodes` (hyperNodeOrder; Volcano's `HyperNodeOrderFn`): each candidate HyperNode's
  binpack score for the job, `(used + request) / allocatable` per weighted resource (cpu,
  memory, the `hypernode.binpack.resources`), averaged by weight, where `used` is what the
  HyperNode's nodes hold and `request` what every pod of the job asks (running ones too, as
  Volcano sums them); 0 when the job would overflow a resource there. When several HyperNodes
  share the best score, each of those adds the fraction of the job's pods already on its nodes.
  Scaled by 100 and `weight`. Allocate tries the HyperNodes of a tier best first.
- `batch_score_nodes` (batchNodeOrder), only while the cluster has HyperNodes (without any it
  has no opinion, and costs nothing): for a pod of a job with a network topology, Volcano's
  `networkTopologyAwareScore` of each node: 1 when the node's HyperNode (the lowest tier's that
  holds it) is the one the job's placed pods share, else `(top - t) / (top - lowest)` for the
  tier `t` of the lowest HyperNode holding both (the top being the cluster's top tier), 0 for
  a node in no HyperNode of the lowest tier or a job with nothing placed yet; nodes tied at the
  best add the fraction of the job's pods on their HyperNode. For any other pod, with
  `hypernode.binpack.normal-pod.enable` (the default), Volcano's HyperNode-level binpacking:
  over each tier from the lowest to the cluster's top, the binpack score of the node's
  HyperNode of that tier (1 where it is in none), weighted by `fading ^ (tier - 1)`, averaged.
  Scaled by 100 and `weight`.
- `on_allocate` / `on_deallocate`: what each HyperNode holds, and the HyperNode each job's
  placed pods share, kept as pods are placed and taken back (Volcano's event handlers).

Arguments (Volcano's names and defaults): `weight` (1), `hypernode.binpack.cpu` (1),
`hypernode.binpack.memory` (1), `hypernode.binpack.resources` ("", comma-separated names) and
`hypernode.binpack.resources.<name>` (1), `hypernode.binpack.normal-pod.enable` (true),
`hypernode.binpack.normal-pod.fading` (0.8), `hypernode.gradient.evict.max-hypernodes` (8:
accepted; gangpreempt and gangreclaim search no HyperNode domains here). A negative weight or
fading means its default, as in Volcano.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    CLUSTER_TOP,
    CPU,
    MEMORY,
    AllocateEvent,
    ArgumentReader,
    BatchNodeOrder,
    DeallocateEvent,
    FloatArray,
    HyperNodeOrder,
    IntArray,
    JobState,
    PluginSession,
    SessionTopology,
    TaskState,
)

NAME: Final = "network-topology-aware"
MAX_NODE_SCORE: Final = 100
RESOURCES: Final = "hypernode.binpack.resources"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """The plugin's arguments."""

    weight: int = 1
    resources: Mapping[str, int] = dataclasses.field(default_factory=lambda: {CPU: 1, MEMORY: 1})
    normal_pods: bool = True
    fading: float = 0.8


class NetworkTopologyAware(HyperNodeOrder, BatchNodeOrder, AllocateEvent, DeallocateEvent):
    """The per-session plugin."""

    node_local = False

    def __init__(self, session: PluginSession, config: Config) -> None:
        self._session = session
        self._config = config
        self._scale = float(MAX_NODE_SCORE * config.weight)
        self._state: _State | None = None

    def _view(self) -> _State:
        if self._state is None:
            self._state = _State(self._session.topology, self._config)
        return self._state

    # --- hyperNodeOrder -----------------------------------------------------------------------
    def score_hypernodes(self, job: JobState, domains: Sequence[str]) -> list[float]:
        """Volcano's `HyperNodeOrderFn` for `job` over `domains`."""
        state = self._view()
        request = np.zeros(len(state.cols), dtype=np.float64)
        for task in job.tasks.values():
            request += self._session.request_row(task)[state.cols]
        scores = [state.binpack(state.ids[d], request) for d in domains]
        best = max(scores, default=0.0)
        tied = [k for k, s in enumerate(scores) if s >= best]
        if len(tied) > 1:
            for k in tied:
                scores[k] += state.share(job, domains[k])
        return [s * self._scale for s in scores]

    # --- batchNodeOrder -----------------------------------------------------------------------
    def batch_score_nodes(self, task: TaskState, idx: IntArray) -> FloatArray | None:
        """Volcano's `batchNodeOrderFn`: the network-topology score of a pod of a job with a
        network topology, else the HyperNode-level binpacking of other pods; no opinion
        without any HyperNode."""
        if not self._session.snapshot.topology:
            return None
        job = task.job
        if job is not None and job.facts.network_topology is not None:
            scores = self._view().closeness(job, idx)
        elif self._config.normal_pods:
            scores = self._view().layered(self._session.request_row(task), idx)
        else:
            return np.zeros(len(idx), dtype=np.float64)
        return scores * self._scale

    # --- events -------------------------------------------------------------------------------
    def on_allocate(self, task: TaskState) -> None:
        """The task holds resources now: its HyperNodes hold more, its job's domain may grow."""
        if self._state is not None:
            self._state.moved(task, self._session.request_row(task), 1)

    def on_deallocate(self, task: TaskState) -> None:
        """The task gave its resources back."""
        if self._state is not None:
            self._state.moved(task, self._session.request_row(task), -1)


class _State:
    """What the plugin derives from the tree in one session, made on first use."""

    def __init__(self, view: SessionTopology, config: Config) -> None:
        self.view = view
        ledger = view.ledger
        tree = view.tree
        names = [*tree.domains, CLUSTER_TOP]
        self.names = names
        self.ids = {name: k for k, name in enumerate(names)}
        dims = ledger.dims
        self.cols = np.array(
            [k for k, d in enumerate(dims) if config.resources.get(d, 0) > 0], dtype=np.int64
        )
        self.weights = np.array(
            [config.resources[dims[k]] for k in self.cols.tolist()], dtype=np.float64
        )
        held = ledger.used + ledger.pipelined
        self.allocatable = np.array(
            [view.total(n, ledger.allocatable)[self.cols] for n in names], dtype=np.float64
        ).reshape(len(names), len(self.cols))
        self.used = np.array(
            [view.total(n, held)[self.cols] for n in names], dtype=np.float64
        ).reshape(len(names), len(self.cols))
        lowest = tree.tiers[0] if tree.tiers else tree.top_tier
        self.lowest, self.top = lowest, tree.top_tier
        count = len(ledger)
        tiers = (*tree.tiers, tree.top_tier)
        weights = _fading(tiers, config.fading)
        self.by_tier: list[tuple[float, IntArray]] = []
        """(weight, the row's HyperNode id of that tier or -1) per tier, lowest to the top."""
        for tier, weight in zip(tiers, weights, strict=True):
            of_row = np.full(count, -1, dtype=np.int64)
            if tier == tree.top_tier:
                of_row[:] = self.ids[CLUSTER_TOP]
            for name in sorted(tree.domains, reverse=True):  # the first by name wins
                if tree.domains[name].tier == tier:
                    of_row[view.rows(name)] = self.ids[name]
            self.by_tier.append((weight, of_row))
        self.leaf = self.by_tier[0][1] if lowest != tree.top_tier else np.full(count, -1)
        """Each row's HyperNode of the lowest tier (Volcano's `FindHyperNodeForNode`), -1."""
        self.jobs: dict[str, str] = {}
        """Job key -> the domain its placed pods share, once asked ("" for none placed)."""

    def binpack(self, d: int, request: FloatArray) -> float:
        """Volcano's HyperNode binpack score of domain `d` for `request` (weighted columns):
        0 when it would overflow a resource or no weighted resource is asked."""
        asked = request > 0
        if not asked.any():
            return 0.0
        final = self.used[d] + request
        alloc = self.allocatable[d]
        if (final[asked] > alloc[asked]).any():
            return 0.0
        weights = self.weights[asked]
        return float((weights * final[asked] / alloc[asked]).sum() / weights.sum())

    def layered(self, row: IntArray, idx: IntArray) -> FloatArray:
        """HyperNode-level binpacking of a pod asking `row` on the nodes `idx`."""
        request = row[self.cols].astype(np.float64)
        asked = request > 0
        scores = np.zeros(len(self.names), dtype=np.float64)
        if asked.any():
            final = self.used[:, asked] + request[asked]
            alloc = self.allocatable[:, asked]
            weights = self.weights[asked]
            with np.errstate(divide="ignore", invalid="ignore"):
                per = (weights * final / np.where(alloc > 0, alloc, 1)).sum(axis=1) / weights.sum()
            scores = np.where((final > alloc).any(axis=1), 0.0, per)
        total = np.zeros(len(idx), dtype=np.float64)
        weight_sum = 0.0
        for weight, of_row in self.by_tier:
            ids = of_row[idx]
            total += weight * np.where(ids >= 0, scores[np.maximum(ids, 0)], 1.0)
            weight_sum += weight
        return total / weight_sum if weight_sum > 0 else total

    def domain_of(self, job: JobState) -> str:
        """The domain the job's placed pods share ("" for none)."""
        found = self.jobs.get(job.key)
        if found is None:
            found = self.jobs[job.key] = self.view.job_domain(job)
        return found

    def closeness(self, job: JobState, idx: IntArray) -> FloatArray:
        """Volcano's `batchNodeOrderFnForNetworkAwarePods` (unscaled)."""
        allocated = self.domain_of(job)
        scores = np.zeros(len(idx), dtype=np.float64)
        if not allocated:
            return scores
        tree = self.view.tree
        leaves = self.leaf[idx]
        by_leaf: dict[int, float] = {}
        for k, leaf in enumerate(leaves.tolist()):
            score = by_leaf.get(leaf)
            if score is None:
                if leaf < 0:
                    score = 0.0
                elif self.names[leaf] == allocated:
                    score = 1.0
                else:
                    score = self._tier_score(tree.lca(self.names[leaf], allocated))
                by_leaf[leaf] = score
            scores[k] = score
        best = scores.max() if len(scores) else 0.0
        tied = np.flatnonzero(scores >= best)
        if len(tied) > 1:
            shares: dict[int, float] = {}
            for k in tied.tolist():
                leaf = int(leaves[k])
                if leaf not in shares:
                    shares[leaf] = self.share(job, self.names[leaf]) if leaf >= 0 else 0.0
                scores[k] += shares[leaf]
        return scores

    def _tier_score(self, lca: str) -> float:
        """Volcano's `scoreHyperNodeWithTier` of the tier of `lca`."""
        if self.lowest == self.top:
            return 1.0
        tier = self.view.domain(lca).tier
        if self.lowest <= tier <= self.top:
            return (self.top - tier) / (self.top - self.lowest)
        return 0.0

    def share(self, job: JobState, domain: str) -> float:
        """The fraction of the job's pods on `domain`'s nodes (Volcano's `scoreWithTaskNum`)."""
        if not job.tasks:
            return 1.0
        held = self.view.domain(domain).nodes
        count = sum(1 for t in job.tasks.values() if t.node is not None and t.node in held)
        if domain == CLUSTER_TOP:
            count = sum(1 for t in job.tasks.values() if t.node is not None)
        return count / len(job.tasks)

    def moved(self, task: TaskState, row: IntArray, sign: int) -> None:
        """`task` took (`sign` 1) or gave back (-1) its request on its node."""
        i = task.node_index
        if i < 0:
            return
        request = row[self.cols].astype(np.float64) * sign
        for name in self.view.containing(i):
            self.used[self.ids[name]] += request
        job = task.job
        if job is None or job.key not in self.jobs:
            return
        if sign > 0:  # Volcano's getNewAllocatedHyperNode
            self.jobs[job.key] = self.view.tree.lca(self.view.leaf(i), self.jobs[job.key])
        else:  # found again from the pods when asked
            del self.jobs[job.key]


class Factory:
    """Lives as long as the policy."""

    name = NAME
    plugin = NetworkTopologyAware

    def __init__(self, config: Config) -> None:
        self.config = config

    def open(self, session: PluginSession) -> NetworkTopologyAware:
        """A fresh plugin for `session`."""
        return NetworkTopologyAware(session, self.config)


def build(arguments: Mapping[str, object]) -> Factory:
    """Read Volcano's network-topology-aware arguments; every problem is reported at once."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    weight = _default_if_negative(reader.int("weight", 1), 1)
    resources: dict[str, int] = {}
    for name in (n.strip() for n in reader.str(RESOURCES, "").split(",")):
        if name:
            resources[name] = _default_if_negative(reader.int(f"{RESOURCES}.{name}", 1), 1)
    resources[CPU] = _default_if_negative(reader.int("hypernode.binpack.cpu", 1), 1)
    resources[MEMORY] = _default_if_negative(reader.int("hypernode.binpack.memory", 1), 1)
    normal = reader.bool("hypernode.binpack.normal-pod.enable", True)
    fading = reader.float("hypernode.binpack.normal-pod.fading", 0.8)
    reader.int("hypernode.gradient.evict.max-hypernodes", 8)
    reader.finish()
    return Factory(
        Config(
            weight=weight,
            resources=resources,
            normal_pods=normal,
            fading=fading if fading >= 0 else 0.8,
        )
    )


def _fading(tiers: Sequence[int], fading: float) -> list[float]:
    """Each tier's weight `fading ^ (tier - 1)`, scaled so the largest is 1 (the score is their
    weighted average, so the scale changes nothing, and far-apart tiers neither overflow nor
    vanish all at once). `fading` 0: tier 1 alone weighs (Go's `Pow(0, 0)` is 1), or, without
    a tier 1, the lowest tier."""
    if fading == 0:
        chosen = 1 if 1 in tiers else min(tiers)
        return [1.0 if tier == chosen else 0.0 for tier in tiers]
    logs = [(tier - 1) * math.log(fading) for tier in tiers]
    top = max(logs)
    return [math.exp(value - top) for value in logs]


def _default_if_negative(value: int, default: int) -> int:
    """Volcano's rule: a negative weight is taken as its default."""
    return value if value >= 0 else default
