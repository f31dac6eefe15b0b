"""`complete_jobs` with a memo: the implicit job of an unchanged pod is made once, and with the
changed uids only those pods are looked at; either way the jobs, and their order, are exactly
those of a walk over every task."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from vscheduler.model import cluster
from vscheduler.model.cluster import ImplicitJobs, complete_jobs, lone_job_name
from vscheduler.model.facts import JobFacts, TaskFacts
from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.builders import pod, podgroup, snapshot


def test_the_same_task_facts_give_the_same_job_object_and_a_changed_task_a_new_one() -> None:
    tasks = dict(snapshot(pod("a"), pod("b")).tasks)
    memo = ImplicitJobs()
    first = complete_jobs(tasks, {}, memo)
    again = complete_jobs(tasks, {}, memo)
    assert all(again[key] is first[key] for key in first)
    uid = next(u for u, t in tasks.items() if t.name == "a")
    tasks[uid] = dataclasses.replace(tasks[uid], priority=7)
    changed = complete_jobs(tasks, {}, memo)
    job_a = tasks[uid].job
    assert changed[job_a] is not first[job_a]
    assert changed[job_a].priority == 7
    assert changed == complete_jobs(tasks, {})  # the memo changes no job


def test_the_memo_keeps_only_the_jobs_of_the_last_call() -> None:
    tasks = dict(snapshot(pod("a"), pod("b")).tasks)
    memo = ImplicitJobs()
    complete_jobs(tasks, {}, memo)
    assert len(memo) == 2
    gone = next(iter(tasks))
    del tasks[gone]
    complete_jobs(tasks, {}, memo, frozenset({gone}))
    assert len(memo) == 1


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per walk over every task from now on."""
    counted: list[int] = []
    walk = cluster._walk

    def counting(*args: Any) -> dict[str, JobFacts]:
        counted.append(1)
        return walk(*args)

    monkeypatch.setattr(cluster, "_walk", counting)
    return counted


def patched(
    old: dict[str, TaskFacts], tasks: dict[str, TaskFacts], walks: list[int]
) -> list[tuple[str, JobFacts]]:
    """`complete_jobs` of `tasks` with a memo made on `old` and told what came since: patched,
    not walked, and the memo in task order."""
    memo = ImplicitJobs()
    complete_jobs(old, {}, memo)
    before = len(walks)
    out = complete_jobs(tasks, {}, memo, frozenset(tasks.keys() - old.keys()))
    assert len(walks) == before
    assert list(memo.jobs) == [task.job for task in tasks.values()]
    return list(out.items())


def test_new_lone_pods_after_the_others_are_added_without_a_walk(walks: list[int]) -> None:
    old = dict(snapshot(*(pod(f"p{i}") for i in range(5))).tasks)
    new = dict(snapshot(*(pod(f"p{i}") for i in range(8))).tasks)
    tasks = {**old, **{uid: t for uid, t in new.items() if uid not in old}}
    assert patched(old, tasks, walks) == list(complete_jobs(tasks, {}).items())


def test_new_lone_pods_among_the_others_are_put_in_place_without_a_walk(walks: list[int]) -> None:
    # Pods created in the same second are ordered by uid: a new one may land among the last.
    everyone = list(snapshot(*(pod(f"p{i}") for i in range(8))).tasks.items())
    old = dict(everyone[:2] + everyone[3:5] + everyone[6:7])
    tasks = dict(everyone)
    assert patched(old, tasks, walks) == list(complete_jobs(tasks, {}).items())


def test_a_lone_pod_on_a_node_makes_a_running_job_and_a_pending_one_a_pending_job() -> None:
    tasks = snapshot(pod("placed").on("n1"), pod("waiting")).tasks
    jobs = complete_jobs(tasks, {})
    phase = {task.name: jobs[task.job].phase for task in tasks.values()}
    assert phase == {"placed": PodGroupPhase.RUNNING, "waiting": PodGroupPhase.PENDING}


def test_pods_of_one_template_share_one_template_key_object() -> None:
    tasks = list(snapshot(pod("a"), pod("b"), pod("c").requests(cpu="3")).tasks.values())
    keys = {task.name: task.template_key() for task in tasks}
    assert keys["a"] is keys["b"]
    assert keys["c"] != keys["a"]


# --- any sequence of changes: patched as walked -------------------------------------------------
_BASE = snapshot(pod("base")).tasks
_LONE = next(iter(_BASE.values()))
_GROUPED = next(iter(snapshot(pod("base").group("g1")).tasks.values()))
_PODGROUP = podgroup("g1").build()


def _task(n: int, kind: str) -> TaskFacts:
    """Task `n`: a lone pod, a member of PodGroup g1, or another scheduler's pod (no job)."""
    uid, name = f"u{n}", f"t{n}"
    if kind == "grouped":
        return dataclasses.replace(_GROUPED, uid=uid, name=name)
    job = f"default/{lone_job_name(uid)}" if kind == "lone" else ""
    return dataclasses.replace(_LONE, uid=uid, name=name, job=job)


def _claiming(uid: str) -> JobFacts:
    """A PodGroup of the name Volcano's controller gives the PodGroup of pod `uid`."""
    return dataclasses.replace(_PODGROUP, uid=f"pg-{uid}", name=lone_job_name(uid))


def test_a_podgroup_named_as_a_lone_pods_job_takes_its_place_and_gives_it_back_without_a_walk(
    walks: list[int],
) -> None:
    tasks = {t.uid: t for t in (_task(n, "lone") for n in range(4))}
    memo = ImplicitJobs()
    complete_jobs(tasks, {}, memo)
    claim = _claiming("u2")
    out: dict[str, JobFacts] = {}
    for jobs in ({_PODGROUP.key: _PODGROUP}, {_PODGROUP.key: _PODGROUP, claim.key: claim}, {}):
        walked = len(walks)
        out = complete_jobs(tasks, jobs, memo, frozenset())
        assert len(walks) == walked
        assert list(out.items()) == list(complete_jobs(tasks, jobs).items())
    assert out[claim.key].synthetic  # given back: the implicit job again


STEPS = st.lists(
    st.tuples(
        st.sampled_from(
            ("add", "add", "add at end", "remove", "replace", "regroup", "podgroup", "claim")
        ),
        st.integers(0, 1_000),
        st.sampled_from(("lone", "lone", "grouped", "foreign")),
    ),
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(STEPS, st.lists(st.integers(0, 1_000), max_size=3))
def test_any_changes_patched_give_exactly_the_jobs_of_a_walk(
    steps: list[tuple[str, int, str]], extra: list[int]
) -> None:
    order: list[TaskFacts] = [_task(i, "lone") for i in range(4)]
    jobs: dict[str, JobFacts] = {}
    memo = ImplicitJobs()
    complete_jobs({t.uid: t for t in order}, jobs, memo)
    made = 4
    for op, at, kind in steps:
        before = {t.uid: t for t in order}
        i = at % len(order) if order else 0
        if op.startswith("add"):
            made += 1
            order.insert(
                len(order) if op == "add at end" else at % (len(order) + 1), _task(made, kind)
            )
        elif op == "remove" and order:
            del order[i]
        elif op == "replace" and order:
            order[i] = dataclasses.replace(order[i], priority=order[i].priority + 1)
        elif op == "regroup" and order:
            uid = order[i].uid
            grouped = order[i].group_name is None
            order[i] = dataclasses.replace(_task(int(uid[1:]), "grouped" if grouped else "lone"))
        elif op == "podgroup":
            jobs = dict(jobs)
            if jobs.pop(_PODGROUP.key, None) is None:
                jobs[_PODGROUP.key] = _PODGROUP
        elif op == "claim":  # a PodGroup named as task n's implicit job comes, or goes
            claim = _claiming(f"u{at % (made + 1)}")
            jobs = dict(jobs)
            if jobs.pop(claim.key, None) is None:
                jobs[claim.key] = claim
        tasks = {t.uid: t for t in order}
        changed = {
            uid for uid in before.keys() | tasks.keys() if before.get(uid) is not tasks.get(uid)
        }
        changed |= {order[x % len(order)].uid for x in extra if order}  # more than changed: fine
        patched = complete_jobs(tasks, jobs, memo, frozenset(changed))
        assert list(patched.items()) == list(complete_jobs(tasks, jobs).items())
