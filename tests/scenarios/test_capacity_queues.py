"""Queues share a cluster by what they deserve, within capability (Volcano's Helm chart policy,
which serves queues with `capacity`)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

from vscheduler.model.facts import QueueFacts
from vscheduler.testing.builders import (
    Item,
    QueueBuilder,
    node,
    pod,
    podgroup,
    queue,
    res,
    snapshot,
)
from vscheduler.testing.scenario import run

POLICY = (
    Path(__file__).resolve().parents[1] / "fixtures" / "policies" / "volcano-helm.yaml"
).read_text()


def deserving(builder: QueueBuilder, cpu: str) -> QueueFacts:
    return dataclasses.replace(builder.build(), deserved=res(cpu=cpu))


def cluster(*queues: QueueFacts, cpus: int = 16, per_queue: int = 20) -> list[Item]:
    """`cpus` CPUs on 4-CPU nodes, and `per_queue` pending one-pod jobs of 1 CPU in each queue."""
    nodes = [node(f"n{i}").resources(cpu="4", memory="32Gi") for i in range(cpus // 4)]
    items: list[Item] = [*nodes, *queues]
    for q in queues:
        for i in range(per_queue):
            group = f"{q.name}-{i:02d}"
            items.append(podgroup(group).queue(q.name).inqueue())
            items.append(pod(f"{group}-0").group(group).requests(cpu="1", memory="1Gi"))
    return items


def bound_per_queue(binds: dict[str, str]) -> Counter[str]:
    return Counter(key.split("/")[1].rsplit("-", 2)[0] for key in binds)


def test_two_queues_deserving_four_and_twelve_cpus_get_four_and_twelve_of_sixteen() -> None:
    items = cluster(deserving(queue("small"), "4"), deserving(queue("large"), "12"))

    outcome = run(snapshot(*items), policy=POLICY)[0]

    assert bound_per_queue(outcome.binds) == Counter({"small": 4, "large": 12})


def test_a_queue_of_capability_two_cpus_gets_two_and_the_other_borrows_the_rest() -> None:
    capped = deserving(queue("capped").capability(cpu="2"), "8")
    items = cluster(capped, deserving(queue("other"), "8"))

    outcome = run(snapshot(*items), policy=POLICY)[0]

    assert bound_per_queue(outcome.binds) == Counter({"capped": 2, "other": 14})


def test_a_queue_alone_borrows_the_whole_cluster_beyond_what_it_deserves() -> None:
    outcome = run(snapshot(*cluster(deserving(queue("alone"), "4"))), policy=POLICY)[0]

    assert bound_per_queue(outcome.binds) == Counter({"alone": 16})
