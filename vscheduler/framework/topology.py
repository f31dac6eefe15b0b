"""A session's view of the HyperNode tree over its ledger's rows, and the choice of the domains
a job with a `spec.networkTopology` may be placed in.

`SessionTopology` maps each domain (each HyperNode of `snapshot.topology`, and `CLUSTER_TOP`,
every node) to the ledger rows of its nodes, made once per domain asked about; finds the domain
a job already runs in (the lowest-tier domain holding every node its placed pods are on:
Volcano's `recoverAllocatedHyperNode`, read from the pods each session rather than remembered);
sums node accounting over a domain. It is made on first use: a session with no job asking for a
network topology, and no plugin reading the tree, never makes one.

`limit` reads a job's constraint against the tree: the highest tier it may be placed in (hard:
`highestTierAllowed`, or the tier of the HyperNodes named by `highestTierName`; soft: the
cluster's top, so it falls back to anywhere, as Volcano turns soft into hard at the top's tier),
or None (no constraint: another mode, or hard naming no tier, as Volcano reads them), or why
it cannot be placed (a tier name no HyperNode has: Volcano then places the job anywhere; here it
waits, as a hard constraint the scheduler cannot read should). `gradient` is Volcano's
`hyperNodeGradientFn` for allocation: from the search root (the cluster's top; for a job already
running, the highest ancestor of its domain within the limit), breadth first, the domains of
tier <= the limit that may hold the job (every one, for a job already running; else those whose
idle or future idle, summed, covers its `minResources`), grouped by tier, lowest first, each
group by name.

Owns: those answers. Must not: place anything (allocate does) or score domains (the
hyperNodeOrder point does).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Final

import numpy as np

from vscheduler.framework.ledger import BoolArray, IntArray, LedgerView
from vscheduler.framework.state import JobState
from vscheduler.model import status as st
from vscheduler.model.facts import NetworkTopology
from vscheduler.model.resources import PODS, Resources
from vscheduler.model.topology import CLUSTER_TOP, Domain, Topology


class SessionTopology:
    """The tree over one session's ledger."""

    __slots__ = ("_containing", "_rows", "ledger", "top", "tree")

    def __init__(self, tree: Topology, ledger: LedgerView) -> None:
        self.tree = tree
        self.ledger = ledger
        self._rows: dict[str, IntArray] = {}
        self._containing: list[tuple[str, ...]] | None = None
        self.top = Domain(
            name=CLUSTER_TOP,
            tier=tree.top_tier,
            tier_name="",
            parent=None,
            children=tree.roots,
            nodes=frozenset(ledger.names),
        )
        """The cluster's top: every node, one tier above every HyperNode."""

    def domain(self, name: str) -> Domain:
        """A HyperNode's domain, or the top."""
        return self.top if name == CLUSTER_TOP else self.tree.domains[name]

    def rows(self, name: str) -> IntArray:
        """The ledger rows of a domain's nodes, in row order (its node names no node has are
        left out)."""
        rows = self._rows.get(name)
        if rows is None:
            if name == CLUSTER_TOP:
                rows = np.arange(len(self.ledger), dtype=np.int64)
            else:
                index = self.ledger.index
                found = sorted(index[n] for n in self.tree.domains[name].nodes if n in index)
                rows = np.array(found, dtype=np.int64)
            self._rows[name] = rows
        return rows

    def mask(self, name: str) -> BoolArray:
        """A domain's nodes as a mask over the ledger's rows."""
        mask = np.zeros(len(self.ledger), dtype=np.bool_)
        mask[self.rows(name)] = True
        return mask

    def containing(self, row: int) -> tuple[str, ...]:
        """The domains holding the node of `row`, the top last."""
        if self._containing is None:
            held: list[list[str]] = [[] for _ in range(len(self.ledger))]
            for name in self.tree.domains:
                for i in self.rows(name).tolist():
                    held[i].append(name)
            self._containing = [(*names, CLUSTER_TOP) for names in held]
        return self._containing[row]

    def lowest(self, names: Iterable[str]) -> str:
        """Of `names`, the domain of lowest tier (then name); "" for none."""
        return min(names, key=self._order, default="")

    def _order(self, name: str) -> tuple[int, str]:
        return (self.domain(name).tier, name)

    def job_domain(self, job: JobState) -> str:
        """The lowest-tier domain holding every node the job's placed pods (Allocated, Binding,
        Bound, Running) are on; "" when none is placed."""
        common: set[str] | None = None
        for task in job.tasks.values():
            if task.status in st.OCCUPYING and task.node_index >= 0:
                holding = self.containing(task.node_index)
                common = set(holding) if common is None else common.intersection(holding)
        return "" if common is None else self.lowest(common)

    def leaf(self, row: int) -> str:
        """The lowest-tier domain (then by name) holding the node of `row`: the top for a node
        in no HyperNode."""
        return self.lowest(self.containing(row))

    def total(self, name: str, array: IntArray) -> IntArray:
        """`array` (rows = nodes) summed over a domain's nodes."""
        return np.asarray(array[self.rows(name)].sum(axis=0), dtype=np.int64)

    def covers(self, name: str, need: IntArray) -> bool:
        """Whether a domain's idle, or its future idle, summed over its nodes, covers `need` (a
        ledger row)."""
        ledger = self.ledger
        return bool(
            (self.total(name, ledger.idle) >= need).all()
            or (self.total(name, ledger.future) >= need).all()
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Limit:
    """A job's network-topology constraint as the tree reads it."""

    highest: int | None
    """The highest tier its pods may share (None: no constraint)."""
    problem: str = ""
    """Why it cannot be placed at all (the limit is then None)."""


NO_LIMIT: Final = Limit(None)


def limit(wanted: NetworkTopology, tree: Topology) -> Limit:
    """The highest tier a job asking `wanted` may be placed within."""
    if wanted.is_soft:
        return Limit(tree.top_tier)
    if not wanted.is_hard:
        return NO_LIMIT
    if wanted.highest_tier is not None:
        return Limit(wanted.highest_tier)
    if not wanted.highest_tier_name:
        return NO_LIMIT
    tier = tree.tier_names.get(wanted.highest_tier_name)
    if tier is None:
        return Limit(
            None,
            f"networkTopology.highestTierName '{wanted.highest_tier_name}' is no HyperNode's"
            " spec.tierName",
        )
    return Limit(tier)


@dataclasses.dataclass(frozen=True, slots=True)
class Gradient:
    """The domains a job may be tried in, by tier (lowest first), or why there are none."""

    tiers: tuple[tuple[str, ...], ...]
    problem: str = ""


def gradient(view: SessionTopology, job: JobState, highest: int, allocated: str) -> Gradient:
    """Volcano's allocation gradient for `job` within tier `highest`, the job running in
    domain `allocated` ("" for none)."""
    root = CLUSTER_TOP
    if allocated:
        root = ""
        for ancestor in view.tree.ancestors(allocated):
            if view.domain(ancestor).tier > highest:
                break
            root = ancestor
        if not root:
            where = (
                "nodes no HyperNode holds together"
                if allocated == CLUSTER_TOP
                else f"HyperNode {allocated} (tier {view.domain(allocated).tier})"
            )
            return Gradient(
                (), f"its placed pods already span {where}, above highestTierAllowed {highest}"
            )
    need = _need(view, job.facts.min_resources)
    eligible: dict[int, list[str]] = {}
    queue = [root]
    seen = {root}
    while queue:
        name = queue.pop(0)
        domain = view.domain(name)
        if domain.tier <= highest and (allocated or need is None or view.covers(name, need)):
            eligible.setdefault(domain.tier, []).append(name)
        for child in domain.children:
            if child not in seen:
                seen.add(child)
                queue.append(child)
    if not eligible:
        if not any(view.domain(n).tier <= highest for n in seen):
            return Gradient((), f"no HyperNode has a tier of {highest} or lower")
        return Gradient(
            (),
            f"no HyperNode of tier {highest} or lower has the idle room its minResources ask",
        )
    return Gradient(tuple(tuple(sorted(eligible[t])) for t in sorted(eligible)))


def _need(view: SessionTopology, min_resources: Resources | None) -> IntArray | None:
    """`minResources` as a ledger row (`pods` and object counts `count/...` left out, as
    Volcano's resources leave them out); None
    without any (every domain is eligible). A resource no node has is asked of a column of its
    own that no domain covers."""
    if min_resources is None:
        return None
    wanted = {
        n: v for n, v in min_resources.items() if n != PODS and not n.startswith("count/") and v > 0
    }
    if not wanted:
        return None
    ledger = view.ledger
    if any(name not in ledger.dim_index for name in wanted):
        return np.full(len(ledger.dims), np.iinfo(np.int64).max, dtype=np.int64)
    return ledger.vector(Resources(wanted))
