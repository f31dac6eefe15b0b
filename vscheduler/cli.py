"""The command line: `vscheduler run`, `simulate`, `validate-config`, `version`, and the
live-cluster tools `snapshot`, `explain`, `queues`, `compare-decisions` (`live.commands`).
`kubectl_main` is the same command line as the kubectl plugin `kubectl vscheduler`.

Parses arguments, calls one function, prints, and maps errors to exit codes: 0 success, 1 the
input (snapshot, policy, a port in use) is wrong, with a message naming the file, object and field,
2 a usage error (one line naming the flag, as argparse words it). No traceback reaches the user
for any input. `run`'s flags live in `runtime.flags`.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from vscheduler import __version__, catalog, simulate
from vscheduler.conf.advice import policy_warnings
from vscheduler.errors import InputError, PolicyError, VSchedulerError
from vscheduler.model.cluster import DEFAULT_SCHEDULER_NAME
from vscheduler.obs.http import ListenError
from vscheduler.runtime import flags
from vscheduler.runtime.policy import read_policy_file
from vscheduler.runtime.settings import DEFAULT_POLICY_KEY, Settings


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line naming the flag (not the whole usage)."""

    def error(self, message: str) -> NoReturn:
        """Print `PROG: error: MESSAGE` and a pointer to --help; exit 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser(prog: str = "vscheduler") -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="A Volcano-compatible batch scheduler for Kubernetes.")
    parser.add_argument("--version", action="version", version=f"vscheduler {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sim = sub.add_parser("simulate", help="run the scheduler on snapshot files and report")
    sim.add_argument(
        "snapshots",
        nargs="+",
        metavar="SNAPSHOT",
        help="YAML/JSON files or folders of Kubernetes objects",
    )
    sim.add_argument(
        "--config", metavar="POLICY", help="scheduler policy file (default: the built-in policy)"
    )
    sim.add_argument(
        "--cycles", type=int, default=1, metavar="N", help="cycles to run (default: 1)"
    )
    sim.add_argument(
        "--now",
        metavar="RFC3339",
        help="the wall clock for time-aware plugins (default: 1970-01-01T00:00:00Z)",
    )
    sim.add_argument(
        "--explain",
        action="append",
        default=[],
        metavar="NS/POD",
        help="explain every node's filter and scores for this pod, repeatable (default: none)",
    )
    sim.add_argument(
        "--output",
        "-o",
        choices=("json", "yaml", "table"),
        default="table",
        help="the report's format (default: table)",
    )
    sim.add_argument(
        "--scheduler-name",
        default=DEFAULT_SCHEDULER_NAME,
        help=f"pods of this spec.schedulerName are scheduled (default: {DEFAULT_SCHEDULER_NAME})",
    )
    sim.add_argument(
        "--no-timings",
        action="store_true",
        help="report cycleSeconds as 0 so the output is byte-identical run to run "
        "(default: timings shown)",
    )
    val = sub.add_parser("validate-config", help="check a scheduler policy file")
    val.add_argument("file", metavar="FILE")
    sub.add_parser("version", help="print the version")
    _run_parser(sub)
    _live_parsers(sub)
    return parser


def _live_flags(
    parser: argparse.ArgumentParser, *, policy: bool = True, scheduler: bool = True
) -> None:
    parser.add_argument(
        "--kubeconfig",
        default="",
        metavar="FILE",
        help="kubeconfig file (default: in-cluster, else $KUBECONFIG or ~/.kube/config)",
    )
    if not policy:
        return
    if scheduler:
        parser.add_argument(
            "--scheduler-name",
            default=DEFAULT_SCHEDULER_NAME,
            help="pods of this spec.schedulerName are scheduled "
            f"(default: {DEFAULT_SCHEDULER_NAME})",
        )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--config", metavar="POLICY", help="scheduler policy file (default: the built-in policy)"
    )
    source.add_argument(
        "--policy-configmap",
        default="",
        metavar="NAMESPACE/NAME",
        help="read the policy from this ConfigMap (default: none, the built-in policy)",
    )
    parser.add_argument(
        "--policy-key",
        default=DEFAULT_POLICY_KEY,
        metavar="KEY",
        help=f"the ConfigMap key holding the policy (default: {DEFAULT_POLICY_KEY})",
    )


def _live_parsers(sub: argparse._SubParsersAction[_Parser]) -> None:
    snap = sub.add_parser(
        "snapshot",
        help="write the live cluster's scheduling objects to one file simulate reads",
        description="List every object the scheduler reads (read-only) into one List: pods of "
        "every scheduler and phase; the policy names the ConfigMaps its plugins read.",
    )
    snap.add_argument(
        "--output",
        "-o",
        default="-",
        metavar="FILE",
        help="write to FILE, JSON when it ends in .json, else YAML (default: -, stdout)",
    )
    _live_flags(snap, scheduler=False)
    exp = sub.add_parser(
        "explain",
        help="why a live pod waits: one simulated cycle with --explain, its condition, Events",
    )
    exp.add_argument(
        "pod", metavar="NAMESPACE/POD", help="the pod to explain (POD alone with --namespace)"
    )
    exp.add_argument(
        "--namespace",
        "-n",
        metavar="NAMESPACE",
        help="the pod's namespace, kubectl's way (default: none: give NAMESPACE/POD)",
    )
    exp.add_argument(
        "--output",
        "-o",
        choices=("table", "json", "yaml"),
        default="table",
        help="the report's format (default: table)",
    )
    _live_flags(exp)
    que = sub.add_parser(
        "queues", help="each queue's weight, deserved, allocated, guarantee and jobs"
    )
    que.add_argument(
        "--output",
        "-o",
        choices=("table", "wide", "json", "yaml"),
        default="table",
        help="the report's format (default: table)",
    )
    _live_flags(que)
    cmp = sub.add_parser(
        "compare-decisions",
        help="a dry run's decisions (run --dry-run --decisions-file) against where pods landed",
    )
    cmp.add_argument(
        "files",
        nargs="+",
        metavar="DECISIONS_FILE",
        help="decisions files of dry runs (one per scheduler name); a pod's last decision counts",
    )
    cmp.add_argument(
        "--output",
        "-o",
        choices=("table", "json"),
        default="table",
        help="the report's format (default: table)",
    )
    _live_flags(cmp, policy=False)


def _run_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    run = sub.add_parser(
        "run",
        usage="vscheduler run [FLAG ...]",
        help="schedule pods in a cluster (the scheduler itself)",
        description="Schedule pods in a cluster. Volcano's and kube-scheduler's flags are "
        "accepted with their syntax (Go durations, bare booleans, -v N); Volcano's flags that "
        "do nothing here say so in a warning.",
    )
    flags.add_run_flags(run)


def _settings(args: argparse.Namespace) -> Settings:
    """The Settings of parsed `run` arguments; UsageError for what argparse cannot check."""
    flags.check(args)
    return flags.settings(args)


_LIVE = ("snapshot", "explain", "queues", "compare-decisions")


def kubectl_main(argv: Sequence[str] | None = None) -> int:
    """The kubectl plugin's entry point (`kubectl vscheduler ...`): the same commands."""
    return main(argv, prog="kubectl vscheduler")


def main(argv: Sequence[str] | None = None, *, prog: str = "vscheduler") -> int:
    """Entry point; returns the exit code (2 for a usage error, as argparse exits)."""
    try:
        args = _parser(prog).parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error argparse already printed
        return exc.code if isinstance(exc.code, int) else 2
    try:
        if args.command == "simulate":
            return _simulate(args)
        if args.command == "validate-config":
            return _validate(args.file)
        if args.command == "run":
            return _run(args)
        if args.command in _LIVE:
            return _live(args)
        print(__version__)
        return 0
    except flags.UsageError as exc:
        print(
            f"vscheduler {args.command}: error: {exc} (see vscheduler {args.command} --help)",
            file=sys.stderr,
        )
        return 2
    except ListenError as exc:
        print(f"vscheduler: --listen-address: {exc}", file=sys.stderr)
        return 1
    except VSchedulerError as exc:
        _error(exc)
        return 1
    except BrokenPipeError:  # `vscheduler ... | head`: the reader left; not an error of ours
        sys.stderr.close()
        return 0


def _run(args: argparse.Namespace) -> int:
    settings = _settings(args)
    for warning in flags.warnings(args):
        _warn(warning)
    collecting = gc.isenabled()
    gc.disable()  # what the imports make lives on: not scanned as it comes (docs/design.md)
    try:
        from vscheduler import app  # the runtime and the kubernetes client load only here
    finally:
        if collecting:
            gc.enable()
    return app.run(settings)


def _live(args: argparse.Namespace) -> int:
    from vscheduler.live import commands  # loads the kubernetes client

    run = {
        "snapshot": commands.run_snapshot,
        "explain": commands.run_explain,
        "queues": commands.run_queues,
        "compare-decisions": commands.run_compare,
    }[args.command]
    return run(args, _warn)


def _warn(message: str) -> None:
    print(f"vscheduler: warning: {message}", file=sys.stderr)


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
        warn=_warn,
    )
    sys.stdout.write(simulate.render(simulate.simulate(request), args.output))
    return 0


def _validate(path: str) -> int:
    try:
        text = read_policy_file(path)
    except InputError as exc:
        print(exc, file=sys.stderr)
        return 1
    try:
        catalog.load_pipeline(text, source=path)
    except PolicyError as exc:
        _policy_errors(exc, sys.stdout)
        return 1
    for warning in policy_warnings(catalog.parse(text, source=path)):
        print(f"{path}: warning: {warning}")
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
