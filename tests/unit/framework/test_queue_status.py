"""Each queue's allocated at the session's close, as Volcano's `updateQueueStatus` writes it to
the Queue's `status.allocated`: the requests of its tasks Allocated, Binding, Bound or Running
(pipelined, pending, releasing and finished ones left out), rolled up the `spec.parent` chain
when a `root` queue exists; a session opened from the last one's records counts as one opened
afresh."""

from __future__ import annotations

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.framework.session import Carried
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.resources import Resources
from vscheduler.model.status import TaskStatus
from vscheduler.testing.builders import START, Item, node, pod, podgroup, queue, res, snapshot

PIPELINE = catalog.load_pipeline(None)
NODE = node("n1").resources(cpu=16, memory="32Gi")
EMPTY = Resources()


def closed(snap: ClusterSnapshot, carried: Carried | None = None) -> cycle.CycleReport:
    return cycle.run_cycle(snap, PIPELINE, clock=FixedClock(START), carried=carried)


def on_n1(name: str, status: TaskStatus, cpu: int = 1) -> Item:
    return pod(name).requests(cpu=cpu, memory="1Gi").group("g").on("n1", status).build()


def test_a_queue_counts_its_allocated_binding_bound_and_running_tasks_only() -> None:
    snap = snapshot(
        NODE,
        queue("q"),
        podgroup("g").min_member(1).queue("q"),
        on_n1("running", TaskStatus.RUNNING),
        on_n1("bound", TaskStatus.BOUND),
        on_n1("binding", TaskStatus.BINDING),
        on_n1("allocated", TaskStatus.ALLOCATED),
        on_n1("pipelined", TaskStatus.PIPELINED, cpu=8),
        on_n1("releasing", TaskStatus.RELEASING, cpu=8),
        on_n1("succeeded", TaskStatus.SUCCEEDED, cpu=8),
    )

    allocated = closed(snap).result.queue_allocated

    assert allocated["q"] == res(cpu=4, memory="4Gi")
    assert allocated["default"] == EMPTY


def test_a_pod_the_cycle_allocates_counts_and_one_it_pipelines_does_not() -> None:
    snap = snapshot(
        node("n1").resources(cpu=2, memory="4Gi"),
        node("n2").resources(cpu=2, memory="4Gi"),
        pod("leaving").requests(cpu=2).on("n2", TaskStatus.RELEASING),
        pod("fits").requests(cpu=2, memory="1Gi").created(1),
        pod("waits").requests(cpu=2, memory="1Gi").created(2),
    )

    result = closed(snap).result

    assert [b.pod for b in result.binds] == ["default/fits"]
    assert dict(result.pipelined) == {"default/waits": "n2"}
    assert result.queue_allocated == {"default": res(cpu=2, memory="1Gi")}


def test_with_a_root_queue_each_queue_counts_in_every_ancestor_up_its_parent_chain() -> None:
    snap = snapshot(
        NODE,
        queue("root"),
        queue("dept").parent("root"),
        queue("team").parent("dept"),
        queue("loose"),  # no parent: below root
        podgroup("t").min_member(1).queue("team"),
        podgroup("l").min_member(1).queue("loose"),
        pod("t1").requests(cpu=2, memory="1Gi").group("t").on("n1"),
        pod("l1").requests(cpu=1).group("l").on("n1"),
    )

    allocated = closed(snap).result.queue_allocated

    assert allocated["team"] == res(cpu=2, memory="1Gi")
    assert allocated["dept"] == res(cpu=2, memory="1Gi")
    assert allocated["loose"] == res(cpu=1)
    assert allocated["root"] == res(cpu=3, memory="1Gi")


def test_without_a_root_queue_a_parent_counts_only_its_own_jobs() -> None:
    snap = snapshot(
        NODE,
        queue("dept"),
        queue("team").parent("dept"),
        podgroup("t").min_member(1).queue("team"),
        pod("t1").requests(cpu=2).group("t").on("n1"),
    )

    allocated = closed(snap).result.queue_allocated

    assert allocated["team"] == res(cpu=2)
    assert allocated["dept"] == EMPTY


def test_a_parent_chain_that_comes_back_on_itself_stops_there() -> None:
    snap = snapshot(
        NODE,
        queue("root"),
        queue("a").parent("b"),
        queue("b").parent("a"),
        podgroup("g").min_member(1).queue("a"),
        pod("p").requests(cpu=1).group("g").on("n1"),
    )

    allocated = closed(snap).result.queue_allocated

    assert (allocated["a"], allocated["b"], allocated["root"]) == (res(cpu=1), res(cpu=1), EMPTY)


def test_a_session_opened_from_the_last_ones_records_counts_as_one_opened_afresh() -> None:
    group = podgroup("g").min_member(1).queue("q").build()
    running = pod("running").requests(cpu=1, memory="1Gi").group("g").on("n1").build()
    lone = [pod(f"lone{i}").requests(cpu=1).on("n1").build() for i in range(3)]
    first = closed(snapshot(NODE, queue("q"), group, running, *lone, pod("new").requests(cpu=2)))
    assert first.result.queue_allocated["default"] == res(cpu=5)

    # the new pod bound and running, a lone pod gone, another made Releasing
    bound = pod("new").requests(cpu=2).on("n1").build()
    releasing = pod("lone1").requests(cpu=1).on("n1", TaskStatus.RELEASING).build()
    second = snapshot(NODE, queue("q"), group, running, lone[0], releasing, bound)
    resumed = closed(second, first.carried).result.queue_allocated
    afresh = closed(second).result.queue_allocated

    assert resumed == afresh == {"default": res(cpu=3), "q": res(cpu=1, memory="1Gi")}
