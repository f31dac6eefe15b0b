"""The executor's writes to Queues: a Warning Event on a Queue whose figures carry a warning,
and each Queue's `status.allocated`.

Owns: the Warning Event of each Queue whose warning is new or changed (`queue_warnings`:
`GuaranteeUnsatisfiable`, or the figures' own `warning_reason`), once per change; each Queue's
`status.allocated` (`CycleResult.queue_allocated`, Volcano's `updateQueueStatus`) where it
differs from the watched Queue (`queue_status`), the newest per Queue, not while in flight,
checked against the Queue's uid before it is sent, and at most once per `QUEUE_HOLD` per Queue:
a change within the hold is held, and written when it ends, by the next cycle or by a dispatcher
turn of its own (the hold's timer, cancelled by `close`).
Must not: decide what a Queue has allocated (the cycle does), retry but through the workers'
`call`, or raise out of a worker or the dispatcher.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Mapping
from typing import Final

from vscheduler.effects import queue_status as qs, queue_warnings as qw, status as st
from vscheduler.effects.context import EffectsContext
from vscheduler.effects.outcomes import log_failure
from vscheduler.effects.ports import ObjectRef
from vscheduler.effects.sent import Newest, SentLog
from vscheduler.errors import NotFoundError, NotSentError
from vscheduler.model.commands import QueueFigures
from vscheduler.model.resources import Resources

# the executor's one logger, whichever of its modules writes the line
logger = logging.getLogger("vscheduler.effects.executor")

QUEUE_HOLD: Final = 1.0
"""Seconds after a Queue's `status.allocated` was sent during which a change of it waits: at
most one write per Queue per second, as Volcano's once-a-second sessions write it (a cycle
after every watch event would write it after every bind). A change held is written when the
hold ends, by the next cycle or, if none comes, by a turn of the dispatcher of its own."""


class QueueWriter:
    """Writes the Queues' warnings and statuses: warnings and holds on the dispatcher, the
    status writes on the status workers."""

    def __init__(self, context: EffectsContext, *, hold: float) -> None:
        self._context = context
        self._queues_sent = SentLog(context.clock, context.resend_after)
        self._queues_wanted: Newest[Resources] = Newest()
        """Per Queue, the newest `status.allocated` wanted written (see `Newest`)."""
        self._queues_sent_at: dict[str, float] = {}
        """Per Queue, when its status was last sent (`clock.monotonic`; see `QUEUE_HOLD`)."""
        self._queues_held: dict[str, Resources] = {}
        """Per Queue, the allocated a cycle wanted written within its hold (the dispatcher's)."""
        self._queue_hold = hold
        self._queue_timer: threading.Timer | None = None
        """The dispatcher's turn that writes the held Queue statuses (set on the dispatcher)."""
        self._queue_warnings = qw.QueueWarnings()  # the dispatcher's only

    def close(self) -> None:
        """The held statuses' turn, if armed, never comes."""
        timer = self._queue_timer
        if timer is not None:
            timer.cancel()

    def warn(self, queues: Mapping[str, QueueFigures]) -> None:
        """A Warning Event on each Queue whose warning is new or changed (`queue_warnings`)."""
        for name, warning in self._queue_warnings.due(queues):
            raw = self._context.cache.object_raw("Queue", name)
            ref = None if raw is None else st.object_ref("Queue", raw)
            if ref is None:  # the default queue vscheduler assumes, or a queue being deleted
                self._queue_warnings.retract(name)
                continue
            logger.warning("queue %s: %s", name, warning)
            reason = queues[name].warning_reason
            self._context.workers.queue(
                f"event {reason} on queue {name}",
                functools.partial(self._context.events.send, ref, "Warning", reason, warning),
                self._context.workers.event_pool,
            )

    def update(self, allocated: Mapping[str, Resources], *, every: bool = True) -> None:
        """Each Queue's `status.allocated` where it differs from the watched Queue
        (`queue_status.allocated_patch`), not while in flight, and at most once per
        `queue_hold` per Queue: a change within it is held, and written when the hold ends
        (`_arm_queue_timer`). `every`: `allocated` names every queue of a cycle (what it does
        not name is forgotten), not only the held ones."""
        for name, amounts in allocated.items():
            raw = self._context.cache.object_raw("Queue", name)
            patch = None if raw is None else qs.allocated_patch(amounts, raw)
            if patch is None:  # as wanted, or no Queue (the default queue assumed, or deleted)
                self._queues_sent.discard(name)
                self._queues_held.pop(name, None)
                continue
            left = self._queue_hold_left(name)
            if left > 0:
                self._queues_held[name] = amounts
                self._arm_queue_timer(left)
                continue
            self._queues_held.pop(name, None)
            if (
                self._queues_sent.claim(name, amounts)
                and self._queues_wanted.want(name, amounts)
                and not self._context.workers.spawn_status(
                    f"status allocated of Queue {name}", self._write_wanted_queue, name
                )
            ):
                self._queues_wanted.forget(name)
        if every:
            self._queues_sent.prune(allocated.keys())
            for name in [n for n in self._queues_held if n not in allocated]:
                del self._queues_held[name]

    def _queue_hold_left(self, name: str) -> float:
        """Seconds until Queue `name`'s status may be sent again (0 or less: now)."""
        at = self._queues_sent_at.get(name)
        return 0.0 if at is None else at + self._queue_hold - self._context.clock.monotonic()

    def _arm_queue_timer(self, delay: float) -> None:
        """A dispatcher turn writing the held Queue statuses, `delay` seconds from now (one
        at a time; a status still held then arms the next): a change held is written when its
        hold ends though no cycle comes (a pod deleted, then nothing)."""
        if self._queue_timer is not None or self._context.workers.stop.is_set():
            return
        timer = threading.Timer(
            delay,
            lambda: self._context.workers.queue(
                "dispatch held queue statuses", self._held_queues, self._context.workers.dispatcher
            ),
        )
        timer.daemon = True
        self._queue_timer = timer
        timer.start()

    def _held_queues(self) -> None:
        """The dispatcher's turn of `_arm_queue_timer`."""
        self._queue_timer = None
        self.update(dict(self._queues_held), every=False)

    def _write_wanted_queue(self, name: str) -> None:
        """The newest `status.allocated` wanted for Queue `name`, patched against the Queue as
        watched now (written meanwhile, or gone: nothing is sent)."""
        while (amounts := self._queues_wanted.take(name)) is not None:
            raw = self._context.cache.object_raw("Queue", name)
            ref = None if raw is None else st.object_ref("Queue", raw)
            patch = None if raw is None else qs.allocated_patch(amounts, raw)
            if ref is None or patch is None:
                self._queues_sent.discard(name)
                continue
            self._write_queue(ref, amounts, patch)

    def _write_queue(self, ref: ObjectRef, amounts: Resources, patch: Mapping[str, object]) -> None:
        if self._context.workers.skipped_in_shutdown():
            return
        name = ref.name
        what = f"patch the status of Queue {name}"
        self._queues_sent_at[name] = self._context.clock.monotonic()
        outcome = "success"
        try:
            self._context.workers.call(
                what,
                lambda: self._context.writer.patch_queue_status(name, patch),
                check=lambda: self._queue_problem(name, ref.uid),
            )
        except NotSentError as err:
            self._queues_sent.release(name, amounts)
            outcome = "dropped"
            logger.info("%s not sent: %s", what, err)
        except NotFoundError as err:  # deleted meanwhile: the watch drops it
            self._queues_sent.release(name, amounts)
            outcome = "dropped"
            logger.info("%s dropped: the Queue is gone (%s)", what, err)
        except Exception as err:
            self._queues_sent.release(name, amounts)
            outcome = "error"
            log_failure(f"{what} failed: %s", err)
        self._context.outcomes.outcome("queue_status", outcome)

    def _queue_problem(self, name: str, uid: str) -> str | None:
        """Why writing Queue `name`'s status (as `uid`) no longer holds: gone or replaced."""
        raw = self._context.cache.object_raw("Queue", name)
        held = st.object_ref("Queue", raw) if raw is not None else None
        if held is None or held.uid != uid:
            return f"Queue {name} (uid {uid}) is gone or was replaced"
        return None
