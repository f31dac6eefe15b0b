"""task-topology's argument, and its buckets kept in step with a statement that places a pod and
is discarded (Volcano's plugin has no deallocate handler: ours takes the placement back)."""

from __future__ import annotations

import numpy as np
import pytest

from vscheduler import catalog
from vscheduler.convert.tasktopology import AFFINITY_KEY, ANTI_AFFINITY_KEY
from vscheduler.errors import PolicyError
from vscheduler.framework.statement import Statement
from vscheduler.plugins.task_topology import TaskTopologyPlugin
from vscheduler.testing.builders import node, pod, podgroup, snapshot
from vscheduler.testing.sessions import open_session

POLICY = """\
actions: "allocate"
tiers:
- plugins: [{name: gang}, {name: predicates}, {name: task-topology, arguments: ARGS}]
"""


def test_the_weight_is_an_integer_named_as_volcano_names_it() -> None:
    catalog.load_pipeline(POLICY.replace("ARGS", "{task-topology.weight: 10}"))

    with pytest.raises(PolicyError) as raised:
        catalog.load_pipeline(POLICY.replace("ARGS", "{task-topology.weight: high, weight: 2}"))

    assert tuple(raised.value.errors) == (
        "tiers[0].plugins[2]: plugin task-topology: arguments.task-topology.weight: must be an"
        " integer, got 'high'",
        "tiers[0].plugins[2]: plugin task-topology: arguments.weight: unknown argument",
    )


def test_a_discarded_placement_leaves_the_scores_as_they_were() -> None:
    """ps-0 placed on n0 draws worker-0 there (its bucket's pod on n0, +1); discarded, the
    scores are the ones before."""
    snap = snapshot(
        *(node(f"n{i}").resources(cpu="4") for i in range(2)),
        podgroup("tf")
        .min_member(2)
        .annotate(AFFINITY_KEY, "ps,worker")
        .annotate(ANTI_AFFINITY_KEY, "ps"),
        pod("tf-ps-0").group("tf").role("ps").requests(cpu="1"),
        pod("tf-worker-0").group("tf").role("worker").requests(cpu="1"),
    )
    session = open_session(snap, POLICY.replace("ARGS", "{}"))
    plugin = session.plugins["task-topology"]
    assert isinstance(plugin, TaskTopologyPlugin)
    ps_task = next(t for t in session.tasks.values() if t.facts.name == "tf-ps-0")
    worker = next(t for t in session.tasks.values() if t.facts.name == "tf-worker-0")
    idx = np.arange(2, dtype=np.int64)
    before = plugin.score_nodes(worker, idx)

    statement = Statement(session)
    statement.allocate(ps_task, 0)
    placed = plugin.score_nodes(worker, idx)
    statement.discard()
    after = plugin.score_nodes(worker, idx)

    assert before is not None
    assert placed is not None
    assert after is not None
    assert before.tolist() == [100.0, 100.0]  # (0 there + 2 pending) * 100 / 2
    assert placed.tolist() == [100.0, 50.0]  # n0: 1 there + 1 pending; n1: 1 pending
    assert after.tolist() == before.tolist()
