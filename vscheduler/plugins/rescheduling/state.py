"""rescheduling's memory across cycles, and what a "workload" is.

Owns: when the strategies last ran (the `interval` gate), which workloads are cooling down after
one of their pods was moved, and which nodes each moved workload must avoid, each with its expiry.
The factory holds one `Memory` for as long as the policy lives; entries expire lazily, when a
session opens. Also owns `workload_of`: a pod's PodGroup job when it is in a real PodGroup,
otherwise its namespace and controlling owner. Does no I/O and reads no clock: every time is
handed in.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from vscheduler.plugin_api import TaskState


def workload_of(task: TaskState) -> str:
    """The workload `task` belongs to: `PodGroup ns/name` for a pod of a real PodGroup (its
    replacements join the same group), else `ns/Kind/name` of its controlling owner, else the
    empty string (a pod nothing recreates)."""
    job = task.job
    if job is not None and not job.facts.synthetic:
        return f"PodGroup {job.key}"
    owner = task.facts.owner
    return f"{task.facts.namespace}/{owner}" if owner else ""


@dataclasses.dataclass(slots=True)
class Memory:
    """What the plugin remembers between sessions (on its factory, never in module globals)."""

    last_run: dt.datetime | None = None
    """When the strategies last ran (shuffle asked for victims); None before the first run."""
    cooldown: dict[str, dt.datetime] = dataclasses.field(default_factory=dict)
    """workload -> until when none of its pods is proposed."""
    avoid: dict[str, dict[str, dt.datetime]] = dataclasses.field(default_factory=dict)
    """workload -> node -> until when its pods do not land on that node."""

    def due(self, now: dt.datetime, interval: dt.timedelta) -> bool:
        """Whether the strategies may run at `now`: never ran yet, or `interval` has passed."""
        return self.last_run is None or now >= self.last_run + interval

    def expire(self, now: dt.datetime) -> None:
        """Forget every entry whose time has come."""
        self.cooldown = {w: until for w, until in self.cooldown.items() if until > now}
        live: dict[str, dict[str, dt.datetime]] = {}
        for workload, nodes in self.avoid.items():
            kept = {n: until for n, until in nodes.items() if until > now}
            if kept:
                live[workload] = kept
        self.avoid = live

    def cooling(self, workload: str, now: dt.datetime) -> bool:
        """Whether `workload` is still cooling down at `now`."""
        until = self.cooldown.get(workload)
        return until is not None and until > now

    def avoided(self, now: dt.datetime) -> dict[str, tuple[str, ...]]:
        """workload -> the nodes (sorted) its pods must avoid at `now`."""
        out: dict[str, tuple[str, ...]] = {}
        for workload, nodes in self.avoid.items():
            live = sorted(n for n, until in nodes.items() if until > now)
            if live:
                out[workload] = tuple(live)
        return out

    def record_move(
        self,
        workload: str,
        node: str,
        now: dt.datetime,
        *,
        cooldown: dt.timedelta,
        avoid_for: dt.timedelta,
    ) -> None:
        """A pod of `workload` was evicted from `node` at `now` on our proposal."""
        if cooldown > dt.timedelta(0):
            until = now + cooldown
            self.cooldown[workload] = max(until, self.cooldown.get(workload, until))
        if avoid_for > dt.timedelta(0) and node:
            nodes = self.avoid.setdefault(workload, {})
            until = now + avoid_for
            nodes[node] = max(until, nodes.get(node, until))
