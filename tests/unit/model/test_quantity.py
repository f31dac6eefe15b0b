from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from vscheduler.errors import InputError, QuantityError
from vscheduler.model.quantity import (
    SATURATED_NANOS,
    parse_nanos,
    parse_quantity,
    parse_resource_list,
    to_milli,
    to_units,
)
from vscheduler.model.resources import Resources

KI = 1024
GI = 1024**3
EI = 1024**6
INT64_MAX = 2**63 - 1


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # plain numbers and signs
        ("0", 0),
        ("1", 1),
        ("+1", 1),
        ("-1", -1),
        ("007", 7),
        ("0.1", Fraction(1, 10)),
        (".5", Fraction(1, 2)),
        ("1.", 1),
        ("-.5", Fraction(-1, 2)),
        # decimal SI suffixes
        ("5n", Fraction(5, 10**9)),
        ("4u", Fraction(4, 10**6)),
        ("100m", Fraction(1, 10)),
        ("8k", 8000),
        ("7M", 7 * 10**6),
        ("6G", 6 * 10**9),
        ("5T", 5 * 10**12),
        ("2P", 2 * 10**15),
        ("1E", 10**18),
        ("12E", 12 * 10**18),
        ("1.G", 10**9),
        ("100.035k", 100035),
        # binary SI suffixes
        ("1Ki", KI),
        ("7Mi", 7 * 1024**2),
        ("6Gi", 6 * GI),
        ("5Ti", 5 * 1024**4),
        ("4Pi", 4 * 1024**5),
        ("1Ei", EI),
        ("1.5Gi", 3 * GI // 2),
        ("0.5Mi", 512 * KI),
        # decimal exponents
        ("1e3", 1000),
        ("1E3", 1000),
        ("2e3", 2000),
        ("1E-3", Fraction(1, 1000)),
        ("1.5E-3", Fraction(3, 2000)),
        ("1.3E+6", 1_300_000),
        ("0.5e-1", Fraction(1, 20)),
        ("1e0", 1),
        # non-zero amounts round up (in magnitude) to a whole nano-unit
        ("3.001n", Fraction(4, 10**9)),
        ("1.1E-9", Fraction(2, 10**9)),
        ("0.0000000001", Fraction(1, 10**9)),
        ("0.00000012345", Fraction(124, 10**9)),
        ("0.000000000001Ki", Fraction(2, 10**9)),
        ("-0.0000000001", Fraction(-1, 10**9)),
        ("1e-100", Fraction(1, 10**9)),
        # binary amounts are capped at the int64 maximum, decimal ones are not
        ("9Ei", INT64_MAX),
        ("9223372036854775807Ki", INT64_MAX),
    ],
)
def test_a_valid_quantity_parses_to_its_exact_value(text: str, value: Fraction | int) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        (" 1", "leading or trailing whitespace"),
        ("1 ", "leading or trailing whitespace"),
        ("1x", "unknown suffix 'x'"),
        ("1e", "unknown suffix 'e'"),
        ("1Mi1", "unknown suffix 'Mi1'"),
        ("1K", "unknown suffix 'K'"),
        ("1ki", "unknown suffix 'ki'"),
        ("0.1mi", "unknown suffix 'mi'"),
        ("0.1am", "unknown suffix 'am'"),
        (".5i", "unknown suffix 'i'"),
        ("1i", "unknown suffix 'i'"),
        ("1.1.M", "unknown suffix '.M'"),
        ("1+1.0M", "unknown suffix '+1.0M'"),
        ("-3.01e-", "malformed exponent 'e-'"),
        ("1e+", "malformed exponent 'e+'"),
        ("1Ee3", "malformed exponent 'Ee3'"),
        ("aoeu", "no digits"),
        (".", "no digits"),
        ("+", "no digits"),
        ("-", "no digits"),
        ("k", "no digits"),
        ("Mi", "no digits"),
    ],
)
def test_a_malformed_quantity_is_an_error_naming_the_text_and_why(text: str, why: str) -> None:
    with pytest.raises(QuantityError) as caught:
        parse_quantity(text)
    assert str(caught.value) == f"invalid quantity '{text}': {why}"


def test_an_exponent_beyond_1000_saturates_far_above_any_ceiling_instead_of_failing() -> None:
    assert parse_nanos("1e1001") == parse_nanos("1e2000") == SATURATED_NANOS


def test_a_quantity_error_is_an_input_error() -> None:
    with pytest.raises(InputError):
        parse_quantity("1x")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(2, 2), (0, 0), (-3, -3), (0.5, Fraction(1, 2)), (1e-05, Fraction(1, 100_000))],
)
def test_a_yaml_number_is_read_from_its_text(value: float, expected: Fraction) -> None:
    assert parse_quantity(value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "invalid quantity true: must be a string or a number"),
        (float("inf"), "invalid quantity 'inf': not a finite number"),
        (float("nan"), "invalid quantity 'nan': not a finite number"),
    ],
)
def test_a_value_that_is_no_quantity_is_an_error(value: float, message: str) -> None:
    with pytest.raises(QuantityError, match=f"^{message}$"):
        parse_quantity(value)


@pytest.mark.parametrize(
    ("text", "milli", "units"),
    [
        ("100m", 100, 1),
        ("1", 1000, 1),
        ("1.5", 1500, 2),
        ("0.0005", 1, 1),
        ("1n", 1, 1),
        ("1Gi", 1000 * GI, GI),
        ("-0.0005", -1, -1),
        ("-1.5", -1500, -2),
    ],
)
def test_milli_and_unit_values_round_up_in_magnitude_as_kubernetes_does(
    text: str, milli: int, units: int
) -> None:
    q = parse_quantity(text)
    assert (to_milli(q), to_units(q)) == (milli, units)


def test_a_resource_list_holds_cpu_in_millicores_and_the_rest_in_base_units() -> None:
    raw = {"cpu": "1500m", "memory": "1Gi", "nvidia.com/gpu": 2, "ephemeral-storage": "0.5k"}
    assert parse_resource_list(raw, where="Node n1: status.capacity") == Resources(
        {"cpu": 1500, "memory": GI, "nvidia.com/gpu": 2, "ephemeral-storage": 500}
    )


def test_a_resource_list_rounds_each_amount_up() -> None:
    raw = {"cpu": "0.1m", "memory": "1.5"}
    assert parse_resource_list(raw, where="x") == Resources(cpu=1, memory=2)


def test_a_resource_list_that_is_null_or_empty_is_nothing() -> None:
    assert parse_resource_list(None, where="x") == Resources()
    assert parse_resource_list({}, where="x") == Resources()


def test_a_resource_list_accepts_surrounding_whitespace_as_the_api_server_does() -> None:
    assert parse_resource_list({"cpu": " 2 "}, where="x") == Resources(cpu=2000)


def test_a_bad_quantity_in_a_resource_list_names_where_and_the_resource() -> None:
    with pytest.raises(QuantityError) as caught:
        parse_resource_list(
            {"cpu": "1x"}, where="Pod default/p1: spec.containers[0].resources.requests"
        )
    assert str(caught.value) == (
        "Pod default/p1: spec.containers[0].resources.requests.cpu: "
        "invalid quantity '1x': unknown suffix 'x'"
    )


def test_a_negative_amount_in_a_resource_list_is_an_error() -> None:
    with pytest.raises(QuantityError) as caught:
        parse_resource_list({"memory": "-1Gi"}, where="Pod a/b: spec.overhead")
    assert str(caught.value) == "Pod a/b: spec.overhead.memory: must not be negative, got '-1Gi'"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (["cpu"], "x: must be a mapping of resource name to quantity, got a list"),
        ("2", "x: must be a mapping of resource name to quantity, got '2'"),
        ({1: "2"}, "x: resource names must be non-empty strings, got 1"),
        ({"cpu": None}, "x.cpu: invalid quantity null: must be a string or a number"),
        ({"cpu": [1]}, "x.cpu: invalid quantity a list: must be a string or a number"),
    ],
)
def test_a_malformed_resource_list_is_an_error(raw: object, message: str) -> None:
    with pytest.raises(QuantityError) as caught:
        parse_resource_list(raw, where="x")
    assert str(caught.value) == message


@given(st.integers(min_value=0, max_value=10**12))
def test_a_binary_kilo_suffix_multiplies_by_1024(n: int) -> None:
    assert parse_quantity(f"{n}Ki") == n * 1024


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_an_integer_parses_to_itself_as_text_or_number(n: int) -> None:
    assert parse_quantity(str(n)) == n == parse_quantity(n)


@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=-9, max_value=18))
def test_an_exponent_form_equals_the_scaled_integer(n: int, e: int) -> None:
    assert parse_quantity(f"{n}e{e}") == Fraction(n) * Fraction(10) ** e


@given(st.integers(min_value=0, max_value=10**15))
def test_millicores_read_back_exactly(m: int) -> None:
    assert to_milli(parse_quantity(f"{m}m")) == m


@given(st.decimals(min_value=0, max_value=10**6, allow_nan=False, places=12))
def test_a_decimal_rounds_up_to_nano_units_and_never_down(d: object) -> None:
    value = parse_quantity(str(d))
    exact = Fraction(str(d))
    assert exact <= value < exact + Fraction(1, 10**9)
    assert (value * 10**9).denominator == 1
