"""resource-strategy-fit: per-resource MostAllocated / LeastAllocated scoring, with weights
(Volcano's `resource-strategy-fit`, its `sra` and `proportional` parts).

Registers `score_nodes(task, idx)` (nodeOrder), vectorised over node indices, the sum of two
parts, each registered only with its weight above 0:

- **strategy** (`resourceStrategyFitWeight`, Volcano's `Score`): over the resources R the task
  requests that have a strategy (the pod's own `volcano.sh/resource-strategy-scoring-type` and
  `volcano.sh/resource-strategy-weight` annotations, which name exact resources; else the
  policy's `resources`, an exact name first, else the wildcard `prefix*` with the longest
  prefix), with `final = used + request`:

      s(r)  = w(r) * final / alloc                 MostAllocated
      s(r)  = w(r) * (alloc - final) / alloc       LeastAllocated
      s(r)  = 0                                    alloc = 0 or w(r) = 0
      score = resourceStrategyFitWeight * 100 * sum s(r) / sum w(r)   (no division when sum <= 0)
      score = 0                                    final > alloc for some r with alloc, w(r) != 0

- **sra** (`sra.weight`, Volcano's `sraScore`): a node lacking any resource the task requests
  (its pod slot included) scores 0; else, with W the sum of the `sra.resources` weights and H the
  weights of those the node has some of, `sra.weight * 100 * (1 - H / W)`: a task that needs no
  scarce resource is kept off the nodes that have it.

Registers `filter_nodes` (predicate) and `explain_node` (predicateReason) when
`proportional.enable` is true (Volcano's `checkNodeResourceIsProportional`): a task requesting
none of the `proportional.resources` may take a node only if, for each of them the node has,
its idle cpu and memory after the task stay at or above `idle(r) * <r>.cpu` cores and
`idle(r) * <r>.memory` GB (10^9 bytes); otherwise the node fails for good (unresolvable),
`proportional of resource <r> check failed`. A task requesting one of them passes everywhere.

Scores and the predicate depend only on the task's class (its request and its `scoring`, part of
the template) and the node's ledger row: `used`, `allocatable`, `idle` and the pod slots.
Arguments and their defaults are Volcano's (`config`; docs/policy.md section 5.19); the plugin
classes are in `plugin`. A malformed pair of pod annotations is reported on the pod by the
converter (`convert.scoring`) and ignored.
"""

from __future__ import annotations

from collections.abc import Mapping

from vscheduler.plugin_api import PluginSession
from vscheduler.plugins.resource_strategy_fit.config import (
    NAME,
    Proportion,
    Settings,
    Strategy,
    read_settings,
    strategy_for,
)
from vscheduler.plugins.resource_strategy_fit.plugin import Filter, Inert, Scorer, ScorerAndFilter

__all__ = [
    "NAME",
    "Factory",
    "Filter",
    "Inert",
    "Proportion",
    "Scorer",
    "ScorerAndFilter",
    "Settings",
    "Strategy",
    "build",
    "strategy_for",
]


class Factory:
    """Lives as long as the policy."""

    name = NAME
    plugin = (ScorerAndFilter, Scorer, Filter, Inert)

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def open(self, session: PluginSession) -> ScorerAndFilter | Scorer | Filter | Inert:
        """A fresh plugin for `session`: only the parts the arguments switch on."""
        s = self.settings
        scores = s.weight > 0 or s.sra_weight > 0
        filters = s.proportional is not None
        if scores and filters:
            return ScorerAndFilter(session, s)
        if scores:
            return Scorer(session, s)
        if filters:
            return Filter(session, s)
        return Inert()


def build(arguments: Mapping[str, object]) -> Factory:
    """Read Volcano's resource-strategy-fit arguments; every problem is reported at once."""
    return Factory(read_settings(arguments))
