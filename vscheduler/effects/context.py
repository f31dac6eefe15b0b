"""What every part of the effects executor writes through and reports to, in one value.

Owns: the dependencies the parts share (the writer, the cache, the clock, the resend interval,
the workers, the Event sender and the outcome callbacks), built once by the executor and handed
to each part (`binds`, `volume_binds`, `evictions`, `pod_writes`, `podgroup_writes`,
`releases`, `queue_writes`), which read them from here rather than keeping copies.
Must not: hold state of its own (it is frozen; the state is the parts'), or carry what only one
part takes (that part takes it as a keyword of its own).
"""

from __future__ import annotations

import dataclasses

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import Clock
from vscheduler.effects.events import EventSender
from vscheduler.effects.outcomes import Outcomes
from vscheduler.effects.ports import ClusterWriter
from vscheduler.effects.workers import Workers


@dataclasses.dataclass(frozen=True, slots=True)
class EffectsContext:
    """The executor's shared dependencies, as its parts take them."""

    writer: ClusterWriter
    cache: SchedulerCache
    clock: Clock
    resend_after: float
    """Seconds after which a write still not seen by the watch is sent again (`SentLog`)."""
    workers: Workers
    events: EventSender
    outcomes: Outcomes
