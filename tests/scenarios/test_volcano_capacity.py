"""capacity's enqueue and allocate checks and its queue share as Volcano decides, transcribed
from Volcano's `pkg/scheduler/plugins/capacity/capacity_test.go`: every case of
`TestEnqueueAndAllocatable`, `Test_updateQueueAttrShare`,
`TestNoDoubleCountingForInqueueJobWithBindingTasks` and `TestJobEnqueuedOnOtherPluginsReject`.
Each test's tier is the Go test's (see `go_tiers`: a flag the Go option leaves nil is off), with
its actions and its expected binds or PodGroup phases.

Objects are Volcano's test helpers: `BuildQueueWithResourcesQuantity(name, deserved,
capability)` (weight 1), `BuildQueueWithState` (a capability and a status.state, no deserved),
`BuildPodGroup` (minMember, phase; `spec.minResources` where the case sets it), `BuildPod`
(requests as written, in namespace `ns1`). Quantities keep Volcano's units (`3G` is 3*10^9
bytes, not `3Gi`).

How the Go setups that are not a plain session map here:
- `Test_updateQueueAttrShare` calls `updateQueueAttrShare` on a hand-made `queueAttr`. Here the
  queue is real: it deserves the case's `deserved`, holds Running pods adding up to the case's
  `allocated` and Pending pods adding up to its `request`, on a node large enough that the
  queue's realCapability never trims its deserved; the policy runs only `enqueue`, so nothing
  is allocated and the share capacity reports at session close (`CycleResult.queues`) is the
  share of session open. A queue Volcano builds an attribute for holds a job, so the idle queue
  holds one PodGroup without pods.
- `TestNoDoubleCountingForInqueueJobWithBindingTasks` runs cycle 1 (`allocate`) on a mock cache
  whose fake binder and status updater leave the three pods Binding and pgA Inqueue, then adds
  jobB and runs cycle 2 (`enqueue, allocate`). Cycle 1 is run here as is; cycle 2 runs on that
  cache state written out (the pods Binding on n1, pgA Inqueue: our `next_snapshot` would
  instead show the pods Running, which is the state after the binding window).
- `TestJobEnqueuedOnOtherPluginsReject` puts Volcano's test-only `RejecterPlugin` (rejects the
  PodGroup named pgA, permits the rest) in capacity's tier. Its stand-in is the resourcequota
  plugin: pgA lives in namespace `ns2`, whose ResourceQuota has no cpu left, so resourcequota
  rejects it at enqueue and has no quota to check for pgB in `ns1`. pgA is created first, so
  enqueue weighs it before pgB, as the case means.

Not transcribed (DRA, which vscheduler does not model; see docs/policy.md, capacity):
`TestCapacityPluginDRA`, `TestParseDRAResourceListCombinesCountAndCapacity`,
`TestSharedResourceClaimIsChargedOnce`, `TestJobEnqueueableChecksDRAWithoutMinResources`,
`TestJobEnqueueableAccountsDRAInqueue`, `TestDRAAllocatableIgnoresInqueue`,
`TestJobEnqueuedUpdatesDRAInqueueForDRAOnlyJob`, `TestCheckDRAAllocatable_overflowRejected`.
The file's other tests are transcribed elsewhere: `Test_capacityPlugin_OnSessionOpenWithout
Hierarchy` in test_volcano_capacity_reclaim.py, `Test_capacityPlugin_OnSessionOpenWithHierarchy`
and `Test_buildHierarchicalQueueAttrs_nilSafety` in test_hierarchical_queues.py,
`Test_capacityPlugin_AncestorReclaimScenarios` in test_ancestor_reclaim.py.
"""

from __future__ import annotations

import dataclasses

import pytest

from vscheduler.model.facts import QueueFacts
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.testing.builders import (
    Item,
    PodBuilder,
    PodGroupBuilder,
    node,
    pod,
    podgroup,
    queue,
    res,
    resource_quota,
    snapshot,
)
from vscheduler.testing.scenario import Outcome, run
from vscheduler.testing.volcano import go_tiers

NS = "ns1"
INQUEUE, PENDING, RUNNING = PodGroupPhase.INQUEUE, PodGroupPhase.PENDING, PodGroupPhase.RUNNING


def quantity_queue(
    name: str, deserved: dict[str, str] | None, capability: dict[str, str] | None
) -> QueueFacts:
    """`BuildQueueWithResourcesQuantity(name, deserved, capability)`."""
    return dataclasses.replace(
        queue(name).build(),
        deserved=None if deserved is None else res(**deserved),
        capability=None if capability is None else res(**capability),
    )


def group(
    name: str, q: str, phase: PodGroupPhase, *, members: int = 1, ns: str = NS
) -> PodGroupBuilder:
    """`BuildPodGroup(name, ns, q, members, nil, phase)`."""
    return podgroup(name, ns).queue(q).min_member(members).phase(phase)


def pending(name: str, job: str, *, ns: str = NS, **requests: str) -> PodBuilder:
    return pod(name, ns).group(job).requests(**requests)


def running(name: str, job: str, on: str, **requests: str) -> PodBuilder:
    return pod(name, NS).group(job).requests(**requests).on(on)


def keys(*names: str) -> set[str]:
    return {f"{NS}/{n}" for n in names}


# --- TestEnqueueAndAllocatable ------------------------------------------------------------------

ENQUEUE_AND_ALLOCATABLE = go_tiers(
    "enqueue, allocate",
    capacity=("enabledAllocatable", "enablePreemptive", "enabledOverused", "enableJobEnqueued"),
)
R1C3G, R3C1G = {"cpu": "1", "memory": "3G"}, {"cpu": "3", "memory": "1G"}


def enqueue_and_allocate(*items: Item) -> Outcome:
    """The case's objects, with n1 and n2 (3 cpu, 3G, 10 pods each), through enqueue and
    allocate."""
    nodes = [node(n).resources(cpu="3", memory="3G", pods=10) for n in ("n1", "n2")]
    [outcome] = run(snapshot(*nodes, *items), policy=ENQUEUE_AND_ALLOCATABLE)
    return outcome


def two_running_queues() -> list[Item]:
    """q1 (deserved 2 cpu 2G, capability 2 cpu 2G) running pod1 (1 cpu 3G) on n1, and q2
    (deserved 2 cpu 2G, capability 3 cpu 3G) running pod2 (3 cpu 1G) on n2: q1 is over its
    deserved in memory, q2 in cpu."""
    return [
        quantity_queue("q1", {"cpu": "2", "memory": "2G"}, {"cpu": "2", "memory": "2G"}),
        quantity_queue("q2", {"cpu": "2", "memory": "2G"}, {"cpu": "3", "memory": "3G"}),
        group("pg1", "q1", RUNNING).min_resources(**R1C3G),
        group("pg2", "q2", RUNNING).min_resources(**R3C1G),
        running("pod1", "pg1", "n1", **R1C3G),
        running("pod2", "pg2", "n2", **R3C1G),
    ]


def test_a_cpu_only_job_of_a_queue_over_deserved_in_memory_is_enqueued_and_allocated() -> None:
    """TestEnqueueAndAllocatable case0: memory exceed derserved, job only request cpu can be
    enqueued and allocated. Volcano checks enqueue and allocation only in the resources the job
    asks for: pod3 (1 cpu) is bound to n1, the node with a cpu left."""
    outcome = enqueue_and_allocate(
        *two_running_queues(),
        group("pg3", "q1", PENDING).min_resources(cpu="1", memory="0G"),
        pending("pod3", "pg3", cpu="1", memory="0G"),
    )

    assert outcome.binds == {"ns1/pod3": "n1"}


def test_a_memory_only_job_of_a_queue_over_deserved_in_cpu_is_enqueued_and_allocated() -> None:
    """TestEnqueueAndAllocatable case1: cpu exceed derserved, job only request memory can be
    enqueued and allocated: pod4 (1G) is bound to n2, the node with memory left."""
    outcome = enqueue_and_allocate(
        *two_running_queues(),
        group("pg4", "q2", PENDING).min_resources(cpu="0", memory="1G"),
        pending("pod4", "pg4", cpu="0", memory="1G"),
    )

    assert outcome.binds == {"ns1/pod4": "n2"}


def test_a_job_beyond_its_queues_capability_is_not_enqueued() -> None:
    """TestEnqueueAndAllocatable case2: exceed capacity, can not enqueue: pg5 (1 cpu 1G) would
    take q1 to 4G of its 2G capability, so it stays Pending and nothing is bound."""
    outcome = enqueue_and_allocate(
        *two_running_queues(),
        group("pg5", "q1", PENDING).min_resources(cpu="1", memory="1G"),
        pending("pod5", "pg5", cpu="1", memory="1G"),
    )

    assert outcome.binds == {}
    assert outcome.result.podgroups["ns1/pg5"].phase is PENDING


def test_a_job_of_a_closed_queue_is_not_enqueued() -> None:
    """TestEnqueueAndAllocatable case4: queue with non-open state, can not enqueue: q3 is
    `BuildQueueWithState("q3", 1, 3 cpu 3G, Closed)`; pg6 stays Pending, nothing is bound."""
    outcome = enqueue_and_allocate(
        queue("q3").capability(cpu="3", memory="3G").state("Closed"),
        group("pg6", "q3", PENDING).min_resources(cpu="1", memory="1G"),
        pending("pod6", "pg6", cpu="1", memory="1G"),
    )

    assert outcome.binds == {}
    assert outcome.result.podgroups["ns1/pg6"].phase is PENDING


# --- Test_updateQueueAttrShare ------------------------------------------------------------------

SHARE_ONLY = go_tiers("enqueue", capacity=("enableQueueOrder",))
Amounts = tuple[str, str] | None
"""(cpu, memory) as `api.BuildResourceList` takes them; None for `api.EmptyResource()`."""


def reported_share(deserved: Amounts, allocated: Amounts, request: Amounts) -> float:
    """The share capacity reports for `test-queue`: it deserves `deserved`, holds a Running pod
    of `allocated` and a Pending pod of `request` in one Running PodGroup (no pod for None)."""
    items: list[Item] = [
        node("n1").resources(cpu="64", memory="64Gi", pods=10),
        quantity_queue(
            "test-queue",
            None if deserved is None else {"cpu": deserved[0], "memory": deserved[1]},
            None,
        ),
        group("pg", "test-queue", RUNNING),
    ]
    if allocated is not None:
        items.append(running("held", "pg", "n1", cpu=allocated[0], memory=allocated[1]))
    if request is not None:
        items.append(pending("asked", "pg", cpu=request[0], memory=request[1]))
    [outcome] = run(snapshot(*items), policy=SHARE_ONLY)
    return outcome.result.queues["test-queue"].share


SHARE_CASES = [
    pytest.param(None, ("1", "1Gi"), None, 1.0, id="best-effort queue with allocated resources"),
    pytest.param(None, None, ("1", "1Gi"), 1.0, id="best-effort queue with pending requests only"),
    pytest.param(
        None,
        ("1", "1Gi"),
        ("0.5", "0.5Gi"),
        1.0,
        id="best-effort queue with both allocated and request",
    ),
    pytest.param(None, None, None, 1.0, id="best-effort queue completely idle"),
    pytest.param(("2", "2Gi"), None, None, 0.0, id="queue with deserved but no allocated"),
    pytest.param(
        ("2", "2Gi"), ("1", "1Gi"), None, 0.5, id="queue with deserved, allocated < deserved"
    ),
    pytest.param(
        ("2", "2Gi"), ("2", "2Gi"), None, 1.0, id="queue with deserved, allocated = deserved"
    ),
    pytest.param(
        ("2", "2Gi"), ("3", "2Gi"), None, 1.5, id="queue with deserved, allocated > deserved"
    ),
    pytest.param(
        ("2", "4Gi"), ("1", "3Gi"), None, 0.75, id="queue with deserved, memory is dominant"
    ),
    pytest.param(
        ("2", "4Gi"), ("1.5", "2Gi"), None, 0.75, id="queue with deserved, CPU is dominant"
    ),
    pytest.param(("2", "2Gi"), ("3", "3Gi"), None, 1.5, id="queue with deserved, exceeds on both"),
    pytest.param(
        ("2", "2Gi"), ("1", "1Gi"), ("1", "1Gi"), 0.5, id="queue with deserved, request ignored"
    ),
    pytest.param(("0", "0Gi"), ("1", "1Gi"), None, 1.0, id="queue with deserved but zero values"),
    pytest.param(
        ("2", "2Gi"), ("0", "0Gi"), None, 0.0, id="queue with deserved, allocated is zero"
    ),
    pytest.param(None, ("1", "0Gi"), None, 1.0, id="best-effort queue with only CPU allocated"),
    pytest.param(None, ("0", "1Gi"), None, 1.0, id="best-effort queue with only memory allocated"),
    pytest.param(None, None, ("1", "0Gi"), 1.0, id="best-effort queue with only CPU request"),
]


@pytest.mark.parametrize(("deserved", "allocated", "asked", "share"), SHARE_CASES)
def test_a_queues_share_is_its_largest_held_to_deserved_ratio_or_1_if_it_deserves_nothing(
    deserved: Amounts, allocated: Amounts, asked: Amounts, share: float
) -> None:
    """Test_updateQueueAttrShare, one case per parameter (ids are the Go case names, some
    shortened): a queue that deserves nothing (`api.EmptyResource()`, or a deserved of 0 cpu and
    0 memory) is best-effort, share 1 whatever it holds or asks; otherwise the share is the
    largest allocated/deserved over the resources deserved, and what it asks does not count."""
    assert reported_share(deserved, allocated, asked) == share


# --- TestNoDoubleCountingForInqueueJobWithBindingTasks ------------------------------------------


def no_double_counting(actions: str) -> str:
    return go_tiers(
        actions, capacity=("enabledAllocatable", "enabledOverused", "enableJobEnqueued")
    )


def job_a(*pods: PodBuilder) -> list[Item]:
    """n1 (4 cpu 8Gi), q1 (capability 4 cpu 8Gi) and jobA: pgA Inqueue, minMember 3,
    minResources 3 cpu 3Gi, with `pods`."""
    return [
        node("n1").resources(cpu="4", memory="8Gi", pods=10),
        quantity_queue("q1", None, {"cpu": "4", "memory": "8Gi"}),
        group("pgA", "q1", INQUEUE, members=3).min_resources(cpu="3", memory="3Gi"),
        *pods,
    ]


def test_tasks_binding_under_an_inqueue_podgroup_are_not_counted_twice_in_their_queue() -> None:
    """TestNoDoubleCountingForInqueueJobWithBindingTasks: cycle 1 (allocate) binds jobA's three
    pods; while they are Binding, pgA stays Inqueue. In cycle 2 (enqueue, allocate) jobB (1 cpu)
    fits q1: allocated 3 cpu, and pgA's minResources reserve nothing beyond what it holds
    (1 + 3 + 0 <= 4), so pB1 is bound (the bug counted 1 + 3 + 3 > 4 and refused it)."""
    pa = [pending(f"pA{i}", "pgA", cpu="1", memory="1Gi") for i in (1, 2, 3)]
    [cycle1] = run(snapshot(*job_a(*pa)), policy=no_double_counting("allocate"))
    assert cycle1.binds == {"ns1/pA1": "n1", "ns1/pA2": "n1", "ns1/pA3": "n1"}

    binding = [p.on("n1", TaskStatus.BINDING) for p in pa]
    job_b: list[Item] = [
        group("pgB", "q1", PENDING).min_resources(cpu="1", memory="1Gi"),
        pending("pB1", "pgB", cpu="1", memory="1Gi"),
    ]
    [cycle2] = run(
        snapshot(*job_a(*binding), *job_b), policy=no_double_counting("enqueue, allocate")
    )

    assert cycle2.binds == {"ns1/pB1": "n1"}


# --- TestJobEnqueuedOnOtherPluginsReject --------------------------------------------------------

CO_TIER_REJECT = go_tiers(
    "enqueue", capacity=("enableJobEnqueued",), resourcequota=("enableJobEnqueued",)
)


def test_a_job_another_plugin_of_the_tier_rejects_takes_nothing_from_its_queue() -> None:
    """TestJobEnqueuedOnOtherPluginsReject: pgA rejected by co-tier plugin must not consume q1
    capacity; pgB must be admitted. q1 (deserved and capability 1 cpu 4G) holds one job of
    1 cpu; pgA, weighed first, is rejected (here by its namespace's spent ResourceQuota), so its
    minResources never join q1's inqueue and pgB is Inqueue."""
    outcome = run(
        snapshot(
            node("n1").resources(cpu="4", memory="4G", pods=10),
            quantity_queue("q1", {"cpu": "1", "memory": "4G"}, {"cpu": "1", "memory": "4G"}),
            resource_quota("spent", "ns2").hard(cpu="1").used(cpu="1"),
            group("pgA", "q1", PENDING, ns="ns2").min_resources(cpu="1", memory="1G"),
            group("pgB", "q1", PENDING).min_resources(cpu="1", memory="1G").created(1),
            pending("podA", "pgA", ns="ns2", cpu="1", memory="1G"),
            pending("podB", "pgB", cpu="1", memory="1G"),
        ),
        policy=CO_TIER_REJECT,
    )[0]

    assert outcome.result.podgroups["ns1/pgB"].phase is INQUEUE
    assert outcome.result.podgroups["ns2/pgA"].phase is PENDING
