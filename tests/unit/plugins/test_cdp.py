"""cdp: a running pod within its cooldown (PodScheduled time + `volcano.sh/cooldown-time` after
the session's time) is no preempt or reclaim victim; every other candidate is, in order; a
protection asks for a cycle when it ends; no unifiedEvictable point, as Volcano's cdp."""

from __future__ import annotations

import datetime as dt

import pytest

from vscheduler.errors import PluginArgsError
from vscheduler.framework.session import Session
from vscheduler.model.status import TaskStatus
from vscheduler.plugin_api import UnifiedEvictable
from vscheduler.plugins import cdp
from vscheduler.testing import sessions
from vscheduler.testing.builders import START, PodBuilder, node, pod, snapshot

KEY = "volcano.sh/cooldown-time"
NOW = START + dt.timedelta(hours=1)
POLICY = """\
actions: ""
tiers:
- plugins:
  - name: cdp
"""


def running(name: str, cooldown: str | None, scheduled: float | None) -> PodBuilder:
    """On n1, scheduled `scheduled` seconds before NOW (None: no PodScheduled time)."""
    built = pod(name).requests(cpu="1").on("n1")
    if cooldown is not None:
        built = built.annotate(KEY, cooldown)
    if scheduled is not None:
        built = built.scheduled(NOW - dt.timedelta(seconds=scheduled))
    return built


def victims(*pods: PodBuilder, reclaim: bool = False) -> tuple[list[str], dt.datetime | None]:
    """The candidates cdp keeps (preempt's, or reclaim's), and the session's revisit."""
    preemptor = pod("preemptor").requests(cpu="1")
    session: Session = sessions.open_session(
        snapshot(node("n1").resources(cpu="16"), preemptor, *pods), POLICY, now=NOW
    )
    plugin = session.plugins[cdp.NAME]
    assert isinstance(plugin, cdp.Cdp)
    asking = session.tasks[preemptor.build().uid]
    candidates = [session.tasks[p.build().uid] for p in pods]
    select = plugin.select_reclaimees if reclaim else plugin.select_preemptees
    kept = [t.facts.name for t in select(asking, candidates)]
    return kept, session.close().revisit_at


@pytest.mark.parametrize("reclaim", [False, True])
def test_pods_within_their_cooldown_are_kept_out_and_the_rest_stay_in_order(reclaim: bool) -> None:
    kept, revisit = victims(
        running("plain", None, 10),
        running("cooling", "60s", 10),  # ends in 50 s
        running("cooled", "60s", 60),  # ended now
        running("cooling-longer", "2m", 10),  # ends in 110 s
        running("no-time", "60s", None),
        running("bad", "60 s", 10),
        reclaim=reclaim,
    )

    assert kept == ["plain", "cooled", "no-time", "bad"]
    assert revisit == NOW + dt.timedelta(seconds=50)


def test_a_pod_not_running_is_not_protected() -> None:
    """Volcano checks `pod.Status.Phase == Running`: a bound pod (phase Pending) is a victim."""
    bound = running("bound", "60s", 10).on("n1", TaskStatus.BOUND)
    assert victims(bound) == (["bound"], None)


def test_a_negative_cooldown_protects_only_a_pod_scheduled_further_ahead_than_it() -> None:
    ahead = running("ahead", "-10s", -20)  # scheduled 20 s in the future: ahead - 10 s > now
    behind = running("behind", "-10s", -5)
    assert victims(ahead, behind) == (["behind"], NOW + dt.timedelta(seconds=10))


def test_cdp_serves_no_unified_evictable_point_as_volcano() -> None:
    """Volcano's cdp registers AddPreemptableFn and AddReclaimableFn only: gangpreempt and
    gangreclaim do not see its protection."""
    assert UnifiedEvictable not in cdp.Cdp.__mro__
    assert not hasattr(cdp.Cdp, "select_gang_victims")


def test_cdp_takes_no_arguments() -> None:
    with pytest.raises(PluginArgsError, match="cooldown"):
        cdp.build({"cooldown": "1m"})
