"""Under Volcano's own PodGroup CRD (no status subresource), beside a Volcano gang.

The PodGroup CRD installed here is deploy/crds' with `subresources` removed, as Volcano ships it:
`PATCH podgroups/{name}/status` answers 404 there. vscheduler still writes its own gang's phase
(through the PodGroup itself), and leaves the status of a gang whose pods are Volcano's alone.

A control plane of the test's own on every backend: the test replaces a cluster-wide CRD.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from integration import harness
from integration.controlplane import REPO_ROOT

PODGROUP_CRD = REPO_ROOT / "deploy" / "crds" / "scheduling.volcano.sh_podgroups.yaml"
QUEUE_CRD = REPO_ROOT / "deploy" / "crds" / "scheduling.volcano.sh_queues.yaml"


def volcano_style_crd(target: Path) -> Path:
    """deploy/crds' PodGroup CRD without the status subresource."""
    crd = yaml.safe_load(PODGROUP_CRD.read_text())
    for version in crd["spec"]["versions"]:
        version.pop("subresources", None)
    target.write_text(yaml.safe_dump(crd))
    return target


@pytest.fixture
def volcano_cluster(tmp_path: Path) -> Iterator[harness.LocalCluster]:
    """A control plane of its own with a Volcano-style PodGroup CRD and the Queue CRD."""
    cp = harness.LocalCluster(build=True)
    cp.start()
    try:
        for crd in (volcano_style_crd(tmp_path / "podgroups.yaml"), QUEUE_CRD):
            cp.kubectl("apply", "--server-side", "-f", str(crd))
        cp.kubectl(
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/podgroups.scheduling.volcano.sh",
            "crd/queues.scheduling.volcano.sh",
        )
        cp.create_namespace("test")
        yield cp
    finally:
        cp.stop()


def phase(cluster: harness.Cluster, name: str) -> Any:
    return harness.get_podgroup(cluster, "test", name).get("status", {}).get("phase")


@pytest.mark.timeout(300)
def test_own_gang_status_is_written_through_the_podgroup_and_volcanos_gang_is_left_alone(
    volcano_cluster: harness.LocalCluster, tmp_path: Path
) -> None:
    cluster = volcano_cluster
    crd = cluster.request(
        "GET",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/podgroups.scheduling.volcano.sh",
    )
    assert [v.get("subresources") for v in crd["spec"]["versions"]] == [None]
    for i in range(2):
        cluster.add_node(f"node-{i}", cpu="4", memory="8Gi")
    volcano_gang: dict[str, Any] = harness.podgroup("volcano-gang", "test", min_member=2)
    volcano_gang["status"] = {"phase": "Running", "running": 2}  # no subresource: kept on create
    harness.create(cluster, volcano_gang)
    for i in range(2):
        harness.create(
            cluster, harness.pod(f"v-{i}", "test", scheduler="volcano", group="volcano-gang")
        )
        cluster.bind_pod("test", f"v-{i}", "node-0")  # as Volcano would
    harness.create(cluster, harness.podgroup("ours", "test", min_member=2))
    for i in range(2):
        harness.create(cluster, harness.pod(f"ours-{i}", "test", group="ours"))

    scheduler = harness.Scheduler(cluster, tmp_path)
    try:
        scheduler.wait_ready()
        harness.wait_for("our gang Running", lambda: phase(cluster, "ours") == "Running", 60)
        assert sorted(harness.bound(cluster, "test")) == ["ours-0", "ours-1", "v-0", "v-1"]
        volcano = harness.get_podgroup(cluster, "test", "volcano-gang")["status"]
    finally:
        code = scheduler.stop()
    log = scheduler.log(400)
    assert code == 0, log
    assert volcano == {"phase": "Running", "running": 2}
    assert log.count("the PodGroup CRD has no status subresource") == 1, log
