"""`simulate --output json` prints, per cycle, the figures the queue plugin reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vscheduler import cli

ROOT = Path(__file__).resolve().parents[2]


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code = cli.main(["simulate", *args, "--output", "json", "--no-timings"])
    out = capsys.readouterr()
    assert code == 0, out.err
    result: dict[str, Any] = json.loads(out.out)
    return result


def test_each_cycle_shows_the_queue_figures_with_amounts_as_kubernetes_writes_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = simulate(capsys, str(ROOT / "examples" / "queues"))

    queues = result["cycles"][0]["queues"]
    assert list(queues) == ["batch", "default", "prod", "research"]
    assert queues["research"] == {
        "allocated": {"cpu": "6", "memory": "12Gi"},
        "request": {"cpu": "10", "memory": "20Gi"},
        "deserved": {"cpu": "6", "memory": "20Gi"},
        "inqueue": {},
        "capability": {"cpu": "6", "memory": "24Gi"},
        "realCapability": {"cpu": "6", "memory": "24Gi"},
        "share": 1.0,
        "weight": 2,
        "overused": False,
    }
    assert queues["default"] == {
        "allocated": {},
        "request": {},
        "deserved": {},
        "inqueue": {},
        "capability": None,
        "realCapability": {"cpu": "10", "memory": "40Gi"},
        "share": 0.0,
        "weight": 1,
        "overused": False,
    }


def test_a_policy_without_a_queue_plugin_shows_no_queues(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text('actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n')

    result = simulate(capsys, str(ROOT / "examples" / "queues"), "--config", str(policy))

    assert result["cycles"][0]["queues"] == {}


def test_a_queue_tree_problem_is_a_simulate_warning_and_the_cycle_goes_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: capacity\n'
        "    enableHierarchy: true\n"
    )
    queues = tmp_path / "queues.yaml"
    queues.write_text(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
        "metadata: {name: lost}\nspec: {weight: 1, parent: nowhere}\n"
    )

    code = cli.main(
        ["simulate", str(queues), "--config", str(policy), "--output", "json", "--no-timings"]
    )

    out = capsys.readouterr()
    assert code == 0
    assert "queue lost: the queue lost has invalid parent queue nowhere" in out.err
    assert json.loads(out.out)["cycles"][0]["queues"]["lost"]["overused"] is False
