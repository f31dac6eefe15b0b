"""A pod's cooldown protection (the cdp plugin's facts): `volcano.sh/cooldown-time` and when
the pod was scheduled.

Owns: reading the cooldown, Volcano's rule (`podCooldownTime`): the label, else the annotation,
as Go's `time.ParseDuration` reads it (a label that does not parse is not replaced by the
annotation); the warning on the pod when it does not parse (the pod is then unprotected, as in
Volcano, which only logs it) or is negative (Go accepts it: it protects nothing but a pod
scheduled further in the future than it, so it is read as written); and the time the pod was
scheduled: the `lastTransitionTime` of its first `PodScheduled` condition of status `True`.
Must not: decide protection (the plugin `cdp` does, against the session's clock).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Final

from vscheduler.convert.fields import Raw, timestamp
from vscheduler.model.duration import DurationError, parse_go_duration_ns
from vscheduler.model.facts import UNUSUAL_VALUE, FieldWarning

COOLDOWN_KEY: Final = "volcano.sh/cooldown-time"
"""Volcano's `v1beta1.CooldownTime`: a label or annotation (the label first)."""
_TIME_FIELD: Final = "status.conditions[type=PodScheduled].lastTransitionTime"
"""How a message names the time read (by type, not index: the cache keeps only the PodScheduled
conditions of a placed pod, `cache.entries.kept_pod`)."""
_UNPROTECTED: Final = (
    "it is read as absent, as Volcano reads it: cdp does not protect the pod from preempt or"
    " reclaim"
)


def cooldown(
    annotations: Mapping[str, str], labels: Mapping[str, str], label: str
) -> tuple[dt.timedelta | None, tuple[FieldWarning, ...]]:
    """The pod's cooldown (None without one, or when it does not parse) and the warnings.

    The nanoseconds are rounded up to microseconds: the session's clock has microseconds, so
    `scheduled + cooldown > now` decides as Go's nanosecond comparison does."""
    kind, value = "labels", labels.get(COOLDOWN_KEY)
    if value is None:
        kind, value = "annotations", annotations.get(COOLDOWN_KEY)
        if value is None:
            return None, ()
    where = f"{label}: metadata.{kind}[{COOLDOWN_KEY}]"
    try:
        nanoseconds = parse_go_duration_ns(value)
    except DurationError:
        message = (
            f"{where}: {_short(value)} is not a duration like '600s', '10m' or '1h30m';"
            f" {_UNPROTECTED}"
        )
        return None, (FieldWarning(UNUSUAL_VALUE, message),)
    period = dt.timedelta(microseconds=-(-nanoseconds // 1000))
    if nanoseconds >= 0:
        return period, ()
    message = (
        f"{where}: {_short(value)} is negative; it is read as written, as Volcano reads it:"
        " cdp protects the pod only while its PodScheduled time is further ahead of the"
        " scheduler's clock than that"
    )
    return period, (FieldWarning(UNUSUAL_VALUE, message),)


def scheduled_at(status: Raw, label: str) -> dt.datetime | None:
    """The `lastTransitionTime` of the pod's first `PodScheduled` condition whose status is
    `True` (Volcano's cdp reads that one), or None: no such condition, or one without a time
    (Go's zero time, which protects nothing). Conditions not mappings are skipped."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return None
    for condition in conditions:
        if (
            isinstance(condition, Mapping)
            and condition.get("type") == "PodScheduled"
            and condition.get("status") == "True"
        ):
            value = condition.get("lastTransitionTime")
            if value is None:
                return None
            return timestamp(value, label, _TIME_FIELD)
    return None


def _short(text: str) -> str:
    """The value, quoted, cut to a readable length."""
    return f"'{text}'" if len(text) <= 80 else f"'{text[:77]}...'"
