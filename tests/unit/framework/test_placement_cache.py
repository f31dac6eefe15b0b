"""The placer's per-class evaluations, kept up to date node by node as a session places,
pipelines, evicts and takes back tasks, equal an evaluation made afresh over every node: the
same predicate answers, fits and scores, to the last bit (the one-node refresh, in scalars,
included)."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import given, settings, strategies as st

from vscheduler.framework.placement import ClassEval, Placer
from vscheduler.framework.session import Session
from vscheduler.framework.state import TaskState
from vscheduler.model.status import TaskStatus
from vscheduler.testing import sessions
from vscheduler.testing.builders import node, pod, snapshot

FIELDS = ("pred_ok", "fit_idle", "fit_future", "score", "idle_score", "future_score")
POLICY = """\
actions: ""
tiers:
- plugins:
  - name: predicates
  - name: nodeorder
    arguments:
      mostrequested.weight: 3
  - name: binpack
    arguments:
      binpack.cpu: 2
"""
CLASSES = (
    {"cpu": "1", "memory": "1Gi"},
    {"cpu": "2500m", "memory": "3Gi"},
    {"cpu": "500m", "memory": "6Gi"},
)


def afresh(placer: Placer, task: TaskState) -> ClassEval:
    """`task`'s class evaluated over every node by a placer with no cache."""
    fresh = copy.copy(placer)
    fresh._classes = {}
    return fresh._evaluate(task)


def assert_same(session: Session) -> None:
    placer = session.placer
    seen: set[int] = set()
    for task in session.tasks.values():
        if task.class_id in seen or task.status is not TaskStatus.PENDING:
            continue
        seen.add(task.class_id)
        kept, fresh = placer._evaluate(task), afresh(placer, task)
        for name in FIELDS:
            assert np.array_equal(getattr(kept, name), getattr(fresh, name)), (name, task.uid)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_evaluations_kept_node_by_node_equal_fresh_ones(data: st.DataObject) -> None:
    nodes = [
        node(f"n{i}").resources(
            cpu=data.draw(st.integers(1, 8)),
            memory=f"{data.draw(st.integers(1, 16))}Gi",
            pods=data.draw(st.integers(1, 4)),
        )
        for i in range(data.draw(st.integers(2, 6)))
    ]
    running = [
        pod(f"r{i}").requests(cpu="1", memory="2Gi").on(f"n{i}")
        for i in range(len(nodes))
        if data.draw(st.booleans())
    ]
    pending = [pod(f"p{k}").requests(**data.draw(st.sampled_from(CLASSES))) for k in range(8)]
    session = sessions.open_session(snapshot(*nodes, *running, *pending), POLICY)
    assert_same(session)  # caches made now
    stmt = session.statement()
    for _ in range(data.draw(st.integers(1, 12))):
        move = data.draw(st.sampled_from(("allocate", "pipeline", "evict", "discard")))
        waiting = [t for t in session.tasks.values() if t.status is TaskStatus.PENDING]
        held = [t for t in session.tasks.values() if t.status is TaskStatus.RUNNING]
        where = data.draw(st.integers(0, len(nodes) - 1))
        if move == "allocate" and waiting:
            stmt.allocate(data.draw(st.sampled_from(waiting)), where)
        elif move == "pipeline" and waiting:
            stmt.pipeline(data.draw(st.sampled_from(waiting)), where)
        elif move == "evict" and held:
            stmt.evict(data.draw(st.sampled_from(held)), "test")
        elif move == "discard":
            stmt.discard()
            stmt = session.statement()
        assert_same(session)
