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


DESCRIBED_LENGTH = 60
"""The longest rendering of a value in a message; longer ones are cut, ending in "..."."""


def describe(value: object) -> str:
    """A short, YAML-flavoured rendering of a value for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple | set | frozenset):
        return "a list"
    text = repr(value)
    return text if len(text) <= DESCRIBED_LENGTH else text[: DESCRIBED_LENGTH - 3] + "..."
