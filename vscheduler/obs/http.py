"""ObsServer: `/metrics`, `/healthz`, `/livez` and `/readyz` over HTTP, in a daemon thread.

`/metrics` renders the injected CollectorRegistry in Prometheus' text format, without
prometheus_client's `<name>_created` series (`WithoutCreated`); `/healthz` and
`/livez` (kube components' name for it since 1.16) answer 200 "ok" while `is_healthy()` holds,
500 otherwise; `/readyz` answers 200 "ok" while `is_ready()` says so, 503 with its reason
("informers not synced", "not leading") otherwise. As kube components do, `?verbose` lists the
checks (`[+]ping ok`, then `livez check passed`, or `[-]scheduler failed: <reason>` and `livez
check failed`), and `/livez/ping` (`/healthz/ping`, `/readyz/ping`) answers 200 "ok" while the
server serves at all. Anything else is 404. A probe that raises counts as a failed probe, never
as a crash. An address that cannot be bound is a `ListenError` naming it.

This module owns the HTTP plumbing only: what "healthy" and "ready" mean belongs to the caller.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Final, cast

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from vscheduler.errors import VSchedulerError

logger = logging.getLogger(__name__)

Health = Callable[[], bool]
Readiness = Callable[[], tuple[bool, str]]
_TEXT = "text/plain; charset=utf-8"
_POLL = 0.5
"""Seconds between the serving loop's checks for a shutdown request (the standard library's
default): each check wakes the thread, and 0.05 s made it ~20 wakeups a second of an idle
scheduler (`python -m bench.idle`); a shutdown waits at most this long for the loop."""
_MAX_PORT = 65535


class ListenError(VSchedulerError):
    """The address could not be bound (in use, not local, not permitted)."""


def parse_address(address: str) -> tuple[str, int]:
    """`host:port` (`:port` and `[v6]:port` too) as a `(host, port)` pair."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isascii() or not port.isdigit():
        raise ValueError(f"listen address {address!r}: expected host:port")
    if int(port) > _MAX_PORT:
        raise ValueError(f"listen address {address!r}: port {int(port)} is above {_MAX_PORT}")
    host = host.strip("[]")
    return host or "0.0.0.0", int(port)


class _Server(ThreadingHTTPServer):
    """The HTTP server, carrying what the handler answers with."""

    daemon_threads = True
    block_on_close = False

    def __init__(
        self,
        address: tuple[str, int],
        *,
        registry: CollectorRegistry,
        is_healthy: Health,
        is_ready: Readiness,
    ) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.registry, self.is_healthy, self.is_ready = registry, is_healthy, is_ready
        super().__init__(address, _Handler)

    def liveness(self) -> tuple[bool, str]:
        """`is_healthy()` as a probe result."""
        return self.is_healthy(), "unhealthy"


_CREATED_TYPES: Final = frozenset({"counter", "histogram", "summary", "gaugehistogram"})


class WithoutCreated(Collector):
    """A registry's metrics without prometheus_client's `<name>_created` series, as /metrics
    serves them. Filtering here leaves prometheus_client's process-wide switch
    (`disable_created_metrics`) alone."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        """Every metric of the registry, its `_created` samples left out."""
        for metric in self._registry.collect():
            if metric.type in _CREATED_TYPES:
                created = metric.name + "_created"
                metric.samples = [s for s in metric.samples if s.name != created]
            yield metric


class _Handler(BaseHTTPRequestHandler):
    """Routes one GET."""

    server_version = "vscheduler"

    def do_GET(self) -> None:
        """Serve one of the paths; of the query string only `verbose` counts."""
        server = cast(_Server, self.server)
        path, _, query = self.path.partition("?")
        verbose = "verbose" in {part.partition("=")[0] for part in query.split("&")}
        if path == "/metrics":
            self._reply(200, generate_latest(WithoutCreated(server.registry)), CONTENT_TYPE_LATEST)
        elif path in ("/healthz", "/livez"):
            self._probe_reply(path[1:], server.liveness, failure=500, verbose=verbose)
        elif path == "/readyz":
            self._probe_reply("readyz", server.is_ready, failure=503, verbose=verbose)
        elif path in ("/healthz/ping", "/livez/ping", "/readyz/ping"):
            self._reply(200, b"ok", _TEXT)
        else:
            self._reply(404, b"not found", _TEXT)

    def _probe_reply(self, name: str, check: Readiness, *, failure: int, verbose: bool) -> None:
        ok, reason = _probe(check)
        if not verbose:
            self._reply(200 if ok else failure, b"ok" if ok else reason.encode(), _TEXT)
        elif ok:
            self._reply(200, f"[+]ping ok\n{name} check passed\n".encode(), _TEXT)
        else:
            body = f"[+]ping ok\n[-]scheduler failed: {reason}\n{name} check failed\n"
            self._reply(failure, body.encode(), _TEXT)

    def _reply(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Requests go to the debug log, not to stderr."""
        logger.debug("%s " + format, self.address_string(), *args)


def _probe(check: Readiness) -> tuple[bool, str]:
    try:
        ok, reason = check()
    except Exception as exc:
        logger.exception("probe failed")
        return False, f"probe failed: {type(exc).__name__}: {exc}"
    return ok, reason or "not ready"


class ObsServer:
    """Serves the observability endpoints from a named daemon thread."""

    def __init__(
        self,
        address: str,
        *,
        registry: CollectorRegistry,
        is_healthy: Health,
        is_ready: Readiness,
    ) -> None:
        self._address = parse_address(address)
        self._registry, self._is_healthy, self._is_ready = registry, is_healthy, is_ready
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> int:
        """Bind and serve; the bound port (port 0 picks a free one)."""
        if self._server is not None:
            raise RuntimeError("ObsServer already started")
        try:
            server = _Server(
                self._address,
                registry=self._registry,
                is_healthy=self._is_healthy,
                is_ready=self._is_ready,
            )
        except (OSError, OverflowError) as exc:
            host, wanted = self._address
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ListenError(f"cannot listen on {host}:{wanted}: {reason}") from None
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": _POLL},
            name="obs-http",
            daemon=True,
        )
        self._thread.start()
        port: int = server.server_address[1]
        logger.info("serving /metrics, /healthz, /livez, /readyz on %s:%d", self._address[0], port)
        return port

    def stop(self, timeout: float = 1.0) -> None:
        """Stop serving and close the socket, within `timeout` seconds; idempotent."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None or thread is None:
            return
        server.shutdown()
        server.server_close()
        thread.join(timeout)
