"""FactsMemo: the facts of a table of raw objects, each converted once until its object changes.

Owns: remembering, per key, the raw object last converted and its facts, and the sorted view of
them, so a cache snapshot of kinds it keeps raw (ResourceQuota, ...) costs a dict walk, not a
conversion, while nothing changed.
Must not: raise (the converter it is given must not), lock (the caller holds its lock), or know
any kind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Generic, TypeVar

from vscheduler.convert.fields import Raw

F = TypeVar("F")


class FactsMemo(Generic[F]):
    """The facts of the raw objects held, by a lenient converter; an object is converted again
    only when the object held under its key is no longer the same object. Not thread-safe."""

    __slots__ = ("_convert", "_held", "_view")

    def __init__(self, convert: Callable[[Raw], F]) -> None:
        self._convert = convert
        self._held: dict[str, tuple[Raw, F]] = {}
        self._view: tuple[F, ...] = ()

    def facts(self, objects: Mapping[str, Raw]) -> tuple[F, ...]:
        """The facts of `objects` (key -> raw object), sorted by key."""
        changed = len(objects) != len(self._held)
        fresh: dict[str, tuple[Raw, F]] = {}
        for key, obj in objects.items():
            held = self._held.get(key)
            if held is None or held[0] is not obj:
                held = (obj, self._convert(obj))
                changed = True
            fresh[key] = held
        if changed:
            self._held = fresh
            self._view = tuple(fresh[key][1] for key in sorted(fresh))
        return self._view
