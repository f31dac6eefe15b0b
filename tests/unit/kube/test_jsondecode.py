"""`kube.jsondecode.loads` decodes what the standard library decodes, to the same values, and
fails where it fails."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, strategies as st

from vscheduler.kube import jsondecode

_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(_VALUES, st.booleans())
def test_any_json_decodes_to_what_the_standard_library_reads(
    value: object, ascii_only: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert jsondecode.loads(text) == json.loads(text)
    assert jsondecode.loads(text.encode()) == json.loads(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"\\ud800"', "\ud800"),
        ('{"a": 1, "a": 2}', {"a": 2}),
    ],
)
def test_what_orjson_refuses_the_standard_library_still_reads(text: str, expected: object) -> None:
    assert jsondecode.loads(text) == expected


def test_an_integer_past_64_bits_reads_as_the_float_the_api_server_would_send() -> None:
    """The API server decodes numbers into int64 or float64 and sends those; orjson reads a
    longer integer as that float too (the standard library would keep it whole)."""
    assert jsondecode.loads('{"n": 123456789012345678901234567890}') == {
        "n": float(123456789012345678901234567890)
    }


def test_nan_reads_as_the_standard_library_reads_it() -> None:
    assert math.isnan(jsondecode.loads(b'{"x": NaN}')["x"])


@pytest.mark.parametrize("text", ["", "{", '{"a": }', "[1,]", b"\xff\xfe"])
def test_what_is_not_json_raises_the_standard_librarys_error(text: str | bytes) -> None:
    with pytest.raises(json.JSONDecodeError):
        jsondecode.loads(text)
