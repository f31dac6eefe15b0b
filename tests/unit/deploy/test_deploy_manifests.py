"""deploy/: the kustomization, the Deployment and the objects around it agree with each other and
with the code (the flags are parsed by the real command line, the policy by the real loader).

integration/test_deploy.py applies the same files to a real API server; these are the checks
that need none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from vscheduler import __version__, catalog, cli
from vscheduler.conf.default import DEFAULT_POLICY_TEXT
from vscheduler.plugins import reservation
from vscheduler.runtime.settings import DEFAULT_POLICY_KEY, Settings

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
NAMESPACE = "vscheduler-system"


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def kustomization(folder: Path) -> dict[str, Any]:
    for name in ("kustomization.yaml", "Kustomization"):
        if (folder / name).is_file():
            loaded: dict[str, Any] = yaml.safe_load((folder / name).read_text())
            return loaded
    raise AssertionError(f"no kustomization in {folder}")


def rendered(folder: Path) -> list[dict[str, Any]]:
    """The resources of a kustomization (recursively), without its generators."""
    found: list[dict[str, Any]] = []
    for entry in kustomization(folder)["resources"]:
        path = folder / entry
        found.extend(rendered(path) if path.is_dir() else documents(path))
    return found


def one(kind: str, name: str = "vscheduler") -> dict[str, Any]:
    objects = rendered(DEPLOY) + rendered(DEPLOY / "monitoring")
    (found,) = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def pod_spec() -> dict[str, Any]:
    spec: dict[str, Any] = one("Deployment")["spec"]["template"]["spec"]
    return spec


def container() -> dict[str, Any]:
    (found,) = pod_spec()["containers"]
    return dict(found)


def settings() -> Settings:
    """The Deployment's args as `vscheduler run` reads them ($(POD_NAMESPACE) expanded)."""
    args = [a.replace("$(POD_NAMESPACE)", NAMESPACE) for a in container()["args"]]
    return cli._settings(cli._parser().parse_args(["run", *args]))


def test_every_resource_of_both_kustomizations_exists() -> None:
    kinds = sorted(o["kind"] for o in rendered(DEPLOY))
    assert kinds == [
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "CustomResourceDefinition",
        "CustomResourceDefinition",
        "Deployment",
        "Namespace",
        "PodDisruptionBudget",
        "Queue",
        "Role",
        "Role",
        "RoleBinding",
        "RoleBinding",
        "Service",
        "ServiceAccount",
    ]
    assert sorted(o["kind"] for o in rendered(DEPLOY / "monitoring")) == [
        "PrometheusRule",
        "ServiceMonitor",
    ]


def test_the_policy_config_map_holds_the_default_policy_under_volcanos_key() -> None:
    (generator,) = kustomization(DEPLOY)["configMapGenerator"]
    assert (generator["name"], generator["namespace"]) == ("vscheduler-policy", NAMESPACE)
    assert generator["options"] == {"disableNameSuffixHash": True}
    (entry,) = generator["files"]
    key, _, file = entry.partition("=")
    assert key == DEFAULT_POLICY_KEY
    text = (DEPLOY / file).read_text()
    assert text == (ROOT / "config" / "default-policy.yaml").read_text() == DEFAULT_POLICY_TEXT
    catalog.load_pipeline(text, source=file)


def test_the_deployment_runs_two_electing_replicas_on_the_shipped_policy() -> None:
    run = settings()
    (generator,) = kustomization(DEPLOY)["configMapGenerator"]
    assert one("Deployment")["spec"]["replicas"] == 2
    assert (run.policy.configmap_namespace, run.policy.configmap_name) == (
        NAMESPACE,
        generator["name"],
    )
    assert run.policy.configmap_key == DEFAULT_POLICY_KEY
    assert run.leader_election.enabled
    assert (run.leader_election.resource_namespace, run.leader_election.resource_name) == (
        NAMESPACE,
        "vscheduler",
    )
    assert run.scheduler_name == "vscheduler"
    env = {e["name"]: e for e in container()["env"]}
    assert env["POD_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}


def test_the_image_is_this_release() -> None:
    (image,) = kustomization(DEPLOY)["images"]
    assert image == {"name": container()["image"], "newTag": __version__}


def test_the_probes_and_the_service_use_the_listen_port() -> None:
    port = int(settings().listen_address.rpartition(":")[2])
    (declared,) = container()["ports"]
    assert (declared["name"], declared["containerPort"]) == ("http-metrics", port)
    probes = {
        k: container()[k]["httpGet"] for k in ("startupProbe", "livenessProbe", "readinessProbe")
    }
    assert probes == {k: {"path": "/healthz", "port": "http-metrics"} for k in probes}
    (service_port,) = one("Service")["spec"]["ports"]
    assert service_port["targetPort"] == "http-metrics"
    (endpoint,) = one("ServiceMonitor")["spec"]["endpoints"]
    assert (endpoint["port"], endpoint["path"]) == (service_port["name"], "/metrics")


def test_every_selector_selects_the_schedulers_pods() -> None:
    labels = one("Deployment")["spec"]["template"]["metadata"]["labels"]
    selectors = [
        one("Deployment")["spec"]["selector"]["matchLabels"],
        one("Service")["spec"]["selector"],
        one("PodDisruptionBudget")["spec"]["selector"]["matchLabels"],
    ]
    for selector in selectors:
        assert selector.items() <= labels.items()
    monitored = one("ServiceMonitor")["spec"]["selector"]["matchLabels"]
    assert monitored.items() <= one("Service")["metadata"]["labels"].items()


def test_the_pod_meets_the_restricted_pod_security_standard() -> None:
    pod, box = pod_spec(), container()
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "runAsGroup": 65532,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert box["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert "volumes" not in pod  # nothing is written, so nothing is mounted
    assert not any(pod.get(k) for k in ("hostNetwork", "hostPID", "hostIPC"))
    labels = one("Namespace", NAMESPACE)["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_the_scheduler_asks_for_resources_and_caps_its_memory() -> None:
    resources = container()["resources"]
    assert resources == {
        "requests": {"cpu": "500m", "memory": "512Mi"},
        "limits": {"memory": "2Gi"},
    }


def test_the_pod_runs_as_the_shipped_service_account() -> None:
    account = one("ServiceAccount")
    assert pod_spec()["serviceAccountName"] == account["metadata"]["name"]
    assert account["metadata"]["namespace"] == NAMESPACE


@pytest.mark.parametrize("folder", [DEPLOY, DEPLOY / "monitoring"], ids=["deploy", "monitoring"])
def test_every_namespaced_object_names_its_namespace(folder: Path) -> None:
    cluster_scoped = {
        "Namespace",
        "CustomResourceDefinition",
        "ClusterRole",
        "ClusterRoleBinding",
        "Queue",
    }
    where = {
        (o["kind"], o["metadata"]["name"]): o["metadata"].get("namespace")
        for o in rendered(folder)
        if o["kind"] not in cluster_scoped
    }
    reservations = {k: v for k, v in where.items() if k[1] == "vscheduler-reservations"}
    assert set(reservations.values()) <= {reservation.DEFAULT_NAMESPACE}
    assert {v for k, v in where.items() if k not in reservations} == {NAMESPACE}


def test_the_default_queue_is_volcanos() -> None:
    assert one("Queue", "default")["spec"] == {"weight": 1, "reclaimable": True}
