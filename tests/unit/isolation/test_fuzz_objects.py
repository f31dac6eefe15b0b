"""Fuzzing: odd objects the API server accepts, through conversion and whole cycles (the cache's
path, as `vscheduler run` takes them, and `simulate`'s). No exception escapes; every object that
cannot be used is named (the cache's problems, the pod's pending message, simulate's error).

25 examples per test by default, 500 with `HYPOTHESIS_PROFILE=nightly` (bench/README.md).
"""

from __future__ import annotations

import copy
import datetime as dt
import os
from collections.abc import Callable, Mapping
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings, strategies as st

from vscheduler import catalog, cycle, simulate
from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.convert.files import SourcedObject
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.effects.status import podgroup_status_patch
from vscheduler.errors import InputError
from vscheduler.framework import session as session_module
from vscheduler.framework.messages import SCHEDULING_GATED
from vscheduler.framework.registry import Pipeline
from vscheduler.framework.topology import limit
from vscheduler.informer.kinds import (
    CLAIM,
    HYPERNODE,
    NAMESPACE,
    NODE,
    PDB,
    POD,
    PODGROUP,
    PRIORITY_CLASS,
    QUEUE,
    RESOURCE_QUOTA,
    STORAGE_CLASS,
    VOLUME,
    Kind,
)
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import CycleResult
from vscheduler.model.status import TaskStatus
from vscheduler.testing.sessions import assert_same_opening
from vscheduler.testing.strategies import SCHEDULER, clusters, topology_jobs

NOW = dt.datetime(2026, 1, 1, 0, 5, tzinfo=dt.UTC)
PREEMPTING = """\
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: sla}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion},
            {name: nodeorder}, {name: binpack}]
"""
CAPACITY = """\
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: capacity}, {name: nodeorder}]
"""
HIERARCHY = """\
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: capacity, enableHierarchy: true,
            arguments: {ancestorReclaimLevel: 2}}, {name: nodeorder}]
"""
GUARDED = """\
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: pdb}, {name: tdm}]
- plugins: [{name: resourcequota}, {name: drf}, {name: predicates}, {name: proportion},
            {name: nodeorder}]
"""
NODEGROUP = """\
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder},
            {name: nodegroup, enableHierarchy: true, arguments: {strict: false}}]
"""
STRATEGY_FIT = """\
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins:
  - {name: drf}
  - {name: predicates}
  - {name: proportion}
  - name: resource-strategy-fit
    arguments:
      resources: {cpu: {type: MostAllocated}, "nvidia.com/*": {weight: 3}, pods: {}}
      sra: {enable: true, resources: "nvidia.com/gpu, pods", weight: 2}
      proportional: {enable: true, resources: nvidia.com/gpu}
"""
GANG_EVICT = """\
actions: "enqueue, allocate, gangreclaim, gangpreempt, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: capacity}]
- plugins: [{name: drf}, {name: predicates}, {name: nodeorder}]
configurations:
- {name: gangreclaim, arguments: {allowWholeBundle: false}}
"""
GANG_EVICT_PROPORTION = """\
actions: "enqueue, allocate, gangpreempt, gangreclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: pdb}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""
HDRF = """\
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: drf, enableHierarchy: true}]
- plugins: [{name: predicates}, {name: proportion}, {name: nodeorder}]
"""
NETWORK_TOPOLOGY = """\
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder},
            {name: binpack}, {name: network-topology-aware}]
"""
NETWORK_TOPOLOGY_FADED = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins:
  - {name: predicates}
  - {name: proportion}
  - name: network-topology-aware
    arguments: {weight: 3, hypernode.binpack.normal-pod.fading: 0, hypernode.binpack.cpu: 0}
"""
COOLDOWN = """\
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: cdp}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""
TOPOLOGY = """\
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder},
            {name: task-topology, arguments: {task-topology.weight: 10}}]
"""
POLICIES: dict[str, str | None] = {
    "default": None,
    "preempting": PREEMPTING,
    "capacity": CAPACITY,
    "hierarchy": HIERARCHY,
    "hdrf": HDRF,
    "guarded": GUARDED,
    "nodegroup": NODEGROUP,
    "strategy-fit": STRATEGY_FIT,
    "gang-evict": GANG_EVICT,
    "gang-evict-proportion": GANG_EVICT_PROPORTION,
    "cooldown": COOLDOWN,
    "topology": TOPOLOGY,
    "network-topology": NETWORK_TOPOLOGY,
    "network-topology-faded": NETWORK_TOPOLOGY_FADED,
}
PIPELINES: dict[str, Pipeline] = {k: catalog.load_pipeline(v) for k, v in POLICIES.items()}
KEPT_PIPELINES: dict[str, Pipeline] = {k: catalog.load_pipeline(v) for k, v in POLICIES.items()}
"""The same policies loaded again for the chain of cycles that take the last session's records:
what a plugin keeps from one session to the next (`gang.Quiet`) is kept per loaded policy, as
in the runtime, where one chain of cycles runs on it."""
KINDS: dict[str, Kind] = {
    "PriorityClass": PRIORITY_CLASS,
    "Namespace": NAMESPACE,
    "ResourceQuota": RESOURCE_QUOTA,
    "PodDisruptionBudget": PDB,
    "Queue": QUEUE,
    "Node": NODE,
    "HyperNode": HYPERNODE,
    "PodGroup": PODGROUP,
    "StorageClass": STORAGE_CLASS,
    "PersistentVolume": VOLUME,
    "PersistentVolumeClaim": CLAIM,
    "Pod": POD,
}
VOLUME_KINDS: dict[str, Callable[[ClusterSnapshot], Mapping[str, Any]]] = {
    "StorageClass": lambda snap: snap.storage_classes,
    "PersistentVolume": lambda snap: snap.volumes,
    "PersistentVolumeClaim": lambda snap: snap.claims,
}
"""The snapshot's facts of each volume kind, by key."""
NIGHTLY = os.environ.get("HYPOTHESIS_PROFILE") == "nightly"
FUZZ = settings(
    max_examples=500 if NIGHTLY else 25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""25 examples per test in the unit suite (a whole cluster per example is costly to draw),
500 with `HYPOTHESIS_PROFILE=nightly`."""


def label(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    key = f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]
    return f"{obj['kind']} {key}"


def through_cache(objects: list[dict[str, Any]]) -> SchedulerCache:
    cache = SchedulerCache(clock=FixedClock(NOW), scheduler_name=SCHEDULER)
    for kind_name, kind in KINDS.items():
        cache.replace(kind, [o for o in objects if o["kind"] == kind_name])
    return cache


def write_statuses(cache: SchedulerCache, result: CycleResult, cycle_number: int) -> None:
    """The PodGroup statuses `result` wants, come back through the watch as the effects would
    write them (the ones that change nothing are not written)."""
    for key, status in result.podgroups.items():
        raw = cache.podgroup_raw(key)
        patch = None if raw is None else podgroup_status_patch(status, raw)
        if raw is None or not patch:
            continue
        echoed: dict[str, Any] = copy.deepcopy(dict(raw))
        old = echoed.get("status")
        echoed["metadata"] = {**echoed["metadata"], "resourceVersion": f"written-{cycle_number}"}
        echoed["status"] = {**(old if isinstance(old, dict) else {}), **patch}
        cache.apply(PODGROUP, WatchEvent("MODIFIED", echoed))


def cycles(snap: ClusterSnapshot, pipeline: Pipeline, count: int = 2) -> None:
    """Run `count` cycles; after each, every pending pod of ours is bound, pipelined or named
    with a message, a pod the converter rejected carries its problem, a gated pod the gate's,
    and every nomination names an existing node for a pending pod of ours that was not bound."""
    clock = FixedClock(NOW)
    for i in range(count):
        report = cycle.run_cycle(snap, pipeline, clock=clock, uid=f"cycle-{i + 1}")
        result = report.result
        assert not [e for e in report.plugin_errors if e.startswith("task-topology")], report
        placed = {b.pod for b in result.binds} | set(result.pipelined)
        ours_pending = {
            t.key
            for t in snap.tasks.values()
            if t.scheduler_name == SCHEDULER
            and t.status is TaskStatus.PENDING
            and t.node_name is None
        }
        names = {n.name for n in snap.nodes}
        for key, node in result.nominated.items():
            assert key in ours_pending, key
            assert key not in {b.pod for b in result.binds}, key
            assert node in names, (key, node)
        for task in snap.tasks.values():
            if task.scheduler_name != SCHEDULER or task.status is not TaskStatus.PENDING:
                continue
            if task.node_name is not None:
                continue
            assert task.key in placed or result.unschedulable.get(task.key), task.key
            if task.problem:
                assert result.unschedulable[task.key] == task.problem
            elif task.scheduling_gated:  # never bound, pipelined or nominated
                assert result.unschedulable[task.key] == SCHEDULING_GATED, task.key
                assert task.key not in placed, task.key
                assert task.key not in result.nominated, task.key
        simulate.render({**simulate.cycle_json(result), "cycles": [], "explain": {}}, "json")
        simulate.render_table(
            {
                "cycles": [simulate.cycle_json(result)],
                "explain": {},
                "stats": {"cycleSeconds": [0.0], "pods": len(snap.tasks), "nodes": 1},
            }
        )
        snap = cycle.next_snapshot(snap, result)
        clock.advance(1.0)


@FUZZ
@given(clusters())
def test_conversion_through_the_cache_never_raises_and_names_every_object_it_cannot_use(
    objects: list[dict[str, Any]],
) -> None:
    cache = through_cache(objects)
    snap = cache.snapshot()
    labels = {label(o) for o in objects}
    assert set(cache.problems()) <= labels
    assert set(cache.warnings()) <= labels
    problems = cache.problems()
    for task in snap.tasks.values():  # a pod the converter rejected keeps its problem
        if f"Pod {task.key}" in problems:
            assert task.problem == problems[f"Pod {task.key}"]
    for obj in objects:
        name = obj["metadata"]["name"]
        if obj["kind"] == "Node" and label(obj) not in problems:
            assert any(n.name == name for n in snap.nodes)
        elif obj["kind"] == "Queue":  # kept, malformed or not: its jobs are told
            assert snap.queues[name].problem == problems.get(label(obj), "")
        elif obj["kind"] == "PodGroup":
            job = snap.jobs.get(f"default/{name}")  # None: another scheduler's (its pods say so)
            assert (job.problem if job else "") == problems.get(label(obj), "")
        elif obj["kind"] == "HyperNode":  # in the tree, or named with why it is left out
            if name in snap.topology.domains:
                assert label(obj) not in problems
            else:
                assert problems[label(obj)].startswith(label(obj))
        elif obj["kind"] in VOLUME_KINDS:  # kept, malformed or not: it fits no node then
            kept = VOLUME_KINDS[obj["kind"]](snap)
            key = label(obj).split(" ", 1)[1]
            assert kept[key].problem == problems.get(label(obj), "")


@FUZZ
@given(clusters(), st.sampled_from(sorted(PIPELINES)))
def test_whole_cycles_on_what_the_cache_holds_never_raise_and_name_every_pending_pod(
    objects: list[dict[str, Any]], policy: str
) -> None:
    cycles(through_cache(objects).snapshot(), PIPELINES[policy])


@FUZZ
@given(clusters(), st.sampled_from(sorted(PIPELINES)))
def test_a_session_that_sorts_a_few_tasks_and_jobs_into_order_decides_as_one_that_passes(
    objects: list[dict[str, Any]], policy: str
) -> None:
    """Over a snapshot in the cache's order, a session puts a few tasks or jobs in order by
    sorting them (creation time and uid; PodGroups by key, then the lone pods' implicit jobs
    in their pods' order), else by a pass over all of them: with every set sorted and with
    every set passed over, it opens and decides alike."""
    snap = through_cache(objects).snapshot()
    assert snap.cache_order
    opened: list[tuple[object, ...]] = []
    for few in (0, 10**9):  # 0: every set is few (sorted); 10**9: none is (passed over)
        with mock.patch.object(session_module, "_FEW", few):
            session = cycle.open_session(snap, PIPELINES[policy], clock=FixedClock(NOW))
            seen = (
                [j.key for j in session.pending_jobs],
                [j.key for j in session.jobs_with_pending],
                [t.uid for t in session.tasks_with_terms],
            )
            for action in PIPELINES[policy].actions:
                action.execute(session)
            opened.append((*seen, session.close()))
    assert opened[0] == opened[1]


@FUZZ
@given(topology_jobs())
def test_task_topologies_sound_and_odd_go_through_whole_cycles_without_an_error(
    objects: list[dict[str, Any]],
) -> None:
    """A job's task-topology annotations, sound, empty, repeated, naming roles its pods lack or
    with other separators, over pods of every role, pending or running: whole cycles through
    the cache never raise, the plugin raises nothing, and every pending pod is named."""
    cycles(through_cache(objects).snapshot(), PIPELINES["topology"], count=3)


@given(clusters(), st.sampled_from(sorted(PIPELINES)))
def test_simulates_path_either_names_the_object_it_rejects_or_runs_every_cycle(
    objects: list[dict[str, Any]], policy: str
) -> None:
    sourced = [SourcedObject(f"cluster.yaml#{i + 1}", o) for i, o in enumerate(objects)]
    try:
        snap = build_snapshot(sourced, scheduler_name=SCHEDULER, taken_at=NOW)
    except InputError as err:
        rejected = str(err)
    else:
        simulate.snapshot_warnings(snap)
        cycles(snap, PIPELINES[policy])
        return
    number = int(rejected.split("#", 1)[1].split(":", 1)[0])
    assert rejected.startswith(f"cluster.yaml#{number}: {label(objects[number - 1])}"), rejected
    # what Volcano's CRDs let through (odd values included) is read, never rejected; a HyperNode
    # that cannot be used is kept with its problem (simulate says so), never rejected
    assert objects[number - 1]["kind"] not in ("PodGroup", "Queue", "HyperNode"), rejected


@FUZZ
@given(clusters(max_pods=12), st.sampled_from(sorted(PIPELINES)), st.data())
def test_cycles_that_take_the_last_sessions_records_decide_as_cycles_that_start_afresh(
    objects: list[dict[str, Any]], policy: str, data: st.DataObject
) -> None:
    """The runtime's cycles start from the last session's records (`Session.carried`) and, over
    the same nodes, from its ledger (`Opening`): on the same snapshots, with the cluster moving
    between cycles as the cache sees it (binds and evictions assumed, pods and nodes deleted,
    pods coming back), they open with the same ledger, pending jobs, nominations and notes,
    and decide exactly what fresh sessions decide."""
    cache = through_cache(objects)
    pipeline, kept_pipeline = PIPELINES[policy], KEPT_PIPELINES[policy]
    fresh_clock, kept_clock = FixedClock(NOW), FixedClock(NOW)
    carried = None
    pods = [o for o in objects if o["kind"] == "Pod"]
    nodes = [o for o in objects if o["kind"] == "Node"]
    gone: list[dict[str, Any]] = []
    for i in range(4):
        snap = cache.snapshot()
        opened = cycle.open_session(snap, kept_pipeline, clock=kept_clock, carried=carried)
        afresh = cycle.open_session(snap, pipeline, clock=fresh_clock)
        assert_same_opening(opened, afresh)
        fresh = cycle.run_cycle(snap, pipeline, clock=fresh_clock, uid=f"cycle-{i + 1}")
        kept = cycle.run_cycle(
            snap, kept_pipeline, clock=kept_clock, uid=f"cycle-{i + 1}", carried=carried
        )
        assert kept.result == fresh.result
        carried = kept.carried
        cache.assume_binds(((b.task_uid, b.node) for b in fresh.result.binds), held=True)
        cache.assume_evicts(e.task_uid for e in fresh.result.evictions)
        moves = ["none", "delete pod", "pod back", "delete node", "statuses written"]
        move = data.draw(st.sampled_from(moves))
        if move == "statuses written":
            write_statuses(cache, fresh.result, i)
        elif move == "delete pod" and pods:
            gone.append(pods.pop(data.draw(st.integers(0, len(pods) - 1))))
            cache.apply(POD, WatchEvent("DELETED", gone[-1]))
        elif move == "pod back" and gone:
            pods.append(gone.pop())
            cache.apply(POD, WatchEvent("ADDED", pods[-1]))
        elif move == "delete node" and nodes:
            node = nodes.pop(data.draw(st.integers(0, len(nodes) - 1)))
            cache.apply(NODE, WatchEvent("DELETED", node))
        fresh_clock.advance(1.0)
        kept_clock.advance(1.0)


def within_one_domain(snap: ClusterSnapshot, result: CycleResult) -> None:
    """Every job with a hard network topology of tier T that had nothing placed before the
    cycle and got binds has them all within one HyperNode of tier T or lower (or T reaches the
    cluster's top)."""
    tree = snap.topology
    bound: dict[str, set[str]] = {}
    for bind in result.binds:
        bound.setdefault(snap.tasks[bind.task_uid].job, set()).add(bind.node)
    for key, nodes in bound.items():
        job = snap.jobs[key]
        wanted = job.network_topology
        if wanted is None or not wanted.is_hard:
            continue
        bound_limit = limit(wanted, tree).highest
        if bound_limit is None or bound_limit >= tree.top_tier:
            continue
        if any(t.job == key and t.node_name is not None for t in snap.tasks.values()):
            continue  # it ran before: it keeps to its own domain, whatever made it
        assert any(d.tier <= bound_limit and nodes <= d.nodes for d in tree.domains.values()), (
            key,
            nodes,
        )


@FUZZ
@given(clusters(min_hypernodes=1), st.sampled_from(("network-topology", "network-topology-faded")))
def test_odd_hypernodes_through_the_cache_and_whole_cycles_keep_hard_jobs_within_one(
    objects: list[dict[str, Any]], policy: str
) -> None:
    """HyperNodes with membership cycles, nodes in two of them, patterns that are no regular
    expression, unknown member types, tiers of 0 or below, and PodGroups asking any network
    topology: the cache names every HyperNode it leaves out, cycles never raise, every pending
    pod is named, and a hard job is placed within one HyperNode of its highest tier."""
    cache = through_cache(objects)
    snap = cache.snapshot()
    problems = cache.problems()
    for hypernode in snap.hypernodes:
        assert (hypernode.name in snap.topology.domains) != (
            f"HyperNode {hypernode.name}" in problems
        )
    pipeline = PIPELINES[policy]
    cycles(snap, pipeline)
    result = cycle.run_cycle(snap, pipeline, clock=FixedClock(NOW)).result
    within_one_domain(snap, result)


@FUZZ
@given(clusters(min_hypernodes=1), st.sampled_from(("network-topology", "default")))
def test_odd_hypernodes_in_a_snapshot_file_are_read_never_rejected(
    objects: list[dict[str, Any]], policy: str
) -> None:
    """`simulate`'s path: a HyperNode is never the object a file is refused for; one that
    cannot be used is told in the warnings (`simulate.snapshot_warnings`), and the cycles run."""
    sourced = [SourcedObject(f"cluster.yaml#{i + 1}", o) for i, o in enumerate(objects)]
    snap: ClusterSnapshot | None = None
    rejected = ""
    try:
        snap = build_snapshot(sourced, scheduler_name=SCHEDULER, taken_at=NOW)
    except InputError as err:
        rejected = str(err)
    if snap is None:
        number = int(rejected.split("#", 1)[1].split(":", 1)[0])
        assert objects[number - 1]["kind"] != "HyperNode", rejected
        return
    warnings = simulate.snapshot_warnings(snap)
    for hypernode in snap.hypernodes:
        if hypernode.name not in snap.topology.domains:
            assert any(w.startswith(f"HyperNode {hypernode.name}: ") for w in warnings)
    cycles(snap, PIPELINES[policy])
    within_one_domain(snap, cycle.run_cycle(snap, PIPELINES[policy], clock=FixedClock(NOW)).result)
