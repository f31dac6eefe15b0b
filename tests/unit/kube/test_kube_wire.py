"""The keep-alive wire: one connection carries request after request; answers are read whole
(a length, chunks, or to the end of the stream); a connection the server closed while idle is
replaced and the request sent once more; any other failure after sending is maybe applied and
never sent twice; nothing leaves when the check before sending refuses."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from typing import IO

import pytest

from vscheduler.errors import FencedError, UnreachableError
from vscheduler.kube.wire import Answer, Wire

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


class Script:
    """A raw TCP server: each accepted connection reads requests and answers each with the next
    of `answers` for that connection (a callable gets the socket and does what it likes)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.requests: list[bytes] = []
        self.answers: list[list[bytes | Callable[[socket.socket], None]]] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                script = (
                    self.answers[self.connections] if self.connections < len(self.answers) else []
                )
                self.connections += 1
            threading.Thread(target=self._talk, args=(sock, script), daemon=True).start()

    def _talk(
        self, sock: socket.socket, script: list[bytes | Callable[[socket.socket], None]]
    ) -> None:
        reader = sock.makefile("rb")
        with sock:
            for answer in script:
                request = _read_request(reader)
                if request is None:
                    return
                with self.lock:
                    self.requests.append(request)
                if callable(answer):
                    answer(sock)
                else:
                    sock.sendall(answer)
            reader.read()  # until the client closes

    def close(self) -> None:
        self.listener.close()


def _read_request(reader: IO[bytes]) -> bytes | None:
    lines = []
    length = 0
    while True:
        line = reader.readline()
        if not line:
            return None
        lines.append(line)
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
        if line == b"\r\n":
            break
    return b"".join(lines) + (reader.read(length) if length else b"")


@pytest.fixture
def server() -> Iterator[Script]:
    script = Script()
    yield script
    script.close()


def wire_to(server: Script, port: int | None = None) -> Wire:
    def connect(timeout: float) -> tuple[socket.socket, Callable[[], None]]:
        sock = socket.create_connection(("127.0.0.1", port or server.port), timeout=timeout)
        return sock, sock.close

    return Wire(f"http://127.0.0.1:{port or server.port}/prefix/", connect, max_idle=2)


def get(wire: Wire, target: str = "/api/v1/nodes") -> Answer:
    return wire.request("GET", target, {"Accept": "application/json"}, None, timeout=(1, 1))


@pytest.mark.timeout(10)
def test_one_connection_carries_request_after_request_with_the_servers_prefix_and_host(
    server: Script,
) -> None:
    server.answers = [[OK, OK, OK]]
    wire = wire_to(server)
    try:
        for _ in range(3):
            answer = wire.request("POST", "/api/v1/x?a=b", {"X": "y"}, b'{"k": 1}', timeout=(1, 1))
            assert (answer.status, answer.reason, answer.body) == (200, "OK", b"{}")
            assert answer.headers["content-type"] == "application/json"
    finally:
        wire.close()
    assert server.connections == 1
    first = server.requests[0].decode()
    assert first.startswith("POST /prefix/api/v1/x?a=b HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{server.port}\r\n" in first
    assert "Content-Length: 8\r\n" in first
    assert first.endswith('\r\n\r\n{"k": 1}')


@pytest.mark.timeout(10)
def test_chunked_answers_are_joined_and_the_connection_kept(server: Script) -> None:
    chunked = (
        b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'3;ext=1\r\n{"a\r\n5\r\n": 1}\r\n0\r\nTrailer: x\r\n\r\n'
    )
    server.answers = [[chunked, OK]]
    wire = wire_to(server)
    try:
        assert get(wire).body == b'{"a": 1}'
        assert get(wire).body == b"{}"
    finally:
        wire.close()
    assert server.connections == 1


def _to_the_end(sock: socket.socket) -> None:
    sock.sendall(b'HTTP/1.1 200 OK\r\n\r\n{"all": ')
    sock.sendall(b"true}")
    sock.shutdown(socket.SHUT_WR)


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("answer", "body"),
    [
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", b"{}"),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", b"{}"),
        (_to_the_end, b'{"all": true}'),  # no length: the body runs to the end of the stream
    ],
)
def test_a_connection_the_server_will_close_is_read_whole_and_not_used_again(
    server: Script, answer: bytes | Callable[[socket.socket], None], body: bytes
) -> None:
    server.answers = [[answer], [OK]]
    wire = wire_to(server)
    try:
        assert get(wire).body == body
        assert get(wire).body == b"{}"
    finally:
        wire.close()
    assert server.connections == 2


@pytest.mark.timeout(10)
def test_a_connection_the_server_closed_while_idle_is_replaced_and_the_request_sent_again(
    server: Script,
) -> None:
    def close_unanswered(sock: socket.socket) -> None:
        sock.shutdown(socket.SHUT_RDWR)

    # the first connection answers once, then the server closes it on the next request unread
    server.answers = [[OK, close_unanswered], [OK]]
    wire = wire_to(server)
    try:
        get(wire)
        answer = wire.request("POST", "/api/v1/b", {}, b"{}", timeout=(1, 1))
        assert answer.status == 200
    finally:
        wire.close()
    assert server.connections == 2
    assert [r.split(b" ", 1)[0] for r in server.requests] == [b"GET", b"POST", b"POST"]


@pytest.mark.timeout(10)
def test_a_fresh_connection_closed_unanswered_is_maybe_applied_and_not_sent_again(
    server: Script,
) -> None:
    server.answers = [[lambda sock: sock.shutdown(socket.SHUT_RDWR)]]
    wire = wire_to(server)
    try:
        with pytest.raises(UnreachableError, match="closed the connection") as caught:
            wire.request("POST", "/api/v1/b", {}, b"{}", timeout=(1, 1))
    finally:
        wire.close()
    assert caught.value.maybe_applied
    assert len(server.requests) == 1


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", "cut short"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{}", "cut short"),
        (b"HTTP/1.1 200 OK\r\nContent-Ty", "inside the answer's headers"),
        (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP status line"),
    ],
)
def test_an_answer_cut_short_or_garbled_is_maybe_applied_and_never_sent_again(
    server: Script, answer: bytes, message: str
) -> None:
    def cut(sock: socket.socket) -> None:
        sock.sendall(answer)
        sock.shutdown(socket.SHUT_RDWR)

    server.answers = [[OK, cut], [OK]]
    wire = wire_to(server)
    try:
        get(wire)
        with pytest.raises(UnreachableError, match=message) as caught:
            wire.request("PATCH", "/api/v1/b", {}, b"{}", timeout=(1, 1))
        assert caught.value.maybe_applied
        assert get(wire).status == 200  # a new connection
    finally:
        wire.close()
    assert [r.split(b" ", 1)[0] for r in server.requests] == [b"GET", b"PATCH", b"GET"]


@pytest.mark.timeout(10)
def test_an_answer_that_does_not_come_in_time_is_maybe_applied_and_not_sent_again(
    server: Script,
) -> None:
    release = threading.Event()

    def hang(sock: socket.socket) -> None:
        release.wait(5)

    server.answers = [[OK, hang]]
    wire = wire_to(server)
    try:
        get(wire)
        with pytest.raises(UnreachableError, match="timed out") as caught:
            wire.request("POST", "/api/v1/b", {}, b"{}", timeout=(1, 0.2))
        assert caught.value.maybe_applied
    finally:
        release.set()
        wire.close()
    assert len(server.requests) == 2


@pytest.mark.timeout(10)
def test_each_request_waits_as_long_as_its_own_read_timeout_on_a_reused_connection(
    server: Script,
) -> None:
    def late(sock: socket.socket) -> None:
        threading.Event().wait(0.6)
        sock.sendall(OK)

    server.answers = [[OK, late, OK]]
    wire = wire_to(server)
    try:
        wire.request("GET", "/api/v1/a", {}, None, timeout=(0.3, 0.2))
        answer = wire.request("GET", "/api/v1/b", {}, None, timeout=(0.3, 3))  # answered at 0.6 s
        again = wire.request("GET", "/api/v1/c", {}, None, timeout=(0.3, 3))
    finally:
        wire.close()
    assert (answer.status, again.status, server.connections) == (200, 200, 1)


def test_a_server_that_cannot_be_reached_was_surely_not_sent_anything() -> None:
    spare = socket.create_server(("127.0.0.1", 0))
    port = spare.getsockname()[1]
    spare.close()  # nothing listens there now
    wire = wire_to(Script.__new__(Script), port)
    with pytest.raises(UnreachableError, match="connection failed") as caught:
        get(wire)
    assert not caught.value.maybe_applied


@pytest.mark.timeout(10)
def test_a_refusal_before_sending_sends_nothing_and_keeps_the_connection(server: Script) -> None:
    server.answers = [[OK, OK]]
    wire = wire_to(server)

    def refuse() -> None:
        raise FencedError("write not sent: this replica no longer leads")

    try:
        get(wire)
        with pytest.raises(FencedError):
            wire.request("POST", "/api/v1/b", {}, b"{}", timeout=(1, 1), before_send=refuse)
        get(wire)
    finally:
        wire.close()
    assert server.connections == 1
    assert [r.split(b" ", 1)[0] for r in server.requests] == [b"GET", b"GET"]


@pytest.mark.parametrize(
    ("target", "headers"),
    [("/a b", {}), ("/a\r\nX: y", {}), ("a", {}), ("/a", {"X": "1\r\nEvil: 2"})],
)
def test_a_request_that_would_split_its_head_is_refused_before_anything_is_made(
    target: str, headers: dict[str, str]
) -> None:
    def never(timeout: float) -> tuple[socket.socket, Callable[[], None]]:
        raise AssertionError("no connection may be made")

    wire = Wire("http://127.0.0.1:1", never, max_idle=1)
    with pytest.raises(ValueError, match=r"not a request target|line break"):
        wire.request("GET", target, headers, None, timeout=(1, 1))


# --- pipelining -----------------------------------------------------------------------------------
def _posts(count: int) -> list[tuple[str, str, dict[str, str], bytes | None]]:
    return [("POST", f"/api/v1/e{i}", {}, b'{"n": %d}' % i) for i in range(count)]


@pytest.mark.timeout(10)
def test_a_pipeline_writes_its_requests_at_once_and_reads_their_answers_in_order(
    server: Script,
) -> None:
    created = [
        b"HTTP/1.1 201 Created\r\nContent-Length: %d\r\n\r\n%s" % (len(b), b)
        for b in (b'{"i": 0}', b'{"i": 1}', b'{"i": 2}')
    ]
    server.answers = [[*created, OK]]
    wire = wire_to(server)
    checks: list[str] = []
    try:
        answers = wire.pipeline(
            _posts(3),
            timeout=(1, 1),
            before_send=lambda: checks.append("before"),
            after_send=lambda: checks.append("after"),
        )
        assert get(wire).status == 200  # the connection is kept for what follows
    finally:
        wire.close()
    assert [a.body for a in answers if isinstance(a, Answer)] == [
        b'{"i": 0}',
        b'{"i": 1}',
        b'{"i": 2}',
    ]
    assert checks == ["before", "after"]  # once for the batch, around its one sendall
    assert server.connections == 1
    assert [r.split(b" ", 2)[1] for r in server.requests] == [
        b"/prefix/api/v1/e0",
        b"/prefix/api/v1/e1",
        b"/prefix/api/v1/e2",
        b"/prefix/api/v1/nodes",
    ]


@pytest.mark.timeout(10)
def test_requests_a_closing_server_left_unanswered_are_maybe_applied_and_not_sent_again(
    server: Script,
) -> None:
    closing = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"
    server.answers = [[closing]]
    wire = wire_to(server)
    try:
        first, *rest = wire.pipeline(_posts(3), timeout=(1, 1))
    finally:
        wire.close()
    assert isinstance(first, Answer)
    assert first.status == 200
    assert len(rest) == 2
    for failed in rest:
        assert isinstance(failed, UnreachableError)
        assert failed.maybe_applied
        assert "after 1 answers" in str(failed)
    assert server.connections == 1


@pytest.mark.timeout(10)
def test_a_pipeline_cut_after_some_answers_is_maybe_applied_for_the_rest(server: Script) -> None:
    server.answers = [[OK, lambda sock: sock.shutdown(socket.SHUT_RDWR)]]
    wire = wire_to(server)
    try:
        answers = wire.pipeline(_posts(3), timeout=(1, 1))
    finally:
        wire.close()
    assert isinstance(answers[0], Answer)
    assert all(isinstance(a, UnreachableError) and a.maybe_applied for a in answers[1:])
    assert server.connections == 1  # never sent again


@pytest.mark.timeout(10)
def test_a_pipeline_on_a_connection_closed_while_idle_goes_once_more_on_a_new_one(
    server: Script,
) -> None:
    server.answers = [[OK, lambda sock: sock.shutdown(socket.SHUT_RDWR)], [OK, OK]]
    wire = wire_to(server)
    try:
        get(wire)
        answers = wire.pipeline(_posts(2), timeout=(1, 1))
    finally:
        wire.close()
    assert all(isinstance(a, Answer) and a.status == 200 for a in answers)
    assert server.connections == 2


@pytest.mark.timeout(10)
def test_a_refused_pipeline_sends_nothing(server: Script) -> None:
    server.answers = [[OK]]
    wire = wire_to(server)

    def refuse() -> None:
        raise FencedError("no longer leading")

    try:
        with pytest.raises(FencedError):
            wire.pipeline(_posts(2), timeout=(1, 1), before_send=refuse)
        assert wire.pipeline([], timeout=(1, 1)) == []
        assert get(wire).status == 200
    finally:
        wire.close()
    assert [r.split(b" ", 1)[0] for r in server.requests] == [b"GET"]
