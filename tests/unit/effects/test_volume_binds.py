"""Before a pod's Binding, the executor binds its volumes to the node (kube-scheduler's
VolumeBinding PreBind): a claim not ready for the node drops the bind, a failed write fails it,
and the Binding waits, off the workers and assumed on its node, until the cache shows the claims
bound (kube's `checkBindings`), failing as kube's does."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any, Literal

import pytest

from vscheduler.cache.cache import SchedulerCache
from vscheduler.clock import FixedClock
from vscheduler.effects.executor import EffectsExecutor
from vscheduler.effects.ports import ObjectRef
from vscheduler.errors import ConflictError, TransientClusterError
from vscheduler.informer.kinds import CLAIM, NODE, POD, STORAGE_CLASS, VOLUME
from vscheduler.informer.ports import WatchEvent
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult
from vscheduler.model.status import TaskStatus
from vscheduler.model.volumebind import find_matching_volume
from vscheduler.model.volumes import ClaimFacts, VolumeFacts
from vscheduler.testing.executors import WAIT, running_executor, status_of
from vscheduler.testing.writers import ScriptedWriter

BIND = Bind(task_uid="uid-p1", pod="ns/p1", node="n1")
GI = 2**30


class Writer(ScriptedWriter):
    """Records every call in order (`ScriptedWriter`): binds, volume writes and Events."""

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        self.record("bind", f"{namespace}/{name}", node)

    def set_pod_condition(self, namespace: str, name: str, condition: Mapping[str, str]) -> None:
        self.record("condition", f"{namespace}/{name}", condition["reason"], condition["message"])

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


def changed(
    effects: EffectsExecutor, cache: SchedulerCache, kind: Any, obj: dict[str, Any]
) -> None:
    """The watch shows `obj` changed (the cache tells the executor, which checks the waiting
    binds); then wait for what that set going."""
    cache.apply(kind, WatchEvent("MODIFIED", obj))
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
    ],
    ids=["bound", "class-missing", "immediate"],
)
def test_a_claim_that_needs_nothing_for_the_node_lets_the_binding_go_alone(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer, claim: dict[str, Any]
) -> None:
    cache.replace(CLAIM, [claim])
    bind(effects, cache, raw_pod("c1"))
    assert [c[0] for c in writer.calls if c[0] != "event"] == ["bind"]


# --- volume binding off -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "claim",
    [
        raw_claim("c1", storage_class="fast"),  # would be annotated, then waited for
        raw_claim("c1"),  # would have a pre-made volume claimed, then waited for
        raw_claim("c1", storage_class="fast", selected="n2"),  # would drop the bind
    ],
    ids=["to-provision", "pre-made", "selected-other-node"],
)
def test_with_volume_binding_off_the_binding_goes_at_once_and_no_volume_is_written(
    writer: Writer,
    cache: SchedulerCache,
    clock: FixedClock,
    outcomes: list[tuple[str, str]],
    claim: dict[str, Any],
) -> None:
    """The policy's predicates with `predicate.VolumeBindingEnable: false` (Volcano then runs no
    VolumeBinding PreBind): no claim annotated, no volume claimed, no wait."""
    cache.replace(CLAIM, [claim])
    cache.replace(VOLUME, [raw_volume("pv-1")])
    with running_executor(
        writer, cache, clock, outcomes, workers=2, attempts=2, volume_binding=lambda: False
    ) as effects:
        bind(effects, cache, raw_pod("c1"))
    assert [c[:3] for c in writer.calls if c[0] != "event"] == [("bind", "ns/p1", "n1")]
    assert outcomes == [("bind", "success")]


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
def test_a_claim_to_provision_is_annotated_with_the_node_on_its_version_and_the_binding_waits(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer, outcomes: list[Any]
) -> None:
    cache.replace(CLAIM, [raw_claim("c1", storage_class="fast", version="42")])
    bind(effects, cache, raw_pod("c1"))
    assert writer.calls == [("selected node", "ns/c1", "n1", "42")]
    assert outcomes == []


def test_a_claim_annotated_for_the_node_already_is_not_written_and_the_binding_waits(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer, outcomes: list[Any]
) -> None:
    cache.replace(CLAIM, [raw_claim("c1", storage_class="fast", selected="n1")])
    bind(effects, cache, raw_pod("c1"))
    assert writer.calls == []
    assert outcomes == []


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
    assert writer.calls == [("claim ref", "i-fits", "ns/c1", "uid-c1", "rv-i-fits")]


def test_a_volume_claimed_for_the_claim_already_is_not_written_again(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer
) -> None:
    ref = {"namespace": "ns", "name": "c1", "uid": "uid-c1"}
    cache.replace(VOLUME, [raw_volume("small"), raw_volume("mine", "5Gi", claim=ref)])
    cache.replace(CLAIM, [raw_claim("c1")])
    bind(effects, cache, raw_pod("c1"))
    assert writer.calls == []


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
    assert writer.of("bind") == []  # it waits for the PV controller


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


# --- waiting for the claims to be bound --------------------------------------------------------
BIND_COMPLETED = {"pv.kubernetes.io/bind-completed": "yes"}
REF = {"namespace": "ns", "name": "c1", "uid": "uid-c1"}


def provisioned(selected: str = "n1", version: str = "45") -> dict[str, Any]:
    """Claim c1 as the provisioner and the PV controller leave it: bound to pv-c1."""
    claim = raw_claim(
        "c1", storage_class="fast", volume="pv-c1", selected=selected, version=version
    )
    claim["metadata"]["annotations"].update(BIND_COMPLETED)
    return claim


def test_a_provisioned_claim_holds_the_binding_until_the_cache_shows_it_bound(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer, outcomes: list[Any]
) -> None:
    cache.replace(CLAIM, [raw_claim("c1", storage_class="fast", version="42")])
    bind(effects, cache, raw_pod("c1"))
    assert writer.of("bind") == []
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n1")  # still counted on n1
    changed(
        effects, cache, CLAIM, raw_claim("c1", storage_class="fast", selected="n1", version="43")
    )
    assert writer.of("bind") == []  # annotated: the provisioner has not made the volume yet
    changed(effects, cache, VOLUME, raw_volume("pv-c1", storage_class="fast", claim=REF))
    changed(effects, cache, CLAIM, provisioned())
    assert writer.of("bind") == [("ns/p1", "n1")]
    assert outcomes == [("bind", "success")]


def test_a_claim_still_at_the_version_written_on_is_waited_for_not_failed(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer, outcomes: list[Any]
) -> None:
    claim = raw_claim("c1", storage_class="fast", version="42")
    cache.replace(CLAIM, [claim])
    bind(effects, cache, raw_pod("c1"))
    changed(effects, cache, CLAIM, claim)  # no selected-node yet: the write not seen yet
    assert outcomes == []
    assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n1")


def test_the_selected_node_annotation_removed_fails_the_bind_in_kubes_words(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer, outcomes: list[Any]
) -> None:
    cache.replace(CLAIM, [raw_claim("c1", storage_class="fast", version="42")])
    bind(effects, cache, raw_pod("c1"))
    changed(effects, cache, CLAIM, raw_claim("c1", storage_class="fast", version="44"))
    message = (
        'running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "c1"'
    )
    assert writer.of("bind") == []
    assert outcomes == [("bind", "error"), ("pod_condition", "success")]
    assert writer.of("condition") == [("ns/p1", "SchedulerError", message)]
    assert writer.of("event") == [("Warning", "FailedScheduling", message)]
    assert pending(cache)


@pytest.mark.parametrize(
    ("volume", "reason"),
    [
        (None, 'failed to check binding: could not find v1.PersistentVolume "pv-1"'),
        (raw_volume("pv-1", resourceVersion="2"), 'ClaimRef got reset for pv "pv-1"'),
        (
            raw_volume(
                "pv-1",
                claim={"namespace": "ns", "name": "c9", "uid": "uid-c9"},
                resourceVersion="3",
            ),
            'pv "pv-1" is bound to another claim ns/c9',
        ),
    ],
    ids=["volume-gone", "claim-ref-reset", "bound-elsewhere"],
)
def test_a_pre_made_volume_gone_or_bound_elsewhere_fails_the_bind(
    effects: EffectsExecutor,
    cache: SchedulerCache,
    writer: Writer,
    outcomes: list[Any],
    volume: dict[str, Any] | None,
    reason: str,
) -> None:
    cache.replace(VOLUME, [raw_volume("pv-1")])
    cache.replace(CLAIM, [raw_claim("c1")])
    bind(effects, cache, raw_pod("c1"))
    assert writer.of("claim ref") == [("pv-1", "ns/c1", "uid-c1", "rv-pv-1")]
    if volume is None:
        cache.replace(VOLUME, [])
        assert effects.drain(WAIT)
    else:
        changed(effects, cache, VOLUME, volume)
    assert writer.of("bind") == []
    assert ("bind", "error") in outcomes
    ((_, _, message),) = writer.of("event")
    assert message == f'running PreBind plugin "VolumeBinding": binding volumes: {reason}'
    assert pending(cache)


def test_a_pre_made_volume_bound_by_the_pv_controller_lets_the_binding_go(
    effects: EffectsExecutor, cache: SchedulerCache, writer: Writer, outcomes: list[Any]
) -> None:
    cache.replace(VOLUME, [raw_volume("pv-1")])
    cache.replace(CLAIM, [raw_claim("c1")])
    bind(effects, cache, raw_pod("c1"))
    changed(
        effects, cache, VOLUME, raw_volume("pv-1", claim=REF, phase="Bound", resourceVersion="7")
    )
    assert writer.of("bind") == []
    claim = raw_claim("c1", volume="pv-1", version="8")
    claim["metadata"]["annotations"].update(BIND_COMPLETED)
    changed(effects, cache, CLAIM, claim)
    assert writer.of("bind") == [("ns/p1", "n1")]
    assert outcomes == [("bind", "success")]


def test_a_bind_waiting_past_its_timeout_fails_with_kubes_deadline_message(
    writer: Writer, cache: SchedulerCache, clock: FixedClock, outcomes: list[Any]
) -> None:
    cache.replace(CLAIM, [raw_claim("c1", storage_class="fast", selected="n1")])
    with running_executor(
        writer, cache, clock, outcomes, workers=2, attempts=2, volume_bind_timeout=lambda: 30.0
    ) as effects:
        bind(effects, cache, raw_pod("c1"))
        clock.advance(29.5)
        effects.volumes_changed()  # a check now, as the poll's timer would make
        assert effects.drain(WAIT)
        assert outcomes == []
        clock.advance(0.5)
        effects.volumes_changed()
        assert effects.drain(WAIT)
    message = 'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded'
    assert writer.of("bind") == []
    assert writer.of("condition") == [("ns/p1", "SchedulerError", message)]
    assert outcomes[0] == ("bind", "error")
    assert pending(cache)


def test_a_bind_waiting_for_its_volumes_holds_no_worker_from_other_pods_binds(
    writer: Writer, cache: SchedulerCache, clock: FixedClock, outcomes: list[Any]
) -> None:
    other = {**raw_pod(), "metadata": {"name": "p2", "namespace": "ns", "uid": "uid-p2"}}
    cache.replace(CLAIM, [raw_claim("c1", storage_class="fast", selected="n1")])
    cache.replace(POD, [raw_pod("c1"), other])
    with running_executor(writer, cache, clock, outcomes, workers=1, attempts=1) as effects:
        effects.submit(CycleResult(binds=(BIND,)), ClusterSnapshot())
        assert effects.drain(WAIT)
        later = Bind(task_uid="uid-p2", pod="ns/p2", node="n2")
        effects.submit(CycleResult(binds=(later,)), ClusterSnapshot())
        assert effects.drain(WAIT)
        assert writer.of("bind") == [("ns/p2", "n2")]  # the one worker was free for it
        assert status_of(cache, "uid-p1") == (TaskStatus.BOUND, "n1")  # p1 still waits


@pytest.mark.parametrize("how", ["step down", "pod deleted", "node deleted"])
def test_a_bind_waiting_when_its_decision_goes_is_dropped_unsent(
    effects: EffectsExecutor,
    cache: SchedulerCache,
    writer: Writer,
    outcomes: list[Any],
    how: str,
) -> None:
    cache.replace(CLAIM, [raw_claim("c1", storage_class="fast", selected="n1")])
    bind(effects, cache, raw_pod("c1"))
    if how == "step down":
        effects.step_down()
    elif how == "pod deleted":
        cache.apply(POD, WatchEvent("DELETED", raw_pod("c1")))
        effects.volumes_changed()
    else:
        effects.node_deleted("n1")
    assert effects.drain(WAIT)
    changed(effects, cache, CLAIM, provisioned())
    assert writer.of("bind") == []
    assert outcomes == [("bind", "dropped")]
    if how != "pod deleted":
        assert pending(cache)


def test_a_shutdown_sends_no_bind_still_waiting_and_counts_it_unsent(
    writer: Writer, cache: SchedulerCache, clock: FixedClock, outcomes: list[Any]
) -> None:
    cache.replace(CLAIM, [raw_claim("c1", storage_class="fast", selected="n1")])
    effects = EffectsExecutor(writer, cache, clock=clock, workers=1)
    cache.on_volumes_changed(effects.volumes_changed)
    bind(effects, cache, raw_pod("c1"))
    assert effects.shutdown(grace=5.0) == {"binds": 1}
    assert writer.of("bind") == []
    assert pending(cache)
