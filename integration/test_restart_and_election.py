"""Restarts and leader election of `vscheduler run`, on a real API server.

- A scheduler killed (SIGKILL) or stopped (SIGTERM) mid-stream and started again binds every pod
  exactly once. Proof: each pod has one nodeName; no pod has two `bound` log lines across both
  processes, nor two `Scheduled` Events from us; the restarted one never even tries to bind a
  pod that is bound already (no `dropped` bind in its log); and the API server itself answers
  a second Binding of a bound pod with 409.
- Two replicas electing on a Lease: only the leader binds (Events' reportingInstance, log
  lines, the Lease holder), /readyz is 503 "not leading" on the standby; when the leader is
  killed the standby takes over within 20 s with the default timings (15/10/2); when it is
  stopped with SIGTERM it releases the Lease and the standby takes over at once; a leader
  frozen past its lease sends no bind after it resumes.

The measured takeover times are printed (shown even without `-s`).
"""

from __future__ import annotations

import collections
import concurrent.futures
import datetime as dt
import json
import os
import re
import signal
import time
from collections.abc import Callable
from typing import Any

import pytest

from integration import harness
from integration.controlplane import ApiError

StartScheduler = Callable[..., harness.Scheduler]

JSON_LOGS = ["--log-format=json"]
SLOW_BINDS = ["--kube-api-qps=25", "--kube-api-burst=5", *JSON_LOGS]
"""A client slow enough (25 requests/s: a bind and an Event per pod) to stop it part-way."""
BIND_WORKERS = 16
"""`vscheduler run`'s default --bind-workers: at most this many binds are in flight."""
LEASE = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/vscheduler"
BOUND = re.compile(r"^bound (?P<pod>\S+) to (?P<node>\S+)$")
BIND_ATTEMPT = re.compile(r"^bind (?P<pod>\S+) to (?P<node>\S+) (dropped|failed)")


# --- reading what happened ----------------------------------------------------------------------
def records(scheduler: harness.Scheduler, *, after: int = 0) -> list[dict[str, Any]]:
    """The JSON log records of a scheduler (from byte offset `after` on)."""
    with scheduler.log_path.open("rb") as f:
        f.seek(after)
        text = f.read().decode("utf-8", "replace")
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a line cut by SIGKILL
    return out


def bound_lines(scheduler: harness.Scheduler, *, after: int = 0) -> list[tuple[str, str]]:
    """(pod name, node) for each `bound <ns>/<pod> to <node>` line the scheduler logged."""
    found = []
    for record in records(scheduler, after=after):
        match = BOUND.match(str(record.get("message", "")))
        if match:
            found.append((match["pod"].rpartition("/")[2], match["node"]))
    return found


def is_bind(record: dict[str, Any]) -> bool:
    """A log record of a bind that was sent (whatever the API server answered)."""
    message = str(record.get("message", ""))
    return bool(BOUND.match(message) or BIND_ATTEMPT.match(message))


def failed_binds(scheduler: harness.Scheduler, *, after: int = 0) -> list[str]:
    """The messages of binds the scheduler attempted and the API server refused (or failed);
    binds dropped before sending because the replica no longer leads are not attempts."""
    return [
        str(r["message"])
        for r in records(scheduler, after=after)
        if BIND_ATTEMPT.match(str(r.get("message", "")))
        and "no longer leads" not in str(r.get("message", ""))
    ]


def scheduled_events(cluster: harness.ScopedCluster, component: str) -> list[dict[str, Any]]:
    """The `Scheduled` Events about pods of the test's namespace reported by `component`."""
    return [
        e
        for e in harness.events(cluster, cluster.namespace)
        if e.get("reason") == "Scheduled"
        and e.get("involvedObject", {}).get("kind") == "Pod"
        and e.get("source", {}).get("component") == component
    ]


def lease(cluster: harness.ScopedCluster) -> dict[str, Any]:
    """The scheduler's leader-election Lease."""
    found: dict[str, Any] = cluster.request("GET", LEASE.format(namespace=cluster.lease_namespace))
    return found


def holder(cluster: harness.ScopedCluster) -> str:
    """Who holds the Lease ("" when released)."""
    return str(lease(cluster).get("spec", {}).get("holderIdentity") or "")


def when(record: dict[str, Any]) -> dt.datetime:
    """When a log record was made."""
    return dt.datetime.fromisoformat(str(record["time"]))


def report(capsys: pytest.CaptureFixture[str], line: str) -> None:
    """Print a measurement so that it shows in a plain pytest run."""
    with capsys.disabled():
        print(f"\n[measured] {line}")


# --- making the workload ------------------------------------------------------------------------
def add_nodes(cluster: harness.ScopedCluster, count: int) -> list[str]:
    """`count` roomy fake nodes."""
    names = [f"node-{i}" for i in range(count)]
    for name in names:
        cluster.add_node(name, cpu="16", memory="64Gi", pods=110)
    return names


def create_all(cluster: harness.ScopedCluster, objects: list[dict[str, Any]]) -> None:
    """POST many objects, a few at a time."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(lambda obj: harness.create(cluster, obj), objects))


def small_pods(cluster: harness.ScopedCluster, prefix: str, count: int) -> list[str]:
    """`count` plain pods of 100m/64Mi for the scheduler under test."""
    names = [f"{prefix}-{i:03d}" for i in range(count)]
    ns = cluster.namespace
    create_all(cluster, [harness.pod(n, ns, cpu="100m", memory="64Mi") for n in names])
    return names


def gangs(cluster: harness.ScopedCluster, count: int, size: int) -> dict[str, list[str]]:
    """`count` PodGroups of `size` pods each (minMember = size): group -> pod names."""
    ns = cluster.namespace
    members: dict[str, list[str]] = {}
    for g in range(count):
        group = f"gang-{g}"
        harness.create(cluster, harness.podgroup(group, ns, min_member=size))
        members[group] = [f"{group}-{i}" for i in range(size)]
    create_all(
        cluster,
        [
            harness.pod(name, ns, cpu="100m", memory="64Mi", group=group)
            for group, names in members.items()
            for name in names
        ],
    )
    return members


def bound_now(cluster: harness.ScopedCluster) -> dict[str, str]:
    """pod -> node for the bound pods of the test's namespace."""
    return harness.bound(cluster, cluster.namespace)


def wait_bound(
    cluster: harness.ScopedCluster, names: list[str], scheduler: harness.Scheduler, timeout: float
) -> dict[str, str]:
    """Until every pod of `names` is bound (the scheduler must stay alive meanwhile)."""
    wanted = set(names)

    def done() -> dict[str, str] | None:
        scheduler.alive()
        placed = bound_now(cluster)
        return placed if wanted <= set(placed) else None

    try:
        return harness.wait_for(f"{len(names)} pods bound", done, timeout)
    except AssertionError as exc:
        missing = sorted(wanted - set(bound_now(cluster)))
        raise AssertionError(f"{exc}; unbound: {missing[:20]}\n{scheduler.log(40)}") from None


# --- exactly once ------------------------------------------------------------------------------
def assert_bound_exactly_once(
    cluster: harness.ScopedCluster,
    names: list[str],
    nodes: list[str],
    schedulers: dict[str, harness.Scheduler],
) -> dict[str, str]:
    """Every pod of `names` bound to one of `nodes`, once, by one of `schedulers` (identity ->
    process); returns pod -> identity of the replica whose log says it bound it."""
    placed = bound_now(cluster)
    assert set(names) <= set(placed), sorted(set(names) - set(placed))
    assert set(placed.values()) <= set(nodes), harness.dump(placed)

    binder: dict[str, str] = {}
    lines = collections.Counter[str]()
    for identity, scheduler in schedulers.items():
        for pod, node in bound_lines(scheduler):
            lines[pod] += 1
            binder[pod] = identity
            assert placed.get(pod) == node, f"{identity} logged {pod} bound to {node}: {placed}"
    twice = {pod: n for pod, n in lines.items() if n > 1}
    assert not twice, f"pods with more than one successful bind in the logs: {twice}"

    component = cluster.scheduler_name
    events = scheduled_events(cluster, component)
    per_pod = collections.Counter(e["involvedObject"]["name"] for e in events)
    assert max(per_pod.values(), default=0) <= 1, {p: n for p, n in per_pod.items() if n > 1}
    for event in events:
        pod = event["involvedObject"]["name"]
        if pod in binder:
            assert event.get("reportingInstance") == binder[pod], harness.dump(event)
            assert (
                event["message"]
                == f"Successfully assigned {cluster.namespace}/{pod} to " + (placed[pod])
            ), harness.dump(event)

    # The API server is the last line of defence: it refuses to bind a bound pod again.
    some = sorted(placed)[0]
    other = next(n for n in nodes if n != placed[some])
    with pytest.raises(ApiError) as refused:
        cluster.bind_pod(cluster.namespace, some, other)
    assert refused.value.status == 409, refused.value
    assert bound_now(cluster)[some] == placed[some]
    return binder


def wait_events(
    cluster: harness.ScopedCluster,
    scheduler: harness.Scheduler,
    identity: str,
    timeout: float = 30,
) -> None:
    """Until a live scheduler's `Scheduled` Events (posted after each bind) have all landed."""

    def landed() -> bool:
        mine = [
            e
            for e in scheduled_events(cluster, cluster.scheduler_name)
            if e.get("reportingInstance") == identity
        ]
        return len(mine) >= len(bound_lines(scheduler))

    harness.wait_for(f"{identity}'s Scheduled Events", landed, timeout)


# --- restarts -----------------------------------------------------------------------------------
@pytest.mark.timeout(600)
def test_the_scheduler_killed_mid_stream_and_restarted_binds_every_pod_exactly_once(
    cluster: harness.ScopedCluster,
    start_scheduler: StartScheduler,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes = add_nodes(cluster, 8)
    members = gangs(cluster, 4, 5)
    names = small_pods(cluster, "single", 200) + [p for ps in members.values() for p in ps]

    first = start_scheduler(identity="first", args=SLOW_BINDS)
    harness.wait_for(
        "the first scheduler to bind some pods",
        lambda: first.alive() and len(bound_now(cluster)) >= 30,
        180,
    )
    assert first.stop(signal.SIGKILL) == -signal.SIGKILL
    time.sleep(1.0)  # requests the API server had received finish
    before_restart = bound_now(cluster)
    assert 0 < len(before_restart) < len(names), (
        f"the kill was not mid-stream: {len(before_restart)}/{len(names)} bound"
    )

    second = start_scheduler(identity="second", args=JSON_LOGS)
    wait_bound(cluster, names, second, 240)
    wait_events(cluster, second, "second")

    binder = assert_bound_exactly_once(cluster, names, nodes, {"first": first, "second": second})
    by_first = {p for p, who in binder.items() if who == "first"}
    by_second = {p for p, who in binder.items() if who == "second"}
    assert by_first <= set(before_restart)
    assert not by_second & set(before_restart), (
        f"the restarted scheduler bound pods bound before it started: "
        f"{sorted(by_second & set(before_restart))}"
    )
    assert by_second == set(names) - set(before_restart)
    # Pods with no `bound` line were bound by the killed one in its last moment (the call had
    # reached the API server, the log line had not been written): at most one per worker.
    unlogged = set(names) - by_first - by_second
    assert unlogged <= set(before_restart)
    assert len(unlogged) <= BIND_WORKERS, sorted(unlogged)
    assert failed_binds(second) == [], "the restarted scheduler tried to bind bound pods"
    report(
        capsys,
        f"SIGKILL at {len(before_restart)}/{len(names)} bound: {len(by_first)} logged by the "
        f"killed one, {len(unlogged)} bound by it unlogged, {len(by_second)} by the restarted one",
    )
    for group, pods in members.items():
        assert set(pods) <= set(bound_now(cluster)), group


@pytest.mark.timeout(600)
def test_the_scheduler_stopped_by_sigterm_drains_its_binds_exits_0_and_a_restart_binds_the_rest(
    cluster: harness.ScopedCluster,
    start_scheduler: StartScheduler,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes = add_nodes(cluster, 4)
    names = small_pods(cluster, "early", 60)
    first = start_scheduler(
        identity="first", args=["--kube-api-qps=20", "--kube-api-burst=5", *JSON_LOGS]
    )
    harness.wait_for(
        "the first scheduler to bind some pods",
        lambda: first.alive() and len(bound_now(cluster)) >= 5,
        180,
    )
    at_signal = bound_now(cluster)
    signalled = time.monotonic()
    code = first.stop(signal.SIGTERM, timeout=60)
    stopping_s = time.monotonic() - signalled
    after_exit = bound_now(cluster)
    log = first.log(200)
    report(
        capsys,
        f"SIGTERM with {len(names) - len(at_signal)} binds pending: exit {code} after "
        f"{stopping_s:.1f}s, {len(after_exit) - len(at_signal)} binds completed meanwhile",
    )
    assert code == 0, log
    assert "signal 15: stopping" in log, log
    # In-flight binds drained: binds it had started went on to completion after the signal,
    # within the drain timeout, and every pod bound is one it logged as bound (no call was cut
    # off half-way, none failed).
    assert len(after_exit) > len(at_signal), log
    assert "did not finish within" not in log, log
    assert {p for p, _ in bound_lines(first)} == set(after_exit), log
    assert failed_binds(first) == [], log
    assert stopping_s < 10 + 10, "SIGTERM took longer than the drain timeout (10 s) and slack"

    later = small_pods(cluster, "late", 10)
    second = start_scheduler(identity="second", args=JSON_LOGS)
    wait_bound(cluster, names + later, second, 180)
    wait_events(cluster, second, "second")
    binder = assert_bound_exactly_once(
        cluster, names + later, nodes, {"first": first, "second": second}
    )
    assert {p for p, who in binder.items() if who == "second"} == set(names + later) - set(
        after_exit
    )
    assert failed_binds(second) == [], "the restarted scheduler tried to bind bound pods"


# --- leader election ----------------------------------------------------------------------------
def two_replicas(
    cluster: harness.ScopedCluster, start_scheduler: StartScheduler, *, leader_args: list[str]
) -> tuple[harness.Scheduler, harness.Scheduler]:
    """replica-a leads (started first, the Lease is free), replica-b is a synced standby."""
    a = start_scheduler(identity="replica-a", leader_elect=True, args=leader_args)
    a.wait_ready(90)
    b = start_scheduler(identity="replica-b", leader_elect=True, args=JSON_LOGS)
    harness.wait_for(
        "replica-b synced and standing by",
        lambda: b.alive() and b.http("/readyz") == (503, "not leading"),
        90,
    )
    assert holder(cluster) == "replica-a"
    assert a.http("/readyz")[0] == 200
    return a, b


def assert_only_a_bound(
    cluster: harness.ScopedCluster, a: harness.Scheduler, b: harness.Scheduler, names: list[str]
) -> None:
    """Every pod of `names` was bound by replica-a, none by replica-b."""
    # The API server shows a pod bound before the binding thread logs its answer: wait for the
    # log lines (a busy machine can hold them back for a moment), then for the Events.
    harness.wait_for(
        "replica-a to log every bind",
        lambda: {p for p, _ in bound_lines(a)} >= set(names),
        30,
    )
    wait_events(cluster, a, "replica-a")
    assert {p for p, _ in bound_lines(a)} >= set(names), a.log()
    assert bound_lines(b) == [], b.log()
    assert failed_binds(b) == [], b.log()
    events = scheduled_events(cluster, cluster.scheduler_name)
    assert {e["involvedObject"]["name"] for e in events} >= set(names)
    assert {e.get("reportingInstance") for e in events} == {"replica-a"}, harness.dump(events)


def wait_takeover(
    cluster: harness.ScopedCluster,
    b: harness.Scheduler,
    names: list[str],
    since: float,
    timeout: float,
) -> tuple[float, float]:
    """Until replica-b has bound every pod of `names`: (seconds since `since` until its /readyz
    turned 200, seconds until the last pod was bound)."""
    ready_at: float | None = None
    deadline = since + timeout
    while True:
        b.alive()
        now = time.monotonic()
        if ready_at is None and b.http("/readyz")[0] == 200:
            ready_at = now - since
        if set(names) <= set(bound_now(cluster)):
            return (ready_at if ready_at is not None else now - since), now - since
        if now > deadline:
            raise AssertionError(
                f"replica-b did not bind the new pods within {timeout:.0f}s; lease: "
                f"{harness.dump(lease(cluster))}\n{b.log(40)}"
            )
        time.sleep(0.1)


@pytest.mark.timeout(600)
def test_two_replicas_only_the_leader_binds_and_the_standby_takes_over_within_20s_of_a_sigkill(
    cluster: harness.ScopedCluster,
    start_scheduler: StartScheduler,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes = add_nodes(cluster, 4)
    a, b = two_replicas(cluster, start_scheduler, leader_args=JSON_LOGS)
    before = small_pods(cluster, "before", 20)
    wait_bound(cluster, before, a, 120)
    assert_only_a_bound(cluster, a, b, before)
    assert b.http("/readyz") == (503, "not leading")
    transitions = lease(cluster)["spec"].get("leaseTransitions", 0)

    assert a.stop(signal.SIGKILL) == -signal.SIGKILL
    killed = time.monotonic()
    after = small_pods(cluster, "after", 10)
    ready_s, bound_s = wait_takeover(cluster, b, after, killed, 60)
    report(
        capsys,
        f"takeover after SIGKILL of the leader (lease 15s/renew 10s/retry 2s): standby ready "
        f"{ready_s:.1f}s, all new pods bound {bound_s:.1f}s after the kill",
    )
    assert bound_s < 20, f"the standby took {bound_s:.1f}s to bind new pods after the kill"

    assert holder(cluster) == "replica-b"
    assert lease(cluster)["spec"].get("leaseTransitions", 0) == transitions + 1
    wait_events(cluster, b, "replica-b")
    assert {p for p, _ in bound_lines(b)} == set(after), b.log()
    binder = assert_bound_exactly_once(
        cluster, before + after, nodes, {"replica-a": a, "replica-b": b}
    )
    assert {p for p, who in binder.items() if who == "replica-b"} == set(after)
    assert b.http("/readyz") == (200, "ok")


@pytest.mark.timeout(600)
def test_a_leader_stopped_by_sigterm_releases_the_lease_and_the_standby_takes_over_at_once(
    cluster: harness.ScopedCluster,
    start_scheduler: StartScheduler,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes = add_nodes(cluster, 4)
    a, b = two_replicas(cluster, start_scheduler, leader_args=JSON_LOGS)
    before = small_pods(cluster, "before", 5)
    wait_bound(cluster, before, a, 120)
    assert_only_a_bound(cluster, a, b, before)

    signalled = time.monotonic()
    assert a.stop(signal.SIGTERM, timeout=60) == 0, a.log()
    assert any("released" in str(r.get("message")) for r in records(a)), a.log()
    assert holder(cluster) in ("", "replica-b"), harness.dump(lease(cluster))
    after = small_pods(cluster, "after", 10)
    ready_s, bound_s = wait_takeover(cluster, b, after, signalled, 60)
    report(
        capsys,
        f"takeover after SIGTERM of the leader (lease released): standby ready {ready_s:.1f}s, "
        f"all new pods bound {bound_s:.1f}s after the signal",
    )
    # A released lease is taken at the standby's next retry (2 s), not after the 15-s lease
    # duration that a killed leader's lease needs to expire.
    assert bound_s < 10, f"the standby took {bound_s:.1f}s after the leader released the lease"
    assert holder(cluster) == "replica-b"
    wait_events(cluster, b, "replica-b")
    assert_bound_exactly_once(cluster, before + after, nodes, {"replica-a": a, "replica-b": b})


@pytest.mark.timeout(600)
def test_a_leader_stopped_by_sigterm_mid_stream_sends_no_bind_after_releasing_the_lease(
    cluster: harness.ScopedCluster, start_scheduler: StartScheduler
) -> None:
    nodes = add_nodes(cluster, 4)
    # Two workers on a 5-requests/s client: a backlog that outlasts the 10-s drain, and the
    # lease calls (which share the client) wait behind at most two binds. The drain sends binds
    # before Events, so the backlog is 80 binds: 16 s of binds alone.
    slow = ["--kube-api-qps=5", "--kube-api-burst=1", "--bind-workers=2", *JSON_LOGS]
    a, b = two_replicas(cluster, start_scheduler, leader_args=slow)
    names = small_pods(cluster, "work", 80)
    harness.wait_for(
        "replica-a to bind some pods", lambda: a.alive() and len(bound_now(cluster)) >= 3, 120
    )
    assert a.stop(signal.SIGTERM, timeout=60) == 0, a.log()
    wait_bound(cluster, names, b, 120)
    wait_events(cluster, b, "replica-b")

    released = [when(r) for r in records(a) if " released " in str(r.get("message"))]
    assert released, a.log()
    b_binds = [when(r) for r in records(b) if BOUND.match(str(r.get("message")))]
    assert b_binds, "replica-b bound nothing: replica-a drained every bind before it exited"
    # Draining and handing the lease over must not overlap: once the lease is released, the
    # standby may bind at any moment, so the old leader must have sent its last bind before.
    late = [
        (when(r), str(r["message"])) for r in records(a) if is_bind(r) and when(r) > released[0]
    ]
    assert not late, (
        f"replica-a released the lease at {released[0]:%H:%M:%S.%f} and then sent "
        f"{len(late)} more binds, {sum(t > min(b_binds) for t, _ in late)} of them after "
        f"replica-b's first bind at {min(b_binds):%H:%M:%S.%f}; the last: {late[-1]}"
    )
    assert_bound_exactly_once(cluster, names, nodes, {"replica-a": a, "replica-b": b})


@pytest.mark.timeout(600)
def test_a_leader_frozen_past_its_lease_binds_nothing_after_it_resumes(
    cluster: harness.ScopedCluster, start_scheduler: StartScheduler
) -> None:
    nodes = add_nodes(cluster, 4)
    slow = ["--kube-api-qps=5", "--kube-api-burst=1", *JSON_LOGS]  # long queues of binds
    a = start_scheduler(identity="replica-a", leader_elect=True, args=slow)
    a.wait_ready(90)
    b = start_scheduler(identity="replica-b", leader_elect=True, args=slow)
    harness.wait_for(
        "replica-b synced and standing by",
        lambda: b.alive() and b.http("/readyz") == (503, "not leading"),
        90,
    )
    names = small_pods(cluster, "work", 40)
    harness.wait_for(
        "replica-a to bind some pods", lambda: a.alive() and len(bound_now(cluster)) >= 3, 120
    )
    os.kill(a.proc.pid, signal.SIGSTOP)  # a leader cut off: a long GC pause, a frozen VM...
    try:
        offset = a.log_path.stat().st_size
        assert len(bound_now(cluster)) < len(names), "replica-a had no binds queued"
        harness.wait_for("replica-b to take the lease", lambda: holder(cluster) == "replica-b", 60)
        at_takeover = set(bound_now(cluster))
    finally:
        os.kill(a.proc.pid, signal.SIGCONT)
    # replica-a wakes up past its renew deadline, with binds still queued: it must drop them.
    wait_bound(cluster, names, b, 120)
    harness.wait_for(
        "replica-a to notice it lost the lease",
        lambda: a.alive() and a.http("/readyz") == (503, "not leading"),
        30,
    )
    # Binds whose request was sent before the freeze may be logged after it; any other bind
    # (or attempt) it logs after resuming was sent while replica-b held the lease.
    late = [p for p, _ in bound_lines(a, after=offset) if p not in at_takeover]
    refused = failed_binds(a, after=offset)
    assert not late + refused, (
        f"after replica-b took the lease, replica-a bound {len(late)} pods ({sorted(late)[:5]}"
        f"...) and sent {len(refused)} binds refused because replica-b had bound those pods "
        f"(e.g. {refused[:1]})"
    )
    assert holder(cluster) == "replica-b"
    wait_events(cluster, b, "replica-b")
    assert_bound_exactly_once(cluster, names, nodes, {"replica-a": a, "replica-b": b})
