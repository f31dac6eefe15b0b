"""Before a pod's Binding, the executor binds its volumes to the node (kube-scheduler's
VolumeBinding PreBind): a claim not ready for the node drops the bind, a failed write fails it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any, Literal

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects.executor import EffectsExecutor
from vscheduler.effects.ports import ObjectRef
from vscheduler.errors import ConflictError, TransientClusterError
from vscheduler.informer.kinds import CLAIM, NODE, POD, STORAGE_CLASS, VOLUME
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult
from vscheduler.model.status import TaskStatus
from vscheduler.model.volumebind import find_matching_volume
from vscheduler.model.volumes import ClaimFacts, VolumeFacts
from vscheduler.testing.executors import WAIT, running_executor
from vscheduler.testing.writers import ScriptedWriter

BIND = Bind(task_uid="uid-p1", pod="ns/p1", node="n1")
GI = 2**30


class Writer(ScriptedWriter):
    """Records every call in order (`ScriptedWriter`): binds, volume writes and Events."""

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        self.record("bind", f"{namespace}/{name}", node)

    def record_event(
        self, ref: ObjectRef, type_: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        self.record("event", type_, reason, message)


# --- objects -----------------------------------------------------------------------------------
def raw_pod(*claims: str, ephemeral: str = "") -> dict[str, Any]:
    volumes: list[dict[str, Any]] = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
    ]
    if ephemeral:
        volumes.append({"name": ephemeral, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}})
    return {
        "metadata": {"name": "p1", "namespace": "ns", "uid": "uid-p1"},
        "spec": {"schedulerName": "vscheduler", "containers": [], "volumes": volumes},
        "status": {"phase": "Pending"},
    }


def raw_node(name: str, **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": labels},
        "spec": {},
        "status": {"allocatable": {"cpu": "1", "pods": "10"}},
    }


def raw_claim(
    name: str,
    *,
    storage_class: str = "local",
    volume: str = "",
    selected: str = "",
    size: str = "1Gi",
    version: str = "5",
    **meta: Any,
) -> dict[str, Any]:
    annotations = {"volume.kubernetes.io/selected-node": selected} if selected else {}
    spec: dict[str, Any] = {
        "storageClassName": storage_class,
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": size}},
    }
    if volume:
        spec["volumeName"] = volume
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "resourceVersion": version,
            "annotations": annotations,
            **meta,
        },
        "spec": spec,
        "status": {"phase": "Bound" if volume else "Pending"},
    }


def raw_class(name: str, provisioner: str, *, mode: str = "WaitForFirstConsumer") -> dict[str, Any]:
    return {"metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": mode}


def raw_volume(
    name: str,
    size: str = "1Gi",
    *,
    node: str | None = "n1",
    storage_class: str = "local",
    phase: str = "Available",
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    claim: dict[str, str] | None = None,
    **meta: Any,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": size},
        "accessModes": list(modes),
        "storageClassName": storage_class,
    }
    if node is not None:
        term = {"matchExpressions": [{"key": "host", "operator": "In", "values": [node]}]}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    if claim is not None:
        spec["claimRef"] = claim
    return {
        "metadata": {"name": name, "resourceVersion": f"rv-{name}", **meta},
        "spec": spec,
        "status": {"phase": phase},
    }


LOCAL = raw_class("local", "kubernetes.io/no-provisioner")
FAST = raw_class("fast", "example.com/fake")


# --- fixtures ----------------------------------------------------------------------------------
@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(dt.datetime(2026, 1, 1, tzinfo=dt.UTC))


@pytest.fixture
def cache(clock: FixedClock) -> SchedulerCache:
    cache = SchedulerCache(clock=clock)
    cache.replace(NODE, [raw_node("n1", host="n1"), raw_node("n2", host="n2")])
    cache.replace(STORAGE_CLASS, [LOCAL, FAST, raw_class("now", "example.com/fake", mode="")])
    return cache


@pytest.fixture
def writer() -> Writer:
    return Writer()


@pytest.fixture
def outcomes() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def effects(
    writer: Writer, cache: SchedulerCache, clock: FixedClock, outcomes: list[tuple[str, str]]
) -> Iterator[EffectsExecutor]:
    with running_executor(writer, cache, clock, outcomes, workers=2, attempts=2) as effects:
        yield effects


def bind(effects: EffectsExecutor, cache: SchedulerCache, pod: dict[str, Any]) -> None:
    cache.replace(POD, [pod])
    effects.submit(CycleResult(binds=(BIND,)), ClusterSnapshot())
    assert effects.drain(WAIT)


def pending(cache: SchedulerCache) -> bool:
    """The bind was forgotten: the pod is shown pending again, to be placed next cycle."""
    task = cache.snapshot().tasks["uid-p1"]
    return task.status is TaskStatus.PENDING and task.node_name is None


# --- nothing to write --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "claim",
    [
        raw_claim("c1", volume="pv-1"),  # bound already
        raw_claim("c1", storage_class="gone"),  # a class not held: binds at once
        raw_claim("c1", storage_class="now"),  # Immediate: the PV controller binds it
        raw_claim("c1", storage_class="fast", selected="n1"),  # provisioned for this node
    ],
    ids=["bound", "class-missing", "immediate", "selected-this-node"],
)
def test_a_claim_that_needs_nothing_for_the_node_lets_the_binding_go_alone(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer, claim: dict[str, Any]
) -> None:
    cache.replace(CLAIM, [claim])
    bind(effects, cache, raw_pod("c1"))
    assert [c[0] for c in writer.calls if c[0] != "event"] == ["bind"]


# --- refusals ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("claims", "pod"),
    [
        ([], raw_pod("c1")),
        ([raw_claim("c1", deletionTimestamp="2026-01-01T00:00:00Z")], raw_pod("c1")),
        ([{**raw_claim("c1"), "status": {"phase": "Lost"}}], raw_pod("c1")),
        ([{**raw_claim("c1"), "spec": {"volumeMode": "Tape"}}], raw_pod("c1")),
        ([raw_claim("p1-scratch")], raw_pod(ephemeral="scratch")),  # not owned by the pod
        ([raw_claim("c1", storage_class="fast", selected="n2")], raw_pod("c1")),
        ([raw_claim("c1")], raw_pod("c1")),  # no pre-made volume at all
    ],
    ids=[
        "missing",
        "deleting",
        "lost",
        "malformed",
        "ephemeral-not-owned",
        "selected-other-node",
        "no-volume",
    ],
)
def test_a_claim_not_ready_for_the_node_drops_the_bind_and_writes_nothing(
    effects: EffectsExecutor,
    cache: SchedulerCache,
    writer: Writer,
    outcomes: list[tuple[str, str]],
    claims: list[dict[str, Any]],
    pod: dict[str, Any],
) -> None:
    cache.replace(CLAIM, claims)
    bind(effects, cache, pod)
    assert writer.calls == []
    assert outcomes == [("bind", "dropped")]
    assert pending(cache)


# --- a class that provisions -------------------------------------------------------------------
def test_a_claim_to_provision_is_annotated_with_the_node_on_its_version_before_the_binding(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer, outcomes: list[Any]
) -> None:
    cache.replace(CLAIM, [raw_claim("c1", storage_class="fast", version="42")])
    bind(effects, cache, raw_pod("c1"))
    assert writer.calls[:2] == [("selected node", "ns/c1", "n1", "42"), ("bind", "ns/p1", "n1")]
    assert outcomes == [("bind", "success")]


# --- pre-made volumes --------------------------------------------------------------------------
def test_the_smallest_available_volume_that_fits_claim_and_node_is_claimed_before_the_binding(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer
) -> None:
    other = {"namespace": "ns", "name": "other", "uid": "uid-other"}
    cache.replace(
        VOLUME,
        [
            raw_volume("a-too-small", "512Mi"),
            raw_volume("b-other-node", node="n2"),
            raw_volume("c-other-class", storage_class="slow"),
            raw_volume("d-read-only", modes=("ReadOnlyMany",)),
            raw_volume("e-released", phase="Released"),
            raw_volume("f-claimed-by-other", claim=other),
            raw_volume("g-deleting", deletionTimestamp="2026-01-01T00:00:00Z"),
            raw_volume("h-big", "10Gi"),
            raw_volume("i-fits", "2Gi"),
            raw_volume("j-fits-too", "2Gi"),
        ],
    )
    cache.replace(CLAIM, [raw_claim("c1")])
    bind(effects, cache, raw_pod("c1"))
    assert writer.calls[:2] == [
        ("claim ref", "i-fits", "ns/c1", "uid-c1", "rv-i-fits"),
        ("bind", "ns/p1", "n1"),
    ]


def test_a_volume_claimed_for_the_claim_already_is_not_written_again(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer
) -> None:
    ref = {"namespace": "ns", "name": "c1", "uid": "uid-c1"}
    cache.replace(VOLUME, [raw_volume("small"), raw_volume("mine", "5Gi", claim=ref)])
    cache.replace(CLAIM, [raw_claim("c1")])
    bind(effects, cache, raw_pod("c1"))
    assert [c[0] for c in writer.calls if c[0] != "event"] == ["bind"]


def test_two_claims_of_a_pod_are_given_two_volumes(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer
) -> None:
    cache.replace(VOLUME, [raw_volume("pv-1"), raw_volume("pv-2")])
    cache.replace(CLAIM, [raw_claim("c1"), raw_claim("c2")])
    bind(effects, cache, raw_pod("c1", "c2"))
    assert writer.of("claim ref") == [
        ("pv-1", "ns/c1", "uid-c1", "rv-pv-1"),
        ("pv-2", "ns/c2", "uid-c2", "rv-pv-2"),
    ]
    assert writer.of("bind") == [("ns/p1", "n1")]


# --- failed writes -----------------------------------------------------------------------------
def test_a_volume_write_refused_as_a_conflict_fails_the_bind_without_a_binding(
    effects: EffectsExecutor,
    cache: SchedulerCache,
    writer: Writer,
    outcomes: list[tuple[str, str]],
) -> None:
    writer.fail("claim ref", ConflictError("the object has been modified"))
    cache.replace(VOLUME, [raw_volume("pv-1")])
    cache.replace(CLAIM, [raw_claim("c1")])
    bind(effects, cache, raw_pod("c1"))
    assert writer.of("bind") == []
    assert len(writer.of("claim ref")) == 1  # a conflict is not retried
    assert outcomes == [("bind", "conflict")]
    assert pending(cache)


def test_a_volume_write_failing_past_its_retries_fails_the_bind_with_a_warning(
    effects: EffectsExecutor,
    cache: SchedulerCache,
    writer: Writer,
    outcomes: list[tuple[str, str]],
) -> None:
    writer.fail("selected node", *[TransientClusterError("503")] * 2)
    cache.replace(CLAIM, [raw_claim("c1", storage_class="fast")])
    bind(effects, cache, raw_pod("c1"))
    assert writer.of("bind") == []
    assert len(writer.of("selected node")) == 2
    assert outcomes == [("bind", "error")]
    ((type_, reason, message),) = writer.of("event")
    assert (type_, reason) == ("Warning", "FailedScheduling")
    assert str(message).startswith('running PreBind plugin "VolumeBinding": ')
    assert pending(cache)


# --- kube's FindMatchingVolume -----------------------------------------------------------------
def test_a_volume_claimed_for_the_claim_on_another_node_means_no_volume_at_all() -> None:
    claim = ClaimFacts(namespace="ns", name="c1", uid="u", storage_class="local")
    mine = VolumeFacts(name="mine", claim="ns/c1", node_affinity=())
    free = VolumeFacts(name="free", phase="Available", storage_class="local")
    assert find_matching_volume(claim, [free, mine], {}) is None
    assert find_matching_volume(claim, [free], {}) == free
    assert find_matching_volume(claim, [free], {}, excluded={"free"}) is None
