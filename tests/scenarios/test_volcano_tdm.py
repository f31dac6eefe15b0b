"""tdm as Volcano decides, transcribed from Volcano's `pkg/scheduler/plugins/tdm/tdm_test.go`:
the three cases of `Test_TDM` and the nine of `Test_TDM_victimsFn`. (`Test_parseRevocableZone`
tests a parsing function alone; it is in `tests/unit/plugins/test_tdm_volcano.py`.)

Objects are Volcano's test helpers, through the fluent builders: `util.BuildPod(ns, name, node,
phase, requests 1 cpu 1Gi, group, ...)` is a pod of namespace `c1` (or `c2`) in PodGroup `pg1`
(`pg2`), running on `node` when one is named; `util.BuildPodGroup(WithAnno)(name, ns, queue, 0,
nil, "", annotations)` a PodGroup of minMember 0 in the queue of its namespace's name;
`util.BuildQueue(name, 1, nil)` a queue of weight 1; `util.BuildNode(name, 16 cpu 64Gi pods 10,
labels)` a node, `volcano.sh/revocable-zone: rzN` among its labels for a revocable one.

The clock. Volcano's tdm reads `time.Now()`; the Go cases choose windows so that the wall clock
almost never matters: `0:00-0:00` is open all day, `0:00-0:01` closed but for the day's first
minute (the Go test would fail if run then). Here the cycle's clock is fixed at noon (UTC, as
our windows are read), inside the first and outside the second.

`Test_TDM` (tdm with `EnabledPredicate` and `EnabledNodeOrder`, zones rz1 `0:00-0:00` and rz2
`0:00-0:01`) asks `ssn.PredicateFn(task, node)` for each node and `ssn.NodeOrderFn` for each that
passes. Here the pending pod is placed by `allocate` (its PodGroup Inqueue, so no enqueue is
needed; Volcano's case runs no action), and the nodes the predicate passes and their scores are
read, node by node, from `simulate --explain`'s table (`vscheduler.simulate.explain`) on the
session as it opens: the refused nodes with tdm's reason, the others with tdm's score as their
total (tdm is the tier's only plugin). The Go case does not check the bind; among equal scores
Volcano picks at random and we take the first node, so the bind asserted is ours.

`Test_TDM_victimsFn` (tdm with `EnabledVictim`, the case's arguments) asks `ssn.VictimTasks` and
counts the victims. Here the victims are what `shuffle` evicts, the action that asks that point:
the same count, and exactly which pods. Volcano walks a node's tasks in map order, so which of a
job's preemptable pods it takes is random; we take them in shuffle's candidate order (node name,
then pod key: `c2/p10` before `c2/p6`). The Go test sleeps `tdm.evict.period` before asking, to
get past the package-level `lastEvictAt` a previous case set; our last eviction time belongs to
the policy (the plugin's factory), and each case loads its policy anew, so the first cycle looks
for victims at once. A job's budget (`getMaxPodEvictNum`), worked out in each docstring, is
from its PodGroup's `volcano.sh/jdb-min-available` if set, else `jdb-max-unavailable`, a
percentage of its 5 tasks rounded up.

No divergence in these cases. One more test beside them (the last): a pod without
`volcano.sh/preemptable` is preemptable to Volcano's tdm (its `TaskInfo.Preemptable` defaults
to true since Volcano's d81ca78b6, the commit that annotated this file's p4 and p5 `"false"`),
and to ours. Not covered by this Go file (and so not transcribed): tdm's preemptable,
jobOrder, jobPipelined and jobStarving points, which `tests/unit/plugins/test_tdm.py` and
`tests/scenarios/test_quota_sla_tdm.py` check against Volcano's code.
"""

from __future__ import annotations

import datetime as dt

from vscheduler.simulate import explain
from vscheduler.testing.builders import (
    START,
    Item,
    PodBuilder,
    node,
    pod,
    podgroup,
    queue,
    snapshot,
)
from vscheduler.testing.scenario import run
from vscheduler.testing.sessions import open_session
from vscheduler.testing.volcano import go_tiers

ZONE = "volcano.sh/revocable-zone"
PREEMPTABLE = "volcano.sh/preemptable"
MIN_AVAILABLE = "volcano.sh/jdb-min-available"
MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"
NOON = START + dt.timedelta(hours=12)


def policy(actions: str, flags: tuple[str, ...], arguments: dict[str, str]) -> str:
    """The Go test's tier: tdm alone with `flags` and the case's `arguments` (quoted, as they
    are strings in Go)."""
    text = go_tiers(actions, tdm=flags)
    args = [f'      {key}: "{value}"' for key, value in arguments.items()]
    return text + "    arguments:\n" + "\n".join(args) + "\n"


def build_node(name: str, zone: str = "") -> Item:
    """`util.BuildNode(name, BuildResourceList("16", "64Gi", pods 10), labels)`."""
    built = node(name).resources(cpu="16", memory="64Gi", pods=10)
    return built.label(ZONE, zone) if zone else built


# --- Test_TDM: predicate and node order ----------------------------------------------------------
PLACEMENT = policy(
    "allocate",
    ("enablePredicate", "enableNodeOrder"),
    {"tdm.revocable-zone.rz1": "0:00-0:00", "tdm.revocable-zone.rz2": "0:00-0:01"},
)
FIVE_NODES = (
    build_node("n1", "rz1"),
    build_node("n2", "rz1"),
    build_node("n3"),
    build_node("n4"),
    build_node("n5", "rz2"),
)
RZ2_CLOSED = "node(s) in revocable zone rz2, closed now (0:00-0:01)"
NOT_REVOCABLE = "node(s) were revocable and the pod may not use revocable nodes"


def pending(name: str) -> PodBuilder:
    """`util.BuildPod("c1", name, "", v1.PodPending, 1 cpu 1Gi, "pg1", {}, {})`."""
    return pod(name, "c1").group("pg1").requests(cpu="1", memory="1Gi")


def placement(member: PodBuilder) -> tuple[dict[str, str], dict[str, object]]:
    """The cycle's binds, and for each node tdm's score for the pod (a number) or the reason
    tdm refuses the node (a string), as the session opens."""
    items = [
        queue("c1").weight(1),
        podgroup("pg1", "c1").queue("c1").min_member(0).inqueue(),
        *FIVE_NODES,
        member,
    ]
    snap = snapshot(*items)
    [outcome] = run(snap, policy=PLACEMENT, now=NOON)
    session = open_session(snap, PLACEMENT, now=NOON)
    [task] = session.tasks.values()
    nodes = explain(session, task)["nodes"]
    assert isinstance(nodes, dict)
    verdicts: dict[str, object] = {}
    for name, data in nodes.items():
        filt = data["filter"]
        verdicts[name] = data["total"] if filt["passed"] else f"{filt['plugin']}: {filt['reason']}"
    return outcome.binds, verdicts


def test_a_pod_that_may_use_revocable_nodes_passes_the_open_zone_and_scores_it_100() -> None:
    """Test_TDM "preemptable task rz available": p1 has `volcano.sh/revocable-zone: "*"`. The
    predicate passes n1 and n2 (rz1, open) and n3, n4 (not revocable), not n5 (rz2, closed);
    n1 and n2 score 100, n3 and n4 0."""
    binds, verdicts = placement(pending("p1").annotate(ZONE, "*"))

    assert verdicts == {"n1": 100, "n2": 100, "n3": 0, "n4": 0, "n5": f"tdm: {RZ2_CLOSED}"}
    assert binds == {"c1/p1": "n1"}


def test_a_pod_without_a_revocable_zone_stays_off_revocable_nodes() -> None:
    """Test_TDM "not preemptable task": p2 has no annotation. The predicate passes only n3 and
    n4, both scoring 0; n1 and n2 refuse it (rz1 is open, but the pod may not use revocable
    nodes), n5 too (rz2 is closed, which Volcano's predicate checks first)."""
    binds, verdicts = placement(pending("p2"))

    assert verdicts == {
        "n1": f"tdm: {NOT_REVOCABLE}",
        "n2": f"tdm: {NOT_REVOCABLE}",
        "n3": 0,
        "n4": 0,
        "n5": f"tdm: {RZ2_CLOSED}",
    }
    assert binds == {"c1/p2": "n3"}


def test_with_two_zones_only_the_open_one_takes_the_pod() -> None:
    """Test_TDM "preemptable task and multiple rz": p3, like p1, has
    `volcano.sh/revocable-zone: "*"`; of the two zones only rz1 is open. As the first case:
    n1..n4 pass, n1 and n2 score 100, n3 and n4 0."""
    binds, verdicts = placement(pending("p3").annotate(ZONE, "*"))

    assert verdicts == {"n1": 100, "n2": 100, "n3": 0, "n4": 0, "n5": f"tdm: {RZ2_CLOSED}"}
    assert binds == {"c1/p3": "n1"}


# --- Test_TDM_victimsFn: victims on closed zones --------------------------------------------------
CLOSED = "0:00-0:01"
OPEN = "0:00-0:00"


def running(namespace: str, group: str, name: str, on: str, preemptable: bool | None) -> PodBuilder:
    """`util.BuildPod(namespace, name, on, v1.PodRunning, 1 cpu 1Gi, group, {}, {})` with
    annotation `volcano.sh/preemptable` true or false (None: without it)."""
    built = pod(name, namespace).group(group).requests(cpu="1", memory="1Gi").on(on)
    if preemptable is None:
        return built
    return built.annotate(PREEMPTABLE, "true" if preemptable else "false")


def job1(budget: tuple[str, str], others: bool | None = False) -> list[Item]:
    """Queue c1, pg1 with annotation `budget`, on n1 (rz1): p1..p3 preemptable, p4, p5 with
    `volcano.sh/preemptable` `others` (false; None: without the annotation)."""
    key, value = budget
    return [
        queue("c1").weight(1),
        podgroup("pg1", "c1").queue("c1").min_member(0).annotate(key, value),
        build_node("n1", "rz1"),
        *(running("c1", "pg1", f"p{i}", "n1", True if i <= 3 else others) for i in range(1, 6)),
    ]


def job2(budget: tuple[str, str]) -> list[Item]:
    """Queue c2, pg2 with annotation `budget`, on n2 (rz1): p6..p10, all preemptable."""
    key, value = budget
    return [
        queue("c2").weight(1),
        podgroup("pg2", "c2").queue("c2").min_member(0).annotate(key, value),
        build_node("n2", "rz1"),
        *(running("c2", "pg2", f"p{i}", "n2", preemptable=True) for i in range(6, 11)),
    ]


def evictions(items: list[Item], *, rz1: str = CLOSED, period: str = "1s") -> list[str]:
    """What shuffle evicts in one cycle at noon, tdm's victims point on with rz1's window and
    the eviction period of the case."""
    text = policy(
        "shuffle", ("enabledVictim",), {"tdm.revocable-zone.rz1": rz1, "tdm.evict.period": period}
    )
    [outcome] = run(snapshot(*items), policy=text, now=NOON)
    return outcome.evictions


def test_a_closed_zone_evicts_as_many_as_max_unavailable_allows() -> None:
    """Test_TDM_victimsFn case 0: rz1 closed, pg1 `jdb-max-unavailable: 30%` of 5 tasks = 2,
    none unavailable: 2 of its 3 preemptable pods (want 2)."""
    items = job1((MAX_UNAVAILABLE, "30%"))

    assert evictions(items, period="100ms") == ["c1/p1", "c1/p2"]


def test_an_open_zone_evicts_nothing() -> None:
    """Test_TDM_victimsFn case 1: rz1 `0:00-0:00`, open all day: no victim (want 0)."""
    items = job1((MAX_UNAVAILABLE, "30%"))

    assert evictions(items, rz1=OPEN, period="100ms") == []


def test_only_preemptable_pods_are_evicted_however_large_the_budget() -> None:
    """Test_TDM_victimsFn case 2: pg1 `jdb-max-unavailable: 99%` of 5 = 5, but only p1..p3
    are preemptable (want 3)."""
    items = job1((MAX_UNAVAILABLE, "99%"))

    assert evictions(items) == ["c1/p1", "c1/p2", "c1/p3"]


def test_a_percentage_of_max_unavailable_is_rounded_up() -> None:
    """Test_TDM_victimsFn case 3: pg2 `jdb-max-unavailable: 50%` of 5 = 3 (2.5 rounded up),
    all five preemptable (want 3)."""
    items = job2((MAX_UNAVAILABLE, "50%"))

    assert evictions(items) == ["c2/p10", "c2/p6", "c2/p7"]


def test_each_job_is_held_to_its_own_budget() -> None:
    """Test_TDM_victimsFn case 4: pg2 `jdb-max-unavailable: 50%` (3) and pg1 `90%` (5, capped
    by its 3 preemptable pods), both on rz1 (want 6)."""
    items = [*job2((MAX_UNAVAILABLE, "50%")), *job1((MAX_UNAVAILABLE, "90%"))]

    assert evictions(items) == ["c1/p1", "c1/p2", "c1/p3", "c2/p10", "c2/p6", "c2/p7"]


def test_max_unavailable_may_be_a_count() -> None:
    """Test_TDM_victimsFn case 5: pg2 `jdb-max-unavailable: 3` (want 3)."""
    items = job2((MAX_UNAVAILABLE, "3"))

    assert evictions(items) == ["c2/p10", "c2/p6", "c2/p7"]


def test_min_available_keeps_that_many_running() -> None:
    """Test_TDM_victimsFn case 6: pg2 `jdb-min-available: 3`, 5 running: 5 - 3 = 2 (want 2)."""
    items = job2((MIN_AVAILABLE, "3"))

    assert evictions(items) == ["c2/p10", "c2/p6"]


def test_a_percentage_of_min_available_is_rounded_up() -> None:
    """Test_TDM_victimsFn case 7: pg2 `jdb-min-available: 30%` of 5 = 2 (1.5 rounded up), 5
    running: 3 (want 3)."""
    items = job2((MIN_AVAILABLE, "30%"))

    assert evictions(items) == ["c2/p10", "c2/p6", "c2/p7"]


def test_jobs_with_either_budget_are_each_held_to_theirs() -> None:
    """Test_TDM_victimsFn case 8: pg2 `jdb-min-available: 2` (5 - 2 = 3) and pg1
    `jdb-max-unavailable: 3` (3, its 3 preemptable pods) (want 6)."""
    items = [*job2((MIN_AVAILABLE, "2")), *job1((MAX_UNAVAILABLE, "3"))]

    assert evictions(items) == ["c1/p1", "c1/p2", "c1/p3", "c2/p10", "c2/p6", "c2/p7"]


def test_a_pod_without_the_preemptable_annotation_is_a_victim_too() -> None:
    """Not a Go case: Test_TDM_victimsFn case 2 as the file stood before Volcano's d81ca78b6
    ("pod could be preempted by default"), which made `GetPodPreemptable` default to true and
    had to annotate p4 and p5 `"false"` to keep this file's counts. Without the annotation,
    Volcano's tdm takes p4 and p5 as well: 5 victims (the budget, 99% of 5, is 5)."""
    items = job1((MAX_UNAVAILABLE, "99%"), others=None)

    assert evictions(items) == ["c1/p1", "c1/p2", "c1/p3", "c1/p4", "c1/p5"]
