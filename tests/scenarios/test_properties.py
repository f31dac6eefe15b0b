"""Whole cycles on random clusters: gangs commit whole, nodes never over-fill (hypothesis)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings, strategies as st

from vscheduler.testing.builders import Item, node, pod, podgroup, snapshot
from vscheduler.testing.scenario import run

gangs = st.lists(
    st.tuples(st.integers(1, 5), st.integers(0, 2), st.integers(1, 3)), min_size=1, max_size=6
)
nodes = st.lists(st.integers(1, 8), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(gangs, nodes)
def test_a_committed_gang_is_never_below_min_member_and_no_node_is_over_allocated(
    gang_specs: list[tuple[int, int, int]], node_cpus: list[int]
) -> None:
    items: list[Item] = [
        node(f"n{i}").resources(cpu=str(c), memory="64Gi") for i, c in enumerate(node_cpus)
    ]
    minimum: dict[str, int] = {}
    for g, (min_member, extra, cpu) in enumerate(gang_specs):
        name = f"g{g}"
        minimum[name] = min_member
        items.append(podgroup(name).min_member(min_member).inqueue())
        for t in range(min_member + extra):
            items.append(pod(f"{name}-w-{t}").group(name).requests(cpu=str(cpu), memory="1Gi"))
    snap = snapshot(*items)
    outcome = run(snap)[0]
    per_gang = Counter(key.split("/")[1].split("-")[0] for key in outcome.binds)
    for name, count in per_gang.items():
        assert count >= minimum[name]
    load: Counter[str] = Counter()
    for key, node_name in outcome.binds.items():
        load[node_name] += snap.tasks[key].resreq.milli_cpu
    for i, cpus in enumerate(node_cpus):
        assert load[f"n{i}"] <= cpus * 1000
