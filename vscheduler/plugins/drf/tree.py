"""Hierarchical drf's tree arithmetic (Volcano's `hierarchicalNode`, `updateHierarchicalShare`,
`resourceSaturated` and `compareQueues`), pure: no session, no plugin.

The tree: below the root, one node per level named by the queues' `volcano.sh/hierarchy`
annotations (a `Path`: the names below the root, top first), and under the node of a queue's
path one leaf per job of the queue. Its shape is fixed for a session; what changes is what each
job holds, so `Tree.evaluate` takes the jobs' allocations and the cluster's total allocation and
gives every node below the root its share and whether it is saturated, bottom up:

- a leaf (a job): its dominant share of the cluster total; saturated when, for a resource it
  holds, it holds all it asks (every task's request, `TotalRequest`), or the cluster has none of
  that resource left to give (the resource is no longer *demanding*) while it asks some;
- a node: of its children that hold something and are not saturated, the least dominant share
  `m` (at most 1); its allocation is the sum of its children's, each of those scaled to share
  `m` (`allocation * m / share`), the saturated ones as they are; its share is the dominant
  share of that sum; it is saturated when every child is.

The root's own share is never compared (every queue descends from it), so it is not computed,
and neither are the jobs of queues without a path (they hang from the root): they count only in
the cluster's total allocation. Children are summed in a fixed order (nodes by name, then jobs
by key), so the same allocations give the same shares, bit for bit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Final

from vscheduler.plugin_api import Resources

Path = tuple[str, ...]
"""A node's names below the root, top first (the root is `()`)."""
Divisors = tuple[tuple[str, int], ...]
"""The cluster's resources with a positive total, and the totals."""


@dataclasses.dataclass(frozen=True, slots=True)
class NodeShare:
    """A node's standing: its dominant share and whether it is saturated."""

    share: float
    saturated: bool


UNBUILT: Final = NodeShare(0.0, False)
"""The standing of a node no job hangs below (it holds nothing and wants more)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Leaf:
    """A job in the tree: its key, its queue's path and everything its tasks ask."""

    job: str
    path: Path
    request: Resources


@dataclasses.dataclass(frozen=True, slots=True)
class _Figures:
    vector: tuple[float, ...]
    share: float
    saturated: bool


class Tree:
    """The nodes and leaves of one session, with each node's weight."""

    def __init__(
        self, leaves: Iterable[Leaf], weights: Mapping[Path, float], divisors: Divisors
    ) -> None:
        self._divisors = divisors
        self._weights = weights
        jobs: dict[Path, list[Leaf]] = {}
        nodes: dict[Path, set[Path]] = {}
        for leaf in leaves:
            if not leaf.path:
                continue
            jobs.setdefault(leaf.path, []).append(leaf)
            for depth in range(1, len(leaf.path) + 1):
                nodes.setdefault(leaf.path[:depth], set())
                if depth > 1:
                    nodes[leaf.path[: depth - 1]].add(leaf.path[:depth])
        self._jobs = {path: tuple(sorted(held, key=_by_job)) for path, held in jobs.items()}
        self._nodes = {path: tuple(sorted(below)) for path, below in nodes.items()}
        self._bottom_up = tuple(sorted(nodes, key=lambda path: (-len(path), path)))

    def __len__(self) -> int:
        return len(self._nodes)

    def weight(self, path: Path) -> float:
        """The node's weight (1 unless a queue's annotation gives another)."""
        return self._weights.get(path, 1.0)

    def evaluate(
        self, allocated: Callable[[str], Resources], total_allocated: Resources
    ) -> dict[Path, NodeShare]:
        """Every node's standing below the root, given each job's allocation (by key) and the
        sum of all of them."""
        demanding = frozenset(n for n, t in self._divisors if total_allocated.get(n) < t)
        figures: dict[Path, _Figures] = {}
        for path in self._bottom_up:
            children = [figures[below] for below in self._nodes[path]]
            for leaf in self._jobs.get(path, ()):
                children.append(self._leaf(leaf, allocated(leaf.job), demanding))
            figures[path] = self._node(children)
        return {path: NodeShare(f.share, f.saturated) for path, f in figures.items()}

    def compare(self, shares: Mapping[Path, NodeShare], left: Path, right: Path) -> float:
        """Volcano's `compareQueues`: down both paths from the root's children while the nodes
        tie, a saturated node after one that is not, then the lower share per weight first;
        negative when `left` comes first, 0 on a tie (paths of different depth compare only
        down to the shallower one)."""
        for depth in range(1, min(len(left), len(right)) + 1):
            lpath, rpath = left[:depth], right[:depth]
            lnode, rnode = shares.get(lpath, UNBUILT), shares.get(rpath, UNBUILT)
            if lnode.saturated != rnode.saturated:
                return 1.0 if lnode.saturated else -1.0
            lvalue = lnode.share / self.weight(lpath)
            rvalue = rnode.share / self.weight(rpath)
            if lvalue != rvalue:
                return lvalue - rvalue
        return 0.0

    def _leaf(self, leaf: Leaf, allocated: Resources, demanding: frozenset[str]) -> _Figures:
        vector = tuple(float(allocated.get(name)) for name, _ in self._divisors)
        return _Figures(vector, self._share(vector), saturated(allocated, leaf.request, demanding))

    def _node(self, children: list[_Figures]) -> _Figures:
        least = min((c.share for c in children if c.share != 0 and not c.saturated), default=1.0)
        least = min(least, 1.0)
        total = [0.0] * len(self._divisors)
        for child in children:
            if child.share == 0:
                continue
            scale = 1.0 if child.saturated else least / child.share
            for i, amount in enumerate(child.vector):
                total[i] += amount * scale
        vector = tuple(total)
        return _Figures(vector, self._share(vector), all(c.saturated for c in children))

    def _share(self, vector: tuple[float, ...]) -> float:
        pairs = zip(vector, self._divisors, strict=True)
        return max(0.0, max((amount / total for amount, (_, total) in pairs), default=0.0))


def saturated(allocated: Resources, request: Resources, demanding: frozenset[str]) -> bool:
    """Volcano's `resourceSaturated`: for a resource the job holds, it holds all it asks, or
    that resource is no longer demanding (none left in the cluster) while the job asks some."""
    for name, amount in allocated.items():
        if amount <= 0:
            continue
        asked = request.get(name)
        if asked and (amount >= asked or name not in demanding):
            return True
    return False


def _by_job(leaf: Leaf) -> str:
    return leaf.job
