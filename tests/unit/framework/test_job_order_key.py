"""jobOrderKey: jobs ordered by one tuple of keys come out in the jobOrder comparisons' order;
a plugin without a key, or a key that raises, turns the session back to comparisons."""

from __future__ import annotations

import dataclasses
import functools

from hypothesis import given, settings, strategies as st

from vscheduler.actions.ordering import PriorityQueue
from vscheduler.testing import sessions
from vscheduler.testing.builders import Buildable, node, pod, podgroup, snapshot

EVERY_ORDER = """\
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: sla
- plugins:
  - name: drf
  - name: tdm
"""


@dataclasses.dataclass(frozen=True)
class Shape:
    priority: int
    created: int
    min_member: int
    running: int
    pending: int
    cpu: int
    preemptable: bool
    waiting: str | None


_SHAPES = st.builds(
    Shape,
    priority=st.integers(0, 2),
    created=st.integers(0, 2),
    min_member=st.integers(1, 3),
    running=st.integers(0, 3),
    pending=st.integers(0, 2),
    cpu=st.integers(1, 2),
    preemptable=st.booleans(),
    waiting=st.sampled_from([None, "1s", "1h"]),
)


def cluster(shapes: list[Shape]) -> list[Buildable]:
    items: list[Buildable] = [node("n1").resources(cpu="64", memory="64Gi")]
    for i, shape in enumerate(shapes):
        group = podgroup(f"j{i}").inqueue().min_member(shape.min_member)
        group = group.priority(shape.priority).created(shape.created)
        group = group.annotate("volcano.sh/preemptable", str(shape.preemptable).lower())
        if shape.waiting is not None:
            group = group.annotate("volcano.sh/sla-waiting-time", shape.waiting)
        items.append(group)
        for t in range(shape.running + shape.pending):
            member = pod(f"j{i}-{t}").group(f"j{i}").requests(cpu=str(shape.cpu))
            items.append(member.on("n1") if t < shape.running else member)
    return items


@settings(max_examples=60, deadline=None)
@given(st.lists(_SHAPES, min_size=1, max_size=8))
def test_jobs_sorted_by_key_come_out_in_the_comparisons_order(shapes: list[Shape]) -> None:
    session = sessions.open_session(snapshot(*cluster(shapes)), policy=EVERY_ORDER)
    jobs = list(session.jobs.values())
    compared = sorted(jobs, key=functools.cmp_to_key(session.dispatch.compare_jobs))

    assert all(session.dispatch.job_key(job) is not None for job in jobs)
    assert [j.key for j in session.ordered_jobs(jobs)] == [j.key for j in compared]
    heap = PriorityQueue(session.dispatch.compare_jobs, jobs, key=session.dispatch.job_key)
    assert [heap.pop().key for _ in jobs] == [j.key for j in compared]


# --- the heap ------------------------------------------------------------------------------------
def by_number(a: int, b: int) -> int:
    return (a > b) - (a < b)


def test_a_keyed_heap_pops_in_key_order() -> None:
    heap = PriorityQueue(by_number, [5, 1, 4], key=lambda n: (n,))
    heap.push(2)
    assert [heap.pop() for _ in range(4)] == [1, 2, 4, 5]


def test_a_key_answering_none_turns_the_heap_to_comparisons_at_a_push() -> None:
    keys = {5: (5,), 1: (1,), 4: (4,)}
    heap = PriorityQueue(by_number, [5, 1, 4], key=keys.get)
    heap.push(3)  # no key: every entry is made again to compare
    heap.push(0)
    assert [heap.pop() for _ in range(5)] == [0, 1, 3, 4, 5]


def test_a_key_answering_none_while_the_heap_is_made_compares_every_item() -> None:
    keys = {5: (5,), 4: (4,)}
    heap = PriorityQueue(by_number, [5, 4, 1, 3], key=keys.get)
    assert [heap.pop() for _ in range(4)] == [1, 3, 4, 5]
