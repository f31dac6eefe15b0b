"""What a plugin derives from the nodes alone, kept from one session to the next while the nodes
are the same.

The cache hands every cycle the same tuple of node facts until some node's facts change
(`Table.sorted_facts`), so a factory, which lives as long as the policy, can keep what it derives
from the nodes alone (label columns, taint groups, image indexes, per-template node masks) and
make it again only when the nodes change. `NodeMemo.get(nodes)` returns the value made for these
very nodes (compared by identity; the tuple is held, so its id cannot be reused by another), or
makes it anew. `TemplateTable` keeps a per-pod-template value (by `TemplateKey`: everything of a
pod that can change a placement) in such a value, bounded so pod templates that come and go
cannot grow it without limit.

Owns: reuse by identity of the node tuple, and the bound. Must not: hold session state (a
ledger's accounting changes within a session and from one to the next).
"""

from __future__ import annotations

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
        """The value for `nodes`: the one made last when they are the very same tuple."""
        if nodes is not self._nodes or self._value is None:
            self._value = self._make(nodes)
            self._nodes = nodes
        return self._value


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
