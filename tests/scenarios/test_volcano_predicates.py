"""predicates as Volcano decides, transcribed from Volcano's `pkg/scheduler/plugins/predicates/
predicates_test.go`: the three cases that run actions over a cluster and check its binds,
evictions and pipelined pods (`TestEventHandler`, `TestNodeNum`, `TestPodAntiAffinity`), each
with its Go test's tier (every point flag written out: `go_tiers`) and actions.

Objects are Volcano's test helpers, through the fluent builders: `util.BuildPod(ns, name, node,
phase, requests, group, labels, selector)` is a pod of namespace `ns1` with those labels and
`nodeSelector` (requests as written: "3k" memory is 3000 bytes; nil requests make a best-effort
pod); `getWorkerAffinity()` is a required anti-affinity to pods labelled `role: worker` over
`kubernetes.io/hostname`; `BuildPodGroupWithPrio` gives the PodGroup its PriorityClass's value;
`BuildQueue("q1", 0, ...)` has weight 0, read as 1 (test_volcano_inputs.py).

`TestPodAntiAffinity` was settled by running Volcano's test (ed72c7c81) with its log: its
`Session.SimulateRemoveTaskFn` calls a plugin only when the plugin's entry enables preemptable
or allocatable, and the test's predicates entry enables only predicate, so removing worker-1
never lowers the inter-pod counts and the anti-affinity is never resolved (actions/preempt.py).

Skipped, with no counterpart in a cycle's outcome: `TestTaskPodAnnotations` (a TaskInfo's
annotation map), the `TestSetUpDynamicResourcesArgs_*` and `TestInitPlugin` cases (which kube
plugins Volcano's predicates wires up: volume binding and DRA, which vscheduler does not have),
`TestBatchNodeOrderRunsPreScorePlugins`, `TestPredicateFailureReasonAggregationOrderStable`,
`TestPredicateByStablefilterSkipsPluginInSkipSet` and `TestReserveRollbackOrderStable` (each
drives fake kube framework plugins through Volcano's internal wrappers).
"""

from __future__ import annotations

from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.builders import (
    Item,
    PodBuilder,
    node,
    pod,
    pod_term,
    podgroup,
    queue,
    snapshot,
)
from vscheduler.testing.scenario import Outcome, run
from vscheduler.testing.volcano import go_tiers

HOST = "kubernetes.io/hostname"
WORKER_ANTI_AFFINITY = pod_term(HOST, role="worker")


def build_pod(name: str, group: str, cpu: str = "", memory: str = "", on: str = "") -> PodBuilder:
    """`util.BuildPod` in namespace ns1 (no requests when `cpu` is empty)."""
    built = pod(name, "ns1").group(group)
    if cpu:
        built = built.requests(cpu=cpu, memory=memory)
    return built.on(on) if on else built


def worker(name: str, group: str, cpu: str = "", memory: str = "", on: str = "") -> PodBuilder:
    """A pod labelled `role: worker`, as the tests' workers are."""
    return build_pod(name, group, cpu, memory, on).label("role", "worker")


def group(name: str, members: int, priority: int) -> Item:
    return podgroup(name, "ns1").queue("q1").min_member(members).priority(priority).inqueue()


def once(*items: Item, policy: str) -> Outcome:
    [outcome] = run(snapshot(*items), policy=policy)
    return outcome


def test_a_gang_that_cannot_place_its_second_worker_frees_the_node_for_another_job() -> None:
    """TestEventHandler "pod-deallocate": pg1 (min 2, the higher priority) places worker-1 on
    node1 (its selector); worker-2 is anti-affine to it there and too big for node2, so pg1's
    placement is undone, and pg2's worker-3 takes node1."""
    policy = go_tiers(
        "allocate",
        predicates=("enablePredicate",),
        gang=("enableJobReady", "enableJobPipelined"),
        priority=("enableJobOrder",),
    )
    outcome = once(
        node("node1")
        .resources(cpu="14", memory="14k", pods=10)
        .labels(selector="worker")
        .label(HOST, "node1"),
        node("node2").resources(cpu="3", memory="3k", pods=10).label(HOST, "node2"),
        queue("q1"),
        group("pg1", 2, priority=2),
        group("pg2", 1, priority=1),
        worker("worker-1", "pg1", "3", "3k")
        .selector(selector="worker")
        .anti_affinity(WORKER_ANTI_AFFINITY),
        worker("worker-2", "pg1", "5", "5k").anti_affinity(WORKER_ANTI_AFFINITY),
        worker("worker-3", "pg2", "4", "4k").anti_affinity(WORKER_ANTI_AFFINITY),
        policy=policy,
    )

    assert outcome.binds == {"ns1/worker-3": "node1"}


def test_a_node_takes_no_more_pods_than_its_pod_count_allows() -> None:
    """TestNodeNum "pod-predicate": three best-effort pods, a node of two pods; backfill places
    them in job order (creation time, then name), the third finds the node full."""
    outcome = once(
        node("node1").resources(cpu="4", memory="4k", pods=2).labels(selector="worker"),
        queue("q1"),
        group("pg1", 2, priority=2),
        group("pg2", 1, priority=1),
        worker("worker-1", "pg1").selector(selector="worker"),
        worker("worker-2", "pg1"),
        worker("worker-3", "pg2"),
        policy=go_tiers("allocate, backfill", predicates=("enablePredicate",)),
    )

    assert outcome.binds == {"ns1/worker-1": "node1", "ns1/worker-2": "node1"}


def test_preemption_does_not_evict_the_pod_an_anti_affine_preemptor_conflicts_with() -> None:
    """TestPodAntiAffinity "pod-anti-affinity": worker-3 is anti-affine to worker-1 (same pod
    priority, lower job priority); the node's two pod slots are taken. Volcano expects nothing
    evicted or pipelined: its topology-aware preemption tells predicates of the pods it takes
    away only when the predicates entry enables preemptable or allocatable, and this tier
    enables neither, so the anti-affinity stays whatever is evicted."""
    high, low = 100000, 10
    policy = go_tiers(
        "allocate, preempt",
        predicates=("enablePredicate",),
        priority=("enablePreemptable", "enableJobStarving"),
    ) + (
        "configurations:\n- name: preempt\n  arguments:\n    enableTopologyAwarePreemption: true\n"
    )
    outcome = once(
        node("n1").resources(cpu="12", memory="12G", pods=2).label(HOST, "node1"),
        queue("q1").capability(cpu="9", memory="9G"),
        podgroup("pg1", "ns1").queue("q1").min_member(0).priority(low).phase(PodGroupPhase.RUNNING),
        group("pg2", 1, priority=high),
        worker("worker-1", "pg1", "3", "3G", on="n1")
        .priority(high)
        .anti_affinity(WORKER_ANTI_AFFINITY),
        build_pod("worker-2", "pg1", "3", "3G", on="n1").priority(low),
        worker("worker-3", "pg2", "3", "3G").priority(high).anti_affinity(WORKER_ANTI_AFFINITY),
        policy=policy,
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}
    assert outcome.binds == {}
