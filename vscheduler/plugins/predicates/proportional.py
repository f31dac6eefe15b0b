"""The predicates' proportional check (Volcano's `checkNodeResourceIsProportional`).

With `predicate.ProportionalEnable`, a pod that requests none of the listed resources (say
`nvidia.com/gpu`) may go to a node only if, once placed, the node keeps enough idle cpu and
memory for the node's idle units of each listed resource it has:

    idle cpu − request cpu       >= idle units × `.cpu` rate        (cores per unit)
    idle memory − request memory >= idle units × `.memory` rate × 10⁹ (GB per unit)

so non-GPU pods cannot strand a node's GPUs without the cpu and memory GPU pods need. A pod
requesting a listed resource is not checked. A node whose allocatable lacks the resource is not
checked for it. Failure: "proportional of resource <name> check failed",
UnschedulableAndUnresolvable (as Volcano says). Resources are checked in name order.

Owns: that rule over the ledger's idle resources. Must not: keep state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import numpy as np

from vscheduler.plugin_api import BoolArray, IntArray, LedgerView

MILLI: Final = 1000
GB: Final = 1_000_000_000


def reason(resource: str) -> str:
    """Volcano's failure text."""
    return f"proportional of resource {resource} check failed"


class Proportional:
    """The check for one session's ledger and the configured rates."""

    def __init__(self, ledger: LedgerView, rates: Mapping[str, tuple[float, float]]) -> None:
        self._ledger = ledger
        self._rates = tuple(
            (name, ledger.dim_index[name], cpu, memory)
            for name, (cpu, memory) in sorted(rates.items())
            if name in ledger.dim_index
        )

    def applies(self, req: IntArray) -> bool:
        """Whether a task with request row `req` is checked at all."""
        return bool(self._rates) and not any(req[col] > 0 for _, col, _, _ in self._rates)

    def passes(self, req: IntArray, idx: IntArray) -> BoolArray:
        """Whether each node of `idx` keeps its proportional share with `req` placed there."""
        ok = np.ones(len(idx), dtype=np.bool_)
        if not self.applies(req):
            return ok
        for _, col, cpu, memory in self._rates:
            ok &= ~self._short(req, idx, col, cpu, memory)
        return ok

    def first_failing(self, req: IntArray, i: int) -> str | None:
        """The first resource whose share node `i` would not keep, or None."""
        if not self.applies(req):
            return None
        one = np.array([i], dtype=np.int64)
        for name, col, cpu, memory in self._rates:
            if bool(self._short(req, one, col, cpu, memory)[0]):
                return name
        return None

    def _short(
        self, req: IntArray, idx: IntArray, col: int, cpu: float, memory: float
    ) -> BoolArray:
        ledger = self._ledger
        idle = ledger.idle[idx]
        units = idle[:, col]
        cpu_left = idle[:, 0] - req[0]  # the ledger's first dims are cpu (milli) and memory
        memory_left = idle[:, 1] - req[1]
        short = (cpu_left < units * MILLI * cpu) | (memory_left < units * memory * GB)
        result: BoolArray = (ledger.allocatable[idx, col] > 0) & short
        return result
