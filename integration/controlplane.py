"""A real Kubernetes control plane as local processes, for integration tests.

etcd, kube-apiserver, kube-controller-manager and kwok (fake nodes and pod lifecycle) run on
127.0.0.1 with free ports, a fresh temp dir each, and no kube-scheduler: the scheduler under test
binds pods itself. The binaries come from ``scripts/controlplane build`` (a version-keyed cache
outside the clone). Standard library only, plus the ``openssl`` command for the PKI.

    with LocalControlPlane() as cp:
        cp.add_node("node-a", cpu="8", memory="32Gi")
        cp.request("GET", "/api/v1/nodes")
        cp.kubectl("get", "pods", "-A")

See integration/README.md for the versions, flags and measured costs.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

REPO_ROOT = Path(__file__).resolve().parent.parent
VERSIONS_FILE = REPO_ROOT / "integration" / "controlplane" / "versions.env"
BUILD_SCRIPT = REPO_ROOT / "scripts" / "controlplane"
BINARIES = (
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubectl",
    "kwok",
)

#: kwok manages exactly the nodes carrying this annotation (kwok's documented convention).
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
#: The taint kwok's docs put on fake nodes so that real workloads avoid them (opt-in here).
KWOK_TAINT = {"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
SERVICE_CIDR = "10.0.0.0/24"
POD_CIDR = "10.244.0.0/16"  # kwok hands out fake pod IPs from here

_T = TypeVar("_T")

AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {
            "level": "Request",
            "verbs": ["create"],
            "resources": [{"group": "", "resources": ["pods/binding"]}],
        },
        {
            "level": "Metadata",
            "verbs": ["delete"],
            "resources": [{"group": "", "resources": ["nodes", "pods"]}],
        },
        {
            "level": "Request",
            "verbs": ["create", "update"],
            # not by resourceNames: a create's URL names no object (the name is in its body)
            "namespaces": ["default"],
            "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}],
        },
        {"level": "None"},
    ],
}
"""With ``audit=True``: every Binding (with its target node), every node and pod deletion, and every
write of a Lease in ``default`` (the schedulers', with its holder), in the API server's audit log
(JSON lines)."""


class ControlPlaneError(RuntimeError):
    """The control plane could not be built, started or used."""


class ApiError(ControlPlaneError):
    """The API server answered a request with an HTTP error status."""

    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        super().__init__(f"{method} {path} -> HTTP {status}: {body[:2000]}")
        self.status = status
        self.body = body

    def json(self) -> Any:
        """The error body (usually a metav1.Status) as JSON, or None."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None


# ------------------------------------------------------------------------- binaries
def read_versions() -> dict[str, str]:
    """The pinned versions from integration/controlplane/versions.env."""
    versions: dict[str, str] = {}
    for raw in VERSIONS_FILE.read_text().splitlines():
        line = raw.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            versions[key.strip()] = value.strip().strip("'\"")
    return versions


def cache_dir() -> Path:
    """The version-keyed cache dir that ``scripts/controlplane build`` fills."""
    v = read_versions()
    root = Path(os.environ.get("VSCHEDULER_CACHE") or Path.home() / ".cache" / "vscheduler")
    return root / "controlplane" / f"{v['K8S_VERSION']}-{v['ETCD_VERSION']}-{v['KWOK_VERSION']}"


def _bins_present(bin_dir: Path) -> bool:
    return all(os.access(bin_dir / b, os.X_OK) for b in BINARIES)


def find_bin_dir(*, build: bool = True) -> Path:
    """The directory with the control-plane binaries.

    ``$VSCHEDULER_CONTROLPLANE_BIN`` wins; otherwise the version-keyed cache, built on demand
    through ``scripts/controlplane path`` when ``build`` is true (a cold build takes long).
    """
    override = os.environ.get("VSCHEDULER_CONTROLPLANE_BIN")
    if override:
        path = Path(override)
        if not _bins_present(path):
            raise ControlPlaneError(f"VSCHEDULER_CONTROLPLANE_BIN={path} lacks one of {BINARIES}")
        return path
    path = cache_dir() / "bin"
    if _bins_present(path) and (cache_dir() / "share" / "kwok-stages.yaml").is_file():
        return path
    if not build:
        raise ControlPlaneError(
            f"control plane not built in {path}: run scripts/controlplane build"
        )
    proc = subprocess.run([str(BUILD_SCRIPT), "path"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ControlPlaneError(f"scripts/controlplane path failed:\n{_tail_text(proc.stderr)}")
    return Path(proc.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------- helpers
def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail_text(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _tail(path: Path, lines: int = 40) -> str:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            return _tail_text(f.read().decode("utf-8", "replace"), lines)
    except OSError as e:
        return f"<no log: {e}>"


def _log_has(path: Path, needle: str) -> bool:
    return needle in path.read_text(errors="replace")


def _set_pdeathsig() -> None:  # pragma: no cover - runs in the child between fork and exec
    # Linux: the child gets SIGTERM when the thread that started it dies (e.g. pytest is killed).
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _openssl(command: str, cwd: Path) -> None:
    proc = subprocess.run(
        ["openssl", *command.split()],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise ControlPlaneError(f"openssl {command} failed:\n{_tail_text(proc.stdout)}")


def make_pki(pki: Path) -> None:
    """A throwaway CA, an API-server serving cert for 127.0.0.1/localhost, a service-account key."""
    if shutil.which("openssl") is None:
        raise ControlPlaneError("the openssl command is needed for the control plane's PKI")
    pki.mkdir(parents=True, exist_ok=True)
    _openssl("req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=vscheduler-test-ca"
             " -keyout ca.key -out ca.crt", cwd=pki)  # fmt: skip
    _openssl("req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver"
             " -keyout apiserver.key -out apiserver.csr", cwd=pki)  # fmt: skip
    (pki / "san.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,"
        "DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n"
        "extendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
    )
    _openssl("x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial"
             " -days 3650 -extfile san.ext -out apiserver.crt", cwd=pki)  # fmt: skip
    _openssl("genrsa -out sa.key 2048", cwd=pki)
    _openssl("rsa -in sa.key -pubout -out sa.pub", cwd=pki)
    for key in pki.glob("*.key"):
        key.chmod(0o600)


@dataclass
class _Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path


def fake_node(
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
    kwok_annotation: tuple[str, str] = (KWOK_NODE_ANNOTATION, "fake"),
) -> dict[str, Any]:
    """A kwok-managed Node object: the annotation by which a kwok selects the nodes it manages,
    kwok's labels, capacity = allocatable = cpu, memory, pods and ``resources``."""
    capacity = {"cpu": str(cpu), "memory": str(memory), "pods": str(pods), **(resources or {})}
    all_taints = [dict(t) for t in taints] + ([dict(KWOK_TAINT)] if kwok_taint else [])
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {
                kwok_annotation[0]: kwok_annotation[1],
                "node.alpha.kubernetes.io/ttl": "0",
                **(annotations or {}),
            },
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
                **(labels or {}),
            },
        },
        "spec": {"taints": all_taints} if all_taints else {},
        "status": {"capacity": capacity, "allocatable": dict(capacity)},
    }


def request_token(
    request: Callable[..., Any], namespace: str, name: str, expiration_seconds: int = 3600
) -> str:
    """A bound token for a service account (created if missing), via the TokenRequest API;
    ``request(method, path, body)`` is the cluster's JSON request function."""
    try:
        request("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}")
    except ApiError as e:
        if e.status != 404:
            raise
        request(
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
        )
    tr = request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": expiration_seconds},
        },
    )
    return str(tr["status"]["token"])


def run_kubectl(
    bin_dir: Path,
    kubeconfig: Path,
    workdir: Path,
    args: Sequence[str],
    *,
    check: bool = True,
    input: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run the kubectl of `bin_dir` with `kubeconfig`; ControlPlaneError if it fails (`check`)."""
    proc = subprocess.run(
        [
            str(bin_dir / "kubectl"),
            f"--kubeconfig={kubeconfig}",
            f"--cache-dir={workdir / 'kubectl-cache'}",
            *args,
        ],
        input=input,
        capture_output=True,
        check=False,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise ControlPlaneError(f"kubectl {' '.join(args)} failed:\n{proc.stderr}")
    return proc


# ------------------------------------------------------------------------- control plane
class LocalControlPlane:
    """etcd + kube-apiserver + kube-controller-manager + kwok on 127.0.0.1, in a temp dir.

    ``start()`` returns once /readyz is OK, kube-controller-manager has created the ``default``
    service account, and kwok is running. ``stop()`` terminates every process group it started
    (SIGTERM, then SIGKILL) and removes the temp dir unless ``keep_workdir``. Usable as a context
    manager. Authentication: a static admin token (group system:masters); authorization is
    Node,RBAC, so any other identity (e.g. a service-account token from
    ``service_account_token``) is subject to RBAC.
    """

    COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kwok")

    def __init__(
        self,
        bin_dir: Path | str | None = None,
        workdir: Path | str | None = None,
        *,
        build: bool = True,
        keep_workdir: bool = False,
        start_timeout: float = 120.0,
        die_with_parent: bool = True,
        audit: bool = False,
        profiling: bool = False,
    ) -> None:
        self._bin_dir_arg = Path(bin_dir) if bin_dir else None
        self._build = build
        self._workdir_arg = Path(workdir) if workdir else None
        self.keep_workdir = keep_workdir or bool(os.environ.get("VSCHEDULER_KEEP_CONTROLPLANE"))
        self.start_timeout = start_timeout
        self.die_with_parent = die_with_parent
        self.audit = audit
        self.profiling = profiling
        self._apiserver_argv: list[str] = []
        self.admin_token = secrets.token_hex(24)
        self.procs: dict[str, _Proc] = {}
        self.timings: dict[str, float] = {}
        self._workdir: Path | None = None
        self._bin_dir: Path | None = None
        self._api_port = 0
        self._etcd_port = 0
        self._ssl: ssl.SSLContext | None = None
        self._atexit_registered = False

    # -- properties
    @property
    def workdir(self) -> Path:
        """The temp dir holding PKI, data, logs and the kubeconfig."""
        if self._workdir is None:
            raise ControlPlaneError("control plane not started")
        return self._workdir

    @property
    def bin_dir(self) -> Path:
        """The directory with the binaries in use."""
        if self._bin_dir is None:
            self._bin_dir = self._bin_dir_arg or find_bin_dir(build=self._build)
        return self._bin_dir

    @property
    def kubeconfig_path(self) -> Path:
        """An admin kubeconfig (JSON, which is valid YAML) for kubectl and client libraries."""
        return self.workdir / "admin.kubeconfig"

    @property
    def server_url(self) -> str:
        """The API server's URL, e.g. https://127.0.0.1:41234."""
        return f"https://127.0.0.1:{self._api_port}"

    @property
    def ca_path(self) -> Path:
        """The CA that signed the API server's serving certificate."""
        return self.workdir / "pki" / "ca.crt"

    @property
    def etcd_url(self) -> str:
        """etcd's client URL."""
        return f"http://127.0.0.1:{self._etcd_port}"

    @property
    def audit_log_path(self) -> Path:
        """The API server's audit log (``audit=True``; see ``AUDIT_POLICY``)."""
        return self.workdir / "logs" / "audit.log"

    def audit_events(self) -> list[dict[str, Any]]:
        """The audit log's events so far, in order (a line cut by a kill is skipped)."""
        if not self.audit_log_path.exists():
            return []
        events = []
        for line in self.audit_log_path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                events.append(json.loads(line))
        return events

    def restart_apiserver(
        self,
        *,
        sig: int = signal.SIGKILL,
        down: float = 5.0,
        while_down: Callable[[], object] | None = None,
    ) -> float:
        """Stop kube-apiserver with ``sig`` (its whole process group), keep it down ``down``
        seconds (calling ``while_down`` first), start it again on the same port and data; the
        seconds until it was ready."""
        proc = self.procs["kube-apiserver"]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.popen.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.popen.wait(30)
        self._terminate(proc, grace=1.0)
        if while_down is not None:
            while_down()
        time.sleep(down)
        started = time.monotonic()
        self._launch_apiserver()
        return time.monotonic() - started

    def compact_etcd(self) -> int:
        """Compact etcd's history up to its current revision (physically), through etcd's JSON
        gateway: every watch resuming from an older resourceVersion expires (410 Gone). The
        revision compacted to."""

        def call(path: str, body: Mapping[str, object]) -> Any:
            request = urllib.request.Request(
                f"{self.etcd_url}{path}",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.load(answer)

        # Two writes of a key of our own first: the compaction then reaches past the newest
        # revision any watcher can have seen (one revision newer could still be resumed from).
        key = base64.b64encode(b"/vscheduler-test/compaction-marker").decode()
        for _ in range(2):
            call("/v3/kv/put", {"key": key, "value": base64.b64encode(b"x").decode()})
        revision = int(call("/v3/kv/range", {"key": key})["header"]["revision"])
        call("/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision

    def log_path(self, component: str) -> Path:
        """The log file of one component."""
        return self.workdir / "logs" / f"{component}.log"

    def logs(self, component: str, lines: int = 40) -> str:
        """The last ``lines`` lines of a component's log."""
        return _tail(self.log_path(component), lines)

    # -- lifecycle
    def __enter__(self) -> LocalControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> LocalControlPlane:
        """Start everything; retries once with new ports if a port was taken meanwhile."""
        if self.procs:
            raise ControlPlaneError("already started")
        t0 = time.monotonic()
        bin_dir = self.bin_dir
        self.timings["resolve_binaries_s"] = round(time.monotonic() - t0, 2)
        for attempt in range(3):
            try:
                self._start_once(bin_dir)
                break
            except ControlPlaneError as e:
                self._stop_procs()
                if attempt < 2 and "address already in use" in str(e):
                    self._cleanup_workdir(force=True)
                    continue
                raise
        self.timings["startup_s"] = round(time.monotonic() - t0, 2)
        if not self._atexit_registered:
            atexit.register(self.stop)
            self._atexit_registered = True
        return self

    def _start_once(self, bin_dir: Path) -> None:
        if self._workdir_arg:
            self._workdir = self._workdir_arg
            self._workdir.mkdir(parents=True, exist_ok=True)
        else:
            self._workdir = Path(tempfile.mkdtemp(prefix="vscheduler-cp-"))
        wd = self.workdir
        (wd / "logs").mkdir(exist_ok=True)
        t = time.monotonic()
        make_pki(wd / "pki")
        self.timings["pki_s"] = round(time.monotonic() - t, 2)
        self._ssl = ssl.create_default_context(cafile=str(self.ca_path))
        (wd / "tokens.csv").write_text(
            f'{self.admin_token},vscheduler-admin,admin-uid,"system:masters"\n'
        )
        (wd / "tokens.csv").chmod(0o600)

        self._etcd_port, self._api_port = free_port(), free_port()
        t = time.monotonic()
        self._start_etcd(bin_dir)
        self.timings["etcd_ready_s"] = round(time.monotonic() - t, 2)
        t = time.monotonic()
        self._start_apiserver(bin_dir)
        self.timings["apiserver_ready_s"] = round(time.monotonic() - t, 2)
        self._write_kubeconfig(self.kubeconfig_path, self.admin_token, "vscheduler-admin")
        t = time.monotonic()
        self._start_kcm(bin_dir)
        self.timings["controller_manager_ready_s"] = round(time.monotonic() - t, 2)
        t = time.monotonic()
        self._start_kwok(bin_dir)
        self.timings["kwok_ready_s"] = round(time.monotonic() - t, 2)

    def stop(self) -> None:
        """Stop all processes (reverse start order) and remove the temp dir unless kept."""
        self._stop_procs()
        self._cleanup_workdir()

    def _cleanup_workdir(self, *, force: bool = False) -> None:
        wd = self._workdir
        if wd is None:
            return
        if force or not (self.keep_workdir or self._workdir_arg):
            shutil.rmtree(wd, ignore_errors=True)
            self._workdir = None

    def _stop_procs(self) -> None:
        for name in reversed(list(self.procs)):
            self._terminate(self.procs.pop(name))

    @staticmethod
    def _terminate(proc: _Proc, grace: float = 15.0) -> None:
        p = proc.popen
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(grace)
        # The whole group goes, even if the leader already exited (no orphans).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(5)

    # -- processes
    def _spawn(self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None) -> _Proc:
        log = self.log_path(name)
        full_env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "GODEBUG")}
        full_env.update(env or {})
        with log.open("ab") as logf:
            logf.write(f"$ {' '.join(argv)}\n".encode())
            logf.flush()
            popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=logf,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                env=full_env,
                start_new_session=True,  # own process group: stop() kills the group
                preexec_fn=_set_pdeathsig if self.die_with_parent else None,  # noqa: PLW1509
            )
        proc = _Proc(name, popen, log)
        self.procs[name] = proc
        return proc

    def _fail(self, proc: _Proc, why: str) -> ControlPlaneError:
        code = proc.popen.poll()
        state = "running" if code is None else f"exited with code {code}"
        return ControlPlaneError(
            f"{proc.name}: {why} ({state}); last lines of {proc.log}:\n{_tail(proc.log)}"
        )

    def _wait(self, proc: _Proc, what: str, check: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if proc.popen.poll() is not None:
                raise self._fail(proc, f"died while waiting for {what}")
            with contextlib.suppress(OSError, ControlPlaneError, ValueError):
                if check():
                    return
            if time.monotonic() > deadline:
                raise self._fail(proc, f"timed out after {timeout:.0f}s waiting for {what}")
            time.sleep(0.2)

    def _start_etcd(self, bin_dir: Path) -> None:
        peer = f"http://127.0.0.1:{free_port()}"
        proc = self._spawn(
            "etcd",
            [
                str(bin_dir / "etcd"),
                "--name=default",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=default={peer}",
                "--unsafe-no-fsync",  # throwaway data: skip fsync, much faster on slow disks
                "--log-level=warn",
            ],
        )

        def healthy() -> bool:
            with urllib.request.urlopen(f"{self.etcd_url}/health", timeout=2) as r:
                return bool(json.load(r).get("health") == "true")

        self._wait(proc, "etcd /health", healthy, 30)

    def _start_apiserver(self, bin_dir: Path) -> None:
        wd, pki = self.workdir, self.workdir / "pki"
        audit: list[str] = []
        if self.audit:
            (wd / "audit-policy.json").write_text(json.dumps(AUDIT_POLICY))
            audit = [
                f"--audit-policy-file={wd / 'audit-policy.json'}",
                f"--audit-log-path={self.audit_log_path}",
                "--audit-log-format=json",
                "--audit-log-mode=blocking",
            ]
        self._apiserver_argv = [
            str(bin_dir / "kube-apiserver"),
            f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1",
            f"--secure-port={self._api_port}",
            "--advertise-address=127.0.0.1",
            "--endpoint-reconciler-type=none",
            f"--cert-dir={wd / 'apiserver'}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--token-auth-file={wd / 'tokens.csv'}",
            "--authorization-mode=Node,RBAC",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--allow-privileged=true",
            f"--profiling={'true' if self.profiling else 'false'}",
            *audit,
        ]
        self._launch_apiserver()

    def _launch_apiserver(self) -> None:
        proc = self._spawn("kube-apiserver", self._apiserver_argv)
        self._wait(
            proc,
            "kube-apiserver /readyz",
            lambda: self._raw("GET", "/readyz", timeout=5)[0] == 200,
            self.start_timeout,
        )

    def _start_kcm(self, bin_dir: Path) -> None:
        pki = self.workdir / "pki"
        proc = self._spawn(
            "kube-controller-manager",
            [
                str(bin_dir / "kube-controller-manager"),
                f"--kubeconfig={self.kubeconfig_path}",
                "--leader-elect=false",
                "--controllers=*",
                "--use-service-account-credentials=false",
                "--bind-address=127.0.0.1",
                "--secure-port=0",
                f"--root-ca-file={pki / 'ca.crt'}",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--cluster-signing-cert-file={pki / 'ca.crt'}",
                f"--cluster-signing-key-file={pki / 'ca.key'}",
            ],
        )
        self._wait(
            proc,
            "kube-controller-manager to create the default service account",
            lambda: (
                self._raw("GET", "/api/v1/namespaces/default/serviceaccounts/default")[0] == 200
            ),
            self.start_timeout,
        )

    def _start_kwok(self, bin_dir: Path) -> None:
        stages = bin_dir.parent / "share" / "kwok-stages.yaml"
        if not stages.is_file():
            stages = cache_dir() / "share" / "kwok-stages.yaml"
        kwok_wd = self.workdir / "kwok"
        kwok_wd.mkdir(exist_ok=True)
        proc = self._spawn(
            "kwok",
            [
                str(bin_dir / "kwok"),
                f"--kubeconfig={self.kubeconfig_path}",
                f"--config={stages}",
                "--manage-all-nodes=false",
                f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}=fake",
                "--node-lease-duration-seconds=40",
                f"--cidr={POD_CIDR}",
                "--node-ip=127.0.0.1",
            ],
            env={"KWOK_WORKDIR": str(kwok_wd)},
        )
        # kwok has no health endpoint without --server-address; it logs "Watch nodes" once its
        # informers run. add_node() then proves it works end to end (the node turns Ready).
        self._wait(
            proc, "kwok to start watching nodes", lambda: _log_has(proc.log, "Watch nodes"), 30
        )

    # -- HTTP
    def _raw(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        timeout: float = 30,
        content_type: str = "application/json",
    ) -> tuple[int, str]:
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.server_url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {token or self.admin_token}")
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self._ssl) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode("utf-8", "replace")

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
        """One API call (admin token unless ``token``); JSON in and out; raises ApiError."""
        status, text = self._raw(
            method, path, body, token=token, timeout=timeout, content_type=content_type
        )
        if status >= 400:
            raise ApiError(method, path, status, text)
        try:
            return json.loads(text) if text else None
        except ValueError:
            return text

    def kubectl(
        self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """Run the kubectl built alongside the control plane, as admin."""
        return run_kubectl(
            self.bin_dir,
            self.kubeconfig_path,
            self.workdir,
            args,
            check=check,
            input=input,
            timeout=timeout,
        )

    def wait_for(self, what: str, check: Callable[[], _T | None], timeout: float = 60) -> _T:
        """Poll ``check`` until it returns something truthy; fail with component state."""
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while True:
            for proc in self.procs.values():
                if proc.popen.poll() is not None:
                    raise self._fail(proc, f"died while waiting for {what}")
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

    # -- kubeconfigs and identities
    def _write_kubeconfig(self, path: Path, token: str, user: str) -> Path:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "local",
                    "cluster": {
                        "server": self.server_url,
                        "certificate-authority": str(self.ca_path),
                    },
                }
            ],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": user}}],
            "current-context": "local",
        }
        path.write_text(json.dumps(config, indent=2) + "\n")
        path.chmod(0o600)
        return path

    def write_kubeconfig(self, path: Path | str, token: str, user: str = "user") -> Path:
        """A kubeconfig for another identity (e.g. a service-account token) against this server."""
        return self._write_kubeconfig(Path(path), token, user)

    def create_namespace(self, name: str, *, wait_for_default_sa: bool = True) -> Any:
        """Create a namespace and (by default) wait for its ``default`` service account.

        The ServiceAccount admission plugin rejects pods in a namespace whose ``default`` SA the
        controller-manager has not created yet, so tests should wait for it.
        """
        ns = self.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
        if wait_for_default_sa:
            self.wait_for(
                f"default service account in namespace {name}",
                lambda: (
                    self._raw("GET", f"/api/v1/namespaces/{name}/serviceaccounts/default")[0] == 200
                ),
            )
        return ns

    def service_account_token(
        self, namespace: str, name: str, expiration_seconds: int = 3600
    ) -> str:
        """A bound token for a service account (created if missing), via the TokenRequest API."""
        return request_token(self.request, namespace, name, expiration_seconds)

    # -- fake nodes
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
        """Create a kwok-managed fake Node and (by default) wait until it is schedulable.

        The node carries kwok's annotation ``kwok.x-k8s.io/node: fake`` (so this kwok manages it)
        and the labels kwok's docs use (``type: kwok``, hostname/os/arch). Capacity and
        allocatable are ``cpu``, ``memory``, ``pods`` plus ``resources`` (e.g. ``nvidia.com/gpu``).
        kwok's docs also taint fake nodes ``kwok.x-k8s.io/node=fake:NoSchedule``; in this
        fake-only cluster that is off unless ``kwok_taint`` is true. "Schedulable" means Ready
        (kwok's node-initialize stage) and without the ``node.kubernetes.io/not-ready`` taint
        that admission adds at creation (the node-lifecycle controller removes it).
        """
        node = fake_node(
            name,
            cpu,
            memory,
            pods,
            labels,
            resources=resources,
            taints=taints,
            kwok_taint=kwok_taint,
            annotations=annotations,
        )
        created = self.request("POST", "/api/v1/nodes", node)
        if not wait_ready:
            return created
        return self.wait_for(
            f"fake node {name} Ready and untainted", lambda: self._node_ready(name), timeout
        )

    def _node_ready(self, name: str) -> Any:
        node = self.request("GET", f"/api/v1/nodes/{name}")
        conds = {c["type"]: c["status"] for c in node.get("status", {}).get("conditions", [])}
        taints = {t["key"] for t in node.get("spec", {}).get("taints", [])}
        return node if conds.get("Ready") == "True" and NOT_READY_TAINT not in taints else None

    def bind_pod(self, namespace: str, pod: str, node: str) -> Any:
        """What a scheduler does: POST a Binding to pods/<pod>/binding."""
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
