"""Translate what the kubernetes client and urllib3 raise into `vscheduler.errors.ClusterError`s.

The one place that knows HTTP statuses: 429, 5xx, 408, connection resets and timeouts are
transient (retry with backoff); 409 is a conflict and 404 a vanished object (drop the decision,
let the watch resync); 410 is an expired resourceVersion (list again). A failure without an HTTP
answer is an `UnreachableError` (an outage); it says whether the request may have reached the
server (`maybe_applied`: the connection broke or timed out after sending) or surely did not (the
connection could not be made), as does a 500 or 504 (the write may have been committed).
A refused eviction (any 429 on `pods/{name}/eviction`, or a Status carrying the
`DisruptionBudget` cause) is a `DisruptionBudgetError`: the victim is skipped, never retried in
a loop; it carries the wait the API server asked for (a `Retry-After` header, else the Status's
`details.retryAfterSeconds`).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping

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
from vscheduler.kube import protobuf

_DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
"""`policyv1.DisruptionBudgetCause`: the cause type the API server puts on a PDB refusal."""


def translate(exc: BaseException, *, path: str = "") -> ClusterError:
    """The ClusterError for `exc`, raised by a call to `path` (which tells evictions apart)."""
    if isinstance(exc, ClusterError):
        return exc
    where = f" ({path})" if path else ""
    if isinstance(exc, ApiException):
        status = int(exc.status or 0)
        if status == 0:  # the client's wrapping of a TLS failure: no HTTP answer either
            return UnreachableError(f"request failed{where}: {exc.reason}", maybe_applied=True)
        return from_status(
            status,
            _decode_status(exc.body),
            path=path,
            reason=str(exc.reason),
            retry_after=_retry_after_header(exc.headers),
        )
    if isinstance(exc, urllib3.exceptions.HTTPError | OSError):
        return unreachable(exc, where)
    if isinstance(exc, ValueError):
        return TransientClusterError(f"malformed response{where}: {exc}")
    return ClusterError(f"unexpected client failure{where}: {exc!r}")


def from_status(
    code: int,
    status: Mapping[str, object],
    *,
    path: str = "",
    reason: str = "",
    retry_after: float | None = None,
) -> ClusterError:
    """The ClusterError for HTTP status `code` and the decoded Status body (may be empty);
    `retry_after` is the response's `Retry-After` header, in seconds, if it had one."""
    words = (str(code), str(status.get("reason") or reason or ""), f"({path})" if path else "")
    message = str(status.get("message") or "")
    text = " ".join(word for word in words if word) + (f": {message}" if message else "")
    if _is_eviction(path) and (code == 429 or _has_budget_cause(status)):
        wait = retry_after if retry_after is not None else _retry_after_seconds(status)
        return DisruptionBudgetError(text, status=code, retry_after=wait)
    if code == 410:
        return ExpiredError(text, status=code)
    if code == 409:
        return ConflictError(text, status=code)
    if code == 404:
        return NotFoundError(text, status=code)
    if code in (408, 429) or code >= 500:
        return TransientClusterError(text, status=code, maybe_applied=code in (500, 504))
    return ClusterError(text, status=code)


def unreachable(exc: BaseException, where: str = "") -> UnreachableError:
    """No HTTP answer: a connection that could not be made (nothing was sent), or one that
    broke or timed out once the request may have been sent (`maybe_applied`)."""
    cause: BaseException = exc
    if isinstance(cause, urllib3.exceptions.MaxRetryError) and cause.reason is not None:
        cause = cause.reason
    unsent = isinstance(
        cause, urllib3.exceptions.ConnectTimeoutError | ConnectionRefusedError | socket.gaierror
    )
    return UnreachableError(f"connection failed{where}: {cause!r}", maybe_applied=not unsent)


def status_error(status: object, *, path: str = "") -> ClusterError:
    """The ClusterError for a watch stream's ERROR event carrying `status` (a metav1.Status)."""
    doc = status if isinstance(status, Mapping) else {}
    code = doc.get("code")
    if not isinstance(code, int):
        return TransientClusterError(f"watch error without a status code ({path}): {status!r}")
    return from_status(code, doc, path=path)


def _decode_status(body: object) -> Mapping[str, object]:
    """A failure's Status as a mapping: JSON, or protobuf (asked for by a write that sends
    protobuf, `kube.protobuf`); other text as its message."""
    if isinstance(body, bytes | bytearray) and body.startswith(protobuf.MAGIC):
        try:
            return protobuf.decode_object(bytes(body))
        except ValueError:
            return {"message": "(an unreadable protobuf Status)"}
    if isinstance(body, bytes | bytearray):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body:
        return {}
    try:
        doc = json.loads(body)
    except ValueError:
        return {"message": body[:500]}
    return doc if isinstance(doc, dict) else {}


def from_answer(
    code: int, reason: str, body: bytes, *, retry_after: str | None, path: str = ""
) -> ClusterError:
    """The ClusterError for an answer read whole with a status other than 2xx: its body (a
    Status, usually) and its `Retry-After` header's value, if any."""
    return from_status(
        code,
        _decode_status(body),
        path=path,
        reason=reason,
        retry_after=_retry_after(retry_after),
    )


def _retry_after_header(headers: object) -> float | None:
    getter = getattr(headers, "get", None)  # urllib3's HTTPHeaderDict: case-insensitive
    return _retry_after(getter("Retry-After") if callable(getter) else None)


def _retry_after(value: object) -> float | None:
    """`Retry-After` in seconds (the API server sends whole seconds; an HTTP date is not read)."""
    try:
        seconds = float(str(value)) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 < seconds < float("inf") else None


def _retry_after_seconds(status: Mapping[str, object]) -> float | None:
    """A Status's `details.retryAfterSeconds`, when positive."""
    details = status.get("details")
    value = details.get("retryAfterSeconds") if isinstance(details, Mapping) else None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def _is_eviction(path: str) -> bool:
    return path.rstrip("/").endswith("/eviction")


def _has_budget_cause(status: Mapping[str, object]) -> bool:
    details = status.get("details")
    causes = details.get("causes") if isinstance(details, Mapping) else None
    if not isinstance(causes, list):
        return False
    return any(
        isinstance(cause, Mapping) and cause.get("type") == _DISRUPTION_BUDGET_CAUSE
        for cause in causes
    )
