"""`compacted`: a dict is kept while the keys popped from it are under a quarter of its entries,
and rebuilt, with the same entries in the same order, once they reach it."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from vscheduler.model.compact import compacted


def test_a_dict_with_few_holes_is_kept_and_one_with_many_is_rebuilt_in_order() -> None:
    d = {f"k{i}": i for i in range(8)}
    for key in ("k1", "k2"):
        d[key] = d.pop(key)  # moved to the end: two deleted slots
    kept, holes = compacted(d, 2)
    assert kept is d
    assert holes == 2
    rebuilt, holes = compacted(d, 3)
    assert rebuilt is not d
    assert holes == 0
    assert list(rebuilt.items()) == list(d.items())


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=3), st.integers(), max_size=20), st.integers(0, 30))
def test_compacted_never_changes_what_a_dict_holds_or_its_order(d: dict[str, int], n: int) -> None:
    out, holes = compacted(d, n)
    assert list(out.items()) == list(d.items())
    assert (out is d) == (n * 4 <= len(d))
    assert holes == (n if out is d else 0)
