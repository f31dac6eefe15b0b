"""Capped exponential backoff with jitter, for retrying list and watch calls.

Pure: the randomness comes from an injected source (a `random.Random` in production, seeded or
scripted in tests), so delays are reproducible.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

_MAX_EXPONENT = 64


class FractionSource(Protocol):
    """A source of uniform numbers in [0, 1): `random.Random` is one."""

    def random(self) -> float:
        """The next number."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class Backoff:
    """`initial * factor**(n-1)` seconds after the n-th failure in a row, stretched by up to
    `jitter` (a fraction) and never more than `cap`."""

    initial: float = 0.5
    cap: float = 30.0
    factor: float = 2.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if not (0 < self.initial <= self.cap and self.factor >= 1 and self.jitter >= 0):
            raise ValueError(f"invalid backoff {self}")

    def delay(self, failures: int, jitter: FractionSource) -> float:
        """Seconds to wait after `failures` (>= 1) failures in a row."""
        exponent = min(max(failures, 1) - 1, _MAX_EXPONENT)
        base = min(self.cap, self.initial * self.factor**exponent)
        return min(self.cap, base * (1.0 + self.jitter * jitter.random()))
