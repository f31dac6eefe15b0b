"""deploy/helm/vscheduler installed with `helm install` on a real API server, as docs/install.md
says ("With Helm"): the namespace from deploy/namespace.yaml, then the chart. Helm applies the
CRDs of the chart's crds/ directory first; the objects of the kustomize base follow, and the
Deployment's pods are created (admitted under Pod Security "restricted"; kwok runs no
containers, so nothing waits for them to be ready). An upgrade turns monitoring on; an uninstall
removes what the chart made and leaves the CRDs, as Helm does.

tests/unit/deploy/test_deploy_helm.py compares the rendered objects with `kubectl kustomize`.
A control plane of the test's own on every backend: the chart installs cluster-wide objects.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from integration import harness
from integration.controlplane import REPO_ROOT, ApiError, find_bin_dir
from integration.test_deploy import CRD_NAMES, MONITORING_CRDS

CHART = REPO_ROOT / "deploy" / "helm" / "vscheduler"
NAMESPACE = "vscheduler-system"


def helm_binary() -> Path:
    """The helm that `scripts/controlplane` builds (built here when missing, ~3 min cold)."""
    path = find_bin_dir() / "helm"
    if not os.access(path, os.X_OK):
        proc = subprocess.run(
            [str(REPO_ROOT / "scripts" / "controlplane"), "helm"],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert proc.returncode == 0, f"scripts/controlplane helm failed:\n{proc.stderr[-3000:]}"
    return path


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[harness.LocalCluster]:
    """A control plane of the test's own, without the Volcano CRDs (the chart brings them)."""
    cp = harness.LocalCluster(build=True)
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()


def helm(cluster: harness.LocalCluster, home: Path, *args: str) -> str:
    """`helm ARGS` against the test's cluster, with Helm's caches and config under `home`."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "KUBECONFIG": str(cluster.kubeconfig_path),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }
    argv = [str(helm_binary()), *args]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, f"helm {' '.join(args)}:\n{proc.stdout}{proc.stderr}"
    return proc.stdout


def get(cluster: harness.LocalCluster, path: str) -> dict[str, Any]:
    found: dict[str, Any] = cluster.request("GET", path)
    return found


def absent(cluster: harness.LocalCluster, path: str) -> bool:
    try:
        cluster.request("GET", path)
    except ApiError as err:
        return err.status == 404
    return False


@pytest.mark.timeout(300)
def test_helm_install_creates_the_kustomize_bases_objects_and_the_deployments_pods(
    cluster: harness.LocalCluster, tmp_path: Path
) -> None:
    cluster.kubectl("apply", "--server-side", "-f", str(REPO_ROOT / "deploy" / "namespace.yaml"))
    out = helm(cluster, tmp_path, "install", "vscheduler", str(CHART), "--namespace", NAMESPACE)
    assert "STATUS: deployed" in out
    assert f"vscheduler 0.1.0 is installed in {NAMESPACE} (2 replicas, one leads)." in out

    cluster.kubectl("wait", "--for=condition=Established", "--timeout=60s", *CRD_NAMES)
    default = get(cluster, "/apis/scheduling.volcano.sh/v1beta1/queues/default")
    assert default["spec"] == {"weight": 1, "reclaimable": True}
    policy = get(cluster, f"/api/v1/namespaces/{NAMESPACE}/configmaps/vscheduler-policy")
    shipped = (REPO_ROOT / "deploy" / "policy" / "volcano-scheduler.conf").read_text()
    assert policy["data"] == {"volcano-scheduler.conf": shipped}
    deployment = get(cluster, f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/vscheduler")
    assert deployment["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "vscheduler:0.1.0"
    for path in (
        f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/vscheduler",
        f"/api/v1/namespaces/{NAMESPACE}/services/vscheduler",
        f"/apis/policy/v1/namespaces/{NAMESPACE}/poddisruptionbudgets/vscheduler",
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NAMESPACE}/rolebindings/vscheduler",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles/vscheduler-reservations",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/vscheduler",
    ):
        assert get(cluster, path)["metadata"]["name"].startswith("vscheduler"), path
    cluster.wait_for(  # created by the ReplicaSet: admitted under Pod Security "restricted"
        "the Deployment's 2 pods", lambda: len(harness.pods(cluster, NAMESPACE)) == 2
    )

    # Monitoring on (with stand-ins for the Prometheus operator's CRDs), one replica.
    for crd in MONITORING_CRDS:
        cluster.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump(crd))
    cluster.kubectl(
        "wait", "--for=condition=Established", "--timeout=60s",
        "crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com",
    )  # fmt: skip
    helm(
        cluster, tmp_path, "upgrade", "vscheduler", str(CHART), "--namespace", NAMESPACE,
        "--set", "monitoring.enabled=true,monitoring.labels.release=kps,replicas=1",
    )  # fmt: skip
    base = f"/apis/monitoring.coreos.com/v1/namespaces/{NAMESPACE}"
    rule = get(cluster, f"{base}/prometheusrules/vscheduler")
    assert rule["metadata"]["labels"]["release"] == "kps"
    shipped_rule = yaml.safe_load((CHART / "files" / "prometheusrule.yaml").read_text())
    assert rule["spec"] == shipped_rule["spec"]
    assert get(cluster, f"{base}/servicemonitors/vscheduler")["spec"]["endpoints"][0]["port"] == (
        "http-metrics"
    )
    deployment = get(cluster, f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/vscheduler")
    assert deployment["spec"]["replicas"] == 1

    # Uninstalled: the chart's objects go (its Queue `default` too); the CRDs stay, and with
    # them every Queue and PodGroup users made.
    helm(cluster, tmp_path, "uninstall", "vscheduler", "--namespace", NAMESPACE, "--wait")
    assert absent(cluster, f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/vscheduler")
    assert absent(cluster, "/apis/rbac.authorization.k8s.io/v1/clusterroles/vscheduler")
    assert absent(cluster, "/apis/scheduling.volcano.sh/v1beta1/queues/default")
    for name in CRD_NAMES:
        kept = name.removeprefix("crd/")
        assert get(cluster, f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{kept}")
