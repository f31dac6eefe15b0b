"""The session gathers the queue figures plugins report into the cycle result."""

from __future__ import annotations

from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import QueueFigures
from vscheduler.model.resources import Resources
from vscheduler.testing import sessions
from vscheduler.testing.builders import node, queue, snapshot

BOTH = """\
actions: "allocate"
tiers:
- plugins:
  - name: proportion
- plugins:
  - name: capacity
"""
NEITHER = """\
actions: "allocate"
tiers:
- plugins:
  - name: gang
"""


def cluster() -> ClusterSnapshot:
    return snapshot(node("n1").resources(cpu="4", memory="8Gi"), queue("zeta"), queue("alpha"))


def test_queue_figures_are_gathered_in_queue_name_order() -> None:
    session = sessions.open_session(cluster(), policy=None)

    result = session.close()

    assert list(result.queues) == ["alpha", "default", "zeta"]


def test_a_later_report_of_a_queue_replaces_an_earlier_one() -> None:
    session = sessions.open_session(cluster(), policy=NEITHER)
    session.report_queue(QueueFigures(name="alpha", allocated=Resources(cpu=1000)))
    session.report_queue(QueueFigures(name="alpha", allocated=Resources(cpu=2000)))

    result = session.close()

    assert result.queues == {"alpha": QueueFigures(name="alpha", allocated=Resources(cpu=2000))}


def test_with_two_queue_plugins_the_one_later_in_the_policy_wins() -> None:
    session = sessions.open_session(cluster(), policy=BOTH)

    result = session.close()

    # capacity's share for a queue that deserves nothing is 1; proportion's is 0
    assert {name: q.share for name, q in result.queues.items()} == {
        "alpha": 1.0,
        "default": 1.0,
        "zeta": 1.0,
    }


def test_a_policy_without_a_queue_plugin_reports_no_queue() -> None:
    session = sessions.open_session(cluster(), policy=NEITHER)

    assert session.close().queues == {}
