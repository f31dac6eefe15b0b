"""Fakes of the cluster writer port (`vscheduler.effects.ports.ClusterWriter`) for tests.

A test's fake subclasses one and overrides only the writes the test expects, so a new write
method on the port is added here once:

    class EventWriter(RefusingWriter):
        def record_event(self, ref, type_, reason, message) -> None:
            self.events.append(reason)

`RefusingWriter` fails every write it is handed; `RecordingWriter` records the pod, PodGroup,
Queue and Event writes as readable lines; `ScriptedWriter` records the writes as tuples and
fails or holds them on a test's word. Behaviour only one test needs stays in that test's fake.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Literal, NoReturn

from vscheduler.effects.ports import ObjectRef
from vscheduler.testing.executors import WAIT


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


class ScriptedWriter(RefusingWriter):
    """Records each write it accepts as one tuple `(method, *arguments)` in `calls`, in order
    (the executor's workers write at once). `fail(method, *errors)` scripts the errors of the
    next calls of `method`; `hold(method)` makes them wait, setting `entered`, until
    `release(method)` (or `WAIT` seconds). Accepts the volume writes, recorded as
    `("selected node", "ns/claim", node, version)` and
    `("claim ref", volume, "ns/claim", uid, version)`; a subclass accepts the other writes its
    test expects by calling `record(method, *arguments)`, in the words that test reads."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []
        self._lock = threading.Lock()
        self._script: dict[str, list[Exception]] = {}
        self._gates: dict[str, threading.Event] = {}
        self.entered = threading.Event()

    def fail(self, method: str, *errors: Exception) -> None:
        self._script.setdefault(method, []).extend(errors)

    def hold(self, method: str) -> None:
        self._gates[method] = threading.Event()

    def release(self, method: str) -> None:
        self._gates.pop(method).set()

    def of(self, method: str) -> list[tuple[object, ...]]:
        """The arguments of each call of `method` so far."""
        with self._lock:
            return [c[1:] for c in self.calls if c[0] == method]

    def record(self, method: str, *args: object) -> None:
        """Records the call, then waits if `method` is held and raises its scripted error."""
        with self._lock:
            self.calls.append((method, *args))
            script = self._script.get(method)
            error = script.pop(0) if script else None
        gate = self._gates.get(method)
        if gate is not None:
            self.entered.set()
            gate.wait(WAIT)
        if error is not None:
            raise error

    def set_claim_selected_node(
        self, namespace: str, name: str, node: str, resource_version: str
    ) -> None:
        self.record("selected node", f"{namespace}/{name}", node, resource_version)

    def set_volume_claim_ref(
        self, volume: str, namespace: str, name: str, uid: str, resource_version: str
    ) -> None:
        self.record("claim ref", volume, f"{namespace}/{name}", uid, resource_version)
