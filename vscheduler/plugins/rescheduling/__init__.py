"""rescheduling: move pods off nodes that stay hot, by policy (Volcano's rescheduling plugin).

Registers:

- `propose_victims(candidates)` (victimTasks; `enabledVictim`, also spelled `enableVictim`), only
  when `interval` has passed since the strategies last ran (the first session runs): the
  candidates shuffle offers, narrowed by the selectors and safety exclusions (candidates.py),
  filtered and ordered by the strategy chain (strategies.py), and chosen by `lowNodeUtilization`
  (lnu.py) when it is configured, otherwise all of them (shuffle's caps bound them). Each victim's
  (strategy, reason) goes to `session.note_victim`.
- `on_session_close`: the pods shuffle evicted on this plugin's proposal start their workload's
  cooldown (`workloadCooldown`) and make its replacement pods avoid the node they left
  (`avoidNodeFor`) — state.py, kept on the factory.
- `filter_nodes` / `explain_node` (predicate), only while some workload has a node to avoid.

Arguments (config.py): Volcano's `interval` ("5m"), `metricsPeriod` ("10m", the collector's
default period), `strategies` ([lowNodeUtilization] with thresholds 100: does nothing until
configured), `queueSelector`, `labelSelector`; vscheduler's `consecutiveCollections` (3),
`workloadCooldown` ("15m"), `avoidNodeFor` ("10m"). See docs/rescheduling.md.
"""

from __future__ import annotations

from collections.abc import Mapping

from vscheduler.plugins.rescheduling.config import NAME, Config, parse
from vscheduler.plugins.rescheduling.plugin import (
    Avoiding,
    Factory,
    Idle,
    Proposing,
    ProposingAvoiding,
)


def build(arguments: Mapping[str, object]) -> Factory:
    """Read the arguments (every problem reported at once) and make the factory."""
    return Factory(parse(arguments))


__all__ = [
    "NAME",
    "Avoiding",
    "Config",
    "Factory",
    "Idle",
    "Proposing",
    "ProposingAvoiding",
    "build",
]
