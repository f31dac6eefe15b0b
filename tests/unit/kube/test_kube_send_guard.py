"""The API client's fence is asked right before a write's bytes leave, not only when the
request is made; urllib3 retries nothing (ours are the only retries); an outage is one warning
with its duration when it ends."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from vscheduler.clock import FixedClock
from vscheduler.errors import FencedError, StaleDecisionError, UnreachableError
from vscheduler.kube.client import KubeApi, build_api_client
from vscheduler.kube.outage import Outage
from vscheduler.kube.ratelimit import TokenBucket
from vscheduler.kube.writers import KubeWriter

if TYPE_CHECKING:
    from conftest import FakeApiServer

POD = "/api/v1/namespaces/team-a/pods/worker-0"
BOUND = {"kind": "Status", "status": "Success"}


def fenced_api(kubeconfig: Path, clock: FixedClock, fence: object) -> KubeApi:
    return KubeApi(
        build_api_client(str(kubeconfig), pool_maxsize=2),
        TokenBucket(0, 0, clock=clock),
        fence=fence,  # type: ignore[arg-type]
    )


@pytest.mark.timeout(10)
def test_a_lease_deadline_passing_after_the_request_was_made_stops_it_before_it_leaves(
    apiserver: FakeApiServer, kubeconfig: Path, clock: FixedClock
) -> None:
    # The first ask (after the rate limiter) still leads; by the time the bytes go out (a freeze,
    # a long wait for the interpreter) the deadline has passed: nothing reaches the server.
    answers = iter([True])
    api = fenced_api(kubeconfig, clock, lambda: next(answers, False))
    try:
        apiserver.reply("POST", f"{POD}/binding", 201, BOUND)
        with pytest.raises(FencedError, match="no longer leads"):
            KubeWriter(api, clock=clock).bind("team-a", "worker-0", "uid-0", "node-a")
        assert apiserver.requests() == []
    finally:
        api.close()


@pytest.mark.timeout(10)
def test_a_fence_that_raises_stops_the_write_with_its_own_error_and_reads_are_never_asked(
    apiserver: FakeApiServer, kubeconfig: Path, clock: FixedClock
) -> None:
    asked: list[str] = []

    def fence() -> bool:
        asked.append("asked")
        if len(asked) > 1:
            raise StaleDecisionError("node node-a is gone")
        return True

    api = fenced_api(kubeconfig, clock, fence)
    try:
        apiserver.reply("GET", POD, 200, {"kind": "Pod"})
        assert api.request("GET", POD) == {"kind": "Pod"}
        assert asked == []
        with pytest.raises(StaleDecisionError, match="node node-a is gone"):
            KubeWriter(api, clock=clock).bind("team-a", "worker-0", "uid-0", "node-a")
        assert apiserver.requests("POST") == []
        # the connection of the refused write was dropped; the next write goes through
        asked.clear()
        apiserver.reply("POST", f"{POD}/binding", 201, BOUND)
        api_ok = fenced_api(kubeconfig, clock, lambda: True)
        try:
            KubeWriter(api_ok, clock=clock).bind("team-a", "worker-0", "uid-0", "node-a")
        finally:
            api_ok.close()
        assert len(apiserver.requests("POST")) == 1
    finally:
        api.close()


@pytest.mark.timeout(10)
def test_a_write_that_left_after_the_lease_lapsed_is_logged_by_name_and_one_in_time_is_not(
    apiserver: FakeApiServer, kubeconfig: Path, clock: FixedClock, caplog: pytest.LogCaptureFixture
) -> None:
    # The fence passed; the process paused before the bytes left and resumed past the lease
    # deadline: the write went out (no client can stop it then), and the warning names it.
    leading = iter([True, False])
    api = KubeApi(
        build_api_client(str(kubeconfig), pool_maxsize=2),
        TokenBucket(0, 0, clock=clock),
        fence=lambda: True,
        still_leading=lambda: next(leading),
    )
    try:
        apiserver.reply("POST", f"{POD}/binding", 201, BOUND)
        writer = KubeWriter(api, clock=clock)
        with caplog.at_level(logging.WARNING, logger="vscheduler.kube.client"):
            writer.bind("team-a", "worker-0", "uid-0", "node-a")
            assert caplog.messages == []
            apiserver.reply("POST", f"{POD}/binding", 201, BOUND)
            writer.bind("team-a", "worker-0", "uid-0", "node-a")
        assert caplog.messages == [
            f"POST {POD}/binding left after this replica's lease lapsed (the process was paused "
            "between the lease check and the send): another replica may have led when it arrived"
        ]
        assert len(apiserver.requests("POST")) == 2
        apiserver.reply("GET", POD, 200, {"kind": "Pod"})
        assert api.request("GET", POD) == {"kind": "Pod"}
        assert next(leading, "reads ask nothing") == "reads ask nothing"
    finally:
        api.close()


def test_the_clients_own_retries_are_off(kubeconfig: Path) -> None:
    client = build_api_client(str(kubeconfig), pool_maxsize=1)
    try:
        assert client.configuration.retries is False
        assert client.configuration.client_go_retries is False
        retries = client.rest_client.pool_manager.connection_pool_kw["retries"]
        assert retries is False or retries.total is False
    finally:
        client.close()


@pytest.mark.timeout(10)
def test_an_unreachable_server_fails_once_per_call_without_urllib3_retrying(
    tmp_path: Path, clock: FixedClock, caplog: pytest.LogCaptureFixture
) -> None:
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
    outage = Outage(clock)
    api = KubeApi(
        build_api_client(str(path), pool_maxsize=1),
        TokenBucket(0, 0, clock=clock),
        connect_timeout=1.0,
        outage=outage,
    )
    try:
        with caplog.at_level(logging.DEBUG):
            for _ in range(3):
                with pytest.raises(UnreachableError) as caught:
                    api.request("GET", "/api/v1/nodes")
                assert not caught.value.maybe_applied  # the connection was never made
    finally:
        api.close()
    assert [r for r in caplog.records if "Retrying" in r.getMessage()] == []
    assert outage.ongoing
    assert [r.levelno for r in caplog.records if r.name == "vscheduler.kube.outage"] == [
        logging.INFO
    ]


def test_an_outage_is_one_info_line_when_it_begins_and_one_warning_with_its_duration_when_it_ends(
    clock: FixedClock, caplog: pytest.LogCaptureFixture
) -> None:
    outage = Outage(clock, "the API server at https://10.0.0.1:6443")
    with caplog.at_level(logging.INFO, logger="vscheduler.kube.outage"):
        assert outage.answered() is None
        for _ in range(250):
            outage.failed(UnreachableError("connection refused"))
            clock.advance(0.15)
        assert outage.answered() == pytest.approx(37.5)
        assert outage.answered() is None
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "INFO",
            "the API server at https://10.0.0.1:6443 is unreachable (connection refused); calls "
            "are retried with backoff, and one warning follows when it answers again",
        ),
        (
            "WARNING",
            "the API server at https://10.0.0.1:6443 was unreachable for 37.5s (250 calls "
            "failed; the first with: connection refused)",
        ),
    ]


@pytest.mark.timeout(10)
def test_any_answer_even_an_error_status_ends_an_outage(
    apiserver: FakeApiServer, kubeconfig: Path, clock: FixedClock
) -> None:
    outage = Outage(clock)
    api = KubeApi(
        build_api_client(str(kubeconfig), pool_maxsize=1),
        TokenBucket(0, 0, clock=clock),
        outage=outage,
    )
    try:
        outage.failed(UnreachableError("connection refused"))
        apiserver.reply("GET", POD, 503, apiserver.status(503, "ServiceUnavailable"))
        with pytest.raises(Exception, match="503"):
            api.request("GET", POD)
        assert not outage.ongoing
    finally:
        api.close()
