"""Volcano's e2e enqueue tests, transcribed from `test/e2e/schedulingaction/enqueue.go`
("Enqueue E2E Test").

The cluster, the vcjobs and the policy are as in `test_volcano_e2e_allocate.py`: nodes
`node-1`.. of 2 cpu and 2Gi and nothing else on them; each vcjob one PodGroup (`minMember` the
task's `Min`, `minTaskMember` the replicas, `minResources` the first `minMember` pods'
requests) and one pod per replica, `<job>-<job>-task-0-<i>`; the policy the e2e chart's
`volcano-scheduler-ci.conf` (its `network-topology-aware` a no-op without HyperNodes).

Transcribed:
- "allocate work even not config enqueue action": the same policy with `enqueue` removed from
  `actions`; two jobs created one after the other each run (allocate takes Pending PodGroups
  when `enqueue` is not configured, as Volcano's allocate does).
- "Scheduling gated task will not consume inqueue resources": the gated job is admitted but
  not placed, and its gated pods' requests are left out of what it reserves. The test asks
  for no node limit, so the cluster is the whole kind cluster; here two nodes of 2 cpu
  (`ClusterSize` of one cpu: 4). The objects are raw, read by the converter (the builders have
  no gate), and the gated job is the oldest, as it is created first.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from vscheduler.convert.files import SourcedObject
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.model.cluster import ClusterSnapshot, complete_jobs
from vscheduler.testing.builders import START, Item, node, pod, podgroup, snapshot
from vscheduler.testing.kind_e2e import CI_POLICY as POLICY
from vscheduler.testing.scenario import run

WITHOUT_ENQUEUE = POLICY.replace('"enqueue, allocate', '"allocate')
HOSTNAME = "kubernetes.io/hostname"


def nodes(count: int) -> list[Item]:
    """`NodesNumLimit` nodes of `NodesResourceLimit` (2 cpu, 2Gi) free room."""
    return [
        node(f"node-{i}").resources(cpu="2", memory="2Gi").label(HOSTNAME, f"node-{i}")
        for i in range(1, count + 1)
    ]


def vcjob(name: str, *, millicpu: int, mebibytes: int) -> list[Item]:
    """The PodGroup and pod Volcano's job controller makes of a one-replica e2e JobSpec."""
    task = f"{name}-task-0"
    group = (
        podgroup(name)
        .controlled()
        .min_member(1)
        .min_task_member(**{task: 1})
        .min_resources(cpu=f"{millicpu}m", memory=f"{mebibytes}Mi")
    )
    member = pod(f"{name}-{task}-0").group(name).role(task)
    return [group, member.requests(cpu=f"{millicpu}m", memory=f"{mebibytes}Mi")]


def joined(snap: ClusterSnapshot, *items: Item) -> ClusterSnapshot:
    """The cluster with the objects of `items` created."""
    more = snapshot(*items)
    tasks = {**snap.tasks, **more.tasks}
    jobs = {**snap.jobs, **more.jobs}
    return dataclasses.replace(snap, tasks=tasks, jobs=complete_jobs(tasks, jobs))


def test_without_the_enqueue_action_jobs_are_still_allocated() -> None:
    """ "allocate work even not config enqueue action": with `enqueue` removed from the
    actions, on two nodes of 2 cpu, "low" (500m) and then "high" (1 cpu) both become ready."""
    low = vcjob("low", millicpu=500, mebibytes=512)
    high = vcjob("high", millicpu=1000, mebibytes=1024)
    first, second = run(
        snapshot(*nodes(2), *low),
        policy=WITHOUT_ENQUEUE,
        cycles=2,
        between=lambda _, snap: joined(snap, *high),
    )

    assert list(first.binds) == ["default/low-low-task-0-0"]
    assert list(second.binds) == ["default/high-high-task-0-0"]


# --- scheduling gates: raw objects, as the converter reads them -------------------------------
Raw = dict[str, Any]


def raw_node(name: str) -> Raw:
    """A node of 2 cpu and 2Gi."""
    allocatable = {"cpu": "2", "memory": "2Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME: name}},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def raw_vcjob(name: str, replicas: int, created: int, *, gated: bool = False) -> list[Raw]:
    """A vcjob of `replicas` pods of one cpu, all required (`minAvailable` = replicas), created
    `created` seconds after the epoch; its pods gated by g1 when `gated`."""
    task = f"{name}-task-0"
    stamp = (START + dt.timedelta(seconds=created)).strftime("%Y-%m-%dT%H:%M:%SZ")
    group: Raw = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "test-namespace", "creationTimestamp": stamp},
        "spec": {
            "queue": "default",
            "minMember": replicas,
            "minTaskMember": {task: replicas},
            "minResources": {"cpu": str(replicas)},
        },
        "status": {"phase": "Pending"},
    }
    spec: Raw = {
        "schedulerName": "volcano",
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
    }
    if gated:
        spec["schedulingGates"] = [{"name": "g1"}]
    annotations = {"scheduling.k8s.io/group-name": name, "volcano.sh/task-spec": task}
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{task}-{i}",
                "namespace": "test-namespace",
                "uid": f"uid-{name}-{i}",
                "creationTimestamp": stamp,
                "annotations": annotations,
            },
            "spec": spec,
            "status": {"phase": "Pending"},
        }
        for i in range(replicas)
    ]
    return [group, *pods]


def cluster(*objects: Raw) -> ClusterSnapshot:
    sourced = [SourcedObject(f"e2e.yaml#{i + 1}", o) for i, o in enumerate(objects)]
    return build_snapshot(sourced, scheduler_name="volcano")


def test_gated_pods_neither_run_nor_hold_room_that_other_jobs_need() -> None:
    """ "Scheduling gated task will not consume inqueue resources": j-gated (four pods of one
    cpu, the whole cluster, all required, all gated) is created first, then job1 and job2
    (two pods each): j-gated's pods stay pending and job1 and job2 become ready."""
    [outcome] = run(
        cluster(
            raw_node("node-1"),
            raw_node("node-2"),
            *raw_vcjob("j-gated", 4, 0, gated=True),
            *raw_vcjob("job1", 2, 1),
            *raw_vcjob("job2", 2, 2),
        ),
        policy=POLICY,
    )

    assert sorted(outcome.binds) == [
        "test-namespace/job1-job1-task-0-0",
        "test-namespace/job1-job1-task-0-1",
        "test-namespace/job2-job2-task-0-0",
        "test-namespace/job2-job2-task-0-1",
    ]
