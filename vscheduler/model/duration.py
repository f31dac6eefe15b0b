"""Go's `time.ParseDuration`, exactly: a duration string to whole nanoseconds.

Owns: the grammar (`[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+`, or a bare `0`, with the units `ns`, `us`,
`µs`, `μs`, `ms`, `s`, `m`, `h`), Go's arithmetic (a fraction's digits beyond what a uint64
holds are ignored; a fraction is added through float64, as Go adds it) and its overflow rule
(more than 2^63-1 ns, about 292 years, is an error; -2^63 ns is not). For annotations Volcano
parses with it (`volcano.sh/cooldown-time`): the same strings are accepted, with the same value.
A number beyond that range raises `DurationOverflowError` (a `DurationError` with Go's message),
so a caller may say what the limit is. Must not: read policies (`conf.arguments.parse_go_duration`
reads arguments, in float seconds, through this).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

_UNITS: Final[Mapping[str, int]] = MappingProxyType(
    {
        "ns": 1,
        "us": 1_000,
        "µs": 1_000,  # U+00B5 micro sign
        "μs": 1_000,  # U+03BC Greek small letter mu
        "ms": 1_000_000,
        "s": 1_000_000_000,
        "m": 60_000_000_000,
        "h": 3_600_000_000_000,
    }
)
_LIMIT: Final = 1 << 63
_DIGITS: Final = frozenset("0123456789")


class DurationError(ValueError):
    """Not a Go duration; the message is Go's (`time: invalid duration "x"`, ...)."""


class DurationOverflowError(DurationError):
    """A number beyond Go's range (more than 2^63-1 ns, or below -2^63 ns); Go's message."""


def parse_go_duration_ns(text: str) -> int:
    """The nanoseconds of Go duration `text` ("600s", "1h30m", "-1.5h", "0", ".5s").

    Raises DurationError (with Go's message) when Go's `time.ParseDuration` refuses it.
    """
    invalid = f'time: invalid duration "{text}"'
    rest, negative = text, False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise DurationError(invalid)
    total = 0
    while rest:
        value, rest = _component(rest, text)
        total += value
        if total > _LIMIT:
            raise DurationOverflowError(invalid)
    if negative:
        return -total
    if total > _LIMIT - 1:
        raise DurationOverflowError(invalid)
    return total


def _component(rest: str, text: str) -> tuple[int, str]:
    """The nanoseconds of the number and unit `rest` starts with (`1.5h` of `1.5h30m`), and
    what follows; Go's checks, and its messages about `text`."""
    invalid = f'time: invalid duration "{text}"'
    if rest[0] != "." and rest[0] not in _DIGITS:
        raise DurationError(invalid)
    whole, rest, consumed = _leading_int(rest, invalid)
    fraction, scale, post = 0, 1.0, False
    if rest[:1] == ".":
        fraction, scale, rest, post = _leading_fraction(rest[1:])
    if not consumed and not post:
        raise DurationError(invalid)
    end = 0
    while end < len(rest) and rest[end] != "." and rest[end] not in _DIGITS:
        end += 1
    if end == 0:
        raise DurationError(f'time: missing unit in duration "{text}"')
    unit_text, rest = rest[:end], rest[end:]
    unit = _UNITS.get(unit_text)
    if unit is None:
        raise DurationError(f'time: unknown unit "{unit_text}" in duration "{text}"')
    if whole > _LIMIT // unit:
        raise DurationOverflowError(invalid)
    whole *= unit
    if fraction > 0:
        whole += int(float(fraction) * (float(unit) / scale))
        if whole > _LIMIT:
            raise DurationOverflowError(invalid)
    return whole, rest


def _leading_int(text: str, invalid: str) -> tuple[int, str, bool]:
    """Go's `leadingInt`: the leading digits' value (an error past 2^63), the rest, and
    whether any digit was read."""
    value, i = 0, 0
    while i < len(text) and text[i] in _DIGITS:
        if value > _LIMIT // 10:
            raise DurationOverflowError(invalid)
        value = value * 10 + ord(text[i]) - 48
        if value > _LIMIT:
            raise DurationOverflowError(invalid)
        i += 1
    return value, text[i:], i > 0


def _leading_fraction(text: str) -> tuple[int, float, str, bool]:
    """Go's `leadingFraction`: the digits after a point as an integer and its scale (digits
    that would overflow are read and ignored), the rest, and whether any digit was read."""
    value, scale, i, overflow = 0, 1.0, 0, False
    while i < len(text) and text[i] in _DIGITS:
        if not overflow:
            if value > (_LIMIT - 1) // 10:
                overflow = True
            else:
                following = value * 10 + ord(text[i]) - 48
                if following > _LIMIT:
                    overflow = True
                else:
                    value, scale = following, scale * 10
        i += 1
    return value, scale, text[i:], i > 0
