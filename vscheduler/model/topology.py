"""Network topology: Volcano's HyperNodes (`topology.volcano.sh/v1alpha1`), the tree they make,
and a PodGroup's `spec.networkTopology`.

A HyperNode is one network domain (a switch, a rack, a spine): a `tier` (lower is closer), an
optional `tierName`, and members, each a `Node` (by exact name, a regular expression on node
names, or a label selector over the nodes' labels) or another `HyperNode` (by exact name: its
parent is this one). `build_topology` turns the HyperNodes and the nodes into a `Topology`: each
usable HyperNode as a `Domain` with its tier, parent, children and the names of every node it
holds (its own members' and its children's), as Volcano's `HyperNodesInfo` builds its
`realNodesSet`.

What Volcano leaves the scheduler unready over is decided here, HyperNode by HyperNode, and said:
a HyperNode whose membership makes a cycle (`a` holds `b` holds `a`) is left out, with a problem
naming the member; a HyperNode claimed as a member by two HyperNodes keeps one parent (the
claimant of lowest tier, then name), and the other claim is ignored with a warning on it. A
member of type HyperNode named by a regular expression or labels selects nothing (Volcano reads
only `exactMatch` there), with a warning. Nodes in two HyperNodes of the same tier are allowed
(Volcano allows them), with a warning on the second by name.

Owns: the facts (`HyperNodeFacts`, `MemberFacts`; a PodGroup's `NetworkTopology` is in
`model.facts`), the tree and its problems.
Must not: read raw objects (`vscheduler.convert.hypernode` does) or know node rows (a session's
`framework.topology` maps the domains onto its ledger).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from vscheduler.model.facts import (
    HARD_TOPOLOGY,
    SOFT_TOPOLOGY,
    UNUSUAL_VALUE,
    FieldWarning,
    NodeFacts,
)
from vscheduler.model.selector import LabelSelector

MEMBER_NODE: Final = "Node"
MEMBER_HYPERNODE: Final = "HyperNode"
MEMBER_TYPES: Final = (MEMBER_NODE, MEMBER_HYPERNODE)
HARD: Final = HARD_TOPOLOGY
SOFT: Final = SOFT_TOPOLOGY
CLUSTER_TOP: Final = "<cluster-top-hypernode>"
"""Volcano's name for the virtual domain above every HyperNode, holding every node
(`framework.ClusterTopHyperNode`); its tier is one above the highest HyperNode's, at least 1."""
KIND: Final = "HyperNode"
API_VERSION: Final = "topology.volcano.sh/v1alpha1"


@dataclasses.dataclass(frozen=True, slots=True)
class MemberFacts:
    """One `spec.members[]` entry: its type and its one selector."""

    type: str
    """`Node` or `HyperNode`."""
    exact: str = ""
    """`selector.exactMatch.name`, or empty."""
    pattern: re.Pattern[str] | None = None
    """`selector.regexMatch.pattern`, compiled (searched in a node's name, as Go's
    `regexp.MatchString`), or None."""
    labels: LabelSelector | None = None
    """`selector.labelMatch`, or None; an empty one selects no node (as Volcano reads it)."""

    @property
    def selects_by_node_state(self) -> bool:
        """A node member whose nodes depend on the nodes (their names or labels)."""
        return self.type == MEMBER_NODE and (self.pattern is not None or self.labels is not None)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HyperNodeFacts:
    """One HyperNode, as the scheduler needs it."""

    name: str
    tier: int = 0
    tier_name: str = ""
    members: tuple[MemberFacts, ...] = ()
    problem: str = ""
    """Why the HyperNode cannot be used (a malformed field, named), or empty: such a HyperNode
    is left out of the tree."""
    warnings: tuple[FieldWarning, ...] = ()
    """What was read other than as written, or as Volcano reads it though likely a mistake."""

    @property
    def label(self) -> str:
        """`HyperNode name`, as problems and warnings name it."""
        return f"{KIND} {self.name}"

    @property
    def reads_nodes(self) -> bool:
        """Whether its nodes depend on the nodes' names or labels (a regex or label member)."""
        return any(m.selects_by_node_state for m in self.members)


@dataclasses.dataclass(frozen=True, slots=True)
class Domain:
    """A HyperNode in the tree (or the cluster's top)."""

    name: str
    tier: int
    tier_name: str
    parent: str | None
    """The HyperNode holding this one, None for a root (whose parent is the cluster's top)."""
    children: tuple[str, ...]
    """The HyperNodes it holds, by name."""
    nodes: frozenset[str]
    """Every node name it holds, its children's included (a name no node has yet included, as
    Volcano keeps an exact member's name)."""


class Topology:
    """The HyperNode tree, built once per change of the HyperNodes (or of the nodes, when a
    member selects nodes by name pattern or labels)."""

    __slots__ = ("domains", "problems", "roots", "tier_names", "tiers", "top_tier", "warnings")

    def __init__(
        self,
        domains: Mapping[str, Domain],
        *,
        problems: Mapping[str, str] | None = None,
        warnings: Mapping[str, tuple[FieldWarning, ...]] | None = None,
        tier_names: Mapping[str, int] | None = None,
    ) -> None:
        self.domains: Mapping[str, Domain] = domains
        """Name -> domain, by name (the cluster's top is not among them)."""
        self.problems: Mapping[str, str] = problems or {}
        """HyperNode name -> why the tree leaves it out (a membership cycle)."""
        self.warnings: Mapping[str, tuple[FieldWarning, ...]] = warnings or {}
        """HyperNode name -> what the tree read other than as written (an ignored member)."""
        self.tier_names: Mapping[str, int] = tier_names or {}
        """`spec.tierName` -> its tier (the lowest, where HyperNodes disagree)."""
        self.tiers: tuple[int, ...] = tuple(sorted({d.tier for d in domains.values()}))
        top = 1
        for tier in self.tiers:
            if tier >= top:
                top = tier + 1
        self.top_tier = top
        """The tier of the cluster's top domain (`CLUSTER_TOP`): one above the highest
        HyperNode's, at least 1 (Volcano's `addClusterTopHyperNode`)."""
        self.roots: tuple[str, ...] = tuple(n for n, d in domains.items() if d.parent is None)
        """The HyperNodes without a parent, by name: the top domain's children."""

    def __bool__(self) -> bool:
        return bool(self.domains)

    def ancestors(self, name: str) -> list[str]:
        """`name`, its parent, ... up to its root, then `CLUSTER_TOP` (just `CLUSTER_TOP` for
        it; empty for a name the tree does not hold)."""
        if name == CLUSTER_TOP:
            return [CLUSTER_TOP]
        out: list[str] = []
        current: str | None = name
        while current is not None:
            domain = self.domains.get(current)
            if domain is None:
                return [*out, CLUSTER_TOP] if out else []
            out.append(current)
            current = domain.parent
        out.append(CLUSTER_TOP)
        return out

    def lca(self, a: str, b: str) -> str:
        """The lowest domain holding both `a` and `b` (Volcano's `GetLCAHyperNode`): `a` when
        `b` is empty, and the other way round; `CLUSTER_TOP` at worst."""
        if not a:
            return b
        if not b:
            return a
        seen = set(self.ancestors(a))
        for ancestor in self.ancestors(b):
            if ancestor in seen:
                return ancestor
        return CLUSTER_TOP

    def tier_of(self, name: str) -> int:
        """A domain's tier (`top_tier` for the cluster's top)."""
        if name == CLUSTER_TOP:
            return self.top_tier
        return self.domains[name].tier


NO_TOPOLOGY: Final = Topology({})
"""No HyperNode: the cluster is one domain (`CLUSTER_TOP`, tier 1)."""


def build_topology(hypernodes: Iterable[HyperNodeFacts], nodes: Sequence[NodeFacts]) -> Topology:
    """The tree of the usable `hypernodes` (those without a problem) over `nodes`."""
    usable = {h.name: h for h in sorted(hypernodes, key=_by_name) if not h.problem}
    if not usable:
        return NO_TOPOLOGY
    warnings: dict[str, list[FieldWarning]] = {}
    own = {name: _own_nodes(h, nodes, warnings) for name, h in usable.items()}
    parent = _parents(usable, warnings)
    problems = _cycles(usable, parent)
    for name in problems:
        parent.pop(name, None)
    kept = [name for name in usable if name not in problems]
    for name in kept:
        if parent.get(name) in problems:
            del parent[name]
    children: dict[str, list[str]] = {name: [] for name in kept}
    for child in kept:
        holder = parent.get(child)
        if holder is not None:
            children[holder].append(child)
    held: dict[str, frozenset[str]] = {}
    for name in _bottom_up(kept, children):
        found = set(own[name])
        for child in children[name]:
            found |= held[child]
        held[name] = frozenset(found)
    domains = {
        name: Domain(
            name=name,
            tier=usable[name].tier,
            tier_name=usable[name].tier_name,
            parent=parent.get(name),
            children=tuple(children[name]),
            nodes=held[name],
        )
        for name in kept
    }
    _shared_nodes(domains, warnings)
    tier_names = _tier_names(domains, warnings)
    return Topology(
        domains,
        problems=problems,
        warnings={k: tuple(v) for k, v in sorted(warnings.items())},
        tier_names=tier_names,
    )


def _by_name(h: HyperNodeFacts) -> str:
    return h.name


def _own_nodes(
    h: HyperNodeFacts, nodes: Sequence[NodeFacts], warnings: dict[str, list[FieldWarning]]
) -> frozenset[str]:
    """The nodes `h`'s node members select (Volcano's `GetMembers`, each selector on its own)."""
    found: set[str] = set()
    for i, member in enumerate(h.members):
        if member.type != MEMBER_NODE:
            if member.pattern is not None or member.labels is not None:
                how = "regexMatch" if member.pattern is not None else "labelMatch"
                _warn(
                    warnings,
                    h,
                    f"spec.members[{i}].selector.{how}: a member of type HyperNode is named by"
                    " exactMatch only; this one selects nothing, as Volcano reads it",
                )
            continue
        if member.exact:
            found.add(member.exact)
        if member.pattern is not None:
            search = member.pattern.search
            found.update(n.name for n in nodes if search(n.name))
        if member.labels is not None and not member.labels.is_empty:
            matches = member.labels.matches
            found.update(n.name for n in nodes if matches(n.labels))
    return frozenset(found)


def _parents(
    usable: Mapping[str, HyperNodeFacts], warnings: dict[str, list[FieldWarning]]
) -> dict[str, str]:
    """Child -> its parent: of the HyperNodes that name it as a member, the one of lowest tier,
    then name; each other claim is warned about on its claimant."""
    claims: dict[str, list[tuple[HyperNodeFacts, int]]] = {}
    for h in usable.values():
        for i, member in enumerate(h.members):
            if member.type == MEMBER_HYPERNODE and member.exact in usable:
                held = claims.setdefault(member.exact, [])
                if not any(claimant is h for claimant, _ in held):
                    held.append((h, i))
    parent: dict[str, str] = {}
    for child, held in claims.items():
        held.sort(key=lambda c: (c[0].tier, c[0].name))
        winner = held[0][0]
        parent[child] = winner.name
        for claimant, i in held[1:]:
            _warn(
                warnings,
                claimant,
                f"spec.members[{i}]: HyperNode {child} is a member of HyperNode {winner.name}"
                f" (tier {winner.tier}) too; a HyperNode has one parent, so this membership is"
                " ignored",
            )
    return parent


def _cycles(usable: Mapping[str, HyperNodeFacts], parent: Mapping[str, str]) -> dict[str, str]:
    """HyperNode -> the problem of being in a membership cycle, for every one in a cycle."""
    problems: dict[str, str] = {}
    done: set[str] = set()
    for start in usable:
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = start
        while current is not None and current not in done and current not in on_path:
            path.append(current)
            on_path.add(current)
            current = parent.get(current)
        if current is not None and current in on_path:
            cycle = path[path.index(current) :]
            for name in cycle:
                child = next(c for c in cycle if parent.get(c) == name)
                index = next(
                    i
                    for i, m in enumerate(usable[name].members)
                    if m.type == MEMBER_HYPERNODE and m.exact == child
                )
                around = " -> ".join([*_rotated(cycle, name), name])
                problems[name] = (
                    f"{usable[name].label}: spec.members[{index}]: HyperNode {child} makes a"
                    f" membership cycle ({around}); the HyperNode is left out"
                )
        done.update(path)
    return problems


def _rotated(cycle: list[str], first: str) -> list[str]:
    """The cycle `parent -> child` order starting at `first`: a HyperNode, then the one it
    holds, ... (the parent links run the other way)."""
    order = list(reversed(cycle))
    k = order.index(first)
    return order[k:] + order[:k]


def _bottom_up(names: Sequence[str], children: Mapping[str, Sequence[str]]) -> list[str]:
    """`names` with every HyperNode after its children (the tree is acyclic by now)."""
    out: list[str] = []
    seen: set[str] = set()
    for root in names:
        if root in seen:
            continue
        stack: list[tuple[str, bool]] = [(root, False)]
        while stack:
            name, expanded = stack.pop()
            if expanded:
                out.append(name)
                continue
            if name in seen:
                continue
            seen.add(name)
            stack.append((name, True))
            stack.extend((c, False) for c in children[name] if c not in seen)
    return out


def _shared_nodes(domains: Mapping[str, Domain], warnings: dict[str, list[FieldWarning]]) -> None:
    """Warn on a HyperNode holding nodes that another HyperNode of its tier holds too (the
    first by name keeps no warning); a child sharing its parent's tier is left alone."""
    first: dict[tuple[int, str], str] = {}
    for name, domain in domains.items():
        shared: dict[str, list[str]] = {}
        for node in sorted(domain.nodes):
            holder = first.setdefault((domain.tier, node), name)
            if holder != name and not _related(domains, holder, name):
                shared.setdefault(holder, []).append(node)
        for holder, names in shared.items():
            more = f" (and {len(names) - 1} more)" if len(names) > 1 else ""
            _warn(
                warnings,
                None,
                f"spec.members: node {names[0]}{more} is in HyperNode {holder} of the same tier"
                f" {domain.tier} too; a job of either may be placed on it",
                name=name,
            )


def _related(domains: Mapping[str, Domain], a: str, b: str) -> bool:
    """Whether `a` holds `b` or `b` holds `a`."""
    for low, high in ((a, b), (b, a)):
        current = domains[low].parent
        while current is not None:
            if current == high:
                return True
            current = domains[current].parent
    return False


def _tier_names(
    domains: Mapping[str, Domain], warnings: dict[str, list[FieldWarning]]
) -> dict[str, int]:
    """`spec.tierName` -> tier; where HyperNodes give one name two tiers, the lowest is read,
    with a warning on the others (Volcano takes whichever it met last)."""
    tiers: dict[str, int] = {}
    for domain in domains.values():
        if domain.tier_name:
            known = tiers.get(domain.tier_name)
            tiers[domain.tier_name] = domain.tier if known is None else min(known, domain.tier)
    for name, domain in domains.items():
        if domain.tier_name and tiers[domain.tier_name] != domain.tier:
            _warn(
                warnings,
                None,
                f"spec.tierName: '{domain.tier_name}' names tier {tiers[domain.tier_name]} on"
                f" another HyperNode; a highestTierName '{domain.tier_name}' reads as tier"
                f" {tiers[domain.tier_name]}",
                name=name,
            )
    return tiers


def _warn(
    warnings: dict[str, list[FieldWarning]],
    h: HyperNodeFacts | None,
    text: str,
    *,
    name: str = "",
) -> None:
    key = h.name if h is not None else name
    warnings.setdefault(key, []).append(FieldWarning(UNUSUAL_VALUE, f"{KIND} {key}: {text}"))


class TopologyMemo:
    """The tree of the last HyperNodes and nodes it was asked about, built again only when the
    HyperNodes changed (another tuple of facts: the cache's sorted view is the same object while
    its table does not change) or, when some member selects nodes by name pattern or labels,
    when the nodes' names or labels changed. Not thread-safe (the caller holds its lock)."""

    __slots__ = ("_hypernodes", "_nodes", "_reads_nodes", "_seen", "current")

    def __init__(self) -> None:
        self._hypernodes: tuple[HyperNodeFacts, ...] = ()
        self._nodes: tuple[NodeFacts, ...] = ()
        self._seen: tuple[tuple[str, Mapping[str, str]], ...] = ()
        self._reads_nodes = False
        self.current: Topology = NO_TOPOLOGY
        """The tree last built (for the problems and warnings it found)."""

    def topology(
        self, hypernodes: tuple[HyperNodeFacts, ...], nodes: tuple[NodeFacts, ...]
    ) -> Topology:
        """The tree of `hypernodes` over `nodes`."""
        if hypernodes is self._hypernodes and (not self._reads_nodes or nodes is self._nodes):
            return self.current
        if not hypernodes:
            self._hypernodes, self._nodes, self._seen = hypernodes, nodes, ()
            self._reads_nodes = False
            self.current = NO_TOPOLOGY
            return self.current
        reads_nodes = any(h.reads_nodes for h in hypernodes if not h.problem)
        seen = tuple((n.name, n.labels) for n in nodes) if reads_nodes else ()
        if hypernodes is not self._hypernodes or seen != self._seen:
            self.current = build_topology(hypernodes, nodes)
        self._hypernodes, self._nodes, self._seen = hypernodes, nodes, seen
        self._reads_nodes = reads_nodes
        return self.current
