"""Binds waiting for their pod's volumes to be bound (kube-scheduler's VolumeBinding PreBind:
`BindPodVolumes` polls `checkBindings` until every claim it wrote for is bound, up to
`bindTimeoutSeconds`).

Owns: the waiting set (`VolumeWaits`: per pod, its bind, the claims it waits for, its deadline on
the injected clock's monotonic time) and the check of one waiting bind against the claims and
volumes as the cache holds them now (`check`: bound, still waiting, or failed in kube's words).
A waiting bind holds no worker: the executor keeps it here, assumed in the cache on its node
(held: it does not expire, as a queued bind), checks the set on the dispatcher thread whenever the
cache sees a claim or a volume change and every `VOLUME_POLL` seconds while it is not empty (the
timeouts, a pod or node gone), and queues the Binding on the bind pool once `check` says bound.
Must not: do I/O, read a clock, or touch the cache (the executor does, with what these return;
the poll's timer thread only calls the executor back).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
from collections.abc import Callable
from typing import Final

from vscheduler.effects.volumes import Claimed, ClaimWait, Provisioned
from vscheduler.model.commands import Bind
from vscheduler.model.nodeselect import required_matches
from vscheduler.model.volumebind import HeldBinding
from vscheduler.model.volumes import VolumeFacts

VOLUME_POLL: Final = 1.0
"""Seconds between two checks of the waiting binds while some wait (kube polls every second);
a change of a claim or a volume is checked at once."""
DEFAULT_BIND_TIMEOUT: Final = 600.0
"""Seconds a bind waits for its pod's claims to be bound at most (kube's and Volcano's
`bindTimeoutSeconds`)."""
DEADLINE_EXCEEDED: Final = "context deadline exceeded"
"""kube's words for a wait past its timeout (Go's `context.DeadlineExceeded`)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Bound:
    """Every claim waited for is bound: the Binding may go."""


@dataclasses.dataclass(frozen=True, slots=True)
class Waiting:
    """Some claim is not bound yet (or the cache has not shown a write yet)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Failed:
    """The wait cannot end well: `reason`, in kube's words (`checkBindings`' errors)."""

    reason: str


Verdict = Bound | Waiting | Failed
BOUND: Final = Bound()
WAITING: Final = Waiting()


def check(waits: tuple[ClaimWait, ...], held: HeldBinding, node: str) -> Verdict:
    """kube's `checkBindings` for a pod bound to `node`: fails when a claim or a pre-made volume
    is gone, the volume's claimRef was reset or names another claim, a claim's selected-node
    annotation no longer names the node (the provisioner gave up), or a volume's node affinity
    does not admit the node; bound when every claim is bound (`spec.volumeName` and
    `pv.kubernetes.io/bind-completed`); else waiting, as while the cache still holds an object
    at the version a write was preconditioned on (it has not shown the write yet)."""
    for wait in waits:
        verdict = (
            _check_claimed(wait, held, node)
            if isinstance(wait, Claimed)
            else _check_provisioned(wait, held, node)
        )
        if verdict is not BOUND:
            return verdict
    return BOUND


def _check_claimed(wait: Claimed, held: HeldBinding, node: str) -> Verdict:
    volume = held.volumes.get(wait.volume)
    if volume is None:
        return Failed(
            f'failed to check binding: could not find v1.PersistentVolume "{wait.volume}"'
        )
    claim = held.claims.get(wait.key)
    if claim is None:
        return Failed(
            f'failed to check binding: could not find v1.PersistentVolumeClaim "{wait.key}"'
        )
    if wait.written is not None and volume.resource_version == wait.written:
        return WAITING  # our claimRef not seen yet
    affinity = _affinity_problem(volume.facts, held, node)
    if affinity is not None:
        return Failed(affinity)
    facts = volume.facts
    if not facts.claim or not facts.claim_uid:
        return Failed(f'ClaimRef got reset for pv "{wait.volume}"')
    if facts.claim != wait.key or facts.claim_uid != claim.facts.uid:
        return Failed(f'pv "{wait.volume}" is bound to another claim {facts.claim}')
    return BOUND if claim.facts.fully_bound else WAITING


def _check_provisioned(wait: Provisioned, held: HeldBinding, node: str) -> Verdict:
    claim = held.claims.get(wait.key)
    if claim is None:
        return Failed(
            f"failed to check provisioning pvc: could not find v1.PersistentVolumeClaim"
            f' "{wait.key}"'
        )
    if wait.written is not None and claim.resource_version == wait.written:
        return WAITING  # our annotation not seen yet
    facts = claim.facts
    if facts.selected_node != node:  # the provisioner removes it to ask for another node
        return Failed(f'provisioning failed for PVC "{wait.name}"')
    if facts.volume_name:
        volume = held.volumes.get(facts.volume_name)
        if volume is None:
            return WAITING  # not seen yet, or deleted: then the claim is unbound in time
        affinity = _affinity_problem(volume.facts, held, node)
        if affinity is not None:
            return Failed(affinity)
    return BOUND if facts.fully_bound else WAITING


def _affinity_problem(volume: VolumeFacts, held: HeldBinding, node: str) -> str | None:
    """kube's `CheckNodeAffinity` of a volume against the node's labels, in its words."""
    if required_matches(volume.node_affinity, held.node_labels, ""):
        return None
    return (
        f'pv "{volume.name}" node affinity doesn\'t match node "{node}": no matching'
        " NodeSelectorTerms"
    )


@dataclasses.dataclass(frozen=True, slots=True)
class WaitingBind:
    """A bind whose volume writes were sent, waiting for its pod's claims to be bound."""

    bind: Bind
    waits: tuple[ClaimWait, ...]
    deadline: float
    """On the clock's monotonic time."""
    timeout: float
    term: int
    """The leadership term it was queued under (`Terms`): a later term never sends it."""
    created: dt.datetime | None = None


class VolumeWaits:
    """The waiting binds, by pod uid, and when they are next checked; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, WaitingBind] = {}
        self._check_queued = False
        self._timer: threading.Timer | None = None
        self._closed = False

    # --- when to check ---------------------------------------------------------------------
    def want_check(self) -> bool:
        """Whether a check is to be queued now (False: one is queued already)."""
        with self._lock:
            queued, self._check_queued = self._check_queued, True
            return not queued

    def check_begins(self) -> None:
        """The queued check runs (or was not queued after all): a change from now on queues
        another."""
        with self._lock:
            self._check_queued = False

    def arm(self, delay: float, fire: Callable[[], None]) -> None:
        """`fire()` in `delay` seconds, on a timer thread, if some bind waits and no timer is
        armed (the poll of the timeouts)."""
        with self._lock:
            if self._timer is not None or self._closed or not self._waiting:
                return

            def due() -> None:
                with self._lock:
                    self._timer = None
                fire()

            self._timer = threading.Timer(delay, due)
            self._timer.daemon = True
            self._timer.start()

    def close(self) -> None:
        """No timer from now on (the one armed is cancelled)."""
        with self._lock:
            self._closed = True
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    # --- the waiting binds -----------------------------------------------------------------

    def add(self, waiting: WaitingBind) -> None:
        with self._lock:
            self._waiting[waiting.bind.task_uid] = waiting

    def take(self, waiting: WaitingBind) -> bool:
        """Remove `waiting` (it ends now); False when it was removed already (dropped)."""
        with self._lock:
            if self._waiting.get(waiting.bind.task_uid) is not waiting:
                return False
            del self._waiting[waiting.bind.task_uid]
            return True

    def all(self) -> list[WaitingBind]:
        """Every waiting bind, in the order they began to wait."""
        with self._lock:
            return list(self._waiting.values())

    def drop_node(self, node: str) -> list[WaitingBind]:
        """Remove the binds waiting to `node`; the ones removed."""
        with self._lock:
            dropped = [w for w in self._waiting.values() if w.bind.node == node]
            for waiting in dropped:
                del self._waiting[waiting.bind.task_uid]
            return dropped

    def drop_all(self) -> list[WaitingBind]:
        """Remove every waiting bind; the ones removed."""
        with self._lock:
            dropped = list(self._waiting.values())
            self._waiting.clear()
            return dropped

    def __len__(self) -> int:
        with self._lock:
            return len(self._waiting)
