"""`vscheduler compare-decisions FILE`: where a dry run would have put each pod, against where
it actually landed.

Reads a decisions file of `vscheduler run --dry-run` (`runtime.decisions`) and the cluster's
pods now. Per pod, the dry run's last word counts (a pod decided in several cycles, as a dry run
decides a pod again until another scheduler binds it, keeps its latest decision): a node it
would bind the pod to, the message it would leave the pod pending with, or an eviction. Against
the pod's `spec.nodeName` now, each pod is one of:

    same         bound where the dry run would have bound it
    different    bound to another node
    not bound    the dry run would bind it, it is still pending
    only live    the dry run left it pending, it was bound
    pending      pending in both
    gone         the pod no longer exists
    evicted      the dry run would evict it from its node; it is gone from there too
    kept         the dry run would evict it from its node; it still runs there

Owns: the comparison and its rendering.
Must not: write to the cluster.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from vscheduler.errors import InputError
from vscheduler.informer.ports import Raw

Json = dict[str, object]
RESULTS: Final = (
    "same",
    "different",
    "not bound",
    "only live",
    "pending",
    "gone",
    "evicted",
    "kept",
)


def read_decisions(path: str) -> dict[str, tuple[str, str]]:
    """Per pod, the dry run's last decision: ("bind", node), ("pending", message) or
    ("evict", node)."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.readlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    decided: dict[str, tuple[str, str]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except ValueError as exc:
            raise InputError(f"{path}:{number}: not a JSON line: {exc}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("binds"), dict):
            raise InputError(f"{path}:{number}: not a decisions line (no `binds` object)")
        pending = doc.get("pending")
        for pod, message in (pending if isinstance(pending, dict) else {}).items():
            decided[str(pod)] = ("pending", str(message))
        for pod, node in doc["binds"].items():
            decided[str(pod)] = ("bind", str(node))
        evictions = doc.get("evictions")
        for evict in evictions if isinstance(evictions, list) else ():
            if isinstance(evict, dict) and "pod" in evict:
                decided[str(evict["pod"])] = ("evict", str(evict.get("node", "")))
    return decided


def compare(decided: Mapping[str, tuple[str, str]], pods: Iterable[Raw]) -> list[Json]:
    """One row per decided pod, by namespace/name."""
    live: dict[str, tuple[str, str]] = {}
    for pod in pods:
        meta, spec = pod.get("metadata"), pod.get("spec")
        meta = meta if isinstance(meta, dict) else {}
        spec = spec if isinstance(spec, dict) else {}
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        live[key] = (str(spec.get("nodeName") or ""), str(spec.get("schedulerName") or ""))
    rows: list[Json] = []
    for key in sorted(decided):
        what, detail = decided[key]
        would = detail if what == "bind" else ""
        node, scheduler = live.get(key, ("", ""))
        if what == "evict":
            result = "kept" if key in live and node == detail else "evicted"
        else:
            result = _result(would, node, key in live)
        rows.append(
            {
                "pod": key,
                "vscheduler": would,
                "evictFrom": detail if what == "evict" else "",
                "message": detail if what == "pending" else "",
                "actual": node,
                "schedulerName": scheduler,
                "result": result,
            }
        )
    return rows


def _would(row: Json) -> str:
    if row["evictFrom"]:
        return f"evict from {row['evictFrom']}"
    return str(row["vscheduler"]) or "(pending)"


def _result(would: str, node: str, exists: bool) -> str:
    if not exists:
        return "gone"
    if would and node:
        return "same" if would == node else "different"
    if would:
        return "not bound"
    return "only live" if node else "pending"


def render(rows: Sequence[Json], fmt: str) -> str:
    """`table` (with the counts) or `json`."""
    counts = Counter(str(r["result"]) for r in rows)
    summary = {name: counts.get(name, 0) for name in RESULTS}
    if fmt == "json":
        return json.dumps({"pods": list(rows), "counts": summary}, indent=2) + "\n"
    header = ("POD", "VSCHEDULER", "ACTUAL", "SCHEDULER", "RESULT")
    table = [header] + [
        (
            str(r["pod"]),
            _would(r),
            str(r["actual"]) or "(pending)",
            str(r["schedulerName"]) or "-",
            str(r["result"]),
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    text = "".join(
        "   ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() + "\n"
        for line in table
    )
    parts = ", ".join(f"{n} {name}" for name, n in summary.items() if n)
    return text + f"{len(rows)} pods: {parts or 'none decided'}\n"
