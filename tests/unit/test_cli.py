"""The command line, as a user runs it: simulate on the shipped examples, validate-config, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vscheduler import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
POLICIES = ROOT / "tests" / "fixtures" / "policies"


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code = cli.main(["simulate", *args, "--output", "json", "--no-timings"])
    out = capsys.readouterr()
    assert code == 0, out.err
    result: dict[str, Any] = json.loads(out.out)
    return result


def fail(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = cli.main(list(args))
    out = capsys.readouterr()
    assert code == 1
    return out.err + out.out


def test_a_gang_that_does_not_fit_binds_nothing_and_its_podgroup_names_the_shortfall(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = simulate(capsys, str(EXAMPLES / "gang-waits" / "cluster.yaml"))
    cycle = result["cycles"][0]
    assert result["binds"] == {}
    group = cycle["podGroups"]["ml/train"]
    assert group["phase"] == "Inqueue"
    [condition] = group["conditions"]
    assert condition["type"] == "Unschedulable"
    assert condition["reason"] == "NotEnoughResources"
    assert condition["message"] == (
        "1/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; "
        "Pending: 3 Schedulable, 1 Unschedulable"
    )
    assert set(cycle["unschedulable"]) == {f"ml/train-worker-{i}" for i in range(4)}


def test_the_gang_binds_whole_once_a_node_joins(capsys: pytest.CaptureFixture[str]) -> None:
    folder = EXAMPLES / "gang-waits"
    result = simulate(capsys, str(folder / "cluster.yaml"), str(folder / "new-node.yaml"))
    assert result["binds"] == {f"ml/train-worker-{i}": f"node-{i + 1}" for i in range(4)}
    assert result["cycles"][0]["podGroups"]["ml/train"]["phase"] == "Running"


def test_two_queues_weighted_one_to_three_share_the_example_cluster_one_to_three(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = simulate(capsys, str(EXAMPLES / "two-queues"))
    binds = result["binds"]
    assert isinstance(binds, dict)
    per_queue = {
        q: sum(1 for k in binds if k.startswith(q + "/")) for q in ("research", "production")
    }
    assert per_queue == {"research": 4, "production": 12}


def test_two_queues_with_min_resources_end_one_to_three_although_admitted_jobs_are_blocked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 11: production's 4 admitted jobs beyond its deserved 12 CPU hold no admission budget
    from cycle 2, so research gets its 4th CPU (Volcano: 3 : 12 with 1 CPU idle)."""
    result = simulate(capsys, str(EXAMPLES / "two-queues-min-resources"), "--cycles", "3")
    cycles = result["cycles"]
    assert isinstance(cycles, list)
    per_cycle = [
        {q: sum(1 for k in c["binds"] if k.startswith(q + "/")) for q in ("research", "production")}
        for c in cycles
    ]
    assert per_cycle == [
        {"research": 3, "production": 12},
        {"research": 1, "production": 0},
        {"research": 0, "production": 0},
    ]
    assert cycles[0]["podGroups"]["production/production-job-12"]["phase"] == "Inqueue"
    assert cycles[2]["podGroups"]["production/production-job-12"]["phase"] == "Inqueue"


def test_an_unplaceable_pod_says_why_in_kube_scheduler_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = simulate(capsys, str(EXAMPLES / "unplaceable"))
    assert result["cycles"][0]["unschedulable"] == {
        "data/etl": "0/3 nodes are available: 1 Insufficient cpu, "
        "1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had untolerated taint {dedicated: gpu}."
    }


def test_explain_reports_every_nodes_filter_and_no_score_for_a_failing_node(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = simulate(capsys, str(EXAMPLES / "unplaceable"), "--explain", "data/etl")
    explained = result["explain"]["data/etl"]
    assert (explained["decided"], explained["queue"]) == (True, "queue default allows this pod")
    nodes = explained["nodes"]
    assert list(nodes) == ["node-small", "node-gpu", "node-hdd"]
    assert nodes["node-small"]["filter"] == {
        "passed": False,
        "plugin": "NodeResourcesFit",
        "code": "Unschedulable",
        "reason": "Insufficient cpu",
    }
    assert nodes["node-gpu"]["filter"] == {
        "passed": False,
        "plugin": "predicates",
        "code": "UnschedulableAndUnresolvable",
        "reason": "node(s) had untolerated taint {dedicated: gpu}",
    }
    assert (
        nodes["node-hdd"]["filter"]["reason"] == "node(s) didn't match Pod's node affinity/selector"
    )
    for node in nodes.values():
        assert (node["scores"], node["total"]) == (None, None)


def test_explain_scores_a_node_that_passes_every_filter(capsys: pytest.CaptureFixture[str]) -> None:
    cluster = str(EXAMPLES / "gang-waits" / "cluster.yaml")
    result = simulate(capsys, cluster, "--explain", "ml/train-worker-0")
    for node in result["explain"]["ml/train-worker-0"]["nodes"].values():
        scores = node["scores"]
        assert node["filter"]["passed"]
        assert set(scores) == {"nodeOrder", "batchNodeOrder"}
        assert node["total"] == pytest.approx(
            sum(scores["nodeOrder"].values()) + sum(scores["batchNodeOrder"].values())
        )


def test_the_same_input_gives_byte_identical_output(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "simulate",
        str(EXAMPLES / "two-queues"),
        "--cycles",
        "2",
        "-o",
        "json",
        "--no-timings",
        "--explain",
        "research/research-job-00-0",
    ]
    outputs = []
    for _ in range(2):
        assert cli.main(args) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["stats"] == {"cycleSeconds": [0.0, 0.0], "pods": 40, "nodes": 4}


def test_output_always_has_the_documented_keys(capsys: pytest.CaptureFixture[str]) -> None:
    result = simulate(capsys, str(EXAMPLES / "unplaceable"))
    assert list(result) == [
        "cycles",
        "binds",
        "evictions",
        "evictionDetails",
        "reservationsReleased",
        "explain",
        "stats",
    ]
    assert list(result["cycles"][0]) == [
        "binds",
        "evictions",
        "evictionDetails",
        "pipelined",
        "waiting",
        "nominated",
        "podGroups",
        "unschedulable",
        "reservationsReleased",
        "queues",
    ]


def test_a_second_cycle_sees_the_first_cycles_pods_running(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = simulate(capsys, str(EXAMPLES / "two-queues"), "--cycles", "2")
    cycles = result["cycles"]
    assert isinstance(cycles, list)
    first, second = cycles
    assert len(first["binds"]) == 16
    assert second["binds"] == {}
    assert len(second["unschedulable"]) == 24


def test_table_and_yaml_outputs_are_rendered(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["simulate", str(EXAMPLES / "unplaceable"), "--explain", "data/etl"]) == 0
    table = capsys.readouterr().out
    assert "pending    data/etl: 0/3 nodes are available" in table
    assert "node-gpu" in table
    assert (
        "explain data/etl (as allocate decided it, after the cycle's earlier placements):" in table
    )
    assert cli.main(["simulate", str(EXAMPLES / "unplaceable"), "-o", "yaml"]) == 0
    assert capsys.readouterr().out.startswith("cycles:\n")


def test_an_empty_action_list_is_allowed_for_explaining(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    policy = tmp_path / "explain-only.yaml"
    policy.write_text('actions: ""\ntiers:\n- plugins:\n  - name: predicates\n')
    result = simulate(
        capsys, str(EXAMPLES / "unplaceable"), "--config", str(policy), "--explain", "data/etl"
    )
    assert result["binds"] == {}
    assert result["cycles"][0]["unschedulable"] == {
        "data/etl": "pod was not considered in this cycle"
    }
    explained = result["explain"]["data/etl"]
    assert (explained["decided"], explained["queue"]) == (False, "")
    assert not explained["nodes"]["node-small"]["filter"]["passed"]


def test_a_pod_whose_podgroup_or_queue_is_missing_stays_pending_with_that_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "c.yaml").write_text(
        NODE
        + POD.format(name="lost", group="nowhere")
        + """---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: orphan, namespace: default}
spec: {minMember: 1, queue: missing}
"""
        + POD.format(name="orphaned", group="orphan")
    )
    result = simulate(capsys, str(tmp_path))
    assert result["cycles"][0]["unschedulable"] == {
        "default/lost": "podgroup default/nowhere not found",
        "default/orphaned": "queue missing of podgroup default/orphan not found",
    }


NODE = """---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi}}
"""
POD = """---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
  annotations: {{scheduling.k8s.io/group-name: {group}}}
spec:
  schedulerName: vscheduler
  containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: "1"}}}}}}]
"""


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        pytest.param(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
            "bad.yaml#1: unsupported kind 'Deployment'",
            id="unknown kind",
        ),
        pytest.param(
            POD.format(name="p", group="g").replace('cpu: "1"', 'cpu: "1x"'),
            "bad.yaml#1: Pod default/p: spec.containers[0].resources.requests.cpu: invalid quantity '1x'",
            id="malformed quantity",
        ),
        pytest.param(
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: pg, namespace: ns}\nspec: {minMember: four}\n",
            "bad.yaml#1: PodGroup ns/pg: spec.minMember",
            id="malformed podgroup",
        ),
        pytest.param("kind: [unclosed\n", "bad.yaml", id="yaml syntax error"),
    ],
)
def test_bad_snapshot_input_names_the_file_object_and_field_and_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, document: str, expected: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(document)
    message = fail(capsys, "simulate", str(path))
    assert expected in message
    assert "Traceback" not in message


def test_a_missing_snapshot_file_is_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert "nothere.yaml" in fail(capsys, "simulate", str(tmp_path / "nothere.yaml"))


def test_explaining_an_unknown_pod_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    message = fail(capsys, "simulate", str(EXAMPLES / "unplaceable"), "--explain", "data/nope")
    assert "--explain data/nope: no such pod" in message


def test_a_bad_now_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--now" in fail(capsys, "simulate", str(EXAMPLES / "unplaceable"), "--now", "yesterday")


def test_an_invalid_policy_for_simulate_lists_every_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("actions: alocate\ntiers:\n- plugins:\n  - name: gangg\n")
    message = fail(capsys, "simulate", str(EXAMPLES / "unplaceable"), "--config", str(policy))
    assert "actions: unknown action 'alocate'; did you mean 'allocate'?" in message
    assert "did you mean 'gang'?" in message


# --- validate-config ----------------------------------------------------------------------------
AVAILABLE = [
    "volcano-cdp.yaml",
    "volcano-default.yaml",
    "volcano-helm.yaml",
    "volcano-helm-ci.yaml",
    "volcano-namespacequeue.yaml",
    "volcano-network-topology.yaml",
    "volcano-plugin-arguments.yaml",
    "volcano-rescheduling.yaml",
    "volcano-resource-strategy-fit.yaml",
    "volcano-task-topology.yaml",
    "volcano-usage-adaptor.yaml",
    "volcano-usage-elasticsearch.yaml",
    "volcano-usage-prometheus.yaml",
]
"""Volcano policies whose every action and plugin this version provides."""
ENQUEUE_DESIGN = "volcano-configurations.yaml"
"""Its preempt arguments are accepted; the enqueue arguments of Volcano's queue-priority design
document (`QueueScoreOrder...`) are not."""


def test_the_queue_priority_design_arguments_of_enqueue_are_the_only_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["validate-config", str(POLICIES / ENQUEUE_DESIGN)]) == 1
    lines = capsys.readouterr().out.splitlines()[1:]
    assert [line.split(":")[1].strip() for line in lines] == [
        "arguments.QueueScoreOrderEnable",
        "arguments.QueueScoreOrder.priority.weight",
        "arguments.QueueScoreOrder.drf.weight",
        "arguments.QueueScoreOrder.proportion.weight",
    ]


@pytest.mark.parametrize(
    "path",
    [ROOT / "config" / "default-policy.yaml", *(POLICIES / name for name in AVAILABLE)],
    ids=lambda p: p.name,
)
def test_volcano_default_and_helm_policies_validate(
    capsys: pytest.CaptureFixture[str], path: Path
) -> None:
    assert cli.main(["validate-config", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: OK\n"


@pytest.mark.parametrize(
    "path",
    sorted(p for p in POLICIES.glob("*.yaml") if p.name not in [*AVAILABLE, ENQUEUE_DESIGN]),
    ids=lambda p: p.name,
)
def test_volcano_policies_naming_what_is_not_provided_yet_say_exactly_that(
    capsys: pytest.CaptureFixture[str], path: Path
) -> None:
    assert cli.main(["validate-config", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()[1:]
    assert lines
    assert all("this version of vscheduler does not provide yet" in line for line in lines)


BROKEN = [
    (
        "actions: enqueue, alocate\ntiers: []\n",
        "actions: unknown action 'alocate'; did you mean 'allocate'?",
    ),
    ("actions: allocate\ntier: []\n", "top level: unknown key 'tier'; did you mean 'tiers'?"),
    ("actions: allocate\ntiers:\n- plugins:\n  - name: gnag\n", "did you mean 'gang'?"),
    (
        "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enableJobOrdr: false\n",
        "tiers[0].plugins[0].enableJobOrdr: unknown key; did you mean 'enableJobOrder'?",
    ),
    (
        "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enablePredicate: maybe\n",
        "tiers[0].plugins[0].enablePredicate: must be true or false",
    ),
    (
        "actions: allocate\ntiers:\n- plugins:\n  - enablePredicate: true\n",
        "tiers[0].plugins[0]: missing 'name'",
    ),
    (
        "actions: allocate\ntiers:\n- plugins:\n  - name: binpack\n    arguments:\n      binpack.weight: heavy\n",
        "arguments.binpack.weight: must be an integer",
    ),
    (
        "actions: allocate\ntiers:\n- plugins:\n  - name: binpack\n    arguments:\n      binpack.wieght: 2\n",
        "arguments.binpack.wieght: unknown argument; did you mean 'binpack.weight'?",
    ),
    (
        "actions: allocate\ntiers:\n- plugins:\n  - name: overcommit\n    arguments:\n      overcommit-factor: 0.5\n",
        "overcommit-factor",
    ),
    (
        "actions: allocate\ntiers:\n- plugins:\n  - name: nodeorder\n    arguments:\n      leastrequested.weight: lots\n",
        "arguments.leastrequested.weight: must be an integer",
    ),
    ("actions: allocate, allocate\ntiers: []\n", "allocate"),
    ("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: gang\n", "gang"),
    (
        "actions: allocate\nconfigurations:\n- name: allocate\n  arguments:\n    enablePredicateErrCache: true\n",
        "did you mean 'enablePredicateErrorCache'?",
    ),
    ("- just\n- a list\n", "mapping"),
    (
        "actions: allocate\nconfigurations:\n- name: enqueue\n  arguments:\n    overcommit: 2\n",
        "action enqueue: arguments.overcommit: unknown argument",
    ),
]


def test_every_argument_problem_of_a_plugin_is_its_own_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(
        "actions: allocate\ntiers:\n- plugins:\n  - name: binpack\n    arguments:\n"
        "      binpack.weight: heavy\n      binpack.cpu: lots\n"
    )
    assert cli.main(["validate-config", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}: 2 error(s):"
    assert [line.split(": arguments.")[1].split(":")[0] for line in out[1:]] == [
        "binpack.weight",
        "binpack.cpu",
    ]


@pytest.mark.parametrize(
    ("text", "expected"), BROKEN, ids=[f"broken-{i}" for i in range(len(BROKEN))]
)
def test_a_broken_policy_gets_a_precise_error_and_exit_code_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    assert cli.main(["validate-config", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: ")
    assert expected in out


def test_now_sets_the_clock_the_session_stamps_conditions_with(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = simulate(
        capsys, str(EXAMPLES / "gang-waits" / "cluster.yaml"), "--now", "2026-11-22T10:00:00Z"
    )
    [condition] = result["cycles"][0]["podGroups"]["ml/train"]["conditions"]
    assert condition["lastTransitionTime"] == "2026-11-22T10:00:00Z"
    assert condition["transitionID"] == "cycle-1"


# --- no traceback from any command --------------------------------------------------------------
NOT_UTF8 = b"actions: allocate\ntiers:\n- plugins:\n  - name: g\xe4ng\n"


def test_validate_config_on_a_file_that_is_not_utf8_is_one_line_naming_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(NOT_UTF8)
    assert cli.main(["validate-config", str(path)]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == f"{path}: not UTF-8 text (invalid continuation byte at byte 47)\n"


def test_validate_config_on_a_missing_file_is_one_line_naming_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "nothere.yaml"
    assert cli.main(["validate-config", str(path)]) == 1
    assert capsys.readouterr().err == f"{path}: cannot read: No such file or directory\n"


def test_simulate_with_a_policy_that_is_not_utf8_is_one_line_naming_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(NOT_UTF8)
    assert cli.main(["simulate", str(EXAMPLES / "unplaceable"), "--config", str(path)]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        f"vscheduler: {path}: not UTF-8 text (invalid continuation byte at byte 47)\n"
    )


PREDICATES_WARNING = (
    "warning: tiers: no 'predicates' plugin: taints, tolerations, node selectors and affinity "
    "are ignored"
)
GANG_WARNING = (
    "warning: tiers: no 'gang' plugin: gangs may split (a PodGroup's pods bind one by one, "
    "whatever its minMember)"
)
MIXED_EVICTION_WARNING = (
    "warning: actions: gangpreempt configured with reclaim: Volcano's design says the gang-aware"
    " actions must not be configured together with the legacy ones (both kinds evict in the"
    " same cycle, each by its own rules)"
)
TIERS_WARNING = (
    "warning: tiers: missing or empty: no plugin runs, so taints, tolerations and affinity are "
    "ignored and gangs may split"
)


@pytest.mark.parametrize(
    ("text", "warnings"),
    [
        pytest.param(
            "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n",
            [PREDICATES_WARNING],
            id="no predicates",
        ),
        pytest.param(
            "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n",
            [GANG_WARNING],
            id="no gang",
        ),
        pytest.param(
            "actions: allocate\ntiers:\n- plugins: []\n",
            [PREDICATES_WARNING, GANG_WARNING],
            id="a tier without plugins",
        ),
        pytest.param(
            'actions: "allocate, gangpreempt, reclaim"\ntiers:\n- plugins:\n'
            "  - name: gang\n  - name: predicates\n",
            [MIXED_EVICTION_WARNING],
            id="gang-aware and legacy eviction together",
        ),
        pytest.param("actions: allocate\n", [TIERS_WARNING], id="no tiers"),
        pytest.param("actions: allocate\ntiers: []\n", [TIERS_WARNING], id="empty tiers"),
    ],
)
def test_validate_config_warns_about_a_valid_policy_missing_predicates_gang_or_tiers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, warnings: list[str]
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    assert cli.main(["validate-config", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        *(f"{path}: {warning}" for warning in warnings),
        f"{path}: OK",
    ]


def test_explain_shows_the_nodes_as_the_cycle_stood_when_it_decided_the_pod(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # README's gang-waits: three workers take the three nodes; the fourth is decided after them.
    cluster = str(EXAMPLES / "gang-waits" / "cluster.yaml")
    with_explain = simulate(capsys, cluster, "--explain", "ml/train-worker-3", "--no-timings")
    without = simulate(capsys, cluster, "--no-timings")
    explained = with_explain["explain"]["ml/train-worker-3"]

    assert with_explain["cycles"] == without["cycles"]
    assert explained["decided"] is True
    assert explained["queue"] == (
        "queue default has no room left for this pod (proportion: allocated cpu 6 + this pod's"
        " cpu 2 exceed its deserved share (cpu 6))"
    )
    assert {n: v["filter"]["reason"] for n, v in explained["nodes"].items()} == {
        "node-1": "Insufficient cpu",
        "node-2": "Insufficient cpu",
        "node-3": "Insufficient cpu",
    }


@pytest.mark.parametrize("collecting", [True, False])
def test_run_imports_the_runtime_with_the_collector_paused_and_gives_it_back_as_it_was(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, collecting: bool
) -> None:
    import gc

    from vscheduler import app

    seen: list[bool] = []

    def fake_run(settings: object) -> int:
        seen.append(gc.isenabled())
        return 7

    monkeypatch.setattr(app, "run", fake_run)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    was = gc.isenabled()
    try:
        (gc.enable if collecting else gc.disable)()
        assert cli.main(["run", "--kubeconfig", str(kubeconfig), "--leader-elect=false"]) == 7
        assert seen == [collecting]
        assert gc.isenabled() is collecting
    finally:
        (gc.enable if was else gc.disable)()
