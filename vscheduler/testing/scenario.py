"""Run whole cycles on builder-made snapshots: the scenario tests' one entry point.

    results = run(snapshot(...), policy=POLICY_TEXT, cycles=2)
    assert results[-1].binds == ...

Between cycles the snapshot evolves as `simulate` evolves it (`cycle.next_snapshot`): bound pods
run, evicted ones are gone, and, when the policy binds volumes (predicates'
`predicate.VolumeBindingEnable`, on by default), each bind's volume writes have taken effect
(claims annotated with their node, pre-made volumes and their claims bound to each other).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import CycleResult
from vscheduler.testing.builders import START

TIERS = """\
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""
"""The tiers most scenarios run under (Volcano's usual two: priority, gang, conformance; then
drf, predicates, proportion, nodeorder), to follow an `actions:` line."""


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """One cycle's result, in the shapes tests compare against."""

    result: CycleResult
    snapshot_after: ClusterSnapshot

    @property
    def binds(self) -> dict[str, str]:
        """pod key -> node."""
        return {b.pod: b.node for b in self.result.binds}

    @property
    def evictions(self) -> list[str]:
        """Evicted pod keys, in order."""
        return [e.pod for e in self.result.evictions]

    @property
    def unschedulable(self) -> dict[str, str]:
        """pod key -> message."""
        return dict(self.result.unschedulable)


def run(
    snap: ClusterSnapshot,
    *,
    policy: str | None = None,
    cycles: int = 1,
    now: dt.datetime = START,
    between: Callable[[int, ClusterSnapshot], ClusterSnapshot] | None = None,
    step: float = 1.0,
) -> list[Outcome]:
    """Run `cycles` cycles, the clock moving `step` seconds after each; `between(i, snapshot)`
    may change the cluster before cycle i > 0."""
    pipeline = catalog.load_pipeline(policy)
    clock = FixedClock(now)
    out: list[Outcome] = []
    carried = None
    for i in range(cycles):
        if i and between is not None:
            snap = between(i, snap)
        report = cycle.run_cycle(snap, pipeline, clock=clock, uid=f"cycle-{i + 1}", carried=carried)
        carried = report.carried
        snap = cycle.next_snapshot(
            snap, report.result, now=clock.now(), volume_binding=pipeline.volume_binding
        )
        out.append(Outcome(report.result, snap))
        clock.advance(step)
    return out
