from __future__ import annotations

import datetime as dt
import threading

import pytest

from vscheduler.clock import FixedClock
from vscheduler.kube.ratelimit import TokenBucket


def bucket(qps: float, burst: int) -> tuple[TokenBucket, FixedClock, list[float]]:
    clock = FixedClock(dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.advance(seconds)

    return TokenBucket(qps, burst, clock=clock, sleep=sleep), clock, slept


def test_a_full_bucket_lets_a_burst_through_without_waiting() -> None:
    limiter, _, slept = bucket(qps=10, burst=3)
    assert [limiter.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert slept == []


def test_past_the_burst_each_request_waits_one_over_qps() -> None:
    limiter, _, slept = bucket(qps=10, burst=2)
    for _ in range(5):
        limiter.acquire()
    assert slept == pytest.approx([0.1, 0.1, 0.1])


def test_idle_time_refills_the_bucket_but_never_beyond_the_burst() -> None:
    limiter, clock, slept = bucket(qps=10, burst=2)
    limiter.acquire()
    limiter.acquire()
    clock.advance(60)
    for _ in range(3):
        limiter.acquire()
    assert slept == pytest.approx([0.1])


def test_concurrent_callers_each_reserve_their_own_slot() -> None:
    limiter, _, _ = bucket(qps=10, burst=2)
    barrier = threading.Barrier(20)
    waits: list[float] = []
    lock = threading.Lock()

    def reserve() -> None:
        barrier.wait(5)
        wait = limiter.reserve()
        with lock:
            waits.append(wait)

    threads = [threading.Thread(target=reserve) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert sorted(waits) == pytest.approx([0.0, 0.0] + [0.1 * k for k in range(1, 19)])


@pytest.mark.parametrize("qps", [0, -1, float("inf")])
def test_a_non_positive_or_infinite_qps_never_waits(qps: float) -> None:
    limiter, _, slept = bucket(qps=qps, burst=0)
    assert limiter.unlimited
    for _ in range(1000):
        limiter.acquire()
    assert slept == []


def test_a_limited_bucket_needs_a_burst_of_at_least_one() -> None:
    with pytest.raises(ValueError, match="burst"):
        bucket(qps=5, burst=0)


def test_take_hands_out_only_the_tokens_there_now_and_never_waits() -> None:
    limiter, clock, slept = bucket(qps=10, burst=3)
    assert limiter.take(5) == 3
    assert limiter.take(1) == 0
    clock.advance(0.25)
    assert limiter.take(5) == 2
    limiter.acquire()  # the bucket is empty: a token on credit, waited for
    assert slept == pytest.approx([0.05])
    assert limiter.take(0) == 0
    assert TokenBucket(0, 0, clock=clock).take(7) == 7  # unlimited
