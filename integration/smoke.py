"""Smoke test of the local control plane: ``python integration/smoke.py``.

Builds the binaries if the cache is cold, starts etcd + kube-apiserver + kube-controller-manager
+ kwok, adds two fake nodes, binds a pod by hand (there is no kube-scheduler) and waits for kwok
to run it, runs a Job through the controller-manager, checks RBAC denies an unprivileged service
account, then stops everything and checks no process is left. Prints one JSON object; exit 0 = OK.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from integration.controlplane import (
    BUILD_SCRIPT,
    ApiError,
    LocalControlPlane,
    read_versions,
)

NS = "smoke"
PAUSE = "registry.k8s.io/pause:3.10"  # never pulled: kwok fakes the containers


def ensure_built() -> float | None:
    """Build the binaries if the cache is cold; the build time in seconds, or None if warm."""
    if os.environ.get("VSCHEDULER_CONTROLPLANE_BIN"):
        return None
    if subprocess.run([str(BUILD_SCRIPT), "check"], check=False).returncode == 0:
        return None
    t0 = time.monotonic()
    subprocess.run([str(BUILD_SCRIPT), "build"], check=True)
    return round(time.monotonic() - t0, 1)


def pod_manifest(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "smoke"}},
        "spec": {
            "schedulerName": "default-scheduler",
            "containers": [
                {
                    "name": "c",
                    "image": PAUSE,
                    "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                }
            ],
        },
    }


def job_manifest(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "schedulerName": "default-scheduler",
                    "containers": [
                        {"name": "c", "image": PAUSE, "resources": {"requests": {"cpu": "1"}}}
                    ],
                }
            },
        },
    }


def check_pod_lifecycle(cp: LocalControlPlane) -> dict[str, Any]:
    """Unscheduled pod stays Pending; after a Binding kwok makes it Running and Ready."""
    base = f"/api/v1/namespaces/{NS}/pods"
    cp.request("POST", base, pod_manifest("smoke-pod"))
    time.sleep(1.0)
    pod = cp.request("GET", f"{base}/smoke-pod")
    assert pod["status"].get("phase") == "Pending", pod["status"]
    assert not pod["spec"].get("nodeName"), "nothing should have scheduled the pod"
    t0 = time.monotonic()
    cp.bind_pod(NS, "smoke-pod", "smoke-node-a")

    def running() -> Any:
        p = cp.request("GET", f"{base}/smoke-pod")
        conds = {c["type"]: c["status"] for c in p["status"].get("conditions", [])}
        return p if p["status"].get("phase") == "Running" and conds.get("Ready") == "True" else None

    pod = cp.wait_for("smoke-pod Running", running, 60)
    return {
        "bind_to_running_s": round(time.monotonic() - t0, 2),
        "node": pod["spec"]["nodeName"],
        "pod_ip": pod["status"].get("podIP"),
        "phase": pod["status"]["phase"],
    }


def check_job(cp: LocalControlPlane) -> dict[str, Any]:
    """kube-controller-manager creates the Job's pod; bound by hand, kwok runs and completes it."""
    t0 = time.monotonic()
    cp.request("POST", f"/apis/batch/v1/namespaces/{NS}/jobs", job_manifest("smoke-job"))
    selector = "batch.kubernetes.io/job-name%3Dsmoke-job"

    def job_pod() -> Any:
        items = cp.request("GET", f"/api/v1/namespaces/{NS}/pods?labelSelector={selector}")["items"]
        return items[0] if items else None

    pod = cp.wait_for("the Job's pod", job_pod, 60)
    created_s = round(time.monotonic() - t0, 2)
    name = pod["metadata"]["name"]
    cp.bind_pod(NS, name, "smoke-node-b")

    def complete() -> Any:
        job = cp.request("GET", f"/apis/batch/v1/namespaces/{NS}/jobs/smoke-job")
        conds = {c["type"]: c["status"] for c in job.get("status", {}).get("conditions", [])}
        return job if conds.get("Complete") == "True" else None

    job = cp.wait_for("smoke-job Complete", complete, 90)
    final = cp.request("GET", f"/api/v1/namespaces/{NS}/pods/{name}")
    return {
        "pod_created_by_controller_manager_s": created_s,
        "pod": name,
        "pod_final_phase": final["status"]["phase"],
        "job_succeeded": job["status"].get("succeeded"),
        "job_complete_s": round(time.monotonic() - t0, 2),
    }


def check_rbac(cp: LocalControlPlane) -> dict[str, Any]:
    """A service account without bindings is denied (403); after a RoleBinding it is allowed."""
    token = cp.service_account_token(NS, "nobody")
    path = f"/api/v1/namespaces/{NS}/pods"
    try:
        cp.request("GET", path, token=token)
        denied_status = 200
    except ApiError as e:
        denied_status = e.status
    assert denied_status == 403, f"expected RBAC denial, got {denied_status}"
    cp.request(
        "POST",
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
        },
    )
    cp.request(
        "POST",
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "nobody-reads-pods"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "pod-reader",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "nobody", "namespace": NS}],
        },
    )
    allowed = cp.wait_for(
        "RBAC to allow the bound SA", lambda: cp.request("GET", path, token=token), 30
    )
    return {"unbound_sa_status": denied_status, "bound_sa_pods_listed": len(allowed["items"])}


def check_clients(cp: LocalControlPlane) -> dict[str, Any]:
    """kubectl and (if installed) the Python kubernetes client work with the admin kubeconfig."""
    out: dict[str, Any] = {
        "kubectl_nodes": cp.kubectl("get", "nodes", "-o", "name").stdout.split(),
        "server_version": cp.request("GET", "/version")["gitVersion"],
    }
    try:
        import kubernetes
    except ImportError:
        out["python_client"] = "not installed"
        return out
    api = kubernetes.client.CoreV1Api(
        kubernetes.config.new_client_from_config(config_file=str(cp.kubeconfig_path))
    )
    out["python_client_nodes"] = sorted(n.metadata.name for n in api.list_node().items)
    return out


def main() -> int:
    result: dict[str, Any] = {"versions": read_versions()}
    result["build_s"] = ensure_built()
    cp = LocalControlPlane(keep_workdir=bool(os.environ.get("VSCHEDULER_KEEP_CONTROLPLANE")))
    t0 = time.monotonic()
    cp.start()
    result["startup_s"] = round(time.monotonic() - t0, 2)
    result["startup_breakdown_s"] = dict(cp.timings)
    result["server_url"] = cp.server_url
    pids = {name: p.popen.pid for name, p in cp.procs.items()}
    try:
        t1 = time.monotonic()
        t = time.monotonic()
        cp.add_node("smoke-node-a", cpu="8", memory="32Gi")
        cp.add_node("smoke-node-b", cpu="16", memory="64Gi", labels={"zone": "b"})
        result["add_two_nodes_ready_s"] = round(time.monotonic() - t, 2)
        t = time.monotonic()
        cp.create_namespace(NS)
        result["namespace_with_default_sa_s"] = round(time.monotonic() - t, 2)
        result["pod"] = check_pod_lifecycle(cp)
        result["job"] = check_job(cp)
        result["rbac"] = check_rbac(cp)
        result["clients"] = check_clients(cp)
        result["smoke_s"] = round(time.monotonic() - t1, 2)
    except Exception:
        for name in cp.procs:
            print(f"--- {name} log tail ---\n{cp.logs(name, 20)}", file=sys.stderr)
        cp.stop()
        raise
    t = time.monotonic()
    cp.stop()
    result["stop_s"] = round(time.monotonic() - t, 2)
    leftovers = [n for n, pid in pids.items() if Path(f"/proc/{pid}").exists()]
    result["leftover_processes"] = leftovers
    print(json.dumps(result, indent=2))
    return 1 if leftovers else 0


if __name__ == "__main__":
    sys.exit(main())
