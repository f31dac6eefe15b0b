"""`simulate` replays a nomination read from a pod's `status.nominatedNodeName`: the room stays
held for that pod while its victim terminates, and another pod does not take it; the pod's
condition message is Volcano's for a pipelined pod, in the JSON and the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vscheduler import cli

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Pod
metadata:
  name: victim
  namespace: default
  uid: uid-victim
  creationTimestamp: "2026-01-01T00:00:00Z"
  deletionTimestamp: "2026-01-01T00:01:00Z"
spec:
  schedulerName: vscheduler
  nodeName: n1
  containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata:
  name: runner
  namespace: default
  uid: uid-runner
  creationTimestamp: "2026-01-01T00:00:00Z"
spec:
  schedulerName: vscheduler
  nodeName: n1
  containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata:
  name: first
  namespace: default
  uid: uid-first
  creationTimestamp: "2026-01-01T00:00:01Z"
spec:
  schedulerName: vscheduler
  containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata:
  name: nominee
  namespace: default
  uid: uid-nominee
  creationTimestamp: "2026-01-01T00:00:02Z"
spec:
  schedulerName: vscheduler
  containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
status: {phase: Pending, nominatedNodeName: n1}
"""

WAITING = (
    "Pod default/nominee can possibly be assigned to n1, once resource is released and"
    " minAvailable is satisfied"
)


def test_a_nomination_read_from_the_pod_holds_the_room_in_simulate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    code = cli.main(["simulate", str(cluster), "--output", "json", "--no-timings"])
    out = capsys.readouterr()
    assert code == 0, out.err
    (cycle,) = json.loads(out.out)["cycles"]

    assert cycle["pipelined"] == {"default/nominee": "n1"}
    assert cycle["waiting"] == {"default/nominee": WAITING}
    assert cycle["nominated"] == {"default/nominee": "n1"}
    assert cycle["binds"] == {}
    assert "default/first" in cycle["unschedulable"]
    assert "default/nominee" not in cycle["unschedulable"]


def test_the_table_shows_the_pipelined_pods_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    assert cli.main(["simulate", str(cluster), "--no-timings"]) == 0
    table = capsys.readouterr().out.splitlines()

    assert f"  pipeline   default/nominee -> n1: {WAITING}" in table
