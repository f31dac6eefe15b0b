"""A scripted Prometheus on 127.0.0.1 (http.server in a thread), optionally over TLS, for tests of
the node-usage collector (and of anything else that queries Prometheus' HTTP API).

`FakePrometheus.respond` decides each answer from the query text (default: an empty vector;
`answer({...})` picks one by a piece of the query); every request is recorded (method, path,
headers, decoded form, the subject of the TLS client certificate). `vector(...)` builds the JSON
of an instant-vector answer. Test support only: it binds a local port until `close()`.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import ssl
import threading
import urllib.parse
from collections.abc import Callable
from typing import Any

Answer = tuple[int, bytes]
"""An HTTP status and a body."""


@dataclasses.dataclass
class Received:
    """One request as the fake Prometheus saw it."""

    method: str
    path: str
    headers: dict[str, str]
    form: dict[str, list[str]]
    peer_subject: object = None
    """The subject of the client certificate presented over TLS, if any."""


def vector(values: dict[str, float | str], at: float, *, label: str = "instance") -> bytes:
    """An instant-vector answer: one series per `{label: key}` with value `values[key]`,
    evaluated at Unix time `at`."""
    result = [{"metric": {label: key}, "value": [at, str(value)]} for key, value in values.items()]
    return json.dumps(
        {"status": "success", "data": {"resultType": "vector", "result": result}}
    ).encode()


def ok(body: bytes) -> Answer:
    """A 200 answer with `body`."""
    return 200, body


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    fake: FakePrometheus


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self._answer(urllib.parse.parse_qs(self.rfile.read(length).decode()))

    def do_GET(self) -> None:
        self._answer(urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query))

    def _answer(self, form: dict[str, list[str]]) -> None:
        fake = self.server.fake
        peer = None
        if isinstance(self.connection, ssl.SSLSocket):
            peer = (self.connection.getpeercert() or {}).get("subject")
        path = urllib.parse.urlsplit(self.path).path
        fake.received.append(Received(self.command, path, dict(self.headers), form, peer))
        if fake.hold is not None:
            fake.hold.wait(5.0)
        status, payload = fake.respond(form.get("query", [""])[0])
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


class FakePrometheus:
    """Answers `/api/v1/query` (POST form or GET) through `respond(query) -> (status, body)`."""

    vector = staticmethod(vector)
    ok = staticmethod(ok)

    def __init__(self, context: ssl.SSLContext | None = None) -> None:
        """Listen on a free port of 127.0.0.1; over TLS when `context` (a server context)."""
        self.received: list[Received] = []
        self.respond: Callable[[str], Answer] = lambda _query: ok(vector({}, 0.0))
        self.hold: threading.Event | None = None
        """When set to an Event, each request waits on it (at most 5 s) before answering."""
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.fake = self
        if context is not None:
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        scheme = "https" if context is not None else "http"
        self.address = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    def answer(self, by_metric: dict[str, Answer]) -> None:
        """Answer each query by the first key of `by_metric` found in its text."""

        def respond(query: str) -> Answer:
            for needle, answer in by_metric.items():
                if needle in query:
                    return answer
            raise AssertionError(f"unexpected query {query!r}")

        self.respond = respond

    def queries(self) -> list[str]:
        """The query of every request, in order."""
        return [r.form.get("query", [""])[0] for r in self.received]

    def close(self) -> None:
        """Release held requests, stop serving, free the port."""
        if self.hold is not None:
            self.hold.set()
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5.0)
