from __future__ import annotations

import json

import pytest
import urllib3
import urllib3.exceptions
from kubernetes.client.exceptions import ApiException

from vscheduler.errors import (
    ClusterError,
    ConflictError,
    DisruptionBudgetError,
    ExpiredError,
    NotFoundError,
    TransientClusterError,
    UnreachableError,
)
from vscheduler.kube.errors import status_error, translate

BIND = "/api/v1/namespaces/ns/pods/p/binding"
EVICT = "/api/v1/namespaces/ns/pods/p/eviction"
BUDGET = {"details": {"causes": [{"type": "DisruptionBudget", "message": "needs 2 healthy pods"}]}}


def api_exception(status: int, **body: object) -> ApiException:
    exc = ApiException(status=status, reason="Reason")
    exc.body = json.dumps({"kind": "Status", "code": status, **body}).encode()
    return exc


@pytest.mark.parametrize(
    ("status", "path", "body", "expected"),
    [
        (429, BIND, {}, TransientClusterError),
        (500, BIND, {}, TransientClusterError),
        (502, BIND, {}, TransientClusterError),
        (503, BIND, {}, TransientClusterError),
        (504, BIND, {}, TransientClusterError),
        (408, BIND, {}, TransientClusterError),
        (409, BIND, {}, ConflictError),
        (404, BIND, {}, NotFoundError),
        (410, "/api/v1/pods", {}, ExpiredError),
        (403, BIND, {}, ClusterError),
        (422, BIND, {}, ClusterError),
        (400, BIND, {}, ClusterError),
        (429, EVICT, {}, DisruptionBudgetError),
        (429, EVICT, BUDGET, DisruptionBudgetError),
        (403, EVICT, BUDGET, DisruptionBudgetError),
        (403, EVICT, {}, ClusterError),
        (404, EVICT, {}, NotFoundError),
        (500, EVICT, {}, TransientClusterError),
        (429, "/api/v1/namespaces/ns/pods/eviction-tester/binding", {}, TransientClusterError),
    ],
)
def test_http_statuses_translate_to_the_cluster_error_the_caller_acts_on(
    status: int, path: str, body: dict[str, object], expected: type[ClusterError]
) -> None:
    error = translate(api_exception(status, **body), path=path)
    assert type(error) is expected
    assert error.status == status


@pytest.mark.parametrize(
    "exc",
    [
        urllib3.exceptions.ProtocolError("Connection aborted.", ConnectionResetError(104, "reset")),
        urllib3.exceptions.ReadTimeoutError(None, "/api/v1/pods", "Read timed out."),  # type: ignore[arg-type]
        urllib3.exceptions.MaxRetryError(None, "/api/v1/pods"),  # type: ignore[arg-type]
        ConnectionResetError(104, "Connection reset by peer"),
        TimeoutError("timed out"),
        ApiException(status=0, reason="SSLError: EOF"),
    ],
)
def test_connection_failures_and_timeouts_are_an_unreachable_server_and_may_have_applied(
    exc: BaseException,
) -> None:
    error = translate(exc, path=BIND)
    assert type(error) is UnreachableError
    assert isinstance(error, TransientClusterError)
    assert error.maybe_applied


@pytest.mark.parametrize(
    "exc",
    [
        urllib3.exceptions.NewConnectionError(None, "Failed to establish a new connection"),  # type: ignore[arg-type]
        urllib3.exceptions.ConnectTimeoutError(None, "connect timed out"),
        ConnectionRefusedError(111, "Connection refused"),
        urllib3.exceptions.MaxRetryError(
            None,  # type: ignore[arg-type]
            "/api/v1/pods",
            urllib3.exceptions.NewConnectionError(None, "refused"),  # type: ignore[arg-type]
        ),
    ],
)
def test_a_connection_that_could_not_be_made_sent_nothing(exc: BaseException) -> None:
    error = translate(exc, path=BIND)
    assert type(error) is UnreachableError
    assert not error.maybe_applied
    assert str(error).startswith(f"connection failed ({BIND}): ")


@pytest.mark.parametrize(
    ("status", "applied"), [(500, True), (504, True), (503, False), (429, False)]
)
def test_a_500_or_504_may_have_applied_a_write_a_503_or_429_did_not(
    status: int, applied: bool
) -> None:
    error = translate(api_exception(status), path=BIND)
    assert type(error) is TransientClusterError
    assert error.maybe_applied is applied


def test_the_status_message_and_path_make_the_error_text() -> None:
    exc = api_exception(409, reason="Conflict", message="pod p is already assigned to node n")
    assert (
        str(translate(exc, path=BIND))
        == f"409 Conflict ({BIND}): pod p is already assigned to node n"
    )


def test_a_non_json_error_body_still_translates() -> None:
    exc = ApiException(status=503, reason="Service Unavailable")
    exc.body = b"<html>upstream down</html>"
    error = translate(exc)
    assert type(error) is TransientClusterError
    assert "upstream down" in str(error)


def test_a_cluster_error_passes_through_unchanged() -> None:
    original = ConflictError("already bound", status=409)
    assert translate(original) is original


def test_an_unexpected_exception_becomes_a_plain_cluster_error() -> None:
    error = translate(RuntimeError("bug"), path=BIND)
    assert type(error) is ClusterError
    assert "bug" in str(error)


def test_a_watch_error_event_translates_by_its_code() -> None:
    assert type(status_error({"kind": "Status", "code": 410, "reason": "Expired"})) is ExpiredError
    assert type(status_error({"kind": "Status", "code": 500})) is TransientClusterError
    assert type(status_error({"kind": "Status"})) is TransientClusterError
    assert type(status_error("garbage")) is TransientClusterError


def test_a_refused_eviction_carries_the_retry_after_header_in_seconds() -> None:
    exc = api_exception(429, **BUDGET)
    exc.headers = urllib3.HTTPHeaderDict({"retry-after": "10"})
    error = translate(exc, path=EVICT)
    assert isinstance(error, DisruptionBudgetError)
    assert error.retry_after == 10.0


def test_a_refused_eviction_without_the_header_reads_the_status_retry_after_seconds() -> None:
    details = {"retryAfterSeconds": 7, "causes": BUDGET["details"]["causes"]}
    error = translate(api_exception(429, details=details), path=EVICT)
    assert isinstance(error, DisruptionBudgetError)
    assert error.retry_after == 7.0


@pytest.mark.parametrize("header", [None, "0", "soon", "Wed, 21 Oct 2026 07:28:00 GMT"])
def test_a_refused_eviction_without_a_usable_wait_carries_none(header: str | None) -> None:
    exc = api_exception(429, details={"retryAfterSeconds": 0})
    exc.headers = urllib3.HTTPHeaderDict({"Retry-After": header} if header else {})
    error = translate(exc, path=EVICT)
    assert isinstance(error, DisruptionBudgetError)
    assert error.retry_after is None
