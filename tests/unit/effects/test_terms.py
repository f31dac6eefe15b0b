"""Terms: queued binds dropped by node or by step-down, and the per-thread send check."""

from __future__ import annotations

import pytest

from vscheduler.effects.terms import Terms
from vscheduler.errors import FencedError, StaleDecisionError
from vscheduler.model.commands import Bind


def bind(pod: str, node: str) -> Bind:
    return Bind(task_uid=f"uid-{pod}", pod=f"ns/{pod}", node=node)


def test_a_node_deletion_drops_only_the_binds_still_queued_to_it() -> None:
    terms = Terms()
    taken, waiting, elsewhere = terms.queue((bind("a", "n1"), bind("b", "n1"), bind("c", "n2")))
    assert terms.take(taken)
    assert [t.bind.pod for t in terms.drop_node("n1")] == ["ns/b"]
    assert not terms.take(waiting)
    assert terms.take(elsewhere)
    assert terms.drop_node("n2") == []


def test_a_step_down_drops_every_queued_bind_and_fences_work_of_the_old_term() -> None:
    terms = Terms()
    (queued,) = terms.queue((bind("a", "n1"),))
    old = terms.current
    assert [t.bind.pod for t in terms.step_down()] == ["ns/a"]
    assert not terms.take(queued)
    with terms.running(old), pytest.raises(FencedError, match="stopped leading"):
        terms.check_send()
    with terms.running(terms.current):
        terms.check_send()
    terms.check_send()  # not a worker: nothing to fence


def test_the_send_check_of_the_calling_thread_says_why_its_decision_no_longer_holds() -> None:
    terms = Terms()
    problem: list[str] = []
    with terms.running(terms.current), terms.checking(lambda: problem[0] if problem else None):
        terms.check_send()
        problem.append("node n1 is gone")
        with pytest.raises(StaleDecisionError, match="node n1 is gone"):
            terms.check_send()
    terms.check_send()  # the check ended with the call
