"""Which Queues get a Warning Event this cycle: once per change of each queue's warning.

A queue plugin puts a warning on a queue's figures (`QueueFigures.warning`: its guarantee is
part of more than the cluster holds). `QueueWarnings.due` answers, cycle after cycle, the queues
whose warning is new or changed since it was last reported; a queue whose warning went is
forgotten, so it is reported again if the warning comes back.

Owns: the last warning reported per queue. Must not: write anything (the executor sends the
Events) or lock (only the executor's dispatcher thread calls it).
"""

from __future__ import annotations

from collections.abc import Mapping

from vscheduler.model.commands import QueueFigures

REASON = "GuaranteeUnsatisfiable"
"""The Event reason of a guarantee warning (a figures' `warning_reason` may name another)."""


class QueueWarnings:
    """The warning last reported on each queue."""

    def __init__(self) -> None:
        self._reported: dict[str, str] = {}

    def due(self, queues: Mapping[str, QueueFigures]) -> list[tuple[str, str]]:
        """(queue, warning) for each queue of `queues`, in name order, whose warning is to be
        reported now; it counts as reported (`retract` undoes that)."""
        out: list[tuple[str, str]] = []
        for name in sorted(queues):
            warning = queues[name].warning
            if not warning:
                self._reported.pop(name, None)
            elif self._reported.get(name) != warning:
                self._reported[name] = warning
                out.append((name, warning))
        return out

    def retract(self, name: str) -> None:
        """The warning of `name` could not be reported: report it again next time."""
        self._reported.pop(name, None)
