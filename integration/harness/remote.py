"""The shared-cluster backends (`kind`, `existing`): the session's cluster and its own kwok.

Owns: `RemoteBackend` (the kubeconfig read and flattened, plain-HTTPS requests with its
credentials, kwok started against the cluster, the CRDs applied) and `remote_backend`, which
makes one for `kind` (through pytest-kind, when Docker answers) or `existing` (`$KUBECONFIG`).
Must not: scope a test's names (`remote_cluster.RemoteCluster` does).
"""

from __future__ import annotations

import base64
import contextlib
import inspect
import json
import os
import secrets
import shutil
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from integration.controlplane import (
    POD_CIDR,
    ControlPlaneError,
    cache_dir,
    find_bin_dir,
    run_kubectl,
)
from integration.harness.clusters import CRDS, KWOK_ANNOTATION, BackendUnavailableError
from integration.harness.remote_cluster import RemoteCluster


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
