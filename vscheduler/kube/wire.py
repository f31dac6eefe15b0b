"""Keep-alive HTTP/1.1 for requests whose answers are read whole: every write and every
single-object read (`KubeApi.request`). Lists and watches, read as streams, stay on urllib3.

Why: a bind and its Event are two small requests per pod. Through urllib3 and http.client each
cost about 1.5 ms of CPU in this process (header objects, the email-module header parser, the
response wrapper's layers), a bare socket 0.4 ms; with thousands of pods a minute that was the
largest share of the scheduler's CPU, and it is spent under the GIL the cycles need.

The connections are still made by urllib3 (`connect` below: the ApiClient's pool makes each
one, so the kubeconfig's TLS settings, CA, client certificate, `tls-server-name` and hostname
check all apply exactly as for the streamed requests); this module only writes the request and
reads the answer on the socket it got. A client that goes through a proxy gets no wire (its
requests keep to urllib3).

A connection is used by one request at a time, or by one pipeline (`pipeline`: several
requests written in one `sendall`, their answers read in order; the Events of binds go so):
taken from the idle list (or made), given back when its answers were read whole and the server
keeps it open. The server may close an idle
connection at any moment: a request on a reused connection that gets no byte of answer (the
send fails, or the answer is an immediate end of stream) is sent once more on a new connection,
as Go's transport does for a connection the server closed while idle. Any other failure after
the request was sent is an `UnreachableError` with `maybe_applied` (the write may have been
committed); a connection that cannot be made is one without it.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from vscheduler.errors import UnreachableError

MAX_LINE = 65536
"""The longest status or header line read (http.client's limit)."""
MAX_HEADERS = 100


class Answer(NamedTuple):
    """An HTTP answer read whole."""

    status: int
    reason: str
    headers: dict[str, str]
    """Lower-cased names; a repeated header's values joined with ", "."""
    body: bytes


Request = tuple[str, str, dict[str, str], bytes | None]
"""One request of a pipeline: method, target (a path with its query), headers, body."""


class _NoAnswerError(Exception):
    """The connection ended before the first byte of an answer."""


class _Connection:
    __slots__ = ("closer", "reader", "sock")

    def __init__(self, sock: socket.socket, closer: Callable[[], None]) -> None:
        self.sock = sock
        self.reader = sock.makefile("rb", buffering=65536)
        self.closer = closer

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.reader.close()
        with contextlib.suppress(Exception):
            self.closer()


Connect = Callable[[float], tuple[socket.socket, Callable[[], None]]]
"""Makes a connection within a timeout: its socket, and how to close it."""


class Wire:
    """Keep-alive connections to one server; `request` sends one request and reads its answer."""

    def __init__(self, base: str, connect: Connect, *, max_idle: int) -> None:
        parts = urllib.parse.urlsplit(base)
        self._host = parts.netloc.rpartition("@")[2]
        self._prefix = parts.path.rstrip("/")
        self._connect = connect
        self._max_idle = max(1, max_idle)
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def request(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes | None,
        *,
        timeout: tuple[float, float],
        before_send: Callable[[], None] = lambda: None,
        after_send: Callable[[], None] = lambda: None,
    ) -> Answer:
        """Send `method target` (a path with its query) and read the answer whole.

        `before_send` is called right before the bytes go to the socket (each time, when the
        request is sent again on a new connection); what it raises propagates, nothing sent.
        Nothing but handing the connection back from `_ready` and the `sendall` itself runs
        between its return and the bytes leaving (the socket's timeout is set before it), so a
        pause of the process that lands between the two is as unlikely as we can make it.
        `after_send` is called right after they left."""
        data = self._encode(method, target, headers, body)
        where = f" ({target.partition('?')[0]})"
        for fresh_only in (False, True):
            conn, reused = self._ready(timeout, fresh_only, where, before_send)
            try:
                try:
                    conn.sock.sendall(data)
                except _CLOSED as exc:  # the server cannot have read the whole request
                    raise _NoAnswerError(_describe(exc)) from exc
                after_send()
                answer, keep = _read_answer(conn.reader, head=method == "HEAD")
            except (_NoAnswerError, OSError) as exc:
                conn.close()
                if reused and not fresh_only and isinstance(exc, _NoAnswerError):
                    continue  # the server had closed it: once more on a new connection
                raise UnreachableError(
                    f"connection failed{where}: {_describe(exc)}", maybe_applied=True
                ) from exc
            except ValueError as exc:  # a malformed answer: the stream cannot be trusted
                conn.close()
                raise UnreachableError(
                    f"malformed answer{where}: {exc}", maybe_applied=True
                ) from exc
            except BaseException:
                conn.close()
                raise
            self._give(conn, keep=keep)
            return answer
        raise AssertionError("unreachable")  # pragma: no cover

    def pipeline(
        self,
        requests: Sequence[Request],
        *,
        timeout: tuple[float, float],
        before_send: Callable[[], None] = lambda: None,
        after_send: Callable[[], None] = lambda: None,
    ) -> list[Answer | UnreachableError]:
        """Send `requests` (method, target, headers, body) one after another on one connection
        in one `sendall` (HTTP/1.1 pipelining: the server answers them in order) and read the
        answers in turn; one result per request, in order: its `Answer`, or an
        `UnreachableError` (`maybe_applied`) for each that got none because the connection
        failed or the server closed it after an earlier answer. A reused connection that gets
        no byte of any answer is replaced and the whole batch sent once more, as `request`
        does. `before_send` and `after_send` are called once, around the one `sendall`; what
        `before_send` raises propagates, nothing sent."""
        if not requests:
            return []
        data = b"".join(self._encode(*request) for request in requests)
        where = f" ({requests[0][1].partition('?')[0]}, {len(requests)} pipelined)"
        for fresh_only in (False, True):
            answers: list[Answer | UnreachableError] = []
            keep = True
            conn, reused = self._ready(timeout, fresh_only, where, before_send)
            try:
                try:
                    conn.sock.sendall(data)
                except _CLOSED as exc:
                    raise _NoAnswerError(_describe(exc)) from exc
                after_send()
                for method, *_ in requests:
                    if not keep:
                        break
                    answer, keep = _read_answer(conn.reader, head=method == "HEAD")
                    answers.append(answer)
            except (_NoAnswerError, OSError, ValueError) as exc:
                conn.close()
                if not answers and reused and not fresh_only and isinstance(exc, _NoAnswerError):
                    continue  # the server had closed it: the batch once more on a new one
                failed = UnreachableError(
                    f"connection failed{where}: {_describe(exc)}", maybe_applied=True
                )
                return [*answers, *[failed] * (len(requests) - len(answers))]
            except BaseException:
                conn.close()
                raise
            if len(answers) < len(requests):  # the server closed after an earlier answer
                conn.close()
                closed = UnreachableError(
                    f"the server closed the connection after {len(answers)} answers{where}",
                    maybe_applied=True,
                )
                return [*answers, *[closed] * (len(requests) - len(answers))]
            self._give(conn, keep=keep)
            return answers
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        """Close the idle connections; those in use are closed when given back."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    # --- connections --------------------------------------------------------------------------
    def _ready(
        self,
        timeout: tuple[float, float],
        fresh_only: bool,
        where: str,
        before_send: Callable[[], None],
    ) -> tuple[_Connection, bool]:
        """A connection (and whether it was reused) with the read timeout set and
        `before_send` asked; what that raises propagates, the connection given back."""
        conn, reused = self._take(timeout[0], fresh_only=fresh_only, where=where)
        sock = conn.sock
        try:
            if sock.gettimeout() != timeout[1]:  # setting it releases the GIL: only a change
                sock.settimeout(timeout[1])
            before_send()
        except BaseException:
            self._give(conn, keep=True)
            raise
        return conn, reused

    def _take(self, timeout: float, *, fresh_only: bool, where: str) -> tuple[_Connection, bool]:
        if not fresh_only:
            with self._lock:
                if self._idle:
                    return self._idle.pop(), True
        try:
            sock, closer = self._connect(timeout)
        except UnreachableError:
            raise
        except Exception as exc:
            raise UnreachableError(
                f"connection failed{where}: {_describe(exc)}", maybe_applied=False
            ) from exc
        return _Connection(sock, closer), False

    def _give(self, conn: _Connection, *, keep: bool) -> None:
        if keep:
            with self._lock:
                if not self._closed and len(self._idle) < self._max_idle:
                    self._idle.append(conn)
                    return
        conn.close()

    def _encode(
        self, method: str, target: str, headers: dict[str, str], body: bytes | None
    ) -> bytes:
        if any(c in target for c in "\r\n ") or not target.startswith("/"):
            raise ValueError(f"not a request target: {target!r}")
        lines = [f"{method} {self._prefix}{target} HTTP/1.1", f"Host: {self._host}"]
        for name, value in headers.items():
            if "\r" in value or "\n" in value:
                raise ValueError(f"header {name} holds a line break")
            lines.append(f"{name}: {value}")
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return head + body if body else head


_CLOSED = (BrokenPipeError, ConnectionResetError, ssl.SSLEOFError, ssl.SSLZeroReturnError)
"""What sending on, or reading from, a connection the server has closed raises."""


def _read_answer(reader: Any, *, head: bool) -> tuple[Answer, bool]:
    """The answer on `reader`, and whether the connection may carry another request."""
    try:
        line = reader.readline(MAX_LINE + 1)
    except _CLOSED as exc:
        raise _NoAnswerError(_describe(exc)) from exc
    if not line:
        raise _NoAnswerError("the server closed the connection before answering")
    version, _, rest = line.rstrip(b"\r\n").partition(b" ")
    code, _, reason = rest.partition(b" ")
    if not version.startswith(b"HTTP/") or len(code) != 3 or not code.isdigit():
        raise ValueError(f"not an HTTP status line: {line[:80]!r}")
    status = int(code)
    headers = _read_headers(reader)
    keep = version == b"HTTP/1.1" and "close" not in headers.get("connection", "").lower()
    if head or status in (204, 304) or 100 <= status < 200:
        body = b""
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        body = _read_chunked(reader)
    elif "content-length" in headers:
        length = int(headers["content-length"])
        body = reader.read(length) if length else b""
        if len(body) != length:
            raise ConnectionError(f"answer cut short: {len(body)} of {length} bytes")
    else:  # the body runs to the end of the stream
        body = reader.read()
        keep = False
    return Answer(status, reason.decode("latin-1"), headers, body), keep


def _read_headers(reader: Any) -> dict[str, str]:
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        line = reader.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise ValueError("header line too long")
        if line in (b"\r\n", b"\n"):
            return headers
        if not line.endswith(b"\n"):
            raise ConnectionError("the connection ended inside the answer's headers")
        name, colon, value = line.decode("latin-1").partition(":")
        if not colon:
            raise ValueError(f"malformed header line: {line[:80]!r}")
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    raise ValueError(f"more than {MAX_HEADERS} headers")


def _read_chunked(reader: Any) -> bytes:
    parts: list[bytes] = []
    while True:
        line = reader.readline(MAX_LINE + 1)
        if not line:
            raise ConnectionError("the connection ended inside a chunked answer")
        size = int(line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            break
        chunk = reader.read(size)
        if len(chunk) != size or reader.read(2) != b"\r\n":
            raise ConnectionError("a chunk of the answer was cut short")
        parts.append(chunk)
    while True:  # trailers, up to the empty line
        line = reader.readline(MAX_LINE + 1)
        if line in (b"\r\n", b"\n", b""):
            return b"".join(parts)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def urllib3_connector(pool: Any) -> Connect:
    """Connections made by urllib3 connection pool `pool` (its TLS settings and checks)."""

    def connect(timeout: float) -> tuple[socket.socket, Callable[[], None]]:
        conn = pool._new_conn()  # the pool's own recipe for a connection
        conn.timeout = timeout
        conn.connect()
        sock = conn.sock
        if sock is None:
            raise ConnectionError("urllib3 made no socket")
        return sock, conn.close

    return connect
