"""SchedulerCache: the truth between cycles. Watch events in, cheap consistent snapshots out.

Owns: the raw objects and converted facts of every kind in `informer.kinds.CLUSTER_KINDS` (and
the reservation ConfigMaps, kept raw and read by `cache.reservations`), keyed by namespace/name
(pods by uid, with a namespace/name index); the problems found converting them and the warnings
their facts carry (an amount above the scheduler's ceiling); the HyperNode tree, built again
only when the HyperNodes (or the node names and labels their selectors read) change
(`model.topology.TopologyMemo`), whose problems and warnings are reported as the HyperNodes'
own; node usage handed
in by the collector; assumed binds and evictions until the watch confirms them (with a TTL
backstop); the pods whose eviction was refused, in backoff (`cache.refusals`, shown in snapshots
as `TaskFacts.eviction_refused`; a refusal changes the generation without waking the loop);
which PodGroups belong to other schedulers (`convert.ownership.GroupClaims`, kept event by event
from every pod, held or not: such a PodGroup is left out of snapshots and problems); the
`generation` counter and the `changed` event that tell the loop something relevant changed (a
reservation expiring included); snapshots; the checks a write passes just before it is sent
(`bind_problem`, `evict_problem`, `condition_problem`, `pod_problem`: does the decision still hold
against the latest watched objects?), what binding a pod's volumes reads (`pod_volumes`) and
what its Binding waits for (`held_binding`), and telling listeners (`on_node_deleted`,
`on_volumes_changed`: the effects) of each node deleted and each change of a claim or a
volume, after its lock is released.
Must not: talk to the API server (no `kube`, no `kubernetes`), raise on bad input, or hold its
lock for long: a relist converts outside it, and a snapshot copies dicts of immutable facts,
never the facts (structural sharing).

Thread safety: one lock around every read and write of the tables; `Sink` calls may come from
one thread per kind, snapshots from the loop, assumptions from the effects' workers.

Cost (`python -m bench.cache_snapshot`, CPython 3.11, one core of the dev box, 5,000 nodes and
50,000 pods): a snapshot takes 2.2-3 ms with nothing changed and 3-4 ms after 1,000 pod updates
with 200 binds assumed; the first snapshot after a relist delivered out of creation order pays
once for restoring the task order (40-60 ms). Watch events apply at ~21,000/s; a first list of
50,000 pods converts in 2.4-3.2 s (the pod converter's cost) and a relist of unchanged pods in
~0.22 s (same resourceVersion: not converted again). At 1,000 nodes / 10,000 pods a snapshot
takes 0.4 ms. A PriorityClass change re-converts, at the next snapshot and under the lock, the
PodGroups and the pods without `spec.priority` (admission sets it, so in a live cluster: none).
PodGroup ownership costs ~1.5 us per pod event and nothing per snapshot: the jobs map is reused
while neither the PodGroups nor their ownership change (~1 ms a snapshot at 5,000 PodGroups).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import logging
import operator
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Generic, TypeVar

from vscheduler.cache import reservations
from vscheduler.cache.assumed import AssumedKind, Assumptions
from vscheduler.cache.entries import (
    KEPT_RAW,
    Converted,
    Converters,
    ConvertFn,
    kept_pod,
    kept_raw,
)
from vscheduler.cache.malformed import Identity, identity
from vscheduler.cache.refusals import EvictionBackoff
from vscheduler.cache.reservations import ReservationBooks
from vscheduler.cache.tables import PodTable, Raw, Table, same_version
from vscheduler.clock import Clock
from vscheduler.convert.memo import FactsMemo
from vscheduler.convert.ownership import GroupClaims, group_claim
from vscheduler.convert.pdb import KIND as PDB_KIND, guarded_budget
from vscheduler.convert.reservation import KIND as CONFIG_MAP_KIND
from vscheduler.convert.resourcequota import KIND as QUOTA_KIND, guarded_quota
from vscheduler.convert.volumes import (
    CLAIM,
    CLASS,
    VOLUME,
    guarded_claim,
    guarded_class,
    guarded_volume,
)
from vscheduler.informer.kinds import Kind
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.cluster import (
    DEFAULT_SCHEDULER_NAME,
    ClusterSnapshot,
    ImplicitJobs,
    TaskChanges,
    complete_jobs,
    default_queues,
)
from vscheduler.model.facts import (
    FieldWarning,
    JobFacts,
    NodeFacts,
    NodeUsage,
    PriorityClassFacts,
    QueueFacts,
    TaskFacts,
)
from vscheduler.model.selector import spend
from vscheduler.model.status import TaskStatus
from vscheduler.model.topology import KIND as HYPERNODE_KIND, HyperNodeFacts, TopologyMemo
from vscheduler.model.volumebind import HeldBinding, HeldClaim, HeldVolume, PodClaim, PodVolumes

logger = logging.getLogger(__name__)

F = TypeVar("F")
DEFAULT_ASSUME_TTL = 30.0
"""Seconds an assumed bind or eviction is shown without the watch confirming it."""
_SERIALS = itertools.count(1)
"""Snapshot serials, unique in the process (so two caches' snapshots never pass for each
other's)."""
_EVICTION_SEEN = frozenset({TaskStatus.RELEASING, TaskStatus.SUCCEEDED, TaskStatus.FAILED})
_CORDON_TAINT_KEY = "node.kubernetes.io/unschedulable"


@dataclasses.dataclass(frozen=True, slots=True)
class _Slot(Generic[F]):
    """One kind the cache holds: its table and its converter."""

    name: str
    table: Table[F]
    convert: ConvertFn[F]
    namespaced: bool


class SchedulerCache:
    """The scheduler's cache: an `informer.ports.Sink` for the cluster kinds, and the source
    of every cycle's `ClusterSnapshot`."""

    def __init__(
        self,
        *,
        clock: Clock,
        scheduler_name: str = DEFAULT_SCHEDULER_NAME,
        assume_ttl: float = DEFAULT_ASSUME_TTL,
    ) -> None:
        self._clock = clock
        self._scheduler_name = scheduler_name
        self._lock = threading.Lock()
        self._changed = threading.Event()
        self._complete = threading.Event()
        self._generation = 0
        self._quiet_generation = 0
        self._gang_arrival: dt.datetime | None = None
        self._converters = Converters(scheduler_name, {})
        self._stale_priorities = False
        self._assumed = Assumptions(clock, assume_ttl)
        self._refusals = EvictionBackoff(clock)
        self._usage: dict[str, NodeUsage] = {}
        self._classes: Table[PriorityClassFacts] = Table()
        self._namespaces: Table[str] = Table()
        self._nodes: Table[NodeFacts] = Table()
        self._queues: Table[QueueFacts] = Table()
        self._hypernodes: Table[HyperNodeFacts] = Table()
        self._topology = TopologyMemo()
        """The HyperNode tree, built again only when the HyperNodes (or the nodes their
        selectors read) change."""
        self._jobs: Table[JobFacts] = Table()
        self._pods = PodTable()
        self._claims = GroupClaims()
        self._implicit_jobs = ImplicitJobs()
        """The lone pods' implicit jobs of the last snapshot (see `complete_jobs`)."""
        self._last_serial = 0
        """The last snapshot's serial (0: none taken yet)."""
        self._last_overlaid: set[str] = set()
        """The pods the last snapshot showed through an assumption or a refusal."""
        slots: list[_Slot[Any]] = [
            _Slot("PriorityClass", self._classes, Converters.priority_class, False),
            _Slot("Namespace", self._namespaces, Converters.namespace, False),
            _Slot("Node", self._nodes, Converters.node, False),
            _Slot("Queue", self._queues, Converters.queue, False),
            _Slot(HYPERNODE_KIND, self._hypernodes, Converters.hypernode, False),
            _Slot("PodGroup", self._jobs, Converters.podgroup, True),
            _Slot("Pod", self._pods, Converters.pod, True),
        ]
        slots.extend(_Slot(name, Table(), _kept(name), True) for name in KEPT_RAW)
        slots.extend(
            _Slot(name, Table(), _kept_volume(name, guard), name == CLAIM)
            for name, guard in _VOLUME_KINDS.items()
        )
        self._budgets = FactsMemo(guarded_budget)
        self._quotas = FactsMemo(guarded_quota)
        self._claim_facts = FactsMemo(guarded_claim)
        self._volume_facts = FactsMemo(guarded_volume)
        self._class_facts = FactsMemo(guarded_class)
        self._books = ReservationBooks()
        self._slots: dict[str, _Slot[Any]] = {slot.name: slot for slot in slots}
        self._node_listeners: list[Callable[[str], None]] = []
        self._volume_listeners: list[Callable[[], None]] = []

    # --- Sink ---------------------------------------------------------------------------------
    def replace(self, kind: Kind, items: Iterable[Raw]) -> None:
        """A fresh full list of `kind`: everything not in it is gone (assumptions included).

        Objects are converted outside the lock, as `items` yields them (the informer's list
        arrives while it is read); the cache changes only once every item is in, so a list that
        fails on the way changes nothing; one whose resourceVersion is the one held is
        not converted again (a relist after 410 Gone costs little).
        """
        slot = self._slot(kind)
        with self._lock:
            classes = self._converters.classes
            held = dict(slot.table.raw)
        converted = self._convert_all(slot, items, Converters(self._scheduler_name, classes), held)
        listed = {key for key, *_ in converted}
        claims = None  # what pods name; one unchanged (not converted again) names what it did
        if slot.table is self._pods:
            name = self._scheduler_name
            claims = [
                (k, group_claim(obj, name)) for k, _, obj, new in converted if new is not None
            ]
        with self._lock:
            if self._converters.classes is not classes:
                self._stale_priorities = True
            changed = claims is not None and self._claims.relist(
                claims, listed, lambda k: _in_scope(kind, k)
            )
            for key, who, obj, result in converted:
                if result is not None:
                    changed |= self._store(slot, key, who, obj, result)
            gone = [key for key in slot.table.stale_keys(listed) if _in_scope(kind, key)]
            for key in gone:
                changed |= self._forget(slot, key)
            if changed:
                self._touch()
        if slot.table is self._nodes:
            self._nodes_deleted(gone)
        if changed and slot.name in _VOLUME_EVENTS:
            self._volumes_changed()

    def _convert_all(
        self,
        slot: _Slot[Any],
        items: Iterable[Raw],
        converters: Converters,
        held: Mapping[str, Raw],
    ) -> list[tuple[str, Identity, Raw, Converted[Any] | None]]:
        """(key, identity, object, what it became, or None when it is the version held)."""
        out: list[tuple[str, Identity, Raw, Converted[Any] | None]] = []
        for obj in items:
            who = self._identity(slot, obj)
            if who is None:
                continue
            key = who.uid if slot.table is self._pods else who.key
            unchanged = same_version(held.get(key), obj)
            out.append((key, who, obj, None if unchanged else slot.convert(converters, obj, who)))
        return out

    def apply(self, kind: Kind, event: WatchEvent) -> None:
        """One ADDED / MODIFIED / DELETED event (a BOOKMARK is ignored)."""
        if event.type == "BOOKMARK":
            return
        slot = self._slot(kind)
        who = self._identity(slot, event.obj)
        if who is None:
            return
        pods = slot.table is self._pods
        key = who.uid if pods else who.key
        gone = event.type == "DELETED"
        claim = group_claim(event.obj, self._scheduler_name) if pods and not gone else None
        groups = slot.table is self._jobs
        nodes = slot.table is self._nodes
        with self._lock:
            before = self._shown_pod(key) if pods else None
            held_before = slot.table.facts.get(key) if groups or nodes else None
            changed = pods and self._claims.claim(key, claim)
            if gone:
                changed |= self._forget(slot, key)
            elif not same_version(held := slot.table.raw.get(key), event.obj):
                if pods:  # most events of a placed pod change its status only
                    old = self._pods.facts.get(key)
                    result = self._converters.pod_update(held, old, event.obj, who)
                else:
                    result = slot.convert(self._converters, event.obj, who)
                changed |= self._store(slot, key, who, event.obj, result)
            after = self._shown_pod(key) if pods and changed and not gone else None
            quiet = (
                changed
                and not gone
                and (
                    (pods and self._quiet_pod(before, after))
                    or (groups and _quiet_group(held_before, self._jobs.facts.get(key)))
                    or (nodes and _quiet_node(held_before, self._nodes.facts.get(key)))
                )
            )
            if quiet:
                self._quiet_generation += 1
                if pods and self._short_gang(before, after):
                    self._gang_arrival = self._clock.now()
            elif changed:
                self._touch(wake=not (groups and self._group_before_its_pods(held_before, key)))
                if self._completes_gang(before, after):
                    self._complete.set()
        if gone and slot.table is self._nodes:
            self._nodes_deleted([key])
        if changed and slot.name in _VOLUME_EVENTS:
            self._volumes_changed()

    def on_node_deleted(self, listener: Callable[[str], None]) -> None:
        """Call `listener(node name)` for every node deleted (a DELETED event, or left out of a
        relist), outside the cache's lock; a listener that raises is logged and skipped."""
        self._node_listeners.append(listener)

    def _nodes_deleted(self, names: Sequence[str]) -> None:
        for name in names:
            for listener in self._node_listeners:
                try:
                    listener(name)
                except Exception:
                    logger.exception("a listener of node %s's deletion failed", name)

    def on_volumes_changed(self, listener: Callable[[], None]) -> None:
        """Call `listener()` after every change of a PersistentVolumeClaim or a PersistentVolume
        (an event or a relist), outside the cache's lock; one that raises is logged."""
        self._volume_listeners.append(listener)

    def _volumes_changed(self) -> None:
        for listener in self._volume_listeners:
            try:
                listener()
            except Exception:
                logger.exception("a listener of volume changes failed")

    def set_usage(self, usage: Mapping[str, NodeUsage]) -> None:
        """The node-usage collector's latest measurements (node name -> usage)."""
        with self._lock:
            if usage != self._usage:
                self._usage = dict(usage)
                self._touch()

    # --- assumptions --------------------------------------------------------------------------
    def assume_bind(self, task_uid: str, node: str) -> None:
        """Show the task bound on `node` until the watch shows it placed, `forget_bind`, or the
        TTL. A task the cache does not hold (deleted meanwhile) is not assumed."""
        self._assume("bind", task_uid, node)

    def forget_bind(self, task_uid: str) -> None:
        """The bind failed: show the task as the watch has it."""
        self._forget_assumption("bind", task_uid)

    def assume_evict(self, task_uid: str) -> None:
        """Show the task releasing until the watch shows it deleted or deleting,
        `forget_evict`, or the TTL."""
        self._assume("evict", task_uid, "")

    def forget_evict(self, task_uid: str, *, wake: bool = True) -> None:
        """The eviction failed or was not sent: show the task as the watch has it. With
        `wake=False` the loop is not woken (as for a refusal: see `refuse_evict`)."""
        with self._lock:
            if self._assumed.discard("evict", task_uid):
                self._touch(wake=wake)

    def refuse_evict(self, task_uid: str, retry_after: float | None = None) -> float:
        """The Eviction API refused to evict the task (a disruption budget): show it as the
        watch has it, in backoff (`cache.refusals`: not a victim until the backoff ends, at
        least `retry_after` seconds); the backoff's length. The generation changes but the loop
        is not woken: the next cycle comes at its period, not at once, so refusals cannot drive
        cycles back to back."""
        with self._lock:
            self._assumed.discard("evict", task_uid)
            if task_uid not in self._pods.facts:
                return 0.0
            delay = self._refusals.refuse(task_uid, retry_after)
            self._touch(wake=False)
            return delay

    def assume_binds(self, binds: Iterable[tuple[str, str]], *, held: bool = False) -> None:
        """`assume_bind` for each (task uid, node), under one lock acquisition; `held` ones do
        not expire until `bind_sent` (their bind is queued or in flight)."""
        with self._lock:
            for task_uid, node in binds:
                self._assume_locked("bind", task_uid, node, held=held)

    def bind_sent(self, task_uid: str) -> None:
        """The bind call succeeded: the assumption's TTL starts now (the watch confirms it)."""
        with self._lock:
            self._assumed.settle("bind", task_uid)

    def assume_evicts(self, task_uids: Iterable[str]) -> None:
        """`assume_evict` for each task uid, under one lock acquisition."""
        with self._lock:
            for task_uid in task_uids:
                self._assume_locked("evict", task_uid, "")

    def _assume(self, kind: AssumedKind, task_uid: str, node: str) -> None:
        with self._lock:
            self._assume_locked(kind, task_uid, node)

    def _assume_locked(
        self, kind: AssumedKind, task_uid: str, node: str, *, held: bool = False
    ) -> None:
        if task_uid in self._pods.facts:
            self._assumed.add(kind, task_uid, node, held=held)
            self._touch(wake=False)  # the cycle that decided it knows: no cycle for its echo

    def _forget_assumption(self, kind: AssumedKind, task_uid: str) -> None:
        with self._lock:
            if self._assumed.discard(kind, task_uid):
                self._touch()

    # --- checks just before a write is sent ----------------------------------------------------
    def bind_problem(self, task_uid: str, node: str) -> str | None:
        """Why binding the pod `task_uid` to `node` no longer holds (None: it still does): the
        node is gone or cordoned (unless the pod tolerates the cordon), the pod is gone or was
        replaced (its name now belongs to another uid), or it is no longer pending and unplaced.
        """
        with self._lock:
            task = self._pods.facts.get(task_uid)
            held = self._nodes.facts.get(node)
        problem = _pod_problem(task_uid, task)
        if problem or task is None:
            return problem
        if task.node_name is not None or task.status is not TaskStatus.PENDING:
            where = f" on node {task.node_name}" if task.node_name else ""
            return f"pod {task.key} is {task.status.value}{where} already"
        if held is None:
            return f"node {node} is gone"
        if held.unschedulable and not _tolerates_cordon(task):
            return f"node {node} is cordoned (spec.unschedulable)"
        return None

    def evict_problem(self, task_uid: str) -> str | None:
        """Why evicting the pod `task_uid` no longer holds (None: it still does): the pod is
        gone or was replaced."""
        with self._lock:
            task = self._pods.facts.get(task_uid)
        return _pod_problem(task_uid, task)

    def beyond_budgets(self, task_uids: Sequence[str]) -> dict[str, str]:
        """The pods of `task_uids` (one plan's victims, in order) that their PodDisruptionBudgets
        do not allow together, uid -> budget key: a budget's `disruptionsAllowed` is spent on
        the pods it selects in order (a pod in its `disruptedPods` is counted already). A dry
        run asks about one eviction at a time, so two victims of a budget allowing one pass
        both; the second eviction would be refused after the first was made."""
        with self._lock:
            budgets = self._budgets.facts(self._slots[PDB_KIND].table.raw)
            pods = [self._pods.facts.get(uid) for uid in task_uids]
        left = [budget.disruptions_allowed for budget in budgets]
        beyond: dict[str, str] = {}
        for uid, task in zip(task_uids, pods, strict=True):
            if task is None:
                continue
            counting = (
                k
                for k, budget in enumerate(budgets)
                if budget.counts(task.namespace, task.name, task.labels)
            )
            over = spend(left, counting)
            if over is not None:
                beyond[uid] = budgets[over].key
        return beyond

    def pod_problem(self, key: str, uid: str) -> str | None:
        """Why a write to the pod `key` (as `uid`) no longer holds (None: it still does): the
        pod is gone or was replaced."""
        with self._lock:
            gone = self._pods.by_key.get(key) != uid or uid not in self._pods.facts
        return f"pod {key} (uid {uid}) is gone or was replaced" if gone else None

    def condition_problem(self, key: str, uid: str) -> str | None:
        """Why writing PodScheduled=False on the pod `key` (as `uid`) no longer holds (None: it
        still does): the pod is gone, was replaced, or has been placed meanwhile."""
        with self._lock:
            task = self._pods.facts.get(uid) if self._pods.by_key.get(key) == uid else None
        if task is None:
            return f"pod {key} (uid {uid}) is gone or was replaced"
        if task.node_name is not None:
            return f"pod {key} is on node {task.node_name} already"
        return None

    # --- reading ------------------------------------------------------------------------------
    @property
    def generation(self) -> int:
        """Changes on every change a cycle could see (facts, assumptions, TTL expiry)."""
        with self._lock:
            self._expire()
            return self._generation

    @property
    def quiet_generation(self) -> int:
        """Changes on every change no decision depends on (a placed pod going from bound to
        running, the watch confirming a bind the cache assumed, a pending pod of a gang still
        short of its minMember, a node's annotations): a cycle must see them (the PodGroup's
        running count, shuffle's candidates, the gang's pending message) but need not be woken
        for them."""
        with self._lock:
            return self._quiet_generation

    @property
    def gang_arrival(self) -> dt.datetime | None:
        """When the latest pending pod of a gang still short of its minMember came (None before
        any): that change wakes no cycle, so the loop runs one once the arrival grace has passed
        since, and a gang that stopped growing gets its pending messages then."""
        with self._lock:
            return self._gang_arrival

    @property
    def changed(self) -> threading.Event:
        """Set on every change; the loop clears it before taking a snapshot."""
        return self._changed

    @property
    def complete(self) -> threading.Event:
        """Set when a pending pod brings its PodGroup to its minMember (a gang is whole: the
        loop need not wait for the rest of a burst); the loop clears it with `changed`."""
        return self._complete

    def problems(self) -> dict[str, str]:
        """Every object that failed to convert (`Kind namespace/name` or `Kind name`) -> the
        converter's message. An entry goes when the object is fixed or deleted. Other
        schedulers' PodGroups are not this scheduler's to report."""
        with self._lock:
            foreign = self._claims.foreign
            found = {
                label: message
                for slot in self._slots.values()
                for key, (label, message) in slot.table.problems.items()
                if slot.table is not self._jobs or key not in foreign
            }
            for name, message in self._topology.current.problems.items():
                found.setdefault(f"{HYPERNODE_KIND} {name}", message)
            return found

    def warnings(self) -> dict[str, tuple[FieldWarning, ...]]:
        """Every object whose facts carry warnings (an amount above the scheduler's ceiling,
        read as the ceiling; an unusual value) -> those warnings; labelled as `problems`. An
        entry goes when the object no longer has them or is deleted."""
        with self._lock:
            foreign = self._claims.foreign
            found = {
                label: held
                for slot in self._slots.values()
                for key, (label, held) in slot.table.warnings.items()
                if slot.table is not self._jobs or key not in foreign
            }
            for name, tree in self._topology.current.warnings.items():
                label = f"{HYPERNODE_KIND} {name}"
                found[label] = (*found.get(label, ()), *tree)
            return found

    def pod_raw(self, task_uid: str) -> Raw | None:
        """What the cache keeps of the pod's object as last watched (`entries.kept_pod`), or
        None."""
        with self._lock:
            return self._pods.raw.get(task_uid)

    def pod_uid(self, key: str) -> str | None:
        """The uid of the pod `namespace/name` the cache holds, or None."""
        with self._lock:
            return self._pods.by_key.get(key)

    def podgroup_raw(self, key: str) -> Raw | None:
        """The PodGroup `namespace/name`'s raw object as last watched, or None."""
        with self._lock:
            return self._jobs.raw.get(key)

    def podgroup_raws(self, keys: Iterable[str]) -> list[Raw | None]:
        """`podgroup_raw` of each of `keys`, in their order, under one hold of the lock."""
        with self._lock:
            return list(map(self._jobs.raw.get, keys))

    def object_raw(self, kind: str, key: str) -> Raw | None:
        """Any held object's raw form by kind name and key (pods by `namespace/name`)."""
        slot = self._slots.get(kind)
        if slot is None:
            return None
        with self._lock:
            if slot.table is self._pods:
                key = self._pods.by_key.get(key, "")
            return slot.table.raw.get(key)

    def pod_volumes(self, task_uid: str, node: str) -> PodVolumes | None:
        """What binding the volumes of the pod `task_uid` to `node` reads, as held now (None:
        the pod or the node is not held, or the pod uses no claim): its claims, their classes,
        every PersistentVolume, each with its resourceVersion."""
        with self._lock:
            task = self._pods.facts.get(task_uid)
            held = self._nodes.facts.get(node)
            if task is None or held is None or not task.claims:
                return None
            claims_raw = self._slots[CLAIM].table.raw
            claims = tuple(
                _pod_claim(name, ephemeral, claims_raw.get(f"{task.namespace}/{name}"))
                for name, ephemeral in task.claims
            )
            classes = self._class_facts.facts(self._slots[CLASS].table.raw)
            volumes_raw = self._slots[VOLUME].table.raw
            volumes = tuple(
                HeldVolume(facts=v, resource_version=_version(volumes_raw.get(v.name)))
                for v in self._volume_facts.facts(volumes_raw)
            )
        wanted = {c.facts.storage_class for c in claims if c.facts is not None}
        return PodVolumes(
            namespace=task.namespace,
            name=task.name,
            uid=task.uid,
            node=node,
            node_labels=held.labels,
            claims=claims,
            classes={c.name: c for c in classes if c.name in wanted},
            volumes=volumes,
        )

    def held_binding(
        self, claims: Iterable[str], volumes: Iterable[str], node: str
    ) -> HeldBinding | None:
        """The claims (`namespace/name`) and volumes (by name: those given and those the claims
        name) a pod's Binding to `node` waits for, as held now, each with its resourceVersion
        (None: the node is not held)."""
        with self._lock:
            held = self._nodes.facts.get(node)
            claims_raw = self._slots[CLAIM].table.raw
            volumes_raw = self._slots[VOLUME].table.raw
            found = {key: raw for key in claims if (raw := claims_raw.get(key)) is not None}
            claim_facts = {
                key: HeldClaim(facts=guarded_claim(raw), resource_version=_version(raw))
                for key, raw in found.items()
            }
            named = {c.facts.volume_name for c in claim_facts.values() if c.facts.volume_name}
            raw_volumes = {
                name: raw
                for name in {*volumes, *named}
                if (raw := volumes_raw.get(name)) is not None
            }
        if held is None:
            return None
        return HeldBinding(
            claims=claim_facts,
            volumes={
                name: HeldVolume(facts=guarded_volume(raw), resource_version=_version(raw))
                for name, raw in raw_volumes.items()
            },
            node_labels=held.labels,
        )

    def snapshot(self) -> ClusterSnapshot:
        """A consistent view for one cycle: nodes sorted by name, tasks by creation time then
        uid, jobs and queues by key, assumptions applied, `taken_at` from the clock; other
        schedulers' PodGroups left out."""
        with self._lock:
            self._expire()
            if self._stale_priorities:
                self._reconvert()
            tasks = self._pods.ordered().copy()
            assumed = self._assumed.overlay(tasks)
            tasks.update(assumed)
            refused = self._refusals.overlay(tasks)
            tasks.update(refused)
            serial, changes = self._number(assumed.keys() | refused.keys())
            jobs = self._claims.keep_ours(self._jobs.sorted_facts(_by_key))
            podgroups = tuple(jobs)
            jobs = complete_jobs(
                tasks, jobs, self._implicit_jobs, None if changes is None else changes.uids
            )
            queues = {q.name: q for q in self._queues.sorted_facts(_by_name)}
            classes = {pc.name: pc for pc in self._classes.sorted_facts(_by_name)}
            nodes = self._nodes.sorted_facts(_by_name)
            hypernodes = self._hypernodes.sorted_facts(_by_name)
            topology = self._topology.topology(hypernodes, nodes)
            namespaces = self._namespaces.sorted_facts(str)
            kept = {name: self._slots[name].table.sorted_facts(_raw_key) for name in KEPT_RAW}
            usage = self._usage
            budgets = self._budgets.facts(self._slots[PDB_KIND].table.raw)
            quotas = self._quotas.facts(self._slots[QUOTA_KIND].table.raw)
            claims = self._claim_facts.facts(self._slots[CLAIM].table.raw)
            volumes = self._volume_facts.facts(self._slots[VOLUME].table.raw)
            storage_classes = self._class_facts.facts(self._slots[CLASS].table.raw)
            books = self._books.books(self._slots[CONFIG_MAP_KIND].table.facts)
            taken_at = self._clock.now()
        return ClusterSnapshot(
            nodes=nodes,
            tasks=tasks,
            jobs=jobs,
            queues=default_queues(queues),
            priority_classes=classes,
            namespaces=namespaces,
            usage=usage,
            resource_quotas=kept["ResourceQuota"],
            quotas=quotas,
            pod_disruption_budgets=kept["PodDisruptionBudget"],
            disruption_budgets=budgets,
            claims={c.key: c for c in claims},
            volumes={v.name: v for v in volumes},
            storage_classes={c.name: c for c in storage_classes},
            config_maps=kept["ConfigMap"],
            reservations=books,
            hypernodes=hypernodes,
            topology=topology,
            scheduler_name=self._scheduler_name,
            taken_at=taken_at,
            serial=serial,
            changes=changes,
            podgroups=podgroups,
            cache_order=True,
        )

    def _number(self, overlaid: set[str]) -> tuple[int, TaskChanges | None]:
        """The next snapshot's serial, and its tasks that may differ from the last snapshot's:
        the pods put or removed since, and the pods an assumption or a refusal shows
        otherwise now or did then."""
        serial = next(_SERIALS)
        since, self._last_serial = self._last_serial, serial
        touched, self._pods.touched = self._pods.touched, set()
        last, self._last_overlaid = self._last_overlaid, overlaid
        if since == 0 or touched is None:
            return serial, None
        return serial, TaskChanges(since, frozenset(touched.union(overlaid, last)))

    # --- under the lock -----------------------------------------------------------------------
    def _store(
        self, slot: _Slot[Any], key: str, who: Identity, obj: Raw, result: Converted[Any]
    ) -> bool:
        pods = slot.table is self._pods
        kept = kept_pod(obj) if pods else obj
        changed = slot.table.put(key, kept, result.facts, f"{slot.name} {who.key}", result.problem)
        if pods:
            changed |= self._settle(key, result.facts)
        elif slot.table is self._classes and changed:
            self._renew_converters()
        elif slot.name == PDB_KIND and _allows_disruption(obj):
            changed |= self._lift_refusals(who.namespace)
        return changed

    def _forget(self, slot: _Slot[Any], key: str) -> bool:
        changed = slot.table.remove(key)
        if slot.table is self._pods:
            changed |= self._assumed.discard_all(key)
            changed |= self._refusals.forget(key)
        elif slot.table is self._classes and changed:
            self._renew_converters()
        elif slot.name == PDB_KIND:
            changed |= self._lift_refusals(key.rpartition("/")[0])
        return changed

    def _lift_refusals(self, namespace: str) -> bool:
        """A disruption budget of `namespace` went or allows a disruption: the refused
        evictions of its pods may succeed now, so their backoff ends."""
        facts = self._pods.facts
        return self._refusals.lift(
            uid
            for uid in self._refusals.uids()
            if (task := facts.get(uid)) is not None and task.namespace == namespace
        )

    def _settle(self, uid: str, facts: TaskFacts | None) -> bool:
        """Drop the assumptions the watch has now confirmed (or made moot)."""
        if facts is None:
            return self._assumed.discard_all(uid)
        changed = False
        if facts.node_name is not None:
            changed |= self._assumed.discard("bind", uid)
        if facts.status in _EVICTION_SEEN:
            changed |= self._assumed.discard("evict", uid)
        return changed

    def _renew_converters(self) -> None:
        """Priority classes changed: pods and PodGroups are converted again at the next
        snapshot (lazily: a burst of class events costs one pass)."""
        self._converters = Converters(self._scheduler_name, dict(self._classes.facts))
        self._stale_priorities = True

    def _reconvert(self) -> None:
        """Convert again every PodGroup, and every pod whose priority comes from its class."""
        converters = self._converters
        for slot_name in ("PodGroup", "Pod"):
            slot = self._slots[slot_name]
            for key, obj in list(slot.table.raw.items()):
                if slot_name == "Pod" and _has_own_priority(obj):
                    continue
                who = identity(obj, namespaced=True)
                if who is not None:
                    self._store(slot, key, who, obj, slot.convert(converters, obj, who))
        self._stale_priorities = False

    def _expire(self) -> None:
        expired = self._assumed.expire()
        if self._refusals.expire() or expired:
            self._touch()
        config_maps = self._slots[CONFIG_MAP_KIND].table.facts
        if self._books.expired(config_maps, self._clock.now()):
            self._touch()

    def _quiet_pod(self, before: TaskFacts | None, after: TaskFacts | None) -> bool:
        """Whether a pod's change wakes no cycle: a placed pod's running status (`_quiet`), or
        a pending pod of a gang that is still short of its members (`_short_gang`)."""
        return _quiet(before, after) or self._short_gang(before, after)

    def _short_gang(self, before: TaskFacts | None, after: TaskFacts | None) -> bool:
        """A pending pod arrived (or changed) in a PodGroup that holds fewer pods than its
        minMember, this one counted: no action can place, admit or evict for a job that is not
        valid, so until its last member arrives (a change that wakes a cycle) it need not wake
        one. A pod that moved from another job, or was not pending before, is not quiet."""
        gang = self._gang_of_pending(after)
        if gang is None or after is None:
            return False
        if before is not None and (before.job != after.job or before.status is not after.status):
            return False
        held, min_member = gang
        return held < min_member

    def _completes_gang(self, before: TaskFacts | None, after: TaskFacts | None) -> bool:
        """A pending pod that just joined its PodGroup brings it to its minMember: the burst
        that made the gang is over, and nothing is gained by waiting for more changes."""
        gang = self._gang_of_pending(after)
        if gang is None or after is None or (before is not None and before.job == after.job):
            return False
        held, min_member = gang
        return held == min_member

    def _gang_of_pending(self, after: TaskFacts | None) -> tuple[int, int] | None:
        """(pods held, minMember) of the known PodGroup of a pending pod `after`; None for
        any other pod."""
        if after is None or after.group_name is None or after.status is not TaskStatus.PENDING:
            return None
        group = self._jobs.facts.get(after.job)
        return None if group is None else (self._pods.members.get(after.job, 0), group.min_member)

    def _group_before_its_pods(self, before: JobFacts | None, key: str) -> bool:
        """A PodGroup just created, none of its pods here yet: a cycle must admit it, but within
        the schedule period is soon enough (Volcano's own cadence), and when its pods come the
        last one wakes a cycle that admits and places it in one go. A gang whose PodGroup came
        first used to wake two cycles over the whole cluster, the first with nothing to place."""
        return before is None and key in self._jobs.facts and not self._pods.members.get(key)

    def _shown_pod(self, uid: str) -> TaskFacts | None:
        facts = self._pods.facts.get(uid)
        return None if facts is None else self._assumed.shown(uid, facts)

    def _touch(self, *, wake: bool = True) -> None:
        self._generation += 1
        if wake:
            self._changed.set()

    # --- helpers ------------------------------------------------------------------------------
    def _slot(self, kind: Kind) -> _Slot[Any]:
        slot = self._slots.get(kind.name)
        if slot is None:
            raise ValueError(f"the scheduler cache does not hold {kind.name} objects")
        return slot

    @staticmethod
    def _identity(slot: _Slot[Any], obj: Raw) -> Identity | None:
        who = identity(obj, namespaced=slot.namespaced)
        if who is None:
            logger.warning("ignoring a %s without a readable metadata.name", slot.name)
        return who


_PLACED: Final = frozenset({TaskStatus.BOUND, TaskStatus.RUNNING})


def _all_but(cls: type, *names: str) -> Callable[[Any], tuple[Any, ...]]:
    """The compared fields of dataclass `cls` but `names`, as one tuple (equal tuples: the two
    objects differ at most in those fields; `dataclasses.replace` and `==` did the same at
    several times the cost)."""
    return operator.attrgetter(
        *(f.name for f in dataclasses.fields(cls) if f.compare and f.name not in names)
    )


_POD_BUT_RUNNING: Final = _all_but(TaskFacts, "status", "started", "scheduled_at")
_GROUP_BUT_PHASE: Final = _all_but(JobFacts, "conditions", "phase")
_GROUP_BUT_CONDITIONS: Final = _all_but(JobFacts, "conditions")
_NODE_BUT_ANNOTATIONS: Final = _all_but(NodeFacts, "annotations")


def _quiet(before: TaskFacts | None, after: TaskFacts | None) -> bool:
    """Whether a pod's change, as snapshots show it, is only a placed pod's bound/running
    status, its start time and the time it was scheduled: nothing allocation reads (its node,
    request and job are the same; the start time orders only shuffle's candidates; the
    scheduled time starts cdp's protection of a Running pod, which only ever takes a victim
    away). The kubelet (or kwok) reports a placed pod running with its `status.startTime` in
    the same update, and the API server's binding sets the node with a PodScheduled condition
    whose time an assumed bind does not know: counted as changes a decision reads, every bound
    pod woke an idle cycle over the whole cluster (half of W3's cycles bound nothing) while the
    binds of a backlog were still being sent."""
    if before is None or after is None or before is after:
        return False  # a pod added or dropped, or a change elsewhere (its PodGroup claim)
    if before.status not in _PLACED or after.status not in _PLACED:
        return False
    return _POD_BUT_RUNNING(before) == _POD_BUT_RUNNING(after)


def _quiet_group(before: JobFacts | None, after: JobFacts | None) -> bool:
    """Whether a PodGroup's change moved only its status: what this scheduler writes after
    each cycle (the echo of its own write). Its conditions no decision reads but the next status
    write. Its phase, only when the PodGroup has no minResources: then the phase holds no
    admission budget (`quota.reserved`), and the cycle that wrote it had already admitted the
    job (a later cycle that still reads Pending admits it again, as enqueue admits any job
    without minResources that its queue takes). With minResources a phase change wakes the
    loop: an Inqueue job turning Running frees the budget its minResources held for the jobs
    waiting behind it."""
    if before is None or after is None or before is after:
        return False
    if before.min_resources is None and after.min_resources is None:
        return _GROUP_BUT_PHASE(before) == _GROUP_BUT_PHASE(after)
    return _GROUP_BUT_CONDITIONS(before) == _GROUP_BUT_CONDITIONS(after)


def _quiet_node(before: NodeFacts | None, after: NodeFacts | None) -> bool:
    """Whether a node's change moved only its annotations: no predicate, score or action of
    this scheduler reads a node's annotations (the controller-manager's TTL annotation, a CNI's
    bookkeeping); a cycle sees them when something else wakes one, or after `QUIET_PERIOD`."""
    if before is None or after is None or before is after:
        return False
    return _NODE_BUT_ANNOTATIONS(before) == _NODE_BUT_ANNOTATIONS(after)


def _kept(kind: str) -> ConvertFn[Raw]:
    """The converter of a kind kept raw. A PodDisruptionBudget or a ResourceQuota is also
    checked whole: a malformed one is reported as a problem (the snapshot's budget protects its
    namespace; its quota closes the namespace to new jobs)."""
    keep = kept_raw(kind, namespaced=True)
    if kind == CONFIG_MAP_KIND:
        return reservations.checked
    if kind not in (PDB_KIND, QUOTA_KIND):
        return keep

    def check(converters: Converters, obj: Raw, who: Identity) -> Converted[Raw]:
        kept = keep(converters, obj, who)
        if kept.problem:
            return kept
        facts = guarded_budget(obj) if kind == PDB_KIND else guarded_quota(obj)
        return Converted(obj, facts.problem)

    return check


_VOLUME_KINDS: Final[dict[str, Callable[[Raw], Any]]] = {
    CLAIM: guarded_claim,
    VOLUME: guarded_volume,
    CLASS: guarded_class,
}
"""The kinds volume binding reads, kept raw and converted by a `FactsMemo` for each snapshot."""
_VOLUME_EVENTS: Final = frozenset({CLAIM, VOLUME})
"""The kinds whose changes `on_volumes_changed` listeners hear of (a Binding waits on them)."""


def _kept_volume(kind: str, guard: Callable[[Raw], Any]) -> ConvertFn[Raw]:
    """The converter of a volume kind kept raw: a malformed object is kept (its facts say it
    fits nowhere) and reported as a problem."""
    keep = kept_raw(kind, namespaced=kind == CLAIM)

    def check(converters: Converters, obj: Raw, who: Identity) -> Converted[Raw]:
        kept = keep(converters, obj, who)
        if kept.problem:
            return kept
        return Converted(obj, str(guard(obj).problem))

    return check


def _pod_claim(name: str, ephemeral: bool, raw: Raw | None) -> PodClaim:
    """A claim of a pod's volumes, read from its raw object (None: not held)."""
    facts = None if raw is None else guarded_claim(raw)
    return PodClaim(name=name, ephemeral=ephemeral, facts=facts, resource_version=_version(raw))


def _version(raw: Raw | None) -> str:
    """The object's `metadata.resourceVersion`, "" for none."""
    meta = None if raw is None else raw.get("metadata")
    version = meta.get("resourceVersion") if isinstance(meta, Mapping) else None
    return version if isinstance(version, str) else ""


def _in_scope(kind: Kind, key: str) -> bool:
    """Whether the object `key` is one a list of `kind` covers: a kind watched in one namespace,
    or by name (a ConfigMap), lists only that part of the table."""
    namespace, _, name = key.rpartition("/")
    if kind.namespace is not None and namespace != kind.namespace:
        return False
    selector = kind.field_selector or ""
    return not selector.startswith("metadata.name=") or name == selector.partition("=")[2]


def _pod_problem(uid: str, task: TaskFacts | None) -> str | None:
    """Why a decision about pod `uid` no longer holds because the pod is not the one decided on."""
    if task is None:
        return f"the pod with uid {uid} is gone (deleted, or replaced under the same name)"
    return None


def _tolerates_cordon(task: TaskFacts) -> bool:
    """The pod tolerates `node.kubernetes.io/unschedulable:NoSchedule` (as DaemonSet pods do)."""
    return any(
        t.effect in ("", "NoSchedule")
        and t.key in ("", _CORDON_TAINT_KEY)
        and (t.operator == "Exists" or (t.key and not t.value))
        for t in task.tolerations
    )


def _allows_disruption(obj: Raw) -> bool:
    """Whether a PodDisruptionBudget's status allows a disruption now."""
    status = obj.get("status")
    allowed = status.get("disruptionsAllowed") if isinstance(status, Mapping) else None
    return isinstance(allowed, int) and not isinstance(allowed, bool) and allowed > 0


def _has_own_priority(obj: Raw) -> bool:
    spec = obj.get("spec")
    return isinstance(spec, Mapping) and spec.get("priority") is not None


def _by_key(job: JobFacts) -> str:
    return job.key


def _by_name(facts: NodeFacts | QueueFacts | PriorityClassFacts | HyperNodeFacts) -> str:
    return facts.name


def _raw_key(obj: Raw) -> str:
    who = identity(obj, namespaced=True)
    return "" if who is None else who.key
