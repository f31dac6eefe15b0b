"""Running beside Volcano: its gangs' PodGroups are Volcano's; vscheduler neither admits them nor
reports on them, and still schedules its own gangs around Volcano's pods.

Reproduces what `simulate` showed before the fix: a running Volcano gang (its pods carry
`schedulerName: volcano`, so the pod converter gives them no job) looked like a PodGroup with no
pods, and vscheduler wrote `Unschedulable/NotEnoughTasks` on it and moved it to Pending.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vscheduler.simulate import Request, simulate

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec: {minMember: 2, queue: default}
status: {phase: Running, running: 2}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: waiting, namespace: ml}
spec: {minMember: 1, queue: default}
status: {phase: Pending}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: etl, namespace: data}
spec: {minMember: 2, queue: default}
---
POD_TEMPLATE
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
  annotations: {{scheduling.k8s.io/group-name: {group}}}
spec:
  schedulerName: {scheduler}{node}
  containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]
status: {{phase: {phase}}}
"""


def pod(name: str, namespace: str, group: str, scheduler: str, node: str = "") -> str:
    placed = f"\n  nodeName: {node}" if node else ""
    phase = "Running" if node else "Pending"
    return POD.format(
        name=name, namespace=namespace, group=group, scheduler=scheduler, node=placed, phase=phase
    )


def cluster() -> str:
    pods = [
        pod("train-0", "ml", "train", "volcano", node="n1"),
        pod("train-1", "ml", "train", "volcano", node="n1"),
        pod("waiting-0", "ml", "waiting", "volcano"),
        pod("etl-0", "data", "etl", "vscheduler"),
        pod("etl-1", "data", "etl", "vscheduler"),
    ]
    return CLUSTER.replace("POD_TEMPLATE\n", "---\n".join(pods))


def test_volcanos_podgroups_get_no_status_from_vscheduler_and_its_own_gang_is_placed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(cluster())
    out: dict[str, Any] = simulate(Request(snapshots=[str(path)], cycles=2, timings=False))
    first, second = out["cycles"]
    assert first["binds"] == {"data/etl-0": "n1", "data/etl-1": "n1"}
    assert list(first["podGroups"]) == ["data/etl"]
    assert first["podGroups"]["data/etl"]["phase"] == "Running"
    assert first["unschedulable"] == {}
    assert (second["binds"], list(second["podGroups"])) == ({}, ["data/etl"])
