"""Fuzzing the pending reasons: on odd clusters, explaining every pod the way `simulate
--explain` does (at the moment allocate decides it) changes no decision, and every queue refusal
in a pending message (allocation or admission) names its plugin, its limit and the numbers, or
the queue's state.

25 examples per test by default, 500 with `HYPOTHESIS_PROFILE=nightly` (bench/README.md).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from vscheduler import catalog, cycle, simulate
from vscheduler.clock import FixedClock
from vscheduler.convert.files import SourcedObject
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.errors import InputError
from vscheduler.framework.registry import Pipeline
from vscheduler.framework.session import Session
from vscheduler.framework.state import TaskState
from vscheduler.testing.strategies import SCHEDULER, clusters

NOW = dt.datetime(2026, 1, 1, 0, 5, tzinfo=dt.UTC)
CAPACITY = """\
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: capacity}, {name: nodeorder}]
"""
HIERARCHY = CAPACITY.replace("{name: capacity}", "{name: capacity, enableHierarchy: true}")
PIPELINES: dict[str, Pipeline] = {
    "default": catalog.load_pipeline(None),
    "capacity": catalog.load_pipeline(CAPACITY),
    "hierarchy": catalog.load_pipeline(HIERARCHY),
}
FUZZ = settings(
    max_examples=500 if os.environ.get("HYPOTHESIS_PROFILE") == "nightly" else 25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

REFUSAL = re.compile(
    r"queue \S+ (has no room left for this pod|is overused) \((proportion|capacity):"
    r" (ancestor \S+'s )?allocated .+ \+ this pod's .+ exceed (its deserved share|its capability"
    r"|what the other queues' guarantees leave it|the cluster's allocatable|the Ready nodes'"
    r" allocatable|(its|\S+'s) (capability|realCapability)) \(.+\)\)"
    r"|queue \S+ is (Closed|Closing|Unknown) \((proportion|capacity): its pods are not placed"
    r" while its status.state is \w+, only when it is Open\)"
    r"|queue \S+ runs no pod \(capacity: its place in the queue tree is invalid\)"
)
NOT_ADMITTED = re.compile(
    r"not admitted to queue \S+ \((overcommit|proportion|capacity): (minResources .+ \+ what"
    r" .+ exceed .+ \(.+\)|its place in the queue tree is invalid)\)"
)


@FUZZ
@given(clusters(), st.sampled_from(sorted(PIPELINES)))
def test_explaining_changes_no_decision_and_every_queue_refusal_names_its_limit(
    objects: list[dict[str, Any]], policy: str
) -> None:
    sourced = [SourcedObject(f"cluster.yaml#{i + 1}", o) for i, o in enumerate(objects)]
    try:
        snap = build_snapshot(sourced, scheduler_name=SCHEDULER, taken_at=NOW)
    except InputError:
        return  # simulate's path names it (test_fuzz_objects)
    pipeline = PIPELINES[policy]
    plain = cycle.run_cycle(snap, pipeline, clock=FixedClock(NOW)).result
    verdicts: dict[str, str] = {}

    def watch(session: Session, task: TaskState, verdict: str) -> None:
        simulate.explain(session, task)
        verdicts.setdefault(task.key, verdict)

    watched = cycle.run_cycle(snap, pipeline, clock=FixedClock(NOW), watch=watch).result

    assert (watched.binds, watched.evictions, watched.pipelined) == (
        plain.binds,
        plain.evictions,
        plain.pipelined,
    )
    assert watched.unschedulable == plain.unschedulable
    for key, message in plain.unschedulable.items():
        if any(f" {w} (" in message for w in ("has no room left for this pod", "is overused")):
            assert REFUSAL.search(message), message
        if "not admitted to queue" in message:
            assert NOT_ADMITTED.search(message), message
        verdict = verdicts.get(key, "")
        if verdict and not verdict.endswith(" allows this pod"):
            assert verdict in message, (verdict, message)
