"""The executor's PodGroup status writes.

Owns: each PodGroup's status where it differs from the watched PodGroup and is not already in
flight, with the Events its change calls for (`status.podgroup_events`; its Normal `Scheduled`
queued to go with the pods' `Scheduled` Events, `EventSender.queue_scheduled`); one queued write per
PodGroup, the newest (`sent.Newest`), patched against the PodGroup as watched when it is sent
(never on one replaced since); a change of its counts alone held `COUNT_HOLD` from the cycle
that first found it, while some of its placed pods are still to start; nothing of a gang still
arriving but a move of its phase when it has no pod yet or minResources; the `job` duration
when it goes Running; and what it last found matching, so an unchanged job is not diffed again.
Must not: decide a status (the cycle does; `status` computes the patch), retry but through the
workers' `call`, or raise out of a worker.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping, Set as AbstractSet
from typing import Final

from vscheduler.effects import status as st
from vscheduler.effects.context import EffectsContext
from vscheduler.effects.outcomes import log_failure
from vscheduler.effects.sent import Newest, SentLog
from vscheduler.errors import NotFoundError, NotSentError
from vscheduler.model.commands import PodGroupStatus
from vscheduler.model.status import PodGroupPhase

# the executor's one logger, whichever of its modules writes the line
logger = logging.getLogger("vscheduler.effects.executor")

COUNT_HOLD: Final = 1.0
"""Seconds a change of a PodGroup's counts alone (`running`, `succeeded`, `failed`) waits,
counted from the cycle that first found it unwritten, while some of its placed pods are still to
start (`PodGroupStatus.starting`): a gang's pods start one by one, and each cycle in between
wrote the count it had reached (W3: 498 of 1,099 PodGroup patches, when each cycle wrote).
The counts are written once every placed pod is counted, or by the first cycle past the hold
(no staler than Volcano's once-a-second sessions write them; a pod that never starts holds them
until then, as long as the next cycle, at most the loop's quiet period). Counted from the last
write, as it was until the thirty-third session, the hold had passed long before a gang's pods
started where the kubelet lags its binds (kwok, 15-30 s behind in W3), so a cycle in the middle
of the starts wrote a count on its way (~160 of W3's ~740 PodGroup patches)."""


class PodGroupStatusWriter:
    """Writes PodGroups' statuses, on the status workers."""

    def __init__(self, context: EffectsContext) -> None:
        self._context = context
        self._groups_sent = SentLog(context.clock, context.resend_after)
        self._groups_wanted: Newest[tuple[PodGroupStatus, st.Raw, dt.datetime | None, bool]] = (
            Newest()
        )
        """Per PodGroup key, the newest status wanted, with the PodGroup it was made against,
        its creation time, and whether its gang was still arriving (then only a phase that
        still moves is written)."""
        self._counts_held: dict[str, float] = {}
        """Per PodGroup key, since when a change of its counts alone waits (`clock.monotonic`:
        the cycle that first held it back; see `COUNT_HOLD`)."""
        self._groups_matched: dict[str, tuple[PodGroupStatus, st.Raw]] = {}
        """Per PodGroup key, the status last found to match the PodGroup as watched, with that
        PodGroup: while a cycle hands the same status object (a job taken unchanged, see
        `podgroup_statuses`) and the watch the same object, nothing is computed again."""

    def update(
        self,
        podgroups: Mapping[str, PodGroupStatus],
        created: Mapping[str, dt.datetime],
        arriving: AbstractSet[str] = frozenset(),
        phased: AbstractSet[str] = frozenset(),
    ) -> None:
        """Each PodGroup's status where it differs from the watched one; nothing of a gang still
        arriving (`CycleResult.arriving_groups`): its Unschedulable condition (and the Warning
        Event with it) would follow each member's creation (`valid: 2`, `valid: 3`, ...), and
        its phase go Inqueue, moments before the gang starts whole and goes Running; they are
        written once it stops arriving, as its members' messages are. Of those in `phased` (a
        PodGroup with no pod yet whose controller creates the pods once it is Inqueue; one
        with minResources, whose Inqueue phase holds its admission budget) a move of the
        phase is written, without the conditions."""
        matched = self._groups_matched
        still: dict[str, tuple[PodGroupStatus, st.Raw]] = {}
        raws = self._context.cache.podgroup_raws(podgroups)
        for (key, status), raw in zip(podgroups.items(), raws, strict=True):
            if raw is None:
                continue
            last = matched.get(key)
            if last is not None and last[0] is status and last[1] is raw:
                still[key] = last
                continue
            patch = st.podgroup_status_patch(status, raw)
            if not patch:
                self._groups_sent.discard(key)
                self._counts_held.pop(key, None)
                still[key] = (status, raw)
                continue
            if key in arriving:
                moved = _phase_move(patch) if key in phased else None
                if moved is None:
                    continue  # its members still come: said when they stop
                patch = moved
            if patch.keys() <= st.COUNTS and status.starting and self._hold_counts(key):
                continue  # its counts still climb: a later cycle writes them, nearer their end
            self._counts_held.pop(key, None)
            if self._groups_sent.claim(key, st.patch_substance(patch)):
                wanted = (status, raw, created.get(key), key in arriving)
                if self._groups_wanted.want(key, wanted) and not self._context.workers.spawn_status(
                    f"status of {key}", self._write_wanted_podgroup, key
                ):
                    self._groups_wanted.forget(key)
        self._groups_matched = still
        self._groups_sent.prune(podgroups.keys())
        held = self._counts_held
        if len(held) > 2 * len(podgroups) + 64:  # PodGroups gone since: forgotten now and then
            self._counts_held = {k: t for k, t in held.items() if k in podgroups}

    def _hold_counts(self, key: str) -> bool:
        """Whether a change of PodGroup `key`'s counts alone still waits: less than `COUNT_HOLD`
        seconds since a cycle first held it back (this one, if none did)."""
        now = self._context.clock.monotonic()
        return now - self._counts_held.setdefault(key, now) < COUNT_HOLD

    def _write_wanted_podgroup(self, key: str) -> None:
        """The newest status wanted for PodGroup `key`, patched against the PodGroup as it is
        now (a status queued behind a newer one for the same PodGroup is never sent)."""
        while (wanted := self._groups_wanted.take(key)) is not None:
            status, raw, born, arriving = wanted
            now = self._context.cache.podgroup_raw(key)
            held = None if now is None else st.object_ref("PodGroup", now)
            made_for = st.object_ref("PodGroup", raw)
            if now is not None and held and made_for and held.uid == made_for.uid:
                raw = now  # the same PodGroup as watched since (a replaced one is not written)
            patch = st.podgroup_status_patch(status, raw)
            if arriving:  # only its phase move, if it still moves (else written since wanted)
                patch = _phase_move(patch) or {}
            if not patch:
                self._groups_sent.discard(key)
                continue
            self._groups_sent.note(key, st.patch_substance(patch))
            events = st.podgroup_events(status, raw, patch)
            self._write_podgroup(key, raw, patch, events, born)

    def _write_podgroup(
        self,
        key: str,
        raw: st.Raw,
        patch: Mapping[str, object],
        events: list[st.Event],
        created: dt.datetime | None = None,
    ) -> None:
        ref = st.object_ref("PodGroup", raw)
        if ref is None or self._context.workers.skipped_in_shutdown():
            return
        what = f"patch the status of PodGroup {key}"
        try:
            self._context.workers.call(
                what,
                lambda: self._context.writer.patch_podgroup_status(ref.namespace, ref.name, patch),
                check=lambda: self._podgroup_problem(key, ref.uid),
            )
        except NotSentError as err:
            self._groups_sent.release(key, st.patch_substance(patch))
            self._context.outcomes.outcome("podgroup_status", "dropped")
            logger.info("%s not sent: %s", what, err)
            return
        except NotFoundError as err:  # gone: the watch will drop it
            self._groups_sent.release(key, st.patch_substance(patch))
            self._context.outcomes.outcome("podgroup_status", "conflict")
            logger.info("%s dropped: the PodGroup is gone (%s)", what, err)
            return
        except Exception as err:
            self._groups_sent.release(key, st.patch_substance(patch))
            self._context.outcomes.outcome("podgroup_status", "error")
            log_failure(f"{what} failed: %s", err)
            return
        self._context.outcomes.outcome("podgroup_status", "success")
        if patch.get("phase") == PodGroupPhase.RUNNING.value:
            self._context.outcomes.since("job", created)
        for type_, reason, message in events:
            if (type_, reason) == ("Normal", "Scheduled"):  # goes with the pods' Scheduled ones
                self._context.events.queue_scheduled(ref, message, f"event Scheduled on {key}")
            else:
                self._context.events.send(ref, type_, reason, message)

    def _podgroup_problem(self, key: str, uid: str) -> str | None:
        """Why writing the status of PodGroup `key` (as `uid`) no longer holds: it is gone or
        was replaced."""
        raw = self._context.cache.podgroup_raw(key)
        held = st.object_ref("PodGroup", raw) if raw is not None else None
        if held is None or held.uid != uid:
            return f"PodGroup {key} (uid {uid}) is gone or was replaced"
        return None


def _phase_move(patch: Mapping[str, object]) -> dict[str, object] | None:
    """What of a PodGroup status patch is written while its gang still arrives: the move of its
    phase, without the conditions (they wait with its members' messages); None when the phase
    does not move."""
    if "phase" not in patch:
        return None
    return {k: v for k, v in patch.items() if k != "conditions"}
