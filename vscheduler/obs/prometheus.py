"""Prometheus' HTTP query API, as the node-usage collector uses it: one instant query, its vector.

Owns the request (`POST /api/v1/query`, form-encoded; a bearer token; TLS options turned into an
`ssl.SSLContext`), the failure vocabulary (`QueryError.reason`, the values of
`USAGE_FAILURE_REASONS`) and reading the answer's JSON into samples keyed by node name. Must not
keep state between queries, decide staleness or touch the cache (`vscheduler.obs.usage` does).
Proxies from the environment are not used (as Volcano's client, whose transport sets none).
"""

from __future__ import annotations

import dataclasses
import json
import math
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Final
from urllib.parse import urlencode

from vscheduler.conf.schema import MetricsConfig

QUERY_PATH: Final = "/api/v1/query"
_MESSAGE_LIMIT: Final = 300
"""At most this much of an error body goes into a log line."""


class QueryError(Exception):
    """A query (or getting ready for one) failed; `reason` is the metric label:

    - `connection`: refused, unreachable, DNS, reset;
    - `timeout`: no answer within `metrics.timeout`;
    - `tls`: a certificate did not verify, or a TLS file could not be loaded;
    - `credentials`: `bearerTokenFile` could not be read;
    - `http`: an HTTP error status without Prometheus' error JSON (a proxy, a 404, a 503);
    - `query`: Prometheus answered `status: error` (bad PromQL, a query timeout on its side);
    - `response`: not JSON, or not the instant-vector shape.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclasses.dataclass(frozen=True, slots=True)
class Sample:
    """One series of an instant vector, matched to a node."""

    node: str
    value: float
    timestamp: float
    """Unix seconds: the evaluation time Prometheus reports."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class QueryRequest:
    """Everything one HTTP query needs; the headers (which carry the token) stay out of repr."""

    url: str
    query: str
    timeout: float
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict, repr=False)
    context: ssl.SSLContext | None = None


Fetch = Callable[[QueryRequest], bytes]
"""Sends one query and returns the answer's body; raises `QueryError`."""


def query_url(address: str) -> str:
    """The instant-query endpoint under `address` (which may carry a path prefix)."""
    return address.rstrip("/") + QUERY_PATH


def ssl_context(config: MetricsConfig) -> ssl.SSLContext | None:
    """The TLS settings of `config` for an https address (None for http): `tls.caFile` replaces
    the system's trust store, `tls.certFile`/`tls.keyFile` present a client certificate, and
    `tls.insecureSkipVerify` turns verification off. Raises `QueryError("tls")` when a file
    cannot be loaded."""
    if not config.address.lower().startswith("https://"):
        return None
    try:
        context = ssl.create_default_context(cafile=config.tls_ca_file or None)
        if config.tls_cert_file:
            context.load_cert_chain(config.tls_cert_file, config.tls_key_file or None)
    except (OSError, ssl.SSLError) as exc:
        raise QueryError("tls", f"cannot load the TLS files of the metrics block: {exc}") from exc
    if config.tls_insecure_skip_verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def read_text_file(path: str) -> str:
    """A file's text (the default way to read `bearerTokenFile`)."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def auth_headers(config: MetricsConfig, read_text: Callable[[str], str]) -> dict[str, str]:
    """The Authorization header, if a token is configured; `bearerTokenFile` is read now, so a
    rotated token is picked up at the next collection. Raises `QueryError("credentials")`."""
    token = config.bearer_token
    if config.bearer_token_file:
        try:
            token = read_text(config.bearer_token_file).strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise QueryError(
                "credentials", f"cannot read bearerTokenFile {config.bearer_token_file}: {exc}"
            ) from exc
        if not token:
            raise QueryError("credentials", f"bearerTokenFile {config.bearer_token_file} is empty")
    return {"Authorization": f"Bearer {token}"} if token else {}


def urllib_fetch(request: QueryRequest) -> bytes:
    """POST the query with the standard library; every failure becomes `QueryError`."""
    http = urllib.request.Request(
        request.url,
        data=urlencode({"query": request.query}).encode(),
        headers={
            **request.headers,
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        },
        method="POST",
    )
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=request.context)
    )
    try:
        with opener.open(http, timeout=request.timeout) as answer:
            body: bytes = answer.read()
            return body
    except urllib.error.HTTPError as exc:
        raise _http_failure(exc.code, _read_quietly(exc)) from exc
    except urllib.error.URLError as exc:
        raise _network_failure(exc.reason) from exc
    except OSError as exc:  # TimeoutError, ssl.SSLError and resets while reading the body
        raise _network_failure(exc) from exc
    except ValueError as exc:  # http.client.InvalidURL and kin: an address it cannot use
        raise QueryError("connection", f"cannot use the address: {exc}") from exc


def _read_quietly(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read()
    except OSError:
        return b""
    finally:
        exc.close()


def _http_failure(status: int, body: bytes) -> QueryError:
    """An error status: Prometheus' own error JSON (400 bad_data, 422 execution, 503 timeout)
    is a `query` failure; anything else is `http`."""
    try:
        document = json.loads(body)
    except ValueError:
        document = None
    if isinstance(document, dict) and document.get("status") == "error":
        return QueryError("query", f"HTTP {status}: {_prometheus_error(document)}")
    text = body.decode("utf-8", "replace").strip()[:_MESSAGE_LIMIT]
    return QueryError("http", f"HTTP {status}" + (f": {text}" if text else ""))


def _network_failure(cause: object) -> QueryError:
    if isinstance(cause, TimeoutError):
        return QueryError("timeout", f"no answer in time ({cause})")
    if isinstance(cause, ssl.SSLError | ssl.CertificateError):
        return QueryError("tls", f"TLS: {cause}")
    return QueryError("connection", f"cannot reach Prometheus: {cause}")


def _prometheus_error(document: Mapping[str, object]) -> str:
    kind = document.get("errorType", "error")
    message = str(document.get("error", ""))[:_MESSAGE_LIMIT]
    return f"{kind}: {message}"


def node_name(value: str) -> str:
    """A node name from a label value: the port of `host:9100` or `[::1]:9100` is stripped; a
    bare IPv6 address (`fe80::1`) is kept whole."""
    if value.startswith("["):
        end = value.find("]")
        rest = value[end + 1 :]
        if end > 1 and (not rest or (rest[0] == ":" and rest[1:].isdigit())):
            return value[1:end]
        return value
    host, colon, port = value.rpartition(":")
    if colon and host and port.isdigit() and ":" not in host:
        return host
    return value


def parse_vector(body: bytes, label: str) -> list[Sample]:
    """The samples of an instant-query answer, one per series carrying `label` (series without
    it, and NaN or infinite values, are left out). Raises `QueryError` for an answer that is
    not `status: success` with a vector."""
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise QueryError("response", f"the answer is not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise QueryError("response", "the answer is not a JSON object")
    if document.get("status") != "success":
        raise QueryError("query", _prometheus_error(document))
    data = document.get("data")
    kind = data.get("resultType") if isinstance(data, dict) else None
    if kind != "vector" or not isinstance(data, dict):
        raise QueryError(
            "response", f"expected an instant vector (one series per node), got {kind!r}"
        )
    result = data.get("result")
    if not isinstance(result, list):
        raise QueryError("response", "data.result is not a list")
    samples = []
    for index, series in enumerate(result):
        sample = _sample(series, index, label)
        if sample is not None:
            samples.append(sample)
    return samples


def _sample(series: object, index: int, label: str) -> Sample | None:
    where = f"data.result[{index}]"
    if not isinstance(series, dict) or not isinstance(series.get("metric"), dict):
        raise QueryError("response", f"{where} is not a series with 'metric'")
    point = series.get("value")
    if not isinstance(point, list) or len(point) != 2:
        raise QueryError("response", f"{where}.value is not [time, value]")
    try:
        timestamp, value = float(point[0]), float(point[1])
    except (TypeError, ValueError) as exc:
        raise QueryError("response", f"{where}.value is not numeric: {point!r}") from exc
    name = series["metric"].get(label)
    if not isinstance(name, str) or not name or not math.isfinite(value):
        return None
    return Sample(node=node_name(name), value=value, timestamp=timestamp)
