"""The live tools on a fake cluster: what `snapshot` lists and writes, `explain`'s report,
`queues`' rows, and `compare-decisions`' verdicts."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from vscheduler import catalog, simulate
from vscheduler.clock import FixedClock
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.errors import InputError, NotFoundError
from vscheduler.informer import kinds
from vscheduler.informer.kinds import Kind
from vscheduler.live import compare, explain, queues, snapshot
from vscheduler.live.source import policy_text

NOW = dt.datetime(2026, 5, 1, 12, 0, 0, tzinfo=dt.UTC)
QUEUE_FULL = (
    "0/2 nodes are available: 2 Insufficient cpu. queue default has no room left for this pod"
    " (proportion: allocated cpu 0 + this pod's cpu 8 exceed its deserved share (cpu 4))"
)
RESERVATION_POLICY = """\
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
  - name: reservation
- plugins:
  - name: predicates
  - name: proportion
"""


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "managedFields": [{"manager": "kubelet"}]},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def pod(
    name: str,
    cpu: str = "1",
    *,
    node_name: str = "",
    scheduler: str = "vscheduler",
    group: str = "",
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "team", "uid": f"uid-{name}"}
    if group:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def queue(name: str, weight: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": weight, **spec},
    }


def podgroup(name: str, queue_name: str, phase: str, min_member: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "team", "uid": f"uid-pg-{name}"},
        "spec": {"minMember": min_member, "queue": queue_name},
        "status": {"phase": phase},
    }


class FakeSource:
    """A cluster: objects by kind name, single objects by path; every call recorded."""

    def __init__(
        self,
        objects: Sequence[dict[str, Any]],
        *,
        gets: dict[str, dict[str, Any]] | None = None,
        missing: Sequence[str] = (),
    ) -> None:
        self.objects = list(objects)
        self.gets = gets or {}
        self.missing = set(missing)
        self.calls: list[str] = []

    def list(self, kind: Kind) -> list[dict[str, Any]]:
        self.calls.append(
            f"list {kind.name}" + (f" {kind.field_selector}" if kind.field_selector else "")
        )
        if kind.name in self.missing:
            raise NotFoundError(f"404 {kind.plural}", status=404)
        found = [o for o in self.objects if o["kind"] == kind.name]
        if kind.field_selector:
            name = kind.field_selector.removeprefix("metadata.name=")
            found = [
                o
                for o in found
                if o["metadata"]["name"] == name
                and o["metadata"].get("namespace") == kind.namespace
            ]
        return found

    def get(self, path: str, query: Sequence[tuple[str, str]] = ()) -> dict[str, Any] | None:
        self.calls.append(f"get {path}" + (f"?{dict(query)}" if query else ""))
        return self.gets.get(path)


CLUSTER = [
    node("node-a"),
    node("node-b", cpu="2"),
    queue("research", 3, capability={"cpu": "4"}, guarantee={"resource": {"cpu": "1"}}),
    podgroup("train", "research", "Running", min_member=2),
    podgroup("etl", "research", "Pending"),
    pod("train-0", node_name="node-a", group="train"),
    pod("train-1", node_name="node-a", group="train"),
    pod("big", cpu="8"),
    pod("web", node_name="node-b", scheduler="default-scheduler"),
]


def test_the_snapshot_lists_every_kind_the_scheduler_watches() -> None:
    assert {k.name for k in snapshot.ORDER} == {k.name for k in kinds.CLUSTER_KINDS}
    assert len(snapshot.ORDER) == len(kinds.CLUSTER_KINDS)


def test_a_snapshot_lists_every_kind_then_the_config_maps_the_policy_reads() -> None:
    reservations = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "vscheduler-reservations", "namespace": "kube-system"},
        "data": {},
    }
    source = FakeSource([*CLUSTER, reservations])
    pipeline = catalog.load_pipeline(RESERVATION_POLICY, source="policy.yaml")
    taken = snapshot.take(source, pipeline, warn=pytest.fail)
    assert source.calls == [
        *(f"list {k.name}" for k in snapshot.ORDER),
        "list ConfigMap metadata.name=vscheduler-reservations",
    ]
    assert [o["kind"] for o in taken][:3] == ["Node", "Node", "Queue"]
    assert taken[-1] == reservations


def test_a_snapshot_drops_managed_fields_and_simulate_reads_the_file_unchanged(
    tmp_path: Path,
) -> None:
    taken = snapshot.take(FakeSource(CLUSTER), catalog.load_pipeline(None), warn=pytest.fail)
    for fmt, name in (("yaml", "snap.yaml"), ("json", "snap.json")):
        path = tmp_path / name
        path.write_text(snapshot.render(taken, fmt))
        loaded = yaml.safe_load(path.read_text())
        assert loaded["kind"] == "List"
        assert all("managedFields" not in o["metadata"] for o in loaded["items"])
        out = simulate.simulate(simulate.Request(snapshots=[str(path)], timings=False))
        assert out["cycles"][0]["unschedulable"] == {"team/big": QUEUE_FULL}  # type: ignore[index]


def test_a_cluster_without_the_volcano_crds_is_snapshot_without_them_and_says_so() -> None:
    warnings: list[str] = []
    source = FakeSource(CLUSTER, missing=("Queue", "PodGroup"))
    taken = snapshot.take(source, catalog.load_pipeline(None), warn=warnings.append)
    assert {o["kind"] for o in taken} == {"Node", "Pod"}
    assert warnings == [
        "the cluster has no queues.scheduling.volcano.sh (CRD not installed): none written",
        "the cluster has no podgroups.scheduling.volcano.sh (CRD not installed): none written",
    ]


def test_a_missing_core_kind_is_an_error_not_a_warning() -> None:
    with pytest.raises(NotFoundError):
        snapshot.take(
            FakeSource(CLUSTER, missing=("Pod",)), catalog.load_pipeline(None), warn=print
        )


def test_a_config_map_the_policy_reads_that_does_not_exist_is_a_warning() -> None:
    warnings: list[str] = []
    pipeline = catalog.load_pipeline(RESERVATION_POLICY, source="policy.yaml")
    snapshot.take(FakeSource(CLUSTER), pipeline, warn=warnings.append)
    assert warnings == [
        "ConfigMap kube-system/vscheduler-reservations (read by the policy) does not exist"
    ]


POLICY_PATH = "/api/v1/namespaces/vscheduler-system/configmaps/vscheduler-policy"


def test_the_policy_comes_from_a_file_a_config_map_key_or_the_default(tmp_path: Path) -> None:
    file = tmp_path / "policy.yaml"
    file.write_text(RESERVATION_POLICY)
    source = FakeSource([], gets={POLICY_PATH: {"data": {"volcano-scheduler.conf": "actions: ''"}}})
    assert policy_text(source, file=str(file), configmap="", key="k") == (
        RESERVATION_POLICY,
        str(file),
    )
    assert policy_text(
        source,
        file="",
        configmap="vscheduler-system/vscheduler-policy",
        key="volcano-scheduler.conf",
    ) == ("actions: ''", "ConfigMap vscheduler-system/vscheduler-policy key volcano-scheduler.conf")
    assert policy_text(source, file="", configmap="", key="k") == (None, "default policy")


@pytest.mark.parametrize(
    ("configmap", "key", "message"),
    [
        (
            "vscheduler-policy",
            "k",
            "--policy-configmap: give it as NAMESPACE/NAME, got 'vscheduler-policy'",
        ),
        ("ns/absent", "k", "--policy-configmap: ConfigMap ns/absent not found"),
        (
            "vscheduler-system/vscheduler-policy",
            "other",
            "--policy-configmap: ConfigMap vscheduler-system/vscheduler-policy has no key 'other' in data",
        ),
    ],
)
def test_a_policy_config_map_that_cannot_be_read_is_one_message_naming_it(
    configmap: str, key: str, message: str
) -> None:
    source = FakeSource([], gets={POLICY_PATH: {"data": {"volcano-scheduler.conf": ""}}})
    with pytest.raises(InputError) as caught:
        policy_text(source, file="", configmap=configmap, key=key)
    assert str(caught.value) == message


# --- explain -----------------------------------------------------------------------------------
BIG_PATH = "/api/v1/namespaces/team/pods/big"
EVENTS_PATH = "/api/v1/namespaces/team/events"


def explain_source() -> FakeSource:
    big = pod("big", cpu="8")
    big["status"]["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/2 nodes are available: 2 Insufficient cpu.",
        }
    ]
    event = {
        "type": "Warning",
        "reason": "FailedScheduling",
        "source": {"component": "vscheduler"},
        "count": 3,
        "lastTimestamp": "2026-05-01T11:59:15Z",
        "message": "0/2 nodes are available: 2 Insufficient cpu.",
    }
    return FakeSource(CLUSTER, gets={BIG_PATH: big, EVENTS_PATH: {"items": [event]}})


def run_explain(
    source: FakeSource, key: str = "team/big", scheduler: str = "vscheduler"
) -> dict[str, Any]:
    return explain.explain(
        source,
        key,
        policy_text=None,
        policy_source="default policy",
        scheduler_name=scheduler,
        now=NOW,
        warn=pytest.fail,
    )


def test_explain_puts_the_live_condition_and_events_beside_the_simulated_cycle() -> None:
    source = explain_source()
    report = run_explain(source)
    assert report["live"] == {
        "node": "",
        "phase": "Pending",
        "schedulerName": "vscheduler",
        "podScheduled": {
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/2 nodes are available: 2 Insufficient cpu.",
            "lastTransitionTime": "",
        },
        "events": [
            {
                "type": "Warning",
                "reason": "FailedScheduling",
                "from": "vscheduler",
                "count": 3,
                "lastTimestamp": "2026-05-01T11:59:15Z",
                "message": "0/2 nodes are available: 2 Insufficient cpu.",
            }
        ],
    }
    assert report["simulated"] == {
        "bind": None,
        "pipelined": None,
        "waiting": None,
        "unschedulable": QUEUE_FULL,
    }
    assert (
        f"get {EVENTS_PATH}?{{'fieldSelector': 'involvedObject.kind=Pod,involvedObject.name=big'}}"
        in source.calls
    )
    text = explain.render_table(report, NOW)
    assert text.splitlines()[:5] == [
        "pod team/big (policy: default policy)",
        "  live:       not bound, phase Pending, scheduler vscheduler",
        "  condition:  PodScheduled=False Unschedulable: 0/2 nodes are available: 2 Insufficient cpu.",
        f"  simulated:  stays pending: {QUEUE_FULL}",
        "events (1, oldest first):",
    ]
    assert text.splitlines()[5] == (
        "     45s  Warning  FailedScheduling   vscheduler: 0/2 nodes are available: 2 Insufficient "
        "cpu. (x3)"
    )
    assert text.splitlines()[6:8] == [
        "explain team/big (as allocate decided it, after the cycle's earlier placements):",
        "  queue: queue default has no room left for this pod (proportion: allocated cpu 0 +"
        " this pod's cpu 8 exceed its deserved share (cpu 4))",
    ]
    assert "Insufficient cpu" in text.splitlines()[9]


def test_explain_of_a_pod_waiting_for_its_victims_shows_the_message_its_condition_gets() -> None:
    """A pod nominated to node-b, whose victim there is terminating: the simulated cycle
    pipelines it there, with the message a live scheduler writes to its condition."""
    victim = pod("victim", cpu="2", node_name="node-b")
    victim["metadata"]["deletionTimestamp"] = "2026-05-01T11:59:00Z"
    nominee = pod("nominee", cpu="2")
    nominee["status"]["nominatedNodeName"] = "node-b"
    cluster = [node("node-a", cpu="1"), node("node-b", cpu="2"), victim, nominee]
    source = FakeSource(cluster, gets={"/api/v1/namespaces/team/pods/nominee": nominee})

    report = run_explain(source, "team/nominee")

    message = (
        "Pod team/nominee can possibly be assigned to node-b, once resource is released and"
        " minAvailable is satisfied"
    )
    assert report["simulated"] == {
        "bind": None,
        "pipelined": "node-b",
        "waiting": message,
        "unschedulable": None,
    }
    text = explain.render_table(report, NOW).splitlines()
    assert f"  simulated:  pipelined on node-b: {message}" in text


def test_a_bound_pod_gets_no_node_table_that_would_count_it_against_its_own_node() -> None:
    train = pod("train-0", node_name="node-a", group="train")
    source = FakeSource(CLUSTER, gets={"/api/v1/namespaces/team/pods/train-0": train})

    report = run_explain(source, "team/train-0")
    text = explain.render_table(report, NOW)

    assert report["live"]["node"] == "node-a"
    assert "  simulated:  nothing to decide (the pod has a node)" in text.splitlines()
    assert text.splitlines()[-1] == (
        "explain team/train-0: no node table: the pod is bound to node-a, so the cycle sees every"
        " node with it already placed (its own node counting it)"
    )
    assert "NODE" not in text


@pytest.mark.parametrize(
    ("pod", "namespace", "key"),
    [
        ("big", "team", "team/big"),
        ("team/big", None, "team/big"),
        ("team/big", "other", "team/big"),
        ("big", None, "big"),
    ],
)
def test_a_pod_is_named_namespace_slash_name_or_name_with_dash_n(
    pod: str, namespace: str | None, key: str
) -> None:
    assert explain.pod_key(pod, namespace) == key


def test_explaining_a_missing_pod_or_another_schedulers_pod_says_what_to_do() -> None:
    with pytest.raises(InputError, match=r"^explain: pod team/nobody not found$"):
        run_explain(explain_source(), "team/nobody")
    with pytest.raises(
        InputError,
        match=r"^explain: give the pod as NAMESPACE/NAME \(or NAME with -n NAMESPACE\), got 'big'$",
    ):
        run_explain(explain_source(), "big")
    with pytest.raises(InputError) as caught:
        run_explain(explain_source(), scheduler="volcano")
    assert str(caught.value) == (
        "explain: pod team/big has spec.schedulerName 'vscheduler', not 'volcano': give "
        "--scheduler-name vscheduler to see what this scheduler would do with it"
    )


@pytest.mark.parametrize(
    ("stamp", "age"),
    [
        ("2026-05-01T11:59:15Z", "45s"),
        ("2026-05-01T11:30:00Z", "30m"),
        ("2026-05-01T02:00:00Z", "10h"),
        ("2026-04-20T12:00:00Z", "11d"),
        ("not a time", "?"),
    ],
)
def test_event_ages_are_printed_as_kubectl_prints_them(stamp: str, age: str) -> None:
    assert explain.age_of(stamp, NOW) == age


# --- queues ------------------------------------------------------------------------------------
def test_queues_show_the_proportion_figures_and_podgroups_by_phase() -> None:
    snap = build_snapshot(snapshot.sourced(CLUSTER), taken_at=NOW)
    rows = queues.queue_rows(snap, catalog.load_pipeline(None), clock=FixedClock(NOW))
    by_name = {r["name"]: r for r in rows}
    assert list(by_name) == ["default", "research"]
    research = by_name["research"]
    assert research["weight"] == 3
    assert research["guarantee"] == {"cpu": "1"}
    assert research["capability"] == {"cpu": "4"}
    assert research["allocated"] == {"cpu": "2", "memory": "2Gi"}
    assert research["jobs"] == {
        "pending": 1,
        "inqueue": 0,
        "running": 1,
        "unknown": 0,
        "completed": 0,
    }
    assert queues.render(rows, "table").splitlines()[0].split() == [
        "NAME",
        "WEIGHT",
        "STATE",
        "INQUEUE",
        "PENDING",
        "RUNNING",
        "DESERVED",
        "ALLOCATED",
        "GUARANTEE",
        "CAPABILITY",
    ]
    assert queues.render(rows, "wide").splitlines()[0].split()[-5:] == [
        "UNKNOWN",
        "COMPLETED",
        "REQUEST",
        "SHARE",
        "OVERUSED",
    ]
    assert json.loads(queues.render(rows, "json")) == {"queues": rows}
    assert yaml.safe_load(queues.render(rows, "yaml")) == {"queues": rows}


def test_without_a_queue_plugin_the_figures_are_dashes() -> None:
    snap = build_snapshot(snapshot.sourced(CLUSTER), taken_at=NOW)
    policy = "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n"
    rows = queues.queue_rows(snap, catalog.load_pipeline(policy), clock=FixedClock(NOW))
    line = queues.render(rows, "table").splitlines()[2].split()
    assert line == ["research", "3", "Open", "0", "1", "1", "-", "-", "cpu=1", "cpu=4"]


# --- compare-decisions -------------------------------------------------------------------------
def decisions_file(tmp_path: Path, *lines: dict[str, Any]) -> str:
    path = tmp_path / "decisions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_compare_decisions_takes_each_pods_last_decision_and_says_where_it_went(
    tmp_path: Path,
) -> None:
    path = decisions_file(
        tmp_path,
        {
            "cycle": 1,
            "binds": {"team/a": "node-a", "team/b": "node-a"},
            "pending": {"team/c": "no"},
        },
        {
            "cycle": 2,
            "binds": {"team/b": "node-b", "team/d": "node-a", "team/gone": "node-a"},
            "pending": {"team/e": "no room"},
            "evictions": [
                {"pod": "team/low", "node": "node-b", "reason": "preempted"},
                {"pod": "team/old", "node": "node-b", "reason": "preempted"},
            ],
        },
    )
    live = [
        pod("a", node_name="node-a", scheduler="volcano"),
        pod("b", node_name="node-a", scheduler="volcano"),
        pod("c", node_name="node-b", scheduler="volcano"),
        pod("d", scheduler="volcano"),
        pod("e", scheduler="volcano"),
        pod("low", node_name="node-b", scheduler="volcano"),
    ]
    rows = compare.compare(compare.read_decisions(path), live)
    assert [(r["pod"], r["vscheduler"], r["actual"], r["result"]) for r in rows] == [
        ("team/a", "node-a", "node-a", "same"),
        ("team/b", "node-b", "node-a", "different"),
        ("team/c", "", "node-b", "only live"),
        ("team/d", "node-a", "", "not bound"),
        ("team/e", "", "", "pending"),
        ("team/gone", "node-a", "", "gone"),
        ("team/low", "", "node-b", "kept"),
        ("team/old", "", "", "evicted"),
    ]
    text = compare.render(rows, "table")
    assert text.splitlines()[0].split() == ["POD", "VSCHEDULER", "ACTUAL", "SCHEDULER", "RESULT"]
    assert text.splitlines()[-1] == (
        "8 pods: 1 same, 1 different, 1 not bound, 1 only live, 1 pending, 1 gone, 1 evicted, "
        "1 kept"
    )
    assert text.splitlines()[7].split() == [
        "team/low",
        "evict",
        "from",
        "node-b",
        "node-b",
        "volcano",
        "kept",
    ]
    assert json.loads(compare.render(rows, "json"))["counts"]["same"] == 1


def test_a_decisions_file_that_is_not_one_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"cycle": 1, "binds": {}}\nnot json\n')
    with pytest.raises(InputError, match=rf"^{path}:2: not a JSON line: "):
        compare.read_decisions(str(path))
    path.write_text('{"cycle": 1}\n')
    with pytest.raises(
        InputError, match=rf"^{path}:1: not a decisions line \(no `binds` object\)$"
    ):
        compare.read_decisions(str(path))
    with pytest.raises(InputError, match=r"absent.jsonl: cannot read: No such file or directory$"):
        compare.read_decisions(str(tmp_path / "absent.jsonl"))
