"""A Queue's place in hierarchical drf's tree: its `volcano.sh/hierarchy` and
`volcano.sh/hierarchy-weights` annotations become `HierarchyLevel`s.

Owns: reading the two annotations as Volcano's drf reads them (`buildHierarchy`: the first name
stands for the root and is skipped; each level below takes the weight at its position, and a
weight that is no number or below 1 is read as 1), after the rewrite Volcano's admission makes
(`mutate_queue.go`: a path not starting with `root` gets `root/` before it and its weights `1/`),
and a warning on the queue for what Volcano's admission would have refused (`validate_queue.go`:
a weight count that differs from the name count, a weight that is no number or not above 0) or
what drf reads other than as written (a weight below 1, a weight missing or not finite, where
Volcano's drf stops on an index out of range or reads NaN).
Must not: look at other queues (two queues that disagree on a shared level's weight, or a queue
whose path runs through another's, are the plugin's to settle).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final

from vscheduler.model.facts import (
    HIERARCHY,
    HIERARCHY_WEIGHTS,
    UNUSUAL_VALUE,
    FieldWarning,
    HierarchyLevel,
)

_NUMBER: Final = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(?i:inf|infinity|nan)")
"""What Go's `strconv.ParseFloat` reads in decimal (hexadecimal floats are not read here)."""


def hierarchy_levels(
    annotations: Mapping[str, str], label: str, warnings: list[FieldWarning]
) -> tuple[HierarchyLevel, ...]:
    """The levels below the root, top first; none when neither annotation is set."""
    path = annotations.get(HIERARCHY, "")
    written = annotations.get(HIERARCHY_WEIGHTS, "")
    if not path and not written:
        return ()
    where = f"{label}: metadata.annotations.{HIERARCHY_WEIGHTS}"
    if not path:
        message = f"{where}: set without {HIERARCHY}: ignored (the queue's jobs hang from the root)"
        warnings.append(FieldWarning(UNUSUAL_VALUE, message))
        return ()
    names, weights = path.split("/"), written.split("/")
    if written and not path.startswith("root"):
        message = (
            f"{label}: metadata.annotations.{HIERARCHY}: {path!r} does not start with root:"
            f" read as 'root/{path}' with weights '1/{written}', as Volcano's admission"
            " rewrites them"
        )
        warnings.append(FieldWarning(UNUSUAL_VALUE, message))
        names, weights = ["root", *names], ["1", *weights]
    if not written:
        if len(names) > 1:
            message = f"{where}: not set for {HIERARCHY} {path!r}: every level weighs 1"
            warnings.append(FieldWarning(UNUSUAL_VALUE, message))
        return tuple(HierarchyLevel(name, 1.0) for name in names[1:])
    if len(weights) != len(names):
        message = (
            f"{where}: {len(weights)} weights for the {len(names)} names of {HIERARCHY}"
            f" {path!r}: a level without a weight weighs 1, a weight without a level is ignored"
        )
        warnings.append(FieldWarning(UNUSUAL_VALUE, message))
    problems = [problem for weight in weights if (problem := _weight_problem(weight))]
    if problems:
        message = f"{where}: {', '.join(problems)}: read as 1"
        warnings.append(FieldWarning(UNUSUAL_VALUE, message))
    return tuple(
        HierarchyLevel(name, _weight(weights[i]) if i < len(weights) else 1.0)
        for i, name in enumerate(names)
        if i
    )


def _weight(text: str) -> float:
    """A level's weight as drf reads it: 1 unless a finite number of at least 1."""
    if not _NUMBER.fullmatch(text):
        return 1.0
    value = float(text)
    return value if math.isfinite(value) and value >= 1 else 1.0


def _weight_problem(text: str) -> str:
    """Why a written weight is not read as written, or ""."""
    if not _NUMBER.fullmatch(text):
        return f"{text!r} is not a number"
    value = float(text)
    if not math.isfinite(value):
        return f"{text!r} is not a finite number"
    if value <= 0:
        return f"{text!r} is not above 0"
    if value < 1:
        return f"{text!r} is below 1"
    return ""
