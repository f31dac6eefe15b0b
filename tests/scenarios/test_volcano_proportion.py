"""proportion as Volcano decides, transcribed from Volcano's `pkg/scheduler/plugins/proportion/
proportion_test.go`: `TestEnqueueAndAllocable` (cases 0-4), `TestAllocate` (case0),
`TestNoDoubleCountingForInqueueJobWithBindingTasks`, `TestJobEnqueuedOnOtherPluginsReject` and
`TestProportion` ("pod-deallocate", "realcapability-test"). Each runs the Go test's actions over
its one tier, exactly the `conf.PluginOption` flags it sets switched on (see `go_tiers`), and
checks its expected binds or PodGroup phases.

Objects are Volcano's test helpers as builders: `util.BuildNode` (its `pods` allocatable),
`BuildPod` (requests as written: "2G" is 2 x 10^9 bytes, "3k" 3000 bytes; a pod given a node and
phase Running runs there), `BuildPodGroup` (no priority) with `Spec.MinResources` where the case
sets it, `BuildQueue(name, weight, capability)`, `BuildQueueWithState` (`status.state`),
`BuildQueueWithPriorityAndResourcesQuantity` (weight 1, `spec.priority`, no deserved). Pods,
PodGroups and keys are in the Go test's namespace `ns1`.

Where the transcription departs from the Go test, the test's docstring says so:
- `TestJobEnqueuedOnOtherPluginsReject` registers a test-only plugin (`uthelper.RejecterPlugin`)
  that rejects pgA at enqueue; vscheduler loads plugins only from its catalog, so the co-tier
  plugin that rejects pgA here is `resourcequota`, with pgA in a namespace whose quota is spent.
- `TestNoDoubleCountingForInqueueJobWithBindingTasks` runs two sessions over one cache, the
  first leaving jobA's pods Binding under a PodGroup still Inqueue; here that cache state is the
  snapshot of the second session.
- `TestProportion` checks only the queue-allocated metric, by HTTP, over three sessions that
  delete pg1 and then pg2 (its table's `expected` binds are never compared, and its loop returns
  after the first case); "pod-deallocate" is transcribed as those figures, and
  "realcapability-test" as its stated expectation, with rdma-demo pending (the Go test builds
  every pod Running on no node, so nothing is left to place).
"""

from __future__ import annotations

from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.testing.builders import (
    Item,
    PodBuilder,
    PodGroupBuilder,
    node,
    pod,
    podgroup,
    queue,
    res,
    resource_quota,
    snapshot,
)
from vscheduler.testing.scenario import Outcome, run
from vscheduler.testing.volcano import go_tiers

NS = "ns1"
ALL_ENABLE = go_tiers(
    "enqueue, allocate",
    proportion=("enabledAllocatable", "enabledOverused", "enableJobEnqueued"),
)
ENQUEUEABLE = go_tiers("enqueue, allocate", proportion=("enableJobEnqueued",))
ALLOCATABLE = go_tiers("enqueue, allocate", proportion=("enabledAllocatable",))
RUNNING, PENDING = PodGroupPhase.RUNNING, PodGroupPhase.PENDING


def build_pod(name: str, on: str, group: str, cpu: str, memory: str) -> PodBuilder:
    """`util.BuildPod`: on `on` and Running, or pending when `on` is empty."""
    built = pod(name, NS).group(group).requests(cpu=cpu, memory=memory)
    return built.on(on) if on else built


def build_podgroup(
    name: str, q: str, phase: PodGroupPhase, cpu: str, memory: str, members: int = 1
) -> PodGroupBuilder:
    """`util.BuildPodGroup` with `Spec.MinResources` of `cpu` and `memory`."""
    built = podgroup(name, NS).queue(q).min_member(members).phase(phase)
    return built.min_resources(cpu=cpu, memory=memory)


def once(policy: str, *items: Item) -> Outcome:
    (outcome,) = run(snapshot(*items), policy=policy)
    return outcome


def ns1(**binds: str) -> dict[str, str]:
    return {f"{NS}/{pod_name}": node_name for pod_name, node_name in binds.items()}


# --- TestEnqueueAndAllocable ---------------------------------------------------------------
def enqueue_and_allocable(*items: Item) -> list[Item]:
    """The table's cluster: n1 and n2 of 2 cpu and 2G; q1 (capability 2 cpu, 2G) runs pod1 (1
    cpu, 2G) on n1, q2 (capability 3 cpu, 3G) runs pod2 (2 cpu, 1G) on n2; plus the case's
    pending job."""
    return [
        node("n1").resources(cpu="2", memory="2G", pods=10),
        node("n2").resources(cpu="2", memory="2G", pods=10),
        queue("q1").capability(cpu="2", memory="2G"),
        queue("q2").capability(cpu="3", memory="3G"),
        build_podgroup("pg1", "q1", RUNNING, "1", "2G"),
        build_podgroup("pg2", "q2", RUNNING, "2", "1G"),
        build_pod("pod1", "n1", "pg1", "1", "2G"),
        build_pod("pod2", "n2", "pg2", "2", "1G"),
        *items,
    ]


def test_a_job_requesting_only_cpu_is_admitted_and_placed_while_memory_exceeds_deserved() -> None:
    """TestEnqueueAndAllocable "case0: memory exceed derserved, job only request cpu can be
    enqueued and allocated": q1 holds all the memory it deserves; pod3 asks 1 cpu and no
    memory, so only cpu is compared."""
    outcome = once(
        ALL_ENABLE,
        *enqueue_and_allocable(
            build_podgroup("pg3", "q1", PENDING, "1", "0G"),
            build_pod("pod3", "", "pg3", "1", "0G"),
        ),
    )

    assert outcome.binds == ns1(pod3="n1")


def test_a_job_requesting_only_memory_is_admitted_and_placed_while_cpu_exceeds_deserved() -> None:
    """TestEnqueueAndAllocable "case1: cpu exceed derserved, job only request memory can be
    enqueued and allocated": q2 holds all the cpu it deserves; pod4 asks no cpu and 1G."""
    outcome = once(
        ALL_ENABLE,
        *enqueue_and_allocable(
            build_podgroup("pg4", "q2", PENDING, "0", "1G"),
            build_pod("pod4", "", "pg4", "0", "1G"),
        ),
    )

    assert outcome.binds == ns1(pod4="n2")


def beyond_q1(policy: str) -> Outcome:
    """pg5 asks 1 cpu and 1G of q1, whose pod1 already holds its capability's 2G."""
    return once(
        policy,
        *enqueue_and_allocable(
            build_podgroup("pg5", "q1", PENDING, "1", "1G"),
            build_pod("pod5", "", "pg5", "1", "1G"),
        ),
    )


def test_a_job_beyond_its_queue_capability_is_not_admitted() -> None:
    """TestEnqueueAndAllocable "case2: exceed capacity, can not enqueue" (enqueue vote only):
    1G more than q1's capability of 2G holds; pg5 stays Pending."""
    outcome = beyond_q1(ENQUEUEABLE)

    assert outcome.binds == {}
    assert outcome.result.podgroups[f"{NS}/pg5"].phase is PENDING
    assert "not admitted to queue q1 (proportion: " in outcome.unschedulable[f"{NS}/pod5"]


def test_a_task_beyond_its_queue_deserved_is_not_allocated() -> None:
    """TestEnqueueAndAllocable "case3: exceed deserved, can not allocate" (allocatable only):
    pg5 is admitted, pod5 is not placed (nor would a node hold it: the message says both)."""
    outcome = beyond_q1(ALLOCATABLE)

    assert outcome.binds == {}
    assert outcome.result.podgroups[f"{NS}/pg5"].phase is PodGroupPhase.INQUEUE
    assert (
        "queue q1 has no room left for this pod (proportion: "
        in outcome.unschedulable[f"{NS}/pod5"]
    )


def test_a_job_of_a_closed_queue_is_not_admitted() -> None:
    """TestEnqueueAndAllocable "case4: queue with  non-open state, can not enqueue"."""
    outcome = once(
        ENQUEUEABLE,
        node("n1").resources(cpu="2", memory="2G", pods=10),
        node("n2").resources(cpu="2", memory="2G", pods=10),
        queue("q3").capability(cpu="3", memory="3G").state("Closed"),
        build_podgroup("pg6", "q3", PENDING, "1", "1G"),
        build_pod("pod6", "", "pg6", "1", "1G"),
    )

    assert outcome.binds == {}
    assert outcome.result.podgroups[f"{NS}/pg6"].phase is PENDING


# --- TestAllocate -------------------------------------------------------------------------
def test_the_queue_of_highest_priority_is_served_first() -> None:
    """TestAllocate "case0: Pods are assigned according to the order of Queue Priority in which
    PGs are placed" (allocate, reclaim; proportion orders queues, nothing else switched on): q1
    runs p1 on n1; of q2 (priority 1) and q3 (priority 10), each with a pod of a whole node,
    q3's p3 takes n2, and nothing is reclaimed."""
    cap = {"cpu": "2", "memory": "4Gi"}
    outcome = once(
        go_tiers("allocate, reclaim", proportion=("enableQueueOrder",)),
        node("n1").resources(cpu="2", memory="4Gi", pods=10),
        node("n2").resources(cpu="2", memory="4Gi", pods=10),
        queue("q1").priority(5).capability(**cap),
        queue("q2").priority(1).capability(**cap),
        queue("q3").priority(10).capability(**cap),
        podgroup("pg1", NS).queue("q1").min_member(1).phase(RUNNING),
        podgroup("pg2", NS).queue("q2").min_member(1).inqueue(),
        podgroup("pg3", NS).queue("q3").min_member(1).inqueue(),
        build_pod("p1", "n1", "pg1", "2", "4Gi"),
        build_pod("p2", "", "pg2", "2", "4Gi"),
        build_pod("p3", "", "pg3", "2", "4Gi"),
    )

    assert outcome.binds == ns1(p3="n2")
    assert outcome.evictions == []


# --- TestNoDoubleCountingForInqueueJobWithBindingTasks --------------------------------------
def test_an_inqueue_job_with_binding_tasks_does_not_reserve_them_twice() -> None:
    """TestNoDoubleCountingForInqueueJobWithBindingTasks (enqueue, allocate; proportion:
    allocatable, overused, enqueue): jobA's three pods of 1 cpu are Binding on n1 while pgA
    (minResources 3 cpu) is still Inqueue. They count once, in q1's allocated, not again in its
    inqueue: 3 + pgB's 1 cpu fit q1's capability of 4, so pgB is admitted and pB1 bound.
    (proportion here reserved all of an Inqueue job's minResources, as Volcano did before 1.15:
    6 + 1 cpu, and pgB waited.)"""
    outcome = once(
        ALL_ENABLE,
        node("n1").resources(cpu="4", memory="8Gi", pods=10),
        queue("q1").capability(cpu="4", memory="8Gi"),
        build_podgroup("pgA", "q1", PodGroupPhase.INQUEUE, "3", "3Gi", members=3),
        *[
            build_pod(f"pA{i}", "n1", "pgA", "1", "1Gi").status(TaskStatus.BINDING)
            for i in (1, 2, 3)
        ],
        build_podgroup("pgB", "q1", PENDING, "1", "1Gi"),
        build_pod("pB1", "", "pgB", "1", "1Gi"),
    )

    assert outcome.binds == ns1(pB1="n1")


# --- TestJobEnqueuedOnOtherPluginsReject -----------------------------------------------------
def test_a_job_another_plugin_rejects_holds_nothing_of_its_queue() -> None:
    """TestJobEnqueuedOnOtherPluginsReject (enqueue; proportion and a co-tier plugin voting on
    enqueue): q1 holds 1 cpu; pgA and pgB ask 1 cpu each. The co-tier plugin rejects pgA, which
    comes first: what proportion would let pgA have stays free, and pgB is admitted. The Go
    test's rejecter is a test plugin; here it is resourcequota, pgA in namespace ns2, whose
    quota has no cpu left."""
    outcome = once(
        go_tiers(
            "enqueue",
            proportion=("enableJobEnqueued",),
            resourcequota=("enableJobEnqueued",),
        ),
        node("n1").resources(cpu="4", memory="4G", pods=10),
        queue("q1").capability(cpu="1", memory="4G"),
        resource_quota("spent", "ns2").hard(cpu="1").used(cpu="1"),
        podgroup("pgA", "ns2").queue("q1").min_member(1).min_resources(cpu="1", memory="1G"),
        pod("podA", "ns2").group("pgA").requests(cpu="1", memory="1G"),
        build_podgroup("pgB", "q1", PENDING, "1", "1G").created(1),
        build_pod("podB", "", "pgB", "1", "1G"),
    )

    phases = {key: status.phase for key, status in outcome.result.podgroups.items()}
    assert phases == {"ns2/pgA": PENDING, f"{NS}/pgB": PodGroupPhase.INQUEUE}
    assert "resource quota ns2/spent insufficient" in outcome.unschedulable["ns2/podA"]


# --- TestProportion ---------------------------------------------------------------------------
PROPORTION = go_tiers(
    "allocate",
    proportion=("enablePredicate",),
    gang=("enableJobReady", "enableJobPipelined"),
    priority=("enableJobOrder",),
)


def workers(*groups: str) -> list[Item]:
    """TestProportion's running workers, in q1, of the PodGroups `groups` (Inqueue, as the Go
    test sets every PodGroup): pg1 (minMember 2, priority 2) with worker-1 (3 cpu, 3k) and
    worker-2 (5 cpu, 5k), pg2 (minMember 1, priority 1) with worker-3 (4 cpu, 4k); Running on no
    node, as the Go test builds them."""
    table = {"pg1": (2, 2, {"worker-1": "3", "worker-2": "5"}), "pg2": (1, 1, {"worker-3": "4"})}
    items: list[Item] = []
    for group in groups:
        members, priority, cpus = table[group]
        items.append(
            podgroup(group, NS).queue("q1").min_member(members).priority(priority).inqueue()
        )
        for name, cpu in cpus.items():
            running = pod(name, NS).group(group).requests(cpu=cpu, memory=f"{cpu}k")
            items.append(running.status(TaskStatus.RUNNING))
    return items


def proportion_cluster(*items: Item) -> ClusterSnapshot:
    """TestProportion's nodes and queues: node1 (4 cpu, 4k, label selector=worker), node2 (3
    cpu, 3k), node3 (4 cpu, 4k, 8 GPUs, 1k rdma/hca), 15 pods each; q1 (weight 0, read as 1)
    and q2 (capability 2 cpu, 2k, 4 GPUs); then `items`."""
    return snapshot(
        node("node1").resources(cpu="4", memory="4k", pods=15).labels(selector="worker"),
        node("node2").resources(cpu="3", memory="3k", pods=15),
        node("node3").resources(cpu="4", memory="4k", pods=15, nvidia_com_gpu="8", rdma_hca="1k"),
        queue("q1"),
        queue("q2").capability(cpu="2", memory="2k", nvidia_com_gpu="4"),
        *items,
    )


def test_a_queue_allocated_figure_falls_as_its_podgroups_are_deleted() -> None:
    """TestProportion "pod-deallocate": three sessions; pg1 is deleted after the first, pg2
    after the second. The Go test reads q1's allocated cpu from the queue metric: 12 cpu, then
    4, then none. A deleted PodGroup's job leaves the session (Volcano's cache drops a job
    without its PodGroup from the snapshot); here its pods go with it."""
    left = {1: ("pg2",), 2: ()}
    outcomes = run(
        proportion_cluster(*workers("pg1", "pg2")),
        policy=PROPORTION,
        cycles=3,
        between=lambda i, _: proportion_cluster(*workers(*left[i])),
    )

    assert [o.result.queues["q1"].allocated.get("cpu") for o in outcomes] == [12000, 4000, 0]
    assert all(o.binds == {} for o in outcomes)


def test_a_resource_the_queue_capability_does_not_name_is_not_limited_by_it() -> None:
    """TestProportion "realcapability-test": q2's capability names cpu, memory and GPUs, not
    rdma/hca, so its realCapability holds the cluster's rdma/hca; pg3's rdma-demo (1 cpu, 1k, a
    GPU, an rdma/hca) goes to node3, the one node with both. The Go test builds rdma-demo
    Running on no node and never compares its `expected` binds; here rdma-demo is pending, as
    that expectation needs."""
    rdma = {"cpu": "1", "memory": "1k", "nvidia_com_gpu": "1", "rdma_hca": "1"}
    pg3 = podgroup("pg3", NS).queue("q2").min_member(1).priority(1).min_resources(**rdma)
    (outcome,) = run(
        proportion_cluster(
            *workers("pg1", "pg2"),
            pg3.inqueue(),
            pod("rdma-demo", NS).group("pg3").requests(**rdma),
        ),
        policy=PROPORTION,
    )

    assert outcome.binds == ns1(**{"rdma-demo": "node3"})
    assert outcome.result.queues["q2"].real_capability == res(
        cpu="2", memory="2k", nvidia_com_gpu="4", rdma_hca="1k"
    )
