"""Hierarchical drf's tree arithmetic (`vscheduler.plugins.drf.tree`): leaves' saturation,
nodes' rescaled allocations and shares, and Volcano's `compareQueues` over them."""

from __future__ import annotations

import pytest

from vscheduler.model.resources import Resources
from vscheduler.plugins.drf.tree import UNBUILT, Leaf, NodeShare, Path, Tree, saturated

CPU, GPU = "cpu", "nvidia.com/gpu"
DIVISORS = ((CPU, 10_000), (GPU, 10))
"""10 cpu and 10 GPUs."""


def cpu(milli: int) -> Resources:
    return Resources({CPU: milli})


def gpu(count: int) -> Resources:
    return Resources({GPU: count})


def tree(
    leaves: dict[str, tuple[Path, Resources]], weights: dict[Path, float] | None = None
) -> Tree:
    return Tree(
        (Leaf(job, path, asks) for job, (path, asks) in leaves.items()), weights or {}, DIVISORS
    )


def total(held: dict[str, Resources]) -> Resources:
    out = Resources()
    for amount in held.values():
        out = out + amount
    return out


def evaluate(shape: Tree, held: dict[str, Resources]) -> dict[Path, NodeShare]:
    return shape.evaluate(held.__getitem__, total(held))


# --- a leaf: a job ------------------------------------------------------------------------------
def test_a_job_holding_part_of_what_it_asks_is_not_saturated() -> None:
    assert not saturated(cpu(4000), cpu(8000), frozenset({CPU, GPU}))


def test_a_job_holding_all_it_asks_of_one_resource_is_saturated() -> None:
    assert saturated(cpu(8000) + gpu(1), cpu(8000) + gpu(4), frozenset({CPU, GPU}))


def test_a_job_asking_a_resource_the_cluster_has_given_out_is_saturated() -> None:
    """cpu is no longer demanding (all of it is held), and the job holds and asks cpu."""
    assert saturated(cpu(1000), cpu(8000), frozenset({GPU}))


def test_a_job_holding_nothing_is_never_saturated() -> None:
    assert not saturated(Resources(), cpu(8000), frozenset())


# --- a node: its children rescaled --------------------------------------------------------------
def complementary() -> Tree:
    """The design's first case: n2's children use complementary resources."""
    return tree(
        {
            "x": (("n2", "n21"), cpu(10_000)),
            "y": (("n2", "n22"), gpu(10)),
            "z": (("n1",), gpu(10)),
        }
    )


def test_a_nodes_children_are_scaled_to_its_least_dominant_share() -> None:
    """x holds 80% of the cpu, y 20% of the GPUs: n2 counts x scaled to 20% (2 cpu) plus y's 2
    GPUs, a share of 0.2, not x's 0.8."""
    held = {"x": cpu(8000), "y": gpu(2), "z": gpu(3)}

    shares = evaluate(complementary(), held)

    assert shares[("n2", "n21")] == NodeShare(0.8, False)
    assert shares[("n2", "n22")] == NodeShare(0.2, False)
    assert shares[("n2",)] == NodeShare(0.2, False)
    assert shares[("n1",)] == NodeShare(0.3, False)
    assert () not in shares  # the root is never compared


def test_so_the_subtree_of_complementary_users_comes_first() -> None:
    shape = complementary()
    shares = evaluate(shape, {"x": cpu(8000), "y": gpu(2), "z": gpu(3)})

    assert shape.compare(shares, ("n2", "n22"), ("n1",)) == pytest.approx(-0.1)
    assert shape.compare(shares, ("n1",), ("n2", "n21")) == pytest.approx(0.1)


def test_a_saturated_child_is_added_as_it_is() -> None:
    """x holds all it asks (4 cpu): saturated, it is not scaled down to y's 0.2."""
    shape = tree({"x": (("n", "a"), cpu(4000)), "y": (("n", "b"), gpu(10))})

    shares = evaluate(shape, {"x": cpu(4000), "y": gpu(2)})

    assert shares[("n", "a")] == NodeShare(0.4, True)
    assert shares[("n",)] == NodeShare(0.4, False)


def test_a_node_is_saturated_when_every_child_is() -> None:
    shape = tree({"x": (("n", "a"), cpu(4000)), "y": (("n", "b"), gpu(2))})

    assert evaluate(shape, {"x": cpu(4000), "y": gpu(2)})[("n",)] == NodeShare(0.4, True)


def test_a_child_holding_nothing_adds_nothing_but_keeps_its_node_wanting() -> None:
    shape = tree({"x": (("n", "a"), cpu(4000)), "y": (("n", "b"), gpu(2))})

    shares = evaluate(shape, {"x": cpu(4000), "y": Resources()})

    assert shares[("n",)] == NodeShare(0.4, False)


def test_the_same_allocations_give_the_same_shares_bit_for_bit() -> None:
    held = {"x": cpu(7000), "y": gpu(3), "z": gpu(1)}

    assert evaluate(complementary(), held) == evaluate(
        complementary(), dict(reversed(held.items()))
    )


# --- comparing queues ---------------------------------------------------------------------------
def test_shares_are_compared_per_weight() -> None:
    """n1 holds 0.3 at weight 2 (0.15 a unit), n2 0.2 at weight 1: n1 comes first."""
    shape = tree({"x": (("n2",), cpu(10_000)), "z": (("n1",), gpu(10))}, weights={("n1",): 2.0})
    shares = evaluate(shape, {"x": cpu(2000), "z": gpu(3)})

    assert shape.compare(shares, ("n1",), ("n2",)) == pytest.approx(-0.05)


def test_a_saturated_level_comes_after_one_that_wants_more_whatever_the_shares() -> None:
    shape = tree({"x": (("n1",), cpu(1000)), "z": (("n2",), gpu(10))})
    shares = evaluate(shape, {"x": cpu(1000), "z": gpu(5)})

    assert shape.compare(shares, ("n1",), ("n2",)) == 1.0
    assert shape.compare(shares, ("n2",), ("n1",)) == -1.0


def test_a_tie_at_one_level_is_decided_at_the_next() -> None:
    shape = tree({"x": (("eng", "dev"), cpu(10_000)), "y": (("eng", "prod"), cpu(10_000))})
    shares = evaluate(shape, {"x": cpu(3000), "y": cpu(1000)})

    assert shape.compare(shares, ("eng", "prod"), ("eng", "dev")) == pytest.approx(-0.2)


def test_paths_of_different_depth_compare_down_to_the_shallower() -> None:
    shape = tree({"x": (("eng", "dev"), cpu(10_000)), "y": (("eng", "prod"), cpu(10_000))})
    shares = evaluate(shape, {"x": cpu(3000), "y": cpu(1000)})

    assert shape.compare(shares, ("eng",), ("eng", "dev")) == 0.0
    assert shape.compare(shares, (), ("eng", "dev")) == 0.0  # a queue of the root ties with all


def test_a_node_no_job_hangs_below_compares_as_empty_and_wanting() -> None:
    shape = tree({"x": (("eng",), cpu(10_000))})
    shares = evaluate(shape, {"x": cpu(3000)})

    assert ("sci",) not in shares
    assert NodeShare(0.0, False) == UNBUILT
    assert shape.compare(shares, ("sci",), ("eng",)) == pytest.approx(-0.3)


def test_jobs_of_the_root_count_only_in_the_total() -> None:
    """A job of a queue without a path is no leaf; its cpu still makes cpu not demanding."""
    shape = tree({"r": ((), cpu(10_000)), "x": (("eng",), cpu(10_000))})

    shares = shape.evaluate({"x": cpu(2000)}.__getitem__, cpu(10_000))

    assert len(shape) == 1
    assert shares[("eng",)] == NodeShare(0.2, True)
