"""`simulate` output: each eviction also appears with its node, reason, action and strategy."""

from __future__ import annotations

from vscheduler.model.commands import CycleResult, Evict
from vscheduler.simulate import cycle_json, render_table

EVICT = Evict(
    task_uid="uid-a",
    pod="default/a",
    node="n1",
    reason="shuffle: node n1 is above its target thresholds",
    action="shuffle",
    strategy="lowNodeUtilization",
)


def test_a_cycles_evictions_keep_their_keys_and_gain_details_in_the_same_order() -> None:
    plain = Evict(task_uid="uid-b", pod="default/b", node="n2", reason="shuffle", action="shuffle")
    cycle = cycle_json(CycleResult(evictions=(EVICT, plain)))
    assert cycle["evictions"] == ["default/a", "default/b"]
    assert cycle["evictionDetails"] == [
        {
            "pod": "default/a",
            "node": "n1",
            "reason": "shuffle: node n1 is above its target thresholds",
            "action": "shuffle",
            "strategy": "lowNodeUtilization",
        },
        {
            "pod": "default/b",
            "node": "n2",
            "reason": "shuffle",
            "action": "shuffle",
            "strategy": "",
        },
    ]


def test_the_table_shows_each_eviction_with_its_node_and_reason() -> None:
    output: dict[str, object] = {
        "cycles": [cycle_json(CycleResult(evictions=(EVICT,)))],
        "explain": {},
        "stats": {"cycleSeconds": [0.0], "pods": 1, "nodes": 1},
    }
    assert render_table(output) == (
        "cycle 1: 0 bound, 0 pipelined, 1 evicted, 0 pending (0.0 ms)\n"
        "  evict      default/a on n1: shuffle: node n1 is above its target thresholds\n"
        "1 nodes, 1 pods\n"
    )
