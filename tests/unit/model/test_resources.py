"""Resources: exact integer algebra (hypothesis)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from vscheduler.model.resources import Resources, format_resources, total

names = st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage"])
amounts = st.dictionaries(names, st.integers(-(10**12), 10**12), max_size=4)


@given(amounts, amounts)
def test_addition_then_subtraction_gives_back_the_first(
    a: dict[str, int], b: dict[str, int]
) -> None:
    ra, rb = Resources(a), Resources(b)
    assert (ra + rb) - rb == ra
    assert ra + rb == rb + ra


@given(amounts, amounts)
def test_fits_in_holds_exactly_when_every_named_amount_is_within(
    a: dict[str, int], b: dict[str, int]
) -> None:
    ra, rb = Resources(a), Resources(b)
    expected = all(v <= b.get(k, 0) for k, v in a.items() if v)
    assert ra.fits_in(rb) is expected


@given(amounts, amounts)
def test_max_and_min_are_per_resource(a: dict[str, int], b: dict[str, int]) -> None:
    ra, rb = Resources(a), Resources(b)
    for name in set(a) | set(b):
        assert ra.max(rb).get(name) == max(a.get(name, 0), b.get(name, 0))
        assert ra.min(rb).get(name) == min(a.get(name, 0), b.get(name, 0))


@given(st.lists(amounts, max_size=5))
def test_total_equals_repeated_addition(parts: list[dict[str, int]]) -> None:
    acc = Resources()
    for part in parts:
        acc = acc + Resources(part)
    assert total(Resources(p) for p in parts) == acc


def test_zero_amounts_are_dropped_and_equal_values_hash_alike() -> None:
    assert Resources(cpu=0, memory=5) == Resources(memory=5)
    assert hash(Resources(cpu=1, memory=2)) == hash(Resources({"memory": 2, "cpu": 1}))
    assert Resources().is_empty()


def test_fits_in_named_ignores_resources_the_limit_does_not_name() -> None:
    assert Resources(cpu=2000, memory=10).fits_in_named(Resources(cpu=2000))
    assert not Resources(cpu=2001).fits_in_named(Resources(cpu=2000))


def test_resources_read_as_people_write_them() -> None:
    assert format_resources(Resources(cpu=1500, memory=2 << 30)) == "cpu 1500m, memory 2Gi"
    assert format_resources(Resources(cpu=2000)) == "cpu 2"
    assert format_resources(Resources()) == "nothing"
