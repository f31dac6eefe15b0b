"""preempt and reclaim at scale: one cycle each on a full cluster, timings as JSON.

    python -m bench.preempt_reclaim    # 5,000 nodes, 20,000 running, 2,000 pending
    python -m bench.preempt_reclaim --nodes 1000 --running 4000 --pending 400 --gang 10

The cluster: nodes of 4 CPU / 16Gi, every CPU taken by a running 1-CPU / 1Gi pod of elastic jobs
(10 pods each, minMember 1, priority 1). The pending pods, 1 CPU / 1Gi, come in gangs
(`--gang`, minMember = gang size).
- preempt: everything in queue `default`; the gangs have priority 100, so each pending pod
  preempts one running pod. Policy: `enqueue, allocate, preempt, backfill`, default tiers.
- reclaim: the running jobs in queue `lender`, the gangs in queue `borrower` (weights 1:1,
  priority 1): the borrower deserves exactly what it asks, so each pending pod reclaims one
  running pod. Policy: `enqueue, allocate, reclaim, backfill`, default tiers.
Each scenario runs in a fresh process; the output gives the cycle's seconds, each action's
seconds, the victims and pipelined pods, and the peak memory.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.conf.default import DEFAULT_POLICY_TEXT
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import EPOCH, JobFacts, NodeFacts, QueueFacts, TaskFacts
from vscheduler.model.resources import Resources
from vscheduler.model.status import PodGroupPhase, QoSClass, TaskStatus

NODE = Resources({"cpu": 4000, "memory": 16 * 2**30})
POD = Resources({"cpu": 1000, "memory": 2**30})
ACTIONS = {
    "preempt": "enqueue, allocate, preempt, backfill",
    "reclaim": "enqueue, allocate, reclaim, backfill",
}


def policy(action: str) -> str:
    """The default policy with `action` in its actions."""
    first, rest = DEFAULT_POLICY_TEXT.split("\n", 1)
    assert first.startswith("actions:")
    return f'actions: "{ACTIONS[action]}"\n{rest}'


def _task(name: str, job: JobFacts, node: str | None, priority: int) -> TaskFacts:
    return TaskFacts(
        uid=f"bench/{name}",
        namespace="bench",
        name=name,
        job=job.key,
        group_name=job.name,
        resreq=POD,
        status=TaskStatus.RUNNING if node else TaskStatus.PENDING,
        node_name=node,
        scheduler_name="vscheduler",
        priority=priority,
        qos=QoSClass.GUARANTEED,
        created=EPOCH,
    )


def cluster(action: str, nodes: int, running: int, pending: int, gang: int) -> ClusterSnapshot:
    """The benchmark cluster for `action`."""
    node_facts = tuple(
        NodeFacts(name=f"node-{i:05d}", allocatable=NODE, capacity=NODE) for i in range(nodes)
    )
    lender, borrower = ("default", "default") if action == "preempt" else ("lender", "borrower")
    tasks: dict[str, TaskFacts] = {}
    jobs: dict[str, JobFacts] = {}
    for j in range(running // 10):
        job = JobFacts(
            uid=f"low-{j}", namespace="bench", name=f"low-{j:05d}", queue=lender,
            min_member=1, priority=1, phase=PodGroupPhase.RUNNING, created=EPOCH,
        )  # fmt: skip
        jobs[job.key] = job
        for t in range(10):
            k = j * 10 + t
            task = _task(f"{job.name}-{t}", job, node_facts[(k // 4) % nodes].name, 1)
            tasks[task.uid] = task
    high = 100 if action == "preempt" else 1
    for g in range(pending // gang):
        job = JobFacts(
            uid=f"high-{g}", namespace="bench", name=f"high-{g:05d}", queue=borrower,
            min_member=gang, priority=high, phase=PodGroupPhase.INQUEUE, created=EPOCH,
        )  # fmt: skip
        jobs[job.key] = job
        for t in range(gang):
            task = _task(f"{job.name}-{t}", job, None, high)
            tasks[task.uid] = task
    queues = {
        name: QueueFacts(name=name, uid=name, created=EPOCH)
        for name in {"default", lender, borrower}
    }
    return ClusterSnapshot(nodes=node_facts, tasks=tasks, jobs=jobs, queues=queues, taken_at=EPOCH)


def measure(action: str, nodes: int, running: int, pending: int, gang: int) -> dict[str, object]:
    """Build the cluster, run one cycle, report."""
    t0 = time.perf_counter()
    snap = cluster(action, nodes, running, pending, gang)
    built = time.perf_counter() - t0
    pipeline = catalog.load_pipeline(policy(action))
    report = cycle.run_cycle(snap, pipeline, clock=FixedClock(EPOCH))
    victims = report.result.evictions
    return {
        "action": action,
        "nodes": nodes,
        "running": running,
        "pending": pending,
        "gang": gang,
        "buildSeconds": round(built, 3),
        "cycleSeconds": round(report.seconds, 3),
        "seconds": round(report.action_seconds[action], 3),
        "victims": len(victims),
        "victimNodes": len({e.node for e in victims}),
        "pipelined": len(report.result.pipelined),
        "actionSeconds": {k: round(v, 3) for k, v in report.action_seconds.items()},
        "pluginErrors": list(report.plugin_errors),
        "peakRssMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    """CLI."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--running", type=int, default=20000)
    parser.add_argument("--pending", type=int, default=2000)
    parser.add_argument("--gang", type=int, default=10)
    parser.add_argument("--only", choices=sorted(ACTIONS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [str(args.nodes), str(args.running), str(args.pending), str(args.gang)]
    if args.only:
        result = measure(args.only, args.nodes, args.running, args.pending, args.gang)
        print(json.dumps(result))
        return
    runs = {}
    for action in sorted(ACTIONS):
        cmd = [sys.executable, "-m", "bench.preempt_reclaim", "--only", action]
        cmd += [
            f"--{k}={v}"
            for k, v in zip(("nodes", "running", "pending", "gang"), sizes, strict=True)
        ]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        runs[action] = json.loads(out)
    print(json.dumps({"benchmark": "preempt_reclaim", **runs}, indent=2))


if __name__ == "__main__":
    main()
