"""reservation: resources held on a node for one pod keep every other pod off them (seed 004).

The reservations are the entries of one ConfigMap (format: `vscheduler.convert.reservation`;
the runtime watches the ConfigMap the arguments name). A reservation is live while it has not
expired (it holds until `expiresAt`, exclusive) and its pod has not been placed. Registers, only
when the ConfigMap holds something to act on:

- `filter_nodes(task, idx)` (predicate), vectorised, when a live reservation is on a node of the
  snapshot: a node passes unless its live reservations for other pods are what keeps the task
  off it. With R the sum of those reservations, the task fits the node if its request fits
  `idle - R` (allocated now), or, when it does not fit `idle` at all, `future_idle - R` (it
  would be pipelined); only the resources the task requests count. A node the task does not fit
  even without reservations passes here: the resource-fit check rejects it, as
  `Insufficient <resource>` (and preempt may evict there until the task fits beside R). A pod's
  own reservations never count against it; it may land on any node (a reservation does not steer
  its pod).
- `explain_node(task, i)` (predicateReason): the numbers, e.g. `node(s) reserved for other pods:
  cpu 2 free, 2 reserved, 1 requested; for team/train-0 until 2026-01-01T00:01:00Z`.
- `on_allocate` / `on_deallocate` (event handlers): a reserved pod placed in the session holds its
  resources in the ledger; its reservations stop counting for the others until it is taken off
  (so a gang whose members each hold a reservation is not kept off by its own members).
- `on_session_close()`: a `ReservationRelease` for every reservation that is done: its pod was
  bound in this cycle (reason `placed`), was already on a node when the session opened
  (`placed`), or it expired (`expired`). The runtime removes those keys from the ConfigMap.

The predicate's answer depends on which pod asks (its own reservations do not count), so the
plugin sets `node_local = False` while a live reservation belongs to a pending pod of the
snapshot; otherwise every pod sees the same reservations and the session may cache per class.

Arguments (not a Volcano plugin; Volcano's removed `reservation` plugin was another thing):
`configMapNamespace` ("kube-system") and `configMapName` ("vscheduler-reservations"). The factory
declares the ConfigMap it reads in its `needs` (`Needs.config_maps`). Docs: docs/reservation.md.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    AllocateEvent,
    ArgumentReader,
    BoolArray,
    DeallocateEvent,
    IntArray,
    LedgerView,
    Needs,
    PluginArgsError,
    PluginSession,
    Predicate,
    PredicateReason,
    Reservation,
    ReservationBook,
    ReservationRelease,
    Resources,
    SessionClose,
    Status,
    TaskState,
    TaskStatus,
    format_amount,
    unschedulable,
)

NAME: Final = "reservation"
DEFAULT_NAMESPACE: Final = "kube-system"
DEFAULT_NAME: Final = "vscheduler-reservations"
PLACED: Final = "placed"
EXPIRED: Final = "expired"
_PLACED_STATUSES: Final = frozenset(TaskStatus) - {
    TaskStatus.PENDING,
    TaskStatus.PIPELINED,
    TaskStatus.UNKNOWN,
}
"""A pod in one of these has been given a node (by this scheduler or another)."""
_LABEL: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


@dataclasses.dataclass(frozen=True, slots=True)
class Findings:
    """What the session opened on: the reserved pods it holds (by key), the reservations already
    done (key -> reason) and the live ones."""

    tasks: Mapping[str, TaskState]
    done: Mapping[str, str]
    live: tuple[Reservation, ...]


def findings(session: PluginSession, book: ReservationBook) -> Findings:
    """Sort the book's reservations into done (pod placed, or expired) and live."""
    wanted = {r.pod for r in book.entries}
    tasks = {t.key: t for t in session.tasks.values() if t.key in wanted}
    done: dict[str, str] = {}
    live: list[Reservation] = []
    for r in book.entries:
        task = tasks.get(r.pod)
        if task is not None and task.status in _PLACED_STATUSES:
            done[r.key] = PLACED
        elif r.expired(session.now):
            done[r.key] = EXPIRED
        else:
            live.append(r)
    return Findings(tasks, done, tuple(live))


class Releases(SessionClose):
    """The per-session plugin when no live reservation is on a node of the snapshot: it only
    reports, at close, the reservations that are done."""

    def __init__(self, session: PluginSession, book: ReservationBook, found: Findings) -> None:
        self._session = session
        self._book = book
        self._found = found

    def on_session_close(self) -> None:
        """Record every reservation that is done, in key order."""
        done, tasks = self._found.done, self._found.tasks
        for r in self._book.entries:
            reason = done.get(r.key)
            task = tasks.get(r.pod)
            if reason is None and task is not None and task.status is TaskStatus.BINDING:
                reason = PLACED
            if reason is not None:
                release = ReservationRelease(
                    config_map=self._book.key, key=r.key, pod=r.pod, node=r.node, reason=reason
                )
                self._session.record_release(release)


class Reserved(Releases, Predicate, PredicateReason, AllocateEvent, DeallocateEvent):
    """The per-session plugin when live reservations are on nodes of the snapshot."""

    def __init__(self, session: PluginSession, book: ReservationBook, found: Findings) -> None:
        super().__init__(session, book, found)
        ledger = self._ledger = session.ledger
        self._reserved: IntArray = np.zeros_like(ledger.allocatable)
        self._has: BoolArray = np.zeros(len(ledger), dtype=np.bool_)
        self._own: dict[str, list[tuple[int, IntArray]]] = {}
        self._on_node: dict[int, list[tuple[Reservation, IntArray]]] = {}
        self._placed: set[str] = set()
        """Reserved pods placed in this session (their reservations are not counted)."""
        for r in found.live:
            i = ledger.index.get(r.node, -1)
            if i < 0:
                continue
            row = _row(ledger, r.resources)
            self._reserved[i] += row
            self._has[i] = True
            self._own.setdefault(r.pod, []).append((i, row))
            self._on_node.setdefault(i, []).append((r, row))
        tasks = found.tasks
        self.node_local = not any(
            pod in tasks and tasks[pod].status is TaskStatus.PENDING for pod in self._own
        )

    def on_allocate(self, task: TaskState) -> None:
        """A reserved pod placed in this session holds its resources in the ledger now: its
        reservations stop counting against the others (until it is taken off again)."""
        self._hold(task, -1)

    def on_deallocate(self, task: TaskState) -> None:
        """A reserved pod taken off its node in this session: its reservations count again."""
        self._hold(task, 1)

    def _hold(self, task: TaskState, sign: int) -> None:
        own = self._own.get(task.key)
        if not own or (sign < 0) == (task.key in self._placed):
            return
        if sign < 0:
            self._placed.add(task.key)
        else:
            self._placed.discard(task.key)
        for i, row in own:
            self._reserved[i] += sign * row

    def filter_nodes(self, task: TaskState, idx: IntArray) -> BoolArray:
        """Whether each node of `idx` still fits the task once other pods' reservations are
        held back (a node it fits nowhere near passes: the fit check rejects it)."""
        ok = np.ones(len(idx), dtype=np.bool_)
        rows = np.flatnonzero(self._has[idx])
        if not len(rows):
            return ok
        need = self._session.request_row(task)
        cols = np.flatnonzero(need)
        if not len(cols):
            return ok
        nodes = idx[rows]
        held = self._held(task, nodes)[:, cols]
        wanted = need[cols]
        idle = self._ledger.idle[nodes][:, cols]
        future = self._ledger.future[nodes][:, cols]
        fits_idle = (idle >= wanted).all(axis=1)
        fits_future = (future >= wanted).all(axis=1)
        now = (idle - held >= wanted).all(axis=1)
        later = ~fits_idle & (future - held >= wanted).all(axis=1)
        ok[rows] = now | later | ~(fits_idle | fits_future)
        return ok

    def explain_node(self, task: TaskState, i: int) -> Status | None:
        """The amounts free, reserved and requested of each resource the reservations keep the
        task from, and whose reservations they are."""
        need = self._session.request_row(task)
        held = self._held(task, np.array([i], dtype=np.int64))[0]
        ledger = self._ledger
        idle, future = ledger.idle[i], ledger.future[i]
        cols = np.flatnonzero(need)
        basis, free = (
            (idle, "free") if (idle[cols] >= need[cols]).all() else (future, "free after releases")
        )
        short = [int(k) for k in cols if basis[k] - held[k] < need[k]]
        if not short:
            return None
        amounts = "; ".join(
            _amounts(ledger.dims[k], int(basis[k]), free, int(held[k]), int(need[k])) for k in short
        )
        holders = ", ".join(
            f"{r.pod} until {r.expires_at.strftime('%Y-%m-%dT%H:%M:%SZ')}"
            for r, row in self._on_node.get(i, ())
            if r.pod != task.key and r.pod not in self._placed and row[short].any()
        )
        return unschedulable(f"node(s) reserved for other pods: {amounts}; for {holders}")

    def _held(self, task: TaskState, nodes: IntArray) -> IntArray:
        """The reservations of other pods on each of `nodes` (a fresh array)."""
        held: IntArray = self._reserved[nodes]
        if task.key not in self._placed:
            for i, row in self._own.get(task.key, ()):
                held[nodes == i] -= row
        return held


class Inert:
    """What an empty (or absent) reservation ConfigMap opens: a plugin with no hooks."""


class Factory:
    """Lives as long as the policy: the ConfigMap whose reservations the plugin reads."""

    name = NAME
    plugin = (Releases, Reserved, Inert)

    def __init__(self, namespace: str, config_map: str) -> None:
        self.namespace = namespace
        self.config_map = config_map
        self.needs = Needs(config_maps=((namespace, config_map),))
        """The ConfigMap it reads: the runtime watches it."""

    def open(self, session: PluginSession) -> Releases | Inert:
        """A fresh plugin for `session`: with hooks only when the ConfigMap holds entries."""
        book = session.snapshot.reservations.get(f"{self.namespace}/{self.config_map}")
        if book is None or not book.entries:
            return Inert()
        found = findings(session, book)
        if any(r.node in session.ledger.index for r in found.live):
            return Reserved(session, book, found)
        return Releases(session, book, found)


def build(arguments: Mapping[str, object]) -> Factory:
    """Read `configMapNamespace` and `configMapName`; every problem is reported at once."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    namespace = reader.str("configMapNamespace", DEFAULT_NAMESPACE)
    config_map = reader.str("configMapName", DEFAULT_NAME)
    problems = list(reader.problems)
    if not (len(namespace) <= 63 and _LABEL.fullmatch(namespace)):
        what = "a namespace name (at most 63 lowercase letters, digits and '-')"
        problems.append(_bad("configMapNamespace", what, namespace))
    if not (len(config_map) <= 253 and _SUBDOMAIN.fullmatch(config_map)):
        what = "a ConfigMap name (at most 253 lowercase letters, digits, '-' and '.')"
        problems.append(_bad("configMapName", what, config_map))
    try:
        reader.finish()
    except PluginArgsError as err:
        problems.extend(p for p in err.problems if p not in problems)
    if problems:
        raise PluginArgsError(*problems)
    return Factory(namespace, config_map)


def _bad(key: str, what: str, value: str) -> str:
    return f"plugin {NAME}: arguments.{key}: must be {what}, got {value!r}"


def _amounts(dim: str, basis: int, free: str, held: int, need: int) -> str:
    """`cpu 2 free, 2 reserved, 1 requested`."""
    return (
        f"{dim} {format_amount(dim, basis)} {free}, {format_amount(dim, held)} reserved, "
        f"{format_amount(dim, need)} requested"
    )


def _row(ledger: LedgerView, resources: Resources) -> IntArray:
    """`resources` as a ledger row; resources the ledger has no column for are left out (no
    node has them and no task asks for them, so holding them keeps nothing off a node)."""
    return ledger.vector(Resources({n: a for n, a in resources.items() if n in ledger.dim_index}))
