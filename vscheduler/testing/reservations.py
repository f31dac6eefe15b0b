"""Reservations for tests: a fluent builder of a `ReservationBook`, and the raw ConfigMap.

    snapshot(
        node("n1"),
        reservations().reserve("train-0", node="n1", pod="team/train-0", until=60, cpu="2").build(),
    )

`until` is seconds after the builders' epoch (`builders.at`). The ConfigMap defaults to the
reservation plugin's default namespace and name.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any

from vscheduler.model.reservation import Reservation, ReservationBook
from vscheduler.plugins.reservation import DEFAULT_NAME, DEFAULT_NAMESPACE
from vscheduler.testing.builders import at, res


class ReservationsBuilder:
    """Builds the `ReservationBook` of one reservation ConfigMap."""

    def __init__(self, name: str, namespace: str) -> None:
        self._book = ReservationBook(namespace=namespace, name=name)

    def reserve(
        self, key: str, *, node: str, pod: str, until: float, **amounts: str | int
    ) -> ReservationsBuilder:
        """One reservation under data key `key`, holding `amounts` (`cpu="2"`, ...)."""
        entry = Reservation(
            key=key, node=node, pod=pod, resources=res(**amounts), expires_at=at(until)
        )
        entries = tuple(sorted((*self._book.entries, entry), key=lambda e: e.key))
        self._book = dataclasses.replace(self._book, entries=entries)
        return self

    def build(self) -> ReservationBook:
        """The book."""
        return self._book


def reservations(
    name: str = DEFAULT_NAME, namespace: str = DEFAULT_NAMESPACE
) -> ReservationsBuilder:
    """An empty reservation ConfigMap (the plugin's default one unless named)."""
    return ReservationsBuilder(name, namespace)


def entry(node: str, pod: str, expires_at: dt.datetime | str, **resources: str) -> str:
    """One ConfigMap value: the JSON of a reservation."""
    when = expires_at if isinstance(expires_at, str) else expires_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    body = {"node": node, "pod": pod, "resources": resources, "expiresAt": when}
    return json.dumps(body, sort_keys=True)


def config_map(
    data: dict[str, str],
    *,
    name: str = DEFAULT_NAME,
    namespace: str = DEFAULT_NAMESPACE,
    resource_version: str = "",
) -> dict[str, Any]:
    """A raw `v1` ConfigMap holding `data` (values made with `entry`)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if resource_version:
        meta["resourceVersion"] = resource_version
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": dict(data)}
