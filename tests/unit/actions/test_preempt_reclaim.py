"""preempt and reclaim: arguments, search limits, transactions, and invariants on random clusters."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from vscheduler import catalog
from vscheduler.actions import eviction, preempt, reclaim
from vscheduler.actions.eviction import Evictor, Limits, Transaction
from vscheduler.errors import PluginArgsError, PolicyError
from vscheduler.model.status import TaskStatus
from vscheduler.testing import scenario, sessions
from vscheduler.testing.builders import Item, node, pod, podgroup, queue, snapshot

TIERS = """\
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


# --- arguments -----------------------------------------------------------------------------------
def test_preempt_accepts_volcanos_arguments() -> None:
    action = preempt.build(
        {
            "enablePredicateErrorCache": "false",
            "enableTopologyAwarePreemption": True,
            "topologyAwarePreemptWorkerNum": 4,
            "minCandidateNodesPercentage": 20,
            "minCandidateNodesAbsolute": 3,
            "maxCandidateNodesAbsolute": 50,
        }
    )

    assert action.name == "preempt"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        (
            {"minCandidateNodesPercentage": 101},
            "action preempt: arguments.minCandidateNodesPercentage: must be an integer >= 0 and "
            "<= 100, got 101",
        ),
        (
            {"maxCandidateNodesAbsolute": 0},
            "action preempt: arguments.maxCandidateNodesAbsolute: must be an integer >= 1, got 0",
        ),
        (
            {"minCandidateNodesAbsolut": 1},
            "action preempt: arguments.minCandidateNodesAbsolut: unknown argument; did you mean "
            "'minCandidateNodesAbsolute'?",
        ),
    ],
)
def test_a_malformed_preempt_argument_names_the_action_and_the_argument(
    arguments: dict[str, object], problem: str
) -> None:
    with pytest.raises(PluginArgsError) as caught:
        preempt.build(arguments)

    assert caught.value.problems == (problem,)


def test_reclaim_takes_the_same_candidate_bounds_and_nothing_else() -> None:
    assert reclaim.build({"maxCandidateNodesAbsolute": 10}).name == "reclaim"
    with pytest.raises(PluginArgsError, match=r"action reclaim: arguments\.victimSelection"):
        reclaim.build({"victimSelection": "bestFit"})


def test_a_policy_with_a_bad_preempt_argument_does_not_load() -> None:
    text = (
        'actions: "enqueue, allocate, preempt"\n'
        + TIERS
        + "configurations:\n- name: preempt\n  arguments:\n    minCandidateNodesAbsolute: -1\n"
    )
    with pytest.raises(PolicyError, match="minCandidateNodesAbsolute"):
        catalog.load_pipeline(text)


@pytest.mark.parametrize(
    ("limits", "nodes", "plans"),
    [
        (Limits(), 5000, 100),
        (Limits(), 500, 50),
        (Limits(), 3, 1),
        (Limits(percentage=0, minimum=0, maximum=100), 5000, 1),
        (Limits(percentage=50, minimum=1, maximum=10), 40, 10),
        (Limits(percentage=10, minimum=30, maximum=100), 40, 30),
    ],
)
def test_the_number_of_plans_compared_follows_volcanos_candidate_bounds(
    limits: Limits, nodes: int, plans: int
) -> None:
    assert limits.plans(nodes) == plans


# --- transactions --------------------------------------------------------------------------------
def test_a_transaction_of_a_pipelined_job_commits_its_pipelines_and_evictions() -> None:
    session = sessions.open_session(
        snapshot(
            node("n1").resources(cpu="2", memory="4Gi"),
            podgroup("low").priority(1).inqueue(),
            pod("low-0").group("low").requests(cpu="1").priority(1).on("n1"),
            pod("low-1").group("low").requests(cpu="1").priority(1).on("n1"),
            podgroup("high").priority(9).min_member(2).inqueue(),
            pod("high-0").group("high").requests(cpu="1"),
            pod("high-1").group("high").requests(cpu="1"),
        ),
        policy='actions: "preempt"\n' + TIERS,
    )
    evictor = Evictor(session, action="preempt", limits=Limits())
    txn = Transaction(evictor.table)
    placed = session.statement()
    placed.pipeline(session.tasks["default/high-0"], 0)
    txn.add(placed, [])
    evicting = session.statement()
    victim = session.tasks["default/low-1"]
    evicting.evict(victim, "preempt by default/high-1", action="preempt")
    evictor.table.kill(victim)
    txn.add(evicting, [victim])

    assert txn.settle(ready=False, pipelined=True)
    result = session.close()

    assert [e.pod for e in result.evictions] == ["default/low-1"]
    assert result.binds == ()
    assert result.pipelined == {"default/high-0": "n1"}


def test_a_discarded_transaction_restores_every_task_and_the_victim_table() -> None:
    session = sessions.open_session(
        snapshot(
            node("n1").resources(cpu="2", memory="4Gi"),
            podgroup("low").priority(1).inqueue(),
            pod("low-0").group("low").requests(cpu="2").priority(1).on("n1"),
            podgroup("high").priority(9).inqueue(),
            pod("high-0").group("high").requests(cpu="2"),
        ),
        policy='actions: "preempt"\n' + TIERS,
    )
    evictor = Evictor(session, action="preempt", limits=Limits())
    txn = Transaction(evictor.table)
    victim, asker = session.tasks["default/low-0"], session.tasks["default/high-0"]
    stmt = session.statement()
    stmt.evict(victim, "preempt by default/high-0", action="preempt")
    evictor.table.kill(victim)
    stmt.pipeline(asker, 0)
    txn.add(stmt, [victim])

    assert not txn.settle(ready=False, pipelined=False)

    assert (victim.status, asker.status) == (TaskStatus.RUNNING, TaskStatus.PENDING)
    assert evictor.table.alive.all()
    assert np.array_equal(session.ledger.future, session.ledger.idle)
    assert session.close().evictions == ()


def test_a_task_whose_plans_all_fail_to_apply_says_no_victims_were_found() -> None:
    nodes = [node(f"n{i:02d}").resources(cpu="1", memory="4Gi") for i in range(20)]
    victims = [
        pod(f"low-{i:02d}").group("low").requests(cpu="1").priority(1).on(f"n{i:02d}")
        for i in range(20)
    ]
    session = sessions.open_session(
        snapshot(
            *nodes,
            podgroup("low").priority(1).inqueue(),
            *victims,
            podgroup("high").priority(9).inqueue(),
            pod("high-0").group("high").requests(cpu="1"),
        ),
        policy='actions: "preempt"\n' + TIERS,
    )
    evictor = Evictor(session, action="preempt", limits=Limits())
    asker = session.tasks["default/high-0"]
    rails: list[str] = []

    def refuse(task: object, taken: object) -> bool:
        rails.append(asker.key)
        return False

    placed = evictor.place(
        Transaction(evictor.table),
        asker,
        session.queues["default"],
        mask=np.ones(len(evictor.table.tasks), dtype=np.bool_),
        select=lambda task, candidates: tuple(candidates),
        reason="preempt by default/high-0",
        rail=refuse,
    )

    assert not placed
    assert len(rails) == eviction.ATTEMPTS
    assert session.findings.attempt(asker.uid) == (
        "preempt: 0/20 nodes are available: 20 No preemption victims found for incoming pod."
    )
    assert asker.status is TaskStatus.PENDING
    assert evictor.table.alive.all()
    assert np.array_equal(session.ledger.future, session.ledger.idle)


# --- invariants on random clusters ---------------------------------------------------------------
def random_cluster(
    nodes: int, running: list[tuple[int, int, int, int]], asks: list[tuple[int, int, int]]
) -> list[Item]:
    """`running`: (node, cpu, job, queue); `asks`: (cpu, gang size, queue). Jobs 0-2 run at job
    priority 1, 2, 3 with minMember 1; asking gangs have priority 5."""
    items: list[Item] = [node(f"n{i}").resources(cpu="4", memory="64Gi") for i in range(nodes)]
    items += [queue("q0"), queue("q1")]
    for j in range(3):
        for q in range(2):
            items.append(podgroup(f"run-{j}-{q}").queue(f"q{q}").priority(j + 1).inqueue())
    used = [0] * nodes
    for k, (spot, cpu, j, q) in enumerate(running):
        n = spot % nodes
        if used[n] + cpu > 4:
            continue
        used[n] += cpu
        items.append(
            pod(f"run-{j}-{q}-{k}").group(f"run-{j}-{q}").requests(cpu=str(cpu)).on(f"n{n}")
        )
    for g, (cpu, size, q) in enumerate(asks):
        items.append(podgroup(f"ask-{g}").queue(f"q{q}").priority(5).min_member(size).inqueue())
        items += [pod(f"ask-{g}-{t}").group(f"ask-{g}").requests(cpu=str(cpu)) for t in range(size)]
    return items


CLUSTERS = st.tuples(
    st.integers(1, 4),
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(1, 3), st.integers(0, 2), st.integers(0, 1)),
        min_size=4,
        max_size=16,
    ),
    st.lists(
        st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(0, 1)), min_size=1, max_size=3
    ),
)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(CLUSTERS, st.sampled_from(["preempt", "reclaim"]))
def test_evictions_are_lawful_and_only_where_an_asker_was_placed(
    cluster: tuple[int, list[tuple[int, int, int, int]], list[tuple[int, int, int]]], action: str
) -> None:
    nodes, running, asks = cluster
    if action == "reclaim":  # mostly lenders in q1, askers in q0
        running = [(n, cpu, j, q or int(j > 0)) for n, cpu, j, q in running]
        asks = [(cpu, size, 0) for cpu, size, _ in asks]
    before = snapshot(*random_cluster(nodes, running, asks))
    policy = f'actions: "enqueue, allocate, {action}"\n' + TIERS

    (outcome,) = scenario.run(before, policy=policy)

    result = outcome.result
    askers_at = {n for key, n in result.pipelined.items() if key.split("/")[1].startswith("ask-")}
    for evict in result.evictions:
        victim = before.tasks[evict.task_uid]
        victim_job = before.jobs[victim.job]
        assert evict.action == action
        assert evict.node in askers_at
        asker_key = evict.reason.split(" ")[2]
        asker_job = before.jobs[before.tasks[asker_key].job]
        if action == "preempt":
            assert victim_job.queue == asker_job.queue
            assert victim_job.priority < asker_job.priority
        else:
            assert victim_job.queue != asker_job.queue
    left = dict.fromkeys(before.jobs, 0)
    for task in outcome.snapshot_after.tasks.values():
        if task.status is TaskStatus.RUNNING and task.job in left:
            left[task.job] += 1
    evicted_jobs = {before.tasks[e.task_uid].job for e in result.evictions}
    for key in evicted_jobs:  # a gang keeps its minMember; a job of one is no gang
        if before.jobs[key].min_member > 1:
            assert left[key] >= before.jobs[key].min_member


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(CLUSTERS, st.sampled_from(["preempt", "reclaim"]))
def test_node_accounting_stays_exact_through_every_attempt_and_undo(
    cluster: tuple[int, list[tuple[int, int, int, int]], list[tuple[int, int, int]]], action: str
) -> None:
    nodes, running, asks = cluster
    policy = f'actions: "enqueue, allocate, {action}"\n' + TIERS
    session = sessions.open_session(snapshot(*random_cluster(nodes, running, asks)), policy=policy)
    for step in catalog.load_pipeline(policy).actions:
        step.execute(session)

    ledger = session.ledger
    used = np.zeros_like(ledger.used)
    releasing = np.zeros_like(ledger.used)
    pipelined = np.zeros_like(ledger.used)
    for task in session.tasks.values():
        if task.node_index < 0:
            continue
        row = ledger.vector(task.resreq)
        if task.status is TaskStatus.PIPELINED:
            pipelined[task.node_index] += row
        elif task.status is not TaskStatus.PENDING:
            used[task.node_index] += row
            if task.status is TaskStatus.RELEASING:
                releasing[task.node_index] += row
    assert np.array_equal(ledger.used, used)
    assert np.array_equal(ledger.releasing, releasing)
    assert np.array_equal(ledger.pipelined, pipelined)
    assert np.array_equal(ledger.idle + ledger.used, ledger.allocatable)
    assert np.array_equal(ledger.future, ledger.idle + ledger.releasing - ledger.pipelined)
