"""shuffle as Volcano decides, transcribed from Volcano's
`pkg/scheduler/actions/shuffle/shuffle_test.go`: `TestShuffle`, its one case.

The Go test registers a mocked plugin `fake` in a tier of its own with `EnabledVictim` and adds
it a victimTasks function that picks, from the candidates, every task of the low priority (10);
it runs the shuffle action alone and counts the evictions. Here `fake` is a victimTasks plugin
with that one rule, added to the built-in registry for the test, under the same tier (see
`go_tiers`), and the case runs one whole cycle of `shuffle`. Objects: `BuildPodWithPriority`
pods are running builder pods with that pod priority, their PodGroups Running with minMember 0,
quantities as written (`2G` is 10^9 bytes twice). Volcano compares the evictions as a multiset;
ours come in candidate order (node, then pod key), so the list is exact.

Our shuffle holds victims to rails Volcano's has not (docs/policy.md 4.4: a gang's minMember,
`maxEvictionsPerNode` 2 and `maxEvictionsPerRun` 10 by default); the case stays within them (two
victims on node1, one on node2, minMember 0), so it decides as Volcano's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.conf.parse import parse_policy
from vscheduler.framework.registry import Pipeline, Registry, build
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.status import PodGroupPhase
from vscheduler.plugin_api import PluginSession, TaskState, VictimTasks
from vscheduler.testing.builders import START, Item, node, pod, podgroup, queue, snapshot
from vscheduler.testing.volcano import go_tiers

LOW, HIGH = 10, 100
POLICY = go_tiers("shuffle", fake=("enabledVictim",))


class LowPriorityVictims(VictimTasks):
    """The Go case's victimTasks function: every candidate of priority `LOW`."""

    def propose_victims(self, candidates: Sequence[TaskState], /) -> Sequence[TaskState]:
        return [t for t in candidates if t.priority == LOW]


class Fake:
    """The mocked plugin `fake` (its factory)."""

    name = "fake"
    plugin = LowPriorityVictims

    def open(self, session: PluginSession, /) -> LowPriorityVictims:
        return LowPriorityVictims()


def fake(arguments: Mapping[str, object]) -> Fake:
    return Fake()


def pipeline() -> Pipeline:
    """`POLICY` built on the built-in registry plus `fake`."""
    builtin = catalog.builtin_registry()
    registry = Registry(plugins={**builtin.plugins, "fake": fake}, actions=builtin.actions)
    policy = parse_policy(POLICY, known_actions=registry.actions, known_plugins=registry.plugins)
    return build(policy, registry)


def evicted(snap: ClusterSnapshot) -> list[str]:
    report = cycle.run_cycle(snap, pipeline(), clock=FixedClock(START))
    return [e.pod for e in report.result.evictions]


def test_the_low_priority_pods_the_plugin_names_are_evicted_on_every_node() -> None:
    """TestShuffle "select pods with low priority and evict them": pg1 (pod1-1 low, pod1-2 and
    pod1-3 high, all on node1), pg2 (pod2-1 low on node1, pod2-2 high on node2), pg3 (pod3-1
    low, pod3-2 high, on node2): Volcano evicts the three low-priority pods."""
    placed = {
        "pod1-1": ("pg1", "node1", LOW),
        "pod1-2": ("pg1", "node1", HIGH),
        "pod1-3": ("pg1", "node1", HIGH),
        "pod2-1": ("pg2", "node1", LOW),
        "pod2-2": ("pg2", "node2", HIGH),
        "pod3-1": ("pg3", "node2", LOW),
        "pod3-2": ("pg3", "node2", HIGH),
    }
    items: list[Item] = [
        node("node1").resources(cpu="4", memory="8Gi", pods=10),
        node("node2").resources(cpu="4", memory="8Gi", pods=10),
        queue("default").weight(1),
    ]
    for group in ("pg1", "pg2", "pg3"):
        items.append(
            podgroup(group, "test").queue("default").min_member(0).phase(PodGroupPhase.RUNNING)
        )
    for name, (group, on, priority) in placed.items():
        built = pod(name, "test").group(group).requests(cpu="1", memory="2G")
        items.append(built.priority(priority).on(on))

    assert evicted(snapshot(*items)) == ["test/pod1-1", "test/pod2-1", "test/pod3-1"]
