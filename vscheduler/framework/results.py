"""Values plugins return: Status (with Volcano's status codes), Vote, Refusal (an allocatable
plugin's "no" with its reason), and ABSTAIN for victims."""

from __future__ import annotations

import dataclasses
import enum
from typing import Final


class Code(enum.Enum):
    """Volcano's (and kube-scheduler's) status codes for a filter result."""

    SUCCESS = "Success"
    ERROR = "Error"
    UNSCHEDULABLE = "Unschedulable"
    UNSCHEDULABLE_AND_UNRESOLVABLE = "UnschedulableAndUnresolvable"
    WAIT = "Wait"
    SKIP = "Skip"


@dataclasses.dataclass(frozen=True, slots=True)
class Status:
    """A failed check: its code, the reason shown to users, and (filled in by the framework) the
    plugin that said it. A passing check is `None`, never a Status."""

    code: Code
    reason: str
    plugin: str = ""


def unschedulable(reason: str) -> Status:
    """A node cannot take this pod now (it may later)."""
    return Status(Code.UNSCHEDULABLE, reason)


def unresolvable(reason: str) -> Status:
    """A node can never take this pod as it is (preemption would not help)."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


class Vote(enum.IntEnum):
    """A tier vote (job enqueueable, job pipelined)."""

    REJECT = -1
    ABSTAIN = 0
    PERMIT = 1


@dataclasses.dataclass(frozen=True, slots=True)
class Refusal:
    """An allocatable plugin's "no", with the reason the pod's pending message gives (which limit,
    with the numbers). It is false, as a plain `False` is: callers that only ask yes or no read
    it as one."""

    reason: str
    """Why, with the numbers: `allocated cpu 6 + this pod's cpu 2 exceed ...`."""
    headline: str = "has no room left for this pod"
    """What the queue is, after its name: `has no room left for this pod`, `is Closed`."""

    def __bool__(self) -> bool:
        return False


class _Abstain(enum.Enum):
    ABSTAIN = "abstain"


#: A victim selector's "no opinion": different from proposing no victims (an empty tuple).
ABSTAIN: Final = _Abstain.ABSTAIN
Abstain = _Abstain
