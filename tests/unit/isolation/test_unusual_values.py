"""Values Volcano accepts that are likely mistakes are read as Volcano reads them, and said:
`simulate` prints the warning on stderr and schedules the rest; the cluster path's Event is in
test_reporting.py. Every message is pinned here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from vscheduler import cli

WEIGHT_0 = (
    "Queue zero: spec.weight: 0 is read as 1, as Volcano's admission sets it (a queue's share"
    " of the cluster is in proportion to its weight)"
)
NEGATIVE_CAPABILITY = "Queue zero: spec.capability.cpu: '-2' is negative; it is read as 0"
NEGATIVE_MIN_MEMBER = (
    "PodGroup default/solo: spec.minMember: -1 is negative; it is read as 0 (no gang)"
)
NEGATIVE_TASK = (
    "PodGroup default/g: spec.minTaskMember.ps: -1 is negative: no pod of the task is required,"
    " and the tasks' sum that minMember is compared with is lowered (as Volcano reads it)"
)


def objects() -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        },
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "zero"},
            "spec": {"weight": 0, "capability": {"cpu": "-2"}},
        },
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "solo", "namespace": "default"},
            "spec": {"minMember": -1, "queue": "zero"},
        },
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "default"},
            "spec": {"minMember": 2, "queue": "zero", "minTaskMember": {"": 2, "ps": -1}},
        },
        *(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"g-{i}",
                    "namespace": "default",
                    "annotations": {"scheduling.k8s.io/group-name": "g"},
                },
                "spec": {
                    "schedulerName": "vscheduler",
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                },
            }
            for i in range(2)
        ),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "solo-0",
                "namespace": "default",
                "annotations": {"scheduling.k8s.io/group-name": "solo"},
            },
            "spec": {
                "schedulerName": "vscheduler",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
            },
        },
    ]


def test_simulate_prints_each_unusual_value_and_schedules_the_gang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(objects()))

    code = cli.main(["simulate", str(cluster), "-o", "table"])

    out = capsys.readouterr()
    assert code == 0
    assert out.err.splitlines() == [
        f"vscheduler: warning: {WEIGHT_0}",
        f"vscheduler: warning: {NEGATIVE_CAPABILITY}",
        f"vscheduler: warning: {NEGATIVE_MIN_MEMBER}",
        f"vscheduler: warning: {NEGATIVE_TASK}",
    ]
    for pod in ("g-0", "g-1", "solo-0"):
        assert f"bind       default/{pod} -> n1" in out.out


COOLDOWN_NOT_A_DURATION = (
    "Pod default/cooling: metadata.annotations[volcano.sh/cooldown-time]: '10 minutes' is not a"
    " duration like '600s', '10m' or '1h30m'; it is read as absent, as Volcano reads it: cdp does"
    " not protect the pod from preempt or reclaim"
)
COOLDOWN_NEGATIVE = (
    "Pod default/cooling: metadata.labels[volcano.sh/cooldown-time]: '-5m' is negative; it is"
    " read as written, as Volcano reads it: cdp protects the pod only while its PodScheduled time"
    " is further ahead of the scheduler's clock than that"
)


@pytest.mark.parametrize(
    ("where", "value", "warning"),
    [
        ("annotations", "10 minutes", COOLDOWN_NOT_A_DURATION),
        ("labels", "-5m", COOLDOWN_NEGATIVE),
    ],
)
def test_simulate_prints_an_odd_cooldown_and_schedules_the_pod(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, value: str, warning: str
) -> None:
    node, *_ = objects()
    cooling = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "cooling",
            "namespace": "default",
            where: {"volcano.sh/cooldown-time": value},
        },
        "spec": {
            "schedulerName": "vscheduler",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        },
    }
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([node, cooling]))

    code = cli.main(["simulate", str(cluster), "-o", "table"])

    out = capsys.readouterr()
    assert code == 0
    assert out.err.splitlines() == [f"vscheduler: warning: {warning}"]
    assert "bind       default/cooling -> n1" in out.out
