"""`vscheduler explain NAMESPACE/POD`: why a live pod waits, and how the nodes rank for it.

A snapshot of the live cluster (`live.snapshot.take`), one simulated cycle of the policy on it
with `--explain` for the pod (the same code as `vscheduler simulate --explain`, the clock set to
now: the queue's verdict and the node table as the cycle stood when allocate decided the pod),
and beside it what the cluster says: the pod's node, its PodScheduled condition, and its
Events (the last `EVENTS_SHOWN`, oldest first). Nothing is written.

Owns: the report and its table.
Must not: write to the cluster; decide anything itself (`simulate` does).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from vscheduler import catalog, simulate
from vscheduler.errors import InputError
from vscheduler.kube.paths import namespaced_collection, pod_path
from vscheduler.live.snapshot import sourced, take
from vscheduler.live.source import Source

Json = dict[str, object]
EVENTS_SHOWN: Final = 10


def explain(
    source: Source,
    key: str,
    *,
    policy_text: str | None,
    policy_source: str,
    scheduler_name: str,
    now: dt.datetime,
    warn: Callable[[str], None],
) -> Json:
    """The report for pod `key` (`namespace/name`); InputError when it does not exist."""
    namespace, _, name = key.partition("/")
    if not namespace or not name:
        raise InputError(
            f"explain: give the pod as NAMESPACE/NAME (or NAME with -n NAMESPACE), got {key!r}"
        )
    pod = source.get(pod_path(namespace, name))
    if pod is None:
        raise InputError(f"explain: pod {key} not found")
    spec = _dict(pod.get("spec"))
    node = str(spec.get("nodeName") or "")
    pod_scheduler = str(spec.get("schedulerName") or "default-scheduler")
    if not node and pod_scheduler != scheduler_name:
        raise InputError(
            f"explain: pod {key} has spec.schedulerName {pod_scheduler!r}, not "
            f"{scheduler_name!r}: give --scheduler-name {pod_scheduler} to see what this "
            "scheduler would do with it"
        )
    pipeline = catalog.load_pipeline(policy_text, source=policy_source)
    objects = take(source, pipeline, warn=warn)
    out = simulate.simulate(
        simulate.Request(
            snapshots=(),
            objects=sourced(objects),
            policy_text=policy_text,
            policy_source=policy_source,
            explain=(key,),
            now=now,
            scheduler_name=scheduler_name,
            timings=False,
            warn=warn,
        )
    )
    cycle = _dict(_list(out["cycles"])[0])
    return {
        "pod": key,
        "policy": policy_source,
        "live": {
            "node": node,
            "phase": str(_dict(pod.get("status")).get("phase") or ""),
            "schedulerName": pod_scheduler,
            "podScheduled": _condition(pod),
            "events": _events(source, namespace, name),
        },
        "simulated": {
            "bind": _dict(cycle["binds"]).get(key),
            "pipelined": _dict(cycle["pipelined"]).get(key),
            "waiting": _dict(cycle["waiting"]).get(key),
            "unschedulable": _dict(cycle["unschedulable"]).get(key),
        },
        "explain": _dict(out["explain"])[key],
    }


def pod_key(pod: str, namespace: str | None) -> str:
    """The pod as NAMESPACE/NAME: as given, or NAME in `namespace` (kubectl's `-n`)."""
    return f"{namespace}/{pod}" if namespace and "/" not in pod else pod


def _condition(pod: Mapping[str, Any]) -> Json | None:
    for cond in _list(_dict(pod.get("status")).get("conditions")):
        cond = _dict(cond)
        if cond.get("type") == "PodScheduled":
            return {
                "status": str(cond.get("status") or ""),
                "reason": str(cond.get("reason") or ""),
                "message": str(cond.get("message") or ""),
                "lastTransitionTime": str(cond.get("lastTransitionTime") or ""),
            }
    return None


def _events(source: Source, namespace: str, name: str) -> list[Json]:
    path = namespaced_collection("", "v1", "events", namespace)
    selector = f"involvedObject.kind=Pod,involvedObject.name={name}"
    listed = source.get(path, (("fieldSelector", selector),)) or {}
    events = [_event(_dict(e)) for e in _list(listed.get("items"))]
    events.sort(key=lambda e: (str(e["lastTimestamp"]), str(e["reason"])))
    return events[-EVENTS_SHOWN:]


def _event(raw: Mapping[str, Any]) -> Json:
    meta = _dict(raw.get("metadata"))
    when = raw.get("lastTimestamp") or raw.get("eventTime") or meta.get("creationTimestamp")
    source = _dict(raw.get("source")).get("component") or raw.get("reportingComponent") or ""
    return {
        "type": str(raw.get("type") or ""),
        "reason": str(raw.get("reason") or ""),
        "from": str(source),
        "count": int(raw.get("count") or 1),
        "lastTimestamp": str(when or ""),
        "message": str(raw.get("message") or ""),
    }


def render_table(report: Json, now: dt.datetime) -> str:
    """The report for people: the live state, the simulated decision, the node table."""
    live, sim = _dict(report["live"]), _dict(report["simulated"])
    lines = [f"pod {report['pod']} (policy: {report['policy']})"]
    where = f"bound to {live['node']}" if live["node"] else "not bound"
    lines.append(f"  live:       {where}, phase {live['phase']}, scheduler {live['schedulerName']}")
    cond = live["podScheduled"]
    if isinstance(cond, dict):
        text = f"PodScheduled={cond['status']}"
        text += f" {cond['reason']}" if cond["reason"] else ""
        text += f": {cond['message']}" if cond["message"] else ""
        lines.append(f"  condition:  {text}")
    else:
        lines.append("  condition:  no PodScheduled condition")
    if sim["bind"]:
        lines.append(f"  simulated:  would bind to {sim['bind']}")
    elif sim["waiting"]:
        lines.append(f"  simulated:  pipelined on {sim['pipelined']}: {sim['waiting']}")
    elif sim["pipelined"]:
        lines.append(f"  simulated:  pipelined on {sim['pipelined']} (waits for it to free up)")
    elif sim["unschedulable"]:
        lines.append(f"  simulated:  stays pending: {sim['unschedulable']}")
    else:
        lines.append("  simulated:  nothing to decide (the pod has a node)")
    events = _list(live["events"])
    lines.append(f"events ({len(events)}, oldest first):" if events else "events: none")
    for e in events:
        e = _dict(e)
        age = age_of(str(e["lastTimestamp"]), now)
        count = f" (x{e['count']})" if int(e["count"]) > 1 else ""
        lines.append(
            f"  {age:>6}  {e['type']:<8} {e['reason']:<18} {e['from']}: {e['message']}{count}"
        )
    if live["node"]:  # every node would be seen with the pod already on its own
        lines.append(
            f"explain {report['pod']}: no node table: the pod is bound to {live['node']},"
            " so the cycle sees every node with it already placed (its own node counting it)"
        )
    else:
        lines.extend(simulate.explain_lines(str(report["pod"]), report["explain"]))
    return "\n".join(lines) + "\n"


def age_of(timestamp: str, now: dt.datetime) -> str:
    """How long ago `timestamp` (RFC3339) was, as kubectl prints ages: `45s`, `12m`, `5h`, `3d`."""
    try:
        then = dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return "?"
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 3 * 3600:
        return f"{seconds // 60}m"
    if seconds < 48 * 3600:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> Sequence[Any]:
    return value if isinstance(value, list) else []
