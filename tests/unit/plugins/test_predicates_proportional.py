"""predicates, the proportional check (Volcano's `checkNodeResourceIsProportional`): a pod that
requests no GPU must leave each node enough idle cpu and memory for the node's idle GPUs."""

from __future__ import annotations

import numpy as np

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.framework.results import Code, Status
from vscheduler.framework.session import Session
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.plugins import predicates
from vscheduler.testing import sessions
from vscheduler.testing.builders import START, PodBuilder, node, pod, snapshot

POLICY = """
actions: "allocate"
tiers:
- plugins:
  - name: predicates
    arguments:
      predicate.ProportionalEnable: true
      predicate.resources: nvidia.com/gpu
      predicate.resources.nvidia.com/gpu.cpu: 4
      predicate.resources.nvidia.com/gpu.memory: 8
"""
SHORT = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "proportional of resource nvidia.com/gpu check failed"
)
GPU_NODE = node("gpu").resources(cpu="16", memory="64Gi", nvidia_com_gpu=2)
"""16 cores and 64Gi (68.7 GB) for 2 GPUs: 8 cores and 16 GB are kept for them while idle."""


def open_session(snap: ClusterSnapshot, policy: str = POLICY) -> Session:
    return sessions.open_session(snap, policy)


def verdict(p: PodBuilder, *others: PodBuilder, policy: str = POLICY) -> Status | None:
    session = open_session(snapshot(GPU_NODE, node("plain"), p, *others), policy)
    task = session.tasks[p.build().uid]
    plugin = session.plugins[predicates.NAME]
    assert isinstance(plugin, predicates.Predicates)
    why = plugin.explain_node(task, 0)
    assert bool(plugin.filter_nodes(task, np.array([0], dtype=np.int64))[0]) is (why is None)
    assert plugin.explain_node(task, 1) is None
    return why


def test_a_pod_without_gpus_must_leave_the_cpu_the_idle_gpus_need() -> None:
    assert verdict(pod("p").requests(cpu="8")) is None
    assert verdict(pod("p").requests(cpu="9")) == SHORT


def test_a_pod_without_gpus_must_leave_the_memory_the_idle_gpus_need() -> None:
    assert verdict(pod("p").requests(cpu="1", memory="49Gi")) is None
    assert verdict(pod("p").requests(cpu="1", memory="50Gi")) == SHORT


def test_a_pod_requesting_a_gpu_is_not_checked() -> None:
    assert verdict(pod("p").requests(cpu="15", nvidia_com_gpu=1)) is None


def test_gpus_in_use_need_no_share() -> None:
    busy = pod("busy").requests(cpu="2", nvidia_com_gpu=1).on("gpu")
    assert verdict(pod("p").requests(cpu="10"), busy) is None
    assert verdict(pod("p").requests(cpu="11"), busy) == SHORT


def test_the_check_is_off_by_default() -> None:
    policy = 'actions: "allocate"\ntiers:\n- plugins:\n  - name: predicates\n'
    assert verdict(pod("p").requests(cpu="15"), policy=policy) is None


def test_a_cycle_keeps_gpu_nodes_for_gpu_pods() -> None:
    snap = snapshot(
        GPU_NODE,
        node("plain").resources(cpu="4", memory="8Gi"),
        pod("cpu-a").requests(cpu="6").created(1),
        pod("cpu-b").requests(cpu="6").created(2),
        pod("trainer").requests(cpu="8", nvidia_com_gpu=2).created(3),
    )
    report = cycle.run_cycle(snap, catalog.load_pipeline(POLICY), clock=FixedClock(START))
    assert {b.pod: b.node for b in report.result.binds} == {
        "default/cpu-a": "gpu",
        "default/trainer": "gpu",
    }
    assert dict(report.result.unschedulable) == {
        "default/cpu-b": "0/2 nodes are available: 1 Insufficient cpu, "
        "1 proportional of resource nvidia.com/gpu check failed."
    }
