"""The pod table's per-job member counts stay exact under any sequence of puts and removes
(they decide which pod arrivals wake a cycle: a gang short of members does not), and its
snapshot order (creation time, then uid) is exact whenever it is asked for."""

from __future__ import annotations

import collections
import datetime as dt

from hypothesis import given, settings, strategies as st

from vscheduler.cache.tables import PodTable
from vscheduler.model.facts import TaskFacts
from vscheduler.model.resources import EMPTY
from vscheduler.model.status import TaskStatus

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
UIDS = [f"u{i}" for i in range(5)]
JOBS = ["ns/a", "ns/b", "ns/c"]


def facts(uid: str, name: str, job: str, created: dt.datetime = T0) -> TaskFacts:
    return TaskFacts(
        created=created,
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


timed = st.tuples(
    st.sampled_from(["put", "put", "put", "put", "drop", "remove", "remove", "order"]),
    st.sampled_from([f"u{i}" for i in range(12)]),
    st.integers(0, 3),  # seconds: pods of one second arrive in any uid order
)


@settings(max_examples=300, deadline=None)
@given(st.lists(timed, min_size=8, max_size=60))
def test_the_snapshot_order_is_creation_time_then_uid_whenever_asked(
    ops: list[tuple[str, str, int]],
) -> None:
    table = PodTable()
    for kind, uid, second in ops:
        created = T0 + dt.timedelta(seconds=second)  # a put again may move a pod in the order
        if kind == "put":
            table.put(uid, {}, facts(uid, f"p-{uid}", "ns/a", created), f"Pod ns/p-{uid}")
        elif kind == "drop":
            table.put(uid, {}, None, f"Pod ns/p-{uid}")
        elif kind == "remove":
            table.remove(uid)
        else:
            held = table.ordered()
            assert list(held) == sorted(held, key=lambda u: (held[u].created, u))
    held = table.ordered()
    assert list(held) == sorted(held, key=lambda u: (held[u].created, u))


def test_the_table_is_rebuilt_in_order_once_the_pods_removed_reach_a_quarter() -> None:
    """Removed pods leave deleted slots in the table's dict, which make its copy at every
    snapshot item by item (`model.compact`): past a quarter of the pods held it is rebuilt."""
    table = PodTable()
    for i in range(12):
        uid = f"u{i:02d}"
        table.put(uid, {}, facts(uid, f"p{i}", "ns/a", T0 + dt.timedelta(seconds=i)), "Pod")
    first = table.ordered()
    for uid in ("u00", "u01"):
        table.remove(uid)
    assert table.ordered() is first  # 2 holes, 10 pods
    table.remove("u02")
    rebuilt = table.ordered()  # 3 holes, 9 pods
    assert rebuilt is not first
    assert list(rebuilt) == [f"u{i:02d}" for i in range(3, 12)]
    assert table.ordered() is rebuilt
