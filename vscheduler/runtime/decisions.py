"""Shadow mode (`vscheduler run --dry-run`): the cycle's decisions recorded, never carried out.

`DecisionRecorder` takes the place of the effects executor: each cycle's binds, evictions,
pipelined and pending pods are logged and, with `--decisions-file`, appended to it as one JSON
line (`{"cycle", "time", "binds": {"ns/pod": "node"}, "evictions": [{"pod", "node", "reason"}],
"pipelined": {"ns/pod": "node"}, "waiting": {"ns/pod": "message"}, "pending": {"ns/pod":
"message"}}`: `waiting` is the message a pipelined pod's condition would carry), which `vscheduler
compare-decisions` reads. `DryRunEvents` takes the place of the Event writer: an Event the
scheduler would record is logged instead. Nothing reaches the cache either: a pod decided stays
pending in the scheduler's view, and the next cycle (on the next change) decides it again.

The API client of a dry run is read-only as well (`KubeApi(read_only=True)`), so a write that
slipped past these two would be refused before it is sent.

Owns: the decisions file's format.
Must not: write to the cluster.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import IO, Literal

from vscheduler.clock import Clock
from vscheduler.effects.ports import ObjectRef
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult

logger = logging.getLogger(__name__)


class DecisionRecorder:
    """The effects of a dry run: record, send nothing."""

    def __init__(self, path: str, *, clock: Clock) -> None:
        """`path`: the decisions file, appended to (empty: log only)."""
        self._clock = clock
        self._lock = threading.Lock()
        self._file: IO[str] | None = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115
        self.cycles = 0

    def stream(self, bind: Bind, snapshot: ClusterSnapshot) -> None:
        """Nothing: `submit` records the cycle's binds with the rest of its decisions."""

    def submit(self, result: CycleResult, snapshot: ClusterSnapshot) -> None:
        """Record one cycle's decisions."""
        with self._lock:
            self.cycles += 1
            line = decisions_line(self.cycles, self._clock.now().isoformat(), result)
            for bind in result.binds:
                logger.info("dry run: would bind %s to %s", bind.pod, bind.node)
            for evict in result.evictions:
                logger.info(
                    "dry run: would evict %s from %s: %s", evict.pod, evict.node, evict.reason
                )
            if self._file is not None:
                self._file.write(json.dumps(line, sort_keys=False) + "\n")
                self._file.flush()

    def busy(self) -> bool:
        """Never: nothing is carried out."""
        return False

    def shutdown(self, timeout: float) -> None:
        """Close the decisions file."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def decisions_line(cycle: int, time: str, result: CycleResult) -> dict[str, object]:
    """One cycle as a line of the decisions file."""
    return {
        "cycle": cycle,
        "time": time,
        "binds": {b.pod: b.node for b in result.binds},
        "evictions": [{"pod": e.pod, "node": e.node, "reason": e.reason} for e in result.evictions],
        "pipelined": dict(result.pipelined),
        "waiting": dict(result.waiting),
        "pending": dict(result.unschedulable),
    }


class DryRunEvents:
    """The Event writer of a dry run: logs the Event it would record."""

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        """Log, do not send."""
        logger.info(
            "dry run: Event not recorded: %s %s on %s %s: %s",
            type_,
            reason,
            ref.kind,
            f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name,
            message,
        )
