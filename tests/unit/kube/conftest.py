"""A scripted API server on 127.0.0.1 (http.server in a thread) and a KubeApi pointed at it.

Scripts are queued per (method, path): `reply` (status + JSON body) or `stream` (a chunked watch
body whose parts are JSON lines, raw bytes, or `threading.Event`s to wait on). Every request is
recorded (method, path, query, headers, decoded body: JSON, or protobuf as `kube.protobuf`
reads it). Unscripted requests answer 404 with a Status body. pytest cannot import this module (import-mode=importlib), so tests reach everything
through the `apiserver` fixture and import `FakeApiServer` only for type checking.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import http.server
import json
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vscheduler.clock import FixedClock
from vscheduler.kube import protobuf
from vscheduler.kube.client import KubeApi, build_api_client
from vscheduler.kube.ratelimit import TokenBucket

NOW = dt.datetime(2024, 5, 1, 12, 0, 0, tzinfo=dt.UTC)


@dataclasses.dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Stream:
    parts: list[Any]
    """dicts become JSON lines; bytes go out as one chunk; an Event is waited on (5 s)."""
    hold: threading.Event | None = None
    """Keep the stream open (no end) until this is set."""
    content_type: str = "application/json"


@dataclasses.dataclass
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    peer: tuple[str, int] = ("", 0)
    """The client's address and port: one per connection."""


def _body(raw: bytes, content_type: str) -> Any:
    """A request's body as the mapping it was made from: JSON, or protobuf (Bindings, Events)."""
    if not raw:
        return None
    if content_type == protobuf.PROTOBUF:
        return protobuf.decode_object(raw)
    return json.loads(raw)


def status_body(code: int, reason: str, message: str = "", **extra: Any) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
        **extra,
    }


class FakeApiServer:
    def __init__(self) -> None:
        self.scripts: dict[tuple[str, str], collections.deque[Reply | Stream]] = (
            collections.defaultdict(collections.deque)
        )
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self.closing = threading.Event()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, args=(0.02,), name="fake-apiserver"
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def reply(
        self,
        method: str,
        path: str,
        status: int = 200,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer the next unanswered `method path` with `status`, `body` (JSON) and
        `headers`."""
        self._queue(method, path, Reply(status, body, dict(headers or {})))

    def stream(
        self,
        method: str,
        path: str,
        parts: list[Any],
        hold: threading.Event | None = None,
        content_type: str = "application/json",
    ) -> None:
        """Answer the next unanswered `method path` with a chunked stream of `parts`."""
        self._queue(method, path, Stream(parts, hold, content_type))

    status = staticmethod(status_body)

    def _queue(self, method: str, path: str, answer: Reply | Stream) -> None:
        with self.lock:
            self.scripts[(method, path)].append(answer)

    def requests(self, method: str | None = None) -> list[Received]:
        with self.lock:
            return [r for r in self.received if method is None or r.method == method]

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def next_answer(self, method: str, path: str) -> Reply | Stream:
        with self.lock:
            queue = self.scripts.get((method, path))
            if queue:
                return queue.popleft()
        return Reply(404, status_body(404, "NotFound", f"no script for {method} {path}"))

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"fake": self})


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves the scripts of `fake` (set on a subclass per server)."""

    fake: FakeApiServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        with self.fake.lock:
            self.fake.received.append(
                Received(
                    self.command,
                    url.path,
                    urllib.parse.parse_qs(url.query, keep_blank_values=True),
                    {k.lower(): v for k, v in self.headers.items()},
                    _body(raw, self.headers.get("Content-Type", "")),
                    (str(self.client_address[0]), int(self.client_address[1])),
                )
            )
        answer = self.fake.next_answer(self.command, url.path)
        if isinstance(answer, Reply):
            self._reply(answer)
        else:
            self._stream(answer)

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def _reply(self, reply: Reply) -> None:
        body = b"" if reply.body is None else json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, stream: Stream) -> None:
        self.send_response(200)
        self.send_header("Content-Type", stream.content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for part in stream.parts:
                if isinstance(part, threading.Event):
                    part.wait(5)
                    continue
                data = part if isinstance(part, bytes) else json.dumps(part).encode() + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            if stream.hold is not None:
                while not stream.hold.wait(0.05) and not self.fake.closing.is_set():
                    pass
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True


@pytest.fixture
def apiserver() -> Iterator[FakeApiServer]:
    server = FakeApiServer()
    server.start()
    yield server
    server.close()


@pytest.fixture
def kubeconfig(apiserver: FakeApiServer, tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        f"""\
apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {{server: "{apiserver.url}"}}
users:
- name: tester
  user: {{token: secret-token}}
contexts:
- name: fake
  context: {{cluster: fake, user: tester}}
current-context: fake
"""
    )
    return path


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(NOW)


@pytest.fixture
def api(kubeconfig: Path, clock: FixedClock) -> Iterator[KubeApi]:
    kube = KubeApi(
        build_api_client(str(kubeconfig), pool_maxsize=4),
        TokenBucket(0, 0, clock=clock),
        connect_timeout=5.0,
        request_timeout=5.0,
    )
    yield kube
    kube.close()
