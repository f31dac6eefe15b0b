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
Arguments and their defaults are Volcano's (docs/policy.md section 5.18). A malformed pair of pod
annotations is reported on the pod by the converter (`convert.scoring`) and ignored.
"""

from __future__ import annotations

import dataclasses
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
    NodeOrder,
    PluginArgsError,
    PluginSession,
    Predicate,
    PredicateReason,
    Status,
    TaskState,
    unresolvable,
)

NAME: Final = "resource-strategy-fit"
OWNER: Final = f"plugin {NAME}"
MAX_NODE_SCORE: Final = 100
DEFAULT_WEIGHT: Final = 10
MOST: Final = "MostAllocated"
LEAST: Final = "LeastAllocated"
STRATEGIES: Final = (LEAST, MOST)
PODS: Final = "pods"
_GB: Final = 1e9
_MILLI: Final = 1000.0


@dataclasses.dataclass(frozen=True, slots=True)
class Strategy:
    """One resource's strategy and weight."""

    most: bool
    weight: int


@dataclasses.dataclass(frozen=True, slots=True)
class Proportion:
    """A scarce resource and the cpu cores and memory GB kept free per idle unit of it."""

    resource: str
    cpu: float
    memory: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """The arguments as Volcano reads them."""

    weight: int = DEFAULT_WEIGHT
    resources: Mapping[str, Strategy] = dataclasses.field(
        default_factory=lambda: {CPU: Strategy(False, 1), MEMORY: Strategy(False, 1)}
    )
    """Exact resource names and `prefix*` patterns."""
    sra_weight: int = 0
    sra_resources: tuple[tuple[str, int], ...] = ()
    proportional: tuple[Proportion, ...] | None = None
    """None when `proportional.enable` is false."""


def strategy_for(name: str, resources: Mapping[str, Strategy]) -> Strategy | None:
    """The strategy of resource `name`: its exact entry, else the matching `prefix*` with the
    longest prefix (Volcano's `findResourceConfigWithPrefix`), else None."""
    found = resources.get(name)
    if found is not None:
        return found
    best = -1
    for pattern, strategy in resources.items():
        if pattern.endswith("*") and name.startswith(pattern[:-1]) and len(pattern) > best:
            best, found = len(pattern), strategy
    return found


@dataclasses.dataclass(frozen=True, slots=True)
class _Terms:
    """A task class's scored resources of weight != 0 (a weight of 0 adds nothing to the sum,
    to the weights' sum or to the overflow check): ledger columns, request, weight, strategy,
    every node's allocatable of them (fixed for the session), and the pod slot's strategy."""

    cols: IntArray
    request: FloatArray
    weight: FloatArray
    sign: FloatArray
    """1 for MostAllocated (final), -1 for LeastAllocated (alloc - final)."""
    lead: FloatArray
    """0 for MostAllocated, 1 for LeastAllocated."""
    alloc: FloatArray
    pods: Strategy | None
    weight_sum: float


class _Base:
    """What every serving class holds: the settings, the ledger, per-class caches."""

    def __init__(self, session: PluginSession, settings: Settings) -> None:
        self._settings = settings
        self._session = session
        self._ledger = session.ledger
        self._pods_dim = PODS in session.ledger.dim_index
        self._terms_of: dict[int, _Terms] = {}
        self._sra_of: dict[int, FloatArray] = {}
        self._exempt: dict[int, bool] = {}


class Scorer(_Base, NodeOrder):
    """The nodeOrder part (opened when the strategy or sra weight is above 0)."""

    def score_nodes(self, task: TaskState, idx: IntArray) -> FloatArray:
        """The strategy score plus the sra score of each node of `idx`."""
        if self._settings.weight > 0:
            score = self._strategy_score(task, idx)
            if self._settings.sra_weight > 0:
                score += self._sra(task)[idx]
            return score
        if self._settings.sra_weight > 0:
            sra: FloatArray = self._sra(task)[idx]
            return sra
        return np.zeros(len(idx), dtype=np.float64)

    def _strategy_score(self, task: TaskState, idx: IntArray) -> FloatArray:
        terms = self._terms(task)
        ledger = self._ledger
        if not len(terms.cols) and terms.pods is None:
            return np.zeros(len(idx), dtype=np.float64)
        alloc = terms.alloc[idx]
        final = ledger.used[idx][:, terms.cols] + terms.request
        sign, lead, weight = terms.sign, terms.lead, terms.weight
        if terms.pods is not None and terms.pods.weight:
            most = terms.pods.most
            alloc = np.column_stack((alloc, ledger.pods_max[idx].astype(np.float64)))
            final = np.column_stack((final, ledger.pods_used[idx] + 1.0))
            sign = np.append(sign, 1.0 if most else -1.0)
            lead = np.append(lead, 0.0 if most else 1.0)
            weight = np.append(weight, float(terms.pods.weight))
        counted = alloc != 0
        safe = np.where(counted, alloc, 1.0)
        per = (final * sign + alloc * lead) * weight / safe
        total: FloatArray = np.where(counted, per, 0.0).sum(axis=1)
        if terms.weight_sum > 0:
            total /= terms.weight_sum
        total *= float(MAX_NODE_SCORE * self._settings.weight)
        overflow = (final > alloc) & counted
        if overflow.any():
            total[overflow.any(axis=1)] = 0.0
        return total

    def _sra(self, task: TaskState) -> FloatArray:
        """The sra score of every node for the task's class: it reads only the nodes'
        allocatable, fixed for the session (cached per class)."""
        found = self._sra_of.get(task.class_id)
        if found is None:
            found = self._sra_of[task.class_id] = self._compute_sra(task)
        return found

    def _compute_sra(self, task: TaskState) -> FloatArray:
        ledger = self._ledger
        needed = np.flatnonzero(self._session.request_row(task) > 0)
        lacking = (ledger.allocatable[:, needed] == 0).any(axis=1) | (ledger.pods_max == 0)
        held = np.zeros(len(ledger.names), dtype=np.float64)
        weight_sum = 0
        for name, weight in self._settings.sra_resources:
            weight_sum += weight
            held += weight * self._has(name)
        score = 1.0 - held / weight_sum if weight_sum > 0 else held
        score *= float(MAX_NODE_SCORE * self._settings.sra_weight)
        out: FloatArray = np.where(lacking, 0.0, score)
        return out

    def _has(self, name: str) -> BoolArray:
        """Whether each node has some of `name` (its pod slots for `pods`)."""
        col = self._ledger.dim_index.get(name)
        if col is not None:
            has: BoolArray = self._ledger.allocatable[:, col] > 0
            return has
        if name == PODS:
            slots: BoolArray = self._ledger.pods_max > 0
            return slots
        return np.zeros(len(self._ledger.names), dtype=np.bool_)

    def _terms(self, task: TaskState) -> _Terms:
        """The scored resources of the task's class (cached per class)."""
        found = self._terms_of.get(task.class_id)
        if found is None:
            found = self._terms_of[task.class_id] = self._compute_terms(task)
        return found

    def _compute_terms(self, task: TaskState) -> _Terms:
        override = task.facts.scoring
        if override is not None:
            own = dict(override.weights)
            most = override.strategy == MOST

            def lookup(name: str) -> Strategy | None:
                weight = own.get(name)
                return None if weight is None else Strategy(most, weight)

        else:

            def lookup(name: str) -> Strategy | None:
                return strategy_for(name, self._settings.resources)

        row = self._session.request_row(task)
        dims = self._ledger.dims
        found = [(int(k), lookup(dims[k])) for k in np.flatnonzero(row > 0)]
        scored = [(k, s) for k, s in found if s is not None]
        pods = None if self._pods_dim else lookup(PODS)
        weight_sum = sum(s.weight for _, s in scored) + (pods.weight if pods else 0)
        kept = [(k, s) for k, s in scored if s.weight]
        cols = np.array([k for k, _ in kept], dtype=np.int64)
        return _Terms(
            cols=cols,
            request=row[cols].astype(np.float64),
            weight=np.array([s.weight for _, s in kept], dtype=np.float64),
            sign=np.array([1.0 if s.most else -1.0 for _, s in kept], dtype=np.float64),
            lead=np.array([0.0 if s.most else 1.0 for _, s in kept], dtype=np.float64),
            alloc=self._ledger.allocatable[:, cols].astype(np.float64),
            pods=pods,
            weight_sum=float(weight_sum),
        )


class Filter(_Base, Predicate, PredicateReason):
    """The proportional predicate (opened when `proportional.enable` is true)."""

    def filter_nodes(self, task: TaskState, idx: IntArray) -> BoolArray:
        """False where a proportional resource's cpu and memory share would be taken."""
        ok = np.ones(len(idx), dtype=np.bool_)
        if self._is_exempt(task):
            return ok
        for proportion in self._settings.proportional or ():
            ok &= ~self._fails(task, proportion, idx)
        return ok

    def explain_node(self, task: TaskState, i: int) -> Status | None:
        """Volcano's reason, naming the first proportional resource that fails on node `i`."""
        if self._is_exempt(task):
            return None
        at = np.array([i], dtype=np.int64)
        for proportion in self._settings.proportional or ():
            if self._fails(task, proportion, at)[0]:
                return unresolvable(f"proportional of resource {proportion.resource} check failed")
        return None

    def _fails(self, task: TaskState, proportion: Proportion, idx: IntArray) -> BoolArray:
        ledger = self._ledger
        col = ledger.dim_index.get(proportion.resource)
        if col is None:
            return np.zeros(len(idx), dtype=np.bool_)
        row = self._session.request_row(task)
        cpu, memory = ledger.dim_index[CPU], ledger.dim_index[MEMORY]
        idle = ledger.idle[idx]
        scarce = idle[:, col].astype(np.float64)
        cpu_left = idle[:, cpu] - row[cpu]
        memory_left = idle[:, memory] - row[memory]
        short = (cpu_left < scarce * (_MILLI * proportion.cpu)) | (
            memory_left < scarce * (_GB * proportion.memory)
        )
        fails: BoolArray = (ledger.allocatable[idx, col] > 0) & short
        return fails

    def _is_exempt(self, task: TaskState) -> bool:
        """Whether the task requests one of the proportional resources (cached per class)."""
        found = self._exempt.get(task.class_id)
        if found is None:
            row = self._session.request_row(task)
            index = self._ledger.dim_index
            found = any(
                p.resource in index and row[index[p.resource]] > 0
                for p in self._settings.proportional or ()
            )
            self._exempt[task.class_id] = found
        return found


class ScorerAndFilter(Scorer, Filter):
    """Both parts."""


class Inert:
    """Neither part: every weight is 0 or below and `proportional` is off."""


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
    reader = ArgumentReader(arguments, owner=OWNER)
    weight = reader.int("resourceStrategyFitWeight", DEFAULT_WEIGHT)
    problems: list[str] = []
    resources = _resources(reader.raw("resources"), problems)
    sra_weight, sra_resources = _sra(reader.raw("sra"), problems)
    proportional = _proportional(reader.raw("proportional"), problems)
    try:
        reader.finish()
    except PluginArgsError as err:
        problems = [*err.problems, *problems]
    if problems:
        raise PluginArgsError(*problems)
    return Factory(
        Settings(
            weight=weight if weight >= 0 else DEFAULT_WEIGHT,
            resources=resources,
            sra_weight=sra_weight,
            sra_resources=sra_resources,
            proportional=proportional,
        )
    )


def _problem(path: str, message: str) -> str:
    return f"{OWNER}: arguments.{path}: {message}"


def _section(raw: object, path: str, shape: str, problems: list[str]) -> ArgumentReader | None:
    """A reader over the mapping `raw` at `path` (keys read as `path.key`), or None when absent
    or not a mapping (a problem then)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        problems.append(_problem(path, f"must be a mapping like {shape}, got {_show(raw)}"))
        return None
    return ArgumentReader({f"{path}.{key}": value for key, value in raw.items()}, owner=OWNER)


def _finish(reader: ArgumentReader, problems: list[str]) -> None:
    try:
        reader.finish()
    except PluginArgsError as err:
        problems.extend(err.problems)


def _resources(raw: object, problems: list[str]) -> Mapping[str, Strategy]:
    """`resources`: name or `prefix*` -> {type, weight}; cpu and memory LeastAllocated when
    absent or empty. A weight of 0 or below means 1, as in Volcano."""
    default = Settings().resources
    if raw is None:
        return default
    if not isinstance(raw, Mapping):
        shape = "{nvidia.com/gpu: {type: MostAllocated, weight: 2}}"
        problems.append(_problem("resources", f"must be a mapping like {shape}, got {_show(raw)}"))
        return default
    out: dict[str, Strategy] = {}
    for key, entry in raw.items():
        name = str(key)
        path = f"resources.{name}"
        wrong = _pattern_problem(name)
        if wrong:
            problems.append(_problem(path, wrong))
            continue
        reader = _section(entry, path, "{type: MostAllocated, weight: 2}", problems)
        if reader is None:
            if entry is None:
                out[name] = Strategy(False, 1)
            continue
        kind = reader.str(f"{path}.type", LEAST, choices=STRATEGIES)
        weight = reader.int(f"{path}.weight", 1)
        _finish(reader, problems)
        out[name] = Strategy(kind == MOST, weight if weight > 0 else 1)
    return out or default


def _pattern_problem(name: str) -> str:
    """Why `name` is no resource name or `prefix*` pattern ("" when it is one)."""
    if not name.strip():
        return "a resource name must not be empty"
    if "*" not in name:
        return ""
    if name == "*":
        return "'*' alone is not supported (Volcano ignores it): use a prefix like 'nvidia.com/*'"
    if name.count("*") > 1 or not name.endswith("*"):
        return "only one '*', at the end, is supported (like 'nvidia.com/*')"
    return ""


def _names(text: str) -> list[str]:
    """A comma-separated list of resource names, blanks dropped, first mention kept."""
    return list(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))


def _sra(raw: object, problems: list[str]) -> tuple[int, tuple[tuple[str, int], ...]]:
    """(`sra.weight`, the resources' weights) when `sra.enable`, else (0, ())."""
    reader = _section(raw, "sra", "{enable: true, resources: nvidia.com/gpu, weight: 10}", problems)
    if reader is None:
        return 0, ()
    enable = reader.bool("sra.enable", False)
    names = _names(reader.str("sra.resources", ""))
    weight = reader.int("sra.weight", 0)
    given = _section(
        reader.raw("sra.resourceWeight"), "sra.resourceWeight", "{nvidia.com/gpu: 1}", problems
    )
    weights: list[tuple[str, int]] = []
    if given is not None:
        for name in names:
            value = given.int(f"sra.resourceWeight.{name}", 1)
            weights.append((name, value if value >= 0 else 1))
        read = {f"sra.resourceWeight.{name}" for name in names}
        _finish_listed(given, "sra.resourceWeight", read, "sra.resources", problems)
    else:
        weights = [(name, 1) for name in names]
    _finish(reader, problems)
    return (weight, tuple(weights)) if enable else (0, ())


def _proportional(raw: object, problems: list[str]) -> tuple[Proportion, ...] | None:
    """The proportions when `proportional.enable`, else None. A negative rate means 1."""
    shape = "{enable: true, resources: nvidia.com/gpu}"
    reader = _section(raw, "proportional", shape, problems)
    if reader is None:
        return None
    enable = reader.bool("proportional.enable", False)
    names = _names(reader.str("proportional.resources", ""))
    path = "proportional.resourceProportion"
    given = _section(reader.raw(path), path, "{nvidia.com/gpu.cpu: 4}", problems)
    out: list[Proportion] = []
    for name in names:
        cpu = given.float(f"{path}.{name}.cpu", 1.0) if given else 1.0
        memory = given.float(f"{path}.{name}.memory", 1.0) if given else 1.0
        out.append(Proportion(name, cpu if cpu >= 0 else 1.0, memory if memory >= 0 else 1.0))
    if given is not None:
        read = {f"{path}.{name}.{part}" for name in names for part in (CPU, MEMORY)}
        _finish_listed(given, path, read, "proportional.resources", problems)
    _finish(reader, problems)
    return tuple(out) if enable else None


def _finish_listed(
    reader: ArgumentReader, path: str, read: set[str], listing: str, problems: list[str]
) -> None:
    """The values' problems; a key under `path` not in `read` (no resource of `listing` reads
    it) is one too."""
    problems.extend(reader.problems)
    for key in reader.keys_with_prefix(f"{path}."):
        if key not in read:
            problems.append(_problem(key, f"not a resource that {listing} lists"))


def _show(raw: object) -> str:
    if isinstance(raw, list | tuple):
        return "a list"
    return repr(raw)
