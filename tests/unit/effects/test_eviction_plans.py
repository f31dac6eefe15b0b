"""The evictions of one plan (a gang's preemption) are carried out all or none: each victim is
dry-run first, then the victims are counted against their budgets together; one refusal sends
none of them, puts the refused victims in backoff and shows the others running again."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects.executor import EffectsExecutor
from vscheduler.effects.ports import ObjectRef
from vscheduler.errors import DisruptionBudgetError
from vscheduler.informer.kinds import PDB, POD
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import CycleResult, Evict
from vscheduler.model.status import TaskStatus
from vscheduler.testing.executors import WAIT
from vscheduler.testing.writers import RefusingWriter

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


class BudgetWriter(RefusingWriter):
    """Evicts every pod but those in `protected`, whose evictions (dry runs too) are refused;
    records every call as `dry ns/name` or `evict ns/name`."""

    def __init__(self, *protected: str) -> None:
        self.protected = set(protected)
        self.calls: list[str] = []
        self.events: list[str] = []

    def evict(self, namespace: str, name: str, uid: str, *, dry_run: bool = False) -> None:
        self.calls.append(f"{'dry' if dry_run else 'evict'} {namespace}/{name}")
        if f"{namespace}/{name}" in self.protected:
            raise DisruptionBudgetError("429 TooManyRequests: Cannot evict pod.", status=429)

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        self.events.append(f"{type_} {reason} {ref.namespace}/{ref.name}")


def raw_running_pod(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"schedulerName": "vscheduler", "nodeName": "n1", "containers": []},
        "status": {"phase": "Running"},
    }


def victim(name: str, plan: str = "preempt ns/high") -> Evict:
    return Evict(
        task_uid=f"uid-{name}",
        pod=f"ns/{name}",
        node="n1",
        reason="preempt by ns/high-0",
        action="preempt",
        plan=plan,
    )


@pytest.fixture
def cache() -> SchedulerCache:
    cache = SchedulerCache(clock=FixedClock(START))
    cache.replace(POD, [raw_running_pod(n) for n in ("a", "b", "c")])
    return cache


@pytest.fixture
def outcomes() -> list[tuple[str, str]]:
    return []


def carry_out(
    writer: BudgetWriter,
    cache: SchedulerCache,
    outcomes: list[tuple[str, str]],
    *evictions: Evict,
) -> None:
    effects = EffectsExecutor(
        writer,
        cache,
        clock=FixedClock(START),
        workers=2,
        on_eviction=lambda e, outcome: outcomes.append((e.pod, outcome)),
    )
    try:
        effects.submit(CycleResult(evictions=evictions), ClusterSnapshot())
        assert effects.drain(WAIT)
    finally:
        effects.close()


def shown(cache: SchedulerCache) -> dict[str, tuple[TaskStatus, bool]]:
    tasks = cache.snapshot().tasks
    return {t.name: (t.status, t.eviction_refused) for t in tasks.values()}


@pytest.mark.timeout(10)
def test_a_plan_whose_victims_are_all_allowed_is_dry_run_then_carried_out(
    cache: SchedulerCache, outcomes: list[tuple[str, str]]
) -> None:
    writer = BudgetWriter()
    carry_out(writer, cache, outcomes, victim("a"), victim("b"))
    assert writer.calls[:2] == ["dry ns/a", "dry ns/b"]  # every dry run before any eviction
    assert sorted(writer.calls[2:]) == ["evict ns/a", "evict ns/b"]
    assert sorted(outcomes) == [("ns/a", "success"), ("ns/b", "success")]


@pytest.mark.timeout(10)
def test_one_refused_victim_of_a_plan_means_none_is_evicted(
    cache: SchedulerCache, outcomes: list[tuple[str, str]]
) -> None:
    writer = BudgetWriter("ns/b")
    carry_out(writer, cache, outcomes, victim("a"), victim("b"), victim("c"))
    assert writer.calls == ["dry ns/a", "dry ns/b", "dry ns/c"]
    assert outcomes == [("ns/b", "blocked"), ("ns/a", "dropped"), ("ns/c", "dropped")]
    assert shown(cache) == {
        "a": (TaskStatus.RUNNING, False),
        "b": (TaskStatus.RUNNING, True),
        "c": (TaskStatus.RUNNING, False),
    }
    assert writer.events == ["Warning EvictionBlocked ns/b"]


@pytest.mark.timeout(10)
def test_evictions_of_different_plans_and_single_victims_go_on_their_own(
    cache: SchedulerCache, outcomes: list[tuple[str, str]]
) -> None:
    writer = BudgetWriter("ns/b")
    carry_out(writer, cache, outcomes, victim("a", plan="preempt ns/x"), victim("b"))
    assert sorted(writer.calls) == ["evict ns/a", "evict ns/b"]
    assert sorted(outcomes) == [("ns/a", "success"), ("ns/b", "blocked")]
    assert shown(cache)["b"] == (TaskStatus.RUNNING, True)


def budget(allowed: int, *, disrupted: tuple[str, ...] = ()) -> dict[str, Any]:
    """A PodDisruptionBudget of namespace `ns` selecting every pod labelled `app: web`."""
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = dict.fromkeys(disrupted, "2026-01-01T00:00:00Z")
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "ns", "resourceVersion": "1"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "minAvailable": 1},
        "status": status,
    }


def web_pods(cache: SchedulerCache) -> None:
    pods = [raw_running_pod(n) for n in ("a", "b", "c")]
    for pod in pods[:2]:
        pod["metadata"]["labels"] = {"app": "web"}
    cache.replace(POD, pods)


@pytest.mark.timeout(10)
def test_victims_a_budget_allows_only_one_at_a_time_are_not_evicted_together(
    cache: SchedulerCache, outcomes: list[tuple[str, str]]
) -> None:
    # Each dry run passes alone (the budget allows one disruption); evicting both would see
    # the second refused after the first was made: a disruption for nothing.
    web_pods(cache)
    cache.replace(PDB, [budget(1)])
    writer = BudgetWriter()
    carry_out(writer, cache, outcomes, victim("c"), victim("a"), victim("b"))
    assert writer.calls == ["dry ns/c", "dry ns/a", "dry ns/b"]
    assert outcomes == [("ns/b", "blocked"), ("ns/c", "dropped"), ("ns/a", "dropped")]
    assert shown(cache) == {
        "a": (TaskStatus.RUNNING, False),
        "b": (TaskStatus.RUNNING, True),
        "c": (TaskStatus.RUNNING, False),
    }
    assert writer.events == ["Warning EvictionBlocked ns/b"]


@pytest.mark.timeout(10)
def test_a_budget_allowing_every_victim_of_a_plan_lets_the_plan_go(
    cache: SchedulerCache, outcomes: list[tuple[str, str]]
) -> None:
    web_pods(cache)
    cache.replace(PDB, [budget(1, disrupted=("a",))])  # a's disruption is counted already
    writer = BudgetWriter()
    carry_out(writer, cache, outcomes, victim("a"), victim("b"))
    assert sorted(writer.calls[2:]) == ["evict ns/a", "evict ns/b"]
    assert sorted(outcomes) == [("ns/a", "success"), ("ns/b", "success")]
