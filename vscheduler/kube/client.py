"""The connection to the API server: an ApiClient from a kubeconfig or the in-cluster service
account, and `KubeApi`, the one door every request of `vscheduler.kube` goes through.

`KubeApi` takes a rate-limiter token (see `ratelimit.TokenBucket`). A request whose answer is
read whole (`request`: every write, every single-object read, list pages) goes on the keep-alive
`wire.Wire`, over connections made by the ApiClient's own pool (its TLS settings, CA, client
certificate and hostname check), with the client's default headers and bearer token; a client
behind a proxy has no wire and uses the path below. A streamed request (`open`: watches) is sent
through the ApiClient's connection pool without preloading the answer (so the client's TLS
settings, client certificate, proxy, default headers and bearer token, refreshed through its
hook, all apply, but its generated `call_api` and model classes are never run), reads raw JSON,
and turns every failure into a `vscheduler.errors.ClusterError` (see `kube.errors`). The
kubernetes client's majors 31 to 36 and the regenerated 37 are both spoken (`KubeApi._send`);
the client's own retries (37's `client_go_retries` too) never run.

The connection pool is sized for the bind workers plus one connection per open watch and a few
for status, event and lease writes; urllib3 would otherwise open and discard a connection per
request beyond its default of 4. urllib3's own retries are off (`Configuration.retries =
False`): the effects' `retry` rules are the only retry policy, so an outage is not retried
twice over (nor logged by urllib3's "Retrying" warnings); `outage.Outage` reports it once.

Fencing: a write (any method but GET) asks `fence` after the rate limiter's wait and again right
before its bytes are handed to the socket (on the wire, before its one `sendall`, once for a
pipeline of writes, `request_many`; on urllib3, before each chunk: the connection classes of the
pool are wrapped for that), so a replica frozen
between queueing and sending sends nothing once its lease deadline passed. `fence` may also
raise `errors.NotSentError` itself (the effects' check that the decision still holds): it
propagates unchanged, and nothing of the request reaches the server (a request cut after its
headers is discarded with its connection).

What no client can fence: a pause of the whole process (SIGSTOP, a frozen VM, a long GC stop)
that lands after the last check and before the socket takes the bytes; they leave when it
resumes, maybe after a standby took the lease. The API server takes no fencing token for a
Binding, and kube-scheduler has the same window (it checks no lease per write at all). On the
wire nothing but the `sendall` runs after the check, and `still_leading` is asked right after
the bytes left: a write that left after the lease lapsed is logged as a warning naming it.

Read-only: a `KubeApi` made with `read_only=True` (`run --dry-run` and the live-cluster tools)
refuses every method but GET with `errors.ReadOnlyError` before the rate limiter or the socket
is reached: nothing a caller does, through any writer, can change the cluster.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import math
import os
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import urllib3
import urllib3.connection
import urllib3.connectionpool
import yaml
from kubernetes import client as k8s_client, config as k8s_config
from kubernetes.client.exceptions import ApiException

from vscheduler.clock import Clock
from vscheduler.errors import (
    ClusterError,
    FencedError,
    NotSentError,
    ReadOnlyError,
    TransientClusterError,
    UnreachableError,
)
from vscheduler.informer.kinds import CLUSTER_KINDS
from vscheduler.kube import jsondecode
from vscheduler.kube.errors import from_answer, translate
from vscheduler.kube.outage import Outage
from vscheduler.kube.ratelimit import DEFAULT_BURST, DEFAULT_QPS, TokenBucket
from vscheduler.kube.wire import Answer, Wire, urllib3_connector

logger = logging.getLogger(__name__)

Query = Sequence[tuple[str, str]]
Body = Mapping[str, object] | bytes | None
"""A request's body: a mapping (sent as JSON) or bytes (sent as they are)."""
JSON = "application/json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
MERGE_PATCH = "application/merge-patch+json"
USER_AGENT = "vscheduler"

_WATCHES = len(CLUSTER_KINDS) + 2
"""Watches open at once: every cluster kind, the policy ConfigMap and the reservation ConfigMap."""
_SPARE = 4
"""Connections for pod conditions, PodGroup status, Events and the Lease."""


@dataclasses.dataclass(frozen=True, slots=True)
class ClientSettings:
    """How to reach the API server (the `vscheduler run` flags)."""

    kubeconfig: str | None = None
    """A kubeconfig file; None: in-cluster when KUBERNETES_SERVICE_HOST is set, else the default."""
    context: str | None = None
    qps: float = DEFAULT_QPS
    burst: int = DEFAULT_BURST
    bind_workers: int = 16
    connect_timeout: float = 10.0
    request_timeout: float = 30.0
    """Read timeout of a non-watch request, in seconds."""
    user_agent: str = "vscheduler"
    """The User-Agent header: `vscheduler (<identity>)` from `run`, so the API server's audit
    log tells replicas apart."""


def pool_size(bind_workers: int, *, watches: int = _WATCHES) -> int:
    """Connections to keep: one per bind worker, one per open watch, and a few spare."""
    return max(1, bind_workers) + watches + _SPARE


def load_configuration(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> Any:
    """A `kubernetes.client.Configuration`: from `kubeconfig` if given; else in-cluster when
    KUBERNETES_SERVICE_HOST is set; else the default kubeconfig ($KUBECONFIG, ~/.kube/config)."""
    env = os.environ if environ is None else environ
    configuration = k8s_client.Configuration()
    try:
        if kubeconfig is None and env.get("KUBERNETES_SERVICE_HOST"):
            k8s_config.load_incluster_config(client_configuration=configuration)
        else:
            k8s_config.load_kube_config(
                config_file=kubeconfig,
                context=context,
                client_configuration=configuration,
                persist_config=False,
            )
    except (
        k8s_config.ConfigException,
        OSError,
        ValueError,
        yaml.YAMLError,
        TypeError,
        AttributeError,
        KeyError,
    ) as exc:  # a malformed kubeconfig reaches the client's loader as any of these
        source = kubeconfig or "the in-cluster service account or the default kubeconfig"
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ClusterError(f"cannot load the client configuration from {source}: {reason}") from exc
    return configuration


def build_api_client(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    pool_maxsize: int,
    environ: Mapping[str, str] | None = None,
    user_agent: str = USER_AGENT,
) -> Any:
    """A `kubernetes.client.ApiClient` whose connection pool holds `pool_maxsize` connections."""
    configuration = load_configuration(kubeconfig, context, environ=environ)
    configuration.connection_pool_maxsize = pool_maxsize
    configuration.retries = False  # ours are the only retries (effects.retry)
    configuration.client_go_retries = False  # 37's GET retries on Retry-After: ours too
    hook = getattr(configuration, "refresh_api_key_hook", None)
    if hook is not None:
        configuration.refresh_api_key_hook = throttled(hook, REFRESH_PERIOD)
    api_client = k8s_client.ApiClient(configuration)
    api_client.user_agent = user_agent
    return api_client


REFRESH_PERIOD = 1.0
"""Seconds between two runs of the client's credential refresh hook."""


def throttled(
    hook: Callable[[Any], None],
    period: float,
    monotonic: Callable[[], float] = time.monotonic,
) -> Callable[[Any], None]:
    """`hook`, run at most once per `period` seconds (the other calls return at once).

    The kubeconfig loader's refresh hook runs before every request: it checks the token's
    expiry (refreshing 5 minutes early) and then copies the whole loaded configuration into the
    client's again, each time looking the proxy settings up in the environment. That was about
    a millisecond of CPU per request, two thirds of a bind's cost in the client; once a second
    is as good for a token that is refreshed minutes before it expires. The copy installs the
    loader's hook on the configuration again: the hook it installed is the one run from then
    on, and this one is put back in its place."""
    lock = threading.Lock()
    last = [-math.inf]
    inner = [hook]

    def run(configuration: Any) -> None:
        now = monotonic()
        with lock:
            if now - last[0] < period:
                return
            last[0] = now
        inner[0](configuration)
        installed = getattr(configuration, "refresh_api_key_hook", run)
        if installed is not run and callable(installed):
            inner[0] = installed
            configuration.refresh_api_key_hook = run

    return run


class KubeApi:
    """Rate-limited raw-JSON requests over one ApiClient; failures raise ClusterError."""

    def __init__(
        self,
        api_client: Any,
        limiter: TokenBucket,
        *,
        connect_timeout: float = 10.0,
        request_timeout: float = 30.0,
        fence: Callable[[], bool] | None = None,
        still_leading: Callable[[], bool] | None = None,
        outage: Outage | None = None,
        read_only: bool = False,
    ) -> None:
        self._client = api_client
        self.read_only = read_only
        """Every write is refused with ReadOnlyError before it is sent."""
        self._limiter = limiter
        self._fence = fence
        """Asked after the rate limiter's wait and right before each chunk of a write leaves:
        False refuses it with FencedError, so a replica that lost its lease sends nothing more."""
        self._still_leading = still_leading
        """Asked right after a write's bytes left (on the wire): False means the lease lapsed
        between the fence and the send (a pause of the process landed there), logged."""
        self._connect_timeout = connect_timeout
        self._request_timeout = request_timeout
        self.outage = outage
        """Told how every request ended (no answer / an answer): reports outages once."""
        self._writing = threading.local()
        if fence is not None:
            _guard_sends(api_client, self._guard_send)
        self._wire = wire_for(api_client)
        """Keep-alive connections for `request` (None through a proxy: urllib3 then)."""

    @property
    def api_client(self) -> Any:
        """The underlying `kubernetes.client.ApiClient`."""
        return self._client

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: Body = None,
        content_type: str = JSON,
        accept: str = JSON,
    ) -> dict[str, Any]:
        """One request; the decoded JSON answer (empty for an empty body). `body` is a mapping
        sent as JSON, or bytes sent as they are (with their `content_type`: `kube.protobuf`'s).
        An `accept` other than JSON asks for an answer the caller does not read (a protobuf
        object): its 2xx answer comes back as `{}`; a failure's Status is read in any form."""
        if self._wire is not None:
            return self._request_on_wire(
                self._wire, method, path, query, body, content_type, accept
            )
        response = self.open(
            method, path, query=query, body=body, content_type=content_type, accept=accept
        )
        try:
            data = response.read()
        except Exception as exc:
            response.close()
            raise self._failed(translate(exc, path=path)) from exc
        response.release_conn()
        return _decoded(data, path) if accept == JSON else {}

    def _request_on_wire(
        self,
        wire: Wire,
        method: str,
        path: str,
        query: Query,
        body: Body,
        content_type: str,
        accept: str,
    ) -> dict[str, Any]:
        write = self._admit(method, path)
        try:
            answer = wire.request(
                method,
                _target(path, query),
                self._headers(content_type, accept),
                _encoded(body),
                timeout=(self._connect_timeout, self._request_timeout),
                before_send=self._guard if write else _nothing,
                after_send=functools.partial(self._sent, method, path) if write else _nothing,
            )
        except NotSentError:
            raise
        except Exception as exc:
            raise self._failed(translate(exc, path=path)) from exc
        return self._answered(answer, path, accept)

    def _answered(self, answer: Answer, path: str, accept: str) -> dict[str, Any]:
        """A wire answer's decoded body (`{}` when `accept` is not JSON); a status other than
        2xx raises its error."""
        if self.outage is not None:
            self.outage.answered()
        if not 200 <= answer.status <= 299:
            raise from_answer(
                answer.status,
                answer.reason,
                answer.body,
                retry_after=answer.headers.get("retry-after"),
                path=path,
            )
        return _decoded(answer.body, path) if accept == JSON else {}

    def request_many(
        self,
        method: str,
        requests: Sequence[tuple[str, Body]],
        *,
        content_type: str = JSON,
        accept: str = JSON,
    ) -> list[dict[str, Any] | ClusterError]:
        """`request` for each (path, body), all written at once on one connection (HTTP/1.1
        pipelining, `Wire.pipeline`) where the client has its wire, else one after another;
        each request's decoded answer or its error, in order (nothing raises but what refuses
        the whole batch before a byte leaves: a read-only client, the fence). A token of the
        rate limiter is taken per request and no request waits for another's: the first waits
        for its token, those whose tokens are there already go with it, the rest follow as
        theirs come (at a low QPS one by one, as `request` would send them). The fence is
        asked right before each part leaves; a later part it refuses answers its requests with
        a `TransientClusterError` naming the refusal (nothing of it left)."""
        if self._wire is None:
            return self._one_by_one(method, requests, content_type, accept)
        out: list[dict[str, Any] | ClusterError] = []
        while len(out) < len(requests):
            start = len(out)
            try:
                write = self._admit(method, requests[start][0])
                end = start + 1 + self._limiter.take(len(requests) - start - 1)
                part = self._pipelined(method, requests[start:end], write, content_type, accept)
            except NotSentError as err:
                if not out:
                    raise
                refused = TransientClusterError(f"not sent: {err}", maybe_applied=False)
                return [*out, *[refused] * (len(requests) - start)]
            out.extend(part)
        return out

    def _pipelined(
        self,
        method: str,
        requests: Sequence[tuple[str, Body]],
        write: bool,
        content_type: str,
        accept: str,
    ) -> list[dict[str, Any] | ClusterError]:
        """`requests`, their tokens taken, written at once on one connection."""
        assert self._wire is not None
        first = requests[0][0]
        headers = self._headers(content_type, accept)
        try:
            answers = self._wire.pipeline(
                [(method, _target(path, ()), headers, _encoded(body)) for path, body in requests],
                timeout=(self._connect_timeout, self._request_timeout),
                before_send=self._guard if write else _nothing,
                after_send=functools.partial(self._sent, method, first) if write else _nothing,
            )
        except NotSentError:
            raise
        except Exception as exc:
            return [self._failed(translate(exc, path=first))] * len(requests)
        out: list[dict[str, Any] | ClusterError] = []
        for (path, _), answer in zip(requests, answers, strict=True):
            if isinstance(answer, UnreachableError):
                out.append(self._failed(answer))
                continue
            try:
                out.append(self._answered(answer, path, accept))
            except ClusterError as exc:
                out.append(exc)
        return out

    def _one_by_one(
        self, method: str, requests: Sequence[tuple[str, Body]], content_type: str, accept: str
    ) -> list[dict[str, Any] | ClusterError]:
        """`request_many` without a wire (a client behind a proxy): each request in turn."""
        results: list[dict[str, Any] | ClusterError] = []
        for path, body in requests:
            try:
                results.append(
                    self.request(method, path, body=body, content_type=content_type, accept=accept)
                )
            except NotSentError:
                raise
            except ClusterError as exc:
                results.append(exc)
        return results

    def _admit(self, method: str, path: str) -> bool:
        """Refuse a write of a read-only client, take a rate-limiter token, and ask the fence
        of a write; whether it is a write."""
        write = method != "GET"
        if write and self.read_only:
            raise ReadOnlyError(f"{method} {path} not sent: this client is read-only")
        self._limiter.acquire()
        if write:
            self._guard()
        return write

    def _headers(self, content_type: str, accept: str = JSON) -> dict[str, str]:
        """The client's default headers (User-Agent), ours, and its bearer token if it has one
        (read through the configuration's throttled refresh hook)."""
        headers = {**self._client.default_headers, "Accept": accept, "Content-Type": content_type}
        bearer = self._client.configuration.auth_settings().get("BearerToken")
        if bearer and bearer.get("value"):
            headers[bearer.get("key") or "authorization"] = bearer["value"]
        return headers

    def open(
        self,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: Body = None,
        content_type: str = JSON,
        read_timeout: float | None = None,
        accept: str = JSON,
    ) -> urllib3.HTTPResponse:
        """Send a request and return the unread response (the caller reads and closes it)."""
        write = self._admit(method, path)
        timeout = (self._connect_timeout, read_timeout or self._request_timeout)
        self._writing.path = path if write else ""
        try:
            response = self._send(
                method,
                path,
                query=list(query),
                headers={"Accept": accept, "Content-Type": content_type},
                body=body,
                timeout=timeout,
            )
        except NotSentError:
            raise
        except Exception as exc:
            error = translate(exc, path=path)
            if error.status is not None and self.outage is not None:
                self.outage.answered()
            raise self._failed(error) from exc
        finally:
            self._writing.path = ""
        if self.outage is not None:
            self.outage.answered()
        if not isinstance(response, urllib3.HTTPResponse):
            raise ClusterError(f"unexpected response type from {path}: {type(response).__name__}")
        return response

    def _send(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]],
        headers: dict[str, str],
        body: Body,
        timeout: tuple[float, float],
    ) -> object:
        """One request, the unread urllib3 response back; a status other than 2xx raises
        `ApiException` (with its body and headers).

        Sent straight through the ApiClient's own connection pool (its TLS settings, client
        certificate and proxy), with the client's default headers and its bearer token (the
        configuration's `auth_settings`, through the throttled refresh hook): the generated
        `call_api` serialised every body again, walked every parameter and copied headers on
        top, about a quarter of a bind's CPU in this process. The client's majors up to 36 and
        the regenerated 37 both hold `rest_client.pool_manager`, `configuration.host`,
        `configuration.auth_settings()` and `default_headers`."""
        configuration = self._client.configuration
        url = configuration.host + _target(path, query)
        sent = {**self._headers(headers["Content-Type"]), **headers}
        response = self._client.rest_client.pool_manager.request(
            method,
            url,
            body=_encoded(body),
            headers=sent,
            preload_content=False,
            timeout=urllib3.Timeout(connect=timeout[0], read=timeout[1]),
            retries=False,
            redirect=False,
        )
        if not 200 <= response.status <= 299:
            failed = ApiException(status=response.status, reason=response.reason)
            failed.body = response.data
            failed.headers = response.headers
            response.release_conn()
            raise failed
        return response

    def _guard(self) -> None:
        """Raise if the write about to be sent must not leave (see the module docstring)."""
        if self._fence is not None and not self._fence():
            raise FencedError("write not sent: this replica no longer leads")

    def _sent(self, method: str, path: str) -> None:
        """Warn when a write left after this replica's lease lapsed: the process was paused
        between the fence's check and the send (no client can close that window; the API
        server takes no fencing token), and a standby may have led when it arrived."""
        if self._still_leading is not None and not self._still_leading():
            logger.warning(
                "%s %s left after this replica's lease lapsed (the process was paused between "
                "the lease check and the send): another replica may have led when it arrived",
                method,
                path,
            )

    def _guard_send(self) -> None:
        """The connection's hook, before each chunk: only a write of this thread is asked."""
        if getattr(self._writing, "path", ""):
            self._guard()

    def _failed(self, error: ClusterError) -> ClusterError:
        if isinstance(error, UnreachableError) and self.outage is not None:
            self.outage.failed(error)
        return error

    def close(self) -> None:
        """Drop pooled connections."""
        if self._wire is not None:
            self._wire.close()
        self._client.rest_client.pool_manager.clear()
        self._client.close()


def connect(
    settings: ClientSettings,
    *,
    clock: Clock,
    fence: Callable[[], bool] | None = None,
    still_leading: Callable[[], bool] | None = None,
    outage: Outage | None = None,
    read_only: bool = False,
) -> KubeApi:
    """The composition root's entry: an ApiClient for `settings`, behind a token bucket, its
    writes fenced by `fence` when given (refused altogether when `read_only`) and a write that
    left after the lease lapsed (`still_leading` False right after it) logged, its outages
    reported through `outage`."""
    api_client = build_api_client(
        settings.kubeconfig,
        settings.context,
        pool_maxsize=pool_size(settings.bind_workers),
        user_agent=settings.user_agent,
    )
    limiter = TokenBucket(settings.qps, settings.burst, clock=clock)
    return KubeApi(
        api_client,
        limiter,
        connect_timeout=settings.connect_timeout,
        request_timeout=settings.request_timeout,
        fence=fence,
        still_leading=still_leading,
        outage=outage,
        read_only=read_only,
    )


def wire_for(api_client: Any) -> Wire | None:
    """Keep-alive connections to `api_client`'s server, made by its own urllib3 pool and as
    many kept idle as the pool keeps; None when its requests go through a proxy (or its pool is
    not urllib3's plain PoolManager)."""
    manager = getattr(getattr(api_client, "rest_client", None), "pool_manager", None)
    if type(manager) is not urllib3.PoolManager:
        return None
    size = manager.connection_pool_kw.get("maxsize")
    host = api_client.configuration.host
    return Wire(
        host,
        urllib3_connector(manager.connection_from_url(host)),
        max_idle=size if isinstance(size, int) and size > 0 else pool_size(16),
    )


def _target(path: str, query: Query) -> str:
    """`path` with its query string."""
    return path + ("?" + urllib.parse.urlencode(query) if query else "")


def _nothing() -> None:
    pass


def _encoded(body: Body) -> bytes | None:
    """A request's bytes: a mapping as JSON, bytes as they are."""
    if body is None or isinstance(body, bytes):
        return body
    return json.dumps(body).encode()


def _decoded(data: bytes, path: str) -> dict[str, Any]:
    """The JSON object an answer from `path` carries (empty for an empty body)."""
    if not data:
        return {}
    try:
        doc = jsondecode.loads(data)
    except ValueError as exc:
        raise translate(exc, path=path) from exc
    if not isinstance(doc, dict):
        raise ClusterError(f"expected a JSON object from {path}, got {type(doc).__name__}")
    return doc


def _guard_sends(api_client: Any, guard: Callable[[], None]) -> None:
    """Make every connection of `api_client`'s pool call `guard()` right before each chunk of a
    request goes to its socket (pools are made lazily, so before the first request)."""

    class GuardedHTTP(urllib3.connection.HTTPConnection):
        def send(self, data: Any) -> None:
            guard()
            super().send(data)

    class GuardedHTTPS(urllib3.connection.HTTPSConnection):
        def send(self, data: Any) -> None:
            guard()
            super().send(data)

    class GuardedHTTPPool(urllib3.connectionpool.HTTPConnectionPool):
        ConnectionCls = GuardedHTTP

    class GuardedHTTPSPool(urllib3.connectionpool.HTTPSConnectionPool):
        ConnectionCls = GuardedHTTPS

    manager = api_client.rest_client.pool_manager
    manager.pool_classes_by_scheme = {"http": GuardedHTTPPool, "https": GuardedHTTPSPool}
