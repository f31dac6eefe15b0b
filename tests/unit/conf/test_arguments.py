from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from vscheduler.conf.arguments import ArgumentReader, parse_go_duration
from vscheduler.conf.parse import parse_policy
from vscheduler.errors import PluginArgsError
from vscheduler.model.duration import DurationOverflowError

POLICIES = Path(__file__).resolve().parents[2] / "fixtures" / "policies"
PLUGINS_IN_THE_ARGUMENTS_FIXTURE = (
    "priority",
    "gang",
    "conformance",
    "sla",
    "overcommit",
    "drf",
    "predicates",
    "proportion",
    "nodeorder",
    "binpack",
    "tdm",
)


def reader(**arguments: object) -> ArgumentReader:
    return ArgumentReader(arguments, owner="plugin binpack")


def reader_of(arguments: Mapping[str, object]) -> ArgumentReader:
    return ArgumentReader(arguments, owner="plugin binpack")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(10, 10, id="yaml-int"),
        pytest.param(10.0, 10, id="integral-float"),
        pytest.param("10", 10, id="numeric-string"),
        pytest.param("-3", -3, id="negative-string"),
        pytest.param("+7", 7, id="signed-string"),
    ],
)
def test_an_int_argument_accepts_what_volcano_accepts(value: object, expected: int) -> None:
    args = reader_of({"binpack.weight": value})
    assert args.int("binpack.weight", 1) == expected
    args.finish()


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param("x", "'x'", id="word"),
        pytest.param(1.5, "1.5", id="fraction"),
        pytest.param(True, "true", id="bool"),
        pytest.param("1.0", "'1.0'", id="decimal-string"),
        pytest.param(" 1", "' 1'", id="padded-string"),
        pytest.param(None, "null", id="null"),
        pytest.param((1, 2), "a list", id="list"),
    ],
)
def test_an_int_argument_rejects_anything_else(value: object, shown: str) -> None:
    args = reader_of({"binpack.weight": value})
    assert args.int("binpack.weight", 1) == 1
    assert args.problems == (
        f"plugin binpack: arguments.binpack.weight: must be an integer, got {shown}",
    )


@pytest.mark.parametrize(
    ("minimum", "maximum", "value", "phrase"),
    [
        pytest.param(0, None, -1, "an integer >= 0", id="below-minimum"),
        pytest.param(None, 10, 11, "an integer <= 10", id="above-maximum"),
        pytest.param(0, 10, 11, "an integer >= 0 and <= 10", id="outside-both"),
        pytest.param(0, None, "x", "an integer >= 0", id="not-a-number"),
    ],
)
def test_an_int_argument_outside_its_range_names_the_range(
    minimum: int | None, maximum: int | None, value: object, phrase: str
) -> None:
    args = reader_of({"binpack.weight": value})
    assert args.int("binpack.weight", 1, minimum=minimum, maximum=maximum) == 1
    shown = repr(value) if isinstance(value, str) else str(value)
    assert args.problems == (
        f"plugin binpack: arguments.binpack.weight: must be {phrase}, got {shown}",
    )


def test_the_int_error_reads_exactly_as_documented() -> None:
    args = reader(**{"binpack.weight": "x"})
    args.int("binpack.weight", 1, minimum=0)
    with pytest.raises(PluginArgsError) as caught:
        args.finish()
    assert (
        str(caught.value)
        == "plugin binpack: arguments.binpack.weight: must be an integer >= 0, got 'x'"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(2, 2.0, id="int"),
        pytest.param(0.25, 0.25, id="float"),
        pytest.param("1.2", 1.2, id="decimal-string"),
        pytest.param("1e3", 1000.0, id="exponent-string"),
        pytest.param(".5", 0.5, id="leading-dot"),
    ],
)
def test_a_float_argument_accepts_ints_floats_and_numeric_strings(
    value: object, expected: float
) -> None:
    assert reader(**{"overcommit-factor": value}).float("overcommit-factor", 1.2) == expected


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("high", id="word"),
        pytest.param(float("nan"), id="nan"),
        pytest.param(float("inf"), id="infinity"),
        pytest.param(False, id="bool"),
        pytest.param("1_000", id="underscores"),
    ],
)
def test_a_float_argument_rejects_non_numbers(value: object) -> None:
    args = reader(**{"overcommit-factor": value})
    assert args.float("overcommit-factor", 1.2, minimum=1.0) == 1.2
    (problem,) = args.problems
    assert problem.startswith(
        "plugin binpack: arguments.overcommit-factor: must be a number >= 1.0, got "
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(True, True, id="yaml-true"),
        pytest.param(False, False, id="yaml-false"),
        pytest.param("true", True, id="string-true"),
        pytest.param("False", False, id="string-False"),
        pytest.param("1", True, id="string-1"),
        pytest.param("0", False, id="string-0"),
    ],
)
def test_a_bool_argument_accepts_booleans_and_their_string_spellings(
    value: object, expected: bool
) -> None:
    assert (
        reader(**{"predicate.CacheEnable": value}).bool("predicate.CacheEnable", not expected)
        is expected
    )


@pytest.mark.parametrize("value", [pytest.param("yes", id="yes"), pytest.param(1, id="int")])
def test_a_bool_argument_rejects_other_values(value: object) -> None:
    args = reader(**{"predicate.CacheEnable": value})
    assert args.bool("predicate.CacheEnable", True) is True
    (problem,) = args.problems
    assert "arguments.predicate.CacheEnable: must be true or false, got" in problem


def test_a_str_argument_checks_its_choices_and_suggests_one() -> None:
    args = reader(mode="spred", other=3)
    assert args.str("mode", "binpack", choices={"binpack", "spread"}) == "binpack"
    assert args.str("other", "x") == "x"
    assert args.problems == (
        "plugin binpack: arguments.mode: must be one of 'binpack', 'spread', got 'spred'; "
        "did you mean 'spread'?",
        "plugin binpack: arguments.other: must be a string, got 3",
    )


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("5m", 300.0, id="minutes"),
        pytest.param("30s", 30.0, id="seconds"),
        pytest.param("1h30m", 5400.0, id="hours-and-minutes"),
        pytest.param("500ms", 0.5, id="milliseconds"),
        pytest.param("1.5h", 5400.0, id="fractional-hours"),
        pytest.param("0", 0.0, id="bare-zero"),
        pytest.param("300us", 0.0003, id="microseconds"),
        pytest.param("2µs", 0.000002, id="micro-sign"),
        pytest.param("1h2m3s4ms5µs6ns", 3723.004005006, id="every-unit"),
        pytest.param("-1m", -60.0, id="negative"),
    ],
)
def test_go_durations_parse_to_seconds(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "5", "m", "1d", "5 m", "1h 30m", "abc", "-", ".s", "1e3s"])
def test_malformed_go_durations_are_value_errors(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_go_duration(text)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("2562047h", 9223369200.0, id="the-longest-whole-hours"),
        pytest.param("9223372036854775807ns", 9223372036.854775807, id="int64-max-ns"),
        pytest.param("-9223372036854775808ns", -9223372036.854775808, id="int64-min-ns"),
    ],
)
def test_go_durations_up_to_gos_range_parse(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "text",
    ["9223372036854775808ns", "2562048h", "2562047h47m16.854775808s", "-9223372036854775809ns"],
)
def test_go_durations_beyond_gos_range_are_overflow_errors_as_in_go(text: str) -> None:
    with pytest.raises(DurationOverflowError, match=f"^invalid duration '{text}': beyond Go's"):
        parse_go_duration(text)


def test_a_duration_argument_reads_seconds_and_rejects_numbers_without_units() -> None:
    args = reader(interval="5m", period=300, window="-5m")
    assert args.duration("interval", 60.0) == 300.0
    assert args.duration("period", 60.0) == 60.0
    assert args.duration("window", 60.0) == 60.0
    assert args.duration("absent", 60.0) == 60.0
    assert args.problems == (
        "plugin binpack: arguments.period: "
        "must be a duration like '30s', '5m', '1h30m' or '500ms', got 300",
        "plugin binpack: arguments.window: must not be negative, got '-5m'",
    )


def test_absent_arguments_take_their_defaults_without_problems() -> None:
    args = reader()
    assert args.int("binpack.weight", 1) == 1
    assert args.float("binpack.cpu", 1.0) == 1.0
    assert args.bool("enabled", True) is True
    assert args.str("mode", "a") == "a"
    assert args.raw("anything") is None
    args.finish()


def test_raw_returns_the_value_as_parsed_and_counts_as_read() -> None:
    args = reader(strategies=({"name": "lowNodeUtilization"},))
    assert args.raw("strategies") == ({"name": "lowNodeUtilization"},)
    args.finish()


def test_keys_with_prefix_lists_keys_in_document_order_without_reading_them() -> None:
    args = reader_of(
        {
            "binpack.resources": "nvidia.com/gpu, example.com/foo",
            "binpack.resources.nvidia.com/gpu": 2,
            "binpack.weight": 1,
            "binpack.resources.example.com/foo": 3,
        }
    )
    assert args.keys_with_prefix("binpack.resources.") == (
        "binpack.resources.nvidia.com/gpu",
        "binpack.resources.example.com/foo",
    )
    args.str("binpack.resources", "")
    args.int("binpack.weight", 1)
    with pytest.raises(
        PluginArgsError, match=r"arguments\.binpack\.resources\.nvidia\.com/gpu: unknown"
    ):
        args.finish()


def test_allowed_prefixes_cover_keys_the_plugin_reads_by_pattern() -> None:
    args = reader_of({"binpack.resources.nvidia.com/gpu": 2, "binpack.weight": 1})
    args.int("binpack.weight", 1)
    args.finish(allow_prefixes=("binpack.resources.",))


def test_finish_reports_every_wrong_value_and_every_unread_key_together() -> None:
    args = reader_of({"binpack.wieght": 3, "binpack.cpu": "lots", "binpack.memory": -1, "stray": 1})
    args.int("binpack.weight", 1, minimum=0)
    args.int("binpack.cpu", 1, minimum=0)
    args.int("binpack.memory", 1, minimum=0)
    with pytest.raises(PluginArgsError) as caught:
        args.finish()
    assert str(caught.value).split("; plugin") == [
        "plugin binpack: arguments.binpack.cpu: must be an integer >= 0, got 'lots'",
        " binpack: arguments.binpack.memory: must be an integer >= 0, got -1",
        " binpack: arguments.binpack.wieght: unknown argument; did you mean 'binpack.weight'?",
        " binpack: arguments.stray: unknown argument",
    ]


def test_a_plugin_reads_its_arguments_from_a_parsed_volcano_policy() -> None:
    policy = parse_policy(
        (POLICIES / "volcano-plugin-arguments.yaml").read_text(),
        known_actions=("enqueue", "allocate", "preempt", "reclaim", "backfill"),
        known_plugins=PLUGINS_IN_THE_ARGUMENTS_FIXTURE,
    )
    binpack = next(plugin for plugin in policy.plugins() if plugin.name == "binpack")
    args = ArgumentReader(binpack.arguments, owner="plugin binpack")
    weights = {
        key: args.int(key, 1, minimum=0) for key in args.keys_with_prefix("binpack.resources.")
    }
    assert args.int("binpack.weight", 1, minimum=0) == 10
    assert args.int("binpack.cpu", 1, minimum=0) == 1
    assert args.int("binpack.memory", 1, minimum=0) == 1
    assert args.str("binpack.resources", "") == "nvidia.com/gpu, example.com/foo"
    assert weights == {
        "binpack.resources.nvidia.com/gpu": 2,
        "binpack.resources.example.com/foo": 3,
    }
    args.finish()
    sla = next(plugin for plugin in policy.plugins() if plugin.name == "sla")
    sla_args = ArgumentReader(sla.arguments, owner="plugin sla")
    assert sla_args.duration("sla-waiting-time", 0.0) == pytest.approx(3723.004005006)
    sla_args.finish()


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param(10**400, "1" + "0" * 56 + "...", id="int-too-large-for-a-float"),
        pytest.param("1e400", "'1e400'", id="string-overflowing-to-infinity"),
        pytest.param(-(10**400), "-" + "1" + "0" * 55 + "...", id="negative-int-too-large"),
    ],
)
def test_a_float_argument_too_large_for_a_float_is_an_error_not_a_crash(
    value: object, shown: str
) -> None:
    args = reader(**{"overcommit-factor": value})
    assert args.float("overcommit-factor", 1.2, minimum=1.0) == 1.2
    assert args.problems == (
        f"plugin binpack: arguments.overcommit-factor: must be a number >= 1.0, got {shown}",
    )


@pytest.mark.parametrize(
    "value",
    [2**63, -(2**63) - 1, "9223372036854775808", "9" * 5000, 1e300],
    ids=["int64-max-plus-one", "int64-min-minus-one", "string-above-int64", "5000-digits", "1e300"],
)
def test_an_int_argument_beyond_64_bits_is_an_error_as_in_volcano(value: object) -> None:
    args = reader(**{"binpack.weight": value})
    assert args.int("binpack.weight", 1) == 1
    (problem,) = args.problems
    assert problem.startswith("plugin binpack: arguments.binpack.weight: must be an integer, got ")
    assert len(problem) <= 130


def test_the_64_bit_limits_themselves_are_integers() -> None:
    args = reader(a=2**63 - 1, b=-(2**63))
    assert (args.int("a", 0), args.int("b", 0)) == (2**63 - 1, -(2**63))


@pytest.mark.parametrize("text", ["9" * 400 + "h", "1" + "0" * 320 + "s"])
def test_a_duration_overflowing_to_infinity_is_malformed(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_go_duration(text)
