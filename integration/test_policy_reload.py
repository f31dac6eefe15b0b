"""The policy ConfigMap is watched: a valid change takes effect, an invalid one is rejected with
a Warning Event on the ConfigMap and the policy in force stays."""

from __future__ import annotations

import time
from collections.abc import Callable

from integration import harness

TIMEOUT = 60.0
NOT_HAPPENING = 3.0
POLICY = "vscheduler-policy"
KEY = "volcano-scheduler.conf"
ARGS = [f"--policy-configmap=test/{POLICY}"]

_TIERS = """\
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: proportion
"""
PACKING = (
    'actions: "enqueue, allocate"\n'
    + _TIERS
    + """\
  - name: nodeorder
  - name: binpack
    arguments:
      binpack.weight: 10
"""
)
"""Binpack dominates: a new pod joins the fuller node."""
SPREADING = (
    'actions: "enqueue, allocate"\n'
    + _TIERS
    + """\
  - name: nodeorder
    arguments:
      leastrequested.weight: 10
"""
)
"""Least-requested dominates, no binpack: a new pod goes to the emptier node."""
UNKNOWN_PLUGIN = PACKING + "  - name: nosuchplugin\n"
"""The packing policy plus a plugin nobody provides: rejected as a whole."""
NO_ACTIONS = 'actions: ""\n' + _TIERS


def _reloads(scheduler: harness.Scheduler, result: str) -> float:
    return harness.scrape(scheduler, "vscheduler_config_reloads_total", result=result) or 0.0


def _two_nodes_one_fuller(cluster: harness.ScopedCluster) -> None:
    """node-a and node-b, 4 CPU each; node-a runs a 1-CPU pod (bound by hand)."""
    cluster.add_node("node-a", cpu="4", memory="8Gi")
    cluster.add_node("node-b", cpu="4", memory="8Gi")
    harness.create(cluster, harness.pod("seed", "test", scheduler="nobody"))
    cluster.bind_pod("test", "seed", "node-a")


def _placed(cluster: harness.ScopedCluster, name: str) -> str:
    harness.create(cluster, harness.pod(name, "test"))
    node: str = harness.wait_for(
        f"{name} bound", lambda: harness.bound(cluster, "test").get(name), TIMEOUT
    )
    return node


def test_a_policy_configmap_change_takes_effect_and_an_invalid_one_is_rejected(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    _two_nodes_one_fuller(cluster)
    harness.create(cluster, harness.configmap(POLICY, "test", {KEY: PACKING}))
    scheduler = start_scheduler(args=ARGS)
    scheduler.wait_ready(TIMEOUT)
    harness.wait_for(
        "the packing policy loaded", lambda: _reloads(scheduler, "success") >= 1, TIMEOUT
    )

    # Packing: node-a (1/4 used) over node-b (empty).
    assert _placed(cluster, "packed") == "node-a"

    # A valid change: spreading. node-a now has 2/4 used, node-b 0/4.
    loaded = _reloads(scheduler, "success")
    harness.update_configmap(cluster, POLICY, "test", {KEY: SPREADING})
    harness.wait_for(
        "the spreading policy loaded", lambda: _reloads(scheduler, "success") > loaded, TIMEOUT
    )
    assert _placed(cluster, "spread") == "node-b"

    # An invalid change: rejected with an Event naming the error, a metric and a log line.
    assert _reloads(scheduler, "failure") == 0
    harness.update_configmap(cluster, POLICY, "test", {KEY: UNKNOWN_PLUGIN})
    rejected = harness.wait_for(
        "a PolicyRejected event on the ConfigMap",
        lambda: harness.events_about(cluster, "test", "ConfigMap", POLICY, reason="PolicyRejected"),
        TIMEOUT,
    )
    assert rejected[0]["type"] == "Warning", harness.dump(rejected)
    assert "nosuchplugin" in rejected[0]["message"], harness.dump(rejected)
    assert rejected[0]["involvedObject"].get("namespace") == harness.namespace_of(cluster)
    harness.wait_for(
        "vscheduler_config_reloads_total{result=failure} >= 1",
        lambda: _reloads(scheduler, "failure") >= 1,
        TIMEOUT,
    )
    assert "nosuchplugin" in scheduler.log(200)

    # The spreading policy stays: node-a 2/4 used, node-b 1/4 used -> node-b (packing: node-a).
    assert _placed(cluster, "still-spread") == "node-b"
    assert scheduler.alive()

    # Fixing the ConfigMap applies the fix. node-b gets a third CPU used (by hand): packing
    # now picks node-b (3/4), spreading would pick node-a (2/4).
    harness.create(cluster, harness.pod("ballast", "test", scheduler="nobody"))
    cluster.bind_pod("test", "ballast", "node-b")
    loaded = _reloads(scheduler, "success")
    harness.update_configmap(cluster, POLICY, "test", {KEY: PACKING})
    harness.wait_for(
        "the fixed policy loaded", lambda: _reloads(scheduler, "success") > loaded, TIMEOUT
    )
    assert _placed(cluster, "packed-again") == "node-b"
    assert scheduler.alive()


def test_a_policy_without_actions_stops_binding_until_actions_are_back(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    cluster.add_node("node-a", cpu="4", memory="8Gi")
    harness.create(cluster, harness.configmap(POLICY, "test", {KEY: SPREADING}))
    scheduler = start_scheduler(args=ARGS)
    scheduler.wait_ready(TIMEOUT)
    assert _placed(cluster, "before") == "node-a"

    loaded = _reloads(scheduler, "success")
    harness.update_configmap(cluster, POLICY, "test", {KEY: NO_ACTIONS})
    harness.wait_for(
        "the no-action policy loaded", lambda: _reloads(scheduler, "success") > loaded, TIMEOUT
    )
    harness.create(cluster, harness.pod("idle", "test"))
    # A cycle ran over the new pod (it says why it is pending), and bound nothing.
    cond = harness.wait_for(
        "a PodScheduled condition on the idle pod",
        lambda: harness.pod_condition(cluster, "test", "idle"),
        TIMEOUT,
    )
    assert cond["status"] == "False", harness.dump(cond)
    time.sleep(NOT_HAPPENING)
    assert "idle" not in harness.bound(cluster, "test")

    harness.update_configmap(cluster, POLICY, "test", {KEY: SPREADING})
    harness.wait_for(
        "the idle pod bound once actions are back",
        lambda: "idle" in harness.bound(cluster, "test"),
        TIMEOUT,
    )
    assert scheduler.alive()


def test_a_policy_configmap_created_after_start_is_read_under_the_key_given(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    cluster.add_node("node-a", cpu="4", memory="8Gi")
    scheduler = start_scheduler(args=[*ARGS, "--policy-key=policy.yaml"])
    scheduler.wait_ready(TIMEOUT)
    # No ConfigMap yet: the built-in default policy schedules.
    assert _placed(cluster, "default-policy") == "node-a"

    # The ConfigMap appears, but without the key: rejected, naming the key.
    harness.create(cluster, harness.configmap(POLICY, "test", {KEY: NO_ACTIONS}))
    rejected = harness.wait_for(
        "a PolicyRejected event naming the missing key",
        lambda: harness.events_about(cluster, "test", "ConfigMap", POLICY, reason="PolicyRejected"),
        TIMEOUT,
    )
    assert "data.policy.yaml" in rejected[0]["message"], harness.dump(rejected)
    assert _placed(cluster, "still-default") == "node-a"

    # The key is added: its policy (no actions) is in force.
    loaded = _reloads(scheduler, "success")
    harness.update_configmap(cluster, POLICY, "test", {"policy.yaml": NO_ACTIONS})
    harness.wait_for(
        "the ConfigMap's policy loaded", lambda: _reloads(scheduler, "success") > loaded, TIMEOUT
    )
    harness.create(cluster, harness.pod("idle", "test"))
    harness.wait_for(
        "a PodScheduled condition on the idle pod",
        lambda: harness.pod_condition(cluster, "test", "idle"),
        TIMEOUT,
    )
    time.sleep(NOT_HAPPENING)
    assert "idle" not in harness.bound(cluster, "test")
    assert scheduler.alive()


def test_the_policy_rejected_event_shows_in_kubectl_describe_of_the_configmap(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    cluster.add_node("node-a", cpu="4", memory="8Gi")
    created = harness.create(cluster, harness.configmap(POLICY, "test", {KEY: SPREADING}))
    scheduler = start_scheduler(args=ARGS)
    scheduler.wait_ready(TIMEOUT)
    harness.update_configmap(cluster, POLICY, "test", {KEY: UNKNOWN_PLUGIN})
    rejected = harness.wait_for(
        "a PolicyRejected event on the ConfigMap",
        lambda: harness.events_about(cluster, "test", "ConfigMap", POLICY, reason="PolicyRejected"),
        TIMEOUT,
    )

    assert rejected[0]["involvedObject"].get("uid") == created["metadata"]["uid"], harness.dump(
        rejected
    )
    described = cluster.kubectl("describe", "configmap", POLICY, "-n", "test").stdout
    assert "PolicyRejected" in described, described
