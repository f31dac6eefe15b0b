"""Priority queues of queues and jobs, ordered by the session's order points.

A binary heap, as Volcano's `util.PriorityQueue`: the order is read when items are pushed and
popped. An item's order changes only while it is out of the heap being worked on (a job's share
grows as its tasks are placed, then it is pushed back), so the heap stays valid. Ties cannot
happen: the session's comparisons are total.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Entry(Generic[T]):
    __slots__ = ("compare", "item")

    def __init__(self, item: T, compare: Callable[[T, T], int]) -> None:
        self.item = item
        self.compare = compare

    def __lt__(self, other: _Entry[T]) -> bool:
        return self.compare(self.item, other.item) < 0


class PriorityQueue(Generic[T]):
    """Pop returns the first item under `compare`."""

    __slots__ = ("_compare", "_heap")

    def __init__(self, compare: Callable[[T, T], int], items: Iterable[T] = ()) -> None:
        self._compare = compare
        self._heap: list[_Entry[T]] = [_Entry(item, compare) for item in items]
        heapq.heapify(self._heap)

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)

    def push(self, item: T) -> None:
        """Adds `item`."""
        heapq.heappush(self._heap, _Entry(item, self._compare))

    def pop(self) -> T:
        """Removes and returns the first item."""
        return heapq.heappop(self._heap).item
