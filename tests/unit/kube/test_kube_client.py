from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from vscheduler.clock import FixedClock
from vscheduler.errors import ClusterError, ConflictError, TransientClusterError
from vscheduler.informer.kinds import NODE
from vscheduler.kube.client import (
    KubeApi,
    build_api_client,
    load_configuration,
    pool_size,
    throttled,
)
from vscheduler.kube.lister import KubeLister
from vscheduler.kube.ratelimit import TokenBucket
from vscheduler.kube.writers import KubeWriter

if TYPE_CHECKING:
    from conftest import FakeApiServer


def test_the_client_comes_from_the_kubeconfig_with_a_pool_for_the_bind_workers(
    kubeconfig: Path, apiserver: FakeApiServer
) -> None:
    api_client = build_api_client(str(kubeconfig), pool_maxsize=pool_size(16))
    try:
        assert api_client.configuration.host == apiserver.url
        assert api_client.configuration.connection_pool_maxsize == 34
        assert api_client.rest_client.pool_manager.connection_pool_kw["maxsize"] == 34
    finally:
        api_client.close()


def test_the_pool_holds_the_bind_workers_every_watch_and_some_spare() -> None:
    assert pool_size(16) == 16 + 14 + 4
    assert pool_size(0, watches=1) == 1 + 1 + 4


def test_in_cluster_config_is_used_when_running_in_a_pod_without_a_kubeconfig(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[Any] = []

    def incluster(client_configuration: Any) -> None:
        calls.append(client_configuration)
        client_configuration.host = "https://10.0.0.1:443"

    monkeypatch.setattr("kubernetes.config.load_incluster_config", incluster)
    configuration = load_configuration(environ={"KUBERNETES_SERVICE_HOST": "10.0.0.1"})
    assert calls == [configuration]
    assert configuration.host == "https://10.0.0.1:443"


def test_an_explicit_kubeconfig_wins_over_the_in_cluster_config(
    kubeconfig: Path, apiserver: FakeApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def incluster(client_configuration: Any) -> None:
        raise AssertionError("in-cluster config must not be loaded")

    monkeypatch.setattr("kubernetes.config.load_incluster_config", incluster)
    configuration = load_configuration(
        str(kubeconfig), environ={"KUBERNETES_SERVICE_HOST": "10.0.0.1"}
    )
    assert configuration.host == apiserver.url


def test_a_missing_kubeconfig_is_a_cluster_error_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ClusterError, match="nope"):
        load_configuration(str(missing), environ={})


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param(
            "garbage: [",
            "while parsing a flow node expected the node content, but found '<stream end>'",
            id="not YAML",
        ),
        pytest.param("[]\n", "list indices must be integers or slices, not str", id="a list"),
        pytest.param(
            "{contexts: 5, current-context: a}\n", "'int' object is not iterable", id="wrong type"
        ),
    ],
)
def test_a_malformed_kubeconfig_is_one_line_cluster_error_naming_the_file(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    with pytest.raises(ClusterError) as raised:
        load_configuration(str(path), environ={})
    message = str(raised.value)
    assert message.startswith(f"cannot load the client configuration from {path}: {reason}")
    assert "\n" not in message


@pytest.mark.timeout(10)
def test_every_request_of_the_adapter_takes_a_rate_limiter_token(
    kubeconfig: Path, apiserver: FakeApiServer, clock: FixedClock
) -> None:
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.advance(seconds)

    limiter = TokenBucket(2, 1, clock=clock, sleep=sleep)
    api = KubeApi(build_api_client(str(kubeconfig), pool_maxsize=2), limiter)
    try:
        apiserver.reply(
            "GET", "/api/v1/nodes", 200, {"metadata": {"resourceVersion": "1"}, "items": []}
        )
        apiserver.reply("POST", "/api/v1/namespaces/a/pods/p/binding", 201, {})
        apiserver.reply("PATCH", "/api/v1/namespaces/a/pods/p/status", 200, {})
        KubeLister(api).list(NODE)
        writer = KubeWriter(api, clock=clock)
        writer.bind("a", "p", "u", "n")
        writer.set_pod_condition("a", "p", {"type": "PodScheduled", "status": "False"})
    finally:
        api.close()
    assert slept == [0.5, 0.5]
    assert len(apiserver.requests()) == 3


@pytest.mark.timeout(10)
def test_requests_identify_the_scheduler_and_carry_the_token(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    apiserver.reply(
        "GET", "/api/v1/nodes", 200, {"metadata": {"resourceVersion": "1"}, "items": []}
    )
    KubeLister(api).list(NODE)
    (request,) = apiserver.requests()
    assert request.headers["user-agent"] == "vscheduler"
    assert request.headers["authorization"] == "Bearer secret-token"
    assert request.headers["accept"] == "application/json"


@pytest.mark.timeout(10)
def test_an_unreachable_server_is_a_transient_error(tmp_path: Path, clock: FixedClock) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(
        """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""
    )
    api = KubeApi(
        build_api_client(str(path), pool_maxsize=1),
        TokenBucket(0, 0, clock=clock),
        connect_timeout=1.0,
    )
    try:
        with pytest.raises(TransientClusterError, match="connection failed"):
            KubeLister(api).list(NODE)
    finally:
        api.close()


def test_the_credential_refresh_hook_runs_at_most_once_a_period() -> None:
    calls: list[object] = []
    now = [100.0]
    hook = throttled(calls.append, 1.0, monotonic=lambda: now[0])
    hook("a")
    hook("b")
    now[0] = 100.9
    hook("c")
    now[0] = 101.0
    hook("d")
    assert calls == ["a", "d"]


def test_the_kubeconfig_refresh_hook_is_throttled_and_the_token_still_sent(
    kubeconfig: Path, apiserver: FakeApiServer, clock: FixedClock
) -> None:
    api_client = build_api_client(str(kubeconfig), pool_maxsize=1)
    api = KubeApi(api_client, TokenBucket(0, 0, clock=clock))
    try:
        hook = api_client.configuration.refresh_api_key_hook
        assert hook is not None
        assert hook.__qualname__ == "throttled.<locals>.run"
        for _ in range(2):
            apiserver.reply(
                "GET", "/api/v1/nodes", 200, {"metadata": {"resourceVersion": "1"}, "items": []}
            )
            KubeLister(api).list(NODE)
        # the loader's refresh installs its own hook again; the throttle stays in its place
        assert api_client.configuration.refresh_api_key_hook is hook
    finally:
        api.close()
    assert [r.headers["authorization"] for r in apiserver.requests()] == ["Bearer secret-token"] * 2


def test_a_client_behind_a_proxy_sends_every_request_through_the_proxy(
    apiserver: FakeApiServer, tmp_path: Path, clock: FixedClock
) -> None:
    # the fake API server plays the HTTP proxy: it is asked for the absolute URL
    path = tmp_path / "kubeconfig"
    path.write_text(
        f"""\
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: "http://kube.invalid:6443", proxy-url: "{apiserver.url}"}}
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
"""
    )
    api = KubeApi(build_api_client(str(path), pool_maxsize=1), TokenBucket(0, 0, clock=clock))
    try:
        apiserver.reply("POST", "/api/v1/namespaces/ns/events", 201, {"kind": "Event"})
        assert api.request("POST", "/api/v1/namespaces/ns/events", body={}) == {"kind": "Event"}
        # requests written together go one after another through the proxy
        apiserver.reply("POST", "/api/v1/namespaces/ns/events", 201, {"kind": "Event"})
        apiserver.reply("POST", "/api/v1/namespaces/ns/events", 409, {"kind": "Status"})
        first, second = api.request_many(
            "POST", [("/api/v1/namespaces/ns/events", {}), ("/api/v1/namespaces/ns/events", {})]
        )
    finally:
        api.close()
    assert first == {"kind": "Event"}
    assert isinstance(second, ConflictError)
    assert [r.path for r in apiserver.requests()] == ["/api/v1/namespaces/ns/events"] * 3


def _limited_api(
    kubeconfig: Path, clock: FixedClock, burst: int, fence: Callable[[], bool] | None = None
) -> tuple[KubeApi, list[float]]:
    """A client of 10 requests a second, `burst` saved up; the seconds it slept."""
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.advance(seconds)

    limiter = TokenBucket(10, burst, clock=clock, sleep=sleep)
    return KubeApi(build_api_client(str(kubeconfig), pool_maxsize=2), limiter, fence=fence), slept


EVENTS = "/api/v1/namespaces/ns/events"


@pytest.mark.timeout(10)
def test_requests_written_together_leave_as_their_tokens_come(
    apiserver: FakeApiServer, kubeconfig: Path, clock: FixedClock
) -> None:
    api, slept = _limited_api(kubeconfig, clock, burst=2)
    try:
        for _ in range(4):
            apiserver.reply("POST", EVENTS, 201, {"kind": "Event"})
        assert api.request_many("POST", [(EVENTS, {})] * 4) == [{"kind": "Event"}] * 4
    finally:
        api.close()
    # the two tokens there went together; the other two requests waited for theirs, in turn
    assert slept == pytest.approx([0.1, 0.1])
    assert len(apiserver.requests("POST")) == 4


@pytest.mark.timeout(10)
def test_a_later_part_of_requests_written_together_refused_by_the_fence_answers_not_sent(
    apiserver: FakeApiServer, kubeconfig: Path, clock: FixedClock
) -> None:
    checks = [0]

    def fence() -> bool:  # the first part is asked twice (admitted, then right before it leaves)
        checks[0] += 1
        return checks[0] <= 2

    api, _ = _limited_api(kubeconfig, clock, burst=1, fence=fence)
    try:
        apiserver.reply("POST", EVENTS, 201, {"kind": "Event"})
        first, *rest = api.request_many("POST", [(EVENTS, {})] * 3)
    finally:
        api.close()
    assert first == {"kind": "Event"}
    assert len(rest) == 2
    assert all(isinstance(r, TransientClusterError) and "not sent" in str(r) for r in rest)
    assert len(apiserver.requests("POST")) == 1
