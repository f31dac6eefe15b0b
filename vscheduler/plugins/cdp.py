"""cdp: cooldown protection, a pod just started is not taken again at once (Volcano's cdp).

Registers `select_preemptees` and `select_reclaimees` (preemptable, reclaimable): from the
candidates it keeps every pod but those under cooldown. A pod is under cooldown when it has a
`volcano.sh/cooldown-time` (label, else annotation: a Go duration such as `600s` or `10m`,
`TaskFacts.cooldown`), its phase is Running (`TaskFacts.status`: a pod being deleted is
Releasing, and no candidate), it has a PodScheduled=True condition, and that
condition's `lastTransitionTime` plus the cooldown is after the session's time. A pod without the
key, or whose value does not parse (the pod carries a warning saying so), is never protected.
It always answers (never abstains), as Volcano's always permits.

When it protects a candidate it asks the session for a cycle when the protection ends
(`session.revisit`): a preemptor or reclaimer left pending for it is tried again then, though
nothing else changed.

It serves no unifiedEvictable point: Volcano's cdp registers only the preemptable and reclaimable
functions, so gangpreempt and gangreclaim do not see its protection (in Volcano nor here). It
takes no arguments.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import (
    ArgumentReader,
    PluginSession,
    Preemptable,
    Reclaimable,
    TaskState,
    TaskStatus,
)

NAME: Final = "cdp"
_LATEST: Final = dt.datetime.max.replace(tzinfo=dt.UTC)


class Cdp(Preemptable, Reclaimable):
    """The per-session plugin."""

    def __init__(self, session: PluginSession) -> None:
        self._session = session
        self._now = session.now

    def _unprotected(self, candidates: Sequence[TaskState]) -> tuple[TaskState, ...]:
        """The candidates no cooldown protects, in order; asks for a cycle when the first
        protection it finds ends."""
        kept: list[TaskState] = []
        for task in candidates:
            facts = task.facts
            cooldown, scheduled = facts.cooldown, facts.scheduled_at
            if (
                cooldown is None
                or scheduled is None
                or facts.status is not TaskStatus.RUNNING
                or not cooldown > self._now - scheduled  # scheduled + cooldown after now
            ):
                kept.append(task)
            elif cooldown < _LATEST - scheduled:  # (one ending past year 9999 never ends)
                self._session.revisit(scheduled + cooldown)
        return tuple(kept)

    def select_preemptees(
        self, preemptor: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Every candidate not under cooldown."""
        return self._unprotected(candidates)

    def select_reclaimees(
        self, reclaimer: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Every candidate not under cooldown."""
        return self._unprotected(candidates)


class Factory:
    """Lives as long as the policy; holds nothing across cycles."""

    name = NAME
    plugin = Cdp

    def open(self, session: PluginSession) -> Cdp:
        """A fresh plugin for `session`."""
        return Cdp(session)


def build(arguments: Mapping[str, object]) -> Factory:
    """cdp takes no arguments."""
    ArgumentReader(arguments, owner=f"plugin {NAME}").finish()
    return Factory()
