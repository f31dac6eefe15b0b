"""The executor's evictions: each sent alone, or the evictions of one plan all or none.

Owns: queueing the evictions of a submit (a plan, `Evict.plan`, as one call), a plan's dry runs
and its count against the PodDisruptionBudgets the cache holds (two victims of a budget allowing
one pass their dry runs alone; one refusal sends none of the plan), each eviction's send and
outcome (a disruption budget's refusal backs the pod off as a victim, honouring the API
server's Retry-After, with one Warning `EvictionBlocked` per refusal, never retried within the
cycle; success a Normal `Evicted`), and the log of the refusals told (`expire`d each submit).
Must not: assume the evictions in the cache (the executor does, before queueing), retry but through
the workers' `call`, or raise out of a worker.
"""

from __future__ import annotations

import logging

from vscheduler.effects import status as st
from vscheduler.effects.context import EffectsContext
from vscheduler.effects.outcomes import log_failure
from vscheduler.effects.sent import SentLog
from vscheduler.errors import ConflictError, DisruptionBudgetError, NotFoundError, NotSentError
from vscheduler.model.commands import Evict

# the executor's one logger, whichever of its modules writes the line
logger = logging.getLogger("vscheduler.effects.executor")


class Evictor:
    """Sends the evictions of a cycle through the context's writer, on the bind workers."""

    def __init__(self, context: EffectsContext) -> None:
        self._context = context
        self._blocked_sent = SentLog(context.clock, context.resend_after)
        """The `EvictionBlocked` Events told, per pod: one per refusal, not one per cycle."""

    def expire(self) -> None:
        """Forget the refusals told longer than `resend_after` ago."""
        self._blocked_sent.expire()

    def submit(self, evictions: tuple[Evict, ...]) -> None:
        plans: dict[str, list[Evict]] = {}
        for evict in evictions:
            plans.setdefault(evict.plan or f"pod {evict.task_uid}", []).append(evict)
        for plan in plans.values():
            if len(plan) == 1:
                queued = self._context.workers.spawn(f"evict {plan[0].pod}", self._evict, plan[0])
            else:
                queued = self._context.workers.spawn(
                    f"evictions of {plan[0].plan}", self._evict_plan, plan
                )
            if not queued:
                for evict in plan:
                    self._context.cache.forget_evict(evict.task_uid)

    def _evict_plan(self, plan: list[Evict]) -> None:
        """The evictions of one plan, all or none: every victim is first asked for by a dry
        run, then the victims are counted against their PodDisruptionBudgets together (a dry
        run asks about one eviction alone); when one is refused none is evicted (the refused
        ones back off, the others are shown running again) and the next cycle plans anew."""
        refused = [(evict, err) for evict in plan if (err := self._dry_run(evict)) is not None]
        if not refused:
            refused = self._beyond_budgets(plan)
        if not refused:
            for evict in plan:
                if not self._context.workers.spawn(f"evict {evict.pod}", self._evict, evict):
                    self._context.cache.forget_evict(evict.task_uid)
            return
        blocked = {evict.task_uid for evict, _ in refused}
        for evict, err in refused:
            self._blocked(evict, err)
        kept = [evict for evict in plan if evict.task_uid not in blocked]
        for evict in kept:  # not sent: shown running again, without waking the loop
            self._context.cache.forget_evict(evict.task_uid, wake=False)
            self._context.outcomes.evicted(evict, "dropped")
        logger.info(
            "%s: %d of %d evictions refused by a disruption budget (%s): none sent",
            plan[0].plan,
            len(refused),
            len(plan),
            ", ".join(evict.pod for evict, _ in refused),
        )

    def _beyond_budgets(self, plan: list[Evict]) -> list[tuple[Evict, DisruptionBudgetError]]:
        """The victims of `plan` whose budgets, as the cache last saw them, do not allow them
        together with the plan's earlier victims, each with the refusal to report."""
        beyond = self._context.cache.beyond_budgets([evict.task_uid for evict in plan])
        return [
            (
                evict,
                DisruptionBudgetError(
                    f"{beyond[evict.task_uid]} does not allow this plan's evictions together"
                    " (each alone passed its dry run): not sent"
                ),
            )
            for evict in plan
            if evict.task_uid in beyond
        ]

    def _dry_run(self, evict: Evict) -> DisruptionBudgetError | None:
        """The refusal a dry run of `evict` met, or None (allowed, or failed otherwise: the
        eviction itself then finds out)."""
        ref = st.pod_ref(evict.pod, evict.task_uid)
        what = f"dry-run evict {evict.pod}"
        try:
            self._context.workers.call(
                what,
                lambda: self._context.writer.evict(ref.namespace, ref.name, ref.uid, dry_run=True),
            )
        except DisruptionBudgetError as err:
            return err
        except Exception as err:
            logger.debug("%s: %s", what, err)
        return None

    def _evict(self, evict: Evict) -> None:
        ref = st.pod_ref(evict.pod, evict.task_uid)
        what = f"evict {evict.pod} ({evict.reason})"
        try:
            self._context.workers.call(
                what,
                lambda: self._context.writer.evict(ref.namespace, ref.name, ref.uid),
                check=lambda: self._context.cache.evict_problem(ref.uid),
            )
        except NotSentError as err:
            self._context.cache.forget_evict(evict.task_uid)
            self._context.outcomes.evicted(evict, "dropped")
            logger.info("%s not sent: %s", what, err)
            return
        except DisruptionBudgetError as err:
            self._blocked(evict, err)
            return
        except (ConflictError, NotFoundError) as err:
            self._context.cache.forget_evict(evict.task_uid)
            self._context.outcomes.evicted(evict, "conflict")
            logger.info("%s dropped: %s", what, err)
            return
        except Exception as err:
            self._context.cache.forget_evict(evict.task_uid)
            self._context.outcomes.evicted(evict, "error")
            log_failure(f"{what} failed: %s", err)
            return
        self._context.outcomes.evicted(evict, "success")
        logger.info("evicted %s: %s", evict.pod, evict.reason)
        self._context.events.send(
            ref, "Normal", "Evicted", f"Pod is evicted, because of {evict.reason}"
        )

    def _blocked(self, evict: Evict, err: DisruptionBudgetError) -> None:
        """A disruption budget refused `evict`: the pod backs off as a victim; an Event."""
        wait = self._context.cache.refuse_evict(evict.task_uid, err.retry_after)
        self._context.outcomes.evicted(evict, "blocked")
        logger.info(
            "evict %s (%s) refused by a disruption budget (not a victim for %.0fs): %s",
            evict.pod,
            evict.reason,
            wait,
            err,
        )
        message = f"Eviction ({evict.reason}) refused by a PodDisruptionBudget: {err}"
        if self._blocked_sent.claim(evict.pod, message):  # one Event per refusal, not per cycle
            ref = st.pod_ref(evict.pod, evict.task_uid)
            self._context.events.send(ref, "Warning", "EvictionBlocked", message)
