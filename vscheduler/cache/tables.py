"""The cache's per-kind tables: raw objects, their facts, the problems found converting them and
the warnings their facts carry.

Owns: storing one kind's objects by key, telling whether an update changed the facts (an update
that changes only the raw object, such as a resourceVersion or a status this scheduler wrote,
is not a change), keeping unchanged facts objects (so snapshots share them and memoised
assumptions stay valid), sorted views cached until the next change, and, for pods, the
namespace/name index and the snapshot order (creation time, then uid) kept incrementally.
Must not: lock (the cache does), convert objects, or know about assumptions.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Callable, Collection, Mapping
from typing import Any, Generic, TypeVar

from vscheduler.model.cluster import cache_task_order
from vscheduler.model.compact import compacted
from vscheduler.model.facts import FieldWarning, TaskFacts

Raw = Mapping[str, object]
F = TypeVar("F")


class Table(Generic[F]):
    """One kind's objects by key; an object left out (malformed) has a raw object but no facts."""

    __slots__ = ("_sorted", "facts", "problems", "raw", "warnings")

    def __init__(self) -> None:
        self.raw: dict[str, Raw] = {}
        self.facts: dict[str, F] = {}
        self.problems: dict[str, tuple[str, str]] = {}
        """key -> (the object's label, `Kind namespace/name`; the converter's message)."""
        self.warnings: dict[str, tuple[str, tuple[FieldWarning, ...]]] = {}
        """key -> (the object's label; its facts' `warnings`), for facts that carry any."""
        self._sorted: tuple[F, ...] | None = None

    def put(self, key: str, raw: Raw, facts: F | None, label: str, problem: str = "") -> bool:
        """Store one object labelled `label` (`Kind namespace/name`) with its converter's
        `problem` ('' for none); whether its facts changed."""
        self.raw[key] = raw
        if problem:
            self.problems[key] = (label, problem)
        else:
            self.problems.pop(key, None)
        held: tuple[FieldWarning, ...] = getattr(facts, "warnings", ())
        if held:
            self.warnings[key] = (label, held)
        else:
            self.warnings.pop(key, None)
        if facts is None:
            return self._drop_facts(key)
        old = self.facts.get(key)
        if old is not None and old == facts:
            return False
        self.facts[key] = facts
        self._sorted = None
        return True

    def remove(self, key: str) -> bool:
        """Forget one object; whether it had facts."""
        self.raw.pop(key, None)
        self.problems.pop(key, None)
        self.warnings.pop(key, None)
        return self._drop_facts(key)

    def _drop_facts(self, key: str) -> bool:
        if self.facts.pop(key, None) is None:
            return False
        self._sorted = None
        return True

    def stale_keys(self, keep: Collection[str]) -> list[str]:
        """The keys held that are not in `keep`."""
        return [key for key in self.raw if key not in keep]

    def sorted_facts(self, key: Callable[[F], Any]) -> tuple[F, ...]:
        """Every facts object sorted by `key`, cached until the table changes."""
        if self._sorted is None:
            self._sorted = tuple(sorted(self.facts.values(), key=key))
        return self._sorted


class PodTable(Table[TaskFacts]):
    """Pods by uid: only the pods that matter (an irrelevant pod is removed, raw and all).

    `facts` is kept in snapshot order (creation time, then uid): a pod newer than every other
    is appended; any other insertion marks the order stale from its place on, and the next
    `ordered()` moves only the pods from there to the end, in order (creation times have
    one-second resolution, so pods created together arrive in any uid order; rebuilding the
    whole dict for them was 7 % of a W1 cycle in `py-spy`).
    """

    __slots__ = ("_holes", "_order", "_stale_from", "by_key", "members", "touched")

    TOUCHED_HELD = 65_536
    """Uids `touched` holds at most past the pods held (a replica that takes no snapshot, a
    standby, must not grow it without end); past that it holds None: not known."""

    def __init__(self) -> None:
        super().__init__()
        self.by_key: dict[str, str] = {}
        """`namespace/name` -> uid."""
        self.members: dict[str, int] = {}
        """Job key -> how many of the pods held are its (jobs without pods are left out)."""
        self._order: list[tuple[dt.datetime, str]] = []
        self._stale_from: int | None = None
        """The first place in `_order` from which `facts` may be out of order (None: in order):
        every pod before it holds its dict slot in order, every pod added since is after it."""
        self._holes = 0
        """Keys popped from `facts` since it was built (`model.compact`)."""
        self.touched: set[str] | None = set()
        """Uids put or removed since the owner last reset it (the cache, at each snapshot);
        None when there were too many to hold (`TOUCHED_HELD`)."""

    def put(
        self, key: str, raw: Raw, facts: TaskFacts | None, label: str, problem: str = ""
    ) -> bool:
        """Store a pod (by uid); a pod that does not matter (`facts` None) is removed."""
        if facts is None:
            return self.remove(key)
        self._touch(key)
        old = self.facts.get(key)
        changed = False
        other = self.by_key.get(facts.key)
        if other is not None and other != key:  # the name now belongs to a new pod
            changed = self.remove(other)
        if old is None or cache_task_order(old) != cache_task_order(facts):
            self._unorder(old)
            self._enter(cache_task_order(facts))
            if old is not None:  # a moved pod keeps its dict slot: all of it is to reorder
                self._stale_from = 0
        self.by_key[facts.key] = key
        if old is None or old.job != facts.job:
            self._leave(old)
            self.members[facts.job] = self.members.get(facts.job, 0) + 1
        return super().put(key, raw, facts, label, problem) or changed

    def remove(self, key: str) -> bool:
        """Forget a pod by uid; whether it was held."""
        self._touch(key)
        old = self.facts.get(key)
        if old is None:
            return super().remove(key)
        self._unorder(old)
        self._leave(old)
        if self.by_key.get(old.key) == key:
            del self.by_key[old.key]
        self._holes += 1
        return super().remove(key)

    def _touch(self, key: str) -> None:
        touched = self.touched
        if touched is not None:
            touched.add(key)
            if len(touched) > len(self.facts) + self.TOUCHED_HELD:
                self.touched = None

    def _leave(self, old: TaskFacts | None) -> None:
        if old is None:
            return
        left = self.members.get(old.job, 0) - 1
        if left > 0:
            self.members[old.job] = left
        else:
            self.members.pop(old.job, None)

    def ordered(self) -> dict[str, TaskFacts]:
        """`facts` in snapshot order (the table's own dict: copy it, by `dict.copy`, before
        handing it out; rebuilt when the keys popped reach a quarter, `model.compact`). Only
        the pods from the first stale place on are moved: pods created within the same second
        arrive in any uid order, so a stale order is usually a short tail."""
        if self._stale_from is not None:
            facts = self.facts
            tail = [(uid, facts.pop(uid)) for _, uid in self._order[self._stale_from :]]
            facts.update(tail)
            self._holes += len(tail)
            self._stale_from = None
        self.facts, self._holes = compacted(self.facts, self._holes)
        return self.facts

    def _enter(self, order: tuple[dt.datetime, str]) -> None:
        if self._order and order < self._order[-1]:
            i = bisect.bisect_right(self._order, order)
            self._order.insert(i, order)
            if self._stale_from is None or i < self._stale_from:
                self._stale_from = i
        else:
            self._order.append(order)

    def _unorder(self, old: TaskFacts | None) -> None:
        if old is None:
            return
        order = cache_task_order(old)
        i = bisect.bisect_left(self._order, order)
        if i < len(self._order) and self._order[i] == order:
            del self._order[i]
            if self._stale_from is not None and i < self._stale_from:
                self._stale_from -= 1


def same_version(held: Raw | None, obj: Raw) -> bool:
    """Both objects carry the same, non-empty resourceVersion (the object did not change)."""
    if held is None:
        return False
    old, new = held.get("metadata"), obj.get("metadata")
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return False
    version = new.get("resourceVersion")
    return isinstance(version, str) and bool(version) and old.get("resourceVersion") == version
