"""What an informer needs from the cluster (a Lister) and gives to its consumer (a Sink).

`vscheduler.kube.lister.KubeLister` implements Lister against the API server; tests use a
scripted one. Objects travel as raw JSON mappings: conversion happens in the cache.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Literal, Protocol

from vscheduler.informer.kinds import Kind

Raw = Mapping[str, object]
EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]


@dataclasses.dataclass(frozen=True, slots=True)
class WatchEvent:
    """One event of a watch stream (a BOOKMARK carries only a resourceVersion)."""

    type: EventType
    obj: Raw


@dataclasses.dataclass(frozen=True, slots=True)
class Listing:
    """A full list and the resourceVersion to watch from. `items` may be read as it arrives
    from the API server (iterate it once; a failure on the way raises `ClusterError` from the
    iteration)."""

    items: Iterable[Raw]
    resource_version: str


class Lister(Protocol):
    """List and watch one kind."""

    def list(self, kind: Kind, *, resource_version: str = "") -> Listing:
        """Every object of `kind` (paginated by the implementation). `resource_version` "0":
        any state the server holds (its watch cache: client-go's first list); "": the latest
        (a consistent read, after a 410)."""
        ...

    def watch(
        self, kind: Kind, resource_version: str, *, timeout_seconds: int, stop: threading.Event
    ) -> Iterator[WatchEvent]:
        """Events after `resource_version`, with bookmarks, until the server closes the stream,
        `timeout_seconds` pass or `stop` is set. Raises `errors.ExpiredError` on 410 Gone and
        another `errors.ClusterError` on failure."""
        ...


class Sink(Protocol):
    """Where an informer delivers (the scheduler cache, the policy holder)."""

    def replace(self, kind: Kind, items: Iterable[Raw]) -> None:
        """A fresh full list of `kind`: everything not in it is gone. `items` is iterated once;
        should it raise, nothing of the list takes effect."""
        ...

    def apply(self, kind: Kind, event: WatchEvent) -> None:
        """One ADDED / MODIFIED / DELETED event (never a BOOKMARK)."""
        ...
