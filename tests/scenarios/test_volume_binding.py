"""Volume binding (the predicates plugin, kube-scheduler's VolumeBinding): a pod's
PersistentVolumeClaims keep it pending with kube's words, or choose its node."""

from __future__ import annotations

import dataclasses

import pytest

from vscheduler import cycle
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult
from vscheduler.model.facts import Requirement, SelectorTerm, TaskFacts
from vscheduler.model.selector import LabelRequirement, LabelSelector
from vscheduler.model.status import TaskStatus
from vscheduler.model.volumes import NO_PROVISIONER, ClaimFacts, StorageClassFacts, VolumeFacts
from vscheduler.testing.builders import Item, NodeBuilder, node, pod, snapshot
from vscheduler.testing.scenario import TIERS, Outcome, run

POLICY = 'actions: "enqueue, allocate, backfill"\n' + TIERS
GI = 1 << 30
HOSTNAME = "kubernetes.io/hostname"
FAST = StorageClassFacts(name="fast", provisioner="csi.example.com")
LATE = StorageClassFacts(name="late", provisioner="csi.example.com", wait_for_first_consumer=True)
LOCAL = StorageClassFacts(name="local", provisioner=NO_PROVISIONER, wait_for_first_consumer=True)


def nodes() -> list[NodeBuilder]:
    """n1 (zone a) and n2 (zone b), labelled with their hostnames; n1 is chosen when nothing
    else decides."""
    return [
        node(name).resources(cpu="4", memory="8Gi").label("zone", zone).label(HOSTNAME, name)
        for name, zone in (("n1", "a"), ("n2", "b"))
    ]


def using(name: str, *claims: str, ephemeral: bool = False) -> TaskFacts:
    facts = pod(name).requests(cpu="1").build()
    return dataclasses.replace(facts, claims=tuple((c, ephemeral) for c in claims))


def claim(name: str, **fields: object) -> ClaimFacts:
    return ClaimFacts(namespace="default", name=name, request=GI, **fields)  # type: ignore[arg-type]


def on(node_name: str) -> tuple[SelectorTerm, ...]:
    """A volume's node affinity to one node, as the local volume provisioner writes it."""
    term = SelectorTerm(
        match_expressions=(Requirement(key=HOSTNAME, operator="In", values=(node_name,)),)
    )
    return (term,)


def volume(name: str, node_name: str, **fields: object) -> VolumeFacts:
    made = VolumeFacts(
        name=name,
        capacity=GI,
        phase="Available",
        storage_class="local",
        node_affinity=on(node_name),
    )
    return dataclasses.replace(made, **fields)  # type: ignore[arg-type]


def cluster(
    *items: Item | TaskFacts,
    claims: tuple[ClaimFacts, ...] = (),
    volumes: tuple[VolumeFacts, ...] = (),
    classes: tuple[StorageClassFacts, ...] = (FAST, LATE, LOCAL),
) -> ClusterSnapshot:
    snap = snapshot(*nodes(), *items)
    return dataclasses.replace(
        snap,
        claims={c.key: c for c in claims},
        volumes={v.name: v for v in volumes},
        storage_classes={c.name: c for c in classes},
    )


def added(snap: ClusterSnapshot, task: TaskFacts) -> ClusterSnapshot:
    """The cluster with `task` (and its PodGroup) created."""
    more = snapshot(task)
    return dataclasses.replace(
        snap, tasks={**snap.tasks, **more.tasks}, jobs={**snap.jobs, **more.jobs}
    )


def once(snap: ClusterSnapshot, policy: str = POLICY) -> Outcome:
    (outcome,) = run(snap, policy=policy)
    return outcome


# --- before any node ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("claims", "task", "message"),
    [
        pytest.param(
            (),
            using("p", "data"),
            '0/2 nodes are available: persistentvolumeclaim "data" not found.',
            id="missing",
        ),
        pytest.param(
            (),
            using("p", "p-scratch", ephemeral=True),
            "0/2 nodes are available: waiting for ephemeral volume controller to create the"
            ' persistentvolumeclaim "p-scratch".',
            id="ephemeral-not-yet-made",
        ),
        pytest.param(
            (claim("p-scratch", storage_class="late"),),
            using("p", "p-scratch", ephemeral=True),
            "0/2 nodes are available: PVC default/p-scratch was not created for pod default/p"
            " (pod is not owner).",
            id="ephemeral-of-another-pod",
        ),
        pytest.param(
            (claim("data", storage_class="fast"),),
            using("p", "data"),
            "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
            id="unbound-immediate",
        ),
        pytest.param(
            (claim("data"),),
            using("p", "data"),
            "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
            id="unbound-without-class",
        ),
        pytest.param(
            (claim("data", storage_class="late", volume_name="pv-1"),),
            using("p", "data"),
            "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
            id="prebound-not-yet-bound",
        ),
        pytest.param(
            (claim("data", deleting=True, volume_name="pv-1", bind_completed=True),),
            using("p", "data"),
            '0/2 nodes are available: persistentvolumeclaim "data" is being deleted.',
            id="deleting",
        ),
        pytest.param(
            (claim("data", lost=True, volume_name="pv-1", bind_completed=True),),
            using("p", "data"),
            '0/2 nodes are available: persistentvolumeclaim "data" bound to non-existent'
            ' persistentvolume "pv-1".',
            id="lost",
        ),
    ],
)
def test_a_pod_whose_claims_no_node_can_serve_stays_pending_with_kubes_words(
    claims: tuple[ClaimFacts, ...], task: TaskFacts, message: str
) -> None:
    outcome = once(cluster(task, pod("plain").requests(cpu="1"), claims=claims))

    assert outcome.binds == {"default/plain": "n1"}
    assert outcome.result.unschedulable == {"default/p": message}


# --- per node -----------------------------------------------------------------------------------
def test_a_bound_claim_takes_the_pod_to_its_volumes_node() -> None:
    bound = claim("data", volume_name="pv-b", bind_completed=True, storage_class="local")
    outcome = once(
        cluster(
            using("p", "data"),
            claims=(bound,),
            volumes=(volume("pv-b", "n2", claim="default/data"),),
        )
    )

    assert outcome.binds == {"default/p": "n2"}


def test_a_claim_bound_to_a_volume_that_is_gone_names_it() -> None:
    bound = claim("data", volume_name="pv-gone", bind_completed=True)
    outcome = once(cluster(using("p", "data"), claims=(bound,)))

    assert outcome.result.unschedulable == {
        "default/p": "0/2 nodes are available: 2 node(s) unavailable due to one or more pvc(s)"
        " bound to non-existent pv(s)."
    }


def test_a_volume_whose_node_cannot_take_the_pod_is_named() -> None:
    bound = claim("data", volume_name="pv-c", bind_completed=True)
    outcome = once(
        cluster(
            using("p", "data"),
            claims=(bound,),
            volumes=(volume("pv-c", "n3", claim="default/data"),),
        )
    )

    assert outcome.result.unschedulable == {
        "default/p": "0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node"
        " affinity."
    }


def test_a_claim_waiting_for_its_consumer_is_provisioned_within_its_class_topology() -> None:
    zoned = dataclasses.replace(
        LATE,
        allowed_topologies=(
            SelectorTerm(
                match_expressions=(Requirement(key="zone", operator="In", values=("b",)),)
            ),
        ),
    )
    outcome = once(
        cluster(
            using("p", "data"),
            claims=(claim("data", storage_class="late"),),
            classes=(zoned,),
        )
    )

    assert outcome.binds == {"default/p": "n2"}


def test_a_claim_with_a_selected_node_keeps_its_pods_there() -> None:
    chosen = claim("data", storage_class="late", selected_node="n2")
    outcome = once(cluster(using("p", "data"), claims=(chosen,)))

    assert outcome.binds == {"default/p": "n2"}


def test_pods_sharing_a_claim_that_waits_for_its_consumer_go_to_one_node() -> None:
    # a must go to zone b (n2); b alone would take the emptier n1, but its claim is held to n2
    shared = claim("shared", storage_class="late", access_modes=frozenset({"ReadWriteMany"}))
    first = dataclasses.replace(using("a", "shared"), node_selector={"zone": "b"})
    outcome = once(cluster(first, using("b", "shared"), claims=(shared,)))

    assert outcome.binds == {"default/a": "n2", "default/b": "n2"}


def test_without_the_shared_claim_the_second_pod_takes_the_emptier_node() -> None:
    first = dataclasses.replace(pod("a").requests(cpu="1").build(), node_selector={"zone": "b"})
    outcome = once(cluster(first, pod("b").requests(cpu="1")))

    assert outcome.binds == {"default/a": "n2", "default/b": "n1"}


def test_a_premade_volume_serves_one_claim_a_cycle() -> None:
    claims = (claim("one", storage_class="local"), claim("two", storage_class="local"))
    outcome = once(
        cluster(
            using("p1", "one"), using("p2", "two"), claims=claims, volumes=(volume("pv-a", "n2"),)
        )
    )

    assert outcome.binds == {"default/p1": "n2"}
    assert outcome.result.unschedulable == {
        "default/p2": "0/2 nodes are available: 2 node(s) didn't find available persistent"
        " volumes to bind."
    }


def test_a_premade_volume_must_be_large_enough_and_alike() -> None:
    small = volume("pv-small", "n1", capacity=GI // 2)
    block = volume("pv-block", "n1", volume_mode="Block")
    other = volume("pv-other", "n1", storage_class="elsewhere")
    fits = volume("pv-fits", "n2")
    outcome = once(
        cluster(
            using("p", "data"),
            claims=(claim("data", storage_class="local"),),
            volumes=(small, block, other, fits),
        )
    )

    assert outcome.binds == {"default/p": "n2"}


OFF = POLICY.replace(
    "  - name: predicates\n",
    "  - name: predicates\n    arguments:\n      predicate.VolumeBindingEnable: false\n",
)
"""The policy with Volcano's volume binding switched off."""


def test_volume_binding_can_be_switched_off() -> None:
    outcome = once(cluster(using("p", "data")), OFF)

    assert outcome.binds == {"default/p": "n1"}


def test_with_volume_binding_on_a_bind_claims_its_premade_volume_for_the_next_cycle() -> None:
    """The writes before the Binding (the VolumeBinding PreBind) take effect between cycles: p1,
    held to zone b, has the volume on n2 claimed for its claim (the PV controller binds the
    two), so p2, sharing the claim, follows it there the next cycle, though the volume on n1
    would serve an unbound claim on n1, the node chosen when nothing else decides."""
    rwx = frozenset({"ReadWriteMany"})
    claims = (claim("data", storage_class="local", access_modes=rwx),)
    volumes = (volume("pv-a", "n2", access_modes=rwx), volume("pv-b", "n1", access_modes=rwx))
    p1 = dataclasses.replace(using("p1", "data"), node_selector={"zone": "b"})
    first, second = run(
        cluster(p1, claims=claims, volumes=volumes),
        policy=POLICY,
        cycles=2,
        between=lambda _, snap: added(snap, using("p2", "data")),
    )

    assert first.binds == {"default/p1": "n2"}
    after = first.snapshot_after
    assert after.claims["default/data"].volume_name == "pv-a"
    assert (after.volumes["pv-a"].claim, after.volumes["pv-b"].claim) == ("default/data", "")
    assert second.binds == {"default/p2": "n2"}


def test_between_cycles_a_bind_the_effects_would_refuse_for_its_claims_leaves_the_pod_pending() -> (
    None
):
    """`cycle.next_snapshot` with volume binding: a bind whose claim is not ready for its node
    (here: gone since the cycle) is dropped by the effects, so the pod stays pending, unplaced;
    without volume binding the bind goes."""
    snap = cluster(using("p", "data"))
    task = snap.tasks["default/p"]
    result = CycleResult(binds=(Bind(task_uid=task.uid, pod=task.key, node="n1"),))

    kept = cycle.next_snapshot(snap, result, volume_binding=True).tasks[task.uid]
    bound = cycle.next_snapshot(snap, result, volume_binding=False).tasks[task.uid]

    assert (kept.node_name, kept.status) == (None, TaskStatus.PENDING)
    assert (bound.node_name, bound.status) == ("n1", TaskStatus.RUNNING)


def test_with_volume_binding_off_no_volume_is_claimed_or_checked() -> None:
    """`predicate.VolumeBindingEnable: false` turns off the whole of Volcano's VolumeBinding
    plugin: the pod goes where nothing else decides (n1, though its volume could only be on
    n2), and its claim is neither annotated nor bound after the bind."""
    claims = (claim("data", storage_class="local"), claim("made", storage_class="late"))
    snap = cluster(using("p", "data", "made"), claims=claims, volumes=(volume("pv-a", "n2"),))
    (outcome,) = run(snap, policy=OFF)

    assert outcome.binds == {"default/p": "n1"}
    assert outcome.snapshot_after.claims == snap.claims
    assert outcome.snapshot_after.volumes == snap.volumes


def test_a_claims_selector_picks_among_premade_volumes() -> None:
    gold = LabelSelector(
        match_expressions=(LabelRequirement(key="tier", operator="In", values=("gold",)),)
    )
    outcome = once(
        cluster(
            using("p", "data"),
            claims=(claim("data", storage_class="local", selector=gold),),
            volumes=(
                volume("pv-silver", "n1", labels=(("tier", "silver"),)),
                volume("pv-gold", "n2", labels=(("tier", "gold"),)),
            ),
        )
    )

    assert outcome.binds == {"default/p": "n2"}


def test_two_claims_of_one_pod_never_count_one_premade_volume() -> None:
    # found by tests/unit/isolation/test_fuzz_volumes.py: p was bound to n2 for both claims
    claims = (claim("one", storage_class="local"), claim("two", storage_class="local"))
    outcome = once(
        cluster(using("p", "one", "two"), claims=claims, volumes=(volume("pv-a", "n2"),))
    )

    assert outcome.binds == {}
    assert outcome.result.unschedulable == {
        "default/p": "0/2 nodes are available: 2 node(s) didn't find available persistent"
        " volumes to bind."
    }


def test_two_claims_of_one_pod_take_two_premade_volumes_on_one_node() -> None:
    claims = (claim("one", storage_class="local"), claim("two", storage_class="local"))
    volumes = (volume("pv-a", "n2"), volume("pv-b", "n2"))
    outcome = once(cluster(using("p", "one", "two"), claims=claims, volumes=volumes))

    assert outcome.binds == {"default/p": "n2"}


def test_pods_sharing_a_premade_claim_hold_one_volume_for_it() -> None:
    # p2 held a second volume for `one`, and p3 found none for `two`
    claims = (claim("one", storage_class="local"), claim("two", storage_class="local"))
    outcome = once(
        cluster(
            using("p1", "one"),
            using("p2", "one"),
            using("p3", "two"),
            claims=claims,
            volumes=(volume("pv-a", "n2"), volume("pv-b", "n2")),
        )
    )

    assert outcome.binds == {"default/p1": "n2", "default/p2": "n2", "default/p3": "n2"}


@pytest.mark.parametrize(
    "storage_class",
    [
        pytest.param(LOCAL, id="pre-made-volumes-only"),
        pytest.param(
            dataclasses.replace(
                LATE,
                allowed_topologies=(
                    SelectorTerm(
                        match_expressions=(Requirement(key="zone", operator="In", values=("a",)),)
                    ),
                ),
            ),
            id="node-outside-the-class-topology",
        ),
    ],
)
def test_a_selected_node_the_class_cannot_provision_on_admits_no_node(
    storage_class: StorageClassFacts,
) -> None:
    chosen = claim("data", storage_class=storage_class.name, selected_node="n2")
    outcome = once(cluster(using("p", "data"), claims=(chosen,), classes=(storage_class,)))

    assert outcome.binds == {}
    assert outcome.result.unschedulable == {
        "default/p": "0/2 nodes are available: 2 node(s) didn't find available persistent"
        " volumes to bind."
    }
