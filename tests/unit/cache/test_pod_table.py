"""The pod table's per-job member counts stay exact under any sequence of puts and removes
(they decide which pod arrivals wake a cycle: a gang short of members does not)."""

from __future__ import annotations

import collections

from hypothesis import given, settings, strategies as st

from vscheduler.cache.tables import PodTable
from vscheduler.model.facts import TaskFacts
from vscheduler.model.resources import EMPTY
from vscheduler.model.status import TaskStatus

UIDS = [f"u{i}" for i in range(5)]
JOBS = ["ns/a", "ns/b", "ns/c"]


def facts(uid: str, name: str, job: str) -> TaskFacts:
    return TaskFacts(
        uid=uid,
        namespace="ns",
        name=name,
        job=job,
        group_name=job.partition("/")[2],
        resreq=EMPTY,
        status=TaskStatus.PENDING,
    )


operation = st.tuples(
    st.sampled_from(["put", "drop", "remove"]),
    st.sampled_from(UIDS),
    st.sampled_from(["p0", "p1", "p2", "p3"]),  # names shared by uids: a name changing hands
    st.sampled_from(JOBS),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(operation, max_size=40))
def test_member_counts_match_the_pods_held(ops: list[tuple[str, str, str, str]]) -> None:
    table = PodTable()
    for kind, uid, name, job in ops:
        if kind == "put":
            table.put(uid, {}, facts(uid, name, job), f"Pod ns/{name}")
        elif kind == "drop":  # the pod stopped mattering (another scheduler's, finished)
            table.put(uid, {}, None, f"Pod ns/{name}")
        else:
            table.remove(uid)
        counted = collections.Counter(f.job for f in table.facts.values())
        assert table.members == dict(counted)
