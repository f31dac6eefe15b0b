"""Admission does not starve a queue below its deserved share while CPU sits idle (issue 11).

Two queues weighted 1 and 3 each submit 20 one-pod jobs of 1 CPU with minResources (as every
Volcano Job has) on 16 CPU, default policy. Proportion holds queue a at its deserved 4 CPU, so
a's surplus PodGroups, once admitted (Inqueue), can never allocate. Volcano's overcommit keeps
counting their minResources in the admission budget (`inqueue + minResources <= 1.2 x total -
used`), and queue b's jobs are never admitted: b stays below its deserved 12 with CPU idle
(volcano-sh/volcano#2304, #5006). Here an admitted job holds budget only while its queue would
let it allocate (`overcommit`, docs/policy.md), so the split ends 4 : 12.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

from hypothesis import given, settings, strategies as st

from vscheduler.conf.default import DEFAULT_POLICY_TEXT
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.resources import Resources
from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.builders import Item, PodGroupBuilder, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import Outcome, run

NODES = tuple(node(f"n{i}").resources(cpu="4", memory="16Gi") for i in range(4))
QUEUES = (queue("a").weight(1), queue("b").weight(3))
WITH_RECLAIM = DEFAULT_POLICY_TEXT.replace(
    '"enqueue, allocate, backfill"', '"enqueue, allocate, reclaim, backfill"'
)


def jobs(name: str, first: int = 0, count: int = 20) -> list[Item]:
    """`count` one-pod jobs of queue `name` (1 CPU, 1Gi), numbered from `first`."""
    items: list[Item] = []
    for i in range(first, first + count):
        job = f"{name}-{i:02d}"
        items.append(podgroup(job).queue(name).min_member(1).min_resources(cpu="1", memory="1Gi"))
        items.append(pod(f"{job}-0").group(job).requests(cpu="1", memory="1Gi"))
    return items


def running_per_queue(snap: ClusterSnapshot) -> Counter[str]:
    """Pods placed on a node, by queue (the pod name's first letter)."""
    return Counter(key.split("/")[1][0] for key, t in snap.tasks.items() if t.node_name)


def bound(outcomes: list[Outcome]) -> list[str]:
    """Every pod bound over the cycles, in name order."""
    return sorted(key.split("/")[1] for o in outcomes for key in o.binds)


def phases(outcome: Outcome) -> Counter[tuple[str, PodGroupPhase]]:
    podgroups = outcome.result.podgroups
    return Counter((key.split("/")[1][0], s.phase) for key, s in podgroups.items())


def pods(name: str, numbers: range) -> list[str]:
    return [f"{name}-{i:02d}-0" for i in numbers]


def test_jobs_waiting_before_the_nodes_join_end_four_to_twelve() -> None:
    # Cycle 1 (no node): nothing is admitted. Cycle 2: a's first 16 jobs and b's first 3 are
    # admitted (19 of the 19.2 CPU budget); a gets its deserved 4, b its 3. Cycle 3: a's 12
    # waiting jobs can never allocate (a is at its deserved), so they hold no budget: b's next
    # 12 are admitted and 9 of them bind, b reaches its deserved 12.
    joined = snapshot(*NODES)
    outcomes = run(
        snapshot(*QUEUES, *jobs("a"), *jobs("b")),
        cycles=5,
        between=lambda i, s: dataclasses.replace(s, nodes=joined.nodes) if i == 1 else s,
    )

    assert outcomes[0].binds == {}
    assert bound(outcomes[:2]) == pods("a", range(4)) + pods("b", range(3))
    assert bound(outcomes[2:3]) == pods("b", range(3, 12))
    assert bound(outcomes[3:]) == []
    assert running_per_queue(outcomes[-1].snapshot_after) == Counter({"a": 4, "b": 12})
    assert phases(outcomes[2]) == Counter(
        {
            ("a", PodGroupPhase.RUNNING): 4,
            ("a", PodGroupPhase.INQUEUE): 12,
            ("a", PodGroupPhase.PENDING): 4,
            ("b", PodGroupPhase.RUNNING): 12,
            ("b", PodGroupPhase.INQUEUE): 3,
            ("b", PodGroupPhase.PENDING): 5,
        }
    )


def test_jobs_arriving_on_a_running_cluster_end_four_to_twelve() -> None:
    # Cycle 2: 10 jobs of a and 12 of b arrive; all of a's and 9 of b's are admitted (19 of the
    # 19.2 CPU budget), a binds its deserved 4 and b 9. Cycle 3: 10 more of a and 8 more of b
    # arrive; a's 6 waiting jobs hold no budget, so b's 3 left are admitted and bind.
    batches = {1: (jobs("a", 0, 10), jobs("b", 0, 12)), 2: (jobs("a", 10, 10), jobs("b", 12, 8))}

    def arrive(i: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        if i not in batches:
            return snap
        new = snapshot(*batches[i][0], *batches[i][1])
        return dataclasses.replace(
            snap, tasks={**snap.tasks, **new.tasks}, jobs={**snap.jobs, **new.jobs}
        )

    for policy in (None, WITH_RECLAIM):
        outcomes = run(snapshot(*NODES, *QUEUES), policy=policy, cycles=6, between=arrive)

        per_cycle = [running_per_queue(o.snapshot_after) for o in outcomes]
        assert per_cycle[:2] == [Counter(), Counter({"a": 4, "b": 9})]
        assert per_cycle[2:] == [Counter({"a": 4, "b": 12})] * 4
        assert bound(outcomes) == pods("a", range(4)) + pods("b", range(12))
        assert [o.evictions for o in outcomes] == [[]] * 6


def test_with_reclaim_in_the_policy_the_split_also_ends_four_to_twelve() -> None:
    joined = snapshot(*NODES)
    outcomes = run(
        snapshot(*QUEUES, *jobs("a"), *jobs("b")),
        policy=WITH_RECLAIM,
        cycles=5,
        between=lambda i, s: dataclasses.replace(s, nodes=joined.nodes) if i == 1 else s,
    )

    assert running_per_queue(outcomes[-1].snapshot_after) == Counter({"a": 4, "b": 12})
    assert bound(outcomes) == pods("a", range(4)) + pods("b", range(12))
    assert [o.evictions for o in outcomes] == [[]] * 5


def test_all_jobs_at_once_on_a_running_cluster_end_four_to_twelve_with_reclaim() -> None:
    everything = snapshot(*jobs("a"), *jobs("b"))

    def arrive(i: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        if i != 1:
            return snap
        return dataclasses.replace(snap, tasks=everything.tasks, jobs=everything.jobs)

    for policy in (None, WITH_RECLAIM):
        outcomes = run(snapshot(*NODES, *QUEUES), policy=policy, cycles=5, between=arrive)
        assert running_per_queue(outcomes[-1].snapshot_after) == Counter({"a": 4, "b": 12})
        assert [o.evictions for o in outcomes] == [[]] * 5


def test_under_capacity_jobs_of_a_queue_at_its_capability_hold_no_budget() -> None:
    # Volcano's Helm policy (capacity): queue a's 20 jobs were admitted before its capability
    # was lowered to 4 CPU. Cycle 1 they all count (a holds nothing yet) and a binds 4; from
    # cycle 2 its 16 left cannot allocate within the capability, and b's jobs are admitted.
    helm = (Path(__file__).resolve().parents[1] / "fixtures/policies/volcano-helm.yaml").read_text()
    capped = queue("a").capability(cpu="4", memory="64Gi")
    admitted = [item.inqueue() if isinstance(item, PodGroupBuilder) else item for item in jobs("a")]
    outcomes = run(
        snapshot(*NODES, capped, queue("b"), *admitted, *jobs("b")), policy=helm, cycles=4
    )

    assert bound(outcomes[:1]) == pods("a", range(4))
    assert bound(outcomes[1:]) == pods("b", range(12))
    assert running_per_queue(outcomes[-1].snapshot_after) == Counter({"a": 4, "b": 12})


# --- the rule on random clusters ------------------------------------------------------------------
queue_specs = st.lists(
    st.tuples(st.integers(1, 4), st.integers(0, 24), st.integers(0, 24)), min_size=2, max_size=3
)
"""Per queue: weight, jobs, and how many of them are already admitted (Inqueue) at the start."""


@settings(max_examples=30, deadline=None)
@given(queue_specs, st.integers(1, 5))
def test_no_queue_stays_below_its_deserved_share_while_a_pod_of_it_would_fit(
    specs: list[tuple[int, int, int]], node_count: int
) -> None:
    # Default policy, one-pod jobs of 1 CPU with minResources. After the cycles settle, a queue
    # whose deserved share has room for one more of its pending pods must find no node with room
    # for it: otherwise admission starved it with resources idle.
    items: list[Item] = [node(f"n{i}").resources(cpu="4", memory="16Gi") for i in range(node_count)]
    for q, (weight, count, admitted) in enumerate(specs):
        name = f"q{q}"
        items.append(queue(name).weight(weight))
        for i in range(count):
            job = f"{name}-{i:02d}"
            group = podgroup(job).queue(name).min_member(1).min_resources(cpu="1", memory="1Gi")
            items.append(group.inqueue() if i < admitted else group)
            items.append(pod(f"{job}-0").group(job).requests(cpu="1", memory="1Gi"))
    outcomes = run(snapshot(*items), cycles=6)

    last = outcomes[-1]
    snap = last.snapshot_after
    one = Resources(cpu=1000, memory=2**30)
    free = [
        n.allocatable
        - sum(
            (t.resreq for t in snap.tasks.values() if t.node_name == n.name),
            start=Resources(),
        )
        for n in snap.nodes
    ]
    room_on_a_node = any(one.fits_in(f) for f in free)
    waiting = {key.split("/")[1].split("-")[0] for key, t in snap.tasks.items() if not t.node_name}
    for name in waiting:
        figures = last.result.queues[name]
        below_deserved = (figures.allocated + one).fits_in(figures.deserved)
        assert not (below_deserved and room_on_a_node), (name, figures, free)
