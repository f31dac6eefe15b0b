"""Queues share a cluster by weight, within capability, honouring guarantee (default policy)."""

from __future__ import annotations

from collections import Counter

from vscheduler.testing.builders import Item, QueueBuilder, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import run


def cluster(*queues: QueueBuilder, cpus: int = 16, per_queue: int = 20) -> list[Item]:
    nodes = [node(f"n{i}").resources(cpu="4", memory="32Gi") for i in range(cpus // 4)]
    items: list[Item] = [*nodes, *queues]
    for q in queues:
        name = q.build().name
        for i in range(per_queue):
            items.append(podgroup(f"{name}-{i:02d}").queue(name).inqueue())
            items.append(
                pod(f"{name}-{i:02d}-0").group(f"{name}-{i:02d}").requests(cpu="1", memory="1Gi")
            )
    return items


def bound_per_queue(binds: dict[str, str]) -> Counter[str]:
    return Counter(key.split("/")[1].rsplit("-", 2)[0] for key in binds)


def test_two_queues_weighted_one_to_three_split_a_full_cluster_one_to_three() -> None:
    outcome = run(snapshot(*cluster(queue("small").weight(1), queue("large").weight(3))))[0]
    shares = bound_per_queue(outcome.binds)
    assert shares["small"] + shares["large"] == 16
    assert abs(shares["small"] * 3 - shares["large"]) <= 3  # within one pod of 1:3
    assert shares == Counter({"small": 4, "large": 12})


def test_capability_caps_a_queue_and_the_rest_goes_to_the_other() -> None:
    capped = queue("large").weight(3).capability(cpu="6", memory="64Gi")
    outcome = run(snapshot(*cluster(queue("small").weight(1), capped)))[0]
    assert bound_per_queue(outcome.binds) == Counter({"large": 6, "small": 10})


def test_guarantee_is_honoured_against_a_heavier_queue() -> None:
    guaranteed = queue("small").weight(1).guarantee(cpu="8", memory="8Gi")
    outcome = run(snapshot(*cluster(guaranteed, queue("large").weight(7))))[0]
    shares = bound_per_queue(outcome.binds)
    assert shares["small"] >= 8
    assert shares["small"] + shares["large"] == 16
