"""Fuzzing volume binding: any mapping through the lenient volume converters, whole cycles
over generated clusters whose pods use claims, checked against the predicates plugin's rules
(`vscheduler/plugins/predicates/volumes.py`), and the bind-time plan of each pod bound, whose
wait for its claims must begin waiting, not failing (`effects.volume_wait`).

25 examples per test by default, 500 with `HYPOTHESIS_PROFILE=nightly` (bench/README.md).
"""

from __future__ import annotations

import copy
import datetime as dt
import os
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from vscheduler import catalog, cycle
from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.convert.volumes import (
    convert_claim,
    convert_class,
    convert_volume,
    guarded_claim,
    guarded_class,
    guarded_volume,
)
from vscheduler.effects.volume_wait import Failed, Waiting, check
from vscheduler.effects.volumes import Claimed, Plan, Refusal, volume_writes
from vscheduler.errors import InputError
from vscheduler.informer.kinds import CLUSTER_KINDS
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import CycleResult
from vscheduler.model.facts import NodeFacts, TaskFacts
from vscheduler.model.nodeselect import required_matches
from vscheduler.model.volumes import volume_matches as matches
from vscheduler.testing import volume_strategies as volumes
from vscheduler.testing.strategies import SCHEDULER, clusters

NOW = dt.datetime(2026, 1, 1, 0, 5, tzinfo=dt.UTC)
NIGHTLY = os.environ.get("HYPOTHESIS_PROFILE") == "nightly"
FUZZ = settings(
    max_examples=500 if NIGHTLY else 25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PIPELINES = {
    "default": catalog.load_pipeline(None),
    "preempting": catalog.load_pipeline(
        'actions: "enqueue, allocate, preempt, reclaim, backfill"\n'
        "tiers:\n"
        "- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n"
        "- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]\n"
    ),
}
Raw = dict[str, Any]
Guard = tuple[Callable[[Raw], Any], Callable[[Raw], Any]]
GUARDS: dict[str, Guard] = {
    "claim": (guarded_claim, convert_claim),
    "volume": (guarded_volume, convert_volume),
    "class": (guarded_class, convert_class),
}


# --- any mapping ----------------------------------------------------------------------------------
JUNK = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(("", "-1", "1Gi", "-1Gi", "1e2000", "Lost", "n0", "WaitForFirstConsumer"))
    | st.datetimes()
    | st.dates(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
"""Any value YAML or JSON can hold (the wrong type anywhere)."""


def _paths(value: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Every path into `value`'s mappings and lists."""
    found = [path]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*path, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            found += _paths(inner, (*path, i))
    return found


@st.composite
def mangled(draw: st.DrawFn, objects: st.SearchStrategy[Raw]) -> Raw:
    """A valid object with one to three of its values replaced by junk or removed."""
    obj: Raw = copy.deepcopy(draw(objects))
    obj["metadata"] = {**obj["metadata"], "name": "x", "namespace": "default"}
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(obj)[1:]))
        parent: Any = obj
        for step in path[:-1]:
            parent = parent[step]
        if isinstance(parent, dict) and draw(st.booleans()):
            parent.pop(path[-1])
        else:
            parent[path[-1]] = draw(JUNK)
    return obj


ANY_OBJECT: dict[str, st.SearchStrategy[Raw]] = {
    "claim": mangled(volumes.claims()),
    "volume": mangled(volumes.volumes()),
    "class": mangled(volumes.storage_classes()),
}


@FUZZ
@pytest.mark.parametrize("kind", sorted(GUARDS))
@given(data=st.data())
def test_the_lenient_volume_converters_never_raise_and_carry_the_strict_ones_complaint(
    kind: str, data: st.DataObject
) -> None:
    obj = data.draw(st.one_of(ANY_OBJECT[kind], st.dictionaries(st.text(max_size=8), JUNK)))
    guarded, strict = GUARDS[kind]
    facts = guarded(obj)
    try:
        expected, complaint = strict(obj), ""
    except InputError as err:
        expected, complaint = None, str(err)
    assert facts.problem == complaint
    if expected is not None:
        assert facts == expected


# --- whole cycles ---------------------------------------------------------------------------------
def filled_cache(objects: list[Raw]) -> SchedulerCache:
    cache = SchedulerCache(clock=FixedClock(NOW), scheduler_name=SCHEDULER)
    for kind in CLUSTER_KINDS:
        cache.replace(kind, [o for o in objects if o["kind"] == kind.name])
    return cache


def through_cache(objects: list[Raw]) -> ClusterSnapshot:
    return filled_cache(objects).snapshot()


def placements(result: CycleResult) -> dict[str, str]:
    """Pod key -> node: the binds, pipelined and nominated pods of one cycle."""
    return {
        **result.nominated,
        **result.pipelined,
        **{b.pod: b.node for b in result.binds},
    }


def premade_volumes_for_each(
    snap: ClusterSnapshot, wanted: Mapping[str, NodeFacts]
) -> dict[str, str] | None:
    """A distinct pre-made volume for each claim in `wanted` (claim key -> its node), one that
    `matches` it and whose node affinity admits the node; None when there is no such choice
    (augmenting paths: the claims are few)."""
    candidates = {
        key: [
            v.name
            for v in snap.volumes.values()
            if matches(v, snap.claims[key])
            and required_matches(v.node_affinity, node.labels, node.name)
        ]
        for key, node in wanted.items()
    }
    owner: dict[str, str] = {}

    def assign(key: str, seen: set[str]) -> bool:
        for name in candidates[key]:
            if name in seen:
                continue
            seen.add(name)
            if name not in owner or assign(owner[name], seen):
                owner[name] = key
                return True
        return False

    if all(assign(key, set()) for key in wanted):
        return {key: name for name, key in owner.items()}
    return None


def check_claims_of_placed_pods(snap: ClusterSnapshot, result: CycleResult) -> None:
    """Every pod placed this cycle (bound, pipelined, nominated) has all its claims, none lost,
    being deleted or unreadable, an ephemeral one its own; a fully bound claim's volume admits
    its node; a claim waiting for its first consumer names that node if it names one, its class's
    topology admits it if the class provisions, and the pods placed with one claim share one
    node; the bound and pipelined pods' pre-made claims take distinct matching volumes there."""
    nodes = {n.name: n for n in snap.nodes}
    tasks = {t.key: t for t in snap.tasks.values()}
    placed_on: dict[str, NodeFacts] = {}
    premade: dict[str, NodeFacts] = {}
    holding = {b.pod for b in result.binds} | set(result.pipelined)
    for key, node_name in placements(result).items():
        task, node = tasks[key], nodes[node_name]
        for name, ephemeral in task.claims:
            claim = snap.claims.get(f"{task.namespace}/{name}")
            assert claim is not None, (key, name)
            assert not claim.problem, (key, claim)
            assert not claim.lost, (key, claim)
            assert not claim.deleting, (key, claim)
            assert not ephemeral or task.uid in claim.owner_uids, (key, claim)
            if claim.fully_bound:
                volume = snap.volumes[claim.volume_name]
                assert required_matches(volume.node_affinity, node.labels, node.name), (key, volume)
                continue
            assert not claim.volume_name, (key, claim)
            storage_class = snap.storage_classes[claim.storage_class]
            assert storage_class.wait_for_first_consumer, (key, claim)
            assert placed_on.setdefault(claim.key, node) == node, (key, claim)
            if claim.selected_node:
                assert node.name == claim.selected_node, (key, claim)
            elif storage_class.provisions:
                topology = storage_class.allowed_topologies
                assert required_matches(topology, node.labels, node.name), (key, storage_class)
            elif key in holding:
                premade[claim.key] = node
    assert premade_volumes_for_each(snap, premade) is not None, premade


def missing_words(task: TaskFacts, name: str) -> str:
    """kube's words for a claim of the pod that does not exist."""
    if dict(task.claims)[name]:
        return (
            f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
        )
    return f'persistentvolumeclaim "{name}" not found'


def check_pods_of_missing_claims(snap: ClusterSnapshot, result: CycleResult) -> None:
    """A pod one of whose claims is missing is not placed; one whose first claim is missing and
    that was tried on the nodes says so in kube's words."""
    placed = placements(result)
    total = len(snap.nodes)
    for task in snap.tasks.values():
        if not task.claims or task.node_name is not None:
            continue
        missing = [n for n, _ in task.claims if f"{task.namespace}/{n}" not in snap.claims]
        if not missing:
            continue
        assert task.key not in placed, task.key
        message = result.unschedulable.get(task.key, "")
        first = task.claims[0][0]
        if first in missing and message.startswith(f"0/{total} nodes are available"):
            words = missing_words(task, first)
            assert message.startswith(f"0/{total} nodes are available: {words}."), message


@FUZZ
@given(st.one_of(clusters(), volumes.volume_clusters()), st.sampled_from(sorted(PIPELINES)))
def test_pods_go_only_where_their_claims_and_volumes_let_them(
    objects: list[Raw], policy: str
) -> None:
    snap = through_cache(objects)
    clock = FixedClock(NOW)
    for i in range(2):
        result = cycle.run_cycle(snap, PIPELINES[policy], clock=clock, uid=f"cycle-{i + 1}").result
        check_claims_of_placed_pods(snap, result)
        check_pods_of_missing_claims(snap, result)
        snap = cycle.next_snapshot(snap, result)
        clock.advance(1.0)


@FUZZ
@given(volumes.volume_clusters())
def test_a_bind_begins_to_wait_for_its_volumes_without_failing_before_anything_changed(
    objects: list[Raw],
) -> None:
    """For each pod a cycle binds, the bind-time plan's wait (`effects.volume_wait.check`), on
    the objects as they were before its writes were seen, waits or is done: a write the cache
    has not shown yet is never read as a failure (the selected-node annotation "removed", a
    claimRef "reset"), and a claim the plan waits for is one not bound yet."""
    cache = filled_cache(objects)
    snap = cache.snapshot()
    result = cycle.run_cycle(snap, PIPELINES["default"], clock=FixedClock(NOW), uid="c1").result
    for bind in result.binds:
        pod = cache.pod_volumes(bind.task_uid, bind.node)
        plan = Plan() if pod is None else volume_writes(pod)
        if isinstance(plan, Refusal):
            continue
        claims = [w.key for w in plan.waits]
        named = [w.volume for w in plan.waits if isinstance(w, Claimed)]
        held = cache.held_binding(claims, named, bind.node)
        assert held is not None
        assert all(not snap.claims[key].fully_bound for key in claims), (bind, claims)
        verdict = check(plan.waits, held, bind.node)
        assert not isinstance(verdict, Failed), (bind, plan, verdict)
        assert isinstance(verdict, Waiting) or not plan.writes, (bind, plan)
