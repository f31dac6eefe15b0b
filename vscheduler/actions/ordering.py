"""Priority queues of queues and jobs, ordered by the session's order points.

A binary heap, as Volcano's `util.PriorityQueue`: the order is read when items are pushed and
popped (for jobs, once per push as a key when the plugins give keys: `Dispatcher.job_key`). An
item's order changes only while it is out of the heap being worked on (a job's share grows as its
tasks are placed, then it is pushed back), so the heap stays valid. Ties cannot happen: the
session's comparisons are total.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class _Entry(Generic[T]):
    __slots__ = ("compare", "item")

    def __init__(self, item: T, compare: Callable[[T, T], int]) -> None:
        self.item = item
        self.compare = compare

    def __lt__(self, other: _Entry[T]) -> bool:
        return self.compare(self.item, other.item) < 0


class PriorityQueue(Generic[T]):
    """Pop returns the first item under `compare`. With `key` (an item's order as a tuple, or
    None when it has none: `Dispatcher.job_key`), items are heaped by key, compared as tuples;
    once `key` answers None the queue compares items with `compare` for good."""

    __slots__ = ("_compare", "_count", "_heap", "_key")

    def __init__(
        self,
        compare: Callable[[T, T], int],
        items: Iterable[T] = (),
        *,
        key: Callable[[T], tuple[object, ...] | None] | None = None,
    ) -> None:
        self._compare = compare
        self._key = key
        self._count = itertools.count()
        self._heap: list[Any] = []
        for item in items:
            entry = self._entry(item)  # first: it may remake the heap
            self._heap.append(entry)
        heapq.heapify(self._heap)

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)

    def push(self, item: T) -> None:
        """Adds `item`."""
        entry = self._entry(item)  # first: it may remake the heap
        heapq.heappush(self._heap, entry)

    def pop(self) -> T:
        """Removes and returns the first item."""
        entry = heapq.heappop(self._heap)
        item: T = entry[2] if self._key is not None else entry.item
        return item

    def _entry(self, item: T) -> Any:
        """`item`'s heap entry: (key, count, item), the count breaking ties (none among jobs:
        their key ends with the uid) before items could be compared; or an entry that
        compares, the heap remade of such entries the first time `key` answers None."""
        if self._key is not None:
            key = self._key(item)
            if key is not None:
                return (key, next(self._count), item)
            self._compare_from_now()
        return _Entry(item, self._compare)

    def _compare_from_now(self) -> None:
        """Entries that compare items: the keyed ones made again, the heap restored."""
        self._key = None
        self._heap = [_Entry(entry[2], self._compare) for entry in self._heap]
        heapq.heapify(self._heap)
