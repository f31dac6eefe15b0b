"""task-topology as Volcano decides, transcribed from Volcano's
`pkg/scheduler/plugins/task-topology/topology_test.go` (`Test_readTopologyFromPgAnnotations`, its
seven cases); then whole cycles: a parameter-server job whose workers go with their server, and
workers spread apart, with exact placements.

The Go test calls `readTopologyFromPgAnnotations(job)`, which splits the PodGroup's three
annotations and checks every role they name against the job's tasks (`TaskRole`). Here those are
two steps: the PodGroup converter splits them (`JobFacts.task_topology`, warnings on the
PodGroup), and the plugin, when the session opens, applies the topology of a job whose every
named role one of its pods has (`plugin.applying`). A Go case that returns a topology is one
that is read and applied here; a Go error is a topology not applied (Volcano's plugin then
ignores the job's topology, as ours does). The Go tasks are pods with a `volcano.sh/task-spec`
role, in PodGroup `job1`. Beyond the Go test: the names no label can hold of the "invalid
annotation" case and the repeat of "duplicate task name" carry warnings (Volcano logs at V(4)).
"""

from __future__ import annotations

from vscheduler.convert.tasktopology import AFFINITY_KEY, ANTI_AFFINITY_KEY, TASK_ORDER_KEY
from vscheduler.model.facts import UNUSUAL_VALUE, FieldWarning, JobFacts, TaskTopology
from vscheduler.plugins.task_topology import Inert, TaskTopologyPlugin
from vscheduler.plugins.task_topology.plugin import applying
from vscheduler.testing.builders import Item, node, pod, podgroup, snapshot
from vscheduler.testing.scenario import run
from vscheduler.testing.sessions import open_session

POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins:
  - {name: drf}
  - {name: predicates}
  - {name: proportion}
  - {name: nodeorder}
  - {name: task-topology, arguments: {task-topology.weight: 10}}
"""
"""Volcano's user-guide tiers for task-topology (weight 10), our usual actions."""
BINPACK = POLICY.replace("{name: nodeorder}", "{name: binpack}")
"""The same with binpack instead of nodeorder: without a topology, pods are packed."""
WITHOUT = POLICY.replace("task-topology.weight: 10", "task-topology.weight: 0")
"""The same with the plugin's scores weighing nothing (its task order stays)."""
TF_ROLES = {"ps": 2, "worker": 2, "chief": 1, "evaluator": 1}


def job1(annotations: dict[str, str], roles: dict[str, int]) -> list[Item]:
    """PodGroup default/job1 with `annotations` and, for each role, that many pending pods
    `job1-<role>-<i>` of it (one cpu each), and two nodes."""
    group = podgroup("job1").min_member(1)
    for key, value in annotations.items():
        group = group.annotate(key, value)
    pods = [
        pod(f"job1-{role}-{i}").group("job1").role(role).requests(cpu="1")
        for role, count in roles.items()
        for i in range(count)
    ]
    return [node("n1").resources(cpu="8"), node("n2").resources(cpu="8"), group, *pods]


def read(annotations: dict[str, str], roles: dict[str, int]) -> tuple[JobFacts, bool]:
    """The job's facts and whether the plugin applies its topology when a session opens."""
    session = open_session(snapshot(*job1(annotations, roles)), POLICY)
    applied = "default/job1" in applying(session)
    return session.jobs["default/job1"].facts, applied


# --- Test_readTopologyFromPgAnnotations ------------------------------------------------------------
def test_a_correct_annotation_is_read_and_applied() -> None:
    """ "correct annotation"."""
    facts, applied = read(
        {
            AFFINITY_KEY: "ps,worker;ps,chief",
            ANTI_AFFINITY_KEY: "ps;worker,chief",
            TASK_ORDER_KEY: "ps,worker,chief,evaluator",
        },
        TF_ROLES,
    )

    assert facts.task_topology == TaskTopology(
        affinity=(("ps", "worker"), ("ps", "chief")),
        anti_affinity=(("ps",), ("worker", "chief")),
        order=("ps", "worker", "chief", "evaluator"),
    )
    assert applied
    assert facts.warnings == ()


def test_role_names_with_dashes_are_read_and_applied() -> None:
    """ "correct annotation with tasks whose names contain `-`"."""
    facts, applied = read(
        {
            AFFINITY_KEY: "ps-some,worker-another-some;ps-some,chief-kk",
            ANTI_AFFINITY_KEY: "ps-some;worker-another-some,chief-kk",
            TASK_ORDER_KEY: "ps-some,worker-another-some,chief-kk,evaluator-tt",
        },
        {"ps-some": 2, "worker-another-some": 2, "chief-kk": 1, "evaluator-tt": 1},
    )

    assert facts.task_topology == TaskTopology(
        affinity=(("ps-some", "worker-another-some"), ("ps-some", "chief-kk")),
        anti_affinity=(("ps-some",), ("worker-another-some", "chief-kk")),
        order=("ps-some", "worker-another-some", "chief-kk", "evaluator-tt"),
    )
    assert applied


def test_no_annotation_is_no_topology() -> None:
    """ "nil annotation": nil, no error."""
    facts, applied = read({}, TF_ROLES)

    assert facts.task_topology is None
    assert not applied


def test_a_role_no_task_has_leaves_the_topology_unapplied() -> None:
    """ "invalid annotation": `task $%GF$^trtqwrg^ do not exist in job <default/job1>`. The
    names no label can hold are warnings on the PodGroup."""
    facts, applied = read(
        {
            AFFINITY_KEY: "$%GF$^trtqwrg^",
            ANTI_AFFINITY_KEY: "ps;worker,chief;#@FGEW^vfa897bgs;;",
            TASK_ORDER_KEY: "ps,worker,chief,evaluator,,,",
        },
        TF_ROLES,
    )

    assert facts.task_topology is not None
    assert not applied
    assert [w.message.split(": ", 2)[1] for w in facts.warnings] == [
        "metadata.annotations[volcano.sh/task-topology-affinity]",
        "metadata.annotations[volcano.sh/task-topology-anti-affinity]",
    ]


def test_a_task_order_naming_a_role_no_task_has_leaves_the_topology_unapplied() -> None:
    """ "invalid task name": `task chief do not exist in job <default/job1>`."""
    facts, applied = read(
        {AFFINITY_KEY: "ps,worker", ANTI_AFFINITY_KEY: "ps", TASK_ORDER_KEY: "ps,worker,chief"},
        {"ps": 2, "worker": 2},
    )

    assert facts.task_topology == TaskTopology(
        affinity=(("ps", "worker"),), anti_affinity=(("ps",),), order=("ps", "worker", "chief")
    )
    assert not applied
    assert facts.warnings == ()


def test_a_role_twice_in_one_group_is_no_topology_with_a_warning() -> None:
    """ "duplicate task name": `task ps is duplicate in job <default/job1>`."""
    facts, applied = read(
        {AFFINITY_KEY: "ps,worker", ANTI_AFFINITY_KEY: "ps,ps", TASK_ORDER_KEY: "ps,worker"},
        {"ps": 2, "worker": 2},
    )

    assert facts.task_topology is None
    assert not applied
    assert facts.warnings == (
        FieldWarning(
            UNUSUAL_VALUE,
            "PodGroup default/job1: metadata.annotations[volcano.sh/task-topology-anti-affinity]:"
            " 'ps,ps' names 'ps' twice in one group; the job's task topology is ignored, as"
            " Volcano ignores it",
        ),
    )


def test_redundant_punctuation_keeps_empty_names_and_applies() -> None:
    """ "redundant punctuations": the empty names are kept, as Go's `strings.Split` keeps
    them; they name no pod."""
    facts, applied = read(
        {
            AFFINITY_KEY: "ps,worker;ps,,chief,;",
            ANTI_AFFINITY_KEY: "ps;worker,chief;;;",
            TASK_ORDER_KEY: "ps,worker,chief,evaluator,,,",
        },
        TF_ROLES,
    )

    assert facts.task_topology == TaskTopology(
        affinity=(("ps", "worker"), ("ps", "", "chief", ""), ("",)),
        anti_affinity=(("ps",), ("worker", "chief"), ("",), ("",), ("",)),
        order=("ps", "worker", "chief", "evaluator", "", "", ""),
    )
    assert applied
    assert facts.warnings == ()


# --- whole cycles ----------------------------------------------------------------------------------
def tf_job(affinity: str | None, anti: str | None, *, workers: int = 4) -> list[Item]:
    """PodGroup default/tf (minMember: all its pods) with 2 ps and `workers` workers, one cpu
    and 1Gi each; four nodes of 4 cpu and 8Gi."""
    group = podgroup("tf").min_member(2 + workers)
    if affinity is not None:
        group = group.annotate(AFFINITY_KEY, affinity)
    if anti is not None:
        group = group.annotate(ANTI_AFFINITY_KEY, anti)
    ps = [pod(f"tf-ps-{i}").group("tf").role("ps").requests(cpu="1", memory="1Gi") for i in (0, 1)]
    worker = [
        pod(f"tf-worker-{i}").group("tf").role("worker").requests(cpu="1", memory="1Gi")
        for i in range(workers)
    ]
    nodes = [node(f"n{i}").resources(cpu="4", memory="8Gi") for i in range(4)]
    return [*nodes, group, *ps, *worker]


def test_each_parameter_server_gets_its_half_of_the_workers_on_its_node() -> None:
    """`ps,worker` together, `ps` apart: two buckets, {ps-0, worker-0, worker-2} and {ps-1,
    worker-1, worker-3} (each worker joins the lighter bucket, the older on a tie); each bucket
    fills one node, where nodeorder alone spreads the pods over all four."""
    topology = run(snapshot(*tf_job("ps,worker", "ps")), policy=POLICY)[0]
    spread = run(snapshot(*tf_job("ps,worker", "ps")), policy=WITHOUT)[0]

    assert topology.binds == {
        "default/tf-ps-0": "n0",
        "default/tf-worker-0": "n0",
        "default/tf-worker-2": "n0",
        "default/tf-ps-1": "n1",
        "default/tf-worker-1": "n1",
        "default/tf-worker-3": "n1",
    }
    assert spread.binds == {
        "default/tf-ps-0": "n0",
        "default/tf-worker-0": "n1",
        "default/tf-worker-2": "n2",
        "default/tf-ps-1": "n3",
        "default/tf-worker-1": "n0",
        "default/tf-worker-3": "n1",
    }


def test_a_bucket_too_big_for_one_node_puts_what_fits_with_its_server() -> None:
    """Six workers with the two servers: buckets of 4 (ps-0 and workers 0, 2, 4) on nodes of 4
    cpu: a bucket fills its node, and the rest of the job takes the next."""
    outcome = run(snapshot(*tf_job("ps,worker", "ps", workers=6)), policy=POLICY)[0]

    assert outcome.binds == {
        "default/tf-ps-0": "n0",
        "default/tf-worker-0": "n0",
        "default/tf-worker-2": "n0",
        "default/tf-worker-4": "n0",
        "default/tf-ps-1": "n1",
        "default/tf-worker-1": "n1",
        "default/tf-worker-3": "n1",
        "default/tf-worker-5": "n1",
    }


def test_workers_apart_are_spread_where_binpack_would_pack_them() -> None:
    """`worker` apart (no server relation): each worker its own bucket, and a node holding a
    worker placed this cycle scores it -1 times the weight: four workers on four nodes, where
    binpack alone packs them on one. The workers, in buckets, go before the servers, in none
    (the task order, weight or not); the servers have no score of ours: binpack packs them."""
    unweighted = BINPACK.replace("weight: 10", "weight: 0")
    topology = run(snapshot(*tf_job(None, "worker")), policy=BINPACK)[0]
    packed = run(snapshot(*tf_job(None, "worker")), policy=unweighted)[0]

    assert list(topology.binds.items()) == [
        ("default/tf-worker-0", "n0"),
        ("default/tf-worker-1", "n1"),
        ("default/tf-worker-2", "n2"),
        ("default/tf-worker-3", "n3"),
        ("default/tf-ps-0", "n0"),
        ("default/tf-ps-1", "n0"),
    ]
    assert list(packed.binds.items()) == [
        ("default/tf-worker-0", "n0"),
        ("default/tf-worker-1", "n0"),
        ("default/tf-worker-2", "n0"),
        ("default/tf-worker-3", "n0"),
        ("default/tf-ps-0", "n1"),
        ("default/tf-ps-1", "n1"),
    ]


def test_workers_follow_their_server_already_running() -> None:
    """ps-0 runs on n2: its bucket is n2's, and the pending workers, drawn to it by `ps,worker`,
    go there (nodeorder alone would spread them over the emptier nodes)."""
    items: list[Item] = [node(f"n{i}").resources(cpu="4", memory="8Gi") for i in range(4)]
    items += [
        podgroup("tf").min_member(3).annotate(AFFINITY_KEY, "ps,worker"),
        pod("tf-ps-0").group("tf").role("ps").requests(cpu="1", memory="1Gi").on("n2"),
        *(
            pod(f"tf-worker-{i}").group("tf").role("worker").requests(cpu="1", memory="1Gi")
            for i in (0, 1)
        ),
    ]

    outcome = run(snapshot(*items), policy=POLICY)[0]

    assert outcome.binds == {"default/tf-worker-0": "n2", "default/tf-worker-1": "n2"}


def test_a_job_naming_a_role_it_lacks_is_placed_as_without_a_topology() -> None:
    """`ps,wroker` (a typo): no pod is a `wroker`, so the topology is ignored, as Volcano does:
    the pods go where nodeorder alone puts them."""
    typo = run(snapshot(*tf_job("ps,wroker", "ps")), policy=POLICY)[0]
    none = run(snapshot(*tf_job(None, None)), policy=POLICY)[0]

    assert typo.binds == none.binds


def test_a_session_without_a_topology_opens_no_hooks() -> None:
    """A job without the annotations (or one whose pods are all placed) costs nothing: the
    plugin opens without hooks, so no pod is scored or ordered by it."""
    plain = open_session(snapshot(*tf_job(None, None)), POLICY)
    placed = open_session(
        snapshot(
            node("n0").resources(cpu="4"),
            podgroup("tf").annotate(AFFINITY_KEY, "ps"),
            pod("tf-ps-0").group("tf").role("ps").requests(cpu="1").on("n0"),
        ),
        POLICY,
    )
    with_topology = open_session(snapshot(*tf_job("ps,worker", "ps")), POLICY)

    assert isinstance(plain.plugins["task-topology"], Inert)
    assert isinstance(placed.plugins["task-topology"], Inert)
    assert isinstance(with_topology.plugins["task-topology"], TaskTopologyPlugin)
    assert "task-topology" not in {h.plugin for h in plain.dispatch.hooks("nodeOrder")}
    assert "task-topology" in {h.plugin for h in with_topology.dispatch.hooks("nodeOrder")}
