"""Shadow mode's recorder: each cycle's decisions as one JSON line, nothing carried out; the
Events a dry run would record are logged."""

from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path

import pytest

from vscheduler.clock import FixedClock
from vscheduler.effects.ports import ObjectRef
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult, Evict
from vscheduler.runtime.decisions import DecisionRecorder, DryRunEvents

NOW = dt.datetime(2026, 5, 1, 12, 0, 0, tzinfo=dt.UTC)
WAITING = (
    "Pod team/c can possibly be assigned to node-a, once resource is released and minAvailable"
    " is satisfied"
)
RESULT = CycleResult(
    binds=(Bind(task_uid="u1", pod="team/a", node="node-a"),),
    evictions=(Evict(task_uid="u2", pod="team/b", node="node-b", reason="preempted by team/a"),),
    pipelined={"team/c": "node-a"},
    waiting={"team/c": WAITING},
    unschedulable={"team/d": "0/2 nodes are available: 2 Insufficient cpu."},
)


def test_each_cycle_is_one_json_line_of_the_decisions_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "decisions.jsonl"
    recorder = DecisionRecorder(str(path), clock=FixedClock(NOW))
    with caplog.at_level(logging.INFO, logger="vscheduler.runtime.decisions"):
        recorder.submit(RESULT, ClusterSnapshot())
        recorder.submit(CycleResult(), ClusterSnapshot())
    recorder.shutdown(1.0)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines == [
        {
            "cycle": 1,
            "time": "2026-05-01T12:00:00+00:00",
            "binds": {"team/a": "node-a"},
            "evictions": [{"pod": "team/b", "node": "node-b", "reason": "preempted by team/a"}],
            "pipelined": {"team/c": "node-a"},
            "waiting": {"team/c": WAITING},
            "pending": {"team/d": "0/2 nodes are available: 2 Insufficient cpu."},
        },
        {
            "cycle": 2,
            "time": "2026-05-01T12:00:00+00:00",
            "binds": {},
            "evictions": [],
            "pipelined": {},
            "waiting": {},
            "pending": {},
        },
    ]
    assert caplog.messages == [
        "dry run: would bind team/a to node-a",
        "dry run: would evict team/b from node-b: preempted by team/a",
    ]
    assert not recorder.busy()


def test_without_a_decisions_file_the_recorder_only_logs(tmp_path: Path) -> None:
    recorder = DecisionRecorder("", clock=FixedClock(NOW))
    recorder.submit(RESULT, ClusterSnapshot())
    recorder.shutdown(1.0)
    assert recorder.cycles == 1
    assert list(tmp_path.iterdir()) == []


def test_an_event_of_a_dry_run_is_logged_not_sent(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="vscheduler.runtime.decisions"):
        DryRunEvents().record_event(
            ObjectRef("Queue", "scheduling.volcano.sh/v1beta1", "", "big", "u"),
            "Warning",
            "GuaranteeUnsatisfiable",
            "too much",
        )
    assert caplog.messages == [
        "dry run: Event not recorded: Warning GuaranteeUnsatisfiable on Queue big: too much"
    ]
