"""task-topology: a job's tasks placed by their roles' affinity and anti-affinity (Volcano's
`task-topology`): a parameter server with its workers, the workers apart.

A job's topology is three annotations of its PodGroup (`TaskTopology`, read by
`convert.tasktopology`): `volcano.sh/task-topology-affinity` and
`volcano.sh/task-topology-anti-affinity`, groups of task roles (`ps,worker;ps,chief`: a group of
one role, `ps`, relates the role's pods to each other), and `volcano.sh/task-topology-task-order`
(`ps,worker`: roles placed first, first). A pod's role is its `volcano.sh/task-spec` annotation,
else label (`TaskFacts.task_role`; Volcano Jobs set it, others set it themselves).

When the session opens (Volcano's `initBucket`), each PodGroup with a topology and a pending
task, whose every named role some task of it has (otherwise Volcano ignores the topology, and so
do we), gets buckets (`buckets.JobBuckets`): the tasks of the roles with a relation, those on a
node first (one bucket per node), then the others, each into the bucket it has the most affinity
with (+1 per task it goes with, -1 per task it goes apart from; the lightest bucket on a tie), or
a new bucket when that is negative. Registers, only when some job's topology applies:

- `compare_tasks` (taskOrder): a task in a bucket before one in none; within a job, the bucket
  with more pending tasks first, then the older; within a bucket, the role named earlier in the
  task order, then the role of the stronger relation (self-anti-affinity, affinity,
  self-affinity, anti-affinity).
- `score_nodes` (nodeOrder, `node_local = False`): on a node the task fits (future idle), the
  bucket's tasks already there, minus the tasks placed there this session that it goes apart
  from, plus the bucket's pending tasks less those that must be taken out (largest request
  first) for the rest to fit the node; times `task-topology.weight`, times 100 over the largest
  bucket of the job. No opinion on a task in no bucket.
- `on_allocate` / `on_deallocate`: a placement this session moves the task from its bucket's
  pending tasks to its node (and back when undone).

Arguments (Volcano's): `task-topology.weight` (an integer, 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from vscheduler.plugin_api import ArgumentReader, PluginSession
from vscheduler.plugins.task_topology.plugin import Inert, TaskTopologyPlugin, applying

NAME: Final = "task-topology"
WEIGHT: Final = "task-topology.weight"

__all__ = ["NAME", "WEIGHT", "Factory", "Inert", "TaskTopologyPlugin", "build"]


class Factory:
    """Lives as long as the policy; holds nothing across cycles."""

    name = NAME
    plugin = (TaskTopologyPlugin, Inert)

    def __init__(self, weight: int) -> None:
        self.weight = weight

    def open(self, session: PluginSession) -> TaskTopologyPlugin | Inert:
        """A fresh plugin for `session`: with hooks only when some job's topology applies."""
        jobs = applying(session)
        if not jobs:
            return Inert()
        return TaskTopologyPlugin(session, jobs, self.weight)


def build(arguments: Mapping[str, object]) -> Factory:
    """Read `task-topology.weight` (default 1, as Volcano's)."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    weight = reader.int(WEIGHT, 1)
    reader.finish()
    return Factory(weight)
