"""Process settings for `vscheduler run`: frozen, documented, separate from the policy.

Flag names follow kube-scheduler's and Volcano's where they exist (`--kube-api-qps`,
`--leader-elect-lease-duration`, `--schedule-period`, `--listen-address`); `runtime.flags` parses
them, with their syntax, into these Settings. Durations here are seconds.
"""

from __future__ import annotations

import dataclasses

DEFAULT_POLICY_KEY = "volcano-scheduler.conf"
"""The ConfigMap key Volcano's scheduler reads, so a Volcano ConfigMap works unchanged."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PolicySource:
    """Where the policy comes from: a watched ConfigMap key, or a (mounted) file, or neither
    (the built-in default policy)."""

    configmap_namespace: str = ""
    configmap_name: str = ""
    configmap_key: str = DEFAULT_POLICY_KEY
    file: str = ""

    @property
    def uses_configmap(self) -> bool:
        """A ConfigMap is watched."""
        return bool(self.configmap_name)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LeaderElection:
    """kube-scheduler's leader-election settings (on a coordination.k8s.io/v1 Lease)."""

    enabled: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_name: str = "vscheduler"
    resource_namespace: str = "kube-system"
    identity: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Everything `vscheduler run` is told."""

    scheduler_name: str = "vscheduler"
    kubeconfig: str = ""
    """Empty: in-cluster configuration (or $KUBECONFIG / ~/.kube/config outside a cluster)."""
    policy: PolicySource = PolicySource()
    period: float = 1.0
    """Seconds between cycles when nothing wakes the loop earlier."""
    qps: float = 2000.0
    burst: int = 2000
    content_type: str = "application/vnd.kubernetes.protobuf"
    """How the pod watch, Bindings and Events go (`--kube-api-content-type`): protobuf, as
    kube-scheduler's, or `application/json`."""
    bind_workers: int = 16
    listen_address: str = "0.0.0.0:8080"
    """Where /metrics, /healthz and /readyz are served."""
    unready_after_failed_cycles: int = 3
    """Consecutive failed scheduling cycles after which /readyz answers 503."""
    leader_election: LeaderElection = LeaderElection()
    assume_ttl: float = 30.0
    """Seconds an assumed bind or eviction waits for the watch to confirm it."""
    log_level: str = "info"
    log_format: str = "text"
    drain_timeout: float = 10.0
    """The grace SIGTERM gives queued writes: binds and evictions first, then Events (status
    writes not started are skipped); keep it below the pod's terminationGracePeriodSeconds."""
    dry_run: bool = False
    """Shadow mode: decide, write nothing to the API server (`runtime.decisions`); no leader
    election."""
    decisions_file: str = ""
    """With `dry_run`, where each cycle's decisions are appended (empty: the log only)."""
