"""Dicts patched in place and copied every cycle, kept cheap to copy.

CPython copies a dict by cloning its table (a C memory copy, about 5 ns an entry) only while
at most a third of its slots are deleted ones (`dict.copy`; `dict(d)` only while none is);
else entry by entry, about eight times dearer (3,000 tasks: 0.09-0.12 ms instead of 14 µs).
A popped key leaves a deleted slot until the table is next resized, and a clone keeps them.
The maps the cache and the session copy every cycle lose keys every cycle (a pod gone; the
pods created in the same second as a new one moved behind it to keep the order), so their
owners count the keys they pop and copy with `dict.copy`, and `compacted` rebuilds a map
without its deleted slots once they reach a quarter of its entries.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def compacted(d: dict[K, V], holes: int) -> tuple[dict[K, V], int]:
    """`d` and its deleted slots (`holes`, the keys its owner popped since it was built): the
    same while they are fewer than a quarter of its entries, else `d` rebuilt without them
    (entry by entry, once) and 0."""
    if holes * 4 <= len(d):
        return d, holes
    return dict(d), 0
