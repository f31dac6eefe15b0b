"""deploy/ and the image's install steps, proven on a real API server.

- The Dockerfile's install steps (deploy/image/install.sh) run for real into a venv, which is
  then made read-only: `vscheduler` runs from it with PYTHONDONTWRITEBYTECODE=1 and no home, as
  in the image with a read-only root filesystem. (As root, permission bits do not bind, so the
  processes run without the capabilities that override them.)
- On a fresh control plane: the CRDs, then `kubectl apply --server-side -k deploy/`, then
  `-k deploy/monitoring` (with stand-in Prometheus-operator CRDs); Volcano-style objects are
  accepted unchanged; the Deployment's pods pass Pod Security "restricted".
- The scheduler, run from that read-only install with the shipped Deployment's own flags and the
  shipped ServiceAccount's token (not admin), schedules a gang Job; the same token may not read
  Secrets.

Every test here has a local control plane of its own, whatever the backend: deploy/ installs
cluster-wide objects, which a shared cluster must not get.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from vscheduler import __version__

from integration import harness
from integration.controlplane import REPO_ROOT, ApiError, find_bin_dir, free_port, run_kubectl

DEPLOY = REPO_ROOT / "deploy"
SAMPLES = REPO_ROOT / "tests" / "unit" / "deploy" / "volcano-samples.yaml"
NAMESPACE = "vscheduler-system"
CRD_NAMES = ("crd/podgroups.scheduling.volcano.sh", "crd/queues.scheduling.volcano.sh")
READ_ONLY_ROOT = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]
"""As root: drop what lets root write through permission bits, so a-w means read-only."""
RUNTIME_ENV = {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1", "HOME": "/nonexistent"}


def read_only(argv: Sequence[str]) -> list[str]:
    return [*(READ_ONLY_ROOT if os.geteuid() == 0 else []), *argv]


def build_context(target: Path) -> Path:
    """The Docker build context: the repository filtered by .dockerignore's allow-list."""
    lines = (REPO_ROOT / ".dockerignore").read_text().splitlines()
    for entry in [ln[1:].rstrip("/") for ln in lines if ln.startswith("!")]:
        source, dest = REPO_ROOT / entry, target / entry
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copyfile(source, dest)
    return target


def install_step(*args: str) -> None:
    proc = subprocess.run(
        ["sh", str(DEPLOY / "image" / "install.sh"), *args],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, (
        f"install.sh {args[0]}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    )


@pytest.fixture(scope="module")
def image_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The image's /opt/vscheduler, made by the Dockerfile's own steps, then made read-only."""
    work = tmp_path_factory.mktemp("image")
    context = build_context(work / "context")
    install_step("wheels", str(context), str(work / "wheels"))
    venv = work / "venv"
    install_step("install", str(work / "wheels"), str(venv))
    subprocess.run(["chmod", "-R", "a-w", str(venv)], check=True)
    yield venv
    subprocess.run(["chmod", "-R", "u+w", str(venv)], check=True)


def run_installed(venv: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        read_only([str(venv / "bin" / argv[0]), *argv[1:]]),
        env=RUNTIME_ENV,
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.timeout(600)
def test_the_images_install_steps_give_a_read_only_install_that_runs(image_venv: Path) -> None:
    assert run_installed(image_venv, "vscheduler", "version").stdout == f"{__version__}\n"
    policy = DEPLOY / "policy" / "volcano-scheduler.conf"
    checked = run_installed(image_venv, "vscheduler", "validate-config", str(policy))
    assert checked.stdout == f"{policy}: OK\n", checked.stderr
    imported = run_installed(image_venv, "python", "-c", "import vscheduler.app; print('ok')")
    assert imported.stdout == "ok\n", imported.stderr
    write = run_installed(image_venv, "python", "-c", f"open('{image_venv}/x', 'w')")
    assert "PermissionError" in write.stderr  # the guard holds: nothing above could write
    assert not (image_venv / "bin" / "pip").exists()
    assert not list(image_venv.rglob("*.whl"))


# --- the manifests on a real API server --------------------------------------------------------
MONITORING_CRDS = [
    {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.monitoring.coreos.com"},
        "spec": {
            "group": "monitoring.coreos.com",
            "names": {"kind": kind, "plural": plural, "listKind": f"{kind}List"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }
    for kind, plural in (
        ("ServiceMonitor", "servicemonitors"),
        ("PrometheusRule", "prometheusrules"),
    )
]
"""Stand-ins for the Prometheus operator's CRDs (structural, anything accepted): enough to show
deploy/monitoring applies; promtool checks the rules themselves (tests/unit/deploy)."""


@pytest.fixture
def fresh() -> Iterator[harness.ScopedCluster]:
    """A control plane of the test's own with the `test` namespace and no Volcano CRD, on every
    backend: deploy/ installs cluster-wide objects (CRDs, a ClusterRole, vscheduler-system) that a
    shared cluster must not get, and the CRDs are what the install brings. (Deleting CRDs a
    fixture had made first waited on the API server's CRD finalizer: past 240 s in 2 of 5 runs
    on 2026-11-29.)"""
    cp = harness.LocalCluster(build=True)
    cp.start()
    try:
        cp.create_namespace("test")
        yield cp
    finally:
        cp.stop()


def install(cluster: harness.ScopedCluster) -> None:
    """docs/install.md's steps: the CRDs, then everything."""
    cluster.kubectl("apply", "--server-side", "-k", str(DEPLOY / "crds"))
    cluster.kubectl("wait", "--for=condition=Established", "--timeout=60s", *CRD_NAMES)
    applied = cluster.kubectl("apply", "--server-side", "-k", str(DEPLOY))
    assert "deployment.apps/vscheduler serverside-applied" in applied.stdout
    assert "queue.scheduling.volcano.sh/default serverside-applied" in applied.stdout


def samples() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(SAMPLES.read_text()) if d]


def path_of(cluster: harness.ScopedCluster, obj: dict[str, Any]) -> str:
    base = "/apis/scheduling.volcano.sh/v1beta1"
    name = obj["metadata"]["name"]
    if obj["kind"] == "Queue":
        return f"{base}/queues/{name}"
    return f"{base}/namespaces/{cluster.namespace}/podgroups/{name}"


def created_unchanged(cluster: harness.ScopedCluster, sample: dict[str, Any]) -> None:
    """Created, then read back: the spec as sent (plus the CRD's defaults); the status, written
    through the status subresource as Volcano's components write it, as sent."""
    obj = {k: v for k, v in sample.items() if k != "status"}
    if obj["kind"] == "PodGroup":
        obj["metadata"] = {**obj["metadata"], "namespace": "test"}
    harness.create(cluster, obj)
    stored = cluster.request("GET", path_of(cluster, sample))
    defaults = {"queue": "default"} if sample["kind"] == "PodGroup" else {}
    assert stored["spec"] == {**defaults, **sample["spec"]}, harness.dump(stored)
    if "status" in sample:
        cluster.request(
            "PATCH",
            path_of(cluster, sample) + "/status",
            {"status": sample["status"]},
            content_type="application/merge-patch+json",
        )
        stored = cluster.request("GET", path_of(cluster, sample))
        assert stored["status"] == sample["status"], harness.dump(stored)


@pytest.mark.timeout(300)
def test_deploy_applies_to_a_fresh_api_server_and_volcano_objects_are_accepted_unchanged(
    fresh: harness.ScopedCluster,
) -> None:
    cluster = fresh
    install(cluster)
    dry_run = cluster.kubectl("apply", "--server-side", "--dry-run=server", "-k", str(DEPLOY))
    assert "deployment.apps/vscheduler serverside-applied (server dry run)" in dry_run.stdout
    default = cluster.request("GET", "/apis/scheduling.volcano.sh/v1beta1/queues/default")
    assert default["spec"] == {"weight": 1, "reclaimable": True}
    cluster.wait_for(  # created by the ReplicaSet: admitted under Pod Security "restricted"
        "the Deployment's 2 pods",
        lambda: len(harness.pods(cluster, NAMESPACE)) == 2,
    )
    for crd in MONITORING_CRDS:
        cluster.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump(crd))
    cluster.kubectl(
        "wait", "--for=condition=Established", "--timeout=60s",
        "crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com",
    )  # fmt: skip
    monitoring = cluster.kubectl("apply", "--server-side", "-k", str(DEPLOY / "monitoring"))
    assert "prometheusrule.monitoring.coreos.com/vscheduler serverside-applied" in monitoring.stdout
    for sample in samples():
        created_unchanged(cluster, sample)
    header = cluster.kubectl("get", "queues").stdout.splitlines()[0].split()
    assert header == ["NAME", "PARENT", "WEIGHT", "AGE"]
    typo: dict[str, Any] = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup"}
    typo |= {"metadata": {"name": "typo", "namespace": "test"}, "spec": {"minMembers": 2}}
    refused = cluster.kubectl(
        "apply", "--server-side", "-f", "-", input=yaml.safe_dump(typo), check=False
    )
    assert refused.returncode != 0
    assert ".spec.minMembers: field not declared in schema" in refused.stderr


# --- the scheduler with the shipped ServiceAccount --------------------------------------------
class ImageScheduler(harness.Scheduler):
    """`vscheduler run` from the read-only image install, with the Deployment's own flags."""

    def __init__(
        self, cluster: harness.ScopedCluster, workdir: Path, venv: Path, kubeconfig: Path
    ) -> None:
        self.cp, self.name = cluster, cluster.scheduler_name
        self.port = free_port()
        self.log_path = workdir / f"vscheduler-image-{self.port}.log"
        argv = [
            str(venv / "bin" / "vscheduler"),
            "run",
            *deployment_args(),
            f"--kubeconfig={kubeconfig}",
            f"--listen-address=127.0.0.1:{self.port}",
            f"--scheduler-name={self.name}",
            "--schedule-period=0.5",
        ]
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            read_only(argv),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd="/",
            env={**RUNTIME_ENV, "POD_NAMESPACE": NAMESPACE},
            start_new_session=True,
        )


def deployment_args() -> list[str]:
    """The shipped container's args, $(POD_NAMESPACE) expanded, minus the listen address."""
    deployment = yaml.safe_load((DEPLOY / "deployment.yaml").read_text())
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    args = [a.replace("$(POD_NAMESPACE)", NAMESPACE) for a in container["args"]]
    return [a for a in args if not a.startswith("--listen-address=")]


def gang_job(name: str, pods: int) -> dict[str, Any]:
    template = harness.pod("x", "test", cpu="2", group=name)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "test"},
        "spec": {
            "completions": pods,
            "parallelism": pods,
            "template": {
                "metadata": {"annotations": template["metadata"]["annotations"]},
                "spec": {**template["spec"], "restartPolicy": "Never"},
            },
        },
    }


def may(kubeconfig: Path, workdir: Path, question: str) -> bool:
    """`kubectl auth can-i QUESTION` as the identity of `kubeconfig`."""
    args = ["auth", "can-i", *question.split()]
    proc = run_kubectl(find_bin_dir(), kubeconfig, workdir, args, check=False)
    return proc.stdout.strip() == "yes"


@pytest.mark.timeout(600)
def test_the_shipped_service_account_schedules_a_gang_job_and_may_not_read_secrets(
    fresh: harness.ScopedCluster, image_venv: Path, tmp_path: Path
) -> None:
    cluster = fresh
    install(cluster)
    token = cluster.service_account_token(NAMESPACE, "vscheduler")
    kubeconfig = cluster.write_kubeconfig(tmp_path / "vscheduler.kubeconfig", token)
    ns = cluster.namespace
    questions = {
        f"get secrets -n {NAMESPACE}": False,
        "list secrets -A": False,
        f"list configmaps -n {NAMESPACE}": False,
        f"create pods -n {ns}": False,
        f"delete pods -n {ns}": False,
        f"create pods --subresource=binding -n {ns}": True,
        f"create pods --subresource=eviction -n {ns}": True,
        f"patch pods --subresource=status -n {ns}": True,
        f"patch podgroups.scheduling.volcano.sh --subresource=status -n {ns}": True,
        # the fallback when a PodGroup CRD has no status subresource (Volcano's own)
        f"patch podgroups.scheduling.volcano.sh -n {ns}": True,
        f"delete podgroups.scheduling.volcano.sh -n {ns}": False,
        "watch queues.scheduling.volcano.sh": True,
    }
    assert {q: may(kubeconfig, tmp_path, q) for q in questions} == questions
    with pytest.raises(ApiError) as refused:
        cluster.request("GET", f"/api/v1/namespaces/{NAMESPACE}/secrets", token=token)
    assert refused.value.status == 403

    for i in range(3):
        cluster.add_node(f"node-{i}", cpu="2", memory="4Gi")
    harness.create(cluster, harness.podgroup("train", "test", min_member=3))
    harness.create(cluster, gang_job("train", 3))
    scheduler = ImageScheduler(cluster, tmp_path, image_venv, kubeconfig)
    try:
        scheduler.wait_ready(timeout=60)
        harness.wait_for("all 3 bound", lambda: len(harness.bound(cluster, ns)) == 3, 60)
        assert sorted(harness.bound(cluster, ns).values()) == ["node-0", "node-1", "node-2"]
        harness.wait_for(
            "PodGroup Running",
            lambda: (
                harness.get_podgroup(cluster, ns, "train").get("status", {}).get("phase")
                in ("Running", "Completed")
            ),
        )
        pod = sorted(harness.bound(cluster, ns))[0]
        harness.wait_for(
            "a Scheduled Event",
            lambda: harness.events_about(cluster, ns, "Pod", pod, reason="Scheduled"),
        )
        assert harness.scrape(scheduler, "vscheduler_is_leader") == 1.0
    finally:
        code = scheduler.stop()
    log = scheduler.log(400)
    assert code == 0, log
    assert "forbidden" not in log.lower(), log
