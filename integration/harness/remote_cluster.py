"""One test's view of a shared cluster (`kind`, `existing`): its names scoped, its objects
cleaned up.

Owns: `RemoteCluster`, which has LocalControlPlane's methods and translates the test's plain
names into its own (namespaces, scheduler names, the node label its pods select).
Must not: start or stop the shared cluster (`remote.RemoteBackend` does).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from integration.controlplane import (
    NOT_READY_TAINT,
    ApiError,
    ControlPlaneError,
    fake_node,
    request_token,
)
from integration.harness.clusters import KWOK_ANNOTATION, RUN_LABEL

if TYPE_CHECKING:
    from integration.harness.remote import RemoteBackend

T = TypeVar("T")
_NAMESPACED = re.compile(r"/namespaces/([^/?]+)")
_WORKLOADS = ("Job", "Deployment", "ReplicaSet", "StatefulSet")


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


def _node_ready(node: Mapping[str, Any]) -> bool:
    conds = {c["type"]: c["status"] for c in node.get("status", {}).get("conditions", [])}
    taints = {t["key"] for t in node.get("spec", {}).get("taints", []) or []}
    return conds.get("Ready") == "True" and NOT_READY_TAINT not in taints
