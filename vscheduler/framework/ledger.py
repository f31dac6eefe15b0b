"""The session's node accounting, as NumPy arrays: one row per node, one column per resource.

    idle      = allocatable - used            (kept explicitly; `idle + used == allocatable`,
                                               less what nominated pipelined tasks keep)
    used      = requests of tasks in OCCUPYING statuses (Allocated, Binding, Bound, Running)
    releasing = requests of tasks being evicted or deleted (still part of `used`)
    pipelined = requests of tasks waiting for releasing resources (not part of `used`)
    future_idle = idle + releasing - pipelined

Every change appends the node's index to a change log, so per-class evaluation caches
(`framework.placement`) recompute only the nodes that changed since they last looked.
Only the session's Statement calls the mutating methods; plugins see a `LedgerView`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from vscheduler.model.facts import NodeFacts
from vscheduler.model.resources import CPU, MEMORY, Resources

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
Placed = tuple[list[int], list[IntArray]]
"""Tasks on nodes: their node indices and request rows, index for index."""


class LedgerView(Protocol):
    """The ledger as plugins see it: to read (the arrays are the session's own: never write
    them; only the Statement changes the accounting)."""

    @property
    def dims(self) -> tuple[str, ...]:
        """The columns: cpu, memory, then every other resource name, sorted."""
        ...

    @property
    def dim_index(self) -> Mapping[str, int]:
        """Resource name -> its column."""
        ...

    @property
    def nodes(self) -> tuple[NodeFacts, ...]:
        """The rows' nodes."""
        ...

    @property
    def names(self) -> tuple[str, ...]:
        """The rows' node names."""
        ...

    @property
    def index(self) -> Mapping[str, int]:
        """Node name -> its row."""
        ...

    @property
    def allocatable(self) -> IntArray:
        """Each node's allocatable."""
        ...

    @property
    def used(self) -> IntArray:
        """What occupying tasks request on each node."""
        ...

    @property
    def idle(self) -> IntArray:
        """allocatable - used."""
        ...

    @property
    def pipelined(self) -> IntArray:
        """What pipelined tasks (waiting for room being released) request on each node."""
        ...

    @property
    def future(self) -> IntArray:
        """idle + releasing - pipelined."""
        ...

    @property
    def pods_used(self) -> IntArray:
        """Pods on each node (pipelined ones included)."""
        ...

    @property
    def pods_max(self) -> IntArray:
        """Each node's pod limit."""
        ...

    @property
    def pods_releasing(self) -> IntArray:
        """Pods releasing on each node (counted in `pods_used` until they are gone)."""
        ...

    @property
    def pods_free(self) -> IntArray:
        """pods_max - pods_used: the pod slots free now."""
        ...

    @property
    def pods_free_future(self) -> IntArray:
        """pods_free + pods_releasing: the pod slots free once releasing pods are gone."""
        ...

    @property
    def full_now(self) -> int:
        """How many nodes have no pod slot free now (0: no fit needs to look)."""
        ...

    @property
    def full_future(self) -> int:
        """How many nodes have no pod slot free in the future."""
        ...

    def __len__(self) -> int: ...

    def vector(self, res: Resources) -> IntArray:
        """`res` as a row over the dims."""
        ...

    def resources_of(self, row: IntArray) -> Resources:
        """A row turned back into Resources."""
        ...

    def future_idle(self) -> IntArray:
        """idle + releasing - pipelined, for every node (a fresh array)."""
        ...

    def ready(self) -> BoolArray:
        """Which nodes are Ready (read-only)."""
        ...

    def ready_sums(self) -> tuple[Resources, Resources]:
        """The Ready nodes' allocatable, and what the pods on them use, summed."""
        ...


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class Loaded:
    """A ledger as its session's load left it, before any other change (`Ledger.loaded`): a
    later session over the very same nodes and dimensions starts from it (`Ledger.resumed`) and
    loads only the tasks that changed. Never written: a resumed ledger copies what it changes."""

    nodes: tuple[NodeFacts, ...]
    dims: tuple[str, ...]
    dim_index: dict[str, int]
    names: tuple[str, ...]
    index: dict[str, int]
    allocatable: IntArray
    pods_max: IntArray
    used: IntArray
    pipelined: IntArray
    releasing: IntArray
    pods_used: IntArray
    pods_releasing: IntArray


class Ledger:
    """Node accounting for one session."""

    _ready: BoolArray | None = None
    """`ready` (made on first use)."""
    _ready_sums: tuple[int, Resources, Resources] | None = None
    """`ready_sums` and the log position it was made at."""

    def __init__(self, nodes: Sequence[NodeFacts], extra_dims: Iterable[str] = ()) -> None:
        names: set[str] = set(extra_dims)
        for node in nodes:
            names.update(node.allocatable.names())
        names.discard(CPU)
        names.discard(MEMORY)
        self._shape(tuple(nodes), (CPU, MEMORY, *sorted(names)))
        count, width = len(self.nodes), len(self.dims)
        self.allocatable: IntArray = np.zeros((count, width), dtype=np.int64)
        for i, node in enumerate(self.nodes):
            self.allocatable[i] = self.vector(node.allocatable)
        self.allocatable.flags.writeable = False  # shared with later sessions (`Loaded`)
        self.pods_max: IntArray = np.array([n.max_pods for n in self.nodes], dtype=np.int64)
        self.pods_max.flags.writeable = False
        self.used: IntArray = np.zeros((count, width), dtype=np.int64)
        self.releasing: IntArray = np.zeros((count, width), dtype=np.int64)
        self.pipelined: IntArray = np.zeros((count, width), dtype=np.int64)
        self.pods_used: IntArray = np.zeros(count, dtype=np.int64)
        self.pods_releasing: IntArray = np.zeros(count, dtype=np.int64)
        """Pods releasing on each node: their slots are free in the future (as `future`)."""
        self._derive()
        self._log: list[int] = []

    @classmethod
    def resumed(
        cls, loaded: Loaded, nodes: Sequence[NodeFacts], changed: Sequence[int] = ()
    ) -> Ledger:
        """A ledger as `loaded` was right after its load, over `nodes`: the same nodes by name
        and order, with the same resource names, whose rows `changed` hold new facts (their
        allocatable and pod counts read again). The caller checked that this holds."""
        ledger = cls.__new__(cls)
        ledger.dims, ledger.dim_index = loaded.dims, loaded.dim_index
        ledger.nodes, ledger.names, ledger.index = tuple(nodes), loaded.names, loaded.index
        ledger.allocatable, ledger.pods_max = loaded.allocatable, loaded.pods_max
        if changed:
            ledger.allocatable, ledger.pods_max = loaded.allocatable.copy(), loaded.pods_max.copy()
            for i in changed:
                ledger.allocatable[i] = ledger.vector(ledger.nodes[i].allocatable)
                ledger.pods_max[i] = ledger.nodes[i].max_pods
            ledger.allocatable.flags.writeable = False
            ledger.pods_max.flags.writeable = False
        ledger.used, ledger.pipelined = loaded.used.copy(), loaded.pipelined.copy()
        ledger.releasing = loaded.releasing.copy()
        ledger.pods_used = loaded.pods_used.copy()
        ledger.pods_releasing = loaded.pods_releasing.copy()
        ledger._derive()
        ledger._log = []
        return ledger

    def loaded(self) -> Loaded:
        """This ledger as it stands (call it right after `load`), for a later session."""
        return Loaded(
            self.nodes,
            self.dims,
            self.dim_index,
            self.names,
            self.index,
            self.allocatable,
            self.pods_max,
            self.used.copy(),
            self.pipelined.copy(),
            self.releasing.copy(),
            self.pods_used.copy(),
            self.pods_releasing.copy(),
        )

    def _shape(self, nodes: tuple[NodeFacts, ...], dims: tuple[str, ...]) -> None:
        self.dims: tuple[str, ...] = dims
        self.dim_index: dict[str, int] = {d: i for i, d in enumerate(dims)}
        self.nodes: tuple[NodeFacts, ...] = nodes
        self.names: tuple[str, ...] = tuple(n.name for n in nodes)
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}

    def _derive(self) -> None:
        """The arrays every mutation keeps in step, made from used, releasing and pipelined."""
        self.idle: IntArray = self.allocatable - self.used
        self.future: IntArray = self.idle + self.releasing - self.pipelined
        """idle + releasing - pipelined, kept in step by every mutation."""
        self.pods_free: IntArray = self.pods_max - self.pods_used
        """pods_max - pods_used, kept in step by every mutation."""
        self.pods_free_future: IntArray = self.pods_free + self.pods_releasing
        """pods_free + pods_releasing, kept in step by every mutation."""
        self.full_now: int = int(np.count_nonzero(self.pods_free <= 0))
        self.full_future: int = int(np.count_nonzero(self.pods_free_future <= 0))

    def __len__(self) -> int:
        return len(self.nodes)

    def vector(self, res: Resources) -> IntArray:
        """`res` as a row over this ledger's dims (resources not in dims must not be passed)."""
        row = np.zeros(len(self.dims), dtype=np.int64)
        for name, amount in res.items():
            row[self.dim_index[name]] = amount
        return row

    def future_idle(self) -> IntArray:
        """idle + releasing - pipelined, for every node (a fresh array)."""
        return self.future.copy()

    def ready(self) -> BoolArray:
        """Which nodes are Ready (read-only; read from the nodes once per ledger: the plugins
        that sum the Ready nodes' room each ask it as their session opens)."""
        if self._ready is None:
            mask = np.fromiter((n.ready for n in self.nodes), dtype=np.bool_, count=len(self.nodes))
            mask.flags.writeable = False
            self._ready = mask
        return self._ready

    def ready_sums(self) -> tuple[Resources, Resources]:
        """The allocatable of the Ready nodes, and what the pods on them use, summed: made
        once while nothing changes (every plugin that reads them asks as its session opens)."""
        held = self._ready_sums
        if held is not None and held[0] == len(self._log):
            return held[1], held[2]
        ready = self.ready()
        if ready.all():
            allocatable, used = self.allocatable.sum(axis=0), self.used.sum(axis=0)
        else:
            allocatable, used = self.allocatable[ready].sum(axis=0), self.used[ready].sum(axis=0)
        sums = self.resources_of(allocatable), self.resources_of(used)
        self._ready_sums = (len(self._log), *sums)
        return sums

    def resources_of(self, row: IntArray) -> Resources:
        """A row turned back into Resources."""
        return Resources({d: int(row[i]) for i, d in enumerate(self.dims) if row[i]})

    # --- the change log -----------------------------------------------------------------------
    @property
    def log_position(self) -> int:
        """How many changes have happened so far."""
        return len(self._log)

    def changed_since(self, position: int) -> list[int]:
        """The node indices changed after `position` (may repeat)."""
        return self._log[position:]

    # --- loading (the session, at open) ---------------------------------------------------------
    def load(
        self, occupying: Placed, pipelined: Placed, releasing: Placed, *, sign: int = 1
    ) -> None:
        """The tasks already on nodes when the session opens, at once: each is (node indices,
        request rows), one entry per task (`releasing` ones are in `occupying` too); `sign` -1
        takes such tasks out again (those of a resumed ledger that changed or went). Not
        logged: no evaluation cache exists yet."""
        width = len(self.dims)
        for (nodes, rows), target, pods in (
            (occupying, self.used, self.pods_used),
            (pipelined, self.pipelined, self.pods_used),
            (releasing, self.releasing, self.pods_releasing),
        ):
            if not len(nodes):
                continue
            at = np.asarray(nodes, dtype=np.intp)
            add = np.asarray(rows, dtype=np.int64).reshape(len(at), width)
            np.add.at(target, at, add if sign == 1 else -add)
            np.add.at(pods, at, sign)
        self._derive()
        self._ready_sums = None

    # --- mutations (Statement only) -----------------------------------------------------------
    def _slots(self, i: int, delta: int, *, now: bool) -> None:
        """Node `i` has `delta` more pod slots free in the future (and now, with `now`); the
        counts of full nodes follow."""
        future = int(self.pods_free_future[i])
        self.pods_free_future[i] = future + delta
        self.full_future += (future + delta <= 0) - (future <= 0)
        if now:
            free = int(self.pods_free[i])
            self.pods_free[i] = free + delta
            self.full_now += (free + delta <= 0) - (free <= 0)

    def occupy(self, i: int, req: IntArray, sign: int = 1) -> None:
        """A task starts (sign 1) or stops (sign -1) using `req` on node `i`."""
        delta = req if sign == 1 else sign * req  # the hot path allocates no product
        self.used[i] += delta
        self.idle[i] -= delta
        self.future[i] -= delta
        self.pods_used[i] += sign
        self._slots(i, -sign, now=True)
        self._log.append(i)

    def pipeline(self, i: int, req: IntArray, sign: int = 1) -> None:
        """A task is pipelined onto (sign 1) or taken off (sign -1) node `i`."""
        delta = req if sign == 1 else sign * req
        self.pipelined[i] += delta
        self.future[i] -= delta
        self.pods_used[i] += sign
        self._slots(i, -sign, now=True)
        self._log.append(i)

    def keep_idle(self, i: int, req: IntArray, sign: int = 1) -> None:
        """Keep (sign 1) or give back (sign -1) `req` of node `i`'s idle from other tasks: a
        nominated task pipelined there waits for that room too (its future is already taken
        by `pipeline`; `used` is left alone, so scores see the node as it runs)."""
        self.idle[i] -= sign * req
        self._log.append(i)

    def release(self, i: int, req: IntArray, sign: int = 1) -> None:
        """A running task starts (sign 1) or stops (sign -1) releasing `req` on node `i`."""
        delta = req if sign == 1 else sign * req
        self.releasing[i] += delta
        self.future[i] += delta
        self.pods_releasing[i] += sign
        self._slots(i, sign, now=False)
        self._log.append(i)
