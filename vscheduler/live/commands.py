"""The live tools' commands: connect read-only, read, compute, print.

`cli` parses the arguments and calls one of these with them (this module loads the kubernetes
client, so `cli` imports it only when a live tool runs). Each returns the exit code.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Callable

import yaml

from vscheduler import catalog
from vscheduler.clock import Clock, FixedClock, SystemClock
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.informer.kinds import POD
from vscheduler.live import compare, explain, queues, snapshot
from vscheduler.live.source import KubeSource, connect_read_only, policy_text
from vscheduler.simulate import snapshot_warnings

Warn = Callable[[str], None]


def _source(args: argparse.Namespace, tool: str, clock: Clock) -> KubeSource:
    return connect_read_only(args.kubeconfig, clock=clock, tool=tool)


def _policy(args: argparse.Namespace, source: KubeSource) -> tuple[str | None, str]:
    return policy_text(
        source, file=args.config or "", configmap=args.policy_configmap, key=args.policy_key
    )


def run_snapshot(args: argparse.Namespace, warn: Warn) -> int:
    """`vscheduler snapshot [-o FILE]`."""
    source = _source(args, "snapshot", SystemClock())
    try:
        text, where = _policy(args, source)
        objects = snapshot.take(source, catalog.load_pipeline(text, source=where), warn=warn)
    finally:
        source.close()
    fmt = "json" if args.output.endswith(".json") else "yaml"
    rendered = snapshot.render(objects, fmt)
    if args.output in ("", "-"):
        sys.stdout.write(rendered)
    else:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(rendered)
        sys.stderr.write(f"vscheduler: wrote {len(objects)} objects to {args.output}\n")
    return 0


def run_explain(args: argparse.Namespace, warn: Warn) -> int:
    """`vscheduler explain NAMESPACE/POD`."""
    clock = SystemClock()
    now = clock.now().astimezone(dt.UTC).replace(microsecond=0)
    source = _source(args, "explain", clock)
    try:
        text, where = _policy(args, source)
        report = explain.explain(
            source,
            explain.pod_key(args.pod, args.namespace),
            policy_text=text,
            policy_source=where,
            scheduler_name=args.scheduler_name,
            now=now,
            warn=warn,
        )
    finally:
        source.close()
    sys.stdout.write(_structured(report, args.output) or explain.render_table(report, now))
    return 0


def run_queues(args: argparse.Namespace, warn: Warn) -> int:
    """`vscheduler queues [-o table|wide|json|yaml]`."""
    clock = SystemClock()
    now = clock.now().astimezone(dt.UTC).replace(microsecond=0)
    source = _source(args, "queues", clock)
    try:
        text, where = _policy(args, source)
        pipeline = catalog.load_pipeline(text, source=where)
        objects = snapshot.take(source, pipeline, warn=warn)
    finally:
        source.close()
    snap = build_snapshot(
        snapshot.sourced(objects), scheduler_name=args.scheduler_name, taken_at=now
    )
    for warning in snapshot_warnings(snap):
        warn(warning)
    rows = queues.queue_rows(snap, pipeline, clock=FixedClock(now))
    sys.stdout.write(queues.render(rows, args.output))
    return 0


def run_compare(args: argparse.Namespace, warn: Warn) -> int:
    """`vscheduler compare-decisions FILE...`."""
    decided: dict[str, tuple[str, str]] = {}
    for path in args.files:
        decided.update(compare.read_decisions(path))
    source = _source(args, "compare-decisions", SystemClock())
    try:
        pods = source.list(POD)
    finally:
        source.close()
    sys.stdout.write(compare.render(compare.compare(decided, pods), args.output))
    return 0


def _structured(report: dict[str, object], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report, indent=2) + "\n"
    if fmt == "yaml":
        return str(yaml.safe_dump(report, sort_keys=False, width=120))
    return ""
