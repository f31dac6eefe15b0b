"""rescheduling's arguments, read once when the policy is loaded into a frozen `Config`.

Owns the argument names (Volcano's `interval`, `metricsPeriod`, `strategies`, `queueSelector`,
`labelSelector`; vscheduler's `consecutiveCollections`, `workloadCooldown`, `avoidNodeFor`), their
defaults and their checks. Nested strategy entries are read by path, so every problem names the
plugin and the exact place (`arguments.strategies[1].params.thresholds.cpu`), and every problem
is reported at once. Does no I/O and decides nothing about victims.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Mapping
from typing import Final

from vscheduler.plugin_api import ArgumentReader, PluginArgsError

NAME: Final = "rescheduling"
OWNER: Final = f"plugin {NAME}"

LOW_NODE_UTILIZATION: Final = "lowNodeUtilization"
OFFLINE_ONLY: Final = "offlineOnly"
ORDERINGS: Final = ("lowPriorityFirst", "shortLifeTimeFirst", "bigObjectFirst", "moreReplicasFirst")
STRATEGIES: Final = frozenset({LOW_NODE_UTILIZATION, OFFLINE_ONLY, *ORDERINGS})
THRESHOLD_RESOURCES: Final = ("cpu", "memory", "pods")
LNU_ACCEPTED: Final = ("thresholdPriorityClassName", "nodeFit", "numberOfNodes")
"""Descheduler/Volcano LNU parameters read and ignored (system-critical pods are never proposed;
node fit is the scheduler's job when the replacement arrives)."""
DEFAULT_PERCENT: Final = 100.0
MAX_CONSECUTIVE: Final = 10
"""The collector keeps 9 earlier collections, so at most 10 in a row can ever be known."""
_PERIOD: Final = re.compile(r"(?:[0-9]+h)?(?:[0-9]+m)?(?:[0-9]+s)?(?:[0-9]+ms)?")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LnuParams:
    """lowNodeUtilization's percent thresholds by resource (`cpu`, `memory`, `pods`)."""

    thresholds: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: dict.fromkeys(THRESHOLD_RESOURCES, DEFAULT_PERCENT)
    )
    targets: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: dict.fromkeys(THRESHOLD_RESOURCES, DEFAULT_PERCENT)
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Everything the arguments decide."""

    interval: dt.timedelta = dt.timedelta(minutes=5)
    metrics_period: str = "10m"
    """The usage period read, spelled as the collector writes it (it collects this key)."""
    strategies: tuple[str, ...] = (LOW_NODE_UTILIZATION,)
    lnu: LnuParams = LnuParams()
    queues: frozenset[str] = frozenset()
    """Queue names whose pods may be proposed; empty means every queue."""
    labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Labels a pod must all carry to be proposed; empty means every pod."""
    consecutive: int = 3
    cooldown: dt.timedelta = dt.timedelta(minutes=15)
    avoid_for: dt.timedelta = dt.timedelta(minutes=10)


def parse(arguments: Mapping[str, object]) -> Config:
    """The Config the arguments describe; raises PluginArgsError listing every problem."""
    problems: list[str] = []
    entries = _entries(arguments.get("strategies"), problems)
    reader = ArgumentReader({**arguments, **_flatten(entries)}, owner=OWNER)
    reader.raw("strategies")
    period = _period(reader.raw("metricsPeriod"), problems)
    strategies, lnu = _strategies(reader, entries, problems)
    config = Config(
        interval=dt.timedelta(seconds=reader.duration("interval", 300.0)),
        metrics_period=period,
        strategies=strategies,
        lnu=lnu,
        queues=frozenset(_strings(reader.raw("queueSelector"), "queueSelector", problems)),
        labels=_labels(reader.raw("labelSelector"), problems),
        consecutive=reader.int("consecutiveCollections", 3, minimum=1, maximum=MAX_CONSECUTIVE),
        cooldown=dt.timedelta(seconds=reader.duration("workloadCooldown", 900.0)),
        avoid_for=dt.timedelta(seconds=reader.duration("avoidNodeFor", 600.0)),
    )
    try:
        reader.finish()
    except PluginArgsError as err:
        problems = [*err.problems, *problems]
    if problems:
        raise PluginArgsError(*problems)
    return config


def _problem(path: str, message: str) -> str:
    return f"{OWNER}: arguments.{path}: {message}"


def _describe(value: object) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return repr(value)


def _period(raw: object, problems: list[str]) -> str:
    """`metricsPeriod`: a duration Prometheus and Go both read (the collector queries it)."""
    if raw is None:
        return "10m"
    if isinstance(raw, str) and _PERIOD.fullmatch(raw) and any(c in "123456789" for c in raw):
        return raw
    problems.append(
        _problem(
            "metricsPeriod", f"must be a duration like '10m', '1h' or '1h30m', got {_describe(raw)}"
        )
    )
    return "10m"


def _entries(raw: object, problems: list[str]) -> tuple[Mapping[str, object] | None, ...] | None:
    """The strategy entries as mappings (None when `strategies` is not given)."""
    if raw is None:
        return None
    if not isinstance(raw, list | tuple) or not raw:
        problems.append(
            _problem(
                "strategies", f"must be a non-empty list of {{name, params}}, got {_describe(raw)}"
            )
        )
        return ()
    entries: list[Mapping[str, object] | None] = []
    for i, entry in enumerate(raw):
        if isinstance(entry, Mapping):
            entries.append(entry)
        else:
            problems.append(
                _problem(
                    f"strategies[{i}]",
                    f"must be a mapping {{name, params}}, got {_describe(entry)}",
                )
            )
            entries.append(None)
    return tuple(entries)


def _flatten(entries: tuple[Mapping[str, object] | None, ...] | None) -> dict[str, object]:
    """Every key inside the strategy entries, by path: `strategies[0].params.thresholds.cpu`."""
    flat: dict[str, object] = {}

    def walk(prefix: str, value: object) -> None:
        flat[prefix] = value
        if isinstance(value, Mapping):
            for key, item in value.items():
                walk(f"{prefix}.{key}", item)

    for i, entry in enumerate(entries or ()):
        for key, value in (entry or {}).items():
            walk(f"strategies[{i}].{key}", value)
    return flat


def _strategies(
    reader: ArgumentReader,
    entries: tuple[Mapping[str, object] | None, ...] | None,
    problems: list[str],
) -> tuple[tuple[str, ...], LnuParams]:
    """The strategy names in configured order and lowNodeUtilization's thresholds."""
    if entries is None:
        return (LOW_NODE_UTILIZATION,), LnuParams()
    names: list[str] = []
    lnu = LnuParams()
    for i, entry in enumerate(entries):
        path = f"strategies[{i}]"
        if entry is None:
            continue
        if "name" not in entry:
            problems.append(_problem(f"{path}.name", "is required"))
        name = reader.str(f"{path}.name", "", choices=STRATEGIES)
        if name in names:
            problems.append(_problem(f"{path}.name", f"{name!r} is listed twice"))
        elif name:
            names.append(name)
        if name == LOW_NODE_UTILIZATION:
            lnu = _lnu_params(reader, f"{path}.params", problems)
        else:
            _no_params(reader, f"{path}.params", entry.get("params"), name, problems)
    return tuple(names), lnu


def _no_params(
    reader: ArgumentReader, path: str, raw: object, name: str, problems: list[str]
) -> None:
    """A strategy that takes no parameters: `params` must be absent or empty."""
    reader.raw(path)
    for key in reader.keys_with_prefix(path + "."):
        reader.raw(key)
    if name and raw is not None and not (isinstance(raw, Mapping) and not raw):
        problems.append(_problem(path, f"{name} takes no params"))


def _lnu_params(reader: ArgumentReader, path: str, problems: list[str]) -> LnuParams:
    """thresholds and targetThresholds (percent, 0-100; a threshold above its target is an
    error: no node could then be both low and give room)."""
    if not _mapping_or_none(reader.raw(path), path, problems):
        return LnuParams()
    for key in LNU_ACCEPTED:
        reader.raw(f"{path}.{key}")
    low = _percents(reader, f"{path}.thresholds", problems)
    high = _percents(reader, f"{path}.targetThresholds", problems)
    for resource in THRESHOLD_RESOURCES:
        if low[resource] > high[resource]:
            problems.append(
                _problem(
                    f"{path}.thresholds.{resource}",
                    f"must not exceed targetThresholds.{resource} ({high[resource]:g}), "
                    f"got {low[resource]:g}",
                )
            )
    return LnuParams(thresholds=low, targets=high)


def _percents(reader: ArgumentReader, path: str, problems: list[str]) -> dict[str, float]:
    _mapping_or_none(reader.raw(path), path, problems)
    return {
        r: reader.float(f"{path}.{r}", DEFAULT_PERCENT, minimum=0, maximum=100)
        for r in THRESHOLD_RESOURCES
    }


def _mapping_or_none(raw: object, path: str, problems: list[str]) -> bool:
    if raw is None or isinstance(raw, Mapping):
        return True
    problems.append(_problem(path, f"must be a mapping, got {_describe(raw)}"))
    return False


def _strings(raw: object, path: str, problems: list[str]) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, list | tuple) and all(isinstance(s, str) and s for s in raw):
        return tuple(str(s) for s in raw)
    problems.append(_problem(path, f"must be a list of names, got {_describe(raw)}"))
    return ()


def _labels(raw: object, problems: list[str]) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(
            _problem("labelSelector", f"must be a mapping of labels, got {_describe(raw)}")
        )
        return {}
    labels: dict[str, str] = {}
    for key, value in raw.items():
        if isinstance(key, str) and isinstance(value, str):
            labels[key] = value
        else:
            problems.append(
                _problem(
                    f"labelSelector.{key}", f"must be a string (quote it), got {_describe(value)}"
                )
            )
    return labels
