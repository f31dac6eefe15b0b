"""binpack scores a node 0 as a whole when the task would overflow any weighted resource there
(Volcano's `BinPackingScore` returns 0 at the first resource that is "not enough"; its
binpack_test.go TestNode pins the scores, tests/unit/plugins/test_binpack.py transcribes them).

Where it decides a placement: among nodes the task fits only once their releasing pods are gone
(allocate pipelines onto one), the node whose cpu would overflow used to score by its memory
alone and could win; it now scores 0.
"""

from __future__ import annotations

from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.status import TaskStatus
from vscheduler.testing.builders import node, pod, snapshot
from vscheduler.testing.scenario import run

POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}, {name: binpack}]
"""


def two_nodes_freeing_their_gpu() -> ClusterSnapshot:
    return snapshot(
        node("roomy").resources(cpu="8", memory="8Gi", nvidia_com_gpu=1),
        node("tight").resources(cpu="4", memory="8Gi", nvidia_com_gpu=1),
        pod("a")
        .requests(cpu="1", memory="1Gi", nvidia_com_gpu=1)
        .on("roomy", TaskStatus.RELEASING),
        pod("b")
        .requests(cpu="3", memory="7Gi", nvidia_com_gpu=1)
        .on("tight", TaskStatus.RELEASING),
        pod("p").requests(cpu="2", memory="1Gi", nvidia_com_gpu=1),
    )


def test_a_node_the_task_would_overflow_in_cpu_scores_0_and_the_other_node_is_chosen() -> None:
    # roomy: cpu (1+2)/8, memory (1+1)/8: (0.375 + 0.25) / 2 * 100 = 31.25
    # tight: cpu 3+2 > 4: 0 (it scored (0 + 8/8) / 2 * 100 = 50 by memory alone before)
    [outcome] = run(two_nodes_freeing_their_gpu(), policy=POLICY)

    assert outcome.binds == {}
    assert outcome.result.pipelined == {"default/p": "roomy"}
    assert outcome.evictions == []
