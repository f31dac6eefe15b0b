"""Kubernetes resource quantities (`500m`, `1Gi`, `2e3`), parsed exactly.

Owns: the grammar of apimachinery's `resource.ParseQuantity`, its canonical form of an amount
(`canonical`), its rounding (a non-zero amount is
rounded up in magnitude to a whole nano-unit; binary-suffixed amounts are capped at 2^63-1), the
rounding of `Quantity.MilliValue` / `Quantity.Value`, turning a ResourceList into `Resources`,
and the scheduler's ceiling on one amount.

The ceiling: `Resources` never holds an amount above `CEILING` = 2^45 scheduler units
(35,184,372,088,832 millicores of cpu, 32 TiB of memory, 2^45 of any other resource or pods).
The API server accepts far larger quantities (`cpu: 1e18`, `memory: 9Ei`, `1e2000`); a larger
amount is read as the ceiling, and `over_ceiling` words the warning the object is given. (An
exponent beyond 10^1000 nano-units is read as 10^1000 before that: `SATURATED_NANOS`.) With every
amount at most 2^45, a sum over 2^18 (262,144) objects -- above Kubernetes' limits of 150,000
pods and 5,000 nodes per cluster -- stays below 2^63, so the session's int64 arrays (the node
ledger, victim sums) never overflow.

Internally an amount is an integer count of nano-units, which is exact: every amount Kubernetes
can hold is a whole number of nano-units. Sums are taken in nano-units and rounded once at the
end, as Kubernetes sums Quantities and rounds when the scheduler reads them.

Must not: use floats for amounts, or import from vscheduler anything but model and errors.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import Final

from vscheduler.errors import QuantityError
from vscheduler.model.resources import CPU, MEMORY, Resources

NANO: Final = 10**9
"""Nano-units per unit."""

CEILING: Final = 2**45
"""The largest amount of one resource of one object the scheduler holds (see the docstring)."""
_MAX_BINARY_NANOS: Final = (2**63 - 1) * NANO
_MAX_DIGITS: Final = 4000
_MAX_SHIFT: Final = 1000
SATURATED_NANOS: Final = 10**_MAX_SHIFT
"""What an amount beyond 10^991 units (`1e2000`) is read as: far above `CEILING` anyway."""

_SIMPLE: Final = re.compile(r"([1-9][0-9]{0,14})(|m|k|M|G|T|Ki|Mi|Gi|Ti)")
"""The common forms (`500m`, `2`, `1Gi`), read without the general grammar."""
_SIMPLE_NANOS: Final[Mapping[str, int]] = MappingProxyType(
    {
        "": NANO,
        "m": NANO // 1000,
        "k": NANO * 1000,
        "M": NANO * 10**6,
        "G": NANO * 10**9,
        "T": NANO * 10**12,
        "Ki": NANO << 10,
        "Mi": NANO << 20,
        "Gi": NANO << 30,
        "Ti": NANO << 40,
    }
)
_SHAPE: Final = re.compile(r"([+-]?)([0-9]*)(?:(\.)([0-9]*))?(.*)", re.DOTALL)
_EXPONENT: Final = re.compile(r"[eE]([+-]?[0-9]{1,10})")
_DECIMAL_SI: Final[Mapping[str, int]] = MappingProxyType(
    {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
)
_BINARY_SI: Final[Mapping[str, int]] = MappingProxyType(
    {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
)


def parse_quantity(text: str | int | float) -> Fraction:
    """The exact value of a quantity, as Kubernetes' `ParseQuantity` reads it.

    A number (from YAML or JSON) is read from its shortest text, as the API server reads a JSON
    number. Raises `QuantityError` naming the text and what is wrong with it.
    """
    return Fraction(parse_nanos(text), NANO)


def to_milli(q: Fraction) -> int:
    """`q` in thousandths, rounded up in magnitude (as `Quantity.MilliValue`)."""
    return _round_away(q.numerator * 1000, q.denominator)


def to_units(q: Fraction) -> int:
    """`q` in whole units, rounded up in magnitude (as `Quantity.Value`)."""
    return _round_away(q.numerator, q.denominator)


def nanos_to_amount(name: str, nanos: int) -> int:
    """The integer amount `Resources` holds for `nanos` of resource `name`.

    CPU is held in millicores, every other resource in whole base units, both rounded up in
    magnitude as Kubernetes rounds.
    """
    return _round_away(nanos, 1_000_000 if name == CPU else NANO)


def parse_nanos(value: object) -> int:
    """The exact value of a quantity in nano-units (see `parse_quantity`)."""
    if isinstance(value, str):
        simple = _SIMPLE.fullmatch(value)
        if simple is not None:
            return int(simple.group(1)) * _SIMPLE_NANOS[simple.group(2)]
        return _parse_text(value)
    if isinstance(value, bool):
        raise QuantityError(f"invalid quantity {show(value)}: must be a string or a number")
    if isinstance(value, int):
        return value * NANO
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"invalid quantity '{value}': not a finite number")
        return _parse_text(repr(value))
    raise QuantityError(f"invalid quantity {show(value)}: must be a string or a number")


def parse_resource_nanos(
    raw: object, *, where: str, negatives: list[str] | None = None
) -> dict[str, int]:
    """A ResourceList as exact nano-unit amounts; `where` prefixes every error.

    `raw` may be None or absent (an empty list). Negative amounts are errors, unless `negatives`
    is given: then each is read as 0 and a message naming it is appended there (a CRD's
    ResourceList, whose pattern lets a sign through). A string amount with surrounding
    whitespace is accepted, as the API server trims it when decoding JSON.
    """
    if raw is None:
        return {}
    if type(raw) is not dict and not isinstance(raw, Mapping):
        raise QuantityError(
            f"{where}: must be a mapping of resource name to quantity, got {show(raw)}"
        )
    out: dict[str, int] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not name:
            raise QuantityError(f"{where}: resource names must be non-empty strings, got {name!r}")
        try:
            nanos = parse_nanos(value.strip() if isinstance(value, str) else value)
        except QuantityError as err:
            raise QuantityError(f"{where}.{name}: {err}") from None
        if nanos < 0:
            if negatives is None:
                raise QuantityError(f"{where}.{name}: must not be negative, got {show(value)}")
            negatives.append(f"{where}.{name}: {show(value)} is negative; it is read as 0")
            nanos = 0
        out[name] = nanos
    return out


def to_resources(nanos: Mapping[str, int]) -> Resources:
    """`Resources` from exact nano-unit amounts (cpu in millicores, the rest in base units),
    each held within +-`CEILING`."""
    out: dict[str, int] = {}
    for name, amount in nanos.items():
        unit = 1_000_000 if name == CPU else NANO
        held = -(-amount // unit) if amount >= 0 else amount // unit
        out[name] = max(-CEILING, min(held, CEILING))
    return Resources(out)


def to_count(nanos: int) -> int:
    """A count (a node's `pods`) in whole units, rounded up, held within `CEILING`."""
    return min(-(-nanos // NANO), CEILING)


def over_ceiling(nanos: Mapping[str, int], *, where: str) -> tuple[str, ...]:
    """A warning for every amount of `nanos` above `CEILING`, naming `where` + "." + the resource,
    the amount and the ceiling it is read as (resources in name order)."""
    out = []
    for name in sorted(nanos):
        amount = nanos[name]
        unit = 1_000_000 if name == CPU else NANO
        if -(-amount // unit) > CEILING:
            ceiling = _shown(name, CEILING * unit)
            out.append(
                f"{where}.{name}: {_shown(name, amount)} is above the scheduler's ceiling "
                f"{ceiling} (2^45 scheduler units); it is read as {ceiling}"
            )
    return tuple(out)


def _shown(name: str, nanos: int) -> str:
    """An amount as an exact quantity: whole units when whole, else millicores for cpu; six
    trailing zeros or more as an exponent (`1e16`, `9223372036854775807`, `35184372088832m`)."""
    if nanos >= SATURATED_NANOS:
        return f"more than 1e{_MAX_SHIFT - 9}"
    if nanos % NANO == 0:
        return _exponent(str(nanos // NANO))
    if name == CPU:
        return f"{_exponent(str(-(-nanos // 1_000_000)))}m"
    return _exponent(str(-(-nanos // NANO)))


def _exponent(digits: str) -> str:
    significant = digits.rstrip("0")
    zeros = len(digits) - len(significant)
    return f"{significant}e{zeros}" if zeros >= 6 else digits


def parse_resource_list(
    raw: object,
    *,
    where: str,
    warnings: list[str] | None = None,
    negatives: list[str] | None = None,
) -> Resources:
    """A ResourceList (`{cpu: 500m, memory: 1Gi}`) as `Resources`.

    `where` names the field, e.g. `Pod default/p1: spec.containers[0].resources.requests`;
    every error message starts with `where` + "." + the resource name. An amount above
    `CEILING` is read as the ceiling, and its warning (`over_ceiling`) is appended to `warnings`.
    A negative amount is an error, or read as 0 with a message in `negatives` when given.
    """
    nanos = parse_resource_nanos(raw, where=where, negatives=negatives)
    if warnings is not None:
        warnings.extend(over_ceiling(nanos, where=where))
    return to_resources(nanos)


_DECIMAL_SUFFIXES: Final = {-3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIXES: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def canonical(name: str, amount: int) -> str:
    """`amount` of resource `name`, as `Resources` holds it, in the text Kubernetes writes for
    the quantity Volcano's scheduler makes of it (`util.ConvertRes2ResList`): cpu a DecimalSI
    milli-quantity (`1500m`, `2`, `2k`), memory a BinarySI quantity (`1Gi`, `1536`, below 1024
    DecimalSI: `1k`), any other resource DecimalSI (`1`, `500`)."""
    if name == CPU:
        return _decimal(amount, -3)
    if name == MEMORY and abs(amount) >= 1024:
        magnitude, power = abs(amount), 0
        while magnitude % 1024 == 0 and power < len(_BINARY_SUFFIXES) - 1:
            magnitude, power = magnitude // 1024, power + 1
        return f"{'-' if amount < 0 else ''}{magnitude}{_BINARY_SUFFIXES[power]}"
    return _decimal(amount, 0)


def _decimal(amount: int, exponent: int) -> str:
    """`amount` times 10^`exponent` in DecimalSI's canonical form: the largest suffix (a power
    of 1000) that keeps the number whole."""
    if amount == 0:
        return "0"
    magnitude = abs(amount)
    while magnitude % 1000 == 0 and exponent < 18:
        magnitude, exponent = magnitude // 1000, exponent + 3
    return f"{'-' if amount < 0 else ''}{magnitude}{_DECIMAL_SUFFIXES[exponent]}"


# --- the grammar ------------------------------------------------------------------------------
def _parse_text(text: str) -> int:
    if not text:
        raise _invalid(text, "empty")
    if text[0].isspace() or text[-1].isspace():
        raise _invalid(text, "leading or trailing whitespace")
    shape = _SHAPE.fullmatch(text)
    if shape is None:  # pragma: no cover - the pattern matches every string
        raise _invalid(text, "malformed")
    sign, whole, _dot, frac, suffix = shape.groups("")
    if not whole and not frac:
        raise _invalid(text, "no digits")
    digits = (whole + frac).lstrip("0")
    if len(digits) > _MAX_DIGITS:
        raise _invalid(text, f"more than {_MAX_DIGITS} digits")
    mantissa = int(digits) if digits else 0
    decimal = _DECIMAL_SI.get(suffix)
    if decimal is not None:
        nanos = _scale10(text, mantissa, len(digits), decimal - len(frac))
    elif suffix in _BINARY_SI:
        nanos = _scale2(mantissa, _BINARY_SI[suffix], len(frac))
    else:
        exponent = _EXPONENT.fullmatch(suffix)
        if exponent is None:
            raise _invalid(text, _suffix_problem(suffix))
        nanos = _scale10(text, mantissa, len(digits), int(exponent.group(1)) - len(frac))
    return -nanos if sign == "-" else nanos


def _scale10(text: str, mantissa: int, ndigits: int, exponent: int) -> int:
    """mantissa * 10**exponent in nano-units, rounded up to a whole nano-unit."""
    if mantissa == 0:
        return 0
    shift = exponent + 9
    if shift >= 0:
        if shift > _MAX_SHIFT:  # the API server accepts it; no amount that large means more
            return SATURATED_NANOS
        scale: int = 10**shift
        return mantissa * scale
    drop = -shift
    if drop > ndigits:  # 0 < mantissa < 10**drop: rounds up to one nano-unit
        return 1
    divisor: int = 10**drop
    return -(-mantissa // divisor)


def _scale2(mantissa: int, exponent: int, nfrac: int) -> int:
    """mantissa / 10**nfrac * 2**exponent in nano-units: rounded up, capped at 2^63-1 units."""
    divisor: int = 10**nfrac
    nanos = -(-(mantissa << exponent) * NANO // divisor)
    return min(nanos, _MAX_BINARY_NANOS)


def _suffix_problem(suffix: str) -> str:
    if suffix[:1] in ("e", "E") and len(suffix) > 1:
        return f"malformed exponent '{suffix}'"
    return f"unknown suffix '{suffix}'"


def _round_away(num: int, den: int) -> int:
    """num / den rounded away from zero, as Kubernetes rounds scaled values."""
    return -(-num // den) if num >= 0 else num // den


def _invalid(text: str, why: str) -> QuantityError:
    return QuantityError(f"invalid quantity '{text}': {why}")


def show(value: object) -> str:
    """A short form of a raw value for error messages: `'four'`, `4.5`, `null`, `a list`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return str(value)
