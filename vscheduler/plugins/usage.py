"""usage: keep pods off nodes whose measured load is high, and prefer the least loaded nodes
(Volcano's usage plugin).

Registers, over the node usage the snapshot carries (`ClusterSnapshot.usage`: percent used by
resource, then by period, filled by the Prometheus collector or a simulate `NodeUsage`):

- `filter_nodes` / `explain_node` (predicate): a node fails when its cpu percent for `period`
  is above `thresholds.cpu` ("the CPU load of the node exceeds the upper limit."), else when its
  memory percent is above `thresholds.mem` ("the memory load of the node exceeds the upper
  limit."), both UnschedulableAndUnresolvable as in Volcano. Switched off by
  `enablePredicate: false` (the framework reads the flag).
- `score_nodes` (nodeOrder), Volcano's formula:

      ((100 - cpu) / 100 * cpu.weight + (100 - mem) / 100 * memory.weight)
          / (cpu.weight + memory.weight) * 100 * usage.weight

Fail-open, as Volcano: a node passes and scores 0 when it has no usage, or its data is older
than 5 minutes (`session.now - metricsTime > 5m`, Volcano's MetricsActiveTime). A `stale` flag
(the latest collection failed) changes nothing until then: the last good values are used. A
resource without a value for `period` passes its threshold check (Volcano reads a missing value
as 0) and makes the score 0.

Arguments (Volcano's names and defaults): `usage.weight` (5), `cpu.weight` (1),
`memory.weight` (1), all integers >= 0, cpu and memory weights not both 0; `thresholds`
(`{cpu: 80, mem: 80}`, percents from 0 to 100, floats allowed, `memory` accepted for `mem`);
`period` ("10m", the key read in each resource's usage).

Every answer depends only on the node, computed once per session as arrays over the ledger's
nodes, so the plugin is node-local.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import Final

import numpy as np

from vscheduler.plugin_api import (
    CPU,
    MEMORY,
    ArgumentReader,
    BoolArray,
    FloatArray,
    IntArray,
    Needs,
    NodeOrder,
    NodeUsage,
    PluginArgsError,
    PluginSession,
    Predicate,
    PredicateReason,
    Status,
    TaskState,
    unresolvable,
)

NAME: Final = "usage"
OWNER: Final = f"plugin {NAME}"
MAX_NODE_SCORE: Final = 100
METRICS_ACTIVE_TIME: Final = dt.timedelta(minutes=5)
"""Usage older than this is ignored (Volcano's MetricsActiveTime)."""
CPU_REASON: Final = "the CPU load of the node exceeds the upper limit."
MEMORY_REASON: Final = "the memory load of the node exceeds the upper limit."


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """The plugin's arguments, checked."""

    usage_weight: int = 5
    cpu_weight: int = 1
    memory_weight: int = 1
    cpu_threshold: float = 80.0
    memory_threshold: float = 80.0
    period: str = "10m"


class Usage(Predicate, PredicateReason, NodeOrder):
    """The per-session plugin: node verdicts and scores, computed at open."""

    def __init__(self, session: PluginSession, settings: Settings) -> None:
        cpu, memory = percents(session, settings.period)
        self._over_cpu: BoolArray = cpu > settings.cpu_threshold
        self._over_memory: BoolArray = memory > settings.memory_threshold
        self._passes: BoolArray = ~(self._over_cpu | self._over_memory)
        self._scores = scores(cpu, memory, settings)

    def filter_nodes(self, task: TaskState, idx: IntArray) -> BoolArray:
        """Nodes of `idx` whose load is within both thresholds (or unknown)."""
        return self._passes[idx]

    def explain_node(self, task: TaskState, i: int) -> Status | None:
        """Volcano's reason for node `i`, cpu first."""
        if self._over_cpu[i]:
            return unresolvable(CPU_REASON)
        if self._over_memory[i]:
            return unresolvable(MEMORY_REASON)
        return None

    def score_nodes(self, task: TaskState, idx: IntArray) -> FloatArray:
        """Volcano's usage score of each node of `idx` (0 where usage is unknown)."""
        return self._scores[idx]


def percents(session: PluginSession, period: str) -> tuple[FloatArray, FloatArray]:
    """(cpu, memory) percent of every ledger node for `period`; NaN where unknown or too old."""
    names = session.ledger.names
    cpu = np.full(len(names), np.nan)
    memory = np.full(len(names), np.nan)
    usage: Mapping[str, NodeUsage] = session.snapshot.usage
    for i, name in enumerate(names):
        found = usage.get(name)
        if found is None or session.now - found.metrics_time > METRICS_ACTIVE_TIME:
            continue
        cpu[i] = found.usage.get(CPU, {}).get(period, np.nan)
        memory[i] = found.usage.get(MEMORY, {}).get(period, np.nan)
    return cpu, memory


def scores(cpu: FloatArray, memory: FloatArray, settings: Settings) -> FloatArray:
    """Volcano's formula where both percents are known, 0 elsewhere.

    Written as `(free cpu × cpu weight + free memory × memory weight) / (sum of weights) ×
    usage weight`, free in percent: Volcano's `/ 100 ... × MaxNodeScore` cancels out, and
    leaving it out keeps round inputs giving round scores (325, not 324.99999999999994).
    """
    weights = settings.cpu_weight + settings.memory_weight
    free = (100.0 - cpu) * settings.cpu_weight + (100.0 - memory) * settings.memory_weight
    score = free / weights * (MAX_NODE_SCORE / 100) * settings.usage_weight
    known = ~(np.isnan(cpu) | np.isnan(memory))
    result: FloatArray = np.where(known, score, 0.0)
    return result


class Factory:
    """Lives as long as the policy; holds no state across cycles."""

    name = NAME
    plugin = Usage

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.needs = Needs(usage_periods=(settings.period,))

    def open(self, session: PluginSession) -> Usage:
        """A fresh plugin for `session`."""
        return Usage(session, self.settings)


def build(arguments: Mapping[str, object]) -> Factory:
    """Read Volcano's usage arguments; every problem is reported at once."""
    reader = ArgumentReader(arguments, owner=OWNER)
    usage_weight = reader.int("usage.weight", 5, minimum=0)
    cpu_weight = reader.int("cpu.weight", 1, minimum=0)
    memory_weight = reader.int("memory.weight", 1, minimum=0)
    period = reader.str("period", "10m")
    cpu, memory, threshold_problems = _thresholds(reader.raw("thresholds"))
    problems = [*_problems_of(reader), *threshold_problems]
    if cpu_weight == 0 and memory_weight == 0:
        problems.append(f"{OWNER}: arguments.cpu.weight: must not be 0 when memory.weight is 0")
    if not period.strip():
        problems.append(f"{OWNER}: arguments.period: must not be empty (Volcano's is '10m')")
    if problems:
        raise PluginArgsError(*problems)
    return Factory(
        Settings(
            usage_weight=usage_weight,
            cpu_weight=cpu_weight,
            memory_weight=memory_weight,
            cpu_threshold=cpu,
            memory_threshold=memory,
            period=period,
        )
    )


def _thresholds(raw: object) -> tuple[float, float, list[str]]:
    """(cpu, memory) thresholds from the `thresholds` mapping, and the problems found."""
    if raw is None:
        return 80.0, 80.0, []
    if not isinstance(raw, Mapping):
        shown = "a list" if isinstance(raw, list | tuple) else repr(raw)
        problem = f"must be a mapping like {{cpu: 80, mem: 80}}, got {shown}"
        return 80.0, 80.0, [f"{OWNER}: arguments.thresholds: {problem}"]
    reader = ArgumentReader({f"thresholds.{k}": v for k, v in raw.items()}, owner=OWNER)
    cpu = reader.float("thresholds.cpu", 80.0, minimum=0, maximum=100)
    memory = reader.float("thresholds.mem", 80.0, minimum=0, maximum=100)
    memory = reader.float("thresholds.memory", memory, minimum=0, maximum=100)
    problems = _problems_of(reader)
    if "mem" in raw and "memory" in raw:
        problems.append(
            f"{OWNER}: arguments.thresholds.memory: is another name for mem; give only one"
        )
    return cpu, memory, problems


def _problems_of(reader: ArgumentReader) -> list[str]:
    """Every problem `reader` found, unknown arguments included."""
    try:
        reader.finish()
    except PluginArgsError as err:
        return list(err.problems)
    return []
