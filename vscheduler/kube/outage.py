"""`Outage`: whether the API server is unreachable, reported once per outage.

Every request of `KubeApi` tells it how it ended: no HTTP answer at all (`failed`, with an
`errors.UnreachableError`) or any answer, error statuses included (`answered`). The first failure
logs one info line; the first answer after it logs one warning with the outage's duration and
how many calls failed meanwhile. Callers log each unreachable failure at info level only, so an
outage reads as one warning, not one per call, watch and retry.

Owns: that state, thread-safe (every worker, informer and the elector share one).
Must not: retry, sleep, or decide anything: it only reports.
"""

from __future__ import annotations

import logging
import threading

from vscheduler.clock import Clock

logger = logging.getLogger(__name__)


class Outage:
    """The current outage of one API server, if any."""

    def __init__(self, clock: Clock, server: str = "the API server") -> None:
        self._clock = clock
        self._server = server
        self._lock = threading.Lock()
        self._since: float | None = None
        self._failed = 0
        self._first = ""

    @property
    def ongoing(self) -> bool:
        """Whether the last call found the server unreachable."""
        return self._since is not None

    def failed(self, error: Exception) -> None:
        """A call got no answer; the first of an outage logs an info line."""
        with self._lock:
            self._failed += 1
            if self._since is not None:
                return
            self._since, self._first = self._clock.monotonic(), str(error)
        logger.info(
            "%s is unreachable (%s); calls are retried with backoff, and one warning follows "
            "when it answers again",
            self._server,
            error,
        )

    def answered(self) -> float | None:
        """A call got an answer; ends an outage with one warning. Its duration, if one ended."""
        if not self.ongoing:  # the common case, without the lock
            return None
        with self._lock:
            since = self._since
            if since is None:
                return None
            lasted = self._clock.monotonic() - since
            failed, first = self._failed, self._first
            self._since, self._failed, self._first = None, 0, ""
        logger.warning(
            "%s was unreachable for %.1fs (%d calls failed; the first with: %s)",
            self._server,
            lasted,
            failed,
            first,
        )
        return lasted
