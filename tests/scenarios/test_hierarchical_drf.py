"""drf with `enableHierarchy: true`: the queues' `volcano.sh/hierarchy` tree orders the queues
and chooses reclaim's victims, where flat drf leaves the queues to the tie-break (creation
time, then name) and reclaim's victims to the other plugins."""

from __future__ import annotations

import pytest

from vscheduler.testing.builders import Item, PodBuilder, node, pod, podgroup, queue, snapshot
from vscheduler.testing.scenario import run

TIERS = """\
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: drf
    enableHierarchy: {hierarchy}
  - name: predicates
"""
HDRF = 'actions: "enqueue, allocate"\n' + TIERS.format(hierarchy="true")
FLAT = 'actions: "enqueue, allocate"\n' + TIERS.format(hierarchy="false")
HDRF_RECLAIM = 'actions: "enqueue, reclaim"\n' + TIERS.format(hierarchy="true")
FLAT_RECLAIM = 'actions: "enqueue, reclaim"\n' + TIERS.format(hierarchy="false")


def job(name: str, q: str) -> Item:
    return podgroup(name).queue(q).min_member(1).inqueue()


def pods(job: str, count: int, *, on: str | None = None, cpu: str = "1") -> list[PodBuilder]:
    made = [pod(f"{job}-{i}").group(job).requests(cpu=cpu) for i in range(count)]
    return [p.on(on) for p in made] if on else made


def two_subtrees(sci_weights: str) -> list[Item]:
    """10 cpu: eng/prod holds 3 (all it asks), sci holds 4 of the 7 it asks; eng/dev and sci
    each wait for a pod of 3 cpu, and only one fits."""
    return [
        node("n1").resources(cpu="10", memory="16Gi"),
        queue("eng-dev").hierarchy("root/eng/dev", "1/1/1"),
        queue("eng-prod").hierarchy("root/eng/prod", "1/1/1"),
        queue("sci").hierarchy("root/sci", sci_weights),
        job("dev", "eng-dev"),
        *pods("dev", 1, cpu="3"),
        job("prod", "eng-prod"),
        *pods("prod", 3, on="n1"),
        job("lab", "sci"),
        *pods("lab", 4, on="n1"),
        pod("lab-4").group("lab").requests(cpu="3"),
    ]


@pytest.mark.parametrize(
    ("sci_weights", "placed"),
    [
        ("1/2", {"default/lab-4": "n1"}),  # sci: 0.4 / 2 = 0.2 below eng's 0.3
        ("1/1", {"default/dev-0": "n1"}),  # sci: 0.4 above eng's 0.3
    ],
)
def test_the_queue_whose_subtree_holds_less_per_weight_goes_first(
    sci_weights: str, placed: dict[str, str]
) -> None:
    assert run(snapshot(*two_subtrees(sci_weights)), policy=HDRF)[0].binds == placed


def test_flat_drf_leaves_the_queues_to_the_tie_break_by_name() -> None:
    assert run(snapshot(*two_subtrees("1/2")), policy=FLAT)[0].binds == {"default/dev-0": "n1"}


def three_leaves() -> list[Item]:
    """6 cpu, empty; root/a and root/b/x, root/b/y, each a job of six 1-cpu pods."""
    return [
        node("n1").resources(cpu="6", memory="16Gi"),
        queue("a").hierarchy("root/a", "1/1"),
        queue("b-x").hierarchy("root/b/x", "1/1/1"),
        queue("b-y").hierarchy("root/b/y", "1/1/1"),
        *(
            item
            for name, q in (("ja", "a"), ("jx", "b-x"), ("jy", "b-y"))
            for item in (job(name, q), *pods(name, 6))
        ),
    ]


def test_each_placement_moves_the_tree_so_the_subtrees_take_turns() -> None:
    """The tree follows every placement within the cycle: root/a and root/b share the node
    half and half, b's half split between x and y."""
    binds = run(snapshot(*three_leaves()), policy=HDRF)[0].binds
    held = {
        name: sum(1 for key in binds if key.startswith(f"default/{name}-"))
        for name in ("ja", "jx", "jy")
    }

    assert held == {"ja": 3, "jx": 2, "jy": 1}


def test_flat_drf_fills_the_queue_first_by_name() -> None:
    binds = run(snapshot(*three_leaves()), policy=FLAT)[0].binds

    assert sorted(binds) == [f"default/ja-{i}" for i in range(6)]


def full_node(eng_weight: str) -> list[Item]:
    """8 cpu, all held: eng/prod 6 (of the 8 it asks), ml 2 (of 4); sci waits with 3 pods."""
    return [
        node("n1").resources(cpu="8", memory="16Gi"),
        queue("eng-prod").hierarchy("root/eng/prod", f"1/{eng_weight}/1"),
        queue("ml").hierarchy("root/ml", "1/1"),
        queue("sci").hierarchy("root/sci", "1/1"),
        job("prod", "eng-prod"),
        *pods("prod", 6, on="n1"),
        *(pod(f"prod-{i}").group("prod").requests(cpu="1") for i in (6, 7)),
        job("train", "ml"),
        *pods("train", 2, on="n1"),
        *(pod(f"train-{i}").group("train").requests(cpu="1") for i in (2, 3)),
        job("lab", "sci"),
        *pods("lab", 3),
    ]


def test_reclaim_takes_from_the_subtree_above_the_reclaimers_share() -> None:
    """With a pod placed, sci holds 1/8; eng, losing one, 5/8: its pods may go. ml, losing
    one, would hold 1/8 too, a tie: its pods stay."""
    outcome = run(snapshot(*full_node("1")), policy=HDRF_RECLAIM)[0]

    assert outcome.evictions == ["default/prod-5"]
    assert outcome.result.evictions[0].reason == "reclaim by default/lab-0 of queue sci"


def test_a_heavier_subtree_keeps_its_pods() -> None:
    """eng weighted 8: losing one, 5/8 per 8 is below sci's 1/8, so no pod of eng is sci's
    victim (eng's own pending pod could take one of ml's, but ml would reclaim it back next
    cycle: reclaim's settling rail keeps that plan out)."""
    assert run(snapshot(*full_node("8")), policy=HDRF_RECLAIM)[0].evictions == []


def test_flat_drf_leaves_reclaim_to_gang() -> None:
    """Without hierarchy drf proposes no reclaim victims; gang's rule (a job keeps its
    minMember) alone picks the cheapest: ml's pod, not eng's."""
    assert run(snapshot(*full_node("1")), policy=FLAT_RECLAIM)[0].evictions == ["default/train-1"]
