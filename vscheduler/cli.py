"""The command line: `vscheduler simulate`, `vscheduler validate-config`, `vscheduler version`.

Parses arguments, calls one function, prints, and maps errors to exit codes: 0 success, 1 the
input (snapshot, policy, arguments) is wrong, with a message naming the file, object and field.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from vscheduler import __version__, builtins, simulate
from vscheduler.errors import PolicyError, VSchedulerError
from vscheduler.model.cluster import DEFAULT_SCHEDULER_NAME


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vscheduler", description="A Volcano-compatible batch scheduler for Kubernetes."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sim = sub.add_parser("simulate", help="run the scheduler on snapshot files and report")
    sim.add_argument(
        "snapshots",
        nargs="+",
        metavar="SNAPSHOT",
        help="YAML/JSON files or folders of Kubernetes objects",
    )
    sim.add_argument("--config", metavar="POLICY", help="scheduler policy (default: built-in)")
    sim.add_argument("--cycles", type=int, default=1, metavar="N", help="cycles to run (1)")
    sim.add_argument("--now", metavar="RFC3339", help="the wall clock for time-aware plugins")
    sim.add_argument(
        "--explain",
        action="append",
        default=[],
        metavar="NS/POD",
        help="explain every node's filter and scores for this pod (repeatable)",
    )
    sim.add_argument("--output", "-o", choices=("json", "yaml", "table"), default="table")
    sim.add_argument("--scheduler-name", default=DEFAULT_SCHEDULER_NAME)
    sim.add_argument(
        "--no-timings",
        action="store_true",
        help="report cycleSeconds as 0 so the output is byte-identical run to run",
    )
    val = sub.add_parser("validate-config", help="check a scheduler policy file")
    val.add_argument("file", metavar="FILE")
    sub.add_parser("version", help="print the version")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "simulate":
            return _simulate(args)
        if args.command == "validate-config":
            return _validate(args.file)
        print(__version__)
        return 0
    except VSchedulerError as exc:
        _error(exc)
        return 1
    except BrokenPipeError:  # `vscheduler ... | head`: the reader left; not an error of ours
        sys.stderr.close()
        return 0


def _simulate(args: argparse.Namespace) -> int:
    if args.cycles < 1:
        print("vscheduler: --cycles must be at least 1", file=sys.stderr)
        return 1
    request = simulate.Request(
        snapshots=args.snapshots,
        policy_file=args.config,
        cycles=args.cycles,
        now=simulate.parse_now(args.now) if args.now else None,
        explain=args.explain,
        scheduler_name=args.scheduler_name,
        timings=not args.no_timings,
        warn=lambda message: print(f"vscheduler: warning: {message}", file=sys.stderr),
    )
    sys.stdout.write(simulate.render(simulate.simulate(request), args.output))
    return 0


def _validate(path: str) -> int:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        print(f"{path}: cannot read: {exc.strerror}", file=sys.stderr)
        return 1
    try:
        builtins.load_pipeline(text, source=path)
    except PolicyError as exc:
        _policy_errors(exc, sys.stdout)
        return 1
    print(f"{path}: OK")
    return 0


def _policy_errors(exc: PolicyError, stream: TextIO) -> None:
    print(f"{exc.source}: {len(exc.errors)} error(s):", file=stream)
    for line in exc.errors:
        print(f"  {line}", file=stream)


def _error(exc: VSchedulerError) -> None:
    if isinstance(exc, PolicyError):
        _policy_errors(exc, sys.stderr)
        return
    print(f"vscheduler: {exc}", file=sys.stderr)
