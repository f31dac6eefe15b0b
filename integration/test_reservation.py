"""Reservations on a real API server: a reservation ConfigMap keeps a pod off a node until the
reserved pod lands there (and its key leaves the ConfigMap) or the reservation expires."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from integration import harness

TIMEOUT = 60.0
CONFIG_MAP = "/api/v1/namespaces/test/configmaps/holds"


def policy(namespace: str) -> str:
    return f"""\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: reservation
    arguments:
      configMapNamespace: {namespace}
      configMapName: holds
"""


def holds(namespace: str, pod: str, *, cpu: str, seconds: float) -> dict[str, Any]:
    """The ConfigMap `test/holds`: `cpu` of node-0 reserved for `pod` for `seconds`, and an
    entry that does not read."""
    until = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)
    value = {
        "node": "node-0",
        "pod": f"{namespace}/{pod}",
        "resources": {"cpu": cpu},
        "expiresAt": until.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "holds", "namespace": "test"},
        "data": {pod: json.dumps(value), "typo": '{"node": "node-0"}'},
    }


def start(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    tmp_path: Path,
    *,
    seconds: float,
) -> harness.Scheduler:
    """One 4-CPU node, 3 CPU of it reserved for `test/reserved`, and the scheduler."""
    namespace = harness.namespace_of(cluster)
    cluster.add_node("node-0", cpu="4", memory="8Gi")
    harness.create(cluster, holds(namespace, "reserved", cpu="3", seconds=seconds))
    path = tmp_path / "policy.yaml"
    path.write_text(policy(namespace))
    scheduler = start_scheduler(args=[f"--policy-file={path}"])
    scheduler.wait_ready()
    return scheduler


def kept_off(cluster: harness.ScopedCluster, name: str) -> str | None:
    """The pod's pending message when it names the reservation."""
    found = [p for p in harness.pods(cluster, "test") if p["metadata"]["name"] == name]
    cond = harness.condition(found[0], "PodScheduled") if found else None
    message = str(cond.get("message", "")) if cond else ""
    return message if "reserved for other pods" in message else None


def keys(cluster: harness.ScopedCluster) -> list[str]:
    return sorted(cluster.request("GET", CONFIG_MAP).get("data") or {})


def invalid_entry_events(cluster: harness.ScopedCluster) -> list[str]:
    return [
        e["message"]
        for e in harness.events(cluster, "test")
        if e.get("reason") == "InvalidObject" and e["involvedObject"]["kind"] == "ConfigMap"
    ]


def test_a_reservation_keeps_a_pod_off_until_its_own_pod_lands_and_its_key_goes(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    tmp_path: Path,
) -> None:
    scheduler = start(cluster, start_scheduler, tmp_path, seconds=3600)
    namespace = harness.namespace_of(cluster)

    harness.create(cluster, harness.pod("other", "test", cpu="2"))
    message = cluster.wait_for("other kept off", lambda: kept_off(cluster, "other"), TIMEOUT)
    assert "cpu 4 free, 3 reserved, 2 requested" in message, message
    assert f"for {namespace}/reserved until" in message, message
    assert harness.bound(cluster, "test") == {}, scheduler.log()

    harness.create(cluster, harness.pod("reserved", "test", cpu="3"))
    cluster.wait_for(
        "reserved bound", lambda: harness.bound(cluster, "test").get("reserved"), TIMEOUT
    )
    assert harness.bound(cluster, "test") == {"reserved": "node-0"}, scheduler.log()
    cluster.wait_for("its key removed", lambda: keys(cluster) == ["typo"], TIMEOUT)
    assert "other" not in harness.bound(cluster, "test")  # 1 CPU left: it does not fit
    assert invalid_entry_events(cluster) == [
        f"ConfigMap {namespace}/holds: data.typo.pod: is required"
    ]
    assert scheduler.stop() == 0


def test_a_reservation_keeps_a_pod_off_until_it_expires(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    tmp_path: Path,
) -> None:
    scheduler = start(cluster, start_scheduler, tmp_path, seconds=8)

    harness.create(cluster, harness.pod("other", "test", cpu="2"))
    cluster.wait_for("other kept off", lambda: kept_off(cluster, "other"), TIMEOUT)
    assert harness.bound(cluster, "test") == {}, scheduler.log()

    # Nothing else changes in the cluster: the expiry alone must bring a cycle.
    cluster.wait_for(
        "other bound after the expiry",
        lambda: harness.bound(cluster, "test").get("other"),
        TIMEOUT,
    )
    assert harness.bound(cluster, "test") == {"other": "node-0"}
    cluster.wait_for("the expired key removed", lambda: keys(cluster) == ["typo"], TIMEOUT)
    assert scheduler.stop() == 0
