"""resource-strategy-fit's arguments, read as Volcano reads them.

Owns: `Settings` (the plugin weight, the `resources` strategies, sra's weights, the proportions)
and `read_settings`, which reports every problem at once, each naming its key; Volcano's
fallbacks (a negative plugin weight is 10, a resource weight of 0 or less is 1, a negative sra or
proportion weight is 1) and the wildcard lookup `strategy_for`.
Must not: score or filter (`plugin` does).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

from vscheduler.plugin_api import CPU, MEMORY, ArgumentReader, PluginArgsError

NAME: Final = "resource-strategy-fit"
OWNER: Final = f"plugin {NAME}"
MAX_NODE_SCORE: Final = 100
DEFAULT_WEIGHT: Final = 10
MOST: Final = "MostAllocated"
LEAST: Final = "LeastAllocated"
STRATEGIES: Final = (LEAST, MOST)
PODS: Final = "pods"


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


def read_settings(arguments: Mapping[str, object]) -> Settings:
    """Read Volcano's resource-strategy-fit arguments; every problem is reported at once
    (PluginArgsError, each naming its key)."""
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
    return Settings(
        weight=weight if weight >= 0 else DEFAULT_WEIGHT,
        resources=resources,
        sra_weight=sra_weight,
        sra_resources=sra_resources,
        proportional=proportional,
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
