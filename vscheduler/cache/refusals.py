"""Refused evictions: the pods the Eviction API would not evict, each backing off on its own.

A refusal (a PodDisruptionBudget allows no disruption: the Eviction API answers 429) puts the
pod in backoff: for `INITIAL_BACKOFF` seconds after its first refusal, doubling with every
refusal up to `MAX_BACKOFF`, and never less than the `Retry-After` the API server sent. While
in backoff the snapshot shows the pod with `TaskFacts.eviction_refused`, and preempt, reclaim
and shuffle do not choose it as a victim: the next plan takes victims that can go.

A backoff ends early when the pod is deleted, or when a PodDisruptionBudget of its namespace
is deleted or allows a disruption again (`lift`): the budget that refused is likely lifted.
The refusal count of a pod is kept until then, so a pod refused again backs off longer.

Owns: the backoff per pod uid, on the injected clock's monotonic time; how a backoff changes
the facts a snapshot shows (`dataclasses.replace`, memoised per underlying facts object).
Must not: lock (the cache holds its lock around every call) or read the wall clock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Final

from vscheduler.clock import Clock
from vscheduler.model.facts import TaskFacts

INITIAL_BACKOFF: Final = 5.0
"""Seconds a pod is not chosen as a victim after its first refused eviction."""
MAX_BACKOFF: Final = 120.0
"""The longest backoff, however often the pod's eviction was refused."""


@dataclasses.dataclass(slots=True)
class _Refused:
    refusals: int
    until: float
    """The monotonic time the backoff ends."""
    base: TaskFacts | None = None
    """The facts `shown` was derived from (compared by identity)."""
    shown: TaskFacts | None = None


def backoff(refusals: int, retry_after: float | None = None) -> float:
    """Seconds of backoff after the `refusals`-th refusal (1-based), at least `retry_after`."""
    doubled = min(MAX_BACKOFF, INITIAL_BACKOFF * 2.0 ** min(refusals - 1, 32))
    return max(doubled, retry_after or 0.0)


class EvictionBackoff:
    """The pods whose eviction was refused, by uid, and how long each backs off."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._pods: dict[str, _Refused] = {}
        self._waiting: set[str] = set()
        """The pods still in backoff when `expire` last looked."""

    def refuse(self, uid: str, retry_after: float | None = None) -> float:
        """The eviction of `uid` was refused: its backoff starts (or grows); its length."""
        held = self._pods.get(uid)
        refusals = 1 if held is None else held.refusals + 1
        delay = backoff(refusals, retry_after)
        until = self._clock.monotonic() + delay
        if held is None:
            self._pods[uid] = _Refused(refusals, until)
        else:
            held.refusals, held.until = refusals, until
        self._waiting.add(uid)
        return delay

    def forget(self, uid: str) -> bool:
        """The pod is gone (or was evicted): drop its record; whether it was in backoff."""
        self._pods.pop(uid, None)
        waiting = uid in self._waiting
        self._waiting.discard(uid)
        return waiting

    def lift(self, uids: Iterable[str]) -> bool:
        """End the backoff (and the count) of each of `uids`; whether one was in backoff."""
        lifted = False
        for uid in uids:
            lifted |= self.forget(uid)
        return lifted

    def expire(self) -> bool:
        """Whether a backoff ended since the last call (a cycle may choose that pod again)."""
        now = self._clock.monotonic()
        ended = {uid for uid in self._waiting if self._pods[uid].until <= now}
        self._waiting -= ended
        return bool(ended)

    def refused(self, uid: str) -> bool:
        """Whether `uid` is in backoff now."""
        held = self._pods.get(uid)
        return held is not None and held.until > self._clock.monotonic()

    def uids(self) -> list[str]:
        """Every pod with a refusal on record (in backoff or not)."""
        return list(self._pods)

    def __len__(self) -> int:
        return len(self._pods)

    def overlay(self, tasks: Mapping[str, TaskFacts]) -> dict[str, TaskFacts]:
        """The facts to show instead of `tasks`' own for every pod in backoff in `tasks`."""
        now = self._clock.monotonic()
        out: dict[str, TaskFacts] = {}
        for uid, held in self._pods.items():
            facts = tasks.get(uid)
            if facts is None or held.until <= now:
                continue
            if held.base is not facts or held.shown is None:
                held.base = facts
                held.shown = facts.restated(eviction_refused=True)
            out[uid] = held.shown
        return out
