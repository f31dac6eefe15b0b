"""network-topology-aware: Volcano's arguments, read and checked; no opinion (and no cost)
without HyperNodes; a session with no job asking a network topology never builds the tree."""

from __future__ import annotations

import numpy as np
import pytest

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.errors import PluginArgsError, PolicyError
from vscheduler.plugins import network_topology_aware as nta
from vscheduler.testing import sessions
from vscheduler.testing.builders import START, hypernode, node, pod, podgroup, snapshot

POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}, {name: nodeorder}, {name: network-topology-aware}]
"""


def test_the_users_guide_arguments_are_read() -> None:
    factory = nta.build(
        {
            "weight": 10,
            "hypernode.binpack.cpu": 5,
            "hypernode.binpack.memory": 1,
            "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
            "hypernode.binpack.resources.nvidia.com/gpu": 2,
            "hypernode.binpack.resources.example.com/foo": 3,
            "hypernode.binpack.normal-pod.enable": True,
            "hypernode.binpack.normal-pod.fading": 0.8,
            "hypernode.gradient.evict.max-hypernodes": 8,
        }
    )
    assert factory.config == nta.Config(
        weight=10,
        resources={"nvidia.com/gpu": 2, "example.com/foo": 3, "cpu": 5, "memory": 1},
        normal_pods=True,
        fading=0.8,
    )


def test_negative_weights_and_fading_mean_their_defaults() -> None:
    config = nta.build(
        {"weight": -1, "hypernode.binpack.cpu": -3, "hypernode.binpack.normal-pod.fading": -1}
    ).config
    assert (config.weight, config.resources["cpu"], config.fading) == (1, 1, 0.8)


def test_unknown_or_ill_typed_arguments_are_policy_errors() -> None:
    with pytest.raises(PluginArgsError) as caught:
        nta.build({"wieght": 1, "hypernode.binpack.normal-pod.enable": "maybe"})
    text = str(caught.value)
    assert "arguments.wieght: unknown argument; did you mean 'weight'?" in text
    assert "arguments.hypernode.binpack.normal-pod.enable: must be true or false" in text
    with pytest.raises(PolicyError):
        catalog.load_pipeline(
            POLICY.replace(
                "{name: network-topology-aware}",
                "{name: network-topology-aware, arguments: {weight: x}}",
            )
        )


def test_the_shipped_volcano_example_policy_loads() -> None:
    with open("tests/fixtures/policies/volcano-network-topology.yaml") as text:
        catalog.load_pipeline(text.read())


def test_without_hypernodes_it_has_no_opinion() -> None:
    snap = snapshot(
        node("n0"), podgroup("pg").network_topology("soft"), pod("p").group("pg").requests(cpu="1")
    )
    session = sessions.open_session(snap, POLICY)
    plugin = session.plugins[nta.NAME]
    assert isinstance(plugin, nta.NetworkTopologyAware)
    task = next(iter(session.tasks.values()))
    assert plugin.batch_score_nodes(task, np.arange(1)) is None


def test_a_cycle_of_jobs_without_a_network_topology_never_builds_the_tree() -> None:
    """The hot path: HyperNodes in the cluster, the plugin's normal-pod binpacking off, no job
    asking a network topology: the session's tree is never made."""
    policy = POLICY.replace(
        "{name: network-topology-aware}",
        "{name: network-topology-aware, arguments: {hypernode.binpack.normal-pod.enable: false}}",
    )
    snap = snapshot(
        node("n0"),
        node("n1"),
        hypernode("s0").nodes("n0", "n1"),
        pod("p").requests(cpu="1"),
    )
    session = cycle.open_session(snap, catalog.load_pipeline(policy), clock=FixedClock(START))
    for action in catalog.load_pipeline(policy).actions:
        action.execute(session)
    assert session._topology is None  # the lazily made tree
