"""What every integration test needs: a cluster backend and a `vscheduler run` process.

Backends (`VSCHEDULER_TEST_BACKEND`), the same tests on each:

- `local` (default): etcd, kube-apiserver, kube-controller-manager and kwok as local processes
  (integration/controlplane.py), a fresh control plane per test (4-6 s), so tests never share
  state;
- `kind`: a kind cluster through pytest-kind (needs Docker and `pip install pytest-kind`); the
  kwok binary from `scripts/controlplane` runs against it so fake nodes work the same way;
- `existing`: the cluster of `$KUBECONFIG` (kwok started against it likewise).

The `cluster` fixture yields one object with LocalControlPlane's methods on every backend (the
`Cluster` protocol; `ScopedCluster` adds the test's names): a `LocalCluster` on `local`, a
`RemoteCluster` on `kind` and `existing`, where the cluster is shared by the session (a
`RemoteBackend`) and each test works in its own namespace with its own scheduler name and node
label, the plain names (`test`, `vscheduler`) being translated (see RemoteCluster and
integration/README.md, "Backends").

The scheduler under test runs as a subprocess (`python -m vscheduler run ...`), exactly as a user
would start it, with its own /metrics port; its log is kept for the failure message.

The harness, by concern (this package re-exports each module's public names, so tests write
`harness.pod`, `harness.Scheduler`...):

    waiting         wait_for: poll a check until it holds
    clusters        the Cluster protocols, the backend choice, the local backend, scoped names
    remote          the shared-cluster backends (kind, existing): RemoteBackend, remote_backend
    remote_cluster  one test's view of a shared cluster: RemoteCluster
    scheduler       the scheduler under test (a `vscheduler run` process) and its metrics
    objects         Kubernetes objects to create, and the reads assertions use
"""

from __future__ import annotations

from integration.harness.clusters import (
    BACKENDS,
    CRDS,
    KWOK_ANNOTATION,
    RUN_LABEL,
    BackendUnavailableError,
    Cluster,
    LocalCluster,
    ScopedCluster,
    backend,
    install_crds,
    lease_namespace_of,
    namespace_of,
    scheduler_name_of,
    scoped_args,
)
from integration.harness.objects import (
    PODGROUPS,
    bound,
    condition,
    configmap,
    create,
    dump,
    events,
    events_about,
    get_pod,
    get_podgroup,
    is_api_error,
    iterate,
    pod,
    pod_condition,
    podgroup,
    pods,
    queue,
    update_configmap,
)
from integration.harness.remote import (
    RemoteBackend,
    docker_answers,
    remote_backend,
)
from integration.harness.remote_cluster import (
    RemoteCluster,
)
from integration.harness.scheduler import (
    Scheduler,
    metric,
    scrape,
)
from integration.harness.waiting import (
    wait_for,
)

__all__ = [
    "BACKENDS",
    "CRDS",
    "KWOK_ANNOTATION",
    "PODGROUPS",
    "RUN_LABEL",
    "BackendUnavailableError",
    "Cluster",
    "LocalCluster",
    "RemoteBackend",
    "RemoteCluster",
    "Scheduler",
    "ScopedCluster",
    "backend",
    "bound",
    "condition",
    "configmap",
    "create",
    "docker_answers",
    "dump",
    "events",
    "events_about",
    "get_pod",
    "get_podgroup",
    "install_crds",
    "is_api_error",
    "iterate",
    "lease_namespace_of",
    "metric",
    "namespace_of",
    "pod",
    "pod_condition",
    "podgroup",
    "pods",
    "queue",
    "remote_backend",
    "scheduler_name_of",
    "scoped_args",
    "scrape",
    "update_configmap",
    "wait_for",
]
