"""Resources: an immutable vector of integer resource amounts.

CPU is held in millicores, every other resource (memory, ephemeral-storage, hugepages-*,
nvidia.com/gpu, ...) in its base unit as an integer (bytes, devices), rounded up as Kubernetes'
`Quantity.Value()` rounds. Zero entries are dropped, so `Resources()` is the empty request.

The scheduler's hot loops do not use this class: the session ledger keeps node accounting in
NumPy arrays. This class is for facts and for plugin bookkeeping (queues, jobs, shares).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Final

CPU: Final = "cpu"
MEMORY: Final = "memory"
PODS: Final = "pods"


class Resources:
    """An immutable mapping from resource name to a positive (or negative) integer amount."""

    __slots__ = ("_hash", "_v")

    _v: dict[str, int]
    _hash: int | None

    def __init__(self, values: Mapping[str, int] | None = None, /, **named: int) -> None:
        merged: dict[str, int] = {}
        for source in (values or {}, named):
            for name, amount in source.items():
                if amount:
                    merged[name] = int(amount)
        self._v = merged
        self._hash = None

    @classmethod
    def _raw(cls, values: dict[str, int]) -> Resources:
        made = object.__new__(cls)
        made._v = values
        made._hash = None
        return made

    # --- reading ------------------------------------------------------------------------------
    def get(self, name: str) -> int:
        """The amount of `name`, 0 when absent."""
        return self._v.get(name, 0)

    @property
    def milli_cpu(self) -> int:
        """CPU in millicores."""
        return self._v.get(CPU, 0)

    @property
    def memory(self) -> int:
        """Memory in bytes."""
        return self._v.get(MEMORY, 0)

    def names(self) -> tuple[str, ...]:
        """The resource names with a non-zero amount, sorted."""
        return tuple(sorted(self._v))

    def items(self) -> Iterator[tuple[str, int]]:
        """(name, amount) pairs, sorted by name."""
        for name in sorted(self._v):
            yield name, self._v[name]

    def unordered_items(self) -> Iterable[tuple[str, int]]:
        """(name, amount) pairs in no set order, for sums and maxima over them (hot paths)."""
        return self._v.items()

    def as_dict(self) -> dict[str, int]:
        """A fresh dict of the non-zero amounts."""
        return dict(self._v)

    def is_empty(self) -> bool:
        """No resource at all (a best-effort request)."""
        return not self._v

    # --- algebra ------------------------------------------------------------------------------
    def __add__(self, other: Resources) -> Resources:
        if not other._v:
            return self  # immutable: the operand itself is the sum
        if not self._v:
            return other
        out = dict(self._v)
        for name, amount in other._v.items():
            total = out.get(name, 0) + amount
            if total:
                out[name] = total
            else:
                out.pop(name, None)
        return Resources._raw(out)

    def __sub__(self, other: Resources) -> Resources:
        if not other._v:
            return self  # immutable: nothing to take away
        out = dict(self._v)
        for name, amount in other._v.items():
            total = out.get(name, 0) - amount
            if total:
                out[name] = total
            else:
                out.pop(name, None)
        return Resources._raw(out)

    def __neg__(self) -> Resources:
        return Resources._raw({name: -amount for name, amount in self._v.items()})

    def scale(self, factor: float) -> Resources:
        """Every amount multiplied by `factor`, rounded down to an integer."""
        return Resources({name: int(amount * factor) for name, amount in self._v.items()})

    def clamp_min_zero(self) -> Resources:
        """Negative amounts become zero (itself when none is negative)."""
        for amount in self._v.values():
            if amount < 0:
                return Resources._raw({n: a for n, a in self._v.items() if a > 0})
        return self

    def max(self, other: Resources) -> Resources:
        """The per-resource maximum."""
        names = set(self._v) | set(other._v)
        return Resources({n: max(self.get(n), other.get(n)) for n in names})

    def min(self, other: Resources) -> Resources:
        """The per-resource minimum (an absent resource counts as 0)."""
        names = set(self._v) | set(other._v)
        return Resources({n: min(self.get(n), other.get(n)) for n in names})

    def min_named(self, limit: Resources) -> Resources:
        """Per-resource minimum, where a resource `limit` does not name is not limited."""
        return Resources(
            {n: (min(a, limit._v[n]) if n in limit._v else a) for n, a in self._v.items()}
        )

    # --- comparison ---------------------------------------------------------------------------
    def fits_in(self, other: Resources) -> bool:
        """Every amount this names is <= the same amount in `other` (absent counts as 0)."""
        return all(amount <= other._v.get(name, 0) for name, amount in self._v.items())

    def fits_in_named(self, limit: Resources) -> bool:
        """Like `fits_in`, but only the resources `limit` names are checked."""
        return all(amount <= limit._v[name] for name, amount in self._v.items() if name in limit._v)

    def exceeds_any(self, limit: Resources) -> tuple[str, ...]:
        """The names (sorted) whose amount is greater than in `limit` (absent counts as 0)."""
        return tuple(sorted(n for n, a in self._v.items() if a > limit._v.get(n, 0)))

    def any_less_than(self, other: Resources) -> bool:
        """Some resource `other` names is below its amount in `other`."""
        return any(self._v.get(name, 0) < amount for name, amount in other._v.items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Resources) and self._v == other._v

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._v.items()))
        return self._hash

    def __bool__(self) -> bool:
        return bool(self._v)

    def __repr__(self) -> str:
        return "Resources(" + ", ".join(f"{n}={a}" for n, a in self.items()) + ")"

    def __str__(self) -> str:
        return format_resources(self)


EMPTY: Final = Resources()


def total(parts: Iterable[Resources]) -> Resources:
    """The sum of `parts`."""
    acc: dict[str, int] = {}
    for part in parts:
        for name, amount in part._v.items():
            acc[name] = acc.get(name, 0) + amount
    return Resources(acc)


def format_amount(name: str, amount: int) -> str:
    """A human form: cpu in cores or millicores, byte resources in Mi/Gi, counts as is."""
    if name == CPU:
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    if name == MEMORY or name.startswith(("hugepages-", "ephemeral-storage")):
        for unit, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if amount and amount % size == 0:
                return f"{amount // size}{unit}"
    return str(amount)


def format_resources(res: Resources) -> str:
    """`cpu 2, memory 4Gi`: the amounts of `res`, for messages."""
    if res.is_empty():
        return "nothing"
    return ", ".join(f"{name} {format_amount(name, amount)}" for name, amount in res.items())
