"""preempt's `enableTopologyAwarePreemption` on random clusters: without it, evicting never
ends an inter-pod anti-affinity conflict (Volcano's normal preemption), with it (and the
predicates entry at its defaults) it may; the pod count is resolved either way."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.testing import scenario
from vscheduler.testing.builders import Item, node, pod, pod_term, podgroup, queue, snapshot
from vscheduler.testing.scenario import TIERS

HOST = "kubernetes.io/hostname"
WORKER = pod_term(HOST, role="worker")
POLICY = 'actions: "enqueue, allocate, preempt"\n' + TIERS
TOPOLOGY_AWARE = """\
configurations:
- name: preempt
  arguments:
    enableTopologyAwarePreemption: true
"""


def cluster(running: list[tuple[int, bool, bool]], asks: int) -> ClusterSnapshot:
    """Three nodes of four cpus and three pods. `running`: (node, is a worker, anti-affine to
    workers), one cpu each, at job priority 1; `asks` anti-affine workers of one cpu at job
    priority 5."""
    items: list[Item] = [
        node(f"n{i}").resources(cpu="4", memory="64Gi", pods=3).label(HOST, f"n{i}")
        for i in range(3)
    ]
    items += [queue("q0"), podgroup("low").queue("q0").priority(1).inqueue()]
    taken = [0, 0, 0]
    for k, (n, worker, anti) in enumerate(running):
        if taken[n] == 3:
            continue
        taken[n] += 1
        built = pod(f"run-{k}").group("low").requests(cpu="1").on(f"n{n}")
        if worker:
            built = built.label("role", "worker")
        items.append(built.anti_affinity(WORKER) if anti else built)
    for g in range(asks):
        items.append(podgroup(f"ask-{g}").queue("q0").priority(5).min_member(1).inqueue())
        items.append(
            pod(f"ask-{g}-0")
            .group(f"ask-{g}")
            .requests(cpu="1")
            .label("role", "worker")
            .anti_affinity(WORKER)
        )
    return snapshot(*items)


KINDS = st.sampled_from([(False, False), (False, False), (True, False), (False, True)])
"""(is a worker, anti-affine to workers): half the pods neither, so some full nodes conflict with
no asker and preemption there is lawful either way."""
RUNNING = st.lists(
    st.tuples(st.integers(0, 2), KINDS).map(lambda t: (t[0], *t[1])), min_size=6, max_size=9
)


def conflicted(before: ClusterSnapshot, node_name: str) -> bool:
    """Whether an anti-affine worker conflicts with a pod on `node_name` before any eviction."""
    for task in before.tasks.values():
        if task.node_name != node_name:
            continue
        if task.labels.get("role") == "worker" or task.pod_affinity.anti_required:
            return True
    return False


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(RUNNING, st.integers(1, 3))
def test_without_topology_awareness_no_asker_lands_where_anti_affinity_conflicted(
    running: list[tuple[int, bool, bool]], asks: int
) -> None:
    before = cluster(running, asks)

    (outcome,) = scenario.run(before, policy=POLICY)

    landed = outcome.result.pipelined
    for key, node_name in landed.items():
        assert not conflicted(before, node_name), (key, node_name)
    assert {e.node for e in outcome.result.evictions} <= set(landed.values())


def test_with_topology_awareness_the_anti_affine_pod_is_evicted() -> None:
    """Every node full of low-priority workers: only evicting one ends the conflict."""
    before = cluster([(n, True, False) for n in range(3) for _ in range(3)], 1)

    (off,) = scenario.run(before, policy=POLICY)
    (on,) = scenario.run(before, policy=POLICY + TOPOLOGY_AWARE)

    assert off.result.evictions == ()
    assert off.result.pipelined == {}
    assert len(on.result.evictions) == 3  # the node's three workers, each anti-affine to the asker
    assert list(on.result.pipelined) == ["default/ask-0-0"]
