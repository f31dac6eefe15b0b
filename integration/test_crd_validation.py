"""deploy/crds on a real API server: what the schemas refuse, `kubectl apply` refuses.

Volcano's CRDs carry Kubernetes' quantity pattern on every resource quantity, and Volcano's
admission webhook refuses a Queue weight below 1 and a negative minMember; deploy/crds has all
three in the schema (vscheduler ships no webhook). So a malformed object is refused when it is
applied, with the field named, instead of reaching the scheduler and an Event later.
(integration/test_bad_input.py covers what the schemas let through and the scheduler refuses.)
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
import yaml

from integration import harness

QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]"
    r"|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


def apply(cluster: harness.ScopedCluster, obj: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return cluster.kubectl(
        "apply", "--server-side", "-f", "-", input=yaml.safe_dump(obj), check=False
    )


def refused(cluster: harness.ScopedCluster, obj: dict[str, Any]) -> str:
    proc = apply(cluster, obj)
    assert proc.returncode != 0, proc.stdout
    return proc.stderr


@pytest.mark.timeout(180)
def test_kubectl_apply_refuses_a_weight_below_1_a_negative_min_member_and_a_malformed_quantity(
    cluster: harness.ScopedCluster,
) -> None:
    ns = harness.namespace_of(cluster)
    assert (
        "spec.weight: Invalid value: 0: spec.weight in body should be greater than or equal to 1"
        in refused(cluster, harness.queue("zero", weight=0))
    )
    assert (
        "spec.minMember: Invalid value: -1: spec.minMember in body should be greater than or "
        "equal to 0" in refused(cluster, harness.podgroup("negative", ns, min_member=-1))
    )
    abc = harness.podgroup("abc", ns, min_member=1, min_resources={"cpu": "abc"})
    assert (
        f'spec.minResources.cpu: Invalid value: "abc": spec.minResources.cpu in body should '
        f"match '{QUANTITY}'" in refused(cluster, abc)
    )
    lots = harness.queue("lots")
    lots["spec"]["capability"] = {"cpu": "4", "memory": "lots"}
    assert 'spec.capability.memory: Invalid value: "lots"' in refused(cluster, lots)

    # Quantities as Kubernetes writes them, and an integer, are accepted.
    good = harness.podgroup("good", ns, min_member=0, min_resources={"cpu": "500m"})
    good["spec"]["minResources"] |= {"memory": "1.5Gi", "nvidia.com/gpu": 2}
    accepted = apply(cluster, good)
    assert accepted.returncode == 0, accepted.stderr
    stored = harness.get_podgroup(cluster, ns, "good")
    assert stored["spec"]["minResources"] == {"cpu": "500m", "memory": "1.5Gi", "nvidia.com/gpu": 2}
