"""`vscheduler simulate`: what would this policy do to this cluster?

Reads snapshot files (ordinary Kubernetes objects), runs N cycles of the real scheduler on them
and reports the decisions. Between cycles, bound pods run on their node, evicted pods are gone,
PodGroup phases carry over and, when the policy binds volumes, the binds' volume writes have taken
effect (`cycle.next_snapshot`). `--explain NS/POD` evaluates a pod
against every node as the first cycle stood when allocate decided it (after the placements the
cycle made before it; as the session opened when allocate never reached it): its queue's verdict,
each node's filter result and, for a node that passes every filter, each scoring plugin's
score.

Everything in the output is deterministic for a given input except `stats.cycleSeconds`, the
measured cycle durations; `--no-timings` reports them as 0 for byte-identical output.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable, Sequence

import numpy as np
import yaml

from vscheduler import catalog, cycle
from vscheduler.clock import FixedClock
from vscheduler.convert.files import SourcedObject, load_objects
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.errors import InputError
from vscheduler.framework.placement import RESOURCE_FIT
from vscheduler.framework.results import Code
from vscheduler.framework.session import Session
from vscheduler.framework.state import TaskState
from vscheduler.model.cluster import DEFAULT_SCHEDULER_NAME, ClusterSnapshot
from vscheduler.model.commands import CycleResult, Evict, QueueFigures, ReservationRelease
from vscheduler.model.facts import EPOCH, UNUSUAL_VALUE, FieldWarning, PodGroupCondition
from vscheduler.model.resources import Resources, format_amount
from vscheduler.runtime.policy import read_policy_file
from vscheduler.runtime.watches import config_maps_read

Json = dict[str, object]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """What the user asked for."""

    snapshots: Sequence[str]
    objects: Sequence[SourcedObject] = ()
    """Objects read elsewhere (the live tools' listing), after those of `snapshots`."""
    policy_file: str | None = None
    policy_text: str | None = None
    """The policy itself (read from the cluster), when there is no `policy_file`."""
    policy_source: str = "default policy"
    """Where `policy_text` came from, for its errors."""
    cycles: int = 1
    now: dt.datetime | None = None
    explain: Sequence[str] = ()
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    timings: bool = True
    warn: Callable[[str], None] = lambda _message: None
    """Told of every object's warning (an amount above the scheduler's ceiling, read as the
    ceiling), of every queue's warning (once each: a guarantee the cluster cannot hold, a
    queue tree problem) and of every plugin error a cycle met (the cycle went on without that
    plugin's answer)."""


def parse_now(text: str) -> dt.datetime:
    """An RFC3339 timestamp (`2026-01-01T00:00:00Z`) for `--now`."""
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        msg = f"--now: not an RFC3339 time: {text!r}"
        raise InputError(msg) from None
    if value.tzinfo is None:
        msg = f"--now: the time needs a zone (Z or +hh:mm): {text!r}"
        raise InputError(msg)
    return value.astimezone(dt.UTC)


def simulate(request: Request) -> Json:
    """Run the request; raises InputError / PolicyError on bad input, before doing anything."""
    now = request.now or EPOCH
    snap = build_snapshot(
        [*load_objects(request.snapshots), *request.objects],
        scheduler_name=request.scheduler_name,
        taken_at=now,
    )
    policy_text = request.policy_text
    source = request.policy_source
    if request.policy_file is not None:
        source = request.policy_file
        policy_text = read_policy_file(request.policy_file)
    pipeline = catalog.load_pipeline(policy_text, source=source)
    for warning in snapshot_warnings(snap):
        request.warn(warning)
    for namespace, name in config_maps_read(pipeline):
        book = snap.reservations.get(f"{namespace}/{name}")
        for problem in book.problems if book is not None else ():
            request.warn(f"{problem} (the entry is left out)")
    clock = FixedClock(now)
    explained: Json = {}
    watch = None
    if request.explain:
        session = cycle.open_session(snap, pipeline, clock=clock, uid="explain")
        opened = {key: explain(session, _task(session, key)) for key in request.explain}
        watch = _Explainer(frozenset(request.explain))
        explained = {key: {**opened[key], "queue": "", "decided": False} for key in opened}
    cycles: list[Json] = []
    seconds: list[float] = []
    all_binds: dict[str, str] = {}
    all_evictions: list[str] = []
    all_details: list[Json] = []
    all_released: list[Json] = []
    warned: set[tuple[str, str]] = set()
    carried = None
    for i in range(request.cycles):
        report = cycle.run_cycle(
            snap,
            pipeline,
            clock=clock,
            uid=f"cycle-{i + 1}",
            watch=watch if i == 0 else None,
            carried=carried,
        )
        carried = report.carried
        if watch is not None and i == 0:
            explained = {key: watch.found.get(key, explained[key]) for key in explained}
        for name, figures in sorted(report.result.queues.items()):
            if figures.warning and (name, figures.warning) not in warned:
                warned.add((name, figures.warning))
                request.warn(f"queue {name}: {figures.warning}")
        for error in report.plugin_errors:
            request.warn(f"cycle {i + 1}: plugin {error}")
        for error in report.action_errors:
            request.warn(f"cycle {i + 1}: action {error}")
        cycles.append(cycle_json(report.result))
        seconds.append(round(report.seconds, 6) if request.timings else 0.0)
        all_binds.update({b.pod: b.node for b in report.result.binds})
        all_evictions.extend(e.pod for e in report.result.evictions)
        all_details.extend(eviction_json(e) for e in report.result.evictions)
        all_released.extend(release_json(r) for r in report.result.reservations_released)
        snap = cycle.next_snapshot(
            snap, report.result, now=clock.now(), volume_binding=pipeline.volume_binding
        )
        clock.advance(1.0)
    return {
        "cycles": cycles,
        "binds": all_binds,
        "evictions": all_evictions,
        "evictionDetails": all_details,
        "reservationsReleased": all_released,
        "explain": explained,
        "stats": {"cycleSeconds": seconds, "pods": len(snap.tasks), "nodes": len(snap.nodes)},
    }


def snapshot_warnings(snap: ClusterSnapshot) -> list[str]:
    """Every object's warnings (an amount above the scheduler's ceiling; an unusual value read
    as Volcano reads it), nodes first, then HyperNodes (with what the tree found: a HyperNode
    left out, named with its problem), queues, PodGroups and pods, in the snapshot's order."""
    holders: list[Sequence[FieldWarning]] = [n.warnings for n in snap.nodes]
    tree = snap.topology
    for hypernode in snap.hypernodes:
        held = list(hypernode.warnings)
        held.extend(tree.warnings.get(hypernode.name, ()))
        problem = hypernode.problem or tree.problems.get(hypernode.name, "")
        if problem:
            left_out = problem if problem.endswith("left out") else f"{problem}; it is left out"
            held.append(FieldWarning(UNUSUAL_VALUE, left_out))
        holders.append(held)
    holders.extend(q.warnings for q in snap.queues.values())
    holders.extend(j.warnings for j in snap.jobs.values())
    holders.extend(t.warnings for t in snap.tasks.values())
    return [warning.message for held in holders for warning in held]


def _task(session: Session, key: str) -> TaskState:
    for task in session.tasks.values():
        if task.key == key:
            return task
    msg = f"--explain {key}: no such pod in the snapshot (give it as namespace/name)"
    raise InputError(msg)


def cycle_json(result: CycleResult) -> Json:
    """One cycle's decisions in the documented shape."""
    return {
        "binds": {b.pod: b.node for b in result.binds},
        "evictions": [e.pod for e in result.evictions],
        "evictionDetails": [eviction_json(e) for e in result.evictions],
        "pipelined": dict(result.pipelined),
        "waiting": dict(result.waiting),
        "nominated": dict(result.nominated),
        "podGroups": {
            key: {"phase": s.phase.value, "conditions": [_condition(c) for c in s.conditions]}
            for key, s in result.podgroups.items()
        },
        "unschedulable": dict(result.unschedulable),
        "reservationsReleased": [release_json(r) for r in result.reservations_released],
        "queues": {name: queue_json(q) for name, q in result.queues.items()},
    }


def eviction_json(evict: Evict) -> Json:
    """One eviction with what it is for: pod, node, reason, asking action, choosing strategy."""
    return {
        "pod": evict.pod,
        "node": evict.node,
        "reason": evict.reason,
        "action": evict.action,
        "strategy": evict.strategy,
    }


def release_json(release: ReservationRelease) -> Json:
    """One reservation released: its ConfigMap and key, its pod and node, and why."""
    return {
        "configMap": release.config_map,
        "key": release.key,
        "pod": release.pod,
        "node": release.node,
        "reason": release.reason,
    }


def queue_json(figures: QueueFigures) -> Json:
    """One queue's figures as its queue plugin reported them (amounts as Kubernetes writes
    them; a capability the queue does not have is null)."""
    return {
        "allocated": amounts_json(figures.allocated),
        "request": amounts_json(figures.request),
        "deserved": amounts_json(figures.deserved),
        "inqueue": amounts_json(figures.inqueue),
        "capability": None if figures.capability is None else amounts_json(figures.capability),
        "realCapability": (
            None if figures.real_capability is None else amounts_json(figures.real_capability)
        ),
        "share": figures.share,
        "weight": figures.weight,
        "overused": figures.overused,
    }


def amounts_json(res: Resources) -> Json:
    """`{"cpu": "500m", "memory": "1Gi"}`: the non-zero amounts, by name."""
    return {name: format_amount(name, amount) for name, amount in res.items()}


def _condition(c: PodGroupCondition) -> Json:
    return {
        "type": c.type,
        "status": c.status,
        "reason": c.reason,
        "message": c.message,
        "transitionID": c.transition_id,
        "lastTransitionTime": c.last_transition_time,
    }


class _Explainer:
    """The `--explain` watch: the first time allocate decides a pod asked about, its node table
    and its queue's verdict as they stand then."""

    def __init__(self, keys: frozenset[str]) -> None:
        self.keys = keys
        self.found: Json = {}

    def __call__(self, session: Session, task: TaskState, verdict: str) -> None:
        if task.key in self.keys and task.key not in self.found:
            self.found[task.key] = {**explain(session, task), "queue": verdict, "decided": True}


def explain(session: Session, task: TaskState) -> Json:
    """Every node's filter result for `task`, as the session stands, and the scores of each node
    that passes every filter (None for one that does not)."""
    placer, ledger = session.placer, session.ledger
    pre = session.dispatch.prefilter(task)
    req = ledger.vector(task.resreq)
    future = ledger.future_idle()
    nodes: Json = {}
    for i, name in enumerate(ledger.names):
        status = pre if pre is not None else placer.node_status(task, i)
        if status is None:
            short = [ledger.dims[k] for k in np.flatnonzero(req > future[i])]
            filt: Json = {
                "passed": not short,
                "plugin": "",
                "code": Code.SUCCESS.value,
                "reason": "",
            }
            if short:
                reason = ", ".join(f"Insufficient {d}" for d in short)
                filt = {
                    "passed": False,
                    "plugin": RESOURCE_FIT,
                    "code": Code.UNSCHEDULABLE.value,
                    "reason": reason,
                }
        else:
            filt = {
                "passed": False,
                "plugin": status.plugin,
                "code": status.code.value,
                "reason": status.reason,
            }
        if not filt["passed"]:
            nodes[name] = {"filter": filt, "scores": None, "total": None}
            continue
        node_order, batch = placer.scores(task, i)
        nodes[name] = {
            "filter": filt,
            "scores": {"nodeOrder": node_order, "batchNodeOrder": batch},
            "total": sum(node_order.values()) + sum(batch.values()),
        }
    return {"nodes": nodes}


def render(output: Json, fmt: str) -> str:
    """The output as json, yaml or a table for people."""
    if fmt == "json":
        return json.dumps(output, indent=2) + "\n"
    if fmt == "yaml":
        return str(yaml.safe_dump(output, sort_keys=False, allow_unicode=True, width=120))
    return render_table(output)


def render_table(output: Json) -> str:
    """A readable summary: per cycle the binds, pipelined, evictions, pending pods, PodGroups."""
    lines: list[str] = []
    cycles = output["cycles"]
    stats = output["stats"]
    assert isinstance(cycles, list)
    assert isinstance(stats, dict)
    for n, cycle_output in enumerate(cycles, start=1):
        lines.extend(_cycle_lines(n, cycle_output, stats["cycleSeconds"][n - 1]))
    explained = output["explain"]
    assert isinstance(explained, dict)
    for key, data in explained.items():
        lines.extend(explain_lines(key, data))
    lines.append(f"{stats['nodes']} nodes, {stats['pods']} pods")
    return "\n".join(lines) + "\n"


def _cycle_lines(n: int, cycle: Json, seconds: float) -> list[str]:
    binds, pipelined, pending = cycle["binds"], cycle["pipelined"], cycle["unschedulable"]
    evictions, groups, waiting = cycle["evictionDetails"], cycle["podGroups"], cycle["waiting"]
    assert isinstance(binds, dict)
    assert isinstance(pipelined, dict)
    assert isinstance(waiting, dict)
    assert isinstance(pending, dict)
    assert isinstance(evictions, list)
    assert isinstance(groups, dict)
    lines = [
        f"cycle {n}: {len(binds)} bound, {len(pipelined)} pipelined, {len(evictions)} evicted, "
        f"{len(pending)} pending ({seconds * 1000:.1f} ms)"
    ]
    lines += [f"  bind       {pod} -> {node}" for pod, node in binds.items()]
    lines += [
        f"  pipeline   {pod} -> {node}" + (f": {waiting[pod]}" if pod in waiting else "")
        for pod, node in pipelined.items()
    ]
    lines += [f"  evict      {e['pod']} on {e['node']}: {e['reason']}" for e in evictions]
    lines += [f"  pending    {pod}: {msg}" for pod, msg in pending.items()]
    released = cycle["reservationsReleased"]
    assert isinstance(released, list)
    lines += [
        f"  release    {r['configMap']} {r['key']} ({r['pod']} on {r['node']}): {r['reason']}"
        for r in released
    ]
    for key, group in groups.items():
        conds = "; ".join(
            f"{c['type']}={c['status']}" + (f" ({c['message']})" if c["message"] else "")
            for c in group["conditions"]
        )
        lines.append(f"  podgroup   {key}: {group['phase']}" + (f" [{conds}]" if conds else ""))
    return lines


def explain_lines(key: str, data: object) -> list[str]:
    """The `--explain` report of one pod: when it was evaluated, its queue's verdict, and each
    node's filter verdict, total and scores (none for a node that fails a filter)."""
    assert isinstance(data, dict)
    when = (
        "as allocate decided it, after the cycle's earlier placements"
        if data.get("decided")
        else "as the cycle opened: allocate did not decide it"
    )
    lines = [f"explain {key} ({when}):"]
    if data.get("queue"):
        lines.append(f"  queue: {data['queue']}")
    lines.append(f"  {'NODE':<24} {'FILTER':<40} {'TOTAL':>9}  SCORES")
    for name, node in data["nodes"].items():
        filt = node["filter"]
        verdict = "ok" if filt["passed"] else f"{filt['plugin']}: {filt['reason']}"
        if node["scores"] is None:
            lines.append(f"  {name:<24} {verdict[:40]:<40} {'-':>9}  -")
            continue
        parts = [*node["scores"]["nodeOrder"].items()]
        parts += [(f"{p}(batch)", v) for p, v in node["scores"]["batchNodeOrder"].items()]
        scores = ", ".join(f"{p} {v:g}" for p, v in parts)
        lines.append(f"  {name:<24} {verdict[:40]:<40} {node['total']:>9.2f}  {scores}")
    return lines
