"""`parse_go_duration_ns` accepts exactly what Go's `time.ParseDuration` accepts, with the same
nanoseconds: every value below was printed by Go 1.2x's ParseDuration (`int64(d)`, or an error),
fractions past a uint64's digits, float rounding of a fraction and the int64 edges included."""

from __future__ import annotations

import pytest

from vscheduler.model.duration import DurationError, DurationOverflowError, parse_go_duration_ns

ACCEPTED = [
    ("600s", 600_000_000_000),
    ("0", 0),
    ("-0", 0),
    ("+0", 0),
    ("0s", 0),
    ("1h30m", 5_400_000_000_000),
    ("-1.5h", -5_400_000_000_000),
    (".5s", 500_000_000),
    ("5.s", 5_000_000_000),
    ("9223372036854775807ns", 9223372036854775807),
    ("-9223372036854775808ns", -9223372036854775808),
    ("2562047h", 9223369200000000000),
    ("2562047h47m16.854775807s", 9223372036854775807),
    ("-2562047h47m16.854775808s", -9223372036854775808),
    ("0.1234567890123456789012345s", 123456789),
    ("1.000000000000000000001h", 3_600_000_000_000),
    ("3µs", 3000),  # U+00B5
    ("3μs", 3000),  # U+03BC
    ("3us", 3000),
    ("10m10m", 1_200_000_000_000),
    ("1.5m0.5s", 90_500_000_000),
    ("-600s", -600_000_000_000),
    ("+600s", 600_000_000_000),
    ("0.0000000001s", 0),
    ("0.9999999999999999999999h", 3_600_000_000_000),
]
REFUSED = [
    "600abcde",
    "00",
    ".s",
    "-.s",
    "1.",
    "s",
    "-",
    "",
    "+",
    "1h 30m",
    "9223372036854775808ns",
    "-9223372036854775809ns",
    "2562048h",
    "2562047h47m16.854775808s",
    "99999999999999999999ns",
    "1e3s",
    "1H",
    " 1s",
    "1s ",
    "1..5s",
    "123456789012345678901234567890ns",
]


@pytest.mark.parametrize(("text", "nanoseconds"), ACCEPTED)
def test_a_go_duration_reads_as_go_reads_it(text: str, nanoseconds: int) -> None:
    assert parse_go_duration_ns(text) == nanoseconds


@pytest.mark.parametrize("text", REFUSED)
def test_what_go_refuses_is_refused(text: str) -> None:
    with pytest.raises(DurationError):
        parse_go_duration_ns(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("600abcde", 'time: unknown unit "abcde" in duration "600abcde"'),
        ("600", 'time: missing unit in duration "600"'),
        ("2562048h", 'time: invalid duration "2562048h"'),
    ],
)
def test_the_error_says_what_go_says(text: str, message: str) -> None:
    with pytest.raises(DurationError, match=f"^{message}$"):
        parse_go_duration_ns(text)


@pytest.mark.parametrize(
    ("text", "overflow"),
    [
        ("9223372036854775808ns", True),
        ("-9223372036854775809ns", True),
        ("2562048h", True),
        ("2562047h47m16.854775808s", True),
        ("1h2562047h", True),
        ("600abcde", False),
        ("600", False),
        ("1..5s", False),
    ],
)
def test_a_number_beyond_gos_range_is_told_apart_from_a_malformed_duration(
    text: str, overflow: bool
) -> None:
    with pytest.raises(DurationError) as caught:
        parse_go_duration_ns(text)
    assert isinstance(caught.value, DurationOverflowError) is overflow
