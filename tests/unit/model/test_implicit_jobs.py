"""`complete_jobs` with a memo: the implicit job of an unchanged pod is made once."""

from __future__ import annotations

import dataclasses

from vscheduler.model.cluster import ImplicitJobs, complete_jobs
from vscheduler.model.status import PodGroupPhase
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
