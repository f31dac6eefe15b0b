"""The composition root of `vscheduler run`: builds every concrete object, starts and stops the
threads, handles SIGTERM. The only wiring code; everything else is handed what it needs.

    informers (one thread per kind) -> SchedulerCache  -.
    informer (policy ConfigMap)     -> PolicyHolder    -+-> Scheduler loop (main thread)
    LeaderElector (Lease)           -> is_leading      -'        | CycleResult
    ObsServer: /metrics /healthz /readyz                         v
                                               EffectsExecutor (bind / evict / status pool)
    UsageLoop (Prometheus node usage, every replica) -> SchedulerCache.set_usage
    ConfigMapWatches (informers of the ConfigMaps the policy's plugins read) -> SchedulerCache

`--dry-run` (shadow mode): the API client is read-only (every write refused before it is sent),
no leader election (`vscheduler_is_leader` stays 0), the cycles' decisions go to a
`runtime.decisions.DecisionRecorder` (log and decisions file) instead of the effects, and
Events to the log (`DryRunEvents`).

On SIGTERM or SIGINT: the loop stops; within `Settings.drain_timeout` the queued binds and
evictions are sent first, then as many Events as the time left allows
(`EffectsExecutor.shutdown` logs what was not sent); the lease is released, the informers and
the HTTP server stop. A node deleted drops the binds queued to it
(`SchedulerCache.on_node_deleted` -> `EffectsExecutor.node_deleted`); a step-down drops all
queued work (`EffectsExecutor.step_down`).
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import random
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Literal, Protocol

from prometheus_client import CollectorRegistry

from vscheduler import catalog
from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import Clock, SystemClock
from vscheduler.effects.executor import EffectsExecutor
from vscheduler.effects.ports import ObjectRef
from vscheduler.effects.retry import RetryPolicy
from vscheduler.effects.volume_wait import DEFAULT_BIND_TIMEOUT
from vscheduler.election import LeaderElector, LeaseRecord, default_identity
from vscheduler.errors import ClusterError, InputError, PolicyError
from vscheduler.informer.informer import Informer
from vscheduler.informer.kinds import CLUSTER_KINDS, Kind, config_map
from vscheduler.informer.ports import Sink
from vscheduler.informer.readiness import SyncGate
from vscheduler.kube import lease as kube_lease
from vscheduler.kube.client import USER_AGENT, ClientSettings, KubeApi, connect
from vscheduler.kube.lister import KubeLister
from vscheduler.kube.outage import Outage
from vscheduler.kube.protobuf import PROTOBUF
from vscheduler.kube.writers import KubeWriter
from vscheduler.model.facts import FieldWarning
from vscheduler.obs.http import ObsServer
from vscheduler.obs.logs import setup_logging
from vscheduler.obs.metrics import SchedulerMetrics
from vscheduler.obs.usage import UsageLoop
from vscheduler.runtime.decisions import DecisionRecorder, DryRunEvents
from vscheduler.runtime.health import CycleHealth
from vscheduler.runtime.policy import (
    ConfigMapPolicy,
    FilePolicy,
    PolicyHolder,
    Rejection,
    kept_policy,
    read_policy_file,
)
from vscheduler.runtime.scheduler import Scheduler
from vscheduler.runtime.settings import Settings
from vscheduler.runtime.watches import ConfigMapWatches

logger = logging.getLogger(__name__)


class KubeLeaseStore:
    """election.LeaseStore over the kube adapter's Lease calls."""

    def __init__(self, api: KubeApi) -> None:
        self._api = api

    def get(self, namespace: str, name: str) -> LeaseRecord | None:
        """The Lease, or None."""
        found = kube_lease.LeaseClient(self._api, namespace, name).get()
        return None if found is None else _from_kube(found)

    def create(self, namespace: str, name: str, record: LeaseRecord) -> LeaseRecord:
        """Create it (ConflictError if it exists)."""
        client = kube_lease.LeaseClient(self._api, namespace, name)
        return _from_kube(client.create(_to_kube(record)))

    def update(self, namespace: str, name: str, record: LeaseRecord) -> LeaseRecord:
        """Replace it at its resourceVersion (ConflictError if stale)."""
        client = kube_lease.LeaseClient(self._api, namespace, name)
        return _from_kube(client.update(_to_kube(record)))


def _from_kube(r: kube_lease.LeaseRecord) -> LeaseRecord:
    return LeaseRecord(
        holder=r.holder_identity or "",
        lease_duration_seconds=r.lease_duration_seconds or 0,
        acquire_time=r.acquire_time,
        renew_time=r.renew_time,
        transitions=r.lease_transitions,
        resource_version=r.resource_version,
    )


def _to_kube(r: LeaseRecord) -> kube_lease.LeaseRecord:
    return kube_lease.LeaseRecord(
        holder_identity=r.holder or None,
        lease_duration_seconds=r.lease_duration_seconds,
        acquire_time=r.acquire_time,
        renew_time=r.renew_time,
        lease_transitions=r.transitions,
        resource_version=r.resource_version,
    )


INVALID_OBJECT = "InvalidObject"
"""The reason of the Warning Event on an object the cache could not read."""
CYCLES_FAILING = "SchedulingCyclesFailing"
"""The reason of the Warning Event on the scheduler's Lease when cycles keep failing."""
CYCLES_RECOVERED = "SchedulingCyclesRecovered"
"""The reason of the Normal Event on the scheduler's Lease when a cycle runs again."""


class EventWriter(Protocol):
    """Where the composition root's own Events go (the API server, or the log of a dry run)."""

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        """Record an Event about `ref`."""
        ...


class ProblemReporter:
    """Warning Events (and log lines) for cluster objects the cache could not read, and for
    objects read other than as written (an amount above the scheduler's ceiling; an unusual
    value read as Volcano reads it), once each, with the warning's reason."""

    def __init__(self, cache: SchedulerCache, writer: EventWriter) -> None:
        self._cache, self._writer = cache, writer
        self._reported: dict[str, str] = {}
        self._warned: dict[str, tuple[FieldWarning, ...]] = {}

    def report(self) -> None:
        """Report every problem and warning not reported yet (or whose message changed)."""
        problems = self._cache.problems()
        for label, message in problems.items():
            if self._reported.get(label) == message or label.startswith("Pod "):
                continue  # a malformed pod of ours hears it through FailedScheduling already
            self._reported[label] = message
            logger.error("cannot use %s: %s", label, message)
            self._event(label, INVALID_OBJECT, message)
        for label in set(self._reported) - set(problems):
            del self._reported[label]
        warnings = self._cache.warnings()
        for label, held in warnings.items():
            if self._warned.get(label) == held:
                continue
            self._warned[label] = held
            for warning in held:
                logger.warning("%s", warning.message)
                self._event(label, warning.reason, warning.message)
        for label in set(self._warned) - set(warnings):
            del self._warned[label]

    def _event(self, label: str, reason: str, message: str) -> None:
        ref = _ref_of(self._cache, label)
        if ref is not None:
            try:
                self._writer.record_event(ref, "Warning", reason, message)
            except ClusterError as exc:
                logger.warning("could not record the event for %s: %s", label, exc)


_API_VERSIONS = {k.name: k.api_version for k in CLUSTER_KINDS}


def _ref_of(cache: SchedulerCache, label: str) -> ObjectRef | None:
    kind, _, key = label.partition(" ")
    raw = cache.object_raw(kind, key)
    meta = raw.get("metadata") if raw is not None else None
    if not isinstance(meta, dict):
        return None
    namespace, _, name = key.rpartition("/")
    return ObjectRef(
        kind=kind,
        api_version=_API_VERSIONS.get(kind, "v1"),
        namespace=namespace,
        name=name,
        uid=str(meta.get("uid", "")),
    )


class App:
    """Every long-lived object of one `vscheduler run`."""

    def __init__(self, settings: Settings, *, clock: Clock) -> None:
        self.settings, self.clock = settings, clock
        self.elector: LeaderElector | None = None
        self.stop = threading.Event()
        self.stop_electing = threading.Event()
        """Set only after in-flight binds drained, so the lease outlives them."""
        self.registry = CollectorRegistry()
        self.metrics = SchedulerMetrics(self.registry)
        self.identity = settings.leader_election.identity or default_identity()
        client = ClientSettings(
            kubeconfig=settings.kubeconfig or None,
            qps=settings.qps,
            burst=settings.burst,
            bind_workers=settings.bind_workers,
            user_agent=f"{USER_AGENT} ({self.identity})",
        )
        # Every write of this client is fenced on leadership and on the effects' check that its
        # decision still holds, asked after the rate limiter's wait and right before its bytes
        # leave; the Lease has a client of its own, so renewals never queue behind binds. Both
        # report an API server outage through one `Outage`: one warning when it ends.
        self.outage = Outage(clock)
        dry_run = settings.dry_run
        self.api = connect(
            client,
            clock=clock,
            fence=None if dry_run else self._may_send,
            still_leading=None if dry_run else self.is_leading,
            outage=self.outage,
            read_only=dry_run,
        )
        self.lease_api = connect(
            dataclasses.replace(client, qps=0, bind_workers=1),
            clock=clock,
            outage=self.outage,
            read_only=dry_run,
        )
        protobuf = settings.content_type == PROTOBUF
        self.writer = KubeWriter(
            self.api,
            clock=clock,
            component=settings.scheduler_name,
            instance=self.identity,
            protobuf=protobuf,
        )
        self._dry_run_events = DryRunEvents()
        self.recorder = DecisionRecorder(settings.decisions_file, clock=clock) if dry_run else None
        self.cache = SchedulerCache(
            clock=clock, scheduler_name=settings.scheduler_name, assume_ttl=settings.assume_ttl
        )
        self.gate = SyncGate()
        self.watches = ConfigMapWatches(start=self._watch, forget=self._unwatch)
        # Standbys collect too, so a new leader schedules on warm usage data.
        self.usage = UsageLoop(self.cache.set_usage, clock=clock, observer=self.metrics)
        self.policy = PolicyHolder(on_loaded=self._loaded, on_rejected=self._rejected)
        self._configure_usage()
        self.watches.follow(self.policy.current)
        self.file_policy = (
            FilePolicy(self.policy, settings.policy.file) if settings.policy.file else None
        )
        self.lister = KubeLister(self.api, protobuf_watch=protobuf)
        self.informers = self._informers(self.lister)
        self.effects = EffectsExecutor(
            self.writer,
            self.cache,
            clock=clock,
            workers=settings.bind_workers,
            on_outcome=self.metrics.observe_effect,
            on_eviction=lambda evict, result: self.metrics.observe_eviction(
                evict.action, evict.strategy, result
            ),
            on_duration=self.metrics.observe_duration,
            retry=RetryPolicy(jitter=random.Random()),
            may_write=self.is_leading,
            config_maps=self.writer,
            nominations=self.writer,
            volume_binding=lambda: self.policy.current.volume_binding,
            volume_bind_timeout=self._volume_bind_timeout,
        )
        self.cache.on_node_deleted(self.effects.node_deleted)
        self.cache.on_volumes_changed(self.effects.volumes_changed)
        self.elector = self._elector()
        if self.elector is None and not dry_run:  # without election this replica schedules
            self.metrics.set_leader(True)  # (a dry run schedules nothing: it reports 0)
        self.problems = ProblemReporter(self.cache, self.events)
        self._frozen = False
        self._run_started = clock.monotonic()
        self.health = CycleHealth(
            settings.unready_after_failed_cycles,
            on_count=self.metrics.set_consecutive_failed_cycles,
            on_failing=lambda message: self._scheduler_event("Warning", CYCLES_FAILING, message),
            on_recovered=lambda message: self._scheduler_event("Normal", CYCLES_RECOVERED, message),
        )
        self.scheduler = Scheduler(
            cache=self.cache,
            policy=self.policy,
            effects=self.recorder or self.effects,
            clock=clock,
            observer=self.metrics,
            is_synced=self.gate.is_synced,
            wait_synced=self.gate.wait,
            is_leading=self.is_leading,
            before_cycle=self._before_cycle,
            period=settings.period,
            health=self.health,
        )
        self.http = ObsServer(
            settings.listen_address,
            registry=self.registry,
            is_healthy=lambda: not self.stop.is_set(),
            is_ready=self.readiness,
        )

    # --- wiring -------------------------------------------------------------------------------
    def _informers(self, lister: KubeLister) -> list[Informer]:
        rng = random.Random()
        kinds: list[tuple[Kind, Sink]] = [(kind, self.cache) for kind in CLUSTER_KINDS]
        source = self.settings.policy
        if source.uses_configmap and not source.file:
            kind = config_map(source.configmap_namespace, source.configmap_name)
            kinds.append((kind, ConfigMapPolicy(self.policy, key=source.configmap_key)))
        return [
            Informer(
                kind,
                lister,
                sink,
                clock=self.clock,
                rng=rng,
                stop=self.stop,
                gate=self.gate,
                observe=self.metrics.observe_informer,
            )
            for kind, sink in kinds
        ]

    def _watch(self, kind: Kind) -> Informer:
        """Start an informer of one ConfigMap a plugin reads, into the cache (and the gate)."""
        informer = Informer(
            kind,
            self.lister,
            self.cache,
            clock=self.clock,
            rng=random.Random(),
            stop=threading.Event(),
            gate=self.gate,
            observe=self.metrics.observe_informer,
        )
        informer.start()
        return informer

    def _unwatch(self, kind: Kind) -> None:
        """A ConfigMap no plugin reads any more: out of the cache, and not waited for."""
        self.cache.replace(kind, [])
        self.gate.mark_synced(kind)

    def _elector(self) -> LeaderElector | None:
        election = self.settings.leader_election
        if not election.enabled:
            return None
        return LeaderElector(
            KubeLeaseStore(self.lease_api),
            namespace=election.resource_namespace,
            name=election.resource_name,
            identity=self.identity,
            clock=self.clock,
            stop=self.stop_electing,
            lease_duration=election.lease_duration,
            renew_deadline=election.renew_deadline,
            retry_period=election.retry_period,
            on_started_leading=self._started_leading,
            on_stopped_leading=self._stopped_leading,
        )

    @property
    def events(self) -> EventWriter:
        """Where the scheduler's own Events go: the API server, or the log of a dry run."""
        return self._dry_run_events if self.settings.dry_run else self.writer

    def _volume_bind_timeout(self) -> float:
        """Seconds a bind waits for its pod's volumes: the policy's (`volumebinding.
        bindTimeoutSeconds` of predicates), else kube's default."""
        timeout = self.policy.current.volume_bind_timeout
        return DEFAULT_BIND_TIMEOUT if timeout is None else timeout

    def is_leading(self) -> bool:
        """Whether this replica may schedule now."""
        return self.elector is None or self.elector.is_leader()

    def _may_send(self) -> bool:
        """The API client's fence, asked right before a write leaves: raises when the effects'
        decision being sent no longer holds; False once the lease deadline has passed."""
        self.effects.check_send()
        return self.is_leading()

    def readiness(self) -> tuple[bool, str]:
        """Ready once every informer has synced and, when electing, while leading, unless the
        last `--unready-after-failed-cycles` cycles all failed."""
        if not self.gate.is_synced():
            return False, "informers not synced: " + ", ".join(self.gate.pending())
        if not self.is_leading():
            return False, "not leading"
        return self.health.readiness()

    def _scheduler_event(self, type_: Literal["Normal", "Warning"], reason: str, text: str) -> None:
        """An Event about the scheduler itself, on its Lease (named by the leader-election
        flags, whether or not it elects)."""
        election = self.settings.leader_election
        ref = ObjectRef(
            kind="Lease",
            api_version="coordination.k8s.io/v1",
            namespace=election.resource_namespace,
            name=election.resource_name,
            uid="",
        )
        try:
            self.events.record_event(ref, type_, reason, f"{self.identity}: {text}")
        except ClusterError as exc:
            logger.warning("could not record the %s event: %s", reason, exc)

    def _before_cycle(self) -> None:
        if not self._frozen and (
            self.gate.is_synced()
            or self.clock.monotonic() - self._run_started > FIRST_LISTS_GC_PAUSE
        ):
            # The first full lists made most of the heap; moving it out of the collector's view
            # keeps later collections from rescanning 50k pods (the lister measured GC as most of
            # its decode time). The collector was paused while they came in (`run`).
            gc.freeze()
            gc.enable()
            self._frozen = True
        if self.file_policy is not None:
            self.file_policy.poll()
        self.problems.report()

    def _pause_collector(self) -> None:
        """`GC_THRESHOLDS` from now on; the collector paused until the first lists are in, at
        most `FIRST_LISTS_GC_PAUSE` seconds (`_before_cycle` resumes it)."""
        gc.set_threshold(*GC_THRESHOLDS)
        gc.disable()
        self._run_started = self.clock.monotonic()

    def _started_leading(self) -> None:
        logger.info("%s is now the leader", self.identity)
        self.metrics.set_leader(True)
        self.cache.changed.set()

    def _stopped_leading(self) -> None:
        logger.warning("%s stopped leading: binding stops", self.identity)
        self.metrics.set_leader(False)
        self.effects.step_down()

    def _configure_usage(self) -> None:
        pipeline = self.policy.current
        self.usage.configure(pipeline.metrics, pipeline.usage_periods)

    def _loaded(self, source: str) -> None:
        self.metrics.observe_reload(True, self.clock.now().timestamp())
        self._configure_usage()
        self.watches.follow(self.policy.current)
        self.cache.changed.set()

    def _rejected(self, rejection: Rejection) -> None:
        self.metrics.observe_reload(False, self.clock.now().timestamp())
        source = self.settings.policy
        if not source.uses_configmap or source.file:
            return
        ref = ObjectRef(
            kind="ConfigMap",
            api_version="v1",
            namespace=source.configmap_namespace,
            name=source.configmap_name,
            uid=rejection.uid,
        )
        message = (
            f"policy rejected; {kept_policy(self.policy.source)} stays in force: "
            f"{'; '.join(rejection.errors)}"
        )
        try:
            self.events.record_event(ref, "Warning", "PolicyRejected", message)
        except ClusterError as exc:
            logger.warning("could not record the PolicyRejected event: %s", exc)

    # --- running ------------------------------------------------------------------------------
    def run(self) -> int:
        """Start everything, schedule until stopped, shut down cleanly."""
        port = self.http.start()
        logger.info("serving /metrics, /healthz, /readyz on port %d", port)
        if self.settings.dry_run:
            logger.warning(
                "dry run: deciding the pods of %s, writing nothing to the API server; "
                "decisions to %s",
                self.settings.scheduler_name,
                self.settings.decisions_file or "the log only",
            )
        self._pause_collector()
        for informer in self.informers:
            informer.start()
        self.watches.start()
        self.usage.start()
        if self.elector is not None:
            self.elector.start()
        try:
            self.scheduler.run(self.stop)
        finally:
            self.shutdown()
        return 0

    def request_stop(self) -> None:
        """Stop the loop and the threads: `stop`, and the cache's change flag the loop waits on,
        so it notices at once (signal handlers call this)."""
        self.stop.set()
        self.cache.changed.set()

    def shutdown(self) -> None:
        """Drain binds, then Events, within the grace period; release the lease, stop threads
        (idempotent)."""
        self.request_stop()
        if not self._frozen:
            gc.enable()  # stopped before the first lists were in: the collector resumes
        self.effects.shutdown(self.settings.drain_timeout)
        if self.recorder is not None:
            self.recorder.shutdown(self.settings.drain_timeout)
        self.stop_electing.set()  # only now: the lease is released after the last bind
        if self.elector is not None:
            self.elector.join(timeout=5.0)
        for informer in self.informers:
            informer.stop()
        self.watches.stop()
        self.usage.stop(timeout=1.0)
        self.http.stop()
        self.api.close()
        self.lease_api.close()


GC_THRESHOLDS = (50_000, 20, 10)
"""The cyclic collector's thresholds while `run` schedules (Python's default is 700, 10, 10).

A cycle makes tens of thousands of small objects that live until it ends (a task and a job
record per pod, the plugins' maps); with a young generation of 700 objects they were scanned
several times each and promoted to the old generations, whose collections then rescanned the
whole cache. With 50,000 the young collections run about once a cycle, and most of what a cycle
made is gone by then: an in-memory cycle over 3,000 running pods went from 0.108 s to 0.055 s
(docs/design.md, "Garbage collection")."""


FIRST_LISTS_GC_PAUSE = 60.0
"""Seconds at most the cyclic collector stays paused while the first lists come in.

Decoding and converting a 10,000-pod list makes millions of objects that all live on; the
collector scanned them again and again as they came (`json.loads` of a 21 MB pod list: 0.36 s
paused, 0.49 s with `GC_THRESHOLDS`, 1.3 s with Python's defaults). Once every kind has synced
(or this long after the start, if the API server keeps a list from coming), the heap is frozen
and the collector resumes."""


def run(settings: Settings) -> int:
    """`vscheduler run`: returns the exit code."""
    setup_logging(settings.log_level, settings.log_format)  # type: ignore[arg-type]
    clock = SystemClock()
    if settings.policy.file:
        try:
            catalog.load_pipeline(
                read_policy_file(settings.policy.file), source=settings.policy.file
            )
        except (InputError, PolicyError) as exc:
            logger.error("policy file rejected: %s", exc)
            return 1
    app = App(settings, clock=clock)
    _on_signals(app.request_stop)
    return app.run()


def _on_signals(stop: Callable[[], None]) -> None:
    def handler(signum: int, _frame: FrameType | None) -> None:
        logger.info("signal %d: stopping", signum)
        stop()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
