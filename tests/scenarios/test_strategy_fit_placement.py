"""resource-strategy-fit decides placements: Volcano's resource_strategy_fit_test.go TestAllocate
transcribed (its two cases, with its policy: the plugin beside gang, drf, proportion, predicates
and nodeorder in one tier, the allocate action), the worked example of Volcano's
docs/design/proportional.md with its policy, and the pod's own annotations, sra and the
proportional predicate deciding a bind.
"""

from __future__ import annotations

from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.status import TaskStatus
from vscheduler.testing.builders import PodBuilder, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import run

VOLCANO_TEST_ALLOCATE = """\
actions: "allocate"
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      resourceStrategyFitWeight: 10
      resources:
        nvidia.com/gpu: {type: MostAllocated, weight: 2}
        cpu: {type: LeastAllocated, weight: 1}
  - {name: gang}
  - {name: drf}
  - {name: proportion}
  - {name: predicates}
  - {name: nodeorder}
"""


def volcano_cluster(*pods: PodBuilder) -> ClusterSnapshot:
    """TestAllocate's nodes (two gpu nodes, two cpu nodes, labelled by kind), its queue c1 and
    its Inqueue PodGroup pg1 of minMember 1, in namespace c1."""

    return snapshot(
        node("n1")
        .resources(cpu="5", memory="10Gi", pods=10, nvidia_com_gpu=10)
        .labels(nodeResourceType="gpu"),
        node("n2")
        .resources(cpu="5", memory="10Gi", pods=10, nvidia_com_gpu=10)
        .labels(nodeResourceType="gpu"),
        node("n3").resources(cpu="5", memory="10Gi", pods=10).labels(nodeResourceType="cpu"),
        node("n4").resources(cpu="5", memory="10Gi", pods=10).labels(nodeResourceType="cpu"),
        queue("c1"),
        podgroup("pg1", "c1").queue("c1").min_member(1).inqueue(),
        *pods,
    )


def worker(name: str, kind: str, **requests: str | int) -> PodBuilder:
    return (
        pod(name, "c1")
        .group("pg1")
        .role("worker")
        .selector(nodeResourceType=kind)
        .requests(cpu="1", memory="1G", **requests)
    )


def test_volcano_gpu_most_allocated() -> None:
    """TestAllocate "GPU MostAllocated": the gpu pod joins the gpu node already holding one."""
    cluster = volcano_cluster(
        worker("p1", "gpu", nvidia_com_gpu=2),
        worker("p2", "gpu", nvidia_com_gpu=2).on("n2"),
    )
    [outcome] = run(cluster, policy=VOLCANO_TEST_ALLOCATE)
    assert outcome.binds == {"c1/p1": "n2"}


def test_volcano_cpu_least_allocated() -> None:
    """TestAllocate "cpu LeastAllocated": the cpu pod goes to the empty cpu node."""
    cluster = volcano_cluster(worker("p3", "cpu"), worker("p4", "cpu").on("n3"))
    [outcome] = run(cluster, policy=VOLCANO_TEST_ALLOCATE)
    assert outcome.binds == {"c1/p3": "n4"}


ONLY_RSF = """\
actions: "enqueue, allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins:
  - {name: predicates}
  - name: resource-strategy-fit
    arguments:
      resources: {cpu: {type: LeastAllocated}}
      sra: {enable: true, resources: nvidia.com/gpu, weight: 1}
      proportional:
        enable: true
        resources: nvidia.com/gpu
        resourceProportion: {nvidia.com/gpu.cpu: 2, nvidia.com/gpu.memory: 1}
"""


def two_nodes(*pods: PodBuilder) -> ClusterSnapshot:
    return snapshot(
        node("busy").resources(cpu="8", memory="16Gi"),
        node("idle").resources(cpu="8", memory="16Gi"),
        pod("r").requests(cpu="4").on("busy"),
        *pods,
    )


def test_the_pods_own_most_allocated_overrides_the_policys_least_allocated() -> None:
    # policy (cpu LeastAllocated): idle (8-1)/8 = 87.5% beats busy (8-5)/8 = 37.5%.
    # the pod's MostAllocated on cpu: busy 5/8 beats idle 1/8.
    plain = pod("plain").requests(cpu="1")
    packed = (
        pod("packed")
        .requests(cpu="1")
        .annotate("volcano.sh/resource-strategy-scoring-type", "MostAllocated")
        .annotate("volcano.sh/resource-strategy-weight", '{"cpu": 1}')
    )
    [outcome] = run(two_nodes(plain), policy=ONLY_RSF)
    assert outcome.binds == {"default/plain": "idle"}
    [outcome] = run(two_nodes(packed), policy=ONLY_RSF)
    assert outcome.binds == {"default/packed": "busy"}


def test_a_malformed_annotation_is_ignored_and_the_policy_decides() -> None:
    broken = (
        pod("broken")
        .requests(cpu="1")
        .annotate("volcano.sh/resource-strategy-scoring-type", "MostAllocated")
        .annotate("volcano.sh/resource-strategy-weight", "cpu=1")
    )
    [outcome] = run(two_nodes(broken), policy=ONLY_RSF)
    assert outcome.binds == {"default/broken": "idle"}


def gpu_and_cpu_node(used_cpu: str, *pods: PodBuilder) -> ClusterSnapshot:
    return snapshot(
        node("gpu").resources(cpu="8", memory="16Gi", nvidia_com_gpu=2),
        node("cpu").resources(cpu="8", memory="16Gi"),
        pod("r").requests(cpu=used_cpu).on("cpu"),
        *pods,
    )


def test_sra_keeps_a_cpu_pod_off_the_gpu_node() -> None:
    # cpu LeastAllocated (weight 10): gpu node 7/8 * 1000 = 875, cpu node 5/8 * 1000 = 625;
    # sra (weight 5): the cpu node has no gpu, + 500 = 1125; the gpu node + 0. Without sra the
    # gpu node wins.
    without_sra = ONLY_RSF.replace("weight: 1}", "weight: 0}")
    [outcome] = run(gpu_and_cpu_node("2", pod("small").requests(cpu="1")), policy=without_sra)
    assert outcome.binds == {"default/small": "gpu"}
    with_sra = ONLY_RSF.replace("weight: 1}", "weight: 5}")
    [outcome] = run(gpu_and_cpu_node("2", pod("small").requests(cpu="1")), policy=with_sra)
    assert outcome.binds == {"default/small": "cpu"}


def test_proportional_keeps_the_gpu_nodes_cpu_for_gpu_pods() -> None:
    # 2 idle gpus keep 2 * 2 = 4 cores: a 5-cpu pod leaves 3 < 4 and fails the gpu node; the
    # cpu node has 4 idle. A pod requesting a gpu is not held to the proportion.
    big = pod("big").requests(cpu="5")
    trainer = pod("trainer").requests(cpu="5", nvidia_com_gpu=1)
    [outcome] = run(gpu_and_cpu_node("4", big, trainer), policy=ONLY_RSF)
    assert outcome.binds == {"default/trainer": "gpu"}
    assert outcome.result.unschedulable["default/big"] == (
        "0/2 nodes are available: 1 Insufficient cpu,"
        " 1 proportional of resource nvidia.com/gpu check failed."
    )


def test_a_running_pod_is_not_moved() -> None:
    cluster = two_nodes(pod("done").requests(cpu="1").on("idle", TaskStatus.RUNNING))
    [outcome] = run(cluster, policy=ONLY_RSF)
    assert outcome.binds == {}


VOLCANO_PROPORTIONAL_DESIGN = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      proportional:
        enable: true
        resources: nvidia.com/gpu,nvidia.com/v100-sxm2-16gb
        resourceProportion:
          nvidia.com/gpu.cpu: 8
          nvidia.com/gpu.memory: 8
          nvidia.com/v100-sxm2-16gb.cpu: 16
          nvidia.com/v100-sxm2-16gb.memory: 16
"""


def test_volcano_proportional_design_example() -> None:
    """docs/design/proportional.md's example, with its policy (GPU:CPU:MEMORY = 1:8:8): on
    nodeC0-0 (74 cpu, 128G, 8 gpus) single-1000-0 (8 cpu, 8G) is placed; then 8 idle gpus keep
    64 cores and 64G, and single-1000-1 would leave 58 cores: the node is removed for it."""
    cluster = snapshot(
        node("nodeC0-0").resources(cpu="74", memory="128G", nvidia_com_gpu=8),
        podgroup("single-1000-0").inqueue(),
        podgroup("single-1000-1").inqueue().created(1),
        pod("single-1000-0").group("single-1000-0").requests(cpu="8", memory="8G"),
        pod("single-1000-1").group("single-1000-1").requests(cpu="8", memory="8G").created(1),
    )
    [outcome] = run(cluster, policy=VOLCANO_PROPORTIONAL_DESIGN)
    assert outcome.binds == {"default/single-1000-0": "nodeC0-0"}
    assert outcome.result.unschedulable["default/single-1000-1"] == (
        "0/1 nodes are available: 1 proportional of resource nvidia.com/gpu check failed."
    )
