"""Task statuses change only along legal transitions."""

from __future__ import annotations

import pytest

from vscheduler.errors import InvariantError
from vscheduler.model.status import TaskStatus as S, check_transition, is_legal


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (S.PENDING, S.ALLOCATED),
        (S.PENDING, S.PIPELINED),
        (S.ALLOCATED, S.BINDING),
        (S.ALLOCATED, S.PENDING),
        (S.PIPELINED, S.PENDING),
        (S.RUNNING, S.RELEASING),
        (S.RELEASING, S.RUNNING),
        (S.BOUND, S.RELEASING),
    ],
)
def test_legal_transitions_are_allowed(old: S, new: S) -> None:
    assert is_legal(old, new)
    check_transition("ns/p", old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (S.PENDING, S.BINDING),
        (S.PENDING, S.RUNNING),
        (S.RUNNING, S.PENDING),
        (S.SUCCEEDED, S.RUNNING),
        (S.FAILED, S.PENDING),
        (S.BINDING, S.ALLOCATED),
    ],
)
def test_illegal_transitions_raise_naming_the_task(old: S, new: S) -> None:
    assert not is_legal(old, new)
    with pytest.raises(
        InvariantError, match=f"task ns/p: illegal status change {old.value} -> {new.value}"
    ):
        check_transition("ns/p", old, new)
