"""Volcano's e2e `test/e2e/schedulingbase/volume_binding.go` ("Volume Binding Test"), transcribed:
the scheduling decision of every `It`.

**The cluster** is the e2e's kind cluster (`vscheduler.testing.kind_e2e`): a tainted control
plane and four workers, the nodes `GetBoundedReadySchedulableNodes` returns (at most
`maxNodes` 5, the control plane left out for its taint), in name order. The e2e's `randomNode`
is one of them at random; here `integration-worker3` (not the first worker, which a pod with no
volume would take, so the volume decides), and its `conflictNodeName` is then the first worker,
`integration-worker`.

**The objects.** A local volume is a PersistentVolume of 2Gi, ReadWriteOnce, of the test's
StorageClass (`local-volume-test-storageclass-<ns>`, provisioner `kubernetes.io/no-provisioner`),
required to its node by `kubernetes.io/hostname`; its claim asks 2Gi ReadWriteOnce of the same
class (`e2epv`'s defaults). In `Immediate` mode the e2e waits for the PV controller to bind the
two before it goes on, so the pods meet the claim bound. The pods (`e2epod.MakeSecPod`, a
StatefulSet's nginx) request nothing: best-effort pods, placed by `backfill`. Each bare pod is its
own PodGroup (Volcano's PodGroup controller). Between cycles the scheduler's volume writes take
effect and the PV controller completes them (the scenario runner's, `cycle.next_snapshot`): a
claimed volume and its claim bound to each other; a provisioned claim is bound to the volume its
provisioner made by the test (`provisioned`).

**The policy** is the e2e ConfigMap's (`kind_e2e.CI_POLICY`).

**Not ours.** The kubelet mounting the volume and the pods reading and writing its files (the
"should be able to mount volume and read/write" Its, the two-pod read/write Its, "should fail due
to non-existent path"): transcribed is the scheduling they rely on, the pods going to the volume's
node. The StatefulSet controller (ordered or parallel pod creation, its claims from
`volumeClaimTemplates`) and the local-path provisioner are written out as the objects they make.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from vscheduler.model.cluster import ClusterSnapshot, complete_jobs
from vscheduler.model.facts import Requirement, SelectorTerm, TaskFacts
from vscheduler.model.volumes import (
    NO_PROVISIONER,
    ClaimFacts,
    StorageClassFacts,
    VolumeFacts,
)
from vscheduler.testing.builders import expr, pod, pod_term, snapshot, term
from vscheduler.testing.kind_e2e import CI_POLICY, HOST, WORKERS, kind_cluster
from vscheduler.testing.scenario import Outcome, run

NS = "volume-binding"
SC = f"local-volume-test-storageclass-{NS}"
RANDOM_NODE = "integration-worker3"
CONFLICT_NODE = WORKERS[0]
GI, MI = 1 << 30, 1 << 20
RWO = frozenset({"ReadWriteOnce"})
WRONG_NODE = (
    "0/5 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 4 node(s)"
    " didn't match Pod's node affinity/selector."
)
"""A pod held off its volume's node: the control plane and three workers fail its node
affinity (checked before taints, as Volcano's predicates do), the conflict node the volume's.
Reasons in kube's and Volcano's order, sorted as strings (`docs/pending.md`). The e2e reads only
the condition's reason."""


# --- the objects ----------------------------------------------------------------------------------
def storage_class(*, wait: bool) -> StorageClassFacts:
    """`setupStorageClass`: pre-made volumes only, `WaitForFirstConsumer` or `Immediate`."""
    return StorageClassFacts(name=SC, provisioner=NO_PROVISIONER, wait_for_first_consumer=wait)


def on(node_name: str) -> tuple[SelectorTerm, ...]:
    """`makeLocalPVConfig`'s node affinity: `kubernetes.io/hostname In [node]`."""
    return (
        SelectorTerm(
            match_expressions=(Requirement(key=HOST, operator="In", values=(node_name,)),)
        ),
    )


def local_volume(name: str, node_name: str) -> VolumeFacts:
    """A local PersistentVolume, Available."""
    return VolumeFacts(
        name=name,
        phase="Available",
        storage_class=SC,
        capacity=2 * GI,
        access_modes=RWO,
        node_affinity=on(node_name),
    )


def local_claim(name: str, request: int = 2 * GI) -> ClaimFacts:
    """A claim of the test's class, unbound."""
    return ClaimFacts(
        namespace=NS,
        name=name,
        uid=f"{NS}/{name}",
        storage_class=SC,
        request=request,
        access_modes=RWO,
    )


def bound_pair(claim: str, volume: str, node_name: str) -> tuple[ClaimFacts, VolumeFacts]:
    """`setupLocalVolumesPVCsPVs(..., 1, immediateMode)`: a local volume on the node and its claim,
    bound to each other by the PV controller."""
    made = dataclasses.replace(local_claim(claim), volume_name=volume, bind_completed=True)
    pv = dataclasses.replace(
        local_volume(volume, node_name), claim=made.key, claim_uid=made.uid, phase="Bound"
    )
    return made, pv


def using(name: str, *claims: str) -> TaskFacts:
    """A best-effort pod of the namespace mounting `claims`."""
    facts = pod(name, NS).build()
    return dataclasses.replace(facts, claims=tuple((c, False) for c in claims))


def cluster(
    *tasks: TaskFacts,
    claims: Iterable[ClaimFacts] = (),
    volumes: Iterable[VolumeFacts] = (),
    classes: Iterable[StorageClassFacts] = (),
) -> ClusterSnapshot:
    snap = snapshot(*kind_cluster(), *tasks)
    return dataclasses.replace(
        snap,
        claims={c.key: c for c in claims},
        volumes={v.name: v for v in volumes},
        storage_classes={c.name: c for c in classes},
    )


def created(
    snap: ClusterSnapshot, *tasks: TaskFacts, claims: Iterable[ClaimFacts] = ()
) -> ClusterSnapshot:
    """The cluster with `tasks` and `claims` created."""
    more = snapshot(*tasks)
    all_tasks = {**snap.tasks, **more.tasks}
    return dataclasses.replace(
        snap,
        tasks=all_tasks,
        jobs=complete_jobs(all_tasks, {**snap.jobs, **more.jobs}),
        claims={**snap.claims, **{c.key: c for c in claims}},
    )


def deleted(snap: ClusterSnapshot, name: str) -> ClusterSnapshot:
    """The cluster without the pod `name`."""
    tasks = {uid: t for uid, t in snap.tasks.items() if t.key != f"{NS}/{name}"}
    return dataclasses.replace(snap, tasks=tasks, jobs=complete_jobs(tasks, snap.jobs))


def cycle(snap: ClusterSnapshot) -> tuple[Outcome, ClusterSnapshot]:
    """One cycle, and the cluster after it (the scheduler's volume writes taken effect)."""
    (outcome,) = run(snap, policy=CI_POLICY)
    return outcome, outcome.snapshot_after


def immediate_volume(*tasks: TaskFacts, with_class: bool = True) -> ClusterSnapshot:
    """The `[Volume type: dir]` and "Pod with node different from PV's NodeAffinity" setup:
    the class in `Immediate` mode (none made by the "cannot be mounted" Its), one local volume
    on the random node and its claim `pvc-1`, bound."""
    claim, volume = bound_pair("pvc-1", "local-pv-1", RANDOM_NODE)
    classes = (storage_class(wait=False),) if with_class else ()
    return cluster(*tasks, claims=(claim,), volumes=(volume,), classes=classes)


# --- [Volume type: dir] ---------------------------------------------------------------------------
def test_one_pod_with_a_prebound_local_claim_goes_to_the_volumes_node() -> None:
    """ "One pod requesting one prebound PVC should be able to mount volume and read from pod1"
    and "... write from pod1": `verifyLocalPod` asserts pod1 runs on the random node, the
    volume's; the reads and writes are the kubelet's and the container's."""
    outcome, _ = cycle(immediate_volume(using("pod1", "pvc-1")))

    assert outcome.binds == {f"{NS}/pod1": RANDOM_NODE}


def test_two_pods_mounting_a_local_volume_at_the_same_time_both_go_to_its_node() -> None:
    """ "Two pods mounting a local volume at the same time should be able to write from pod1 and
    read from pod2": pod1 placed on the volume's node, then pod2, while pod1 runs, there too."""
    first, snap = cycle(immediate_volume(using("pod1", "pvc-1")))
    second, _ = cycle(created(snap, using("pod2", "pvc-1")))

    assert first.binds == {f"{NS}/pod1": RANDOM_NODE}
    assert second.binds == {f"{NS}/pod2": RANDOM_NODE}


def test_two_pods_mounting_a_local_volume_one_after_the_other_both_go_to_its_node() -> None:
    """ "Two pods mounting a local volume one after the other should be able to write from pod1
    and read from pod2": pod1 on the volume's node, deleted, then pod2 there too."""
    first, snap = cycle(immediate_volume(using("pod1", "pvc-1")))
    second, _ = cycle(created(deleted(snap, "pod1"), using("pod2", "pvc-1")))

    assert first.binds == {f"{NS}/pod1": RANDOM_NODE}
    assert second.binds == {f"{NS}/pod2": RANDOM_NODE}


# --- Local volume that cannot be mounted ----------------------------------------------------------
def test_a_volume_whose_path_does_not_exist_is_still_scheduled_to_its_node() -> None:
    """ "Local volume that cannot be mounted should fail due to non-existent path": the volume
    (path `/non-existent/location/nowhere`, on the random node; no StorageClass made, so the
    PV controller binds the claim at once) and its pod. The pod is not Running because the
    kubelet cannot mount the path, which is not ours; the scheduler places it on the volume's
    node."""
    outcome, _ = cycle(immediate_volume(using("pod", "pvc-1"), with_class=False))

    assert outcome.binds == {f"{NS}/pod": RANDOM_NODE}


def test_a_pod_required_to_another_node_than_its_volumes_never_runs() -> None:
    """ "Local volume that cannot be mounted should fail due to wrong node": the pod required
    (`e2epod.SetNodeAffinity`: `metadata.name In [conflict node]`) on another worker than its
    volume's: it stays pending, cycle after cycle."""
    task = pod("pod", NS).require(
        dataclasses.replace(term(), match_fields=(expr("metadata.name", "In", CONFLICT_NODE),))
    )
    facts = dataclasses.replace(task.build(), claims=(("pvc-1", False),))
    outcomes = run(immediate_volume(facts, with_class=False), policy=CI_POLICY, cycles=3)

    assert [o.binds for o in outcomes] == [{}, {}, {}]
    assert outcomes[-1].unschedulable == {f"{NS}/pod": WRONG_NODE}


# --- Pod with node different from PV's NodeAffinity -----------------------------------------------
def test_a_pod_whose_node_affinity_differs_from_its_volumes_is_unschedulable() -> None:
    """ "Pod with node different from PV's NodeAffinity should fail scheduling due to different
    NodeAffinity": the pod requires `kubernetes.io/hostname In [conflict node]`;
    `WaitForPodNameUnschedulableInNamespace` waits for it to be unschedulable."""
    task = pod("pod", NS).require(term(expr(HOST, "In", CONFLICT_NODE)))
    facts = dataclasses.replace(task.build(), claims=(("pvc-1", False),))
    outcome, _ = cycle(immediate_volume(facts))

    assert outcome.binds == {}
    assert outcome.unschedulable == {f"{NS}/pod": WRONG_NODE}


def test_a_pod_whose_node_selector_differs_from_its_volumes_is_unschedulable() -> None:
    """ "... should fail scheduling due to different NodeSelector": the pod selects
    `kubernetes.io/hostname: <conflict node>`."""
    task = pod("pod", NS).selector(**{HOST: CONFLICT_NODE})
    facts = dataclasses.replace(task.build(), claims=(("pvc-1", False),))
    outcome, _ = cycle(immediate_volume(facts))

    assert outcome.binds == {}
    assert outcome.unschedulable == {f"{NS}/pod": WRONG_NODE}


# --- StatefulSet with pod affinity ----------------------------------------------------------------
APP = {"app": "local-volume-test"}
VOLS_PER_NODE = 6


def local_volumes_on_every_worker() -> ClusterSnapshot:
    """The StatefulSet Context's setup: the class in `WaitForFirstConsumer` mode and, on every
    worker, six local volumes and six claims of the class that no pod uses (unbound: they wait
    for a consumer)."""
    volumes, claims = [], []
    for w, worker in enumerate(WORKERS):
        for k in range(VOLS_PER_NODE):
            volumes.append(local_volume(f"local-pv-{w}{k}", worker))
            claims.append(local_claim(f"pvc-{w}{k}"))
    return cluster(claims=claims, volumes=volumes, classes=(storage_class(wait=True),))


def replica(i: int, volume_count: int, *, anti: bool) -> tuple[TaskFacts, list[ClaimFacts]]:
    """`createStatefulSet`'s pod `local-volume-statefulset-<i>` (labelled app=local-volume-test,
    required pod affinity or anti-affinity to such pods by hostname) and the claims its
    `volumeClaimTemplates` make for it (`vol<j>-local-volume-statefulset-<i>`, 10Mi RWO)."""
    name = f"local-volume-statefulset-{i}"
    same_node = pod_term(HOST, **APP)
    built = pod(name, NS).labels(**APP)
    built = built.anti_affinity(same_node) if anti else built.affinity(same_node)
    claims = [local_claim(f"vol{j}-{name}", 10 * MI) for j in range(1, volume_count + 1)]
    facts = dataclasses.replace(built.build(), claims=tuple((c.name, False) for c in claims))
    return facts, claims


def ordered_ready(volume_count: int, *, anti: bool) -> tuple[dict[str, str], ClusterSnapshot]:
    """The three replicas created one after the other, each once the one before runs; the
    binds of all the cycles, and the cluster after."""
    snap = local_volumes_on_every_worker()
    binds: dict[str, str] = {}
    for i in range(3):
        task, claims = replica(i, volume_count, anti=anti)
        outcome, snap = cycle(created(snap, task, claims=claims))
        assert outcome.binds, outcome.unschedulable
        binds.update(outcome.binds)
    return binds, snap


def parallel(volume_count: int, *, anti: bool) -> tuple[dict[str, str], ClusterSnapshot]:
    """The three replicas created at once (`podManagementPolicy: Parallel`)."""
    snap = local_volumes_on_every_worker()
    for i in range(3):
        task, claims = replica(i, volume_count, anti=anti)
        snap = created(snap, task, claims=claims)
    outcome, snap = cycle(snap)
    return outcome.binds, snap


def statefulset_claims_bound_on_their_pods_nodes(snap: ClusterSnapshot) -> bool:
    """`validateStatefulSet`'s last check: every claim of a replica bound, to a volume on the
    replica's node."""
    for task in snap.tasks.values():
        if not task.name.startswith("local-volume-statefulset-"):
            continue
        for name, _ in task.claims:
            claim = snap.claims[f"{NS}/{name}"]
            if not claim.fully_bound:
                return False
            if snap.volumes[claim.volume_name].node_affinity != on(task.node_name or ""):
                return False
    return True


def replicas_on(*nodes: str) -> dict[str, str]:
    return {f"{NS}/local-volume-statefulset-{i}": n for i, n in enumerate(nodes)}


def test_a_statefulset_with_anti_affinity_uses_volumes_spread_across_nodes() -> None:
    """ "StatefulSet with pod affinity should use volumes spread across nodes when pod has
    anti-affinity": three replicas, six claims each, anti-affinity by hostname: each takes a
    worker's six volumes, on three workers."""
    binds, snap = ordered_ready(VOLS_PER_NODE, anti=True)

    assert binds == replicas_on(WORKERS[0], WORKERS[1], WORKERS[2])
    assert statefulset_claims_bound_on_their_pods_nodes(snap)


def test_a_statefulset_with_affinity_uses_volumes_on_one_node() -> None:
    """ "... should use volumes on one node when pod has affinity": three replicas, two claims
    each (6 / 3), affinity by hostname: all on one worker, its six volumes."""
    binds, snap = ordered_ready(VOLS_PER_NODE // 3, anti=False)

    assert binds == replicas_on(WORKERS[0], WORKERS[0], WORKERS[0])
    assert statefulset_claims_bound_on_their_pods_nodes(snap)


def test_a_parallel_statefulset_with_anti_affinity_uses_volumes_spread_across_nodes() -> None:
    """ "... should use volumes spread across nodes when pod management is parallel and pod has
    anti-affinity": three replicas of one claim created at once, on three workers."""
    binds, snap = parallel(1, anti=True)

    assert binds == replicas_on(WORKERS[0], WORKERS[1], WORKERS[2])
    assert statefulset_claims_bound_on_their_pods_nodes(snap)


def test_a_parallel_statefulset_with_affinity_uses_volumes_on_one_node() -> None:
    """ "... should use volumes on one node when pod management is parallel and pod has
    affinity": three replicas of one claim created at once, all on one worker."""
    binds, snap = parallel(1, anti=False)

    assert binds == replicas_on(WORKERS[0], WORKERS[0], WORKERS[0])
    assert statefulset_claims_bound_on_their_pods_nodes(snap)


# --- Dynamic Provisioning -------------------------------------------------------------------------
STANDARD = StorageClassFacts(
    name="standard", provisioner="rancher.io/local-path", wait_for_first_consumer=True
)
"""kind's default StorageClass (`e2eutil.DefaultStorageClass`): the local-path provisioner,
`WaitForFirstConsumer`."""


def provisioned(snap: ClusterSnapshot, claim_key: str) -> ClusterSnapshot:
    """The local-path provisioner done: a volume on the claim's selected node, bound to it."""
    claim = snap.claims[claim_key]
    volume = VolumeFacts(
        name=f"pvc-{claim.name}",
        claim=claim.key,
        claim_uid=claim.uid,
        phase="Bound",
        storage_class=claim.storage_class,
        capacity=claim.request,
        access_modes=claim.access_modes,
        node_affinity=on(claim.selected_node),
    )
    bound = dataclasses.replace(claim, volume_name=volume.name, bind_completed=True)
    return dataclasses.replace(
        snap,
        claims={**snap.claims, claim.key: bound},
        volumes={**snap.volumes, volume.name: volume},
    )


def test_a_claim_of_kinds_default_class_is_provisioned_where_its_first_pod_goes() -> None:
    """ "Dynamic Provisioning should provision storage using kind's cluster standard storage
    class": a 1Gi claim of `standard`; `PVWriteReadSingleNodeCheck` runs a writer pod with it
    (no node asked), which is placed and the claim annotated with its node; the provisioner
    makes the volume there; then a reader pod required (`e2epod.SetAffinity`: `metadata.name
    In`) to the writer's node goes there, the volume bound. Provisioning and the data written
    and read are not ours."""
    claim = ClaimFacts(
        namespace=NS,
        name="pvc-dyn",
        uid=f"{NS}/pvc-dyn",
        storage_class="standard",
        request=GI,
        access_modes=RWO,
    )
    snap = cluster(
        using("pvc-volume-tester-writer", "pvc-dyn"), claims=(claim,), classes=(STANDARD,)
    )
    first, snap = cycle(snap)
    assert first.binds == {f"{NS}/pvc-volume-tester-writer": WORKERS[0]}
    assert snap.claims[claim.key].selected_node == WORKERS[0]

    snap = provisioned(deleted(snap, "pvc-volume-tester-writer"), claim.key)
    reader = pod("pvc-volume-tester-reader", NS).require(
        dataclasses.replace(term(), match_fields=(expr("metadata.name", "In", WORKERS[0]),))
    )
    facts = dataclasses.replace(reader.build(), claims=(("pvc-dyn", False),))
    second, _ = cycle(created(snap, facts))

    assert second.binds == {f"{NS}/pvc-volume-tester-reader": WORKERS[0]}
