"""An `EffectsExecutor` run as the effects tests run one, over a fake writer
(`vscheduler.testing.writers`):

    with running_executor(writer, cache, clock, outcomes, workers=2, attempts=2) as effects:
        carry_out(effects, CycleResult(binds=(bind,)))
        assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n1")

Its outcomes go to a list, each write is tried a given number of times without backoff, it hears
of the cache's claim and volume changes (as the composition root wires it), it is closed when
the test is done with it, and a test waits for its workers at most `WAIT` seconds.
Builds no cluster objects and fakes no writer: each test keeps its own cache contents and fake.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypedDict, Unpack

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import Clock
from vscheduler.effects.executor import EffectsExecutor
from vscheduler.effects.ports import ClusterWriter, ConfigMapWriter, NominationWriter
from vscheduler.effects.retry import RetryPolicy
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import CycleResult
from vscheduler.model.status import TaskStatus

WAIT = 5.0
"""Seconds a test waits for the workers at most (they finish in milliseconds)."""


class ExecutorOptions(TypedDict, total=False):
    """The executor's other keywords a test may set, as `EffectsExecutor` takes them."""

    may_write: Callable[[], bool]
    config_maps: ConfigMapWriter | None
    nominations: NominationWriter | None
    queue_hold: float
    volume_binding: Callable[[], bool]
    volume_bind_timeout: Callable[[], float]
    volume_poll: float


@contextmanager
def running_executor(
    writer: ClusterWriter,
    cache: SchedulerCache,
    clock: Clock,
    outcomes: list[tuple[str, str]],
    *,
    workers: int,
    attempts: int,
    **options: Unpack[ExecutorOptions],
) -> Iterator[EffectsExecutor]:
    """An executor of `workers` workers appending each `(action, outcome)` to `outcomes`, trying
    each write `attempts` times without backoff; closed on leaving the block."""
    effects = EffectsExecutor(
        writer,
        cache,
        clock=clock,
        workers=workers,
        on_outcome=lambda action, outcome: outcomes.append((action, outcome)),
        retry=RetryPolicy(initial_backoff=0, max_attempts=attempts),
        **options,
    )
    cache.on_volumes_changed(effects.volumes_changed)
    try:
        yield effects
    finally:
        effects.close()


def carry_out(
    effects: EffectsExecutor, result: CycleResult, snapshot: ClusterSnapshot | None = None
) -> None:
    """Submit `result`, decided on `snapshot` (an empty one unless given), and wait until the
    executor has carried it out."""
    effects.submit(result, ClusterSnapshot() if snapshot is None else snapshot)
    assert effects.drain(WAIT)


def status_of(cache: SchedulerCache, uid: str) -> tuple[TaskStatus, str | None]:
    """The status and node the cache shows task `uid` in now."""
    task = cache.snapshot().tasks[uid]
    return task.status, task.node_name
