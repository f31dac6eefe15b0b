"""The executor's writes to pods' status: the PodScheduled=False condition of those left
pending, and `status.nominatedNodeName`.

Owns: the condition of each pod left pending or pipelined (`CycleResult.unschedulable`,
`waiting`; not of a gang still arriving), written only when it differs from the watched pod and
is not already in flight, with a Warning `FailedScheduling`, one queued write per pod, the
newest (`sent.Newest`), checked before it is sent (the pod still unplaced, as its uid); and each
nomination (`CycleResult.nominated` set where the watched pod shows another node, cleared on
every pod of the snapshot carrying one no longer nominated), through the optional
`nominations` writer, not repeated while in flight.
Must not: write anything but a pod's status, retry but through the workers' `call`, or raise
out of a worker.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Set as AbstractSet

from vscheduler.effects import status as st
from vscheduler.effects.context import EffectsContext
from vscheduler.effects.outcomes import log_failure
from vscheduler.effects.ports import NominationWriter
from vscheduler.effects.sent import Newest, SentLog
from vscheduler.errors import NotFoundError, NotSentError
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import CycleResult

# the executor's one logger, whichever of its modules writes the line
logger = logging.getLogger("vscheduler.effects.executor")


class PodStatusWriter:
    """Writes pods' PodScheduled conditions and nominations, on the status workers."""

    def __init__(self, context: EffectsContext, *, nominations: NominationWriter | None) -> None:
        self._context = context
        self._nominations = nominations
        self._pods_sent = SentLog(context.clock, context.resend_after)
        self._conditions_wanted: Newest[tuple[st.Raw, Mapping[str, str]]] = Newest()
        """Per pod key, the newest PodScheduled condition wanted, with the pod it was made
        against (see `Newest`)."""
        self._nominated_sent = SentLog(context.clock, context.resend_after)

    # --- pod conditions -----------------------------------------------------------------------
    def update_conditions(
        self, unschedulable: Mapping[str, str], arriving: AbstractSet[str] = frozenset()
    ) -> None:
        """PodScheduled=False on each pod left pending (`unschedulable`: those without a node
        and those pipelined on one, each with its message), but those of a gang still arriving
        (`CycleResult.arriving`: written once it stops growing)."""
        now = self._context.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        for key, message in unschedulable.items():
            if key in arriving:
                continue
            raw = self._context.cache.object_raw("Pod", key)
            if raw is None:
                continue
            condition = st.pod_scheduled_condition(message, raw, now)
            if condition is None:
                self._pods_sent.discard(key)
            elif self._pods_sent.claim(key, st.cause(message)) and self._conditions_wanted.want(
                key, (raw, condition)
            ):
                what = f"condition of {key}"
                if not self._context.workers.spawn_status(what, self._write_wanted_condition, key):
                    self._conditions_wanted.forget(key)
        self._pods_sent.prune(unschedulable.keys())

    def _write_wanted_condition(self, key: str) -> None:
        """The newest PodScheduled condition wanted for pod `key` (one queued behind a newer
        one for the same pod is never sent)."""
        while (wanted := self._conditions_wanted.take(key)) is not None:
            self.write_condition(key, *wanted)

    def write_condition(self, key: str, raw: st.Raw, condition: Mapping[str, str]) -> None:
        ref = st.object_ref("Pod", raw)
        if ref is None or self._context.workers.skipped_in_shutdown():
            return
        what = f"set PodScheduled=False on {key}"
        problem = self._context.cache.condition_problem(key, ref.uid)
        if problem:  # the common race (a gang's member bound meanwhile): no request is made
            self._pods_sent.release(key, st.cause(condition["message"]))
            self._context.outcomes.outcome("pod_condition", "dropped")
            logger.debug("%s not sent: %s", what, problem)
            return
        try:
            self._context.workers.call(
                what,
                lambda: self._context.writer.set_pod_condition(ref.namespace, ref.name, condition),
                check=lambda: self._context.cache.condition_problem(key, ref.uid),
            )
        except NotSentError as err:
            self._pods_sent.release(key, st.cause(condition["message"]))
            self._context.outcomes.outcome("pod_condition", "dropped")
            logger.info("%s not sent: %s", what, err)
            return
        except Exception as err:
            self._pods_sent.release(key, st.cause(condition["message"]))
            self._context.outcomes.outcome("pod_condition", "error")
            log_failure(f"{what} failed: %s", err)
            return
        self._context.outcomes.outcome("pod_condition", "success")
        self._context.events.send(ref, "Warning", "FailedScheduling", condition["message"])

    # --- nominations --------------------------------------------------------------------------
    def update_nominations(self, result: CycleResult, snapshot: ClusterSnapshot) -> None:
        """Write `status.nominatedNodeName` where `result.nominated` wants another node than
        the watched pod shows, and clear it on every other pod of the snapshot carrying one
        (bound, no longer nominated)."""
        if self._nominations is None:
            return
        wanted: dict[str, str | None] = dict(result.nominated)
        for task in snapshot.tasks.values():
            if task.nominated_node is not None and task.key not in wanted:
                wanted[task.key] = None
        for key, node in wanted.items():
            raw = self._context.cache.object_raw("Pod", key)
            if raw is None:
                continue
            if st.nominated_node(raw) == node:
                self._nominated_sent.discard(key)
            elif self._nominated_sent.claim(key, node):
                self._context.workers.spawn_status(
                    f"status nominatedNodeName of {key}", self._write_nomination, key, raw, node
                )
        self._nominated_sent.prune(wanted.keys())

    def _write_nomination(self, key: str, raw: st.Raw, node: str | None) -> None:
        writer = self._nominations
        assert writer is not None
        ref = st.object_ref("Pod", raw)
        if ref is None or self._context.workers.skipped_in_shutdown():
            return
        what = (
            f"set nominatedNodeName {node} on {key}"
            if node
            else f"clear nominatedNodeName on {key}"
        )
        outcome = "success"
        try:
            self._context.workers.call(
                what,
                lambda: writer.set_nominated_node(ref.namespace, ref.name, node),
                check=lambda: self._context.cache.pod_problem(key, ref.uid),
            )
        except NotSentError as err:
            self._nominated_sent.release(key, node)
            outcome = "dropped"
            logger.info("%s not sent: %s", what, err)
        except NotFoundError:
            outcome = "dropped"  # the pod is gone: nothing to nominate
        except Exception as err:
            self._nominated_sent.release(key, node)
            outcome = "error"
            log_failure(f"{what} failed: %s", err)
        self._context.outcomes.outcome("pod_nomination", outcome)
