"""Why a queue refuses to allocate a task, in words: the `Refusal`s of the queue accounts.

Owns: the text of a queue's refusal: its state when it is not Open; else the resources over the
limit, with what the queue holds, what the task asks and the limit, and what set the limit (the
queue's capability, what the other queues' guarantees leave it, its deserved share, the
cluster's allocatable, or the Ready nodes' when they hold none of the resource; in a queue
tree, the queue or ancestor whose realCapability it would exceed, or a queue off the tree). The
pod's pending message gives it.
Must not: decide anything: the accounts test, this module words what they found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vscheduler.framework.results import Refusal
from vscheduler.model.resources import Resources, format_amount

if TYPE_CHECKING:
    from vscheduler.framework.queue_accounts import QueueAccount
    from vscheduler.framework.state import QueueState


def closed(queue: QueueState) -> Refusal:
    """The refusal of a queue that is not Open (`status.state` Closed, Closing or Unknown)."""
    return Refusal(
        f"its pods are not placed while its status.state is {queue.facts.state}, only when it "
        "is Open",
        headline=f"is {queue.facts.state}",
    )


def over_limit(
    account: QueueAccount,
    asked: Resources,
    over: tuple[str, ...],
    *,
    total: Resources,
    limit_is_deserved: bool,
) -> Refusal:
    """`allocated cpu 6 + this pod's cpu 2 exceed its deserved share (cpu 6)`, in the resources
    `over` the limit (deserved, or realCapability), naming what set it in the first of them."""
    limit = account.deserved if limit_is_deserved else account.real_capability

    def only(res: Resources) -> str:
        return ", ".join(f"{n} {format_amount(n, res.get(n))}" for n in over)

    name = _limit_name(account, over[0], total=total, limit_is_deserved=limit_is_deserved)
    return Refusal(
        f"allocated {only(account.allocated)} + this pod's {only(asked)} exceed {name}"
        f" ({only(limit)})"
    )


def not_admitted(
    account: QueueAccount,
    minimum: Resources,
    wanted: Resources,
    over: tuple[str, ...],
    *,
    total: Resources,
) -> Refusal:
    """`minResources cpu 4 + what the queue holds and has admitted (cpu 6) exceed its capability
    (cpu 8)`: the enqueue vote's refusal, in the resources `over` the queue's realCapability."""

    def only(res: Resources) -> str:
        return ", ".join(f"{n} {format_amount(n, res.get(n))}" for n in over)

    name = _limit_name(account, over[0], total=total, limit_is_deserved=False)
    return Refusal(
        f"minResources {only(minimum)} + what the queue holds and has admitted"
        f" ({only(wanted - minimum)}) exceed {name} ({only(account.real_capability)})"
    )


def _limit_name(
    account: QueueAccount, name: str, *, total: Resources, limit_is_deserved: bool
) -> str:
    """What set the queue's limit in resource `name`: its capability, the other queues'
    guarantees (realCapability below the cluster), its deserved share, or the cluster."""
    real = account.real_capability.get(name)
    limit = account.deserved.get(name) if limit_is_deserved else real
    if limit == real and real < total.get(name):
        cap = None if account.capability is None else account.capability.get(name)
        if cap == real:
            return "its capability"
        return "what the other queues' guarantees leave it"
    if total.get(name) == 0:
        return "the Ready nodes' allocatable"
    if limit_is_deserved:
        return "its deserved share"
    return "the cluster's allocatable"


def off_the_tree() -> Refusal:
    """The refusal of a queue with a broken place in the queue tree (a missing parent, a cycle,
    jobs in a queue with children): the queue's note says which."""
    return Refusal("its place in the queue tree is invalid", headline="runs no pod")


def over_tree_limit(
    each: QueueAccount,
    account: QueueAccount,
    asked: Resources,
    used: Resources,
    *,
    job: bool = False,
) -> Refusal:
    """`allocated cpu 6 + this pod's cpu 2 exceed its capability (cpu 6)`, or the same of the
    ancestor `each` of `account` (`ancestor eng's allocated cpu 4 + ... exceed eng's capability
    (cpu 4)`): the first queue of the chain whose realCapability `used` exceeds, in the
    resources it bounds. For a `job` (admission): `minResources cpu 4 + what ... holds and has
    admitted (cpu 4) exceed ...`."""
    real = each.real_capability
    over = [
        n for n, a in asked.items() if a > 0 and n in each.bounded and used.get(n) > real.get(n)
    ]

    def only(res: Resources) -> str:
        return ", ".join(f"{n} {format_amount(n, res.get(n))}" for n in over)

    cap = None if each.capability is None else each.capability.get(over[0])
    limit = "capability" if cap == real.get(over[0]) else "realCapability"
    whose = "its" if each is account else f"{each.name}'s"
    if job:
        holder = "the queue" if each is account else f"its ancestor {each.name}"
        return Refusal(
            f"minResources {only(asked)} + what {holder} holds and has admitted"
            f" ({only(used - asked)}) exceed {whose} {limit} ({only(real)})"
        )
    held = "" if each is account else f"ancestor {each.name}'s "
    return Refusal(
        f"{held}allocated {only(each.allocated)} + this pod's {only(asked)} exceed {whose}"
        f" {limit} ({only(real)})"
    )
