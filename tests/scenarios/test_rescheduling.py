"""rescheduling with the shuffle action, over whole cycles: which pods leave a hot node, how the
shuffle rails and the pdb filter bound them, the interval, the cooldown of a moved workload, and
its replacement keeping off the node it left.

Nodes have 10 CPU and 10Gi. n1 runs hot (cpu 90%), n2 is cold (10%), n3 in between (40%);
thresholds are 20%, targets 50%. Usage is re-measured before every cycle (fresh, same values),
with enough history for the default hysteresis."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from vscheduler import cli
from vscheduler.model.cluster import ClusterSnapshot, complete_jobs
from vscheduler.model.facts import NodeUsage, TaskFacts
from vscheduler.testing.builders import START, node, pdb, pod, podgroup, snapshot
from vscheduler.testing.scenario import Outcome, run

MINUTE = 60.0


def policy(
    *, shuffle: dict[str, int] | None = None, filters: bool = False, **arguments: Any
) -> str:
    arguments.setdefault(
        "strategies",
        [
            {
                "name": "lowNodeUtilization",
                "params": {
                    "thresholds": {"cpu": 20, "memory": 20},
                    "targetThresholds": {"cpu": 50, "memory": 50},
                },
            }
        ],
    )
    first = [
        {"name": "priority"},
        {"name": "gang"},
        {"name": "conformance"},
        {"name": "rescheduling", "enableVictim": True, "arguments": arguments},
    ]
    if filters:
        first.append({"name": "pdb"})
    document: dict[str, object] = {
        "actions": "enqueue, allocate, backfill, shuffle",
        "tiers": [{"plugins": first}, {"plugins": [{"name": "predicates"}, {"name": "nodeorder"}]}],
    }
    if shuffle:
        document["configurations"] = [{"name": "shuffle", "arguments": shuffle}]
    return yaml.safe_dump(document)


def measured(name: str, cpu: float, memory: float, at: dt.datetime) -> NodeUsage:
    now = {"cpu": {"10m": cpu}, "memory": {"10m": memory}}
    return NodeUsage(node=name, usage=now, metrics_time=at, history=(now, now))


def usage_at(at: dt.datetime) -> dict[str, NodeUsage]:
    return {
        "n1": measured("n1", 90, 40, at),
        "n2": measured("n2", 10, 10, at),
        "n3": measured("n3", 40, 40, at),
    }


def running(
    name: str, on: str = "n1", *, owner: str | None = None, priority: int = 0, cpu: str = "1"
) -> TaskFacts:
    facts = pod(name).requests(cpu=cpu, memory="1Gi").on(on).priority(priority).build()
    return dataclasses.replace(facts, owner=owner or f"ReplicaSet/{name}")


def cluster(*tasks: TaskFacts) -> ClusterSnapshot:
    nodes = [node(n).resources(cpu="10", memory="10Gi") for n in ("n1", "n2", "n3")]
    return dataclasses.replace(snapshot(*nodes, *tasks), usage=usage_at(START))


def remeasure(step: float) -> Any:
    """`between` for run(): usage measured again just before each cycle."""

    def between(i: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        return dataclasses.replace(snap, usage=usage_at(START + dt.timedelta(seconds=i * step)))

    return between


def evictions(outcomes: list[Outcome]) -> list[list[str]]:
    return [[key.removeprefix("default/") for key in o.evictions] for o in outcomes]


FOUR_ON_N1 = (
    running("a"),
    running("b", cpu="2"),
    running("c", priority=5),
    running("d", priority=-1),
)


# --- one run -------------------------------------------------------------------------------------
def test_shuffle_evicts_the_pods_lownodeutilization_picks_within_its_per_node_cap() -> None:
    # LNU picks d, a, b (n1 back to 50%); shuffle's maxEvictionsPerNode (2) keeps d and a.
    [outcome] = run(cluster(*FOUR_ON_N1), policy=policy())

    assert outcome.evictions == ["default/d", "default/a"]
    reason = "shuffle: node n1 over target (cpu 90% > 50%)"
    assert [(e.node, e.reason, e.action, e.strategy) for e in outcome.result.evictions] == [
        ("n1", reason, "shuffle", "lowNodeUtilization"),
        ("n1", reason, "shuffle", "lowNodeUtilization"),
    ]


def test_a_higher_per_node_cap_lets_every_pick_go() -> None:
    [outcome] = run(cluster(*FOUR_ON_N1), policy=policy(shuffle={"maxEvictionsPerNode": 5}))

    assert outcome.evictions == ["default/d", "default/a", "default/b"]


def test_the_per_run_cap_applies_to_the_picks_in_their_order() -> None:
    snap = cluster(*FOUR_ON_N1)

    [outcome] = run(
        snap, policy=policy(shuffle={"maxEvictionsPerNode": 5, "maxEvictionsPerRun": 1})
    )

    assert outcome.evictions == ["default/d"]


def test_a_pod_a_disruption_budget_protects_is_filtered_out_of_the_picks() -> None:
    snap = cluster(*FOUR_ON_N1)
    protected = dataclasses.replace(snap.tasks["default/d"], labels={"app": "d"})
    snap = dataclasses.replace(
        snap,
        tasks={**snap.tasks, "default/d": protected},
        disruption_budgets=(pdb("keep-d").selecting(app="d").build(),),
    )

    [outcome] = run(snap, policy=policy(filters=True))

    assert outcome.evictions == ["default/a", "default/b"]


def test_a_gang_keeps_its_min_member_whatever_the_plugin_picks() -> None:
    workers = [
        dataclasses.replace(
            running(f"w-{i}", owner="Job/train", priority=-1),
            job="default/train",
            group_name="train",
        )
        for i in range(3)
    ]
    snap = cluster(*workers, running("a"))
    snap = dataclasses.replace(
        snap, jobs={**snap.jobs, "default/train": podgroup("train").min_member(2).build()}
    )

    [outcome] = run(snap, policy=policy(shuffle={"maxEvictionsPerNode": 5}))

    # LNU picks w-0, w-1, w-2, a (90% -> 50%); the gang may lose only one worker.
    assert outcome.evictions == ["default/w-0", "default/a"]


# --- across cycles -------------------------------------------------------------------------------
def test_the_plugin_runs_again_only_after_its_interval() -> None:
    snap = cluster(*FOUR_ON_N1)

    outcomes = run(snap, policy=policy(), cycles=6, step=MINUTE, between=remeasure(MINUTE))

    # n1 is still measured at 90%: five minutes later the remaining b and c go.
    assert evictions(outcomes) == [["d", "a"], [], [], [], [], ["b", "c"]]


def test_a_moved_workload_cools_down_before_another_of_its_pods_is_picked() -> None:
    web = [running(f"web-{i}", owner="ReplicaSet/web") for i in (1, 2, 3)]
    snap = cluster(*web, running("x", priority=1))
    text = policy(shuffle={"maxEvictionsPerNode": 1})

    outcomes = run(snap, policy=text, cycles=4, step=5 * MINUTE, between=remeasure(5 * MINUTE))

    # 0m: web-1. 5m: web cools down until 15m, so x. 10m: both cool down. 15m: web again.
    assert evictions(outcomes) == [["web-1"], ["x"], [], ["web-2"]]


def replacement_for_web(requests_n1_only: bool = False) -> Any:
    """`between` adding, before cycle 1, the ReplicaSet's new pod for the evicted web-1."""

    def between(i: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        snap = remeasure(MINUTE)(i, snap)
        if i != 1:
            return snap
        builder = pod("web-new").requests(cpu="1", memory="1Gi")
        if requests_n1_only:
            builder = builder.selector(**{"kubernetes.io/hostname": "n1"})
        new = dataclasses.replace(builder.build(), owner="ReplicaSet/web")
        tasks = {**snap.tasks, new.uid: new}
        return dataclasses.replace(snap, tasks=tasks, jobs=complete_jobs(tasks, snap.jobs))

    return between


def web_and_fillers() -> ClusterSnapshot:
    # By requests n1 is the emptiest node once web-1 has left (3 CPU vs n3's 4 and n2's 6), so
    # the scheduler would put web-new right back on n1.
    snap = cluster(
        running("web-1", owner="ReplicaSet/web", priority=-1),
        running("web-2", owner="ReplicaSet/web"),
        running("x", priority=1),
        running("y", priority=1),
        running("filler-2", on="n2", cpu="6"),
        running("filler-3", on="n3", cpu="4"),
    )
    labelled = tuple(
        dataclasses.replace(n, labels={"kubernetes.io/hostname": n.name}) for n in snap.nodes
    )
    return dataclasses.replace(snap, nodes=labelled)


def test_the_replacement_of_a_moved_pod_does_not_land_on_the_node_it_left() -> None:
    text = policy(shuffle={"maxEvictionsPerNode": 1})

    outcomes = run(
        web_and_fillers(), policy=text, cycles=2, step=MINUTE, between=replacement_for_web()
    )

    assert evictions(outcomes) == [["web-1"], []]
    assert outcomes[1].binds == {"default/web-new": "n3"}


def test_without_avoid_node_for_the_replacement_goes_straight_back() -> None:
    text = policy(shuffle={"maxEvictionsPerNode": 1}, avoidNodeFor="0s")

    outcomes = run(
        web_and_fillers(), policy=text, cycles=2, step=MINUTE, between=replacement_for_web()
    )

    assert outcomes[1].binds == {"default/web-new": "n1"}


def test_a_replacement_that_fits_only_the_node_it_left_waits_and_says_why() -> None:
    text = policy(shuffle={"maxEvictionsPerNode": 1}, avoidNodeFor="3m", interval="1h")

    outcomes = run(
        web_and_fillers(),
        policy=text,
        cycles=4,
        step=MINUTE,
        between=replacement_for_web(requests_n1_only=True),
    )

    waiting = (
        "0/3 nodes are available: 1 node(s) gave up a pod of this workload to the rescheduling "
        "plugin recently, 2 node(s) didn't match Pod's node affinity/selector."
    )
    assert [o.unschedulable.get("default/web-new") for o in outcomes] == [
        None,
        waiting,
        waiting,
        None,
    ]
    assert outcomes[3].binds == {"default/web-new": "n1"}


# --- the shipped example -------------------------------------------------------------------------
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rescheduling"


def test_the_shipped_example_evicts_exactly_the_two_youngest_etl_pods_from_the_hot_node(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [str(EXAMPLE), "--config", str(EXAMPLE / "scheduler.conf")]
    code = cli.main(
        ["simulate", *args, "--now", "2026-03-01T12:00:30Z", "--cycles", "2", "-o", "json"]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    result = json.loads(out.out)

    reason = "shuffle: node node-a over target (cpu 92% > 85%)"
    assert result["evictionDetails"] == [
        {
            "pod": pod,
            "node": "node-a",
            "reason": reason,
            "action": "shuffle",
            "strategy": "lowNodeUtilization",
        }
        for pod in ("batch/etl-5mn7p", "batch/etl-x9wq4")
    ]
    assert [c["evictions"] for c in result["cycles"]] == [
        ["batch/etl-5mn7p", "batch/etl-x9wq4"],
        [],
    ]


def test_the_shipped_example_under_the_default_policy_evicts_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["simulate", str(EXAMPLE), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["evictions"] == []
