"""Node and job accounting stay exact under any sequence of statement operations (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from vscheduler.framework.session import Session
from vscheduler.framework.state import TaskState
from vscheduler.model.resources import Resources, total
from vscheduler.model.status import OCCUPYING, TaskStatus
from vscheduler.plugins.drf import Drf, dominant_share
from vscheduler.testing import sessions
from vscheduler.testing.builders import node, pod, snapshot

NODES = 3
PENDING = 6
RUNNING = 3


def open_session() -> Session:
    nodes = [node(f"n{i}").resources(cpu="4", memory="8Gi", pods=1 + i) for i in range(NODES)]
    pending = [pod(f"p{i}").requests(cpu=f"{(i % 3) + 1}", memory="1Gi") for i in range(PENDING)]
    running = [
        pod(f"r{i}").requests(cpu="1", memory="512Mi").on(f"n{i % NODES}") for i in range(RUNNING)
    ]
    return sessions.open_session_on_tiers(snapshot(*nodes, *pending, *running), [])


def test_the_ready_sums_leave_out_the_nodes_not_ready_and_follow_every_change() -> None:
    nodes = [node("n0").resources(cpu="4", memory="8Gi"), node("n1").resources(cpu="2").not_ready()]
    running = pod("r").requests(cpu="1", memory="1Gi").on("n0")
    session = sessions.open_session_on_tiers(
        snapshot(*nodes, running, pod("p").requests(cpu=1)), []
    )
    ledger = session.ledger
    assert ledger.ready_sums() == (
        Resources(cpu=4000, memory=8 * 2**30),
        Resources(cpu=1000, memory=2**30),
    )
    ledger.occupy(0, ledger.vector(Resources(cpu=500)))
    assert ledger.ready_sums()[1] == Resources(cpu=1500, memory=2**30)
    ledger.occupy(1, ledger.vector(Resources(cpu=500)))  # a node not Ready
    assert ledger.ready_sums()[1] == Resources(cpu=1500, memory=2**30)


def check_books(session: Session) -> None:
    ledger = session.ledger
    assert np.array_equal(ledger.idle + ledger.used, ledger.allocatable)
    assert np.array_equal(ledger.future, ledger.idle + ledger.releasing - ledger.pipelined)
    used = np.zeros_like(ledger.used)
    releasing = np.zeros_like(ledger.used)
    pipelined = np.zeros_like(ledger.used)
    pods = np.zeros(len(ledger), dtype=np.int64)
    pods_releasing = np.zeros(len(ledger), dtype=np.int64)
    for task in session.tasks.values():
        if task.node_index < 0:
            continue
        pods[task.node_index] += 1
        pods_releasing[task.node_index] += task.status is TaskStatus.RELEASING
        row = ledger.vector(task.resreq)
        if task.status in OCCUPYING or task.status is TaskStatus.RELEASING:
            used[task.node_index] += row
        if task.status is TaskStatus.RELEASING:
            releasing[task.node_index] += row
        if task.status is TaskStatus.PIPELINED:
            pipelined[task.node_index] += row
    assert np.array_equal(ledger.used, used)
    assert np.array_equal(ledger.releasing, releasing)
    assert np.array_equal(ledger.pipelined, pipelined)
    assert np.array_equal(ledger.pods_used, pods)
    assert np.array_equal(ledger.pods_releasing, pods_releasing)
    assert np.array_equal(ledger.pods_free, ledger.pods_max - pods)
    assert np.array_equal(ledger.pods_free_future, ledger.pods_max - pods + pods_releasing)
    assert ledger.full_now == np.count_nonzero(ledger.pods_free <= 0)
    assert ledger.full_future == np.count_nonzero(ledger.pods_free_future <= 0)
    ready = ledger.ready()
    assert ledger.ready_sums() == (
        ledger.resources_of(ledger.allocatable[ready].sum(axis=0)),
        ledger.resources_of(ledger.used[ready].sum(axis=0)),
    )
    check_jobs(session)


def check_jobs(session: Session) -> None:
    """Every job's allocation is what its tasks hold, its pending request what its pending tasks
    ask, and drf (which reads the allocation, registering no event handlers) shares out exactly
    what a share recomputed from the tasks would."""
    drf = Drf(session)
    for job in session.jobs.values():
        holding = [
            t.resreq
            for t in job.tasks.values()
            if t.status in OCCUPYING or t.status is TaskStatus.PIPELINED
        ]
        assert job.allocated == total(holding)
        pending = [t.resreq for t in job.tasks.values() if t.status is TaskStatus.PENDING]
        assert job.pending_request == total(pending)
        assert drf._share_of(job) == dominant_share(total(holding), drf.total)


operation = st.tuples(
    st.sampled_from(["allocate", "pipeline", "evict", "end"]),
    st.integers(0, 100),
    st.integers(0, NODES - 1),
    st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(operation, max_size=30))
def test_idle_plus_used_equals_allocatable_after_any_sequence(
    ops: list[tuple[str, int, int, bool]],
) -> None:
    session = open_session()
    stmt = session.statement()
    for kind, pick, node_index, commit in ops:
        pending = [t for t in session.tasks.values() if t.status is TaskStatus.PENDING]
        running = [t for t in session.tasks.values() if t.status is TaskStatus.RUNNING]
        if kind == "allocate" and pending:
            task = pending[pick % len(pending)]
            if task.resreq.fits_in(session.ledger.resources_of(session.ledger.idle[node_index])):
                stmt.allocate(task, node_index)
        elif kind == "pipeline" and pending:
            stmt.pipeline(pending[pick % len(pending)], node_index)
        elif kind == "evict" and running:
            stmt.evict(running[pick % len(running)], "test")
        elif kind == "end":
            stmt.commit() if commit else stmt.discard()
            stmt = session.statement()
        check_books(session)
        assert (session.ledger.used <= session.ledger.allocatable).all()
    stmt.discard()
    check_books(session)


def test_discard_restores_the_ledger_exactly() -> None:
    session = open_session()
    before = [
        a.copy()
        for a in (
            session.ledger.idle,
            session.ledger.used,
            session.ledger.pipelined,
            session.ledger.releasing,
        )
    ]
    stmt = session.statement()
    tasks: list[TaskState] = [t for t in session.tasks.values() if t.status is TaskStatus.PENDING]
    stmt.allocate(tasks[0], 0)
    stmt.pipeline(tasks[1], 1)
    stmt.evict(next(t for t in session.tasks.values() if t.status is TaskStatus.RUNNING), "x")
    stmt.discard()
    after = (
        session.ledger.idle,
        session.ledger.used,
        session.ledger.pipelined,
        session.ledger.releasing,
    )
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))
    assert all(t.status is TaskStatus.PENDING for t in tasks)
