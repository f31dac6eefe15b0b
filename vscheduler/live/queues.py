"""`vscheduler queues`: each queue's weight, deserved, allocated, guarantee and capability, and
its PodGroups by phase, as `vcctl queue list` lists queues.

The figures come from one session opened on a live snapshot with the policy's plugins and closed
at once (no action runs): `deserved` and `allocated` are what the policy's queue plugin
(proportion or capacity) computes for the cluster as it stands, the figures the scheduler's
`vscheduler_queue_*` gauges show. Without a queue plugin in the policy they are absent (`-`).
The job counts are the queue's PodGroups by `status.phase` (Volcano's queue status counts the
same; a pod without a PodGroup is not counted). Weight, state, guarantee and capability are the
Queue's spec. A `default` queue is listed even without an object, as the scheduler assumes one.

Owns: the rows and their rendering (table, wide, json, yaml).
Must not: write to the cluster.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Final

import yaml

from vscheduler import cycle
from vscheduler.clock import Clock
from vscheduler.framework.registry import Pipeline
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.resources import Resources, format_amount
from vscheduler.model.status import PodGroupPhase

Json = dict[str, object]
PHASES: Final = tuple(p.value for p in PodGroupPhase)
_COLUMNS: Final = ("NAME", "WEIGHT", "STATE", "INQUEUE", "PENDING", "RUNNING")
_FIGURES: Final = ("DESERVED", "ALLOCATED", "GUARANTEE", "CAPABILITY")
_WIDE: Final = ("UNKNOWN", "COMPLETED", "REQUEST", "SHARE", "OVERUSED")


def queue_rows(snap: ClusterSnapshot, pipeline: Pipeline, *, clock: Clock) -> list[Json]:
    """One row per queue, by name."""
    session = cycle.open_session(snap, pipeline, clock=clock, uid="queues")
    figures = session.close().queues
    counts: dict[str, Counter[str]] = {}
    for job in snap.jobs.values():
        if not job.synthetic:
            counts.setdefault(job.queue, Counter())[job.phase.value] += 1
    rows: list[Json] = []
    for name in sorted({*snap.queues, "default"}):
        queue = snap.queues.get(name)
        fig = figures.get(name)
        counted = counts.get(name, Counter())
        rows.append(
            {
                "name": name,
                "weight": queue.weight if queue is not None else 1,
                "state": (queue.state or "Open") if queue is not None else "Open",
                "deserved": None if fig is None else _amounts(fig.deserved),
                "allocated": None if fig is None else _amounts(fig.allocated),
                "request": None if fig is None else _amounts(fig.request),
                "share": None if fig is None else round(fig.share, 4),
                "overused": None if fig is None else fig.overused,
                "guarantee": _amounts(queue.guarantee) if queue is not None else {},
                "capability": (
                    _amounts(queue.capability)
                    if queue is not None and queue.capability is not None
                    else None
                ),
                "jobs": {phase.lower(): counted.get(phase, 0) for phase in PHASES},
            }
        )
    return rows


def _amounts(res: Resources) -> dict[str, str]:
    return {name: format_amount(name, amount) for name, amount in res.items()}


def render(rows: list[Json], fmt: str) -> str:
    """`table`, `wide`, `json` or `yaml`."""
    if fmt == "json":
        return json.dumps({"queues": rows}, indent=2) + "\n"
    if fmt == "yaml":
        return str(yaml.safe_dump({"queues": rows}, sort_keys=False, width=120))
    header = [*_COLUMNS, *_FIGURES, *(_WIDE if fmt == "wide" else ())]
    table = [header] + [_cells(row, wide=fmt == "wide") for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    return "".join(
        "   ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() + "\n"
        for line in table
    )


def _cells(row: Json, *, wide: bool) -> list[str]:
    jobs = row["jobs"]
    assert isinstance(jobs, dict)
    cells = [
        str(row["name"]),
        str(row["weight"]),
        str(row["state"]),
        str(jobs["inqueue"]),
        str(jobs["pending"]),
        str(jobs["running"]),
        _text(row["deserved"]),
        _text(row["allocated"]),
        _text(row["guarantee"]),
        _text(row["capability"]),
    ]
    if wide:
        share = row["share"]
        overused = row["overused"]
        cells += [
            str(jobs["unknown"]),
            str(jobs["completed"]),
            _text(row["request"]),
            "-" if share is None else f"{share:g}",
            "-" if overused is None else str(overused).lower(),
        ]
    return cells


def _text(amounts: object) -> str:
    """`cpu=2,memory=4Gi`; `-` for none (no figure, no capability), `0` for an empty amount."""
    if amounts is None:
        return "-"
    assert isinstance(amounts, dict)
    return ",".join(f"{k}={v}" for k, v in amounts.items()) or "0"
