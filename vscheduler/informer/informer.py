"""`Informer`: keeps one sink in step with one kind, in a thread of its own, until stopped.

list -> `sink.replace` -> the kind is synced on the `SyncGate` -> watch from the list's
resourceVersion. Lists ask for resourceVersion "0", which the API server answers from its watch
cache without a read of etcd (client-go's reflector does the same); the list after a 410 asks
for the latest state instead. A list's items reach `sink.replace` as they arrive (the lister
reads the body while the sink iterates it), so the sink converts the first objects while the API
server still sends the rest; a failure on the way raises from the sink's iteration and changes
nothing (the sink takes a list only whole); so does a stop, which leaves the rest unread. The
watch hands ADDED / MODIFIED / DELETED to `sink.apply`, and the resourceVersion of every event
and BOOKMARK is remembered. A watch that ends normally is reopened from the last
resourceVersion; `ExpiredError` (410) lists again at once; any other failure waits a capped
exponential backoff with jitter, which resets after a success (a list, or a watch that delivered
something). A watch that ends within `short_watch` seconds having delivered nothing counts as a
failure, so a server that closes at once cannot spin us. Nothing kills the loop: every exception
is logged and retried. A sink that fails on an event leaves its state in doubt, so the informer
lists again (after the backoff).

An optional kind (`Kind.optional`: the HyperNode CRD) whose list or watch answers 404 (the CRD
is not installed) or 403 (the scheduler's role may not read it) is absent: the sink gets an
empty list, the kind counts as synced, and the informer lists again every `absent_retry`
seconds (said once in the log, and again once it is served), so a cluster without it schedules
as one without any such object.

Watch timeouts are `min_watch_timeout * [1, 2)` seconds (client-go's 5..10 minutes), so the
watches of many kinds do not all reopen at once.

Counts go to `observe(kind_name, what)` with `what` one of the `OBSERVED` names.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator

from vscheduler.clock import Clock
from vscheduler.errors import ClusterError, ExpiredError, UnreachableError
from vscheduler.informer.backoff import Backoff, FractionSource
from vscheduler.informer.kinds import Kind
from vscheduler.informer.ports import Lister, Raw, Sink, WatchEvent
from vscheduler.informer.readiness import SyncGate

logger = logging.getLogger(__name__)

Observe = Callable[[str, str], None]
Pause = Callable[[float], bool]
"""Wait up to the given seconds; True when the informer was stopped meanwhile."""

LIST, RELIST, WATCH, EVENT, BOOKMARK, EXPIRED, ERROR = (
    "list",
    "relist",
    "watch",
    "event",
    "bookmark",
    "expired",
    "error",
)
OBSERVED = (LIST, RELIST, WATCH, EVENT, BOOKMARK, EXPIRED, ERROR)
"""list: a full list was delivered; relist: one that was not the first; watch: a watch opened;
event / bookmark: one received; expired: a 410 forced a relist; error: a failure, backed off."""


DEFAULT_BACKOFF = Backoff()
"""0.5 s doubling to 30 s, plus up to 50 % jitter (capped at 30 s)."""


def _ignore(kind_name: str, what: str) -> None:
    """The default observer."""


class _SinkError(Exception):
    """The sink raised on a delivery; its state for the kind is in doubt."""


class _StoppedError(Exception):
    """The informer was stopped while the sink read a list: the rest of it is left unread (a
    50,000-pod list takes seconds to convert), and the sink, which applies a list only once
    all of it is in, changes nothing."""


class Informer:
    """List + watch of one kind into one sink, in a named daemon thread."""

    def __init__(
        self,
        kind: Kind,
        lister: Lister,
        sink: Sink,
        *,
        clock: Clock,
        rng: FractionSource,
        stop: threading.Event | None = None,
        gate: SyncGate | None = None,
        backoff: Backoff = DEFAULT_BACKOFF,
        observe: Observe = _ignore,
        pause: Pause | None = None,
        min_watch_timeout: int = 300,
        short_watch: float = 1.0,
        absent_retry: float = 60.0,
    ) -> None:
        self._kind, self._lister, self._sink = kind, lister, sink
        self._clock, self._rng = clock, rng
        self._stop = stop if stop is not None else threading.Event()
        self._gate = gate
        self._backoff = backoff
        self._observe = observe
        self._pause: Pause = pause if pause is not None else self._stop.wait
        self._min_watch_timeout = min_watch_timeout
        self._short_watch = short_watch
        self._absent_retry = absent_retry
        self._absent = False
        """The optional kind is not served (its last list answered 404 or 403)."""
        self._resource_version: str | None = None
        self._listed = False
        self._consistent = False
        """The next list must be a consistent read (after a 410), not the server's cache."""
        self._failures = 0
        self._thread: threading.Thread | None = None
        if gate is not None:
            gate.register(kind)

    @property
    def kind(self) -> Kind:
        """The kind this informer watches."""
        return self._kind

    @property
    def resource_version(self) -> str | None:
        """The last resourceVersion seen (None before the first list or when a relist is due)."""
        return self._resource_version

    @property
    def thread_name(self) -> str:
        """`informer-Pod`, `informer-ConfigMap-ns-metadata.name=policy`, ..."""
        parts = ("informer", self._kind.name, self._kind.namespace, self._kind.field_selector)
        return "-".join(part for part in parts if part)

    def start(self) -> None:
        """Run the loop in a daemon thread."""
        if self._thread is not None:
            raise RuntimeError(f"{self.thread_name} already started")
        self._thread = threading.Thread(target=self.run, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> bool:
        """Set the stop event and wait up to `timeout` seconds; True when the loop has ended.

        The event may be shared: setting it stops every informer that was given it."""
        self._stop.set()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def run(self) -> None:
        """The loop; returns once stopped."""
        while not self._stop.is_set():
            try:
                if self._resource_version is None:
                    self._list()
                else:
                    self._watch(self._resource_version)
            except ExpiredError as exc:
                self._expired(exc)
            except Exception as exc:
                if self._stop.is_set():
                    return
                if self._kind.optional and _not_served(exc):
                    if self._not_served(exc):
                        return
                    continue
                if self._fail(exc):
                    return

    def _list(self) -> None:
        listing = self._lister.list(self._kind, resource_version="" if self._consistent else "0")
        count = 0

        def counted() -> Iterator[Raw]:
            nonlocal count
            for count, item in enumerate(listing.items, 1):  # noqa: B007
                if self._stop.is_set():
                    raise _StoppedError  # the rest is left unread; the sink changes nothing
                yield item

        self._deliver(lambda: self._sink.replace(self._kind, counted()))
        if self._stop.is_set():
            return
        if self._absent:
            self._absent = False
            logger.info("%s: %s is served now", self.thread_name, _resource(self._kind))
        self._resource_version = listing.resource_version
        self._consistent = False
        self._failures = 0
        self._observe(self._kind.name, RELIST if self._listed else LIST)
        if not self._listed and self._gate is not None:
            self._gate.mark_synced(self._kind)
        self._listed = True
        logger.debug(
            "%s listed: %d objects at %s",
            self.thread_name,
            count,
            listing.resource_version,
        )

    def _watch(self, resource_version: str) -> None:
        timeout = int(self._min_watch_timeout * (1.0 + self._rng.random()))
        started = self._clock.monotonic()
        self._observe(self._kind.name, WATCH)
        events = self._lister.watch(
            self._kind, resource_version, timeout_seconds=timeout, stop=self._stop
        )
        received = 0
        try:
            for event in events:
                received += 1
                self._receive(event)
                if self._stop.is_set():
                    return
        finally:
            _close(events)
        lasted = self._clock.monotonic() - started
        if received == 0 and lasted < self._short_watch and not self._stop.is_set():
            raise ClusterError(f"very short watch: closed after {lasted:.3f}s with no events")

    def _receive(self, event: WatchEvent) -> None:
        if event.type != "BOOKMARK":
            self._deliver(lambda: self._sink.apply(self._kind, event))
        self._observe(self._kind.name, BOOKMARK if event.type == "BOOKMARK" else EVENT)
        version = _resource_version_of(event)
        if version:
            self._resource_version = version
        self._failures = 0

    def _deliver(self, delivery: Callable[[], None]) -> None:
        """Hand over to the sink; a list read while delivered may fail on the way
        (`ClusterError`: raised as it is, so a 410 lists again and an outage is told as one)."""
        try:
            delivery()
        except ClusterError:
            self._resource_version = None
            raise
        except Exception as exc:
            self._resource_version = None
            raise _SinkError(f"the sink failed on {self._kind.name}: {exc!r}") from exc

    def _expired(self, exc: ExpiredError) -> None:
        self._observe(self._kind.name, EXPIRED)
        if self._resource_version is None:
            self._fail(exc)
            return
        logger.info("%s: %s; listing again", self.thread_name, exc)
        self._resource_version = None
        self._consistent = True

    def _not_served(self, exc: Exception) -> bool:
        """The optional kind is not served: an empty list to the sink, synced, and a list
        again after `absent_retry` seconds; True when stopped during the wait."""
        self._resource_version = None
        self._deliver(lambda: self._sink.replace(self._kind, ()))
        if not self._listed and self._gate is not None:
            self._gate.mark_synced(self._kind)
        self._listed = True
        if not self._absent:
            self._absent = True
            logger.info(
                "%s: the cluster does not serve %s to the scheduler (%s): none are read; listing"
                " again every %gs",
                self.thread_name,
                _resource(self._kind),
                exc,
                self._absent_retry,
            )
        return self._pause(self._absent_retry)

    def _fail(self, exc: Exception) -> bool:
        """Log, count and back off; True when stopped during the wait."""
        self._failures += 1
        delay = self._backoff.delay(self._failures, self._rng)
        self._observe(self._kind.name, ERROR)
        if isinstance(exc, ClusterError):  # an outage is reported once, by the client
            level = logging.INFO if isinstance(exc, UnreachableError) else logging.WARNING
            logger.log(level, "%s: %s; retrying in %.2fs", self.thread_name, exc, delay)
        else:
            logger.exception("%s failed; retrying in %.2fs", self.thread_name, delay)
        return self._pause(delay)


def _not_served(exc: Exception) -> bool:
    """A 404 (the CRD is not installed) or a 403 (the role may not read it)."""
    return isinstance(exc, ClusterError) and exc.status in (403, 404)


def _resource(kind: Kind) -> str:
    """`hypernodes.topology.volcano.sh`."""
    return f"{kind.plural}.{kind.group}" if kind.group else kind.plural


def _resource_version_of(event: WatchEvent) -> str:
    metadata = event.obj.get("metadata")
    if not isinstance(metadata, dict):
        return ""
    version = metadata.get("resourceVersion")
    return version if isinstance(version, str) else ""


def _close(events: Iterator[WatchEvent]) -> None:
    close = getattr(events, "close", None)
    if callable(close):
        close()
