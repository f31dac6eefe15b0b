"""The executor's reservation releases: the keys of released reservations removed from their
ConfigMap.

Owns: one patch per ConfigMap removing the keys released and not already being removed, through
the optional `config_maps` writer; not repeated while the watch still shows a key, unless
`resend_after` passed (after a failure, too); a release not sent (a step-down) asked again as
soon as this replica leads.
Must not: decide what is released (the cycle does), retry but through the workers' `call`, or
raise out of a worker.
"""

from __future__ import annotations

import logging

from vscheduler.effects.context import EffectsContext
from vscheduler.effects.outcomes import log_failure
from vscheduler.effects.ports import ConfigMapWriter
from vscheduler.effects.sent import SentLog
from vscheduler.errors import NotFoundError, NotSentError
from vscheduler.model.commands import ReservationRelease

# the executor's one logger, whichever of its modules writes the line
logger = logging.getLogger("vscheduler.effects.executor")


class ReservationReleaser:
    """Removes released reservations' keys through `config_maps`, on the status workers."""

    def __init__(self, context: EffectsContext, *, config_maps: ConfigMapWriter | None) -> None:
        self._context = context
        self._config_maps = config_maps
        self._released_sent = SentLog(context.clock, context.resend_after)

    def release(self, releases: tuple[ReservationRelease, ...]) -> None:
        """One patch per ConfigMap removing the keys released and not already being removed."""
        wanted = [f"{r.config_map}/{r.key}" for r in releases]
        self._released_sent.prune(wanted)
        if self._config_maps is None:
            return
        keys: dict[str, list[str]] = {}
        for release, sent in zip(releases, wanted, strict=True):
            if self._released_sent.claim(sent, True):
                keys.setdefault(release.config_map, []).append(release.key)
        for config_map, removed in sorted(keys.items()):
            self._context.workers.spawn_status(
                f"release in {config_map}", self._write_release, config_map, removed
            )

    def _write_release(self, config_map: str, keys: list[str]) -> None:
        writer = self._config_maps
        assert writer is not None
        if self._context.workers.skipped_in_shutdown():
            return
        namespace, _, name = config_map.partition("/")
        what = f"remove reservations {', '.join(keys)} from ConfigMap {config_map}"
        outcome = "success"
        try:
            self._context.workers.call(
                what, lambda: writer.remove_config_map_keys(namespace, name, keys)
            )
        except NotFoundError:
            logger.info("%s: the ConfigMap is gone", what)
        except NotSentError:
            outcome = "dropped"
            for key in keys:  # not sent: asked again as soon as this replica leads
                self._released_sent.release(f"{config_map}/{key}", True)
        except Exception as err:
            outcome = "error"  # asked again after RESEND_AFTER, while the watch shows the keys
            log_failure(f"{what} failed: %s", err)
        else:
            logger.info("%s: done", what)
        self._context.outcomes.outcome("reservation_release", outcome)
