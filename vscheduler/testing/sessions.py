"""Open a session for a test: the one place test code builds a `Session`.

    session = open_session(snapshot(node("n1"), pod("p")), POLICY, now=START)

Owns: opening a session on a snapshot at a fixed time, from policy text (the default policy when
none), a built `Pipeline`, or raw tiers of plugin entries (stand-in plugins, or none at all);
`assert_same_opening`, which checks that two sessions opened on one snapshot (one from the last
session's records, one afresh) start alike.
A change to how a `Session` is constructed is made here, and in `vscheduler.cycle`, only.
Must not: run actions (`scenario.run` runs whole cycles) or change the session it returns.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.framework import podindex
from vscheduler.framework.registry import Pipeline
from vscheduler.framework.session import PluginEntry, Session
from vscheduler.model.cluster import ClusterSnapshot, cache_job_order, cache_task_order
from vscheduler.model.resources import total
from vscheduler.model.status import TaskStatus
from vscheduler.testing.builders import START


def open_session(
    snap: ClusterSnapshot,
    policy: str | Pipeline | None = None,
    *,
    now: dt.datetime = START,
) -> Session:
    """A session opened on `snap` as a cycle opens it, no action run (to test plugin hooks
    directly). `policy`: the policy's text (None: the default policy) or a built pipeline."""
    pipeline = policy if isinstance(policy, Pipeline) else catalog.load_pipeline(policy)
    return cycle.open_session(snap, pipeline, clock=FixedClock(now))


def open_session_on_tiers(
    snap: ClusterSnapshot,
    tiers: Sequence[Sequence[PluginEntry]],
    *,
    actions: Sequence[str] = (),
    now: dt.datetime = START,
) -> Session:
    """A session on raw tiers of plugin entries, no policy parsed: stand-in plugins a test
    defines itself, or none at all (`tiers=[]`)."""
    return Session(snap, tiers, clock=FixedClock(now), actions=actions)


LEDGER_ARRAYS = (
    "allocatable",
    "used",
    "idle",
    "releasing",
    "pipelined",
    "future",
    "pods_used",
    "pods_max",
    "pods_free",
    "pods_free_future",
    "pods_releasing",
)


def assert_same_opening(opened: Session, afresh: Session) -> None:
    """Two sessions opened on one snapshot (`opened` from the last session's records,
    `Session.carried`; `afresh` from none) hold the same ledger, records, pending jobs,
    nominations and notes. Closes both (no action run)."""
    a, b = opened.ledger, afresh.ledger
    assert (a.dims, a.names, a.nodes) == (b.dims, b.names, b.nodes)
    for name in LEDGER_ARRAYS:
        assert (getattr(a, name) == getattr(b, name)).all(), name
    assert (a.full_now, a.full_future) == (b.full_now, b.full_future)
    assert [j.key for j in opened.jobs_with_pending] == [j.key for j in afresh.jobs_with_pending]
    assert opened.nominations == afresh.nominations
    for name in {j.queue for j in afresh.jobs.values()}:
        jobs = [j for j in afresh.jobs.values() if j.queue == name]
        plain = total(j.allocated for j in jobs if j.facts.min_resources is None)
        counted = (plain, total(j.pending_request for j in jobs))
        assert opened.queue_totals.of(name) == afresh.queue_totals.of(name) == counted, name
    named = {j.queue for j in afresh.jobs.values()}
    assert opened.queue_totals.held() == afresh.queue_totals.held() == named
    podgroups = [j.key for j in afresh.jobs.values() if not j.facts.synthetic]
    assert [j.key for j in opened.podgroup_jobs] == podgroups
    assert [j.key for j in afresh.podgroup_jobs] == podgroups
    assert list(opened.tasks) == list(afresh.tasks)
    assert list(opened.jobs) == list(afresh.jobs)
    phase_pending = [k for k, j in afresh.jobs.items() if j.is_pending()]
    assert [j.key for j in opened.pending_jobs] == phase_pending
    assert [j.key for j in afresh.pending_jobs] == phase_pending
    with_pending = [k for k, j in afresh.jobs.items() if j.count(TaskStatus.PENDING)]
    assert [j.key for j in afresh.jobs_with_pending] == with_pending
    snap = afresh.snapshot
    if snap.cache_order:  # the order a session sorts a few tasks or jobs into
        assert list(snap.tasks) == sorted(snap.tasks, key=lambda u: cache_task_order(snap.tasks[u]))
        assert list(snap.jobs) == sorted(snap.jobs, key=lambda k: cache_job_order(snap.jobs[k]))
    for name in ("tasks_with_host_ports", "tasks_with_terms"):
        assert [t.uid for t in getattr(opened, name)] == [t.uid for t in getattr(afresh, name)]
    with_terms = [uid for uid, t in afresh.tasks.items() if podindex.has_terms(t.facts)]
    assert [t.uid for t in afresh.tasks_with_terms] == with_terms
    assert _records(opened) == _records(afresh)
    staged = {
        t.key: t.node or ""
        for t in afresh.tasks.values()
        if t.status in (TaskStatus.ALLOCATED, TaskStatus.PIPELINED)
    }
    ours = afresh.snapshot.scheduler_name
    waiting = [
        t.key
        for t in afresh.tasks.values()
        if t.status is TaskStatus.PENDING and t.node is None and t.facts.scheduler_name == ours
    ]
    result = afresh.close()
    assert opened.close() == result
    assert result.pipelined == staged
    assert list(result.unschedulable) == waiting


def _records(session: Session) -> tuple[object, ...]:
    tasks = {
        uid: (t.facts, t.status, t.node_index, t.job.key if t.job else None)
        for uid, t in session.tasks.items()
    }
    jobs = {
        k: (j.facts, j.count(*TaskStatus), j.allocated, list(j.tasks))
        for k, j in session.jobs.items()
    }
    return tasks, jobs
