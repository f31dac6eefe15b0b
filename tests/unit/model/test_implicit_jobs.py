"""`complete_jobs` with a memo: the implicit job of an unchanged pod is made once."""

from __future__ import annotations

import dataclasses

from vscheduler.model.cluster import ImplicitJobs, complete_jobs
from vscheduler.testing.builders import pod, snapshot


def test_the_same_task_facts_give_the_same_job_object_and_a_changed_task_a_new_one() -> None:
    tasks = dict(snapshot(pod("a"), pod("b")).tasks)
    memo: ImplicitJobs = {}
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
    memo: ImplicitJobs = {}
    complete_jobs(tasks, {}, memo)
    assert len(memo) == 2
    gone = next(iter(tasks))
    del tasks[gone]
    complete_jobs(tasks, {}, memo)
    assert len(memo) == 1
