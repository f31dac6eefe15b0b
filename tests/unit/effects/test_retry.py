from __future__ import annotations

import datetime as dt

import pytest

from vscheduler.clock import FixedClock
from vscheduler.effects.retry import RetryPolicy, call_with_retry
from vscheduler.errors import (
    ClusterError,
    ConflictError,
    DisruptionBudgetError,
    NotFoundError,
    TransientClusterError,
)

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


class Script:
    """A call that raises the scripted errors in turn, then returns 'ok'."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


class Sleeper:
    """Records each wait and advances the clock by it."""

    def __init__(self, clock: FixedClock) -> None:
        self.clock = clock
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(round(seconds, 6))
        self.clock.advance(seconds)


class Upper:
    """A jitter source that always answers the upper bound."""

    def __init__(self) -> None:
        self.asked: list[tuple[float, float]] = []

    def uniform(self, a: float, b: float) -> float:
        self.asked.append((a, b))
        return b


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


def run(
    policy: RetryPolicy, call: Script, clock: FixedClock, sleeper: Sleeper, **kw: object
) -> str:
    return call_with_retry(policy, call, what="test call", clock=clock, sleep=sleeper, **kw)  # type: ignore[arg-type]


def test_transient_errors_are_retried_with_exponential_backoff_until_success(
    clock: FixedClock,
) -> None:
    sleeper = Sleeper(clock)
    call = Script(TransientClusterError("503"), TransientClusterError("reset"))
    assert run(RetryPolicy(initial_backoff=0.1), call, clock, sleeper) == "ok"
    assert (call.calls, sleeper.waits) == (3, [0.1, 0.2])


@pytest.mark.parametrize(
    "error",
    [ConflictError("already bound"), NotFoundError("gone"), DisruptionBudgetError("pdb")],
)
def test_conflicts_missing_objects_and_budget_refusals_are_never_retried(
    clock: FixedClock, error: ClusterError
) -> None:
    call = Script(error)
    with pytest.raises(type(error)):
        run(RetryPolicy(), call, clock, Sleeper(clock))
    assert call.calls == 1


def test_retries_stop_at_the_maximum_attempts_with_the_last_error(clock: FixedClock) -> None:
    call = Script(*(TransientClusterError(f"503 #{i}") for i in range(10)))
    with pytest.raises(TransientClusterError, match="503 #2"):
        run(RetryPolicy(max_attempts=3), call, clock, Sleeper(clock))
    assert call.calls == 3


def test_retries_stop_at_the_deadline_and_never_wait_past_it(clock: FixedClock) -> None:
    sleeper = Sleeper(clock)
    call = Script(*(TransientClusterError("503") for _ in range(10)))
    policy = RetryPolicy(deadline=1.0, max_attempts=100, initial_backoff=0.4, max_backoff=5)
    with pytest.raises(TransientClusterError):
        run(policy, call, clock, sleeper)
    assert sleeper.waits == [0.4, 0.6]
    assert call.calls == 3


def test_the_backoff_is_capped_and_jittered_within_its_upper_half(clock: FixedClock) -> None:
    jitter = Upper()
    policy = RetryPolicy(
        initial_backoff=1, max_backoff=3, max_attempts=5, deadline=100, jitter=jitter
    )
    sleeper = Sleeper(clock)
    call = Script(*(TransientClusterError("503") for _ in range(4)))
    run(policy, call, clock, sleeper)
    assert sleeper.waits == [1, 2, 3, 3]
    assert jitter.asked == [(0.5, 1), (1, 2), (1.5, 3), (1.5, 3)]


def test_a_shutdown_ends_the_retries(clock: FixedClock) -> None:
    call = Script(*(TransientClusterError("503") for _ in range(10)))
    with pytest.raises(TransientClusterError):
        run(RetryPolicy(), call, clock, Sleeper(clock), stopping=lambda: True)
    assert call.calls == 1


def test_events_get_a_shorter_policy() -> None:
    policy = RetryPolicy(deadline=10, max_attempts=5).events()
    assert (policy.deadline, policy.max_attempts) == (3.0, 3)
