"""The predicates' checks over every node at once, for one session.

`LabelColumns` codes each label key's values as an integer column (built the first time a key is
asked for), so a node selector or an affinity term is a few NumPy comparisons over all nodes.
`TaintGroups` groups nodes by their taint list (clusters have few distinct ones), so a class's
tolerations are checked once per group, not once per node. `PortBook` keeps the host ports in
use on each node as the session places and removes tasks. The answers equal those of `checks`
node by node. Owns session-lifetime indexes only; knows nothing of tasks' statuses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from vscheduler.plugin_api import BoolArray, HostPort, IntArray, Requirement, SelectorTerm, Taint
from vscheduler.plugins.predicates import checks

_ABSENT = -1
_FEW_NODES = 32


class LabelColumns:
    """Node labels as integer-coded columns, one per key, built lazily."""

    def __init__(self, labels: Sequence[Mapping[str, str]], names: Sequence[str]) -> None:
        self._labels = labels
        self._names = names
        self._codes: dict[str, tuple[IntArray, dict[str, int]]] = {}
        self._numbers: dict[str, tuple[IntArray, BoolArray]] = {}

    def __len__(self) -> int:
        return len(self._names)

    def codes(self, key: str) -> tuple[IntArray, dict[str, int]]:
        """Each node's code for its value of label `key` (-1 when absent), and the codes."""
        found = self._codes.get(key)
        if found is None:
            vocabulary: dict[str, int] = {}
            column = np.fromiter(
                (
                    _ABSENT if value is None else vocabulary.setdefault(value, len(vocabulary))
                    for value in (labels.get(key) for labels in self._labels)
                ),
                dtype=np.int64,
                count=len(self._labels),
            )
            found = self._codes[key] = (column, vocabulary)
        return found

    def numbers(self, key: str) -> tuple[IntArray, BoolArray]:
        """Each node's value of label `key` as a Go int64, and where it is one."""
        found = self._numbers.get(key)
        if found is None:
            parsed = [checks.parse_int64(v) if v is not None else None for v in self._values(key)]
            valid = np.array([p is not None for p in parsed], dtype=np.bool_)
            values = np.array([p if p is not None else 0 for p in parsed], dtype=np.int64)
            found = self._numbers[key] = (values, valid)
        return found

    def _values(self, key: str) -> Iterable[str | None]:
        return (labels.get(key) for labels in self._labels)

    def label(self, req: Requirement) -> BoolArray:
        """Nodes matching one valid label requirement (see `checks.label_matches`)."""
        op = req.operator
        if op in ("Gt", "Lt"):
            values, valid = self.numbers(req.key)
            bound = checks.parse_int64(req.values[0])
            assert bound is not None
            return valid & ((values > bound) if op == "Gt" else (values < bound))
        column, vocabulary = self.codes(req.key)
        present: BoolArray = np.not_equal(column, _ABSENT)
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return ~present
        wanted = [vocabulary[v] for v in req.values if v in vocabulary]
        inside = np.isin(column, np.array(wanted, dtype=np.int64))
        return inside if op == "In" else ~inside

    def field(self, req: Requirement) -> BoolArray:
        """Nodes matching one valid field requirement (`metadata.name` In/NotIn one value)."""
        if req.key == checks.NAME_FIELD:
            equal = np.array([name == req.values[0] for name in self._names], dtype=np.bool_)
        else:
            equal = np.full(len(self._names), req.values[0] == "", dtype=np.bool_)
        return equal if req.operator == "In" else ~equal

    def term(self, term: SelectorTerm) -> BoolArray:
        """Nodes matching a node-selector term (none if it is empty or malformed)."""
        ok = np.full(len(self._names), checks.term_valid(term), dtype=np.bool_)
        if not ok.any():
            return ok
        for req in term.match_expressions:
            ok &= self.label(req)
        for req in term.match_fields:
            ok &= self.field(req)
        return ok

    def selector(self, selector: Mapping[str, str]) -> BoolArray:
        """Nodes whose labels include every pair of `selector`."""
        ok = np.ones(len(self._names), dtype=np.bool_)
        for key, value in selector.items():
            column, vocabulary = self.codes(key)
            ok &= column == vocabulary.get(value, -2)
        return ok

    def required(self, terms: Sequence[SelectorTerm] | None) -> BoolArray:
        """Nodes matching required node affinity (None: all; no terms: none; else any term)."""
        if terms is None:
            return np.ones(len(self._names), dtype=np.bool_)
        ok = np.zeros(len(self._names), dtype=np.bool_)
        for term in terms:
            ok |= self.term(term)
        return ok


class TaintGroups:
    """Nodes grouped by their (ordered) taint list."""

    def __init__(self, taints: Sequence[tuple[Taint, ...]]) -> None:
        index: dict[tuple[Taint, ...], int] = {}
        self.group: IntArray = np.fromiter(
            (index.setdefault(t, len(index)) for t in taints), dtype=np.int64, count=len(taints)
        )
        self.lists: tuple[tuple[Taint, ...], ...] = tuple(index)

    def per_group(self, passes: Iterable[bool]) -> BoolArray:
        """A per-group answer spread over the nodes."""
        table = np.fromiter(passes, dtype=np.bool_, count=len(self.lists))
        return table[self.group]


class PortBook:
    """Host ports in use on each node: (protocol, port) -> node -> multiset of host IPs."""

    def __init__(self) -> None:
        self._used: dict[tuple[str, int], dict[int, Counter[str]]] = {}

    def add(self, node: int, ports: Iterable[HostPort], sign: int = 1) -> None:
        """A pod with `ports` starts (sign 1) or stops (sign -1) using them on `node`."""
        for port in ports:
            protocol, number, ip = checks.port_key(port)
            if number <= 0:
                continue
            nodes = self._used.setdefault((protocol, number), {})
            ips = nodes.setdefault(node, Counter())
            ips[ip] += sign
            if ips[ip] <= 0:
                del ips[ip]
                if not ips:
                    del nodes[node]

    def used_ips(self, node: int, port: HostPort) -> Iterable[str]:
        """The host IPs using `port`'s protocol and number on `node`."""
        protocol, number, _ = checks.port_key(port)
        return self._used.get((protocol, number), {}).get(node, Counter()).keys()

    def conflicting(self, ports: Iterable[HostPort]) -> IntArray:
        """The nodes where some of `ports` conflicts with a port in use (sorted)."""
        found: set[int] = set()
        for port in ports:
            protocol, number, ip = checks.port_key(port)
            users = self._used.get((protocol, number), {})
            if ip == checks.WILDCARD_IP:
                found.update(users)
                continue
            found.update(node for node, ips in users.items() if checks.port_conflicts(port, ips))
        return np.array(sorted(found), dtype=np.int64)

    def free_on(self, node: int, ports: Iterable[HostPort]) -> bool:
        """None of `ports` conflicts on `node`."""
        return not any(checks.port_conflicts(p, self.used_ips(node, p)) for p in ports)

    def free(self, idx: IntArray, ports: Sequence[HostPort]) -> BoolArray:
        """Whether each node of `idx` has all of `ports` free: node by node for a few nodes
        (the incremental refreshes), by port for many."""
        if len(idx) <= _FEW_NODES:
            return np.fromiter(
                (self.free_on(int(i), ports) for i in idx), dtype=np.bool_, count=len(idx)
            )
        free: BoolArray = ~np.isin(idx, self.conflicting(ports))
        return free
