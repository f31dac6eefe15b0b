"""Volume binding on a real API server, with kube-controller-manager's PV controller: a pod's
claims are bound where the pod goes, as kube-scheduler's VolumeBinding plugin binds them.

A WaitForFirstConsumer claim of a class that provisions is annotated with the pod's node, and
the pod is bound only once its claim is (the test plays the provisioner: it makes the volume for
that node, claimed for the claim, and the PV controller binds them); a provisioning that fails
(the provisioner removes the annotation) leaves the pod unbound, told so in kube-scheduler's
words; a claim of a class of pre-made local volumes gets the volume on the pod's node claimed
for it (the PV controller completes the binding, then the pod is bound); a claim the PV
controller bound at once keeps its pod to its volume's node; a pod whose claim does not exist
stays pending, told so in kube-scheduler's words. With `predicate.VolumeBindingEnable: false`
none of it: the pod is bound at once and its claim left as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from integration import harness

TIMEOUT = 60.0
SELECTED_NODE = "volume.kubernetes.io/selected-node"
HOSTNAME = "kubernetes.io/hostname"


def storage_class(name: str, provisioner: str, mode: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }


def local_volume(name: str, storage_class: str, node: str) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "persistentVolumeReclaimPolicy": "Retain",
            "local": {"path": f"/mnt/{name}"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
        },
    }


def claim(name: str, storage_class: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "test"},
        "spec": {
            "storageClassName": storage_class,
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def pod_using(name: str, claim_name: str) -> dict[str, Any]:
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}]
    return harness.pod(name, "test", cpu="100m", extra={"volumes": volumes})


def get(cluster: harness.ScopedCluster, path: str) -> dict[str, Any]:
    found: dict[str, Any] = cluster.request("GET", path)
    return found


def claim_path(name: str) -> str:
    return f"/api/v1/namespaces/test/persistentvolumeclaims/{name}"


def selected_node(cluster: harness.ScopedCluster, name: str) -> str | None:
    annotations = get(cluster, claim_path(name))["metadata"].get("annotations") or {}
    node = annotations.get(SELECTED_NODE)
    return str(node) if node else None


def provision(cluster: harness.ScopedCluster, name: str, storage_class: str, node: str) -> None:
    """What an external provisioner does for claim `name`, annotated for `node`: a volume on
    that node, claimed for the claim (the PV controller then binds them)."""
    made = get(cluster, claim_path(name))
    volume = local_volume(f"pv-{name}", storage_class, node)
    volume["spec"]["claimRef"] = {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": harness.namespace_of(cluster),
        "name": name,
        "uid": made["metadata"]["uid"],
    }
    cluster.request("POST", "/api/v1/persistentvolumes", volume)


def fail_provisioning(cluster: harness.ScopedCluster, name: str) -> None:
    """What an external provisioner does when it gives up on claim `name`: it removes the
    selected-node annotation (kube-scheduler then tries the pod again)."""
    patch = {"metadata": {"annotations": {SELECTED_NODE: None}}}
    cluster.request("PATCH", claim_path(name), patch, content_type="application/merge-patch+json")


def bound_node(cluster: harness.ScopedCluster, name: str) -> str:
    return harness.wait_for(
        f"{name} bound", lambda: harness.bound(cluster, "test").get(name), TIMEOUT
    )


@pytest.mark.timeout(240)
def test_pods_bind_where_their_claims_can_be_bound_and_bind_them_there(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    if harness.backend() != "local":
        pytest.skip(
            "StorageClasses and PersistentVolumes are cluster-wide: the cluster must be"
            " the test's alone"
        )
    for node in ("node-a", "node-b"):
        cluster.add_node(node, cpu="4", memory="8Gi")
    for obj in (
        storage_class("fake", "example.com/fake", "WaitForFirstConsumer"),
        storage_class("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer"),
        storage_class("at-once", "kubernetes.io/no-provisioner", "Immediate"),
    ):
        cluster.request("POST", "/apis/storage.k8s.io/v1/storageclasses", obj)
    for obj in (
        local_volume("local-b", "local", "node-b"),
        local_volume("early-b", "at-once", "node-b"),
    ):
        cluster.request("POST", "/api/v1/persistentvolumes", obj)
    for obj in (
        claim("provisioned", "fake"),
        claim("failing", "fake"),
        claim("pre-made", "local"),
        claim("early", "at-once"),
    ):
        cluster.request("POST", "/api/v1/namespaces/test/persistentvolumeclaims", obj)
    harness.wait_for(
        "the PV controller binding the Immediate claim",
        lambda: get(cluster, claim_path("early")).get("status", {}).get("phase") == "Bound",
        TIMEOUT,
    )
    scheduler = start_scheduler()
    scheduler.wait_ready(TIMEOUT)

    # (a) A class that provisions: the claim names the pod's node, and the pod is bound there
    # only once the claim is bound (the test provisions its volume).
    harness.create(cluster, pod_using("provisioned", "provisioned"))
    node = harness.wait_for(
        "provisioned's claim annotated", lambda: selected_node(cluster, "provisioned"), TIMEOUT
    )
    assert "provisioned" not in harness.bound(cluster, "test")
    provision(cluster, "provisioned", "fake", node)
    assert bound_node(cluster, "provisioned") == node
    made = get(cluster, claim_path("provisioned"))
    assert made["spec"].get("volumeName") == "pv-provisioned"

    # (a') The provisioning fails (the annotation is removed): the pod is not bound, and is
    # told so in kube-scheduler's words.
    harness.create(cluster, pod_using("failing", "failing"))
    harness.wait_for(
        "failing's claim annotated", lambda: selected_node(cluster, "failing"), TIMEOUT
    )
    fail_provisioning(cluster, "failing")

    def failure() -> str | None:
        cond = harness.pod_condition(cluster, "test", "failing") or {}
        return str(cond.get("message")) if cond.get("reason") == "SchedulerError" else None

    assert harness.wait_for("failing's PodScheduled=False", failure, TIMEOUT) == (
        'running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC'
        ' "failing"'
    )
    assert "failing" not in harness.bound(cluster, "test")

    # (b) Pre-made local volumes: the pod goes to the volume's node, which is claimed for it,
    # and the PV controller completes the binding.
    harness.create(cluster, pod_using("pre-made", "pre-made"))
    assert bound_node(cluster, "pre-made") == "node-b"
    volume = get(cluster, "/api/v1/persistentvolumes/local-b")
    ref = volume["spec"]["claimRef"]
    assert (ref["namespace"], ref["name"]) == (harness.namespace_of(cluster), "pre-made")
    made = get(cluster, claim_path("pre-made"))
    assert ref["uid"] == made["metadata"]["uid"]
    harness.wait_for(
        "the PV controller binding pre-made to local-b",
        lambda: (
            (c := get(cluster, claim_path("pre-made")))["spec"].get("volumeName") == "local-b"
            and c.get("status", {}).get("phase") == "Bound"
        ),
        TIMEOUT,
    )

    # (c) A claim bound at once: the pod goes where its volume is.
    harness.create(cluster, pod_using("early", "early"))
    assert bound_node(cluster, "early") == "node-b"

    # (d) A claim that does not exist: the pod stays pending, told why.
    harness.create(cluster, pod_using("orphan", "nowhere"))

    def message() -> str | None:
        cond = harness.pod_condition(cluster, "test", "orphan") or {}
        return str(cond.get("message")) if cond.get("status") == "False" else None

    assert harness.wait_for("orphan's PodScheduled=False", message, TIMEOUT) == (
        '0/2 nodes are available: persistentvolumeclaim "nowhere" not found.'
    )
    assert "orphan" not in harness.bound(cluster, "test")
    assert scheduler.alive()


OFF_POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
    arguments:
      predicate.VolumeBindingEnable: false
  - name: proportion
  - name: nodeorder
"""


@pytest.mark.timeout(180)
def test_with_volume_binding_off_pods_bind_at_once_and_their_claims_are_not_written(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    tmp_path: Path,
) -> None:
    """`predicate.VolumeBindingEnable: false` turns off Volcano's whole VolumeBinding plugin:
    a pod whose WaitForFirstConsumer claim would be annotated with its node, and the Binding
    held until the claim is bound, is bound at once and its claim is left as it was."""
    if harness.backend() != "local":
        pytest.skip(
            "StorageClasses and PersistentVolumes are cluster-wide: the cluster must be"
            " the test's alone"
        )
    cluster.add_node("node-a", cpu="4", memory="8Gi")
    cluster.request(
        "POST",
        "/apis/storage.k8s.io/v1/storageclasses",
        storage_class("fake", "example.com/fake", "WaitForFirstConsumer"),
    )
    cluster.request("POST", "/api/v1/namespaces/test/persistentvolumeclaims", claim("data", "fake"))
    policy = tmp_path / "policy.yaml"
    policy.write_text(OFF_POLICY)
    scheduler = start_scheduler(args=[f"--policy-file={policy}"])
    scheduler.wait_ready(TIMEOUT)

    harness.create(cluster, pod_using("p", "data"))

    assert bound_node(cluster, "p") == "node-a"
    assert selected_node(cluster, "data") is None
    assert "volumeName" not in get(cluster, claim_path("data"))["spec"]
    assert scheduler.alive()
