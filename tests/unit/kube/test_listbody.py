"""`ListBody` reads a list's JSON as it arrives: whatever the formatting and wherever the reads
cut it, the fields and items are exactly `json.loads`'s; a body cut short or not a list object
raises `ClusterError`, never anything else."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from vscheduler.errors import ClusterError
from vscheduler.kube.listbody import ListBody

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)
field_names = st.text(max_size=8).filter(lambda name: name != "items")


def reads(data: bytes, cuts: list[int]) -> Callable[[], bytes]:
    """A `read` handing out `data` in the pieces `cuts` makes (then b"" for ever)."""
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    pieces: Iterator[bytes] = iter([data[a:b] for a, b in itertools.pairwise(bounds)])
    return lambda: next(pieces, b"")


def read_all(body: ListBody) -> tuple[dict[str, Any], list[Any]]:
    before = dict(body.fields_before_items())
    items = list(body.items())
    body.finish()
    assert before.items() <= body.fields.items()
    return body.fields, items


@settings(max_examples=300, deadline=None)
@given(
    before=st.dictionaries(field_names, values, max_size=3),
    items=st.lists(values, max_size=6) | st.none(),
    after=st.dictionaries(field_names, values, max_size=2),
    indent=st.none() | st.integers(0, 2),
    cuts=st.lists(st.integers(0, 10_000), max_size=8),
)
def test_any_list_read_in_any_pieces_reads_as_json_loads_reads_it(
    before: dict[str, Any],
    items: list[Any] | None,
    after: dict[str, Any],
    indent: int | None,
    cuts: list[int],
) -> None:
    doc = {**before, "items": items, **{k: v for k, v in after.items() if k not in before}}
    data = json.dumps(doc, indent=indent).encode()
    fields, got = read_all(ListBody(reads(data, cuts), "/api/v1/pods"))

    expected = json.loads(data)
    assert got == (expected.pop("items") or [])
    if items is None:
        expected["items"] = None
    assert fields == expected


@settings(max_examples=200, deadline=None)
@given(
    items=st.lists(
        st.dictionaries(st.text(max_size=4), values, max_size=3), min_size=1, max_size=5
    ),
    cut=st.integers(0, 10_000),
    cuts=st.lists(st.integers(0, 10_000), max_size=4),
)
def test_a_body_cut_short_raises_cluster_error(items: list[Any], cut: int, cuts: list[int]) -> None:
    data = json.dumps({"metadata": {"resourceVersion": "1"}, "items": items}).encode()
    short = data[: cut % len(data)]
    body = ListBody(reads(short, cuts), "/api/v1/pods")
    with pytest.raises(ClusterError, match="malformed list from /api/v1/pods"):
        read_all(body)


@pytest.mark.parametrize(
    "data",
    [
        b"[]",
        b"7",
        b'{"items": [1,]}',
        b'{"items": [1] "x": 2}',
        b'{"items": []} {}',
        b"{7: 1}",
        b"\xff\xfe",
        b"",
    ],
)
def test_what_is_not_a_list_object_raises_cluster_error(data: bytes) -> None:
    with pytest.raises(ClusterError, match="malformed list"):
        read_all(ListBody(reads(data, [1, 3]), "/api/v1/pods"))


def test_a_number_cut_at_a_read_is_read_whole() -> None:
    body = ListBody(reads(b'{"n": 12345, "items": [678, 9]}', [8, 25]), "/p")
    assert read_all(body) == ({"n": 12345}, [678, 9])
