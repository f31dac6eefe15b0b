"""A pod's own resource-strategy-fit scoring, from its two annotations.

Owns: reading `volcano.sh/resource-strategy-scoring-type` (`MostAllocated` or `LeastAllocated`)
and `volcano.sh/resource-strategy-weight` (a JSON object, resource name -> integer weight, as
Go's `json.Unmarshal` into `map[ResourceName]int` accepts it) into a `ScoringOverride`, and the
warning on the pod when they are malformed. A malformed pair is ignored (the pod is scored with
the policy's resources) and reported; Volcano's plugin scores such a pod 0 in its strategy part
and only logs it.
Must not: score anything (the plugin `resource-strategy-fit` does).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from vscheduler.model.facts import UNUSUAL_VALUE, FieldWarning, ScoringOverride

SCORING_TYPE_KEY: Final = "volcano.sh/resource-strategy-scoring-type"
SCORING_WEIGHT_KEY: Final = "volcano.sh/resource-strategy-weight"
STRATEGIES: Final = ("LeastAllocated", "MostAllocated")
_INT64: Final = 2**63
_IGNORED: Final = (
    "both annotations are ignored (the policy's resource-strategy-fit resources apply)"
)


def scoring_override(
    annotations: Mapping[str, str], label: str
) -> tuple[ScoringOverride | None, tuple[FieldWarning, ...]]:
    """The pod's scoring override (None without one, or when malformed) and the warnings."""
    strategy = annotations.get(SCORING_TYPE_KEY, "")
    text = annotations.get(SCORING_WEIGHT_KEY, "")
    if not strategy:
        if not text:
            return None, ()
        where = f"{label}: metadata.annotations[{SCORING_WEIGHT_KEY}]"
        message = f"{where}: ignored without {SCORING_TYPE_KEY}"
        return None, (FieldWarning(UNUSUAL_VALUE, message),)
    if strategy not in STRATEGIES:
        message = (
            f"{label}: metadata.annotations[{SCORING_TYPE_KEY}]: must be MostAllocated or"
            f" LeastAllocated, got '{strategy}': {_IGNORED}"
        )
        return None, (FieldWarning(UNUSUAL_VALUE, message),)
    if not text:
        message = (
            f"{label}: metadata.annotations[{SCORING_WEIGHT_KEY}]: missing, though"
            f" {SCORING_TYPE_KEY} is set: {_IGNORED}"
        )
        return None, (FieldWarning(UNUSUAL_VALUE, message),)
    weights = _weights(text)
    if weights is None:
        message = (
            f"{label}: metadata.annotations[{SCORING_WEIGHT_KEY}]: must be a JSON object of"
            f' resource name to integer weight like {{"cpu": 1, "nvidia.com/gpu": 2}},'
            f" got {_short(text)}: {_IGNORED}"
        )
        return None, (FieldWarning(UNUSUAL_VALUE, message),)
    return ScoringOverride(strategy, weights), ()


def _weights(text: str) -> tuple[tuple[str, int], ...] | None:
    """The weights of a JSON object of 64-bit integers, by name; None when it is not one."""
    try:
        parsed = json.loads(text, parse_constant=_reject)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict):
        return None
    for value in parsed.values():
        if type(value) is not int or not -_INT64 <= value < _INT64:
            return None
    return tuple(sorted(parsed.items()))


def _reject(name: str) -> object:
    """JSON's NaN and Infinity are not numbers to Go."""
    raise ValueError(name)


def _short(text: str) -> str:
    """The annotation's value, quoted, cut to a readable length."""
    return f"'{text}'" if len(text) <= 80 else f"'{text[:77]}...'"
