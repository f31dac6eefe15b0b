"""Typed reading of a plugin's or an action's `arguments`, checked once when the policy is loaded.

A plugin builds an `ArgumentReader` over its arguments, asks for each value with a type and a
default, and calls `finish()`: every wrong value and every argument nobody asked for is reported
together in one `PluginArgsError`. Values are accepted as leniently as Volcano reads them (a YAML
int, an integral float or a numeric string for an int; `true`/`false` or their string spellings for
a bool). Also owns reading Go durations in seconds ("30s", "1h30m", "500ms"; Go's exact grammar
and range, `model.duration`) and Go's boolean spellings, which `vscheduler run`'s flags share.
Does no I/O.
"""

from __future__ import annotations

import builtins
import math
import re
from collections.abc import Collection, Mapping
from types import MappingProxyType
from typing import Final

from vscheduler.conf.suggest import describe, did_you_mean
from vscheduler.errors import PluginArgsError
from vscheduler.model.duration import DurationError, DurationOverflowError, parse_go_duration_ns

_INT_TEXT: Final = re.compile(r"[+-]?[0-9]+")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_INT_DIGITS: Final = 40
"""More digits than any 64-bit integer has (and far fewer than Python refuses to convert)."""
_FLOAT_TEXT: Final = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# strconv.ParseBool's spellings: Volcano read string-typed arguments with it.
_BOOL_TEXT: Final[Mapping[str, bool]] = MappingProxyType(
    {
        **dict.fromkeys(("true", "True", "TRUE", "t", "T", "1"), True),
        **dict.fromkeys(("false", "False", "FALSE", "f", "F", "0"), False),
    }
)
_DURATION_HINT: Final = "a duration like '30s', '5m', '1h30m' or '500ms'"
_GO_LONGEST: Final = "2562047h47m16.854775807s"
"""Go's longest duration (2^63-1 ns): a longer one is an error, as in Go."""


def parse_go_duration(text: str) -> float:
    """Seconds in a Go `time.ParseDuration` string ("300ms", "1h30m", "-1.5h", "0"), read as Go
    reads it (`model.duration`), its range included.

    Raises ValueError when `text` is not one: `DurationOverflowError` (a ValueError) when it is
    a number beyond Go's range (longer than 2562047h47m16.854775807s).
    """
    try:
        return parse_go_duration_ns(text) / 1e9
    except DurationOverflowError:
        raise DurationOverflowError(f"invalid duration {text!r}: beyond Go's range") from None
    except DurationError:
        raise ValueError(f"invalid duration {text!r}") from None


def parse_go_bool(text: str) -> bool:
    """The bool in one of Go's strconv.ParseBool spellings ("true", "True", "1", "f", ...).

    Raises ValueError when `text` is not one.
    """
    if text not in _BOOL_TEXT:
        raise ValueError(f"invalid boolean {text!r}")
    return _BOOL_TEXT[text]


def _as_int(value: object) -> int | None:
    """A 64-bit integer, as Volcano reads one into a Go int, or None."""
    if isinstance(value, bool):
        return None
    integral_float = isinstance(value, float) and math.isfinite(value) and value.is_integer()
    digits = isinstance(value, str) and _INT_TEXT.fullmatch(value) and len(value) < _INT_DIGITS
    if not (isinstance(value, int) or integral_float or digits):
        return None
    number = int(value)  # type: ignore[call-overload]
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def _as_float(value: object) -> float | None:
    """A finite float, or None (an integer too large for a float is not a number here)."""
    if isinstance(value, bool):
        return None
    number: float
    if isinstance(value, int):
        try:
            number = float(value)
        except OverflowError:
            return None
    elif isinstance(value, float):
        number = value
    elif isinstance(value, str) and _FLOAT_TEXT.fullmatch(value):
        number = float(value)
    else:
        return None
    return number if math.isfinite(number) else None


def _range_phrase(noun: str, minimum: object | None, maximum: object | None) -> str:
    if minimum is not None and maximum is not None:
        return f"{noun} >= {minimum} and <= {maximum}"
    if minimum is not None:
        return f"{noun} >= {minimum}"
    if maximum is not None:
        return f"{noun} <= {maximum}"
    return noun


def _in_range(value: float, minimum: float | None, maximum: float | None) -> bool:
    return (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


class ArgumentReader:
    """Reads `arguments` with types and defaults, collecting every problem until `finish()`."""

    def __init__(self, arguments: Mapping[str, object], *, owner: builtins.str) -> None:
        self._arguments = arguments
        self._owner = owner
        self._asked: set[builtins.str] = set()
        self._problems: list[builtins.str] = []

    @property
    def problems(self) -> tuple[builtins.str, ...]:
        """The problems found so far, each a full sentence naming owner and argument."""
        return tuple(self._problems)

    def int(
        self,
        key: builtins.str,
        default: builtins.int,
        *,
        minimum: builtins.int | None = None,
        maximum: builtins.int | None = None,
    ) -> builtins.int:
        """An integer argument: a YAML int, an integral float, or a string of digits."""
        if not self._present(key):
            return default
        raw = self._arguments[key]
        value = _as_int(raw)
        if value is None or not _in_range(value, minimum, maximum):
            self._wrong(key, _range_phrase("an integer", minimum, maximum), raw)
            return default
        return value

    def float(
        self,
        key: builtins.str,
        default: builtins.float,
        *,
        minimum: builtins.float | None = None,
        maximum: builtins.float | None = None,
    ) -> builtins.float:
        """A finite number: a YAML int or float, or a numeric string."""
        if not self._present(key):
            return default
        raw = self._arguments[key]
        value = _as_float(raw)
        if value is None or not _in_range(value, minimum, maximum):
            self._wrong(key, _range_phrase("a number", minimum, maximum), raw)
            return default
        return value

    def bool(self, key: builtins.str, default: builtins.bool) -> builtins.bool:
        """A YAML bool, or a string Go's strconv.ParseBool accepts ("true", "false", "1", ...)."""
        if not self._present(key):
            return default
        raw = self._arguments[key]
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw in _BOOL_TEXT:
            return _BOOL_TEXT[raw]
        self._wrong(key, "true or false", raw)
        return default

    def str(
        self,
        key: builtins.str,
        default: builtins.str,
        *,
        choices: Collection[builtins.str] | None = None,
    ) -> builtins.str:
        """A string argument, optionally one of `choices`."""
        if not self._present(key):
            return default
        raw = self._arguments[key]
        if not isinstance(raw, str):
            self._wrong(key, "a string", raw)
            return default
        if choices is not None and raw not in choices:
            allowed = ", ".join(repr(choice) for choice in sorted(choices))
            hint = did_you_mean(raw, choices)
            self._problem(key, f"must be one of {allowed}, got {describe(raw)}{hint}")
            return default
        return raw

    def duration(self, key: builtins.str, default_seconds: builtins.float) -> builtins.float:
        """A non-negative Go duration string, in seconds ("5m" -> 300.0), at most Go's longest."""
        if not self._present(key):
            return default_seconds
        raw = self._arguments[key]
        seconds: builtins.float | None = None
        if isinstance(raw, str):
            try:
                seconds = parse_go_duration(raw)
            except DurationOverflowError:
                seconds = -math.inf if raw.startswith("-") else math.inf
            except ValueError:
                seconds = None
        if seconds is None:
            self._wrong(key, _DURATION_HINT, raw)
        elif seconds < 0:
            self._problem(key, f"must not be negative, got {describe(raw)}")
        elif seconds == math.inf:
            self._wrong(key, f"at most {_GO_LONGEST} (Go's longest duration)", raw)
        else:
            return seconds
        return default_seconds

    def raw(self, key: builtins.str) -> object | None:
        """The value as parsed (None when absent); the key counts as read."""
        self._asked.add(key)
        return self._arguments.get(key)

    def keys_with_prefix(self, prefix: builtins.str) -> tuple[builtins.str, ...]:
        """The argument keys starting with `prefix`, in document order (not marked as read)."""
        return tuple(key for key in self._arguments if key.startswith(prefix))

    def finish(self, *, allow_prefixes: Collection[builtins.str] = ()) -> None:
        """Raise PluginArgsError listing every problem, including arguments nobody read."""
        prefixes = tuple(allow_prefixes)
        for key in self._arguments:
            if key in self._asked or key.startswith(prefixes):
                continue
            self._problem(key, f"unknown argument{did_you_mean(key, self._asked)}")
        if self._problems:
            raise PluginArgsError(*self._problems)

    def _present(self, key: builtins.str) -> builtins.bool:
        self._asked.add(key)
        return key in self._arguments

    def _wrong(self, key: builtins.str, expected: builtins.str, raw: object) -> None:
        self._problem(key, f"must be {expected}, got {describe(raw)}")

    def _problem(self, key: builtins.str, message: builtins.str) -> None:
        self._problems.append(f"{self._owner}: arguments.{key}: {message}")
