"""Reservations: resources held on a node for one pod, which may not exist yet (seed 004).

Owns: `Reservation`, one entry of a reservation ConfigMap (its data key, the node, the pod it is
for as `namespace/name`, the resources held, when it expires), and `ReservationBook`, every
readable entry of one such ConfigMap with the problems of the unreadable ones.
Must not: parse raw objects (`vscheduler.convert.reservation` does) or decide what a reservation
keeps off a node (the reservation plugin does).
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from vscheduler.model.resources import Resources


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Reservation:
    """`resources` on `node` held for the pod `pod` (`namespace/name`) until `expires_at`."""

    key: str
    """The ConfigMap data key holding it (what the scheduler removes once it is done)."""
    node: str
    pod: str
    resources: Resources
    expires_at: dt.datetime

    def expired(self, now: dt.datetime) -> bool:
        """A reservation holds until its expiry time, exclusive."""
        return now >= self.expires_at


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReservationBook:
    """The reservations of the ConfigMap `namespace/name`: its readable entries, sorted by data
    key, and one message per entry that could not be read (that entry is left out)."""

    namespace: str
    name: str
    entries: tuple[Reservation, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """`namespace/name` of the ConfigMap."""
        return f"{self.namespace}/{self.name}"
