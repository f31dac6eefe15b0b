"""How policy errors are worded: "did you mean" suggestions and short descriptions of bad values.

Owns only wording; it decides nothing about validity.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

SUGGESTION_CUTOFF = 0.6


def closest(
    word: str, candidates: Iterable[str], *, cutoff: float = SUGGESTION_CUTOFF
) -> str | None:
    """The candidate closest to `word` (a case-only difference wins outright), or None."""
    pool = sorted(set(candidates))
    folded = word.casefold()
    for candidate in pool:
        if candidate.casefold() == folded:
            return candidate
    matches = difflib.get_close_matches(word, pool, n=1, cutoff=cutoff)
    return matches[0] if matches else None


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`"; did you mean 'x'?"` when a close candidate exists, else the empty string."""
    match = closest(word, candidates)
    return f"; did you mean {match!r}?" if match is not None else ""


def describe(value: object) -> str:
    """A short, YAML-flavoured rendering of a value for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return repr(value)
