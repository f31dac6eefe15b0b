"""`Session.queue_allows_progress`: the allocatable point on a job's pending pods (issue 11)."""

from __future__ import annotations

from vscheduler.framework.session import Session
from vscheduler.testing import sessions
from vscheduler.testing.builders import Buildable, node, pod, podgroup, queue, snapshot

POLICY = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: proportion\n'
TWO_NODES = (node("n1").resources(cpu="4", memory="8Gi"), node("n2").resources(cpu="4"))


def session_with(*items: Buildable, policy: str = POLICY) -> Session:
    return sessions.open_session(snapshot(*TWO_NODES, *items), policy=policy)


def test_a_job_whose_queue_has_room_may_progress() -> None:
    session = session_with(podgroup("j").min_member(1), pod("j-0").group("j").requests(cpu="1"))

    assert session.queue_allows_progress(session.jobs["default/j"]) is True


def test_a_job_of_a_closed_queue_may_not() -> None:
    session = session_with(
        queue("shut").state("Closed"),
        podgroup("j").queue("shut").min_member(1),
        pod("j-0").group("j").requests(cpu="1"),
    )

    assert session.queue_allows_progress(session.jobs["default/j"]) is False


def test_a_job_whose_pods_all_exceed_the_deserved_share_may_not() -> None:
    # The queue asks 9 CPU of the 8 there are: it deserves 8, and no 9-CPU pod fits in that.
    session = session_with(
        podgroup("j").min_member(1),
        pod("j-0").group("j").requests(cpu="9"),
    )

    assert session.queue_allows_progress(session.jobs["default/j"]) is False


def test_one_pending_pod_the_queue_allows_is_enough() -> None:
    session = session_with(
        podgroup("j").min_member(1),
        pod("j-0").group("j").requests(cpu="9"),
        pod("j-1").group("j").requests(cpu="1"),
    )

    assert session.queue_allows_progress(session.jobs["default/j"]) is True


def test_a_job_without_a_pending_pod_or_without_a_queue_is_not_held_back() -> None:
    session = session_with(
        queue("shut").state("Closed"),
        podgroup("empty").queue("shut").min_member(1),
        podgroup("lost").queue("nowhere").min_member(1),
        pod("lost-0").group("lost").requests(cpu="1"),
    )

    assert session.queue_allows_progress(session.jobs["default/empty"]) is True
    assert session.queue_allows_progress(session.jobs["default/lost"]) is True


def test_without_an_allocatable_plugin_every_job_may_progress() -> None:
    policy = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n'
    session = session_with(
        podgroup("j").min_member(1), pod("j-0").group("j").requests(cpu="9"), policy=policy
    )

    assert session.queue_allows_progress(session.jobs["default/j"]) is True
