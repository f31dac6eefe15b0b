"""Leader election on a Lease, with kube-scheduler's timings (15 s lease, 10 s renew, 2 s retry).

kubernetes' Python client elects only on ConfigMap locks, so this is our own, written against a
`LeaseStore` port (`vscheduler.kube` implements it on coordination.k8s.io/v1; tests use an
in-memory one). The rules are client-go's `tryAcquireOrRenew`:

- a candidate takes the lease when it is absent, released (empty holder), already its own, or
  expired. Expired means both that the holder's `renew_time + lease_duration` is past on our wall
  clock and that we have watched the record stay unchanged for `lease_duration` on our monotonic
  clock (client-go's rule, which keeps replicas with skewed wall clocks from overlapping; a
  fresh replica therefore waits one lease duration before taking over a stale lease);
- the leader renews every `retry_period`; a write that loses a race (ConflictError) or fails is
  just a failed attempt;
- `is_leader()` turns False the moment `renew_deadline` has passed since the start of the last
  successful renewal, computed on every call, so a replica cut off from the API server stops
  binding before anyone else can take the lease (`renew_deadline < lease_duration`).

Where kube-scheduler exits on losing the lease, we call `on_stopped_leading` at once and go back
to campaigning, so a replica steps down cleanly and can lead again later. On stop, a leader
releases the lease (kube's ReleaseOnCancel; `release_on_cancel=False` to keep it until it
expires). Time comes only from the injected clock; the thread waits on the stop event, so tests
drive `step()` directly with a FixedClock.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import logging
import math
import socket
import threading
import uuid
from collections.abc import Callable
from typing import Protocol

from vscheduler.clock import Clock
from vscheduler.errors import ClusterError, ConflictError, UnreachableError

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True)
class LeaseRecord:
    """The election state a Lease holds (its spec), plus the resourceVersion it was read at."""

    holder: str
    lease_duration_seconds: int
    acquire_time: dt.datetime | None
    renew_time: dt.datetime | None
    transitions: int
    resource_version: str = ""


class LeaseStore(Protocol):
    """Read and write one kind of lock object (a coordination.k8s.io/v1 Lease)."""

    def get(self, namespace: str, name: str) -> LeaseRecord | None:
        """The lease, or None if it does not exist."""
        ...

    def create(self, namespace: str, name: str, record: LeaseRecord) -> LeaseRecord:
        """Create the lease; `errors.ConflictError` if it already exists."""
        ...

    def update(self, namespace: str, name: str, record: LeaseRecord) -> LeaseRecord:
        """Replace the lease; `errors.ConflictError` if `record.resource_version` is stale."""
        ...


def default_identity() -> str:
    """kube-scheduler's identity: the host name, an underscore, a fresh UUID."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class _Attempt(enum.Enum):
    """How one acquire-or-renew attempt ended."""

    HELD = "held"  # we hold the lease now
    TAKEN = "taken"  # another holder's lease is valid
    FAILED = "failed"  # the store failed or the write lost a race


def _same(a: LeaseRecord, b: LeaseRecord | None) -> bool:
    """Whether two reads show the same election state (resourceVersion aside)."""
    return b is not None and dataclasses.replace(a, resource_version="") == dataclasses.replace(
        b, resource_version=""
    )


class LeaderElector:
    """Campaigns for one Lease from a named thread; see the module docstring for the rules."""

    def __init__(
        self,
        store: LeaseStore,
        *,
        namespace: str,
        name: str,
        identity: str,
        clock: Clock,
        stop: threading.Event,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        on_started_leading: Callable[[], None] = lambda: None,
        on_stopped_leading: Callable[[], None] = lambda: None,
        release_on_cancel: bool = True,
    ) -> None:
        if not identity:
            raise ValueError("leader election: identity must not be empty")
        if not lease_duration > renew_deadline > retry_period > 0:
            raise ValueError(
                "leader election: need lease duration > renew deadline > retry period > 0, got "
                f"{lease_duration} / {renew_deadline} / {retry_period}"
            )
        self._store, self._clock, self._stop = store, clock, stop
        self.namespace, self.name, self.identity = namespace, name, identity
        self.lease_duration, self.renew_deadline = lease_duration, renew_deadline
        self.retry_period, self.release_on_cancel = retry_period, release_on_cancel
        self._on_started, self._on_stopped = on_started_leading, on_stopped_leading
        self._campaign = threading.Lock()
        """Held through one attempt or the release, store I/O included."""
        self._state = threading.Lock()
        """Held briefly around `_leading` / `_renewed_at`, so `is_leader` never waits on I/O."""
        self._observed: LeaseRecord | None = None
        self._observed_at = 0.0
        self._leading = False
        self._renewed_at = 0.0
        self._thread: threading.Thread | None = None

    # --- what the rest of the scheduler asks --------------------------------------------------
    def is_leader(self) -> bool:
        """True while we lead and the last successful renewal began under `renew_deadline` ago."""
        with self._state:
            leading, renewed_at = self._leading, self._renewed_at
        return leading and self._clock.monotonic() - renewed_at < self.renew_deadline

    @property
    def holder(self) -> str:
        """The holder we last saw on the lease ("" if none or not read yet)."""
        observed = self._observed
        return observed.holder if observed is not None else ""

    # --- the campaign -------------------------------------------------------------------------
    def step(self) -> bool:
        """One acquire-or-renew attempt; whether we lead afterwards."""
        with self._campaign:
            started = self._clock.monotonic()
            if self._leading and started - self._renewed_at >= self.renew_deadline:
                self._step_down(f"could not renew within {self.renew_deadline:g}s")
            attempt = self._try_acquire_or_renew(started)
            if attempt is _Attempt.HELD:
                with self._state:
                    became = not self._leading
                    self._leading, self._renewed_at = True, started
                if became:
                    logger.info("%s now leads %s/%s", self.identity, self.namespace, self.name)
                    self._on_started()
            elif attempt is _Attempt.TAKEN and self._leading:
                self._step_down(f"the lease is held by {self.holder}")
        return self.is_leader()

    def _try_acquire_or_renew(self, started: float) -> _Attempt:
        now = self._clock.now()
        try:
            current = self._store.get(self.namespace, self.name)
            if current is None:
                fresh = LeaseRecord(self.identity, self._duration_seconds, now, now, 0)
                self._observe(self._store.create(self.namespace, self.name, fresh), started)
                return _Attempt.HELD
            if not _same(current, self._observed):
                self._observe(current, started)
            if current.holder not in ("", self.identity) and not self._expired(current, started):
                return _Attempt.TAKEN
            claim = self._claim(current, now)
            self._observe(self._store.update(self.namespace, self.name, claim), started)
        except ConflictError as exc:
            logger.debug("lease %s/%s: lost a write race: %s", self.namespace, self.name, exc)
            return _Attempt.FAILED
        except ClusterError as exc:  # an outage is reported once, by the client
            level = logging.INFO if isinstance(exc, UnreachableError) else logging.WARNING
            logger.log(level, "lease %s/%s: %s", self.namespace, self.name, exc)
            return _Attempt.FAILED
        return _Attempt.HELD

    def _expired(self, record: LeaseRecord, started: float) -> bool:
        """Past its renew time on our wall clock and unchanged for a lease duration as we saw it."""
        duration = record.lease_duration_seconds
        unchanged_long = started - self._observed_at >= duration
        wall_past = record.renew_time is None or (
            record.renew_time + dt.timedelta(seconds=duration) < self._clock.now()
        )
        return unchanged_long and wall_past

    def _claim(self, current: LeaseRecord, now: dt.datetime) -> LeaseRecord:
        """The record that makes or keeps us the holder."""
        ours = current.holder == self.identity
        return LeaseRecord(
            holder=self.identity,
            lease_duration_seconds=self._duration_seconds,
            acquire_time=current.acquire_time if ours else now,
            renew_time=now,
            transitions=current.transitions if ours else current.transitions + 1,
            resource_version=current.resource_version,
        )

    def _observe(self, record: LeaseRecord, at: float) -> None:
        self._observed, self._observed_at = record, at

    def _step_down(self, why: str) -> None:
        with self._state:
            self._leading = False
        logger.warning("%s stops leading %s/%s: %s", self.identity, self.namespace, self.name, why)
        self._on_stopped()

    @property
    def _duration_seconds(self) -> int:
        return math.ceil(self.lease_duration)

    # --- stopping -----------------------------------------------------------------------------
    def release(self) -> bool:
        """Give the lease up if we hold it (empty holder, 1 s duration); whether we did."""
        with self._campaign:
            if self._leading:
                self._step_down("stopping")
            observed = self._observed
            if observed is None or observed.holder != self.identity:
                return False
            now = self._clock.now()
            empty = LeaseRecord("", 1, now, now, observed.transitions, observed.resource_version)
            try:
                released = self._store.update(self.namespace, self.name, empty)
                self._observe(released, self._clock.monotonic())
            except ClusterError as exc:
                logger.warning("lease %s/%s: release failed: %s", self.namespace, self.name, exc)
                return False
            logger.info("%s released %s/%s", self.identity, self.namespace, self.name)
            return True

    def run(self) -> None:
        """Campaign until the stop event is set, then step down (and release, if so configured)."""
        while not self._stop.is_set():
            try:
                self.step()
            except Exception:
                logger.exception("leader election attempt failed")
            self._stop.wait(self.retry_period)
        if self.release_on_cancel:
            self.release()
        else:
            with self._campaign:
                if self._leading:
                    self._step_down("stopping")

    def start(self) -> threading.Thread:
        """Run the campaign in a daemon thread named `leader-elector`."""
        if self._thread is not None:
            raise RuntimeError("LeaderElector already started")
        self._thread = threading.Thread(target=self.run, name="leader-elector", daemon=True)
        self._thread.start()
        return self._thread

    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread to end (after the stop event is set)."""
        if self._thread is not None:
            self._thread.join(timeout)
