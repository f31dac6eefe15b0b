"""Loading policy YAML never raises: whatever the text, a document or problems with their place."""

from __future__ import annotations

import pytest

from vscheduler.conf.yaml_text import MAX_VALUES, load_yaml
from vscheduler.errors import PolicyError

BOMB = "a: &a [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 10)}]\n"
    for previous, name in zip("abcde", "bcdef", strict=True)
)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param(
            "x: " + "9" * 5000,
            "YAML syntax error at line 1, column 4: invalid !!int value: more than 4300 digits",
            id="an integer of 5000 digits",
        ),
        pytest.param(
            "x: !!int abc",
            "YAML syntax error at line 1, column 4: invalid !!int value: invalid literal for "
            "int() with base 10: 'abc'",
            id="an explicit int tag on a word",
        ),
        pytest.param(
            "x: !!float abc",
            "YAML syntax error at line 1, column 4: invalid !!float value: could not convert "
            "string to float: 'abc'",
            id="an explicit float tag on a word",
        ),
        pytest.param(
            "x: !!timestamp 2020-13-45",
            "YAML syntax error at line 1, column 4: invalid !!timestamp value: month must be in "
            "1..12",
            id="an impossible date",
        ),
        pytest.param(
            "actions: allocate\x00",
            "YAML error at character 17: unacceptable character #x0000: special characters are "
            "not allowed",
            id="a NUL character",
        ),
        pytest.param(
            "&a [*a]", "YAML error: an alias refers to a node that contains it", id="a cycle"
        ),
        pytest.param(
            BOMB,
            f"YAML error: the aliases expand to more than {MAX_VALUES} values",
            id="an alias bomb",
        ),
        pytest.param(
            "x: " + "[" * 3000 + "]" * 3000, "YAML error: nested too deeply", id="deep nesting"
        ),
    ],
)
def test_text_that_python_cannot_construct_is_a_problem_not_an_exception(
    text: str, problem: str
) -> None:
    loaded = load_yaml(text)
    assert (loaded.document, loaded.problems, loaded.readable) == (None, (problem,), False)


def test_aliases_that_repeat_a_node_are_fine() -> None:
    loaded = load_yaml("a: &x {b: 1}\nc: *x\nd: [*x, *x]\n")
    assert loaded.problems == ()
    assert loaded.document == {"a": {"b": 1}, "c": {"b": 1}, "d": [{"b": 1}, {"b": 1}]}


def test_a_key_with_a_newline_is_escaped_so_each_error_stays_on_one_line() -> None:
    error = PolicyError(["tiers[0].plugins[0].\t\n\u200b: unknown key"], source="p")
    assert error.errors == ("tiers[0].plugins[0].\\t\\n\\u200b: unknown key",)
