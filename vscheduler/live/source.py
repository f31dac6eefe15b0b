"""Where the live tools read the cluster: a `Source` (list a kind, get one object), and its
implementation over a read-only `KubeApi`.

Owns: the read-only connection of the live tools and the policy they run (a file, a ConfigMap
key, or the built-in default).
Must not: write anything (the client refuses writes), or interpret objects (convert does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from vscheduler.clock import Clock
from vscheduler.errors import InputError, NotFoundError
from vscheduler.informer.kinds import Kind
from vscheduler.informer.ports import Raw
from vscheduler.kube.client import USER_AGENT, ClientSettings, KubeApi, connect
from vscheduler.kube.lister import KubeLister
from vscheduler.kube.paths import object_path
from vscheduler.runtime.policy import read_policy_file

Query = Sequence[tuple[str, str]]


class Source(Protocol):
    """Reads of the live cluster."""

    def list(self, kind: Kind) -> Sequence[Raw]:
        """Every object of `kind` (items carry `kind` and `apiVersion`)."""
        ...

    def get(self, path: str, query: Query = ()) -> dict[str, Any] | None:
        """One object (or list) at `path`, None when the API server answers 404."""
        ...


class KubeSource:
    """`Source` over a read-only `KubeApi`."""

    def __init__(self, api: KubeApi) -> None:
        self._api = api
        self._lister = KubeLister(api)

    def list(self, kind: Kind) -> Sequence[Raw]:
        """Every object of `kind`, page by page."""
        return list(self._lister.list(kind).items)

    def get(self, path: str, query: Query = ()) -> dict[str, Any] | None:
        """GET `path`; None for a 404."""
        try:
            return self._api.request("GET", path, query=query)
        except NotFoundError:
            return None

    def close(self) -> None:
        """Drop pooled connections."""
        self._api.close()


def connect_read_only(kubeconfig: str, *, clock: Clock, tool: str) -> KubeSource:
    """A read-only source from a kubeconfig (empty: in-cluster, $KUBECONFIG or ~/.kube/config);
    the User-Agent names the tool (`vscheduler (snapshot)`)."""
    settings = ClientSettings(
        kubeconfig=kubeconfig or None, bind_workers=1, user_agent=f"{USER_AGENT} ({tool})"
    )
    return KubeSource(connect(settings, clock=clock, read_only=True))


def policy_text(source: Source, *, file: str, configmap: str, key: str) -> tuple[str | None, str]:
    """The policy to run and where it came from: `--config FILE`, else the ConfigMap key
    `--policy-configmap NAMESPACE/NAME` names, else (None, "default policy")."""
    if file:
        return read_policy_file(file), file
    if not configmap:
        return None, "default policy"
    namespace, _, name = configmap.partition("/")
    if not namespace or not name:
        msg = f"--policy-configmap: give it as NAMESPACE/NAME, got {configmap!r}"
        raise InputError(msg)
    where = f"ConfigMap {namespace}/{name}"
    found = source.get(object_path("", "v1", "configmaps", name, namespace=namespace))
    if found is None:
        raise InputError(f"--policy-configmap: {where} not found")
    data = found.get("data")
    text = data.get(key) if isinstance(data, dict) else None
    if not isinstance(text, str):
        raise InputError(f"--policy-configmap: {where} has no key {key!r} in data")
    return text, f"{where} key {key}"
