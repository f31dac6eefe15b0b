"""The benchmarks' cluster: the Volcano CRDs, KWOK nodes made Ready, and the workload's
PodGroups and pods (as integration/harness/objects.py builds them; the bench needs
integration/controlplane.py only).

Owns: `NAMESPACE`, `SCHEDULER`, `install_crds`, `pod`, `podgroup`, `add_nodes` (created in
parallel, their not-ready taint lifted unless the controller-manager is left to it), `workload`.
Must not: start the scheduler or measure (`observe`).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.apiclient import MERGE_PATCH, Api
from integration.controlplane import NOT_READY_TAINT, REPO_ROOT, LocalControlPlane

NAMESPACE = "bench"
SCHEDULER = "vscheduler"


CRDS = (
    REPO_ROOT / "deploy" / "crds" / "scheduling.volcano.sh_podgroups.yaml",
    REPO_ROOT / "deploy" / "crds" / "scheduling.volcano.sh_queues.yaml",
)


def install_crds(cp: LocalControlPlane) -> None:
    """The Volcano PodGroup and Queue CRDs, established."""
    for crd in CRDS:
        cp.kubectl("apply", "--server-side", "-f", str(crd))
    cp.kubectl(
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd/podgroups.scheduling.volcano.sh",
        "crd/queues.scheduling.volcano.sh",
    )


def pod(name: str, group: str) -> dict[str, Any]:
    """A pending pod of the scheduler under test in gang `group` (kwok "runs" it once bound)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "annotations": {"scheduling.k8s.io/group-name": group},
        },
        "spec": {
            "schedulerName": SCHEDULER,
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}},
                }
            ],
        },
    }


def podgroup(name: str, min_member: int) -> dict[str, Any]:
    """A Volcano PodGroup in the default queue."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"minMember": min_member, "queue": "default"},
    }


# --- nodes and the workload --------------------------------------------------------------------
KUBELET_LABELS = {"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}
"""The deprecated os/arch labels a kubelet still registers its node with. Without them
something in the control plane adds them to every new node, one at a time (~5 nodes/s, for
minutes at 500 nodes), and each of those label changes is a node change a scheduler must read
(for vscheduler, a cycle): churn a real cluster's settled nodes do not have."""


def add_nodes(
    cp: LocalControlPlane, api: Api, count: int, threads: int, *, untaint: bool
) -> dict[str, Any]:
    """Create `count` KWOK nodes in parallel, then wait until every one is Ready (kwok) and
    without the not-ready taint. The controller-manager lifts that taint at ~5 nodes/s (500 nodes:
    ~105 s); with `untaint` the bench lifts it itself from nodes kwok has made Ready."""
    start = time.monotonic()

    def one(i: int) -> None:
        name = f"kwok-node-{i:05d}"
        cp.add_node(
            name, cpu="32", memory="128Gi", pods=110, labels=KUBELET_LABELS, wait_ready=False
        )

    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(one, range(count)))
    created = time.monotonic()
    all_ready: list[float] = []
    lifted = [0]

    def schedulable() -> bool:
        status, doc = api.request("GET", "/api/v1/nodes?labelSelector=type%3Dkwok")
        if status != 200:
            return False
        ready, tainted = 0, []
        for node in doc["items"]:
            conds = {c["type"]: c["status"] for c in node.get("status", {}).get("conditions", [])}
            taints = node.get("spec", {}).get("taints") or []
            if conds.get("Ready") == "True":
                ready += 1
                if any(t["key"] == NOT_READY_TAINT for t in taints):
                    tainted.append(node)
        if ready == count and not all_ready:
            all_ready.append(time.monotonic())
        if untaint and tainted:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                lifted[0] += sum(pool.map(_lift_not_ready, [api] * len(tainted), tainted))
            return False
        return ready == count and not tainted

    cp.wait_for(f"{count} KWOK nodes Ready and untainted", schedulable, timeout=600)
    done = time.monotonic()
    return {
        "count": count,
        "createSeconds": round(created - start, 2),
        "allReadySeconds": elapsed(all_ready[0] if all_ready else None, created),
        "allSchedulableSeconds": round(done - created, 2),
        "notReadyTaintsLiftedByBench": lifted[0],
    }


def _lift_not_ready(api: Api, node: dict[str, Any]) -> int:
    """Remove the not-ready taint from a Ready node (what the node-lifecycle controller does)."""
    keep = [t for t in node["spec"]["taints"] if t["key"] != NOT_READY_TAINT]
    patch = {
        "metadata": {"resourceVersion": node["metadata"]["resourceVersion"]},
        "spec": {"taints": keep or None},
    }
    name = node["metadata"]["name"]
    status, _ = api.request("PATCH", f"/api/v1/nodes/{name}", patch, content_type=MERGE_PATCH)
    return int(status == 200)  # 409: the controller-manager got there first


def workload(pods: int, gang: int) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(PodGroup creates, pod creates): gangs of `gang` pods, each with its PodGroup."""
    groups: list[tuple[str, Any]] = []
    members: list[tuple[str, Any]] = []
    pg_path = f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{NAMESPACE}/podgroups"
    pod_path = f"/api/v1/namespaces/{NAMESPACE}/pods"
    for g in range((pods + gang - 1) // gang):
        name = f"job-{g:05d}"
        size = min(gang, pods - g * gang)
        groups.append((pg_path, podgroup(name, size)))
        members.extend((pod_path, pod(f"{name}-{t}", name)) for t in range(size))
    return groups, members


def elapsed(t: float | None, origin: float) -> float | None:
    """Seconds from `origin` to `t` (ms precision), None when `t` never happened."""
    return None if t is None else round(t - origin, 3)
