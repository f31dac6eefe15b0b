"""The retry rules of every API call the scheduler makes: the only place retries are defined.

Owns: which errors are retried (`TransientClusterError` only: throttling, 5xx, connection
resets, timeouts), the backoff (exponential, capped, with "equal jitter" from an injected
source), and the bounds (a deadline per call and a maximum number of attempts). A conflict, a
missing object or a disruption budget's refusal is never retried: the caller drops the decision.
Must not: read the clock or randomness it was not handed, or sleep other than through the
`sleep` it was handed (the executor's stop event, so a shutdown cuts a backoff short).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Protocol, TypeVar

from vscheduler.clock import Clock
from vscheduler.errors import TransientClusterError

logger = logging.getLogger(__name__)

T = TypeVar("T")


class UniformSource(Protocol):
    """A source of uniform random numbers (a `random.Random` from the composition root)."""

    def uniform(self, a: float, b: float) -> float:
        """A number from `a` to `b`."""
        ...


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How one kind of call is retried.

    The wait before attempt n+1 is `min(max_backoff, initial_backoff * 2**(n-1))`, drawn from
    its upper half when a jitter source is given, and never beyond the deadline.
    """

    deadline: float = 10.0
    """Seconds from the first attempt after which no new attempt starts."""
    max_attempts: int = 5
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    jitter: UniformSource | None = None

    def events(self) -> RetryPolicy:
        """The policy for Events: best effort, so fewer attempts within a shorter deadline."""
        return dataclasses.replace(
            self, deadline=min(self.deadline, 3.0), max_attempts=min(self.max_attempts, 3)
        )

    def backoff(self, attempt: int) -> float:
        """The wait after failed attempt number `attempt` (1-based), before the deadline cap."""
        base = min(self.max_backoff, self.initial_backoff * 2 ** (attempt - 1))
        return base if self.jitter is None else self.jitter.uniform(base / 2, base)


def call_with_retry(
    policy: RetryPolicy,
    fn: Callable[[], T],
    *,
    what: str,
    clock: Clock,
    sleep: Callable[[float], object],
    stopping: Callable[[], bool] = lambda: False,
) -> T:
    """`fn()`, retried on `TransientClusterError` under `policy`; the last error is raised.

    `what` names the call in log lines; `stopping()` true ends the retries (shutdown). A call
    that succeeds at once makes nothing but its clock reading: this runs for every bind and
    Event, and tenacity's `Retrying` (a dozen objects a call, in reference cycles) was garbage
    the cyclic collector had to find.
    """
    started = clock.monotonic()
    try:
        return fn()
    except TransientClusterError as err:
        error = err
    attempt = 1
    while True:
        spent = clock.monotonic() - started
        if attempt >= policy.max_attempts or spent >= policy.deadline or stopping():
            raise error
        pause = max(0.0, min(policy.backoff(attempt), policy.deadline - spent))
        logger.info("%s: attempt %d failed (%s); retrying", what, attempt, error)
        sleep(pause)
        if stopping():  # shut down during the backoff: no new attempt
            raise error
        attempt += 1
        try:
            return fn()
        except TransientClusterError as err:
            error = err
