"""The cluster a test gets, whatever runs it: the `Cluster` protocols, the backend choice, the
`local` backend, and the test's names on a shared cluster.

Owns: `backend()` (`VSCHEDULER_TEST_BACKEND`), `Cluster` / `ScopedCluster`, `LocalCluster`, the
Volcano CRDs' installation, and translating plain names (`test`, `vscheduler`, a policy
ConfigMap's namespace) into the test's own (`namespace_of`, `scheduler_name_of`, `scoped_args`).
Must not: start a shared cluster (`remote`) or a scheduler (`scheduler`).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from integration.controlplane import REPO_ROOT, ControlPlaneError, LocalControlPlane

T = TypeVar("T")
CRDS = (
    REPO_ROOT / "deploy" / "crds" / "scheduling.volcano.sh_podgroups.yaml",
    REPO_ROOT / "deploy" / "crds" / "scheduling.volcano.sh_queues.yaml",
    REPO_ROOT / "deploy" / "crds" / "topology.volcano.sh_hypernodes.yaml",
)
BACKENDS = ("local", "kind", "existing")


def backend() -> str:
    """The backend the tests run on."""
    name = os.environ.get("VSCHEDULER_TEST_BACKEND", "local")
    if name not in BACKENDS:
        raise RuntimeError(f"VSCHEDULER_TEST_BACKEND={name!r}: choose one of {', '.join(BACKENDS)}")
    return name


def install_crds(cp: Cluster) -> None:
    """The Volcano PodGroup, Queue and HyperNode CRDs, established."""
    for crd in CRDS:
        cp.kubectl("apply", "--server-side", "-f", str(crd))
    cp.kubectl(
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd/podgroups.scheduling.volcano.sh",
        "crd/queues.scheduling.volcano.sh",
        "crd/hypernodes.topology.volcano.sh",
    )


# --- backends: one cluster object for the tests, whatever runs the cluster ---------------------
RUN_LABEL = "vscheduler.test/run"
"""kind/existing: the label on a test's fake nodes, which its pods select (see RemoteCluster)."""
KWOK_ANNOTATION = "vscheduler.test/kwok"
"""kind/existing: the session's own kwok manages exactly the nodes carrying this annotation."""


class BackendUnavailableError(ControlPlaneError):
    """The chosen backend cannot run here (the message says what is missing)."""


class Cluster(Protocol):
    """What the tests use of a cluster. LocalControlPlane has all of it; so has RemoteCluster."""

    @property
    def kubeconfig_path(self) -> Path:
        """An admin kubeconfig (what the scheduler under test is given)."""
        ...

    @property
    def server_url(self) -> str:
        """The API server's URL."""
        ...

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        timeout: float = 30,
        content_type: str = "application/json",
    ) -> Any:
        """One API call; JSON in and out; raises ApiError."""
        ...

    def kubectl(
        self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """kubectl as admin."""
        ...

    def add_node(
        self,
        name: str,
        cpu: str | int,
        memory: str,
        pods: int = 110,
        labels: Mapping[str, str] | None = None,
        *,
        resources: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, str]] = (),
        kwok_taint: bool = False,
        annotations: Mapping[str, str] | None = None,
        wait_ready: bool = True,
        timeout: float = 60,
    ) -> Any:
        """A kwok fake node, by default Ready and untainted."""
        ...

    def create_namespace(self, name: str, *, wait_for_default_sa: bool = True) -> Any:
        """A namespace (with its default service account)."""
        ...

    def wait_for(self, what: str, check: Callable[[], T | None], timeout: float = 60) -> T:
        """Poll `check` until truthy (fails early if a component died)."""
        ...

    def bind_pod(self, namespace: str, pod: str, node: str) -> Any:
        """POST a Binding."""
        ...

    def service_account_token(
        self, namespace: str, name: str, expiration_seconds: int = 3600
    ) -> str:
        """A token for a (new) service account."""
        ...

    def write_kubeconfig(self, path: Path | str, token: str, user: str = "user") -> Path:
        """A kubeconfig for another identity."""
        ...

    def logs(self, component: str, lines: int = 40) -> str:
        """The tail of a component's log."""
        ...


class ScopedCluster(Cluster, Protocol):
    """What the `cluster` fixture yields: a Cluster plus the test's own names.

    On `local` these are the plain names (`test`, `vscheduler`, lease in `default`); on `kind`
    and `existing` they are unique per test, and RemoteCluster translates the plain names.
    """

    @property
    def backend(self) -> str:
        """local, kind or existing."""
        ...

    @property
    def namespace(self) -> str:
        """The test's namespace (what `test` stands for)."""
        ...

    @property
    def scheduler_name(self) -> str:
        """The scheduler name of this test (what `vscheduler` stands for)."""
        ...

    @property
    def lease_namespace(self) -> str:
        """Where the scheduler under test keeps its leader-election Lease."""
        ...

    def ns(self, name: str) -> str:
        """The real namespace that a test's namespace name stands for."""
        ...

    def scheduler(self, name: str) -> str:
        """The real scheduler name that a test's scheduler name stands for."""
        ...


class LocalCluster(LocalControlPlane):
    """The `local` backend: a LocalControlPlane of the test's own, so no name needs scoping."""

    backend = "local"
    namespace = "test"
    scheduler_name = "vscheduler"
    lease_namespace = "default"

    def ns(self, name: str) -> str:
        """Namespaces are the test's own."""
        return name

    def scheduler(self, name: str) -> str:
        """Scheduler names are the test's own."""
        return name


def namespace_of(cp: Cluster, name: str = "test") -> str:
    """The real namespace `name` stands for on `cp` (itself, unless on a shared cluster)."""
    ns = getattr(cp, "ns", None)
    return str(ns(name)) if callable(ns) else name


def scheduler_name_of(cp: Cluster, name: str = "vscheduler") -> str:
    """The real scheduler name `name` stands for on `cp`."""
    scheduler = getattr(cp, "scheduler", None)
    return str(scheduler(name)) if callable(scheduler) else name


def lease_namespace_of(cp: Cluster) -> str:
    """Where schedulers on `cp` keep their Lease."""
    return str(getattr(cp, "lease_namespace", "default"))


def scoped_args(cp: Cluster, args: Sequence[str]) -> list[str]:
    """`vscheduler run` arguments, with the namespace in `--policy-configmap` translated."""
    out: list[str] = []
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        if flag == "--policy-configmap" and eq:
            arg = f"{flag}={_scoped_configmap(cp, value)}"
        elif i > 0 and args[i - 1] == "--policy-configmap":
            arg = _scoped_configmap(cp, arg)
        out.append(arg)
    return out


def _scoped_configmap(cp: Cluster, value: str) -> str:
    ns, slash, name = value.partition("/")
    return f"{namespace_of(cp, ns)}/{name}" if slash else value
