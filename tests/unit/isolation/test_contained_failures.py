"""A cycle never fails because of one object: a plugin that raises about one task skips that
task only; an action that raises on one job discards that job only; a converter that raises on
one object makes that object's problem. The rest of the cluster is scheduled."""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from typing import Any

import numpy as np
import pytest

from vscheduler import catalog, cycle
from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.convert.pod import PodConverter
from vscheduler.framework.registry import Pipeline
from vscheduler.framework.session import PluginEntry
from vscheduler.framework.state import TaskState
from vscheduler.framework.statement import Statement
from vscheduler.informer.kinds import POD
from vscheduler.model.cluster import lone_job_name
from vscheduler.testing.builders import START, node, pod, podgroup, snapshot


@dataclasses.dataclass(frozen=True)
class Option:
    name: str

    def is_enabled(self, _flag: str) -> bool:
        return True


class Picky:
    """A toy plugin: its predicate raises for pod `bad`, its score for pod `odd`."""

    def filter_nodes(self, task: TaskState, idx: Any) -> Any:
        if task.facts.name == "bad":
            raise KeyError("no label 'zone'")
        return np.ones(len(idx), dtype=np.bool_)

    def score_nodes(self, task: TaskState, idx: Any) -> Any:
        if task.facts.name == "odd":
            raise ZeroDivisionError("division by zero")
        return np.zeros(len(idx))


class PickyFactory:
    name = "picky"
    plugin = Picky

    def open(self, _session: object) -> Picky:
        return Picky()


def with_picky(policy: str | None = None) -> Pipeline:
    base = catalog.load_pipeline(policy)
    return dataclasses.replace(
        base, tiers=(*base.tiers, (PluginEntry(Option("picky"), PickyFactory()),))
    )


def test_a_plugin_raising_for_one_task_skips_that_task_and_the_others_bind() -> None:
    snap = snapshot(
        node("n1").resources(cpu="8", memory="8Gi"),
        pod("good").requests(cpu="1"),
        pod("bad").requests(cpu="1"),
        pod("odd").requests(cpu="2"),
    )
    report = cycle.run_cycle(snap, with_picky(), clock=FixedClock(START))
    assert {b.pod for b in report.result.binds} == {"default/good"}
    assert report.result.unschedulable == {
        "default/bad": "plugin picky failed at predicate for this pod: KeyError: \"no label 'zone'\"",
        "default/odd": (
            "plugin picky failed at nodeOrder for this pod: ZeroDivisionError: division by zero"
        ),
    }
    assert report.plugin_errors == (
        "picky predicate: KeyError: \"no label 'zone'\" (pod default/bad)",
        "picky nodeOrder: ZeroDivisionError: division by zero (pod default/odd)",
    )


def test_a_gang_member_a_plugin_raises_about_is_skipped_and_the_gang_binds_if_it_still_can() -> (
    None
):
    snap = snapshot(
        node("n1").resources(cpu="8", memory="8Gi"),
        podgroup("g").min_member(2).inqueue(),
        pod("g-0").group("g").requests(cpu="1"),
        pod("bad").group("g").requests(cpu="1"),
        pod("g-2").group("g").requests(cpu="1"),
    )
    report = cycle.run_cycle(snap, with_picky(), clock=FixedClock(START))
    assert {b.pod for b in report.result.binds} == {"default/g-0", "default/g-2"}
    assert list(report.result.unschedulable) == ["default/bad"]


def test_the_loop_logs_the_plugin_and_the_pod(caplog: pytest.LogCaptureFixture) -> None:
    from vscheduler.runtime.policy import PolicyHolder
    from vscheduler.runtime.scheduler import Scheduler

    class Cache:
        generation = 1
        quiet_generation = 0
        gang_arrival = None
        changed = __import__("threading").Event()
        complete = __import__("threading").Event()

        def snapshot(self) -> Any:
            return snapshot(node("n1"), pod("bad").requests(cpu="1"))

    class Carrier:
        def stream(self, *_args: object) -> None:
            pass

        def submit(self, *_args: object) -> None:
            pass

        def busy(self) -> bool:
            return False

    class Observer:
        def observe_cycle(self, _report: object) -> None:
            pass

        def observe_skip(self) -> None:
            pass

        def observe_cycle_failed(self, _pending: int) -> None:
            pass

    holder = PolicyHolder()
    holder._pipeline = with_picky()
    scheduler = Scheduler(
        cache=Cache(),
        policy=holder,
        effects=Carrier(),
        clock=FixedClock(START),
        observer=Observer(),
        is_synced=lambda: True,
    )
    with caplog.at_level(logging.WARNING, logger="vscheduler.runtime.scheduler"):
        scheduler.run_once()
    assert (
        "cycle 1: plugin picky predicate: KeyError: \"no label 'zone'\" (pod default/bad)"
        in caplog.messages
    )


def test_an_action_raising_on_one_job_discards_that_job_and_goes_on_with_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = Statement.allocate

    def allocate(self: Statement, task: TaskState, node_index: int) -> None:
        real(self, task, node_index)
        if task.facts.job == "default/broken":
            raise IndexError("list index out of range")

    monkeypatch.setattr(Statement, "allocate", allocate)
    snap = snapshot(
        node("n1").resources(cpu="8", memory="8Gi"),
        podgroup("broken").min_member(2).inqueue(),
        pod("broken-0").group("broken").requests(cpu="1"),
        pod("broken-1").group("broken").requests(cpu="1"),
        pod("fine").requests(cpu="7"),
    )
    report = cycle.run_cycle(snap, catalog.load_pipeline(None), clock=FixedClock(START))
    assert [b.pod for b in report.result.binds] == ["default/fine"]
    message = "allocate failed for podgroup default/broken: IndexError: list index out of range"
    assert report.result.unschedulable == {
        "default/broken-0": message,
        "default/broken-1": message,
    }
    assert len(report.action_errors) == 1
    assert report.action_errors[0].startswith(
        "allocate: podgroup default/broken: IndexError: list index out of range (at "
    )


def test_a_preempting_job_that_raises_is_discarded_and_the_next_preempts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from vscheduler.actions import eviction

    real = eviction.Evictor.place

    def place(self: eviction.Evictor, txn: Any, task: TaskState, *args: Any, **kw: Any) -> Any:
        if task.facts.name == "urgent-broken":
            raise ValueError("cannot convert float NaN to integer")
        return real(self, txn, task, *args, **kw)

    monkeypatch.setattr(eviction.Evictor, "place", place)
    snap = snapshot(
        node("n1").resources(cpu="4", memory="16Gi"),
        podgroup("low").priority(1).inqueue(),
        podgroup("broken").priority(1000).inqueue(),
        podgroup("urgent").priority(999).inqueue(),
        pod("low-0").group("low").requests(cpu="2").priority(1).on("n1"),
        pod("low-1").group("low").requests(cpu="2").priority(1).on("n1"),
        pod("urgent-broken").group("broken").requests(cpu="2").priority(1000),
        pod("urgent").group("urgent").requests(cpu="2").priority(999),
    )
    policy = """
actions: "enqueue, allocate, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""
    report = cycle.run_cycle(snap, catalog.load_pipeline(policy), clock=FixedClock(START))
    assert [e.pod for e in report.result.evictions] == ["default/low-1"]
    assert report.result.pipelined == {"default/urgent": "n1"}
    assert report.result.unschedulable["default/urgent-broken"] == (
        "preempt failed for podgroup default/broken: "
        "ValueError: cannot convert float NaN to integer"
    )


def test_a_converter_raising_on_one_pod_makes_that_pods_problem_and_keeps_the_others(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = PodConverter.convert

    def convert(self: PodConverter, obj: Any) -> Any:
        if obj["metadata"]["name"] == "strange":
            raise RecursionError("maximum recursion depth exceeded")
        return real(self, obj)

    monkeypatch.setattr(PodConverter, "convert", convert)
    cache = SchedulerCache(clock=FixedClock(dt.datetime(2026, 1, 1, tzinfo=dt.UTC)))
    raw = [
        {
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
            "spec": {"schedulerName": "vscheduler", "containers": []},
            "status": {"phase": "Pending"},
        }
        for name in ("strange", "plain")
    ]
    with caplog.at_level(logging.ERROR, logger="vscheduler.cache.entries"):
        cache.replace(POD, raw)
    tasks = cache.snapshot().tasks
    assert tasks["uid-strange"].problem == (
        "Pod ns/strange: cannot be read: RecursionError: maximum recursion depth exceeded"
    )
    assert tasks["uid-plain"].problem == ""
    assert cache.problems() == {"Pod ns/strange": tasks["uid-strange"].problem}
    assert caplog.messages == ["cannot convert Pod ns/strange"]


def test_simulate_and_the_loop_tell_the_action_error_with_the_job(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    import yaml

    from vscheduler import simulate
    from vscheduler.runtime.policy import PolicyHolder
    from vscheduler.runtime.scheduler import Scheduler

    def allocate(self: Statement, task: TaskState, node_index: int) -> None:
        raise IndexError("list index out of range")

    monkeypatch.setattr(Statement, "allocate", allocate)
    objects = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
            "spec": {
                "schedulerName": "vscheduler",
                "containers": [{"name": "m", "resources": {"requests": {"cpu": "1"}}}],
            },
            "status": {"phase": "Pending"},
        },
    ]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(objects))
    warnings: list[str] = []
    simulate.simulate(simulate.Request(snapshots=[str(cluster)], warn=warnings.append))
    job = f"default/{lone_job_name('uid-p')}"
    assert len(warnings) == 1
    assert warnings[0].startswith(
        f"cycle 1: action allocate: podgroup {job}: IndexError: list index out of range (at "
    )

    class Cache:
        generation = 1
        quiet_generation = 0
        gang_arrival = None
        changed = __import__("threading").Event()
        complete = __import__("threading").Event()

        def snapshot(self) -> Any:
            return snapshot(node("n1"), pod("p").requests(cpu="1"))

    class Carrier:
        def stream(self, *_args: object) -> None:
            pass

        def submit(self, *_args: object) -> None:
            pass

        def busy(self) -> bool:
            return False

    class Observer:
        def observe_cycle(self, _report: object) -> None:
            pass

        def observe_skip(self) -> None:
            pass

        def observe_cycle_failed(self, _pending: int) -> None:
            pass

    scheduler = Scheduler(
        cache=Cache(),
        policy=PolicyHolder(),
        effects=Carrier(),
        clock=FixedClock(START),
        observer=Observer(),
        is_synced=lambda: True,
    )
    with caplog.at_level(logging.ERROR, logger="vscheduler.runtime.scheduler"):
        scheduler.run_once()
    (lone,) = snapshot(node("n1"), pod("p").requests(cpu="1")).jobs
    assert [m.split(" (at ")[0] for m in caplog.messages] == [
        f"cycle 1: action allocate: podgroup {lone}: IndexError: list index out of range"
    ]


class PickyOneNode(Picky):
    """Picky's array answers never raise; its one-node answers (predicateNode, nodeOrderNode)
    raise for pod `late`, which the placement asks about the node `early` took."""

    def filter_nodes(self, task: TaskState, idx: Any) -> Any:
        return np.ones(len(idx), dtype=np.bool_)

    def score_nodes(self, task: TaskState, idx: Any) -> Any:
        return np.zeros(len(idx))

    def filter_node(self, task: TaskState, i: int) -> bool:
        if task.facts.name == "late":
            raise KeyError("no label 'zone'")
        return True

    def score_node(self, task: TaskState, i: int) -> float:
        return 0.0


class PickyOneNodeFactory:
    name = "picky"
    plugin = PickyOneNode

    def open(self, _session: object) -> PickyOneNode:
        return PickyOneNode()


def test_a_one_node_answer_raising_for_one_task_skips_that_task_as_its_array_form_would() -> None:
    base = catalog.load_pipeline(None)
    pipeline = dataclasses.replace(
        base, tiers=(*base.tiers, (PluginEntry(Option("picky"), PickyOneNodeFactory()),))
    )
    snap = snapshot(  # five nodes: one changed row is refreshed alone (`Placer._evaluate`)
        *(node(f"n{i}").resources(cpu="8", memory="8Gi") for i in range(5)),
        pod("early").requests(cpu="1").created(1),
        pod("late").requests(cpu="1").created(2),
    )

    report = cycle.run_cycle(snap, pipeline, clock=FixedClock(START))

    assert {b.pod for b in report.result.binds} == {"default/early"}
    assert report.result.unschedulable == {
        "default/late": "plugin picky failed at predicate for this pod: KeyError: \"no label 'zone'\""
    }
    assert report.plugin_errors == (
        "picky predicate: KeyError: \"no label 'zone'\" (pod default/late)",
    )
