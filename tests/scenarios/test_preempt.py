"""preempt: starving jobs take room from lower-priority running work of their own queue."""

from __future__ import annotations

import dataclasses

import pytest

from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import PriorityClassFacts, TaskFacts
from vscheduler.model.status import TaskStatus
from vscheduler.testing.builders import (
    Item,
    PodBuilder,
    node,
    pdb,
    pod,
    podgroup,
    queue,
    snapshot,
)
from vscheduler.testing.scenario import Outcome, run

TIERS = """\
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: pdb
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""
POLICY = 'actions: "enqueue, allocate, preempt, backfill"\n' + TIERS
PREEMPT_FIRST = 'actions: "enqueue, preempt, allocate, backfill"\n' + TIERS


def nodes(count: int, cpu: str = "4") -> list[Item]:
    return [node(f"n{i}").resources(cpu=cpu, memory="16Gi") for i in range(1, count + 1)]


def low(name: str, on: str, *, cpu: str = "1", priority: int = 1, job: str = "low") -> PodBuilder:
    """A running pod of job `job` (priority `priority`)."""
    return pod(name).group(job).requests(cpu=cpu).priority(priority).on(on)


def job(name: str, *, priority: int, members: int = 1, q: str = "default") -> Item:
    return podgroup(name).priority(priority).min_member(members).queue(q).inqueue()


def high(name: str, *, cpu: str = "1", job: str = "high", priority: int = 100) -> PodBuilder:
    return pod(name).group(job).requests(cpu=cpu).priority(priority)


def full_cluster() -> list[Item]:
    """Two 4-CPU nodes filled by eight 1-CPU pods of job `low` (priority 1), four per node."""
    items: list[Item] = [*nodes(2), job("low", priority=1)]
    items += [low(f"low-{i}", f"n{1 + i % 2}") for i in range(8)]
    return items


def keys(*names: str) -> list[str]:
    return [f"default/{n}" for n in names]


# --- the core behaviour --------------------------------------------------------------------------
def test_a_high_priority_gang_preempts_exactly_enough_low_priority_pods_then_binds() -> None:
    items = [*full_cluster(), job("high", priority=100, members=3)]
    items += [high(f"high-{i}") for i in range(3)]

    first, second = run(snapshot(*items), policy=POLICY, cycles=2)

    assert first.evictions == keys("low-6", "low-4", "low-2")
    assert first.binds == {}
    assert first.result.pipelined == dict.fromkeys(keys("high-0", "high-1", "high-2"), "n1")
    assert second.binds == dict.fromkeys(keys("high-0", "high-1", "high-2"), "n1")
    assert second.evictions == []


def test_evictions_name_the_preemptor_and_the_action() -> None:
    items = [*full_cluster(), job("high", priority=100), high("high-0", cpu="2")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert [(e.pod, e.node, e.reason, e.action) for e in outcome.result.evictions] == [
        ("default/low-6", "n1", "preempt by default/high-0", "preempt"),
        ("default/low-4", "n1", "preempt by default/high-0", "preempt"),
    ]


def test_nothing_is_evicted_when_idle_resources_already_fit() -> None:
    items = [*nodes(2), job("low", priority=1), low("low-0", "n1"), low("low-1", "n2")]
    items += [job("high", priority=100, members=2), high("high-0"), high("high-1")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == []
    assert outcome.binds == {"default/high-0": "n1", "default/high-1": "n2"}


def test_preempt_pipelines_what_already_fits_and_never_binds() -> None:
    """Volcano's normalPreempt pipelines a preemptor that fits with zero victims; binding is
    left to allocate, which does not take pipelined tasks: run before allocate, preempt holds the
    pods every cycle and nothing binds."""
    items = [*nodes(2), job("low", priority=1), low("low-0", "n1"), low("low-1", "n2")]
    items += [job("high", priority=100, members=2), high("high-0"), high("high-1")]

    first, second = run(snapshot(*items), policy=PREEMPT_FIRST, cycles=2)

    for outcome in (first, second):
        assert outcome.evictions == []
        assert outcome.binds == {}
        assert outcome.result.pipelined == dict.fromkeys(keys("high-0", "high-1"), "n1")


def test_a_gang_partly_fitting_evicts_only_for_the_members_that_do_not() -> None:
    items: list[Item] = [*nodes(2), job("low", priority=1)]
    items += [low(f"low-{i}", f"n{1 + i % 2}") for i in range(7)]  # n2 has one CPU idle
    items += [job("high", priority=100, members=3)] + [high(f"high-{i}") for i in range(3)]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == keys("low-6", "low-4")
    assert outcome.result.pipelined == {
        "default/high-0": "n2",
        "default/high-1": "n1",
        "default/high-2": "n1",
    }


def test_a_failed_preemption_evicts_nothing() -> None:
    # Only n1's pods are of lower priority: the gang of three needs two nodes' worth of room.
    items: list[Item] = [*nodes(2, cpu="2"), job("low", priority=1), job("peer", priority=100)]
    items += [low("low-0", "n1"), low("low-1", "n1")]
    items += [low("peer-0", "n2", job="peer"), low("peer-1", "n2", job="peer")]
    items += [job("high", priority=100, members=3)] + [high(f"high-{i}") for i in range(3)]

    first, second = run(snapshot(*items), policy=POLICY, cycles=2)

    assert (first.evictions, first.binds, first.result.pipelined) == ([], {}, {})
    assert (second.evictions, second.binds) == ([], {})
    # high-0 found room on n1 only by evicting, and gave it back: it is not Schedulable, and
    # keeps the nodes' verdict (no node takes it as the cluster stands).
    assert first.unschedulable["default/high-0"] == (
        "0/2 nodes are available: 2 Insufficient cpu. queue default is overused (proportion:"
        " allocated cpu 4 + this pod's cpu 1 exceed its deserved share (cpu 4)). 3/3 tasks in"
        " gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable;"
        " Pending: 3 Unschedulable"
    )


def test_a_preemption_that_succeeds_is_not_repeated_while_its_victims_terminate() -> None:
    items: list[Item] = [*nodes(1), job("low", priority=1)]
    items += [low("low-0", "n1", cpu="2", job="low").status(TaskStatus.RELEASING)]
    items += [low("low-1", "n1", cpu="2")]
    items += [job("high", priority=100), high("high-0", cpu="2")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == []
    assert outcome.result.pipelined == {"default/high-0": "n1"}


# --- which victims, on which node ----------------------------------------------------------------
def test_the_victims_are_the_fewest_that_make_room() -> None:
    # Cheapest first is low-small then low-big (reverse task order); low-big alone is enough.
    items: list[Item] = [*nodes(1), job("low", priority=1)]
    items += [low("low-small", "n1"), low("low-big", "n1", cpu="3")]
    items += [job("high", priority=100), high("high-0", cpu="3")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == keys("low-big")


def test_the_node_needing_the_fewest_victims_is_chosen() -> None:
    items: list[Item] = [*nodes(2), job("low", priority=1)]
    items += [low(f"a-{i}", "n1") for i in range(4)] + [low("b-0", "n2", cpu="2")]
    items += [low("b-1", "n2", cpu="2")]
    items += [job("high", priority=100), high("high-0", cpu="2")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == keys("b-1")
    assert outcome.result.pipelined == {"default/high-0": "n2"}


def test_among_equal_counts_the_node_whose_victim_has_the_lowest_priority_is_chosen() -> None:
    items: list[Item] = [*nodes(2), job("mid", priority=50), job("low", priority=1)]
    items += [low(f"mid-{i}", "n1", job="mid", priority=50) for i in range(4)]
    items += [low(f"low-{i}", "n2") for i in range(4)]
    items += [job("high", priority=100), high("high-0")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == keys("low-3")


def test_lower_priority_jobs_give_way_first() -> None:
    # jobs of minMember 1 are no gangs: low gives all it has before mid gives one
    items: list[Item] = [*nodes(1, cpu="8"), job("mid", priority=50), job("low", priority=1)]
    items += [low(f"mid-{i}", "n1", job="mid", priority=50) for i in range(4)]
    items += [low(f"low-{i}", "n1") for i in range(4)]
    items += [job("high", priority=100), high("high-0", cpu="5")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == keys("low-3", "low-2", "low-1", "low-0", "mid-3")


# --- who is never a victim -----------------------------------------------------------------------
@pytest.mark.parametrize(("cpu", "victims"), [("1", ["default/low-3"]), ("2", [])])
def test_a_gang_is_never_broken_below_its_min_member(cpu: str, victims: list[str]) -> None:
    # low runs 4 pods with minMember 3: it can give one CPU, not two.
    items: list[Item] = [*nodes(1), job("low", priority=1, members=3)]
    items += [low(f"low-{i}", "n1") for i in range(4)]
    items += [job("high", priority=100), high("high-0", cpu=cpu)]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == victims


def test_a_gang_at_its_min_member_loses_nothing_unless_gang_preemptable_is_off() -> None:
    # gang protects a whole gang (minMember 2 here) while its preemptable function is on
    # (Volcano's Helm policy turns it off); a job of one (minMember 1) is no gang.
    items: list[Item] = [
        *nodes(1),
        job("pair", priority=1, members=2),
        low("pair-0", "n1", cpu="2", job="pair"),
        low("pair-1", "n1", cpu="2", job="pair"),
    ]
    items += [job("high", priority=100), high("high-0", cpu="2")]
    helm = POLICY.replace("  - name: gang\n", "  - name: gang\n    enablePreemptable: false\n")

    (protected,) = run(snapshot(*items), policy=POLICY)
    (taken,) = run(snapshot(*items), policy=helm)

    assert protected.evictions == []
    assert taken.evictions == keys("pair-1")


def test_a_lone_pod_of_lower_priority_gives_way() -> None:
    # A job of one (a lone pod's, or a PodGroup of minMember 1) is no gang: its pod may be
    # taken, as kube-scheduler takes it. Volcano's gang keeps it in the first tier and leaves
    # the decision to the next tier's plugins (drf in its default policy).
    items: list[Item] = [
        *nodes(1),
        job("solo", priority=1),
        low("solo-0", "n1", cpu="4", job="solo"),
    ]
    items += [job("high", priority=100), high("high-0", cpu="4")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == keys("solo-0")
    assert outcome.result.pipelined == dict.fromkeys(keys("high-0"), "n1")


def test_pods_of_equal_or_higher_priority_and_of_other_queues_are_never_victims() -> None:
    items: list[Item] = [*nodes(2), queue("other"), job("peer", priority=100)]
    items += [job("stranger", priority=1, q="other")]
    items += [low(f"peer-{i}", "n1", job="peer", priority=100) for i in range(4)]
    items += [low(f"stranger-{i}", "n2", job="stranger") for i in range(4)]
    items += [job("high", priority=100), high("high-0")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert (outcome.evictions, outcome.result.pipelined) == ([], {})


def critical(name: str, on: str, *, namespace: str = "default", klass: str = "") -> TaskFacts:
    facts = pod(name, namespace).group("low").requests(cpu="2").priority(1).on(on).build()
    return dataclasses.replace(facts, priority_class_name=klass)


@pytest.mark.parametrize(
    "protected",
    [
        pytest.param(critical("c", "n1", klass="system-node-critical"), id="system-node-critical"),
        pytest.param(
            critical("c", "n1", klass="system-cluster-critical"), id="system-cluster-critical"
        ),
        pytest.param(
            dataclasses.replace(
                low("c", "n1", cpu="2").build(), job="default/low", preemption_opt_out=True
            ),
            id="opted-out",
        ),
    ],
)
def test_critical_and_opted_out_pods_are_never_victims(protected: TaskFacts) -> None:
    if protected.priority_class_name == "":
        protected = dataclasses.replace(
            protected, annotations={"volcano.sh/preemptable": "false"}, preemptable=False
        )
    items: list[Item] = [*nodes(1), job("low", priority=1), protected]
    items += [low("low-0", "n1", cpu="2"), job("high", priority=100), high("high-0", cpu="4")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert (outcome.evictions, outcome.result.pipelined) == ([], {})


def test_a_pod_protected_by_a_disruption_budget_is_not_chosen() -> None:
    items: list[Item] = [*nodes(1), job("low", priority=1)]
    items += [low("guarded", "n1", cpu="2").label("app", "db"), low("plain", "n1", cpu="2")]
    items += [pdb("db").selecting(app="db").allowed(0)]
    items += [job("high", priority=100), high("high-0", cpu="2")]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.evictions == keys("plain")


def test_a_pod_whose_priority_class_never_preempts_evicts_nothing() -> None:
    items = [*full_cluster(), job("high", priority=100)]
    items.append(dataclasses.replace(high("high-0").build(), priority_class_name="polite"))
    snap: ClusterSnapshot = snapshot(*items)
    polite = PriorityClassFacts(name="polite", value=100, preemption_policy="Never")
    snap = dataclasses.replace(snap, priority_classes={"polite": polite})

    (outcome,) = run(snap, policy=POLICY)

    assert (outcome.evictions, outcome.result.pipelined) == ([], {})


# --- within one job ------------------------------------------------------------------------------
def test_within_a_job_a_pending_pod_of_higher_priority_takes_its_own_jobs_lower_one() -> None:
    elastic = TIERS.replace("  - name: gang\n", "  - name: gang\n    enableJobStarving: false\n")
    policy = 'actions: "enqueue, allocate, preempt"\n' + elastic
    items: list[Item] = [*nodes(1, cpu="2"), job("mixed", priority=10)]
    items += [low(f"mixed-{i}", "n1", job="mixed", priority=1) for i in range(2)]
    items += [high("mixed-2", job="mixed", priority=9)]

    (outcome,) = run(snapshot(*items), policy=policy)

    assert outcome.evictions == keys("mixed-1")
    assert outcome.result.pipelined == {"default/mixed-2": "n1"}


def test_every_cycle_after_the_first_is_quiet() -> None:
    items = [*full_cluster(), job("high", priority=100, members=2)]
    items += [high(f"high-{i}", cpu="2") for i in range(2)]

    outcomes: list[Outcome] = run(snapshot(*items), policy=POLICY, cycles=4)

    assert outcomes[0].evictions == keys("low-6", "low-4", "low-2", "low-0")
    assert [o.evictions for o in outcomes[1:]] == [[], [], []]
    assert outcomes[1].binds == dict.fromkeys(keys("high-0", "high-1"), "n1")


# --- each plugin's part --------------------------------------------------------------------------
DRF_DECIDES = """\
actions: "enqueue, allocate, preempt"
tiers:
- plugins:
  - name: gang
    enablePreemptable: false
  - name: drf
  - name: conformance
- plugins:
  - name: predicates
  - name: nodeorder
"""


@pytest.mark.parametrize(
    ("members", "victims"),
    [
        pytest.param(2, ["default/big-3", "default/big-2"], id="shares-stay-ordered"),
        pytest.param(3, [], id="would-invert-the-shares"),
    ],
)
def test_drf_lets_a_job_take_only_while_the_victims_job_keeps_a_share_at_least_its_own(
    members: int, victims: list[str]
) -> None:
    # big holds all 4 CPUs (share 1.0). A gang of 2 ends at 0.5 against big's 0.5: allowed; a
    # gang of 3 would hold 0.75 against big's 0.25: not.
    items: list[Item] = [*nodes(1), podgroup("big").inqueue()]
    items += [pod(f"big-{i}").group("big").requests(cpu="1").on("n1") for i in range(4)]
    items += [podgroup("small").min_member(members).inqueue()]
    items += [pod(f"small-{i}").group("small").requests(cpu="1") for i in range(members)]

    (outcome,) = run(snapshot(*items), policy=DRF_DECIDES)

    assert outcome.evictions == victims


# --- pod slots -----------------------------------------------------------------------------------
def test_every_pod_asks_a_pod_slot_even_without_the_predicates_plugin() -> None:
    """As every Volcano task asks one `pods`: a full node takes no pod, and says so."""
    items = [
        node("n1").resources(cpu="4", memory="4Gi", pods=1),
        job("low", priority=1),
        low("low-0", "n1"),
        job("high", priority=100),
        high("high-0"),
    ]
    policy = 'actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n'

    (outcome,) = run(snapshot(*items), policy=policy)

    assert outcome.binds == {}
    assert outcome.result.unschedulable == {
        "default/high-0": "0/1 nodes are available: 1 Insufficient pods."
    }


def test_a_pod_slot_held_by_a_releasing_pod_is_free_for_a_pipelined_pod_only() -> None:
    """A releasing pod holds its slot until it is gone: allocate pipelines the pod there (its
    future idle has the slot), binds nothing, and preempt has no one to evict."""
    items = [
        node("n1").resources(cpu="4", memory="4Gi", pods=1),
        job("low", priority=1),
        low("low-0", "n1").status(TaskStatus.RELEASING),
        job("high", priority=100),
        high("high-0"),
    ]

    (outcome,) = run(snapshot(*items), policy=POLICY)

    assert outcome.binds == {}
    assert outcome.evictions == []
    assert outcome.result.pipelined == {"default/high-0": "n1"}
