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
"""

from __future__ import annotations

import base64
import contextlib
import inspect
import json
import os
import re
import secrets
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from integration.controlplane import (
    NOT_READY_TAINT,
    POD_CIDR,
    REPO_ROOT,
    ApiError,
    ControlPlaneError,
    LocalControlPlane,
    cache_dir,
    fake_node,
    find_bin_dir,
    free_port,
    request_token,
    run_kubectl,
)

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


def install_crds(cp: Cluster) -> None:
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


# --- backends: one cluster object for the tests, whatever runs the cluster ---------------------
RUN_LABEL = "vscheduler.test/run"
"""kind/existing: the label on a test's fake nodes, which its pods select (see RemoteCluster)."""
KWOK_ANNOTATION = "vscheduler.test/kwok"
"""kind/existing: the session's own kwok manages exactly the nodes carrying this annotation."""
_NAMESPACED = re.compile(r"/namespaces/([^/?]+)")
_WORKLOADS = ("Job", "Deployment", "ReplicaSet", "StatefulSet")


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


def _node_ready(node: Mapping[str, Any]) -> bool:
    conds = {c["type"]: c["status"] for c in node.get("status", {}).get("conditions", [])}
    taints = {t["key"] for t in node.get("spec", {}).get("taints", []) or []}
    return conds.get("Ready") == "True" and NOT_READY_TAINT not in taints


def docker_answers(timeout: float = 30) -> str | None:
    """None when a Docker engine answers `docker info`, else why not."""
    if shutil.which("docker") is None:
        return "no `docker` command on PATH"
    try:
        proc = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"`docker info` did not answer within {timeout:.0f}s"
    if proc.returncode != 0:
        return "no Docker engine answers (`docker info`: " + (proc.stderr.strip()[-300:]) + ")"
    return None


class RemoteBackend:
    """A cluster shared by the session (`kind` or `existing`), with the session's own kwok.

    `start()` reads the kubeconfig (flattened by kubectl into the session's workdir, so files it
    names and several `$KUBECONFIG` entries work), checks the API server answers, starts the kwok
    binary from `scripts/controlplane` against it (managing only nodes annotated with this
    session's id) and applies the Volcano CRDs. `for_test()` gives each test a RemoteCluster.
    Requests are plain HTTPS with the kubeconfig's credentials: a bearer token (or token file),
    a client certificate, or basic auth; exec and auth-provider plugins are not supported.
    """

    def __init__(self, kind: str, kubeconfig: Path | str, workdir: Path) -> None:
        self.kind, self.source = kind, str(kubeconfig)
        self.workdir = workdir
        self.session = secrets.token_hex(3)
        self.bin_dir = find_bin_dir(build=True)
        self.kubeconfig_path = workdir / "kubeconfig.json"
        self.ca_path: Path | None = None
        self.server_url = ""
        self._config: dict[str, Any] = {}
        self._headers: dict[str, str] = {}
        self._ssl = ssl.create_default_context()
        self._ssl_other = self._ssl
        self._kwok: subprocess.Popen[bytes] | None = None
        self.kwok_log = workdir / "kwok.log"
        self._tests = 0

    # -- lifecycle
    def start(self) -> RemoteBackend:
        """Credentials, kwok, CRDs."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._load_kubeconfig()
        status, text = self.raw("GET", "/version", timeout=15)
        if status != 200:
            raise BackendUnavailableError(
                f"the API server of {self.source} ({self.server_url}) answered GET /version with "
                f"{status}: {text[:300]}"
            )
        self._start_kwok()
        self._install_crds()
        return self

    def stop(self) -> None:
        """Stop kwok (nodes and namespaces are deleted by each test)."""
        proc, self._kwok = self._kwok, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(15)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)

    def for_test(self, test_name: str) -> RemoteCluster:
        """A fresh RemoteCluster (its namespace created) for one test."""
        self._tests += 1
        run_id = f"{self.session}{self._tests:03d}"
        cluster = RemoteCluster(self, run_id, test_name)
        try:
            return cluster.setup()
        except BaseException:
            with contextlib.suppress(Exception):
                cluster.teardown()
            raise

    def _load_kubeconfig(self) -> None:
        proc = subprocess.run(
            [
                str(self.bin_dir / "kubectl"),
                "config",
                "view",
                "--raw",
                "--flatten",
                "--minify",
                "-o",
                "json",
            ],
            env={**os.environ, "KUBECONFIG": self.source},
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
        if proc.returncode != 0:
            raise BackendUnavailableError(
                f"cannot read the kubeconfig {self.source}: {proc.stderr}"
            )
        config: dict[str, Any] = json.loads(proc.stdout)
        if not config.get("clusters"):
            raise BackendUnavailableError(f"the kubeconfig {self.source} names no current cluster")
        self._config = config
        self.kubeconfig_path.write_text(json.dumps(config, indent=2) + "\n")
        self.kubeconfig_path.chmod(0o600)
        cluster = config["clusters"][0]["cluster"]
        users = config.get("users") or [{"user": {}}]
        user = users[0].get("user") or {}
        self.server_url = str(cluster["server"]).rstrip("/")
        if cluster.get("certificate-authority-data"):
            self.ca_path = self._secret_file("ca.crt", cluster["certificate-authority-data"])
        self._ssl, self._ssl_other = self._tls(cluster), self._tls(cluster)
        if user.get("client-certificate-data"):  # the admin's; not for other identities
            cert = self._secret_file("client.crt", user["client-certificate-data"])
            key = self._secret_file("client.key", user["client-key-data"])
            self._ssl.load_cert_chain(str(cert), str(key))
        token = user.get("token") or (
            Path(user["tokenFile"]).read_text().strip() if user.get("tokenFile") else ""
        )
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        elif user.get("username"):
            pair = f"{user['username']}:{user.get('password', '')}".encode()
            self._headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        elif user.get("exec") or user.get("auth-provider"):
            raise BackendUnavailableError(
                f"the kubeconfig {self.source} authenticates through an exec or auth-provider "
                "plugin, which this harness's plain-HTTPS client cannot run: give it a "
                "kubeconfig with a token or a client certificate (e.g. from `kubectl create token`)"
            )

    def _tls(self, cluster: Mapping[str, Any]) -> ssl.SSLContext:
        """A TLS context that verifies the server as the kubeconfig says."""
        if cluster.get("insecure-skip-tls-verify"):
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            return context
        if self.ca_path is not None:
            return ssl.create_default_context(cafile=str(self.ca_path))
        return ssl.create_default_context()

    def _secret_file(self, name: str, data: str) -> Path:
        path = self.workdir / name
        path.write_bytes(base64.b64decode(data))
        path.chmod(0o600)
        return path

    def _start_kwok(self) -> None:
        stages = self.bin_dir.parent / "share" / "kwok-stages.yaml"
        if not stages.is_file():
            stages = cache_dir() / "share" / "kwok-stages.yaml"
        kwok_wd = self.workdir / "kwok"
        kwok_wd.mkdir(exist_ok=True)
        argv = [
            str(self.bin_dir / "kwok"),
            f"--kubeconfig={self.kubeconfig_path}",
            f"--config={stages}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}={self.session}",
            "--node-lease-duration-seconds=40",
            f"--cidr={POD_CIDR}",
            "--node-ip=127.0.0.1",
        ]
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "GODEBUG")}
        with self.kwok_log.open("ab") as log:
            log.write(f"$ {' '.join(argv)}\n".encode())
            log.flush()
            self._kwok = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**env, "KWOK_WORKDIR": str(kwok_wd)},
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while "Watch nodes" not in self.kwok_log.read_text(errors="replace"):
            if self._kwok.poll() is not None or time.monotonic() > deadline:
                raise BackendUnavailableError(
                    f"kwok did not start against {self.server_url}:\n{self.kwok_tail()}"
                )
            time.sleep(0.2)

    def _install_crds(self) -> None:
        """Apply the CRDs (if another manager owns them, use those once Established)."""
        for crd in CRDS:
            proc = self.kubectl("apply", "--server-side", "-f", str(crd), check=False)
            if proc.returncode != 0 and "conflict" not in proc.stderr.lower():
                raise ControlPlaneError(f"kubectl apply -f {crd} failed:\n{proc.stderr}")
        self.kubectl(
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/podgroups.scheduling.volcano.sh",
            "crd/queues.scheduling.volcano.sh",
        )

    def kwok_tail(self, lines: int = 40) -> str:
        """The tail of kwok's log."""
        text = self.kwok_log.read_text(errors="replace") if self.kwok_log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def kwok_alive(self) -> None:
        """Raise if kwok died."""
        if self._kwok is not None and self._kwok.poll() is not None:
            raise ControlPlaneError(
                f"kwok exited with {self._kwok.returncode}:\n{self.kwok_tail()}"
            )

    # -- clients
    def raw(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30,
        content_type: str = "application/json",
    ) -> tuple[int, str]:
        """One HTTPS request with the kubeconfig's credentials, or as the identity whose
        `Authorization` header is in `headers` (then without the kubeconfig's client cert)."""
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.server_url + path, data=data, method=method)
        for key, value in {**self._headers, **(headers or {})}.items():
            req.add_header(key, value)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            context = self._ssl_other if "Authorization" in (headers or {}) else self._ssl
            with urllib.request.urlopen(req, timeout=timeout, context=context) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode("utf-8", "replace")
        except OSError as e:
            raise ControlPlaneError(f"{method} {self.server_url}{path}: {e}") from e

    def kubectl(
        self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """The kubectl built by scripts/controlplane, with the session's kubeconfig."""
        return run_kubectl(
            self.bin_dir,
            self.kubeconfig_path,
            self.workdir,
            args,
            check=check,
            input=input,
            timeout=timeout,
        )

    def cluster_entry(self) -> dict[str, Any]:
        """The kubeconfig's cluster entry (server and CA), for kubeconfigs of other identities."""
        entry: dict[str, Any] = dict(self._config["clusters"][0])
        return entry


class RemoteCluster:
    """One test's view of a shared cluster: the `cluster` fixture on `kind` and `existing`.

    It has LocalControlPlane's methods and scopes what the test does, so the same tests run on
    every backend and two tests (or sessions) never see each other's objects:

    - namespaces: `test` stands for this test's namespace `vst-<id>`, and a namespace `x` made
      with `create_namespace("x")` for `vst-<id>-x`; `request` translates them in paths and in
      bodies' `metadata.namespace`, and `kubectl` in `-n`/`--namespace` (answers carry the
      real names);
    - scheduler names: a pod's (or pod template's) explicit `schedulerName` `s` becomes
      `s-<id>`, and so does the name of a `Scheduler` started on this cluster;
    - nodes: `add_node` labels nodes `vscheduler.test/run=<id>` and every pod (or template) the
      test creates without a nodeName selects that label, so pods never land on the cluster's
      real nodes or another test's; node names are kept as given (they are cluster-wide: two
      sessions at once on one cluster must not use the same node names);
    - cleanup: the namespaces, the nodes and every cluster-scoped object created through
      `request` (Queues, PriorityClasses...) are deleted when the test ends.
    """

    def __init__(self, backend: RemoteBackend, run_id: str, test_name: str) -> None:
        self._remote = backend
        self.backend = backend.kind
        self.run_id = run_id
        self.test_name = test_name
        self.namespace = f"vst-{run_id}"
        self.scheduler_name = self.scheduler("vscheduler")
        self.lease_namespace = self.namespace
        self._aliases: dict[str, str] = {"test": self.namespace}
        self._nodes: list[str] = []
        self._cluster_scoped: list[str] = []

    # -- names
    def ns(self, name: str) -> str:
        """The real namespace that `name` stands for."""
        return self._aliases.get(name, name)

    def scheduler(self, name: str) -> str:
        """The real scheduler name that `name` stands for."""
        return name if name == "default-scheduler" else f"{name}-{self.run_id}"

    @property
    def kubeconfig_path(self) -> Path:
        """The session's (flattened) admin kubeconfig."""
        return self._remote.kubeconfig_path

    @property
    def server_url(self) -> str:
        """The API server's URL."""
        return self._remote.server_url

    @property
    def ca_path(self) -> Path | None:
        """The API server's CA (None when the kubeconfig skips verification)."""
        return self._remote.ca_path

    # -- lifecycle
    def setup(self) -> RemoteCluster:
        """Create the test's namespace."""
        self._create_real_namespace(self.namespace)
        return self

    def teardown(self) -> None:
        """Delete what the test made: namespaces (and their pods), cluster objects, nodes."""
        problems: list[str] = []
        namespaces = sorted(set(self._aliases.values()))
        for ns in namespaces:
            problems += self._delete(f"/api/v1/namespaces/{ns}")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            left = sum(self._count(f"/api/v1/namespaces/{ns}/pods") for ns in namespaces)
            if left == 0:
                break
            time.sleep(0.5)
        for path in reversed(self._cluster_scoped):
            problems += self._delete(path)
        for node in self._nodes:
            problems += self._delete(f"/api/v1/nodes/{node}")
        if problems:
            raise ControlPlaneError(f"cleanup after {self.test_name}: " + "; ".join(problems))

    def _delete(self, path: str) -> list[str]:
        options = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        status, text = self._remote.raw("DELETE", path, options)
        return [] if status in (200, 202, 404) else [f"DELETE {path} -> {status}: {text[:200]}"]

    def _count(self, path: str) -> int:
        status, text = self._remote.raw("GET", path)
        return len(json.loads(text).get("items", [])) if status == 200 else 0

    # -- translation
    def _path(self, path: str) -> str:
        return _NAMESPACED.sub(lambda m: f"/namespaces/{self.ns(m.group(1))}", path)

    def _body(self, method: str, path: str, body: Any) -> Any:
        if not isinstance(body, dict):
            return body
        obj: dict[str, Any] = json.loads(json.dumps(body))
        meta = obj.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("namespace"), str):
            meta["namespace"] = self.ns(meta["namespace"])
        if method == "POST" and path.rstrip("/") == "/api/v1/namespaces" and isinstance(meta, dict):
            meta["name"] = self._alias(str(meta.get("name", "")))
        spec = obj.get("spec")
        kind = obj.get("kind")
        if kind == "Pod" and isinstance(spec, dict):
            self._pod_spec(spec)
        elif kind in _WORKLOADS and isinstance(spec, dict):
            self._pod_spec(spec.get("template", {}).get("spec"))
        elif kind == "CronJob" and isinstance(spec, dict):
            job = spec.get("jobTemplate", {}).get("spec", {})
            self._pod_spec(job.get("template", {}).get("spec"))
        return obj

    def _pod_spec(self, spec: Any) -> None:
        if not isinstance(spec, dict):
            return
        if isinstance(spec.get("schedulerName"), str):
            spec["schedulerName"] = self.scheduler(spec["schedulerName"])
        if not spec.get("nodeName"):
            spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), RUN_LABEL: self.run_id}

    def _alias(self, name: str) -> str:
        if name in self._aliases:
            return self._aliases[name]
        if name in self._aliases.values():
            return name
        real = f"{self.namespace}-{name}"[:63].rstrip("-")
        self._aliases[name] = real
        return real

    # -- LocalControlPlane's API
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
        """One API call (admin unless `token`), names translated; JSON in and out; ApiError."""
        real_path, real_body = self._path(path), self._body(method, path, body)
        headers = {"Authorization": f"Bearer {token}"} if token else None
        status, text = self._remote.raw(
            method, real_path, real_body, headers=headers, timeout=timeout,
            content_type=content_type,
        )  # fmt: skip
        if status >= 400:
            raise ApiError(method, real_path, status, text)
        try:
            answer = json.loads(text) if text else None
        except ValueError:
            return text
        self._track(method, real_path, answer)
        return answer

    def _track(self, method: str, path: str, answer: Any) -> None:
        """Remember cluster-scoped objects made through `request`, to delete them at the end."""
        if method != "POST" or "/namespaces/" in path or not isinstance(answer, dict):
            return
        name = answer.get("metadata", {}).get("name")
        if not name or path.rstrip("/") == "/api/v1/namespaces":
            return
        if path.rstrip("/") == "/api/v1/nodes":
            self._nodes.append(name)
        else:
            self._cluster_scoped.append(f"{path.rstrip('/')}/{name}")

    def kubectl(
        self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """kubectl as admin, with `-n`/`--namespace` translated."""
        real: list[str] = []
        follows = False
        for arg in args:
            if follows:
                arg = self.ns(arg)
            elif arg.startswith("--namespace="):
                arg = "--namespace=" + self.ns(arg.partition("=")[2])
            follows = arg in ("-n", "--namespace")
            real.append(arg)
        return self._remote.kubectl(*real, check=check, input=input, timeout=timeout)

    def wait_for(self, what: str, check: Callable[[], T | None], timeout: float = 60) -> T:
        """Poll `check` until truthy; fail at once if kwok died."""
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while True:
            self._remote.kwok_alive()
            try:
                result = check()
                if result:
                    return result
            except ControlPlaneError as e:
                last_error = e
            if time.monotonic() > deadline:
                raise ControlPlaneError(f"timed out after {timeout:.0f}s waiting for {what}") from (
                    last_error
                )
            time.sleep(0.2)

    def create_namespace(self, name: str, *, wait_for_default_sa: bool = True) -> Any:
        """Create the namespace `name` stands for (`test` exists already)."""
        real = self._alias(name)
        if real == self.namespace:
            return self.request("GET", f"/api/v1/namespaces/{real}")
        return self._create_real_namespace(real, wait_for_default_sa=wait_for_default_sa)

    def _create_real_namespace(self, real: str, *, wait_for_default_sa: bool = True) -> Any:
        path = "/api/v1/namespaces"
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": real}}
        status, text = self._remote.raw("POST", path, body)
        if status >= 400:
            raise ApiError("POST", path, status, text)
        ns = json.loads(text)
        if wait_for_default_sa:
            self.wait_for(
                f"default service account in namespace {real}",
                lambda: (
                    self._remote.raw("GET", f"/api/v1/namespaces/{real}/serviceaccounts/default")[0]
                    == 200
                ),
            )
        return ns

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
        """As LocalControlPlane.add_node; managed by the session's kwok, labelled for the test."""
        node = fake_node(
            name,
            cpu,
            memory,
            pods,
            {RUN_LABEL: self.run_id, **(labels or {})},
            resources=resources,
            taints=taints,
            kwok_taint=kwok_taint,
            annotations=annotations,
            kwok_annotation=(KWOK_ANNOTATION, self._remote.session),
        )
        try:
            created = self.request("POST", "/api/v1/nodes", node)
        except ApiError as e:
            if e.status == 409:
                raise ControlPlaneError(
                    f"node {name} exists already on the shared cluster: another session uses the "
                    f"name, or one that crashed left it (`kubectl delete nodes -l {RUN_LABEL}`)"
                ) from e
            raise
        if not wait_ready:
            return created
        return self.wait_for(
            f"fake node {name} Ready and untainted",
            lambda: (n := self.request("GET", f"/api/v1/nodes/{name}")) and _node_ready(n) and n,
            timeout,
        )

    def bind_pod(self, namespace: str, pod: str, node: str) -> Any:
        """POST a Binding, as a scheduler does."""
        return self.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/pods/{pod}/binding",
            {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": pod, "namespace": namespace},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node},
            },
        )

    def service_account_token(
        self, namespace: str, name: str, expiration_seconds: int = 3600
    ) -> str:
        """A bound token for a service account (created if missing), via TokenRequest."""
        return request_token(self.request, namespace, name, expiration_seconds)

    def write_kubeconfig(self, path: Path | str, token: str, user: str = "user") -> Path:
        """A kubeconfig for another identity against this cluster."""
        entry = self._remote.cluster_entry()
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [entry],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": "test", "context": {"cluster": entry["name"], "user": user}}],
            "current-context": "test",
        }
        out = Path(path)
        out.write_text(json.dumps(config, indent=2) + "\n")
        out.chmod(0o600)
        return out

    def logs(self, component: str, lines: int = 40) -> str:
        """kwok's log tail; the other components are not ours on this backend."""
        if component == "kwok":
            return self._remote.kwok_tail(lines)
        return f"<{component}: not run by the harness on the {self.backend} backend>"


@contextlib.contextmanager
def remote_backend(kind: str, workdir: Path) -> Iterator[RemoteBackend]:
    """The session's RemoteBackend for `kind` or `existing`, or BackendUnavailableError."""
    if kind == "existing":
        kubeconfig = os.environ.get("KUBECONFIG", "")
        if not kubeconfig:
            raise BackendUnavailableError(
                "VSCHEDULER_TEST_BACKEND=existing needs $KUBECONFIG naming the cluster's kubeconfig"
            )
        remote = RemoteBackend(kind, kubeconfig, workdir)
        try:
            yield remote.start()
        finally:
            remote.stop()
        return
    if kind != "kind":
        raise BackendUnavailableError(f"no remote backend {kind!r}")
    missing = []
    try:
        from pytest_kind import KindCluster  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        KindCluster = None  # noqa: N806
        missing.append("the pytest-kind package (`.venv/bin/pip install pytest-kind`)")
    why_not = docker_answers()
    if why_not:
        missing.append(f"a Docker engine ({why_not})")
    if missing or KindCluster is None:
        raise BackendUnavailableError("VSCHEDULER_TEST_BACKEND=kind needs " + " and ".join(missing))
    name = os.environ.get("VSCHEDULER_KIND_CLUSTER", "vscheduler-it")
    kind_bin = shutil.which("kind")
    wanted: dict[str, Any] = {  # pytest-kind's keywords differ between releases
        "kubeconfig": workdir / "kind.kubeconfig",
        "kind_path": Path(kind_bin) if kind_bin else None,
        "kubectl_path": find_bin_dir(build=True) / "kubectl",
    }
    accepted = inspect.signature(KindCluster).parameters
    kind_cluster = KindCluster(
        name, **{k: v for k, v in wanted.items() if k in accepted and v is not None}
    )
    workdir.mkdir(parents=True, exist_ok=True)
    kind_cluster.create()
    try:
        remote = RemoteBackend(kind, kind_cluster.kubeconfig_path, workdir)
        try:
            yield remote.start()
        finally:
            remote.stop()
    finally:
        if not os.environ.get("VSCHEDULER_KEEP_KIND"):
            kind_cluster.delete()


class Scheduler:
    """One `vscheduler run` process against the test cluster."""

    def __init__(
        self,
        cp: Cluster,
        workdir: Path,
        *,
        name: str = "vscheduler",
        args: Sequence[str] = (),
        leader_elect: bool = False,
        identity: str = "",
    ) -> None:
        # On a shared cluster (kind, existing) the names are the test's own (see RemoteCluster).
        name, args = scheduler_name_of(cp, name), scoped_args(cp, args)
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
            f"--leader-elect-resource-namespace={lease_namespace_of(cp)}",
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
        if not self._log.closed:
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


def create(cp: Cluster, obj: dict[str, Any]) -> Any:
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


def pods(cp: Cluster, namespace: str) -> list[dict[str, Any]]:
    """Every pod of a namespace."""
    items: list[dict[str, Any]] = cp.request("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
    return items


def bound(cp: Cluster, namespace: str) -> dict[str, str]:
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


def events(cp: Cluster, namespace: str) -> list[dict[str, Any]]:
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


# --- reading objects, Events and metrics (added for the scheduling, policy, bad-input and
# metrics tests) ----------------------------------------------------------------------------
PODGROUPS = "/apis/scheduling.volcano.sh/v1beta1/namespaces/{namespace}/podgroups"


def get_pod(cp: Cluster, namespace: str, name: str) -> dict[str, Any]:
    """One pod, as the API server holds it."""
    found: dict[str, Any] = cp.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
    return found


def get_podgroup(cp: Cluster, namespace: str, name: str) -> dict[str, Any]:
    """One PodGroup, as the API server holds it."""
    found: dict[str, Any] = cp.request("GET", PODGROUPS.format(namespace=namespace) + f"/{name}")
    return found


def pod_condition(
    cp: Cluster, namespace: str, name: str, kind: str = "PodScheduled"
) -> dict[str, Any] | None:
    """The condition of type `kind` of pod `namespace/name`, or None."""
    return condition(get_pod(cp, namespace, name), kind)


def events_about(
    cp: Cluster,
    namespace: str,
    kind: str,
    name: str,
    *,
    reason: str | None = None,
) -> list[dict[str, Any]]:
    """The Events of `namespace` whose involvedObject is `kind` `name` (and, if given, whose
    reason is `reason`). Events about cluster-scoped objects live in `default`."""
    return [
        e
        for e in events(cp, namespace)
        if e.get("involvedObject", {}).get("kind") == kind
        and e.get("involvedObject", {}).get("name") == name
        and (reason is None or e.get("reason") == reason)
    ]


def configmap(name: str, namespace: str, data: dict[str, str]) -> dict[str, Any]:
    """A ConfigMap."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def update_configmap(cp: Cluster, name: str, namespace: str, data: dict[str, str]) -> Any:
    """Merge-patch the `data` of a ConfigMap."""
    return cp.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}/configmaps/{name}",
        {"data": data},
        content_type="application/merge-patch+json",
    )


def metric(text: str, sample: str, **labels: str) -> float | None:
    """The sum of the samples named `sample` (e.g. `vscheduler_pods_bound_total`,
    `..._count`) whose labels include `labels`, in Prometheus text `text`; None when none is
    there."""
    from prometheus_client.parser import text_string_to_metric_families

    found: float | None = None
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
                found = (found or 0.0) + s.value
    return found


def scrape(scheduler: Scheduler, sample: str, **labels: str) -> float | None:
    """`metric` over the scheduler's current /metrics (None when it does not answer 200)."""
    status, text = scheduler.http("/metrics")
    return metric(text, sample, **labels) if status == 200 else None
