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
from vscheduler.testing.builders import Item, NodeBuilder, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import run
from vscheduler.testing.strategies import SCHEDULER, clusters

NOW = dt.datetime(2026, 1, 1, 0, 5, tzinfo=dt.UTC)
CAPACITY = """\
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: capacity}, {name: nodeorder}]
"""
HIERARCHY = CAPACITY.replace("{name: capacity}", "{name: capacity, enableHierarchy: true}")
PIPELINE_TEXT: dict[str, str | None] = {
    "default": None,
    "capacity": CAPACITY,
    "hierarchy": HIERARCHY,
}
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


CPU = re.compile(r"allocated cpu (\d+m?) \+ this pod's cpu (\d+m?) exceed .*\(cpu (\d+m?)\)\)")


def _millicores(amount: str) -> int:
    return int(amount[:-1]) if amount.endswith("m") else int(amount) * 1000


@st.composite
def _queued_cluster(draw: st.DrawFn) -> list[Item]:
    """1-3 nodes of 1-8 CPU, queues of weight 1-3 with a capability or guarantee now and then,
    and 1-8 one-pod jobs of 1-4 CPU in them: queues refuse, nodes refuse, or both."""
    items: list[Item] = []
    for i in range(draw(st.integers(1, 3))):
        items.append(node(f"n{i}").resources(cpu=str(draw(st.integers(1, 8))), memory="64Gi"))
    names = ["default"] + [f"q{i}" for i in range(draw(st.integers(0, 2)))]
    for name in names[1:]:
        q = queue(name).weight(draw(st.integers(1, 3)))
        if draw(st.booleans()):
            q = q.capability(cpu=str(draw(st.integers(1, 6))))
        if draw(st.integers(0, 3)) == 0:
            q = q.guarantee(cpu=str(draw(st.integers(1, 6))))
        items.append(q)
    for i in range(draw(st.integers(1, 8))):
        cpu = str(draw(st.integers(1, 4)))
        items.append(podgroup(f"j{i}").queue(draw(st.sampled_from(names))))
        items.append(pod(f"j{i}-0").group(f"j{i}").requests(cpu=cpu, memory="1Gi"))
    return items


@FUZZ
@given(_queued_cluster(), st.sampled_from(sorted(PIPELINES)))
def test_a_queue_refusal_states_amounts_that_really_exceed_the_limit(
    items: list[Item], policy: str
) -> None:
    (outcome,) = run(snapshot(*items), policy=PIPELINE_TEXT[policy])
    nodes = sum(1 for i in items if isinstance(i, NodeBuilder))
    for message in outcome.unschedulable.values():
        if message.startswith("0/"):
            assert message.startswith(f"0/{nodes} nodes are available: "), message
        if " has no room left for this pod (" in message or " is overused (" in message:
            assert REFUSAL.search(message), message
            found = CPU.search(message)
            assert found is not None, message
            allocated, asked, limit = (_millicores(g) for g in found.groups())
            assert allocated + asked > limit, message
