"""Assumed binds and evictions: decisions sent to the API server that the watch has not shown yet.

Owns: which tasks are assumed bound (and where) or assumed releasing, each until a deadline
(the TTL backstop, on the injected clock's monotonic time); how an assumption changes the facts
a snapshot shows (`TaskFacts.restated`, memoised per underlying facts object).
Must not: lock (the cache holds its lock around every call), read the wall clock, or decide
when an assumption is confirmed (the cache does, from watch events).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Literal

from vscheduler.clock import Clock
from vscheduler.model.facts import TaskFacts
from vscheduler.model.status import TaskStatus

AssumedKind = Literal["bind", "evict"]

_EVICTABLE = frozenset({TaskStatus.BOUND, TaskStatus.RUNNING})


@dataclasses.dataclass(slots=True)
class _Assumption:
    node: str
    deadline: float
    base: TaskFacts | None = None
    """The facts `shown` was derived from (compared by identity)."""
    shown: TaskFacts | None = None


class Assumptions:
    """Assumed binds and evictions by task uid, each expiring after `ttl` seconds."""

    def __init__(self, clock: Clock, ttl: float) -> None:
        self._clock = clock
        self._ttl = ttl
        self._tables: dict[AssumedKind, dict[str, _Assumption]] = {"bind": {}, "evict": {}}
        self._held: dict[AssumedKind, dict[str, _Assumption]] = {"bind": {}, "evict": {}}
        """Assumptions whose API call is still queued or in flight: they do not expire (a long
        queue of binds must not let the next cycles place those pods again); `settle` starts
        their TTL once the call is done."""

    def add(self, kind: AssumedKind, uid: str, node: str = "", *, held: bool = False) -> None:
        """Assume `uid` (bound on `node`, or releasing): for the TTL, or until settled (held)."""
        self.discard(kind, uid)
        if held:
            self._held[kind][uid] = _Assumption(node, float("inf"))
            return
        # inserted last: each table stays in deadline order
        self._tables[kind][uid] = _Assumption(node, self._clock.monotonic() + self._ttl)

    def settle(self, kind: AssumedKind, uid: str) -> bool:
        """The held assumption's call is done: its TTL starts now. Whether it was held."""
        held = self._held[kind].pop(uid, None)
        if held is None:
            return False
        self._tables[kind][uid] = _Assumption(held.node, self._clock.monotonic() + self._ttl)
        return True

    def discard(self, kind: AssumedKind, uid: str) -> bool:
        """Drop one assumption; whether there was one."""
        dropped = self._tables[kind].pop(uid, None) is not None
        return self._held[kind].pop(uid, None) is not None or dropped

    def discard_all(self, uid: str) -> bool:
        """Drop every assumption about `uid`; whether there was one."""
        return any([self.discard("bind", uid), self.discard("evict", uid)])

    def has(self, kind: AssumedKind, uid: str) -> bool:
        """Whether `uid` is assumed bound (or releasing)."""
        return uid in self._tables[kind] or uid in self._held[kind]

    def uids(self) -> Iterator[str]:
        """Every assumed task (a task assumed both ways comes twice)."""
        for kind in ("bind", "evict"):
            yield from self._tables[kind]
            yield from self._held[kind]

    def expire(self) -> int:
        """Drop the assumptions whose TTL has passed; how many."""
        now = self._clock.monotonic()
        dropped = 0
        for table in self._tables.values():
            while table:
                uid, first = next(iter(table.items()))
                if first.deadline > now:
                    break
                del table[uid]
                dropped += 1
        return dropped

    def __len__(self) -> int:
        return sum(len(t) for t in (*self._tables.values(), *self._held.values()))

    def overlay(self, tasks: Mapping[str, TaskFacts]) -> dict[str, TaskFacts]:
        """The facts to show instead of `tasks`' own, for every assumed task in `tasks`."""
        out: dict[str, TaskFacts] = {}
        for uid, bind in self._all("bind"):
            facts = tasks.get(uid)
            if facts is not None:
                out[uid] = _shown(bind, facts, _bound)
        for uid, evict in self._all("evict"):
            facts = out.get(uid) or tasks.get(uid)
            if facts is not None:
                out[uid] = _shown(evict, facts, _releasing)
        return out

    def shown(self, uid: str, facts: TaskFacts) -> TaskFacts:
        """The facts a snapshot shows for one task (`overlay` for a single uid)."""
        changes: tuple[tuple[AssumedKind, Callable[[TaskFacts, str], TaskFacts]], ...] = (
            ("bind", _bound),
            ("evict", _releasing),
        )
        for kind, change in changes:
            assumption = self._tables[kind].get(uid) or self._held[kind].get(uid)
            if assumption is not None:
                facts = change(facts, assumption.node)
        return facts

    def _all(self, kind: AssumedKind) -> Iterator[tuple[str, _Assumption]]:
        yield from self._tables[kind].items()
        yield from self._held[kind].items()


def _shown(
    assumption: _Assumption, facts: TaskFacts, change: Callable[[TaskFacts, str], TaskFacts]
) -> TaskFacts:
    shown = assumption.shown
    if assumption.base is not facts or shown is None:
        shown = change(facts, assumption.node)
        assumption.base, assumption.shown = facts, shown
    return shown


def _bound(facts: TaskFacts, node: str) -> TaskFacts:
    """A pending task shown bound on `node` (a task already on a node is left as it is)."""
    if facts.status is not TaskStatus.PENDING or facts.node_name is not None:
        return facts
    return facts.restated(status=TaskStatus.BOUND, node_name=node)


def _releasing(facts: TaskFacts, _node: str) -> TaskFacts:
    """A task on a node shown releasing (a finished or unplaced task is left as it is)."""
    if facts.status not in _EVICTABLE:
        return facts
    return facts.restated(status=TaskStatus.RELEASING)
