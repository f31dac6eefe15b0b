"""The task-topology plugin as a user meets it, on a real API server: Volcano's user-guide policy
(tests/fixtures/policies/volcano-task-topology.yaml), KWOK nodes, a PodGroup carrying
`volcano.sh/task-topology-affinity` / `-anti-affinity`, and pods carrying their role in the
`volcano.sh/task-spec` annotation, as Volcano Jobs set it. The pods come through the protobuf pod
watch (the default), so the role survives its decoding; the PodGroup's annotations through the
PodGroup informer.

Each PodGroup's minMember is its pod count, so the whole job is placed in one cycle (the plugin's
anti-affinity counts the pods placed in the cycle, as Volcano's does)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from integration import harness
from integration.controlplane import REPO_ROOT

TIMEOUT = 60.0
POLICY = REPO_ROOT / "tests/fixtures/policies/volcano-task-topology.yaml"
AFFINITY = "volcano.sh/task-topology-affinity"
ANTI_AFFINITY = "volcano.sh/task-topology-anti-affinity"


def topology_group(name: str, annotations: dict[str, str], *, min_member: int) -> dict[str, Any]:
    """A PodGroup in `test` with the job's topology annotations."""
    group = harness.podgroup(name, "test", min_member=min_member)
    group["metadata"]["annotations"] = annotations
    return group


def role_pod(
    job: str, role: str, index: int, *, memory: str = "2Gi", as_label: bool = False
) -> dict[str, Any]:
    """Pod `<job>-<role>-<index>` of PodGroup `job`, its role in the `volcano.sh/task-spec`
    annotation (as a Volcano Job names and annotates its pods), or label (`as_label`: what a
    user without Volcano Jobs may set instead); 1 CPU.

    The policy's other node scores, without the plugin: with 2Gi (a quarter of a node's CPU and
    of its memory) balancedresource has no preference and leastrequested and binpack cancel out,
    so the tie-break packs the pods onto node-0; with 256Mi balancedresource spreads them."""
    pod = harness.pod(f"{job}-{role}-{index}", "test", cpu="1", memory=memory, group=job)
    pod["metadata"].setdefault("labels" if as_label else "annotations", {})[
        "volcano.sh/task-spec"
    ] = role
    return pod


def started(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    nodes: int,
) -> harness.Scheduler:
    """`nodes` nodes of 4 CPUs, and the scheduler on the user-guide policy."""
    for i in range(nodes):
        cluster.add_node(f"node-{i}", cpu="4", memory="8Gi")
    scheduler = start_scheduler(args=[f"--policy-file={POLICY}"])
    scheduler.wait_ready(TIMEOUT)
    return scheduler


def all_bound(cluster: harness.ScopedCluster, count: int) -> dict[str, str]:
    """Pod -> node, once `count` pods of `test` are bound."""

    def placed() -> dict[str, str] | None:
        found = harness.bound(cluster, "test")
        return found if len(found) == count else None

    return harness.wait_for(f"{count} pods bound", placed, TIMEOUT)


def test_the_parameter_server_and_its_workers_share_one_node(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = started(cluster, start_scheduler, nodes=3)
    harness.create(cluster, topology_group("tf", {AFFINITY: "ps,worker"}, min_member=4))
    harness.create(cluster, role_pod("tf", "ps", 0, memory="256Mi"))
    for i in range(3):
        harness.create(cluster, role_pod("tf", "worker", i, memory="256Mi"))

    placed = all_bound(cluster, 4)
    # Every node has room for the four; without the plugin, balancedresource spreads them. Nodes
    # tied go to the first by name: node-0.
    assert placed == {
        "tf-ps-0": "node-0",
        "tf-worker-0": "node-0",
        "tf-worker-1": "node-0",
        "tf-worker-2": "node-0",
    }, scheduler.log()
    assert scheduler.alive()


def test_two_parameter_servers_apart_each_with_two_workers(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = started(cluster, start_scheduler, nodes=4)
    annotations = {AFFINITY: "ps,worker", ANTI_AFFINITY: "ps"}
    harness.create(cluster, topology_group("tf", annotations, min_member=6))
    for i in range(2):
        harness.create(cluster, role_pod("tf", "ps", i))
    for i in range(4):
        harness.create(cluster, role_pod("tf", "worker", i))

    placed = all_bound(cluster, 6)
    # Two buckets, a server each, the workers dealt in turn (the lighter bucket on a tie): the
    # first bucket to node-0 (the first by name), the second apart from its server, to node-1.
    # Without the plugin, all six would go to node-0 (see role_pod).
    assert placed == {
        "tf-ps-0": "node-0",
        "tf-worker-0": "node-0",
        "tf-worker-2": "node-0",
        "tf-ps-1": "node-1",
        "tf-worker-1": "node-1",
        "tf-worker-3": "node-1",
    }, scheduler.log()


def test_workers_of_a_self_anti_affine_role_each_get_their_own_node(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = started(cluster, start_scheduler, nodes=3)
    harness.create(cluster, topology_group("tf", {ANTI_AFFINITY: "worker"}, min_member=3))
    for i in range(2):
        harness.create(cluster, role_pod("tf", "worker", i))
    # The last one says its role with the label: read so too, through the protobuf watch.
    harness.create(cluster, role_pod("tf", "worker", 2, as_label=True))

    placed = all_bound(cluster, 3)
    # Without the plugin, all three would go to node-0 (see role_pod).
    assert placed == {
        "tf-worker-0": "node-0",
        "tf-worker-1": "node-1",
        "tf-worker-2": "node-2",
    }, scheduler.log()


def test_a_role_repeated_in_a_group_is_warned_on_the_podgroup_and_the_pods_still_run(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = started(cluster, start_scheduler, nodes=1)
    harness.create(cluster, topology_group("tf", {ANTI_AFFINITY: "worker,worker"}, min_member=2))
    for i in range(2):
        harness.create(cluster, role_pod("tf", "worker", i))

    def warned() -> list[dict[str, Any]]:
        return [
            e
            for e in harness.events_about(cluster, "test", "PodGroup", "tf", reason="UnusualValue")
            if e["type"] == "Warning"
        ]

    events = harness.wait_for("an UnusualValue event on PodGroup tf", warned, TIMEOUT)
    namespace = harness.namespace_of(cluster)
    assert [e["message"] for e in events] == [
        f"PodGroup {namespace}/tf: metadata.annotations[{ANTI_AFFINITY}]: 'worker,worker'"
        " names 'worker' twice in one group; the job's task topology is ignored, as Volcano"
        " ignores it"
    ], harness.dump(events)
    # The topology is ignored, not the job: both workers run on the one node.
    assert all_bound(cluster, 2) == {"tf-worker-0": "node-0", "tf-worker-1": "node-0"}
    assert scheduler.alive()
