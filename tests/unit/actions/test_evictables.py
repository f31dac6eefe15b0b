"""The victim table: who may be evicted at all, and the per-node lower bounds the search uses."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from vscheduler.actions.evictables import Evictables, is_candidate
from vscheduler.framework.session import Session
from vscheduler.model.status import TaskStatus
from vscheduler.testing import sessions
from vscheduler.testing.builders import PodBuilder, node, pod, podgroup, snapshot

POLICY = 'actions: ""\ntiers:\n- plugins:\n  - name: priority\n'


def open_session(*pods: PodBuilder, nodes: int = 2) -> Session:
    return sessions.open_session(
        snapshot(
            *(node(f"n{i}").resources(cpu="8", memory="32Gi") for i in range(nodes)),
            podgroup("pg").inqueue(),
            *pods,
        ),
        policy=POLICY,
    )


@pytest.mark.parametrize(
    ("builder", "expected"),
    [
        pytest.param(pod("p").group("pg").requests(cpu="1").on("n0"), True, id="running"),
        pytest.param(
            pod("p").group("pg").requests(cpu="1").on("n0", TaskStatus.BOUND), True, id="bound"
        ),
        pytest.param(
            pod("p").group("pg").requests(cpu="1").on("n0", TaskStatus.BINDING),
            False,
            id="binding",
        ),
        pytest.param(
            pod("p").group("pg").requests(cpu="1").on("n0", TaskStatus.RELEASING),
            False,
            id="releasing",
        ),
        pytest.param(pod("p").group("pg").requests(cpu="1"), False, id="pending"),
        pytest.param(pod("p").group("pg").on("n0"), True, id="best-effort-frees-a-pod-slot"),
        pytest.param(
            pod("p")
            .group("pg")
            .requests(cpu="1")
            .on("n0")
            .annotate("volcano.sh/preemptable", "false"),
            False,
            id="opted-out-by-annotation",
        ),
        pytest.param(
            pod("p").group("pg").requests(cpu="1").on("n0").label("volcano.sh/preemptable", "0"),
            False,
            id="opted-out-by-label",
        ),
        pytest.param(
            pod("p")
            .group("pg")
            .requests(cpu="1")
            .on("n0")
            .annotate("volcano.sh/preemptable", "yes"),
            False,
            id="malformed-means-not-preemptable",
        ),
        pytest.param(
            pod("p")
            .group("pg")
            .requests(cpu="1")
            .on("n0")
            .annotate("volcano.sh/preemptable", "true")
            .preemptable(),
            True,
            id="opted-in",
        ),
    ],
)
def test_who_may_be_evicted_at_all(builder: PodBuilder, expected: bool) -> None:
    session = open_session(builder)

    assert is_candidate(session.tasks["default/p"]) is expected


def test_a_pod_in_eviction_backoff_has_a_row_marked_refused_that_is_never_alive() -> None:
    session = open_session(
        pod("a").group("pg").requests(cpu="1").on("n0"),
        pod("b").group("pg").requests(cpu="1").on("n0").eviction_refused(),
    )
    table = Evictables(session)
    b = session.tasks["default/b"]

    assert not is_candidate(b)
    assert [t.key for t in table.tasks] == ["default/a", "default/b"]
    assert table.refused.tolist() == [False, True]
    assert table.alive.tolist() == [True, False]
    table.kill(b)
    table.revive(b)
    assert table.alive.tolist() == [True, False]


def test_a_pod_without_the_preemptable_key_may_be_evicted_as_in_volcano_since_1_7() -> None:
    facts = pod("p").build()

    assert not facts.preemptable
    assert not facts.preemption_opt_out


def test_rows_are_sorted_by_node_then_pod_and_follow_evictions() -> None:
    session = open_session(
        pod("b").group("pg").requests(cpu="1").on("n1"),
        pod("a").group("pg").requests(cpu="1").on("n1"),
        pod("c").group("pg").requests(cpu="2").on("n0"),
    )
    table = Evictables(session)
    everyone = np.ones(len(table), dtype=np.bool_)

    assert [t.key for t in table.tasks] == ["default/c", "default/a", "default/b"]
    assert [t.key for t in table.on_node(1, everyone)] == ["default/a", "default/b"]
    table.kill(session.tasks["default/a"])
    assert [t.key for t in table.on_node(1, everyone & table.alive)] == ["default/b"]
    table.revive(session.tasks["default/a"])
    assert table.alive.all()


def brute_force(
    sizes: list[list[int]], priorities: list[list[int]], masks: list[list[bool]], need: list[int]
) -> list[tuple[float, float]]:
    """Per node: the smallest subset of masked rows covering `need` (every subset tried)."""
    out = []
    for node_sizes, node_priorities, node_mask, wanted in zip(
        sizes, priorities, masks, need, strict=True
    ):
        rows = [i for i, keep in enumerate(node_mask) if keep]
        if wanted <= 0:
            out.append((0.0, float("-inf")))
            continue
        fewest = next(
            (
                float(k)
                for k in range(1, len(rows) + 1)
                if any(
                    sum(node_sizes[i] for i in c) >= wanted for c in itertools.combinations(rows, k)
                )
            ),
            float("inf"),
        )
        lowest = min((float(node_priorities[i]) for i in rows), default=float("inf"))
        out.append((fewest, float("inf") if fewest == float("inf") else lowest))
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.integers(1, 4), st.integers(0, 3), st.booleans()), min_size=0, max_size=4
        ),
        min_size=1,
        max_size=4,
    ),
    st.lists(st.integers(-2, 9), min_size=4, max_size=4),
)
def test_bounds_are_the_fewest_rows_that_could_cover_the_need(
    layout: list[list[tuple[int, int, bool]]], needs: list[int]
) -> None:
    pods = [
        pod(f"p-{n}-{i}").group("pg").requests(cpu=str(size)).priority(prio).on(f"n{n}")
        for n, rows in enumerate(layout)
        for i, (size, prio, _) in enumerate(rows)
    ]
    session = open_session(*pods, nodes=len(layout))
    table = Evictables(session)
    keep = {
        f"default/p-{n}-{i}": k for n, rows in enumerate(layout) for i, (_, _, k) in enumerate(rows)
    }
    mask = np.array([keep[t.key] for t in table.tasks], dtype=np.bool_)
    need = needs[: len(layout)]
    deficit = np.zeros((len(layout), len(session.ledger.dims)), dtype=np.int64)
    deficit[:, 0] = [max(n, 0) * 1000 for n in need]
    cols = np.array([0], dtype=np.int64)

    fewest, lowest = table.bounds(mask, deficit, cols)

    expected = brute_force(
        [[size * 1000 for size, _, _ in rows] for rows in layout],
        [[prio for _, prio, _ in rows] for rows in layout],
        [[k for _, _, k in rows] for rows in layout],
        [max(n, 0) * 1000 for n in need],
    )
    got = [
        (float(f), float(lo) if np.isfinite(f) else float("inf"))
        for f, lo in zip(fewest, lowest, strict=True)
    ]
    assert got == expected
    for n in range(len(layout)):
        single = table.node_bounds(n, mask, deficit[n], cols)
        assert (single[0], single[1] if np.isfinite(single[0]) else float("inf")) == expected[n]
