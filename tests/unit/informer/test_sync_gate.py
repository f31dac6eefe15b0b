from __future__ import annotations

import threading

import pytest

from vscheduler.informer.kinds import NODE, POD, QUEUE, config_map
from vscheduler.informer.readiness import SyncGate


def test_a_gate_with_nothing_registered_is_synced() -> None:
    assert SyncGate().is_synced()
    assert SyncGate().wait(0)


def test_the_gate_stays_closed_until_every_registered_kind_has_synced() -> None:
    gate = SyncGate()
    for kind in (POD, NODE, config_map("ns", "policy")):
        gate.register(kind)
    gate.mark_synced(POD)
    gate.mark_synced(NODE)
    assert not gate.is_synced()
    assert gate.pending() == ("ConfigMap",)
    gate.mark_synced(config_map("ns", "policy"))
    assert gate.is_synced()


def test_registering_a_kind_that_already_synced_keeps_the_gate_open() -> None:
    gate = SyncGate()
    gate.register(POD)
    gate.mark_synced(POD)
    gate.register(POD)
    assert gate.is_synced()


def test_wait_times_out_while_a_kind_is_pending() -> None:
    gate = SyncGate()
    gate.register(QUEUE)
    assert gate.wait(0.01) is False


@pytest.mark.timeout(10)
def test_wait_wakes_when_the_last_kind_syncs() -> None:
    gate = SyncGate()
    gate.register(POD)
    waiting = threading.Event()
    results: list[bool] = []

    def waiter() -> None:
        waiting.set()
        results.append(gate.wait(5))

    thread = threading.Thread(target=waiter)
    thread.start()
    assert waiting.wait(5)
    gate.mark_synced(POD)
    thread.join(5)
    assert results == [True]
