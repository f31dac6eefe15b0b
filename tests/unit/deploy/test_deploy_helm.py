"""deploy/helm/vscheduler: the chart renders the objects of the kustomize base (deploy/), and its
values change what they say.

`helm template` and `kubectl kustomize` run for real; their objects are compared parsed, not as
text. Both binaries come from the control-plane cache (`scripts/controlplane build` builds them,
helm included; scripts/check runs it before these tests). integration/test_helm.py installs the
chart on a real API server.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from vscheduler import __version__, cli

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
CHART = DEPLOY / "helm" / "vscheduler"
NAMESPACE = "vscheduler-system"
RELEASE = "vscheduler"
HELM_LABELS = {
    "app.kubernetes.io/managed-by": "Helm",
    "app.kubernetes.io/instance": RELEASE,
    "helm.sh/chart": f"vscheduler-{__version__}",
}
"""The labels Helm's conventions add to every templated object (and kustomize does not)."""
COPIES = {
    CHART / "files" / "volcano-scheduler.conf": DEPLOY / "policy" / "volcano-scheduler.conf",
    CHART / "files" / "prometheusrule.yaml": DEPLOY / "monitoring" / "prometheusrule.yaml",
    **{CHART / "crds" / p.name: p for p in sorted((DEPLOY / "crds").glob("*.yaml"))},
}
"""Files of the chart that are copies of deploy/'s (Helm reads only files inside the chart)."""

Key = tuple[str, str, str]


def bin_dir() -> Path:
    """Where `scripts/controlplane` keeps kubectl and helm ($VSCHEDULER_CONTROLPLANE_BIN wins)."""
    override = os.environ.get("VSCHEDULER_CONTROLPLANE_BIN")
    if override:
        return Path(override)
    proc = subprocess.run(
        [str(ROOT / "scripts" / "controlplane"), "versions"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("BIN=")]
    return Path(line.removeprefix("BIN="))


def tool(name: str) -> str:
    path = bin_dir() / name
    if not os.access(path, os.X_OK):
        pytest.fail(f"no {name} in {path.parent}: run scripts/controlplane build")
    return str(path)


def run(argv: Sequence[str]) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, f"{' '.join(argv)}:\n{proc.stdout}{proc.stderr}"
    return proc.stdout


def objects(text: str) -> dict[Key, dict[str, Any]]:
    found: dict[Key, dict[str, Any]] = {}
    for doc in yaml.safe_load_all(text):
        if doc:
            meta = doc["metadata"]
            key = (doc["kind"], meta.get("namespace", ""), meta["name"])
            assert key not in found, f"{key} rendered twice"
            found[key] = doc
    return found


def kustomize(folder: Path) -> dict[Key, dict[str, Any]]:
    return objects(run([tool("kubectl"), "kustomize", str(folder)]))


def helm_template(*args: str, crds: bool = True) -> dict[Key, dict[str, Any]]:
    argv = [tool("helm"), "template", RELEASE, str(CHART), "--namespace", NAMESPACE, *args]
    return objects(run([*argv, *(["--include-crds"] if crds else [])]))


def without_helm_labels(rendered: dict[Key, dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    """The objects with Helm's own labels checked on each templated object, then removed."""
    for key, obj in rendered.items():
        if key[0] == "CustomResourceDefinition":  # crds/ is applied as is, never templated
            continue
        labels = obj["metadata"]["labels"]
        assert {k: labels.pop(k, None) for k in HELM_LABELS} == HELM_LABELS, key
    return rendered


def kustomize_base() -> dict[Key, dict[str, Any]]:
    """`kubectl kustomize deploy/`, the CRDs as deploy/crds has them (no added label)."""
    found = kustomize(DEPLOY)
    for key, obj in found.items():
        if key[0] == "CustomResourceDefinition":
            labels = obj["metadata"].pop("labels")
            assert labels == {"app.kubernetes.io/part-of": "vscheduler"}, key
    return found


def deployment(rendered: dict[Key, dict[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = rendered[("Deployment", NAMESPACE, "vscheduler")]
    return found


def container(rendered: dict[Key, dict[str, Any]]) -> dict[str, Any]:
    (found,) = deployment(rendered)["spec"]["template"]["spec"]["containers"]
    return dict(found)


def test_every_file_the_chart_copies_from_deploy_is_byte_identical() -> None:
    assert sorted(p.name for p in (CHART / "crds").iterdir()) == sorted(
        p.name for p in (DEPLOY / "crds").glob("*.yaml")
    )
    stale = [
        f"cp {source.relative_to(ROOT)} {copy.relative_to(ROOT)}"
        for copy, source in COPIES.items()
        if not copy.is_file() or copy.read_bytes() != source.read_bytes()
    ]
    assert stale == [], "the chart's copy is stale; run:\n" + "\n".join(stale)


def test_the_chart_and_image_versions_are_the_packages() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    (image,) = kustomization["images"]
    assert (chart["version"], chart["appVersion"], image["newTag"]) == (__version__,) * 3


@pytest.mark.parametrize("values", [[], ["--set", "monitoring.enabled=true,createNamespace=true"]])
def test_helm_lint_finds_nothing_wrong(values: list[str]) -> None:
    out = run([tool("helm"), "lint", "--strict", str(CHART), *values])
    assert "1 chart(s) linted, 0 chart(s) failed" in out
    assert [ln for ln in out.splitlines() if ln.startswith(("[WARNING]", "[ERROR]"))] == []


def test_the_chart_renders_the_objects_of_the_kustomize_base() -> None:
    rendered = without_helm_labels(helm_template("--set", "createNamespace=true"))
    assert rendered == kustomize_base()


def test_by_default_the_namespace_is_left_to_the_installer_and_crds_to_helms_crds_directory() -> (
    None
):
    rendered = without_helm_labels(helm_template(crds=False))
    expected = {
        k: v
        for k, v in kustomize_base().items()
        if k[0] not in ("Namespace", "CustomResourceDefinition")
    }
    assert rendered == expected


def test_monitoring_on_adds_the_objects_of_deploy_monitoring_with_the_selector_labels() -> None:
    base = helm_template("--set", "createNamespace=true")
    rendered = helm_template("--set", "createNamespace=true,monitoring.enabled=true")
    added = without_helm_labels({k: v for k, v in rendered.items() if k not in base})
    assert added == kustomize(DEPLOY / "monitoring")

    labelled = helm_template("--set", "monitoring.enabled=true,monitoring.labels.release=kps")
    for kind in ("ServiceMonitor", "PrometheusRule"):
        assert labelled[(kind, NAMESPACE, "vscheduler")]["metadata"]["labels"]["release"] == "kps"


def test_the_alert_templates_reach_prometheus_untouched() -> None:
    rendered = helm_template("--set", "monitoring.enabled=true")
    rule = rendered[("PrometheusRule", NAMESPACE, "vscheduler")]
    shipped = yaml.safe_load((DEPLOY / "monitoring" / "prometheusrule.yaml").read_text())
    assert rule["spec"] == shipped["spec"]
    assert "{{ $value" in yaml.safe_dump(rule["spec"], width=1000)


def test_image_replicas_resources_scheduler_name_and_extra_args_reach_the_deployment() -> None:
    rendered = helm_template(
        "--set",
        "image.repository=registry.example/vscheduler,image.tag=0.2.0-rc1,image.pullPolicy=Always",
        "--set",
        "replicas=3,schedulerName=batch,extraArgs={--kube-api-qps=50,--kube-api-burst=100}",
        "--set",
        "resources.requests.cpu=2,resources.limits.memory=4Gi",
    )
    found = container(rendered)
    assert found["image"] == "registry.example/vscheduler:0.2.0-rc1"
    assert found["imagePullPolicy"] == "Always"
    assert deployment(rendered)["spec"]["replicas"] == 3
    assert found["resources"] == {
        "requests": {"cpu": 2, "memory": "512Mi"},
        "limits": {"memory": "4Gi"},
    }
    args = [a.replace("$(POD_NAMESPACE)", NAMESPACE) for a in found["args"]]
    assert args[-3:] == ["--scheduler-name=batch", "--kube-api-qps=50", "--kube-api-burst=100"]
    settings = cli._settings(cli._parser().parse_args(["run", *args]))  # the real command line
    assert (settings.scheduler_name, settings.qps, settings.burst) == ("batch", 50.0, 100)


def test_the_policy_is_the_shipped_file_unless_a_value_replaces_it(tmp_path: Path) -> None:
    shipped = (DEPLOY / "policy" / "volcano-scheduler.conf").read_text()
    key = ("ConfigMap", NAMESPACE, "vscheduler-policy")
    assert helm_template()[key]["data"] == {"volcano-scheduler.conf": shipped}

    mine = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n  - name: drf\n'
    (tmp_path / "policy.conf").write_text(mine)
    rendered = helm_template("--set-file", f"policy={tmp_path / 'policy.conf'}")
    assert rendered[key]["data"] == {"volcano-scheduler.conf": mine}


def test_the_default_queue_can_be_left_out() -> None:
    rendered = helm_template("--set", "defaultQueue.create=false")
    assert [k for k in rendered if k[0] == "Queue"] == []
    assert ("Queue", "", "default") in helm_template()


def test_the_objects_follow_the_release_namespace_and_the_reservations_stay_in_kube_system() -> (
    None
):
    argv = [tool("helm"), "template", RELEASE, str(CHART), "--namespace", "batch-system"]
    rendered = objects(run([*argv, "--set", "createNamespace=true"]))
    assert ("Namespace", "", "batch-system") in rendered
    assert {namespace for _, namespace, _ in rendered} == {"", "batch-system", "kube-system"}
    binding = rendered[("ClusterRoleBinding", "", "vscheduler")]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "vscheduler", "namespace": "batch-system"}
    ]
    reservations = rendered[("RoleBinding", "kube-system", "vscheduler-reservations")]
    assert reservations["subjects"][0]["namespace"] == "batch-system"
