"""A session opened from the last one's records (`Session.carried`) starts as one opened afresh:
over the same nodes it resumes the last ledger and loads only the tasks that changed, came or
went (`Opening`); a changed node, or a request adding or dropping a ledger dimension, makes it
load everything."""

from __future__ import annotations

import collections
import dataclasses
from unittest import mock

from vscheduler import catalog, cycle
from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.framework import session as session_module
from vscheduler.framework.session import Carried, Holes
from vscheduler.framework.state import JobState, TaskState
from vscheduler.informer.kinds import NODE, POD, PODGROUP, QUEUE
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import NodeFacts, PodGroupCondition
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.plugins import gang
from vscheduler.testing.builders import START, Item, node, pod, podgroup, snapshot
from vscheduler.testing.sessions import assert_same_opening

PIPELINE = catalog.load_pipeline(None)
NODES: tuple[NodeFacts, ...] = tuple(
    node(f"n{i}").resources(cpu=8, memory="16Gi", pods=4).build() for i in range(3)
)


def opened_alike(snap: ClusterSnapshot, carried: Carried | None) -> Carried:
    """Open on `snap` from `carried` and afresh, check they start alike; the next carried."""
    clock = FixedClock(START)
    opened = cycle.open_session(snap, PIPELINE, clock=clock, carried=carried)
    afresh = cycle.open_session(snap, PIPELINE, clock=clock)
    carried_next = opened.carried()
    assert_same_opening(opened, afresh)
    return carried_next


def resumes(snap: ClusterSnapshot, carried: Carried) -> bool:
    return session_module._changes(snap, carried.opening).nodes is not None


RUNNING = pod("running").requests(cpu=1, memory="1Gi").group("g").on("n0").build()
SERVING = pod("serving").requests(cpu=1, memory="1Gi").group("w").host_port(8080).on("n2").build()
"""A running pod holding a host port: a resumed session still knows it (`tasks_with_host_ports`)."""
RELEASING = pod("releasing").requests(cpu=2, memory="1Gi").on("n1", TaskStatus.RELEASING).build()
PIPELINED = pod("pipelined").requests(cpu=1, memory="1Gi").on("n1", TaskStatus.PIPELINED).build()
NOMINATED = pod("nominated").requests(cpu=1, memory="1Gi").nominated("n2").build()
WAITING = pod("waiting").requests(cpu=1, memory="1Gi").group("w").nominated("n1").build()
ORPHAN = pod("orphan").requests(cpu=1, memory="1Gi").group("missing").build()
GROUP = podgroup("g").min_member(1).build()
GROUPS = (GROUP, podgroup("w").min_member(1).build())
"""The same PodGroup facts from one snapshot to the next, as the cache hands them (a lone pod's
implicit job is made anew by each `snapshot` here, so its pod's record is always made anew)."""


def test_a_chain_of_sessions_over_the_same_nodes_resumes_and_opens_as_afresh() -> None:
    first: list[Item] = [*NODES, *GROUPS, RUNNING, RELEASING, PIPELINED, NOMINATED, WAITING]
    first += [ORPHAN, SERVING]
    carried = opened_alike(snapshot(*first), None)

    # a running pod goes, another comes, the nominated pod loses its nomination and binds
    moved = pod("nominated").requests(cpu=1, memory="1Gi").on("n2", TaskStatus.BINDING).build()
    came = pod("came").requests(cpu=3, memory="2Gi").on("n0").build()
    second: list[Item] = [*NODES, *GROUPS, RELEASING, PIPELINED, moved, WAITING, ORPHAN, came]
    second.append(SERVING)
    snap = snapshot(*second)
    assert resumes(snap, carried)
    carried = opened_alike(snap, carried)

    # the orphan's PodGroup comes; the releasing pod is gone; the same pods otherwise
    found = podgroup("missing").build()
    third: list[Item] = [*NODES, *GROUPS, found, PIPELINED, moved, WAITING, ORPHAN, came, SERVING]
    snap = snapshot(*third)
    assert resumes(snap, carried)
    carried = opened_alike(snap, carried)

    # nothing changed at all
    snap = snapshot(*third)
    assert resumes(snap, carried)
    carried = opened_alike(snap, carried)

    # the PodGroup goes again
    fourth: list[Item] = [*NODES, *GROUPS, PIPELINED, moved, WAITING, ORPHAN, came]
    snap = snapshot(*fourth)
    assert resumes(snap, carried)
    opened_alike(snap, carried)


def test_the_keys_a_chain_pops_are_counted_and_its_maps_rebuilt_past_a_quarter() -> None:
    """A pod gone leaves a deleted slot in the task and job maps a chain of sessions copies every
    cycle (`Carried.take`), which makes the copy item by item past a third (`model.compact`):
    the slots are counted, and the maps rebuilt once they reach a quarter."""
    lone = [pod(f"p{i}").requests(cpu=1, memory="1Gi").on(f"n{i % 3}").build() for i in range(8)]
    carried = opened_alike(snapshot(*NODES, *lone), None)
    assert carried.holes == Holes(0, 0)
    carried = opened_alike(snapshot(*NODES, *lone[1:]), carried)
    assert carried.holes == Holes(tasks=1, jobs=1)
    assert carried.take().holes == Holes(1, 1)
    carried = opened_alike(snapshot(*NODES, *lone[2:]), carried)
    assert carried.holes == Holes(2, 2)  # of 6 tasks and jobs
    taken = carried.take()
    assert taken.holes == Holes(0, 0)
    assert list(taken.tasks.items()) == list(carried.tasks.items())
    assert list(taken.jobs.items()) == list(carried.jobs.items())
    carried = opened_alike(snapshot(*NODES, *lone[3:]), carried)
    assert carried.holes == Holes(1, 1)


def test_the_tasks_a_cycle_moved_are_loaded_again_from_their_facts() -> None:
    """A cycle places a pending pod (its record moves); the next snapshot still shows the pod
    pending (its bind not seen yet): the next session loads it pending, as a fresh one."""
    lone = pod("lone").requests(cpu=1, memory="1Gi").build()
    snap = snapshot(*NODES, RUNNING, lone)
    report = cycle.run_cycle(snap, PIPELINE, clock=FixedClock(START))
    assert [b.pod for b in report.result.binds] == ["default/lone"]
    again = snapshot(*NODES, RUNNING, lone)
    assert report.carried is not None
    assert resumes(again, report.carried)
    opened_alike(again, report.carried)


def test_a_request_of_a_resource_no_node_has_makes_the_session_load_everything() -> None:
    gpu = pod("gpu").requests(cpu=1, **{"example.com/gpu": 1}).build()
    carried = opened_alike(snapshot(*NODES, RUNNING), None)
    snap = snapshot(*NODES, RUNNING, gpu)
    assert not resumes(snap, carried)  # a new dimension
    carried = opened_alike(snap, carried)
    snap = snapshot(*NODES, RUNNING)
    assert not resumes(snap, carried)  # the dimension goes
    carried = opened_alike(snap, carried)
    snap = snapshot(*NODES, RUNNING, PIPELINED)
    assert resumes(snap, carried)
    opened_alike(snap, carried)


def test_a_changed_node_is_read_again_and_a_new_set_of_nodes_loads_everything() -> None:
    carried = opened_alike(snapshot(*NODES, RUNNING, RELEASING), None)
    bigger = node("n1").resources(cpu=16, memory="16Gi", pods=8).label("zone", "a").build()
    snap = snapshot(NODES[0], bigger, NODES[2], RUNNING, RELEASING)
    assert resumes(snap, carried)  # the same nodes by name: its row is read again
    carried = opened_alike(snap, carried)
    snap = snapshot(NODES[0], bigger, NODES[2], RUNNING)
    assert resumes(snap, carried)
    carried = opened_alike(snap, carried)
    relabelled = node("n1").resources(cpu=16, memory="16Gi", pods=8).label("zone", "b").build()
    snap = snapshot(NODES[0], relabelled, NODES[2], RUNNING)
    assert session_module._changes(snap, carried.opening).nodes == []  # labels: no row read
    carried = opened_alike(snap, carried)
    gpu = node("n1").resources(cpu=16, memory="16Gi", pods=8, **{"example.com/gpu": 2}).build()
    snap = snapshot(NODES[0], gpu, NODES[2], RUNNING)
    assert not resumes(snap, carried)  # another set of resources
    carried = opened_alike(snap, carried)
    snap = snapshot(NODES[0], NODES[2], RUNNING)
    assert not resumes(snap, carried)  # a node gone
    carried = opened_alike(snap, carried)
    snap = snapshot(NODES[0], NODES[1], RUNNING)
    assert not resumes(snap, carried)  # another node in its place
    opened_alike(snap, carried)


SAID_READY = PodGroupCondition(
    type=gang.SCHEDULED, status="True", reason=gang.READY_REASON, transition_id="cycle-0"
)


def test_a_podgroup_status_is_taken_again_until_the_session_changes_its_job() -> None:
    """A ready gang whose PodGroup says so gets no condition, and the next session takes its
    status again; once that session changes the job (a task evicted), the status is made
    anew from it."""
    group = podgroup("g").min_member(1).phase(PodGroupPhase.RUNNING).build()
    group = dataclasses.replace(group, conditions=(SAID_READY,))
    members = [
        pod(name).requests(cpu=1, memory="1Gi").group("g").on(f"n{i}", TaskStatus.RUNNING).build()
        for i, name in enumerate(("a", "b"))
    ]
    snap = snapshot(*NODES, group, *members)
    clock = FixedClock(START)
    first = cycle.run_cycle(snap, PIPELINE, clock=clock, uid="cycle-1")
    status = first.result.podgroups["default/g"]
    assert (status.phase, status.running, status.conditions) == (
        PodGroupPhase.RUNNING,
        2,
        (SAID_READY,),
    )
    again = cycle.run_cycle(snap, PIPELINE, clock=clock, uid="cycle-2", carried=first.carried)
    assert again.result.podgroups["default/g"] is status

    opened = cycle.open_session(snap, PIPELINE, clock=clock, uid="cycle-3", carried=again.carried)
    statement = opened.statement()
    statement.evict(opened.tasks[members[0].uid], "test", action="preempt", strategy="", plan="")
    statement.commit()
    status = opened.close().podgroups["default/g"]
    assert (status.running, status.conditions) == (1, (SAID_READY,))


def test_a_podgroup_status_counts_its_pods_still_to_start_apart_from_its_running_ones() -> None:
    """`starting`: placed (this cycle, or bound before) but not yet running; the effects hold a
    counts-only write back while some are."""
    group = podgroup("g").min_member(1).phase(PodGroupPhase.RUNNING).build()
    placed = [
        pod("a").requests(cpu=1, memory="1Gi").group("g").on("n0", TaskStatus.RUNNING),
        pod("b").requests(cpu=1, memory="1Gi").group("g").on("n1", TaskStatus.BOUND),
        pod("c").requests(cpu=1, memory="1Gi").group("g"),  # placed by this cycle
    ]
    report = cycle.run_cycle(snapshot(*NODES, group, *placed), PIPELINE, clock=FixedClock(START))
    status = report.result.podgroups["default/g"]
    assert [b.pod for b in report.result.binds] == ["default/c"]
    assert (status.running, status.starting) == (1, 2)


def test_lone_pods_of_one_second_arriving_out_of_uid_order_mend_the_tails_of_both_maps() -> None:
    """Pods created in the same second arrive in any uid order: a new one whose uid comes before
    held ones' puts its record and its implicit job behind them in the patched maps, and only
    that tail is put back in order (`_mend_tail`), as the cache's order says."""

    def raw(uid: str, node: str | None = None) -> dict[str, object]:
        spec: dict[str, object] = {
            "schedulerName": "vscheduler",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        }
        if node is not None:
            spec["nodeName"] = node
        meta = {"name": f"p-{uid}", "namespace": "ns", "uid": uid, "resourceVersion": "1"}
        meta["creationTimestamp"] = "2026-01-01T00:00:00Z"
        return {"kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Running"}}

    cache = SchedulerCache(clock=FixedClock(START))
    cache.replace(QUEUE, [])
    cache.replace(PODGROUP, [])
    cache.replace(
        NODE,
        [
            {
                "kind": "Node",
                "metadata": {"name": "n0", "uid": "n0"},
                "status": {
                    "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "10"},
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
        ],
    )
    cache.replace(POD, [raw("u2", "n0"), raw("u5", "n0"), raw("u7", "n0")])
    carried = opened_alike(cache.snapshot(), None)
    mended = mock.Mock(wraps=session_module._mend_tail)
    with mock.patch.object(session_module, "_mend_tail", mended):
        cache.apply(POD, WatchEvent("ADDED", raw("u6")))
        snap = cache.snapshot()
        assert snap.cache_order
        assert list(snap.tasks) == ["u2", "u5", "u6", "u7"]
        carried = opened_alike(snap, carried)
        cache.apply(POD, WatchEvent("ADDED", raw("u1")))
        carried = opened_alike(cache.snapshot(), carried)
    maps = collections.Counter(type(next(iter(c.args[0].values()))) for c in mended.call_args_list)
    assert maps == {JobState: 2, TaskState: 2}
    assert [job.rsplit("-", 1)[-1] for job in carried.jobs] == ["u1", "u2", "u5", "u6", "u7"]
