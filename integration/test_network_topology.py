"""Network-topology-aware scheduling on a real API server: Volcano's HyperNode CRD installed from
deploy/crds, HyperNodes created (one naming its nodes, one by a name pattern, one above both), a
hard-mode gang placed whole within one tier-1 HyperNode, and one that no HyperNode holds staying
pending with the reason on its pods and its PodGroup."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from integration import harness

TIMEOUT = 60.0
HYPERNODES = "/apis/topology.volcano.sh/v1alpha1/hypernodes"
POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
"""


def hypernode(name: str, tier: int, *members: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "members": list(members)},
    }


def exact(kind: str, name: str) -> dict[str, Any]:
    return {"type": kind, "selector": {"exactMatch": {"name": name}}}


def gang(cluster: harness.ScopedCluster, name: str, pods: int, tier: int) -> None:
    """A PodGroup of `pods` (its minMember) asking `networkTopology: {mode: hard,
    highestTierAllowed: tier}`, and its pods of 2 cpu."""
    ns = harness.namespace_of(cluster)
    group = harness.podgroup(name, ns, min_member=pods)
    group["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": tier}
    harness.create(cluster, group)
    for i in range(pods):
        harness.create(cluster, harness.pod(f"{name}-{i}", ns, cpu="2", group=name))


def test_a_hard_gang_lands_within_one_hypernode_and_one_no_hypernode_holds_waits(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    tmp_path: Any,
) -> None:
    ns = harness.namespace_of(cluster)
    nodes = ("nt-a-0", "nt-a-1", "nt-b-0", "nt-b-1")
    for name in nodes:
        cluster.add_node(name, cpu="4", memory="16Gi")
    cluster.request(
        "POST", HYPERNODES, hypernode("nt-rack-a", 1, *(exact("Node", n) for n in nodes[:2]))
    )
    regex = {"type": "Node", "selector": {"regexMatch": {"pattern": "^nt-b-[0-9]+$"}}}
    cluster.request("POST", HYPERNODES, hypernode("nt-rack-b", 1, regex))
    both = (exact("HyperNode", "nt-rack-a"), exact("HyperNode", "nt-rack-b"))
    cluster.request("POST", HYPERNODES, hypernode("nt-spine", 2, *both))
    # rack a holds a 3-cpu pod of another scheduler: 5 cpu left there, 8 in rack b
    busy = harness.pod("busy", ns, cpu="3", scheduler="default-scheduler")
    busy["spec"]["nodeName"] = "nt-a-0"
    harness.create(cluster, busy)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    scheduler = start_scheduler(args=[f"--policy-file={policy}"])
    scheduler.wait_ready()

    gang(cluster, "train", pods=3, tier=1)

    def train_placed() -> dict[str, str] | None:
        placed = {p: n for p, n in harness.bound(cluster, ns).items() if p.startswith("train-")}
        return placed if len(placed) == 3 else None

    placed = harness.wait_for("train's 3 pods bound", train_placed, TIMEOUT)
    assert set(placed.values()) <= {"nt-b-0", "nt-b-1"}, (placed, scheduler.log())

    # 4 more pods of 2 cpu: rack a has 5 cpu, rack b 2, the spine is above tier 1
    gang(cluster, "wide", pods=4, tier=1)
    held = (
        "networkTopology hard, highestTierAllowed 1: no HyperNode of tier 1 or lower holds the"
        " job whole (2 tried)"
    )

    def told() -> list[str] | None:
        messages = []
        for i in range(4):
            cond = harness.pod_condition(cluster, "test", f"wide-{i}") or {}
            if cond.get("status") != "False" or held not in str(cond.get("message", "")):
                return None
            messages.append(str(cond["message"]))
        return messages

    messages = harness.wait_for("every wide pod told why", told, TIMEOUT)
    # the pod that found no node in the last rack tried names its nodes (Volcano's words)
    assert any(
        m.startswith("In hyperNode nt-rack-b: 0/2 nodes are available:") for m in messages
    ), messages

    def podgroup_says() -> str | None:
        status = harness.get_podgroup(cluster, "test", "wide").get("status") or {}
        for cond in status.get("conditions") or []:
            if cond.get("type") == "Unschedulable" and str(cond.get("message", "")).startswith(
                held
            ):
                return str(cond["message"])
        return None

    harness.wait_for("wide's PodGroup says why", podgroup_says, TIMEOUT)
    assert not any(p.startswith("wide-") for p in harness.bound(cluster, ns)), scheduler.log()
    assert scheduler.stop() == 0
