"""Fakes of the cluster writer port (`vscheduler.effects.ports.ClusterWriter`) for tests.

A test's fake subclasses one and overrides only the writes the test expects, so a new write
method on the port is added here once:

    class EventWriter(RefusingWriter):
        def record_event(self, ref, type_, reason, message) -> None:
            self.events.append(reason)

`RefusingWriter` fails every write it is handed; `RecordingWriter` records the pod, PodGroup,
Queue and Event writes as readable lines. Scripted failures, gates and other behaviour of
one test stay in that test's fake.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NoReturn

from vscheduler.effects.ports import ObjectRef


def _refuse(what: str) -> NoReturn:
    raise AssertionError(f"no {what} expected")


class RefusingWriter:
    """A `ClusterWriter` none of whose writes is expected: each raises AssertionError."""

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        _refuse("bind")

    def evict(self, namespace: str, name: str, uid: str, *, dry_run: bool = False) -> None:
        _refuse("eviction")

    def set_pod_condition(self, namespace: str, name: str, condition: Mapping[str, str]) -> None:
        _refuse("condition")

    def patch_podgroup_status(
        self, namespace: str, name: str, status: Mapping[str, object]
    ) -> None:
        _refuse("PodGroup status")

    def set_claim_selected_node(
        self, namespace: str, name: str, node: str, resource_version: str
    ) -> None:
        _refuse("volume write")

    def set_volume_claim_ref(
        self, volume: str, namespace: str, name: str, uid: str, resource_version: str
    ) -> None:
        _refuse("volume write")

    def patch_queue_status(self, name: str, status: Mapping[str, object]) -> None:
        _refuse("queue status")

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        _refuse("event")


class RecordingWriter(RefusingWriter):
    """Accepts the pod, PodGroup, Queue and Event writes, appending each to `calls` as one line:
    `bind ns/name node`, `evict ns/name`, `condition ns/name`, `status ns/name Phase`,
    `queue status name {...}`, `event Reason`. Volume writes stay refused."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        self.calls.append(f"bind {namespace}/{name} {node}")

    def evict(self, namespace: str, name: str, uid: str, *, dry_run: bool = False) -> None:
        self.calls.append(f"evict {namespace}/{name}")

    def set_pod_condition(self, namespace: str, name: str, condition: Mapping[str, str]) -> None:
        self.calls.append(f"condition {namespace}/{name}")

    def patch_podgroup_status(
        self, namespace: str, name: str, status: Mapping[str, object]
    ) -> None:
        self.calls.append(f"status {namespace}/{name} {status.get('phase')}")

    def patch_queue_status(self, name: str, status: Mapping[str, object]) -> None:
        self.calls.append(f"queue status {name} {dict(status)}")

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        self.calls.append(f"event {reason}")
