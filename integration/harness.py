"""What every integration test needs: a cluster backend and a `vscheduler run` process.

Backends (`VSCHEDULER_TEST_BACKEND`), the same tests on each:

- `local` (default): etcd, kube-apiserver, kube-controller-manager and kwok as local processes
  (integration/controlplane.py), a fresh control plane per test (4-6 s), so tests never share
  state;
- `kind`: a kind cluster through pytest-kind (needs Docker and `pip install pytest-kind`); the
  kwok binary from `scripts/controlplane` runs against it so fake nodes work the same way;
- `existing`: the cluster of `$KUBECONFIG` (kwok started against it likewise).

On `kind` and `existing` the cluster is shared by the session; each test works in its own
namespace with its own scheduler name and node label.

The scheduler under test runs as a subprocess (`python -m vscheduler run ...`), exactly as a user
would start it, with its own /metrics port; its log is kept for the failure message.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from integration.controlplane import REPO_ROOT, ApiError, LocalControlPlane, free_port

T = TypeVar("T")
CRDS = (
    REPO_ROOT / "deploy" / "crds" / "scheduling.volcano.sh_podgroups.yaml",
    REPO_ROOT / "deploy" / "crds" / "scheduling.volcano.sh_queues.yaml",
)
BACKENDS = ("local", "kind", "existing")


def backend() -> str:
    """The backend the tests run on."""
    name = os.environ.get("VSCHEDULER_TEST_BACKEND", "local")
    if name not in BACKENDS:
        raise RuntimeError(f"VSCHEDULER_TEST_BACKEND={name!r}: choose one of {', '.join(BACKENDS)}")
    return name


def wait_for(what: str, check: Callable[[], T | None], timeout: float = 30.0) -> T:
    """Poll `check` every 0.1 s until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.1)


def install_crds(cp: LocalControlPlane) -> None:
    """The Volcano PodGroup and Queue CRDs, established."""
    for crd in CRDS:
        cp.kubectl("apply", "--server-side", "-f", str(crd))
    cp.kubectl(
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd/podgroups.scheduling.volcano.sh",
        "crd/queues.scheduling.volcano.sh",
    )


class Scheduler:
    """One `vscheduler run` process against the test cluster."""

    def __init__(
        self,
        cp: LocalControlPlane,
        workdir: Path,
        *,
        name: str = "vscheduler",
        args: Sequence[str] = (),
        leader_elect: bool = False,
        identity: str = "",
    ) -> None:
        self.cp, self.name = cp, name
        self.port = free_port()
        self.log_path = workdir / f"vscheduler-{identity or name}-{self.port}.log"
        argv = [
            sys.executable,
            "-m",
            "vscheduler",
            "run",
            f"--kubeconfig={cp.kubeconfig_path}",
            f"--scheduler-name={name}",
            f"--listen-address=127.0.0.1:{self.port}",
            "--schedule-period=0.5",
            f"--leader-elect={'true' if leader_elect else 'false'}",
            "--leader-elect-resource-namespace=default",
            *([f"--leader-elect-identity={identity}"] if identity else []),
            *args,
        ]
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            argv, stdout=self._log, stderr=subprocess.STDOUT, cwd=REPO_ROOT, start_new_session=True
        )

    def http(self, path: str) -> tuple[int, str]:
        """GET one of the observability endpoints."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=2) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except OSError:
            return 0, ""

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Until /readyz answers 200."""
        wait_for(
            f"{self.name} /readyz", lambda: self.alive() and self.http("/readyz")[0] == 200, timeout
        )

    def alive(self) -> bool:
        """The process is running (raises with its log if it died)."""
        if self.proc.poll() is not None:
            raise AssertionError(f"vscheduler exited with {self.proc.returncode}:\n{self.log()}")
        return True

    def log(self, lines: int = 60) -> str:
        """The tail of its log."""
        self._log.flush()
        return "\n".join(self.log_path.read_text().splitlines()[-lines:])

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        """Signal it and wait for the exit code (SIGKILL after `timeout`)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


# --- objects ------------------------------------------------------------------------------------
def pod(
    name: str,
    namespace: str,
    *,
    cpu: str = "1",
    memory: str = "256Mi",
    scheduler: str = "vscheduler",
    group: str | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A pod for the scheduler under test (the `sleep` image is never pulled: kwok runs it)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if group:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "resources": {"requests": {"cpu": cpu, "memory": memory}},
            }
        ],
    }
    spec.update(extra or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def podgroup(
    name: str,
    namespace: str,
    *,
    min_member: int,
    queue: str = "default",
    min_resources: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Volcano PodGroup."""
    spec: dict[str, Any] = {"minMember": min_member, "queue": queue}
    if min_resources:
        spec["minResources"] = min_resources
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def queue(name: str, *, weight: int = 1) -> dict[str, Any]:
    """A Volcano Queue."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": weight, "reclaimable": True},
    }


def create(cp: LocalControlPlane, obj: dict[str, Any]) -> Any:
    """POST `obj` to its collection."""
    kind, meta = obj["kind"], obj["metadata"]
    ns = meta.get("namespace")
    paths = {
        "Pod": f"/api/v1/namespaces/{ns}/pods",
        "PodGroup": f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{ns}/podgroups",
        "Queue": "/apis/scheduling.volcano.sh/v1beta1/queues",
        "ConfigMap": f"/api/v1/namespaces/{ns}/configmaps",
        "Job": f"/apis/batch/v1/namespaces/{ns}/jobs",
    }
    return cp.request("POST", paths[kind], obj)


def pods(cp: LocalControlPlane, namespace: str) -> list[dict[str, Any]]:
    """Every pod of a namespace."""
    items: list[dict[str, Any]] = cp.request("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
    return items


def bound(cp: LocalControlPlane, namespace: str) -> dict[str, str]:
    """pod name -> node, for the bound pods of a namespace."""
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in pods(cp, namespace)
        if p["spec"].get("nodeName")
    }


def condition(pod_obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The pod's condition of type `kind`."""
    for c in pod_obj.get("status", {}).get("conditions", []) or []:
        if c.get("type") == kind:
            return dict(c)
    return None


def events(cp: LocalControlPlane, namespace: str) -> list[dict[str, Any]]:
    """The Events of a namespace."""
    items: list[dict[str, Any]] = cp.request("GET", f"/api/v1/namespaces/{namespace}/events")[
        "items"
    ]
    return items


def dump(obj: Any) -> str:
    """For assertion messages."""
    return json.dumps(obj, indent=1, default=str)[:4000]


def is_api_error(exc: BaseException, status: int) -> bool:
    """Whether `exc` is an API error with HTTP `status`."""
    return isinstance(exc, ApiError) and exc.status == status


def iterate(items: Iterator[T]) -> list[T]:
    """A list (for readability in tests)."""
    return list(items)
