"""ConfigMapWatches: the ConfigMaps the policy's plugins read, watched into the cache.

A plugin factory that reads ConfigMaps from the snapshot declares them in its `needs`
(`Needs.config_maps`: (namespace, name) pairs, collected in `Pipeline.config_maps`; the
reservation plugin's arguments name its ConfigMap). Each policy
that comes into force is asked again: an informer starts for every ConfigMap newly named (by
name, in its namespace only, so the scheduler needs read access to that ConfigMap alone) and
stops for every one no longer named, whose object then leaves the cache. A new informer joins the
sync gate, so no cycle runs on a policy whose ConfigMaps have not been listed yet.

Owns: that bookkeeping, thread-safe (a policy can come into force from the policy informer's
thread or the loop's).
Must not: build informers itself (the composition root hands a `start` function in), or read
the ConfigMaps (the cache and the plugins do).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from vscheduler.framework.registry import Pipeline
from vscheduler.informer.kinds import Kind, config_map

logger = logging.getLogger(__name__)

ConfigMapId = tuple[str, str]
"""(namespace, name)."""


class Running(Protocol):
    """A started informer, as far as this module needs it."""

    def stop(self, timeout: float = 1.0) -> bool:
        """Stop it; True when its thread ended."""
        ...


def config_maps_read(pipeline: Pipeline) -> tuple[ConfigMapId, ...]:
    """Every ConfigMap a plugin of `pipeline` reads, sorted, once each (`Needs.config_maps`)."""
    return pipeline.config_maps


class ConfigMapWatches:
    """One informer per ConfigMap the policy in force reads."""

    def __init__(self, *, start: Callable[[Kind], Running], forget: Callable[[Kind], None]) -> None:
        """`start(kind)` builds, registers on the sync gate and starts an informer of `kind`;
        `forget(kind)` drops what a stopped informer of `kind` left (the cache's objects, its
        place on the sync gate)."""
        self._start = start
        self._forget = forget
        self._lock = threading.Lock()
        self._wanted: tuple[ConfigMapId, ...] = ()
        self._running: dict[ConfigMapId, Running] = {}
        self._started = False

    @property
    def watched(self) -> tuple[ConfigMapId, ...]:
        """The ConfigMaps the policy in force reads."""
        with self._lock:
            return self._wanted

    def follow(self, pipeline: Pipeline) -> None:
        """Watch the ConfigMaps `pipeline` reads (from now if started, else from `start`)."""
        with self._lock:
            self._wanted = config_maps_read(pipeline)
            if self._started:
                self._reconcile()

    def start(self) -> None:
        """Start watching."""
        with self._lock:
            self._started = True
            self._reconcile()

    def stop(self) -> None:
        """Stop every informer (shutdown)."""
        with self._lock:
            self._started = False
            running, self._running = self._running, {}
        for informer in running.values():
            informer.stop()

    def _reconcile(self) -> None:
        for gone in [cm for cm in self._running if cm not in self._wanted]:
            kind = config_map(*gone)
            self._running.pop(gone).stop()
            self._forget(kind)
            logger.info("stopped watching ConfigMap %s/%s", *gone)
        for new in [cm for cm in self._wanted if cm not in self._running]:
            self._running[new] = self._start(config_map(*new))
            logger.info("watching ConfigMap %s/%s (read by the policy's plugins)", *new)
