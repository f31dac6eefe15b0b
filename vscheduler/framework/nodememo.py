"""What a plugin derives from the nodes alone, kept from one session to the next while the nodes
are the same.

The cache hands every cycle the same tuple of node facts until some node's facts change
(`Table.sorted_facts`), so a factory, which lives as long as the policy, can keep what it derives
from the nodes alone (label columns, taint groups, image indexes, per-template node masks) and
make it again only when the nodes change. `NodeMemo.get(nodes)` returns the value made for these
very nodes (the tuple compared by identity; it is held, so its id cannot be reused by another),
or for nodes that differ from them in annotations alone, else makes it anew. No value reads a
node's annotations (nor does any predicate, score or action: see the cache's quiet node
changes): the controller-manager's TTL annotation is written on every node, one after another
over many cycles, when the cluster grows past a size (100, 500, 1,000 nodes), and a W3 bench
run made nodeorder's views again in 106 of its 132 cycles for it.

`TemplateTable` keeps a per-pod-template value (by `TemplateKey`: everything of a pod that can
change a placement) in such a value, bounded so pod templates that come and go cannot grow it
without limit.

Owns: reuse for the same nodes (the very tuple, or alike but for annotations), and the bound.
Must not: hold session state (a ledger's accounting changes within a session and from one to the
next), or read a node's annotations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from typing import Final, Generic, TypeVar

from vscheduler.model.facts import NodeFacts

T = TypeVar("T")
V = TypeVar("V")

TEMPLATES_HELD: Final = 1024
"""Values a `TemplateTable` holds before it starts again (each is an array over the nodes)."""


class NodeMemo(Generic[T]):
    """One value derived from the nodes, made again when the nodes are other objects."""

    __slots__ = ("_make", "_nodes", "_value")

    def __init__(self, make: Callable[[tuple[NodeFacts, ...]], T]) -> None:
        self._make = make
        self._nodes: tuple[NodeFacts, ...] | None = None
        self._value: T | None = None

    def get(self, nodes: tuple[NodeFacts, ...]) -> T:
        """The value for `nodes`: the one made last when they are the very same tuple, or the
        same nodes in the same order but for their annotations."""
        if self._value is None or (nodes is not self._nodes and not _alike(self._nodes, nodes)):
            self._value = self._make(nodes)
        self._nodes = nodes
        return self._value


def _alike(old: tuple[NodeFacts, ...] | None, new: tuple[NodeFacts, ...]) -> bool:
    """`new` holds the nodes of `old`, in order, each the very same facts or facts that differ
    in annotations alone (a pass by identity: only the nodes changed are compared)."""
    if old is None or len(old) != len(new):
        return False
    return all(
        a is b or dataclasses.replace(a, annotations=b.annotations) == b
        for a, b in zip(old, new, strict=True)
    )


class TemplateTable(Generic[V]):
    """Values by pod template (or a key holding one), at most `TEMPLATES_HELD` of them: past
    that the table is emptied and fills again (a value is only ever a cache)."""

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[Hashable, V] = {}

    def get(self, key: Hashable) -> V | None:
        """The value kept for `key`, if any."""
        return self._values.get(key)

    def put(self, key: Hashable, value: V) -> V:
        """Keep `value` for `key`; returns it."""
        if len(self._values) >= TEMPLATES_HELD:
            self._values.clear()
        self._values[key] = value
        return value
