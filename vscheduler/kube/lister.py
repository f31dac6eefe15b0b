"""`KubeLister`: `informer.ports.Lister` against the API server, in raw JSON.

List: `GET {collection}?limit=N[&continue=token]` page by page (every page of one list shares
the first page's resourceVersion: the one to watch from). Each page's body is read as it
arrives (`kube.listbody.ListBody`): `list` returns once the first page's metadata is in, and
its items are decoded while the caller iterates them (the informer's sink converts each as it
comes), the next page asked for when one ends. Watch: `GET {collection}?watch=true
&allowWatchBookmarks=true&resourceVersion=RV&timeoutSeconds=T`, decoded line by line as the
chunks arrive. The pod watch asks for protobuf (`kube.protowatch`, `kube.protodecode`: the API
server then shares the encoding of each event with the controller-manager's watch, where JSON
was encoded for us alone) and reads its length-delimited frames; a server that answers JSON
anyway is read as JSON, and `protobuf_watch=False` asks JSON. Lists stay JSON (`kube.listbody`
reads them as they arrive). A 410 (as an HTTP status or as an ERROR event with code 410 in the
stream) raises `ExpiredError`; other failures raise the ClusterError that `kube.errors` chooses.

Stopping: a blocking socket read cannot be given a short timeout and then resumed (urllib3
closes the connection on a read timeout, and CPython's socket file refuses reads after one), so
each open watch has a small daemon thread that waits on `stop` and shuts the socket's read side
down (`HTTPResponse.shutdown`, urllib3 >= 2.3), which ends the blocked read at once. The read
timeout is only a dead-connection guard: `timeoutSeconds` plus a margin.

Gathering. A watch thread woken for each event pays more for the wakeup than for the event.
`python -m bench.watch_wakeups` (a real API server; pods created by another process at ~330 a
second; the watching thread's CPU, user and system, from `RUSAGE_THREAD`) printed 108-127 µs of
CPU an event read as each came; 96-114 µs with a pause of 10 ms after a read that waited, 83-91
µs with 20 ms, 49-52 µs with 50 ms (the pause's own end is a wakeup too, so a short one gains
little); and 22-31 µs an event when the same events came as one burst (read after the creating
was over: a quieter machine is part of that). So after a read that waited for the network
(longer than `_WAITED`, and no longer than the pause: events further apart would not be
gathered, and the pause would only add its own wakeup) the watch pauses `WATCH_GATHER` (20 ms)
before it reads on: the events that come meanwhile are read in one wakeup, and reads served from
what already came do not pause. The first event after a quiet spell is handed on at once; one
that follows it within the pause waits at most the pause. In `bench.compare` our CPU per 1,000
pods to the last bind was 0.67-0.91x kube-scheduler's in W1 and 0.74-1.02x in W3 over five pairs
each (0.88-0.90x and 1.00-1.25x in the three pairs before).

Why raw JSON. Listing N running pods (~3.3 kB of JSON each: one container with env, probe,
resources, a projected volume, four conditions, a container status) served in one page by a
local HTTP server; `CoreV1Api.list_pod_for_all_namespaces()` (model objects) against this
module's `list` (kubernetes 35.0.0, Python 3.11.7, 2 vCPU AMD EPYC):

    N         model objects    raw JSON (this module)    ratio
    1,000          2.43 s            0.04 s                ~60x
    5,000         14.05 s            0.30 s                ~47x
    50,000       161    s            7.2  s                ~22x

Decoding alone at 50,000 pods: `json.loads` 5.0 s; `json.loads` + `ApiClient.deserialize(...,
"V1PodList")` 154 s: ~3 ms a pod, 60 % of it the fresh `Configuration()` each of a pod's
~34 model objects builds.
The raw figure at 50k is mostly the cyclic garbage collector scanning the growing heap: with
the collector paused, `json.loads` takes 1.5 s (whole body or 500-item pages alike). This
module leaves that process-wide switch alone: the composition root pauses the collector until
the first lists are in, then freezes the heap (`app.FIRST_LISTS_GC_PAUSE`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

import urllib3

from vscheduler.errors import ClusterError, TransientClusterError
from vscheduler.informer.kinds import Kind
from vscheduler.informer.ports import EventType, Listing, Raw, WatchEvent
from vscheduler.kube import jsondecode, protowatch
from vscheduler.kube.client import JSON, KubeApi
from vscheduler.kube.errors import status_error, translate
from vscheduler.kube.listbody import ListBody
from vscheduler.kube.paths import collection_path
from vscheduler.kube.protobuf import PROTOBUF

logger = logging.getLogger(__name__)

DEFAULT_PAGE_SIZE = 500
"""client-go's page size."""
_EVENT_TYPES: frozenset[str] = frozenset({"ADDED", "MODIFIED", "DELETED", "BOOKMARK"})
_READ_SIZE = 64 * 1024
STOP_POLL = 5.0
"""Seconds between a watch's stop thread's checks that its stream ended (it then ends too): a stop
itself is noticed at once; each check is a wakeup (0.25 s made ~4 a second per watch, 8 watches,
in `python -m bench.idle`), so a finished watch's thread may linger this long."""
WATCH_GATHER = 0.02
"""Seconds a watch pauses, after an event it woke for, before it reads on (see `_gathered`)."""
_WAITED = 0.0005
"""A read that took longer waited for the network (one served from the buffers takes µs)."""
LIST_READ_SIZE = 256 * 1024
"""Bytes a list's body is read in (a read waits for them all, or the body's end): ~100 pods, so
the pod split across two reads, scanned twice, is a small part of each read."""


class KubeLister:
    """List and watch any Kind through one `KubeApi`."""

    def __init__(
        self,
        api: KubeApi,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        idle_margin: float = 30.0,
        stop_poll: float = STOP_POLL,
        list_read_size: int = LIST_READ_SIZE,
        gather: float = WATCH_GATHER,
        protobuf_watch: bool = True,
    ) -> None:
        self._api = api
        self._page_size = page_size
        self._list_read_size = list_read_size
        self._idle_margin = idle_margin
        self._stop_poll = stop_poll
        self._gather = gather
        self._protobuf_watch = protobuf_watch

    def list(self, kind: Kind, *, resource_version: str = "") -> Listing:
        """Every object of `kind`, page by page; items carry `kind` and `apiVersion`.
        `resource_version` goes with the first page only (a continue token carries it).

        The first page's fields before its items are read here (the resourceVersion to watch
        from: every page of one list shares it); the items are read as they arrive, while the
        caller iterates (a failure on the way raises from the iteration). Should the API server
        put the list's metadata after its items, every page is read before this returns."""
        path = collection_path(kind)
        pages = _Pages(
            self._page(path, kind, "", resource_version),
            lambda token: self._page(path, kind, token, ""),
            kind,
            path,
        )
        version = pages.version()
        if version is not None:
            return Listing(pages, version)
        items = list(pages)
        return Listing(items, pages.version() or "")

    def _page(self, path: str, kind: Kind, token: str, resource_version: str) -> _Page:
        query = [("limit", str(self._page_size)), *_selectors(kind)]
        if token:
            query.append(("continue", token))
        elif resource_version:
            query.append(("resourceVersion", resource_version))
        return _Page(self._api.open("GET", path, query=query), path, self._list_read_size)

    def watch(
        self, kind: Kind, resource_version: str, *, timeout_seconds: int, stop: threading.Event
    ) -> Iterator[WatchEvent]:
        """Events after `resource_version` until the server ends the stream or `stop` is set."""
        if stop.is_set():
            return
        path = collection_path(kind)
        query = [
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", resource_version),
            ("timeoutSeconds", str(timeout_seconds)),
            *_selectors(kind),
        ]
        protobuf = self._protobuf_watch and _has_schema(kind)
        response = self._api.open(
            "GET",
            path,
            query=query,
            read_timeout=timeout_seconds + self._idle_margin,
            accept=protowatch.WATCH if protobuf else JSON,
        )
        guard = _StreamGuard(response, stop)
        guard.start(f"watch-stop-{kind.name}", self._stop_poll)
        segments = _gathered(_segments(response), self._gather, stop)
        if protobuf and not _content_type(response).startswith(PROTOBUF):
            protobuf = False  # a server that answered JSON after all
        try:
            if protobuf:
                records: Iterator[bytes] = protowatch.frames(segments)
                decode: Callable[[bytes, str], WatchEvent | None] = _decode_frame
            else:
                records, decode = _lines(segments), _decode
            for record in records:
                event = decode(record, path)
                if event is not None:
                    yield event
                if stop.is_set():
                    return
        except Exception as exc:
            if stop.is_set():
                return
            raise translate(exc, path=path) from exc
        finally:
            guard.finish()


class _StreamGuard:
    """Shuts a streaming response's socket down when `stop` is set, unless the stream is over."""

    def __init__(self, response: urllib3.HTTPResponse, stop: threading.Event) -> None:
        self._response = response
        self._stop = stop
        self._lock = threading.Lock()
        self._finished = False

    def start(self, name: str, poll: float) -> None:
        threading.Thread(target=self._run, args=(poll,), name=name, daemon=True).start()

    def finish(self) -> None:
        with self._lock:
            self._finished = True
            self._response.close()

    def _run(self, poll: float) -> None:
        while not self._stop.wait(poll):
            if self._finished:
                return
        with self._lock:
            if self._finished:
                return
            try:
                self._response.shutdown()
            except (AttributeError, ValueError, RuntimeError, OSError) as exc:
                logger.debug("could not interrupt a watch: %r", exc)


class _Page:
    """One page's response, its body read as it arrives."""

    def __init__(self, response: urllib3.HTTPResponse, path: str, read_size: int) -> None:
        self._response = response
        self._path = path
        self._read_size = read_size
        self.body = ListBody(self._read, path)

    def _read(self) -> bytes:
        try:
            return bytes(self._response.read(self._read_size))
        except Exception as exc:
            raise translate(exc, path=self._path) from exc

    def metadata(self) -> dict[str, Any]:
        """The list's metadata read so far ({} when none)."""
        metadata = self.body.fields.get("metadata")
        return metadata if isinstance(metadata, dict) else {}

    def close(self, *, read: bool) -> None:
        """Hand the connection back when the body was read to its end; else close it."""
        if read:
            self._response.release_conn()
        else:
            self._response.close()


class _Pages:
    """The items of every page of one list, read while iterated."""

    def __init__(
        self, first: _Page, next_page: Callable[[str], _Page], kind: Kind, path: str
    ) -> None:
        self._next_page = next_page
        self._kind = kind
        self._path = path
        self._first: _Page | None = first
        try:
            first.body.fields_before_items()
        except BaseException:
            first.close(read=False)
            raise
        self._version = _version_of(first)

    def version(self) -> str | None:
        """The first page's resourceVersion (None until its metadata has been read)."""
        return self._version

    def __iter__(self) -> Iterator[Raw]:
        page, self._first = self._first, None
        if page is None:
            raise RuntimeError("a list's items can be read once")
        while True:
            read = False
            try:
                yield from _checked(page.body.items(), self._kind, self._path)
                if "items" in page.body.fields and page.body.fields["items"] is not None:
                    raise ClusterError(f"list of {self._path}: `items` is not a list")
                page.body.finish()
                read = True
            finally:
                page.close(read=read)
            if self._version is None:
                self._version = _version_of(page)
            token = str(page.metadata().get("continue") or "")
            if not token:
                return
            page = self._next_page(token)


def _version_of(page: _Page) -> str | None:
    version = page.metadata().get("resourceVersion")
    return str(version) if version is not None else None


def _selectors(kind: Kind) -> list[tuple[str, str]]:
    return [("fieldSelector", kind.field_selector)] if kind.field_selector else []


def _checked(items: Iterable[Any], kind: Kind, path: str) -> Iterator[Raw]:
    """The objects among `items`, with their kind and apiVersion (the API server leaves them
    out of a list's items)."""
    for item in items:
        if isinstance(item, dict):
            item.setdefault("kind", kind.name)
            item.setdefault("apiVersion", kind.api_version)
            yield item
        else:
            logger.warning("list of %s: skipping an item that is not an object", path)


def _segments(response: urllib3.HTTPResponse) -> Iterator[bytes]:
    """The body as it arrives: chunk by chunk (the API server chunks watches), else read1."""
    if response.chunked:
        yield from response.stream(None)
        return
    while data := response.read1(_READ_SIZE):
        yield data


def _gathered(segments: Iterator[bytes], gather: float, stop: threading.Event) -> Iterator[bytes]:
    """`segments`, with a pause of `gather` seconds after each one the network was waited for
    (more than `_WAITED`), so the events that follow it are read in one wakeup; not after one
    that came after a longer wait than `gather` (events that far apart would not be gathered:
    the pause would add a wakeup of its own and nothing else)."""
    clock = time.monotonic
    while True:
        started = clock()
        segment = next(segments, None)
        if segment is None:
            return
        waited = clock() - started
        yield segment
        if _WAITED < waited <= gather:
            stop.wait(gather)


def _lines(segments: Iterable[bytes]) -> Iterator[bytes]:
    """Newline-delimited records from a stream of byte segments."""
    pending: list[bytes] = []
    for segment in segments:
        if b"\n" not in segment:
            pending.append(segment)
            continue
        pending.append(segment)
        *complete, rest = b"".join(pending).split(b"\n")
        pending = [rest] if rest else []
        yield from (line for line in complete if line.strip())
    tail = b"".join(pending)
    if tail.strip():
        yield tail


def _has_schema(kind: Kind) -> bool:
    """Whether `kind`'s watch can be read in protobuf (`kube.protodecode` has its schema)."""
    return kind.name == "Pod" and kind.api_version == "v1"


def _content_type(response: urllib3.HTTPResponse) -> str:
    return str(response.headers.get("Content-Type") or "")


def _decode_frame(frame: bytes, path: str) -> WatchEvent | None:
    """One protobuf watch frame as an event, as `_decode` reads a JSON line."""
    try:
        type_, obj = protowatch.watch_event(frame)
    except ValueError as exc:
        raise TransientClusterError(f"malformed watch frame from {path}: {exc}") from exc
    return _event(type_, obj, path)


def _decode(line: bytes, path: str) -> WatchEvent | None:
    """One watch line as an event; ERROR lines raise; unknown types are logged and skipped."""
    try:
        doc = jsondecode.loads(line)
    except ValueError as exc:
        raise TransientClusterError(f"malformed watch line from {path}: {exc}") from exc
    if not isinstance(doc, dict):
        raise TransientClusterError(f"malformed watch line from {path}: not an object")
    return _event(doc.get("type"), doc.get("object"), path)


def _event(type_: object, obj: object, path: str) -> WatchEvent | None:
    """The event of a decoded `type` and `object`; ERROR raises; unknown types are skipped."""
    if type_ == "ERROR":
        raise status_error(obj, path=path)
    if type_ not in _EVENT_TYPES or not isinstance(obj, dict):
        logger.warning("skipping a watch event of type %r from %s", type_, path)
        return None
    return WatchEvent(cast(EventType, type_), obj)
