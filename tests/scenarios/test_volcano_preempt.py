"""preempt as Volcano decides, transcribed from Volcano's `pkg/scheduler/actions/preempt/
preempt_test.go` (`TestPreempt`): its objects, its single tier (conformance, gang, priority,
proportion, with exactly the points its `conf.PluginOption`s enable: see `go_tiers`), the preempt
action alone, and its expected evictions. Preempt never binds: what it places is pipelined
(Volcano's `normalPreempt`), so binds stay empty.

Objects are Volcano's test helpers: `util.BuildPod` (requests as written, "1G" is 10^9 bytes;
the `volcano.sh/preemptable` label where the case sets it; no pod priority unless
`BuildPodWithPriority`), `BuildPodGroupWithPrio` (the PriorityClass's value: high-priority
100000, low-priority 10; `BuildPodGroup` has none), `BuildQueue(name, weight, capability)`,
`BuildNode` (its `pods` allocatable). There is no predicates plugin: the pod limit holds as every
task's one pod slot.
"""

from __future__ import annotations

import dataclasses

from vscheduler.testing.builders import (
    Item,
    PodBuilder,
    node,
    pod,
    pod_term,
    podgroup,
    queue,
    res,
    snapshot,
)
from vscheduler.testing.scenario import Outcome, run
from vscheduler.testing.volcano import go_tiers

POLICY = go_tiers(
    "preempt",
    conformance=("enablePreemptable",),
    gang=("enablePreemptable", "enableJobPipelined", "enableJobStarving"),
    priority=(
        "enableTaskOrder",
        "enableJobOrder",
        "enablePreemptable",
        "enableJobPipelined",
        "enableJobStarving",
    ),
    proportion=("enabledOverused", "enabledAllocatable", "enableQueueOrder"),
)
TOPOLOGY_AWARE_ARGUMENT = """\
configurations:
- name: preempt
  arguments:
    enableTopologyAwarePreemption: true
"""


def topology_tier(*predicates: str) -> str:
    """TestTopologyAwarePreempt's tier with the predicates entry's flags given."""
    return go_tiers(
        "preempt",
        conformance=("enablePreemptable",),
        gang=("enablePreemptable", "enableJobPipelined", "enableJobStarving"),
        priority=(
            "enableTaskOrder",
            "enableJobOrder",
            "enablePreemptable",
            "enableJobPipelined",
            "enableJobStarving",
        ),
        proportion=("enabledOverused", "enabledAllocatable", "enableQueueOrder", "enablePredicate"),
        predicates=predicates,
    )


TOPOLOGY_AWARE = topology_tier("enablePreemptable", "enablePredicate") + TOPOLOGY_AWARE_ARGUMENT
"""TestTopologyAwarePreempt's tier (its capacity entry, queue order only, is left out: vscheduler
loads one queue plugin per policy, and proportion orders the queues first)."""
HIGH, LOW = 100000, 10
HOST = "kubernetes.io/hostname"


def build_node(name: str, cpu: str, memory: str, pods: int = 10) -> Item:
    return node(name).resources(cpu=cpu, memory=memory, pods=pods)


def group(name: str, q: str, members: int, minimum: int | None, *, priority: int = 0) -> Item:
    built = podgroup(name).queue(q).min_member(members).priority(priority).inqueue()
    return built if minimum is None else built.min_task_member(**{"": minimum})


def running(
    name: str, on: str, cpu: str, memory: str, group: str, preemptable: bool | None = None
) -> PodBuilder:
    built = pod(name).group(group).on(on)
    if cpu:
        built = built.requests(cpu=cpu, memory=memory)
    return built if preemptable is None else built.preemptable(preemptable)


def pending(name: str, cpu: str, memory: str, group: str) -> PodBuilder:
    built = pod(name).group(group)
    return built.requests(cpu=cpu, memory=memory) if cpu else built


def capped(name: str, cpu: str, memory: str) -> Item:
    return queue(name).capability(cpu=cpu, memory=memory)


def once(*items: Item, policy: str = POLICY) -> Outcome:
    (outcome,) = run(snapshot(*items), policy=policy)
    return outcome


def c1(*names: str) -> list[str]:
    return [f"default/{n}" for n in names]


def test_do_not_preempt_if_there_are_enough_idle_resources() -> None:
    """TestPreempt "do not preempt if there are enough idle resources": the preemptor is
    pipelined where it fits."""
    outcome = once(
        build_node("n1", "10", "10G"),
        queue("q1"),
        group("pg1", "q1", 3, 3),
        running("preemptee1", "n1", "1", "1G", "pg1"),
        running("preemptee2", "n1", "1", "1G", "pg1"),
        pending("preemptor1", "1", "1G", "pg1"),
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {"default/preemptor1": "n1"}
    assert outcome.binds == {}


def test_do_not_preempt_if_job_is_pipelined() -> None:
    """TestPreempt "do not preempt if job is pipelined"."""
    outcome = once(
        build_node("n1", "3", "3G"),
        queue("q1"),
        group("pg1", "q1", 1, 2),
        group("pg2", "q1", 1, 2),
        running("preemptee1", "n1", "1", "1G", "pg1"),
        running("preemptee2", "n1", "1", "1G", "pg1"),
        running("preemptee3", "n1", "1", "1G", "pg2"),
        pending("preemptor2", "1", "1G", "pg2"),
    )

    assert outcome.evictions == []


def test_preempt_one_task_of_a_different_job_to_fit_both_jobs_on_one_node() -> None:
    """TestPreempt "preempt one task of different job to fit both jobs on one node"."""
    outcome = once(
        build_node("n1", "2", "2G"),
        queue("q1"),
        group("pg1", "q1", 1, 2, priority=LOW),
        group("pg2", "q1", 1, 2, priority=HIGH),
        running("preemptee1", "n1", "1", "1G", "pg1", preemptable=True),
        running("preemptee2", "n1", "1", "1G", "pg1", preemptable=False),
        pending("preemptor1", "1", "1G", "pg2"),
        pending("preemptor2", "1", "1G", "pg2"),
    )

    assert outcome.evictions == c1("preemptee1")
    assert outcome.binds == {}


def test_preempt_enough_tasks_to_fit_a_large_task_of_a_different_job() -> None:
    """TestPreempt "preempt enough tasks to fit large task of different job"."""
    outcome = once(
        build_node("n1", "6", "6G"),
        queue("q1"),
        group("pg1", "q1", 1, 3, priority=LOW),
        group("pg2", "q1", 1, 1, priority=HIGH),
        running("preemptee1", "n1", "1", "1G", "pg1", preemptable=True),
        running("preemptee2", "n1", "1", "1G", "pg1", preemptable=True),
        running("preemptee3", "n1", "1", "1G", "pg1", preemptable=False),
        pending("preemptor1", "5", "5G", "pg2"),
    )

    assert sorted(outcome.evictions) == c1("preemptee1", "preemptee2")
    assert outcome.result.pipelined == {"default/preemptor1": "n1"}


def test_preempt_a_low_priority_job_in_the_same_queue() -> None:
    """TestPreempt "preempt low priority job in same queue": the queue's capability, not the
    node, leaves no room."""
    outcome = once(
        build_node("n1", "12", "12G"),
        capped("q1", "4", "4G"),
        group("pg1", "q1", 0, None, priority=LOW),
        group("pg2", "q1", 1, 1, priority=HIGH),
        running("preemptee1", "n1", "3", "3G", "pg1", preemptable=True),
        pending("preemptor1", "3", "3G", "pg2"),
    )

    assert outcome.evictions == c1("preemptee1")


def test_a_queue_with_room_preempts_nothing() -> None:
    """TestPreempt "preempt low priority job in same queue: allocatable and has enough
    resource, don't preempt"."""
    outcome = once(
        build_node("n1", "12", "12G"),
        capped("q1", "6", "6G"),
        group("pg1", "q1", 1, None, priority=LOW),
        group("pg2", "q1", 1, 1, priority=HIGH),
        running("preemptee1", "n1", "3", "3G", "pg1", preemptable=True),
        pending("preemptor1", "3", "3G", "pg2"),
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {"default/preemptor1": "n1"}


def test_neither_an_opted_out_pod_nor_one_of_higher_priority_is_preempted() -> None:
    """TestPreempt "preempt low priority job in same queue but not pod with preemptable=false
    or higher priority"."""
    outcome = once(
        build_node("n1", "12", "12G"),
        capped("q1", "3", "3G"),
        group("pg1", "q1", 1, None, priority=LOW),
        group("pg2", "q1", 1, 1, priority=HIGH),
        running("preemptee1", "n1", "1", "1G", "pg1", preemptable=False),
        running("preemptee2", "n1", "1", "1G", "pg1", preemptable=True),
        running("preemptee3", "n1", "1", "1G", "pg1", preemptable=True).priority(HIGH),
        pending("preemptor1", "1", "1G", "pg2"),
    )

    assert outcome.evictions == c1("preemptee2")


def test_a_pod_with_requests_preempts_a_best_effort_pod_for_its_pod_slot() -> None:
    """TestPreempt "unBestEffort high-priority pod preempt BestEffort low-priority pod in same
    queue": the node allows one pod."""
    outcome = once(
        build_node("n1", "12", "12G", pods=1),
        capped("q1", "6", "6G"),
        group("pg1", "q1", 0, None, priority=LOW),
        group("pg2", "q1", 1, 1, priority=HIGH),
        running("preemptee1", "n1", "", "", "pg1", preemptable=True),
        pending("preemptor1", "3", "3G", "pg2"),
    )

    assert outcome.evictions == c1("preemptee1")
    assert outcome.result.pipelined == {"default/preemptor1": "n1"}


def test_a_best_effort_pod_preempts_a_best_effort_pod() -> None:
    """TestPreempt "BestEffort high-priority pod preempt BestEffort low-priority pod in same
    queue"."""
    outcome = once(
        build_node("n1", "12", "12G", pods=1),
        capped("q1", "6", "6G"),
        group("pg1", "q1", 0, None, priority=LOW),
        group("pg2", "q1", 1, 1, priority=HIGH),
        running("preemptee1", "n1", "", "", "pg1", preemptable=True),
        pending("preemptor1", "", "", "pg2"),
    )

    assert outcome.evictions == c1("preemptee1")
    assert outcome.result.pipelined == {"default/preemptor1": "n1"}


def test_a_best_effort_pod_never_preempts_a_pod_with_requests() -> None:
    """preempt.go's filter: a BestEffort preemptor takes only BestEffort victims."""
    outcome = once(
        build_node("n1", "12", "12G", pods=1),
        capped("q1", "6", "6G"),
        group("pg1", "q1", 0, None, priority=LOW),
        group("pg2", "q1", 1, 1, priority=HIGH),
        running("preemptee1", "n1", "1", "1G", "pg1", preemptable=True),
        pending("preemptor1", "", "", "pg2"),
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}


def test_a_pod_that_never_preempts_evicts_nothing() -> None:
    """TestPreempt "can not preempt resources when task preemption policy is never"."""
    outcome = once(
        build_node("n1", "1", "1Gi", pods=1),
        queue("q1"),
        group("pg1", "q1", 0, None, priority=LOW),
        group("pg2", "q1", 1, None, priority=HIGH),
        running("preemptee1", "n1", "1", "1G", "pg1", preemptable=True),
        pending("preemptor1", "1", "1G", "pg2").preemption_policy("Never"),
    )

    assert outcome.evictions == []


def test_evictions_are_rolled_back_when_the_queue_cannot_take_the_preemptor() -> None:
    """TestPreempt "rollback evictions when preemptor exceeds queue capacity after evicting
    victims"."""
    outcome = once(
        build_node("n1", "10", "10G"),
        capped("q1", "3", "3G"),
        group("pg1", "q1", 1, 2, priority=LOW),
        group("pg2", "q1", 1, 1, priority=HIGH),
        running("preemptee1", "n1", "1", "1G", "pg1", preemptable=True),
        running("preemptee2", "n1", "1", "1G", "pg1", preemptable=True),
        pending("preemptor1", "4", "4G", "pg2"),
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}


def test_only_the_node_the_preemptor_goes_to_loses_pods() -> None:
    """TestPreempt "only commit evictions on the node where preemption succeeds"."""
    outcome = once(
        build_node("n1", "3", "3G"),
        build_node("n2", "4", "4G"),
        capped("q1", "6", "6G"),
        group("pg1", "q1", 0, None, priority=LOW),
        group("pg2", "q1", 1, 1, priority=HIGH),
        group("pg3", "q1", 0, None, priority=LOW),
        running("preemptee1", "n1", "1", "1G", "pg1", preemptable=True),
        running("preemptee2", "n2", "4", "4G", "pg3", preemptable=True),
        pending("preemptor1", "3", "3G", "pg2"),
    )

    assert outcome.evictions == c1("preemptee2")
    assert outcome.result.pipelined == {"default/preemptor1": "n2"}


def test_a_queue_without_room_of_its_own_does_not_lose_its_askers() -> None:
    """TestPreempt "multi-queue: preemptorTasks must not be overwritten by intra-job preemption
    of another queue"."""
    outcome = once(
        build_node("n1", "2", "2G"),
        queue("q1"),
        capped("q2", "4", "4G"),
        group("pg1", "q1", 1, 1),
        group("pg2", "q2", 0, None, priority=LOW),
        group("pg3", "q2", 1, 1, priority=HIGH),
        running("q1-runner1", "n1", "1", "1G", "pg1"),
        running("q2-preemptee1", "n1", "1", "1G", "pg2", preemptable=True),
        pending("q2-preemptor1", "1", "1G", "pg3"),
    )

    assert outcome.evictions == c1("q2-preemptee1")


# --- TestTopologyAwarePreempt: the predicates plugin in the tier --------------------------------
def anti_affine_on_a_full_node(policy: str) -> Outcome:
    """TestTopologyAwarePreempt's anti-affinity case under `policy`."""
    anti = pod_term(HOST, test="test")
    return once(
        node("n1").resources(cpu="2", memory="2Gi", pods=2).label(HOST, "n1"),
        capped("q1", "2", "2G"),
        group("pg1", "q1", 0, None, priority=LOW),
        group("pg2", "q1", 0, None, priority=LOW),
        group("pg3", "q1", 1, 1, priority=HIGH),
        running("preemptee1", "n1", "1", "1G", "pg2", preemptable=True),
        running("preemptee2", "n1", "1", "1G", "pg1", preemptable=True)
        .label("test", "test")
        .anti_affinity(anti),
        pending("preemptor1", "1", "1G", "pg3").label("test", "test").anti_affinity(anti),
        policy=policy,
    )


def test_a_pod_anti_affine_to_a_running_pod_preempts_exactly_that_pod() -> None:
    """TestTopologyAwarePreempt "preempt low-priority pod when high-priority pod has
    PodAntiAffinity conflict": anti-affinity is resolvable (kube's InterPodAffinity codes,
    Volcano >= 1.13); the cheaper pod evicted first is spared again once the anti-affine one is
    gone."""
    outcome = anti_affine_on_a_full_node(TOPOLOGY_AWARE)

    assert outcome.evictions == c1("preemptee2")
    assert outcome.result.pipelined == {"default/preemptor1": "n1"}


def test_without_topology_aware_preemption_an_anti_affinity_conflict_stays() -> None:
    """The same case without `enableTopologyAwarePreemption`: Volcano's normal preemption
    re-runs the filters over the inter-pod counts taken before its evictions, so evicting
    preemptee2 does not end the conflict; nothing is evicted (Volcano's evictions of a job that
    cannot be placed are discarded), the preemptor stays pending."""
    outcome = anti_affine_on_a_full_node(topology_tier("enablePreemptable", "enablePredicate"))

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}
    assert outcome.binds == {}


def test_predicates_not_told_of_the_evictions_leaves_an_anti_affinity_conflict() -> None:
    """Topology-aware, but the predicates entry enables neither preemptable nor allocatable:
    Volcano then does not call its SimulateRemoveTask, so the conflict stays (the tier of
    predicates_test.go's TestPodAntiAffinity)."""
    outcome = anti_affine_on_a_full_node(topology_tier("enablePredicate") + TOPOLOGY_AWARE_ARGUMENT)

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}


def test_predicates_with_its_flags_left_to_their_defaults_is_told_of_the_evictions() -> None:
    """A policy as users write it (every flag at Volcano's default, predicates' preemptable on)
    with topology-aware preemption: the anti-affine pod is evicted, the cheaper one spared."""
    policy = (
        'actions: "preempt"\n'
        "tiers:\n"
        "- plugins:\n"
        "  - name: priority\n"
        "  - name: gang\n"
        "  - name: conformance\n"
        "- plugins:\n"
        "  - name: proportion\n"
        "  - name: predicates\n"
    ) + TOPOLOGY_AWARE_ARGUMENT

    outcome = anti_affine_on_a_full_node(policy)

    assert outcome.evictions == c1("preemptee2")
    assert outcome.result.pipelined == {"default/preemptor1": "n1"}


def one_slot_taken(policy: str) -> Outcome:
    """A node allowing one pod, taken by a lower-priority pod of the preemptor's queue."""
    return once(
        build_node("n1", "12", "12G", pods=1),
        capped("q1", "6", "6G"),
        group("pg1", "q1", 0, None, priority=LOW),
        group("pg2", "q1", 1, 1, priority=HIGH),
        running("preemptee1", "n1", "1", "1G", "pg1", preemptable=True),
        pending("preemptor1", "1", "1G", "pg2"),
        policy=policy,
    )


def test_a_full_pod_count_is_resolved_by_evicting_without_topology_awareness() -> None:
    """The pod-count limit (predicates' check 2) is resolved by normal preemption too: Volcano's
    predicate counts the node's pods as its evictions take them away."""
    outcome = one_slot_taken(topology_tier("enablePreemptable", "enablePredicate"))

    assert outcome.evictions == c1("preemptee1")
    assert outcome.result.pipelined == {"default/preemptor1": "n1"}


def test_a_full_pod_count_is_resolved_by_evicting_with_the_predicates_plugin_too() -> None:
    """The pod-count limit (predicates' check 2) is resolvable: the node is tried and one pod
    evicted frees the slot."""
    outcome = one_slot_taken(TOPOLOGY_AWARE)

    assert outcome.evictions == c1("preemptee1")
    assert outcome.result.pipelined == {"default/preemptor1": "n1"}


def test_a_pod_affinity_mismatch_is_not_resolved_by_evicting() -> None:
    """Required pod affinity (check 7a) is UnschedulableAndUnresolvable: the node is not tried."""
    outcome = once(
        node("n1").resources(cpu="1", memory="1Gi", pods=10).label(HOST, "n1"),
        queue("q1"),
        group("pg1", "q1", 0, None, priority=LOW),
        group("pg2", "q1", 1, 1, priority=HIGH),
        running("preemptee1", "n1", "1", "1G", "pg1", preemptable=True),
        pending("preemptor1", "1", "1G", "pg2").affinity(pod_term(HOST, app="db")),
        policy=TOPOLOGY_AWARE,
    )

    assert outcome.evictions == []


def test_preemption_with_priority_queues() -> None:
    """TestTopologyAwarePreempt "preemption with priority queues": preempt stays within the
    preemptor's queue."""
    q1 = queue("q1").capability(cpu="1", memory="1G").build()
    q2 = queue("q2").capability(cpu="1", memory="1G").build()
    outcome = once(
        node("n1").resources(cpu="2", memory="2Gi", pods=2),
        dataclasses.replace(q1, priority=1, deserved=res(cpu="1", memory="1G")),
        dataclasses.replace(q2, priority=10, deserved=res(cpu="1", memory="1G")),
        podgroup("pg3").queue("q2").min_member(1).priority(HIGH),
        podgroup("pg1").queue("q1").min_member(0).priority(LOW),
        group("pg2", "q1", 1, None, priority=HIGH),
        running("preemptee2", "n1", "1", "1G", "pg3", preemptable=True),
        running("preemptee1", "n1", "1", "1G", "pg1", preemptable=True),
        pending("preemptor1", "1", "1G", "pg2").preemption_policy("PreemptLowerPriority"),
        policy=TOPOLOGY_AWARE,
    )

    assert outcome.evictions == c1("preemptee1")


# --- priority_test.go TestPreempt: the priority plugin alone ------------------------------------
def priority_only(*, preemptable: bool) -> str:
    enabled: tuple[str, ...] = ("enableTaskOrder", "enableJobOrder", "enableJobStarving")
    if preemptable:
        enabled += ("enablePreemptable", "enableReclaimable")
    return go_tiers("allocate, preempt", priority=enabled)


def test_priority_lets_a_job_preempt_a_lower_priority_job() -> None:
    """priority_test.go TestPreempt "enable preempt low priority: enablePreemptable:true": the
    victim is the pod of the lower-priority job on the node where the preemptor fits after it
    goes (the other has a higher pod priority, which does not protect it across jobs; the
    cheaper of the two is taken)."""
    outcome = once(
        build_node("node1", "6", "6G"),
        build_node("node2", "2", "2G"),
        capped("q1", "6", "6G"),
        group("pg1", "q1", 1, None, priority=100),
        group("pg2", "q1", 1, None, priority=1000),
        running("preemptee1", "node1", "3", "3G", "pg1", preemptable=True),
        running("preemptee2", "node1", "3", "3G", "pg1", preemptable=True).priority(1000),
        pending("preemptor1", "3", "3G", "pg2"),
        policy=priority_only(preemptable=True),
    )

    assert outcome.evictions == c1("preemptee1")
    assert outcome.result.pipelined == {"default/preemptor1": "node1"}


def test_without_the_preemptable_point_nothing_is_preempted() -> None:
    """priority_test.go TestPreempt "disable preempt low priority: enablePreemptable:false"."""
    outcome = once(
        build_node("node1", "3", "3G"),
        build_node("node2", "3", "3G"),
        capped("q1", "6", "6G"),
        group("pg1", "q1", 1, None, priority=100),
        group("pg2", "q1", 1, None, priority=1000),
        running("preemptee1", "node1", "3", "3G", "pg1", preemptable=True),
        running("preemptee2", "node2", "3", "3G", "pg1", preemptable=False),
        pending("preemptor1", "3", "3G", "pg2"),
        policy=priority_only(preemptable=False),
    )

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}
