"""Priority queues of queues and jobs, ordered by the session's order points.

Orders change as allocation proceeds (a queue's share grows), so every pop re-reads the order:
a binary heap would go stale. The collections here are small (queues, jobs of one queue), and a
pop is a linear scan with the session's comparison — exactly the order a fresh sort would give.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class LiveQueue(Generic[T]):
    """Pop always returns the current first item under `compare` (ties: insertion order)."""

    __slots__ = ("_compare", "_items")

    def __init__(self, compare: Callable[[T, T], int], items: Iterable[T] = ()) -> None:
        self._compare = compare
        self._items: list[T] = list(items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def push(self, item: T) -> None:
        """Adds `item`."""
        self._items.append(item)

    def pop(self) -> T:
        """Removes and returns the first item under the current order."""
        items, compare = self._items, self._compare
        best = 0
        for i in range(1, len(items)):
            if compare(items[i], items[best]) < 0:
                best = i
        return items.pop(best)
