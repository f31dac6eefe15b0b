"""deploy/rbac.yaml grants the scheduler's ServiceAccount exactly what the code calls, and
deploy/readonly/rbac.yaml grants its read-only ServiceAccount exactly what the live tools and
`run --dry-run` call (reads only).

The calls are not listed by hand: every watched kind is listed and watched through the real
KubeLister, every public method of KubeWriter and LeaseClient is called, all against a recording
KubeApi, and each request (method, path, query) is turned into what RBAC authorizes (verb, API
group, resource, namespace, name), the way the API server does. A new write without a rule, or a
rule no call needs, fails here. Namespaces and names come from the shipped Deployment's flags
(parsed by the real command line) and from the reservation plugin's defaults.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import inspect
import io
import json
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from vscheduler import catalog, cli
from vscheduler.clock import FixedClock
from vscheduler.effects.ports import ObjectRef
from vscheduler.errors import ClusterError, NotFoundError
from vscheduler.informer.kinds import CLUSTER_KINDS, Kind, config_map
from vscheduler.kube.client import KubeApi
from vscheduler.kube.lease import LeaseClient, LeaseRecord
from vscheduler.kube.lister import KubeLister
from vscheduler.kube.writers import KubeWriter
from vscheduler.live import explain, snapshot
from vscheduler.live.source import KubeSource, policy_text
from vscheduler.plugins import reservation
from vscheduler.runtime.settings import Settings

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"
SERVICE_ACCOUNT = ("vscheduler-system", "vscheduler")


def documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


# --- what the code calls -----------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, order=True)
class Access:
    """One request as RBAC sees it; namespace None: cluster-scoped or all namespaces."""

    verb: str
    group: str
    resource: str
    namespace: str | None
    name: str | None

    def __str__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        named = f" {self.name!r}" if self.name else ""
        group = self.group or "core"
        return f"{self.verb} {self.resource}{named} ({group}){where}"


class _SentError(Exception):
    """Ends a watch once its request is recorded."""


NO_STATUS_SUBRESOURCE = "/on-volcano-crd/status"
"""Answers 404, as where a CRD has no status subresource (Volcano's own PodGroup CRD)."""


class RecordingApi(KubeApi):
    """A KubeApi that records every request and answers with an empty object (a PATCH: with
    what it patched)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, dict[str, str]]] = []

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        body: Mapping[str, object] | bytes | None = None,
        content_type: str = "application/json",
        accept: str = "application/json",
    ) -> dict[str, Any]:
        self.sent.append((method, path, dict(query)))
        if path.endswith(NO_STATUS_SUBRESOURCE):
            raise NotFoundError(f"404 ({path})", status=404)
        if method == "PATCH" and isinstance(body, Mapping):
            return dict(body)  # a patched object shows the patch
        return {}

    def request_many(
        self,
        method: str,
        requests: Sequence[tuple[str, Mapping[str, object] | bytes | None]],
        *,
        content_type: str = "application/json",
        accept: str = "application/json",
    ) -> list[dict[str, Any] | ClusterError]:
        return [
            self.request(method, path, body=body, content_type=content_type, accept=accept)
            for path, body in requests
        ]

    def open(self, method: str, path: str, **kwargs: Any) -> Any:
        self.sent.append((method, path, dict(kwargs.get("query", ()))))
        raise _SentError


def access_of(method: str, path: str, query: Mapping[str, str]) -> Access:
    """What the API server's request-info resolver makes of a request."""
    parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
    group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
    namespace = None
    if rest[0] == "namespaces" and len(rest) > 2:
        namespace, rest = rest[1], rest[2:]
    resource, name = rest[0], rest[1] if len(rest) > 1 else None
    if len(rest) > 2:
        resource = f"{resource}/{rest[2]}"
    if name is None and method == "GET":
        verb = "watch" if query.get("watch") == "true" else "list"
        selector = query.get("fieldSelector", "")
        name = selector.removeprefix("metadata.name=") if selector.startswith("metadata.") else None
    else:
        verb = {"GET": "get", "POST": "create", "PATCH": "patch", "PUT": "update"}[method]
    return Access(verb, group, resource, namespace, name)


def deployment_settings() -> Settings:
    (deployment,) = documents("deployment.yaml")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    namespace = deployment["metadata"]["namespace"]
    args = [a.replace("$(POD_NAMESPACE)", namespace) for a in container["args"]]
    return cli._settings(cli._parser().parse_args(["run", *args]))


def kinds_watched(settings: Settings) -> list[Kind]:
    policy = settings.policy
    reservations = config_map(reservation.DEFAULT_NAMESPACE, reservation.DEFAULT_NAME)
    policy_kind = config_map(policy.configmap_namespace, policy.configmap_name)
    return [*CLUSTER_KINDS, policy_kind, reservations]


POD = ObjectRef("Pod", "v1", "team-a", "worker-0", "uid-1")
QUEUE = ObjectRef("Queue", "scheduling.volcano.sh/v1beta1", "", "research", "uid-2")


def record_events(writer: KubeWriter) -> None:
    """About a namespaced object, and about a cluster-scoped one (which goes to `default`)."""
    for ref in (POD, QUEUE):
        writer.record_event(ref, "Normal", "Scheduled", "m")


def bind_together(writer: KubeWriter) -> None:
    """Two pods of two namespaces, bound together."""
    writer.bind_many(
        [("team-a", "worker-0", "uid-1", "node-1"), ("team-b", "worker-1", "uid-2", "node-1")]
    )


def record_events_together(writer: KubeWriter) -> None:
    """The same two, written together."""
    writer.record_events([(POD, "Normal", "Scheduled", "m"), (QUEUE, "Warning", "Overused", "m")])


def patch_podgroup_statuses(writer: KubeWriter) -> None:
    """Through the status subresource, and where that answers 404, through the PodGroup."""
    for name in ("pg", "on-volcano-crd"):
        writer.patch_podgroup_status("team-a", name, {"phase": "X"})


def patch_queue_statuses(writer: KubeWriter) -> None:
    """Through the status subresource, and where that answers 404, through the Queue."""
    for name in ("research", "on-volcano-crd"):
        writer.patch_queue_status(name, {"allocated": {"cpu": "1"}})


WRITES: dict[str, Callable[[KubeWriter], None]] = {
    "bind": lambda w: w.bind("team-a", "worker-0", "uid-1", "node-1"),
    "bind_many": bind_together,
    "evict": lambda w: w.evict("team-a", "worker-0", "uid-1"),
    "set_pod_condition": lambda w: w.set_pod_condition("team-a", "worker-0", {"type": "X"}),
    "set_nominated_node": lambda w: w.set_nominated_node("team-a", "worker-0", "node-1"),
    "patch_podgroup_status": patch_podgroup_statuses,
    "set_claim_selected_node": lambda w: w.set_claim_selected_node(
        "team-a", "data-0", "node-1", "7"
    ),
    "set_volume_claim_ref": lambda w: w.set_volume_claim_ref(
        "local-1", "team-a", "data-0", "uid-c", "7"
    ),
    "patch_queue_status": patch_queue_statuses,
    "remove_config_map_keys": lambda w: w.remove_config_map_keys(
        reservation.DEFAULT_NAMESPACE, reservation.DEFAULT_NAME, ["team-a/worker-0"]
    ),
    "record_event": record_events,
    "record_events": record_events_together,
}
"""Every public KubeWriter call that sends a request (event_body only builds one)."""
LEASE_CALLS: dict[str, Callable[[LeaseClient], object]] = {
    "get": lambda c: c.get(),
    "create": lambda c: c.create(LeaseRecord(holder_identity="a")),
    "update": lambda c: c.update(LeaseRecord(holder_identity="a", resource_version="7")),
}


def public_methods(cls: type) -> set[str]:
    return {n for n, v in vars(cls).items() if inspect.isfunction(v) and not n.startswith("_")}


def accesses() -> set[Access]:
    """Every request the scheduler can make, as run with the shipped Deployment's flags."""
    settings = deployment_settings()
    api = RecordingApi()
    lister = KubeLister(api)
    for kind in kinds_watched(settings):
        with contextlib.suppress(_SentError):  # a list, read as it arrives, goes through `open`
            lister.list(kind)
        with contextlib.suppress(_SentError):
            next(iter(lister.watch(kind, "1", timeout_seconds=1, stop=threading.Event())))
    writer = KubeWriter(api, clock=FixedClock(dt.datetime(2024, 5, 1, tzinfo=dt.UTC)))
    for write in WRITES.values():
        write(writer)
    election = settings.leader_election
    lease = LeaseClient(api, election.resource_namespace, election.resource_name)
    for call in LEASE_CALLS.values():
        call(lease)
    return {access_of(*sent) for sent in api.sent}


# --- what the manifests grant -------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Grant:
    """One rule, bound to the ServiceAccount; namespace None: everywhere."""

    rule: Mapping[str, Any]
    namespace: str | None
    role: str

    def allows(self, a: Access) -> bool:
        rule = self.rule
        names = rule.get("resourceNames") or []
        return (
            a.verb in rule["verbs"]
            and a.group in rule["apiGroups"]
            and a.resource in rule["resources"]
            and (not names or a.name in names)
            and (self.namespace is None or a.namespace == self.namespace)
        )

    def needs(self) -> Iterable[tuple[str, str, str, str | None]]:
        for verb in self.rule["verbs"]:
            for group in self.rule["apiGroups"]:
                for resource in self.rule["resources"]:
                    for name in self.rule.get("resourceNames") or [None]:
                        yield verb, group, resource, name


def bound_grants(
    roles_docs: list[dict[str, Any]], bindings: list[dict[str, Any]], account: tuple[str, str]
) -> list[Grant]:
    """The rules of every Role/ClusterRole of `roles_docs` that `bindings` give to `account`."""
    roles = {
        (d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d
        for d in roles_docs
        if d["kind"] in ("Role", "ClusterRole")
    }
    found: list[Grant] = []
    for binding in bindings:
        subjects = {(s.get("namespace"), s["name"]) for s in binding["subjects"]}
        if account not in subjects:
            continue
        namespace = binding["metadata"].get("namespace")
        ref = binding["roleRef"]
        role = roles[(ref["kind"], namespace if ref["kind"] == "Role" else None, ref["name"])]
        found += [Grant(rule, namespace, f"{ref['kind']} {ref['name']}") for rule in role["rules"]]
    return found


def grants() -> list[Grant]:
    return bound_grants(documents("rbac.yaml"), documents("bindings.yaml"), SERVICE_ACCOUNT)


# --- the tests ---------------------------------------------------------------------------------
def test_every_request_the_scheduler_makes_is_allowed_by_the_shipped_rbac() -> None:
    allowed = grants()
    missing = sorted(a for a in accesses() if not any(g.allows(a) for g in allowed))
    assert [str(a) for a in missing] == []


def test_every_shipped_rbac_rule_is_needed_by_some_request() -> None:
    made = accesses()
    unused = [
        f"{g.role}: {verb} {resource} ({group or 'core'}) {name or ''}".strip()
        for g in grants()
        for verb, group, resource, name in g.needs()
        if not any(
            g.allows(a)
            and (a.verb, a.group, a.resource) == (verb, group, resource)
            and (name is None or a.name == name)
            for a in made
        )
    ]
    assert unused == []


def test_the_scheduler_reads_by_list_and_watch_and_writes_exactly_these_calls() -> None:
    writes = sorted(
        (a.verb, a.group, a.resource) for a in accesses() if a.verb not in ("list", "watch")
    )
    assert sorted(set(writes)) == [
        ("create", "", "events"),
        ("create", "", "pods/binding"),
        ("create", "", "pods/eviction"),
        ("create", "coordination.k8s.io", "leases"),
        ("get", "coordination.k8s.io", "leases"),
        ("patch", "", "configmaps"),
        ("patch", "", "persistentvolumeclaims"),
        ("patch", "", "persistentvolumes"),
        ("patch", "", "pods/status"),
        ("patch", "scheduling.volcano.sh", "podgroups"),
        ("patch", "scheduling.volcano.sh", "podgroups/status"),
        ("patch", "scheduling.volcano.sh", "queues"),
        ("patch", "scheduling.volcano.sh", "queues/status"),
        ("update", "coordination.k8s.io", "leases"),
    ]


def test_every_call_of_the_writers_and_the_lease_client_is_exercised() -> None:
    assert public_methods(KubeWriter) - {"event_body"} == set(WRITES)
    assert public_methods(LeaseClient) == set(LEASE_CALLS)


@pytest.mark.parametrize(
    "access",
    [
        Access("get", "", "secrets", "vscheduler-system", "anything"),
        Access("list", "", "secrets", None, None),
        Access("list", "", "configmaps", None, None),
        Access("create", "", "pods", "team-a", None),
        Access("delete", "", "pods", "team-a", "worker-0"),
        Access("update", "coordination.k8s.io", "leases", "vscheduler-system", "other"),
        Access("patch", "", "configmaps", "kube-system", "other"),
    ],
    ids=str,
)
def test_the_service_account_may_not(access: Access) -> None:
    assert not any(g.allows(access) for g in grants())


def test_no_rule_uses_a_wildcard() -> None:
    for grant in grants():
        for key in ("verbs", "apiGroups", "resources"):
            assert "*" not in grant.rule[key], grant


# --- deploy/readonly: the live tools and `run --dry-run` ----------------------------------------
READONLY = DEPLOY / "readonly"
READONLY_ACCOUNT = ("vscheduler-system", "vscheduler-readonly")
READONLY_POLICY = (
    "actions: enqueue, allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: reservation\n"
)


class ReadOnlyRecordingApi(RecordingApi):
    """A cluster holding one pending pod `team-a/worker-0` and the shipped policy ConfigMap."""

    def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        answer = super().request(method, path, **kwargs)
        pod = {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": "worker-0", "namespace": "team-a", "uid": "u"},
            "spec": {"schedulerName": "vscheduler", "containers": [{"name": "c"}]},
        }
        if path == "/api/v1/namespaces/team-a/pods/worker-0":
            return pod
        if path == "/api/v1/pods":
            return {"items": [pod]}
        if path.endswith("/configmaps/vscheduler-policy"):
            return {"data": {"volcano-scheduler.conf": READONLY_POLICY}}
        return answer

    def open(self, method: str, path: str, **kwargs: Any) -> Any:
        """A list (read as it arrives) answers as `request` does; a watch ends at once."""
        query = dict(kwargs.get("query", ()))
        if method != "GET" or query.get("watch") == "true":
            return super().open(method, path, **kwargs)
        return _Body(json.dumps(self.request(method, path, **kwargs)).encode())


class _Body(io.BytesIO):
    """An answer's body as a streamed response reads it."""

    def release_conn(self) -> None:
        """Nothing to hand back."""


def readonly_accesses() -> set[Access]:
    """Every request of `snapshot`, `explain`, `queues`, `compare-decisions` (with the shipped
    policy ConfigMap) and of `run --dry-run` (with the shipped Deployment's flags)."""
    api = ReadOnlyRecordingApi()
    source = KubeSource(api)
    settings = deployment_settings()
    policy = f"{settings.policy.configmap_namespace}/{settings.policy.configmap_name}"
    text, where = policy_text(source, file="", configmap=policy, key=settings.policy.configmap_key)
    explain.explain(
        source,
        "team-a/worker-0",
        policy_text=text,
        policy_source=where,
        scheduler_name="vscheduler",
        now=dt.datetime(2024, 5, 1, tzinfo=dt.UTC),
        warn=lambda _: None,
    )
    snapshot.take(source, catalog.load_pipeline(text), warn=lambda _: None)
    lister = KubeLister(api)
    for kind in kinds_watched(settings):
        with contextlib.suppress(_SentError):  # a list, read as it arrives, goes through `open`
            lister.list(kind)
        with contextlib.suppress(_SentError):
            next(iter(lister.watch(kind, "1", timeout_seconds=1, stop=threading.Event())))
    return {access_of(*sent) for sent in api.sent}


def readonly_grants() -> list[Grant]:
    docs = [d for d in yaml.safe_load_all((READONLY / "rbac.yaml").read_text()) if d]
    bindings = [d for d in docs if d["kind"] in ("RoleBinding", "ClusterRoleBinding")]
    return bound_grants(docs, bindings, READONLY_ACCOUNT)


def test_the_read_only_role_allows_every_request_of_the_live_tools_and_a_dry_run() -> None:
    allowed = readonly_grants()
    missing = sorted(a for a in readonly_accesses() if not any(g.allows(a) for g in allowed))
    assert [str(a) for a in missing] == []


def test_every_rule_of_the_read_only_role_is_needed_and_none_writes() -> None:
    made = readonly_accesses()
    unused = [
        f"{verb} {resource} ({group or 'core'}) {name or ''}".strip()
        for g in readonly_grants()
        for verb, group, resource, name in g.needs()
        if not any(
            g.allows(a)
            and (a.verb, a.group, a.resource) == (verb, group, resource)
            and (name is None or a.name == name)
            for a in made
        )
    ]
    assert unused == []
    assert {verb for g in readonly_grants() for verb in g.rule["verbs"]} == {"get", "list", "watch"}


def test_the_read_only_role_is_its_own_kustomization_outside_the_base() -> None:
    base = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    assert "readonly" not in base["resources"]
    own = yaml.safe_load((READONLY / "kustomization.yaml").read_text())
    assert own["resources"] == ["namespace.yaml", "rbac.yaml"]
    assert (READONLY / "namespace.yaml").read_text() == (DEPLOY / "namespace.yaml").read_text()
