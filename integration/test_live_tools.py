"""The live-cluster tools against one real control plane: `snapshot` -> `simulate` round trip,
`explain`, `queues`, shadow mode (`run --dry-run`) writing nothing, `compare-decisions`, the
kubectl plugin, and the read-only ClusterRole of deploy/readonly being enough for all of them.

One cluster serves the module (a control plane takes seconds to start). The scene, made once:
two nodes; a gang `train` (2 pods, queue `research`) and a pod `big` that fits no node, both for
vscheduler (it asks for a disk no node has); a pod `etl` for another scheduler (`volcano`).
Two dry runs decide (one per scheduler name) and must write nothing; then `etl` is bound by
hand to the node the dry run did not choose (as Volcano might have), and a real `vscheduler run`
schedules the rest. The tools then read the result.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from integration import harness
from integration.controlplane import REPO_ROOT, find_bin_dir

TIMEOUT = 60.0
MISMATCH = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
README = REPO_ROOT / "README.md"
READONLY = REPO_ROOT / "deploy" / "readonly"


class Scene:
    """The module's cluster and what happened on it."""

    def __init__(self, cluster: harness.ScopedCluster, workdir: Path) -> None:
        self.cluster, self.workdir = cluster, workdir
        self.decisions = [workdir / "vscheduler.jsonl", workdir / "volcano.jsonl"]
        self.dry_run_writes: dict[str, Any] = {}
        self.dry_run_etl_node = ""
        self.shadow_logs: list[str] = []

    @property
    def ns(self) -> str:
        return self.cluster.ns("test")

    @property
    def scheduler_flags(self) -> list[str]:
        """`--scheduler-name` on a shared cluster, where the test's scheduler name is its own."""
        name = harness.scheduler_name_of(self.cluster)
        return [] if name == "vscheduler" else [f"--scheduler-name={name}"]

    def tool(self, *args: str, kubeconfig: Path | None = None) -> subprocess.CompletedProcess[str]:
        """Run `vscheduler ARGS` against the cluster (as admin unless `kubeconfig`), with the
        test's scheduler name for the commands that take one."""
        config = kubeconfig or self.cluster.kubeconfig_path
        named = self.scheduler_flags if args[0] in ("explain", "queues") else []
        return subprocess.run(
            [sys.executable, "-m", "vscheduler", *args, *named, f"--kubeconfig={config}"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            cwd=REPO_ROOT,
            check=False,
        )


def _objects(cluster: harness.ScopedCluster, ns: str) -> None:
    cluster.add_node("node-a", cpu="4", memory="8Gi")
    cluster.add_node("node-b", cpu="2", memory="4Gi")
    research = harness.queue("research", weight=3)
    research["spec"]["capability"] = {"cpu": "3"}
    harness.create(cluster, research)
    harness.create(cluster, harness.podgroup("train", ns, min_member=2, queue="research"))
    for i in range(2):
        harness.create(cluster, harness.pod(f"train-{i}", ns, group="train"))
    ssd = {"nodeSelector": {"disktype": "ssd"}}
    harness.create(cluster, harness.pod("big", ns, extra=ssd))
    harness.create(cluster, harness.pod("etl", ns, cpu="1", scheduler="volcano"))


def _written_by_schedulers(cluster: harness.ScopedCluster, ns: str) -> dict[str, Any]:
    """What a scheduler would have written: bound pods, PodScheduled conditions, Events from
    vscheduler, a Lease."""
    pods = harness.pods(cluster, ns)
    events = cluster.request("GET", "/api/v1/events")["items"]
    leases = cluster.request("GET", "/apis/coordination.k8s.io/v1/leases")["items"]
    return {
        "bound": {
            p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods if p["spec"].get("nodeName")
        },
        "conditions": [p["metadata"]["name"] for p in pods if harness.condition(p, "PodScheduled")],
        "events": [
            e["reason"]
            for e in events
            if (e.get("source") or {}).get("component") in ("vscheduler", "volcano")
            or e.get("reportingComponent") in ("vscheduler", "volcano")
        ],
        "leases": [
            lease["metadata"]["name"]
            for lease in leases
            if lease["metadata"]["name"] in ("vscheduler", "volcano")
        ],
    }


def _decided(path: Path) -> bool:
    """The dry run wrote a cycle that binds something."""
    return path.exists() and any(line["binds"] for line in _lines(path))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def scene(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Scene]:
    workdir = tmp_path_factory.mktemp("live-tools")
    if harness.backend() == "local":
        cp = harness.LocalCluster(build=True)
        cp.start()
        try:
            harness.install_crds(cp)
            cp.create_namespace("test")
            yield from _scene(cp, workdir)
        finally:
            cp.stop()
        return
    remote: harness.RemoteBackend = request.getfixturevalue("remote_backend")
    scoped = remote.for_test(request.module.__name__)
    try:
        yield from _scene(scoped, workdir)
    finally:
        scoped.teardown()


def _scene(cluster: harness.ScopedCluster, workdir: Path) -> Iterator[Scene]:
    scene = Scene(cluster, workdir)
    ns = scene.ns
    _objects(cluster, ns)
    shadows = [
        harness.Scheduler(
            cluster,
            workdir,
            name=name,
            args=["--dry-run", f"--decisions-file={path}"],
        )
        for name, path in zip(("vscheduler", "volcano"), scene.decisions, strict=True)
    ]
    try:
        for shadow, path in zip(shadows, scene.decisions, strict=True):
            shadow.wait_ready(TIMEOUT)
            harness.wait_for(f"a cycle in {path.name}", functools.partial(_decided, path), TIMEOUT)
    finally:
        for shadow in shadows:
            shadow.stop()
            scene.shadow_logs.append(shadow.log_path.read_text())
    scene.dry_run_writes = _written_by_schedulers(cluster, ns)
    scene.dry_run_etl_node = _lines(scene.decisions[1])[-1]["binds"][f"{ns}/etl"]
    # Volcano (played by the test) puts etl on the other node; vscheduler schedules the rest.
    other = "node-b" if scene.dry_run_etl_node == "node-a" else "node-a"
    cluster.bind_pod(ns, "etl", other)
    real = harness.Scheduler(cluster, workdir, name="vscheduler")
    try:
        real.wait_ready(TIMEOUT)
        harness.wait_for(
            "train bound and big's PodScheduled condition",
            lambda: (
                len(harness.bound(cluster, ns)) == 3
                and harness.condition(harness.get_pod(cluster, ns, "big"), "PodScheduled")
            ),
            TIMEOUT,
        )
        harness.wait_for(
            "big's FailedScheduling Event",
            lambda: harness.events_about(cluster, ns, "Pod", "big", reason="FailedScheduling"),
            TIMEOUT,
        )
    finally:
        real.stop()
    yield scene


# --- the tests ---------------------------------------------------------------------------------
@pytest.mark.timeout(300)
def test_a_dry_run_decides_every_pod_of_its_scheduler_name_and_writes_nothing(scene: Scene) -> None:
    assert scene.dry_run_writes == {"bound": {}, "conditions": [], "events": [], "leases": []}
    ns = scene.ns
    ours = [line for line in _lines(scene.decisions[0]) if line["binds"]]
    assert set(ours[0]["binds"]) == {f"{ns}/train-0", f"{ns}/train-1"}
    assert ours[0]["pending"][f"{ns}/big"] == MISMATCH
    assert set(_lines(scene.decisions[1])[-1]["binds"]) == {f"{ns}/etl"}
    name = harness.scheduler_name_of(scene.cluster)
    assert (
        f"dry run: deciding the pods of {name}, writing nothing to the API server; decisions "
        f"to {scene.decisions[0]}"
    ) in scene.shadow_logs[0]
    assert f"dry run: would bind {ns}/train-0 to " in scene.shadow_logs[0]


@pytest.mark.timeout(300)
def test_compare_decisions_reports_where_each_pod_would_have_gone_and_where_it_went(
    scene: Scene,
) -> None:
    ns = scene.ns
    result = scene.tool("compare-decisions", *map(str, scene.decisions), "-o", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    rows = {row["pod"]: row["result"] for row in report["pods"]}
    assert rows == {
        f"{ns}/big": "pending",
        f"{ns}/etl": "different",
        f"{ns}/train-0": "same",
        f"{ns}/train-1": "same",
    }
    assert report["counts"] == {
        "same": 2,
        "different": 1,
        "not bound": 0,
        "only live": 0,
        "pending": 1,
        "gone": 0,
        "evicted": 0,
        "kept": 0,
    }


@pytest.mark.timeout(300)
def test_a_snapshot_is_read_by_simulate_unchanged_and_decides_as_the_live_scheduler_did(
    scene: Scene,
) -> None:
    ns = scene.ns
    out = scene.workdir / "snap.yaml"
    written = scene.tool("snapshot", "-o", str(out))
    assert written.returncode == 0, written.stderr
    items = yaml.safe_load(out.read_text())["items"]
    assert written.stderr == f"vscheduler: wrote {len(items)} objects to {out}\n"
    kinds = {obj["kind"] for obj in items}
    assert {"Namespace", "Node", "Queue", "PodGroup", "Pod"} <= kinds
    simulated = subprocess.run(
        [
            sys.executable,
            "-m",
            "vscheduler",
            "simulate",
            str(out),
            "-o",
            "json",
            "--no-timings",
            *scene.scheduler_flags,
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=REPO_ROOT,
        check=False,
    )
    assert simulated.returncode == 0, simulated.stderr
    cycle = json.loads(simulated.stdout)["cycles"][0]
    condition = harness.condition(harness.get_pod(scene.cluster, ns, "big"), "PodScheduled")
    assert condition is not None
    assert cycle["binds"] == {}
    assert cycle["unschedulable"] == {f"{ns}/big": condition["message"]}


@pytest.mark.timeout(300)
def test_explain_shows_the_live_condition_and_events_beside_the_simulated_node_table(
    scene: Scene,
) -> None:
    ns = scene.ns
    result = scene.tool("explain", f"{ns}/big", "-o", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    live = report["live"]
    assert live["node"] == ""
    assert live["podScheduled"]["reason"] == "Unschedulable"
    assert report["simulated"]["unschedulable"] == live["podScheduled"]["message"]
    assert "FailedScheduling" in {e["reason"] for e in live["events"]}
    nodes = report["explain"]["nodes"]
    assert set(nodes) >= {"node-a", "node-b"}
    assert nodes["node-a"]["filter"]["plugin"] == "predicates"


@pytest.mark.timeout(300)
def test_queues_lists_each_queues_figures_and_podgroups_by_phase(scene: Scene) -> None:
    result = scene.tool("queues", "-o", "json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)["queues"]}
    research = rows["research"]
    assert research["weight"] == 3
    assert research["allocated"] == {"cpu": "2", "memory": "512Mi"}
    assert research["capability"] == {"cpu": "3"}
    assert research["jobs"]["running"] + research["jobs"]["inqueue"] == 1
    assert "default" in rows


@pytest.mark.timeout(300)
def test_the_kubectl_plugin_runs_the_same_commands(scene: Scene) -> None:
    bin_dir = find_bin_dir(build=True)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "KUBECONFIG": str(scene.cluster.kubeconfig_path),
    }
    plugin = subprocess.run(
        [str(bin_dir / "kubectl"), "vscheduler", "queues", *scene.scheduler_flags],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
        check=False,
    )
    direct = scene.tool("queues")
    assert plugin.returncode == 0, plugin.stderr
    assert plugin.stdout == direct.stdout


def _readonly_kubeconfig(scene: Scene) -> Path:
    """A kubeconfig whose token is bound only to deploy/readonly's ClusterRole."""
    scene.cluster.kubectl("apply", "-k", str(READONLY))
    token = scene.cluster.service_account_token("vscheduler-system", "vscheduler-readonly")
    return scene.cluster.write_kubeconfig(scene.workdir / "readonly.kubeconfig", token)


@pytest.mark.timeout(300)
def test_the_read_only_cluster_role_is_enough_for_every_tool_and_allows_no_write(
    scene: Scene,
) -> None:
    ns = scene.ns
    config = _readonly_kubeconfig(scene)
    policy = (
        "actions: enqueue, allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: reservation\n"
    )
    harness.create(
        scene.cluster,
        harness.configmap(
            "vscheduler-policy", "vscheduler-system", {"volcano-scheduler.conf": policy}
        ),
    )
    for args in (
        ["snapshot", "-o", str(scene.workdir / "ro.yaml")],
        ["explain", f"{ns}/big"],
        ["queues", "-o", "wide"],
        ["compare-decisions", *map(str, scene.decisions)],
        ["snapshot", "--policy-configmap", "vscheduler-system/vscheduler-policy", "-o", "-"],
    ):
        result = scene.tool(*args, kubeconfig=config)
        assert result.returncode == 0, (args, result.stderr)
    shadow = harness.Scheduler(
        scene.cluster,
        scene.workdir,
        name="vscheduler",
        args=["--dry-run", f"--kubeconfig={config}"],
    )
    try:
        shadow.wait_ready(TIMEOUT)
    finally:
        shadow.stop()
    forbidden = subprocess.run(
        [
            str(find_bin_dir(build=True) / "kubectl"),
            f"--kubeconfig={config}",
            "auth",
            "can-i",
            "create",
            "pods/binding",
            "-n",
            ns,
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert forbidden.stdout.strip() == "no"


# --- the README's block ------------------------------------------------------------------------
README_COMMANDS: Sequence[Sequence[str]] = (
    ("queues",),
    ("explain", "test/big"),
    ("compare-decisions", "vscheduler.jsonl", "volcano.jsonl"),
)


def normalized(text: str) -> str:
    """Volatile parts out: event ages, and the decisions files' directory."""
    return re.sub(r"^ +(?:\d+[smhd]|AGE)(?= )", "     AGE", text, flags=re.MULTILINE)


def readme_block() -> str:
    """The fenced block after `<!-- live-tools-output -->` in the README."""
    text = README.read_text()
    _, _, rest = text.partition("<!-- live-tools-output")
    match = re.search(r"```text\n(.*?)```", rest, flags=re.DOTALL)
    assert match, "README: no ```text block after <!-- live-tools-output"
    return match.group(1)


@pytest.mark.timeout(300)
def test_the_readme_shows_the_live_tools_output_as_they_print_it(scene: Scene) -> None:
    parts = []
    for command in README_COMMANDS:
        args = [
            str(scene.workdir / a) if a.endswith(".jsonl") else a.replace("test/", f"{scene.ns}/")
            for a in command
        ]
        result = scene.tool(*args)
        assert result.returncode == 0, result.stderr
        parts.append(f"$ vscheduler {' '.join(command)}\n{result.stdout}")
    actual = normalized("\n".join(parts)).replace(f"{scene.ns}/", "test/")
    if os.environ.get("VSCHEDULER_UPDATE_README"):  # regenerate the block
        head, marker, rest = README.read_text().partition("<!-- live-tools-output")
        rest = rest.replace(f"```text\n{readme_block()}```", f"```text\n{actual}```", 1)
        README.write_text(head + marker + rest)
    assert normalized(readme_block()) == actual
