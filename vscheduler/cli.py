"""The command line: `vscheduler run`, `simulate`, `validate-config`, `version`.

Parses arguments, calls one function, prints, and maps errors to exit codes: 0 success, 1 the
input (snapshot, policy, arguments) is wrong, with a message naming the file, object and field.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from vscheduler import __version__, builtins, simulate
from vscheduler.errors import InputError, PolicyError, VSchedulerError
from vscheduler.model.cluster import DEFAULT_SCHEDULER_NAME
from vscheduler.runtime.settings import (
    DEFAULT_POLICY_KEY,
    LeaderElection,
    PolicySource,
    Settings,
)


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
    _run_parser(sub)
    return parser


def _run_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = sub.add_parser("run", help="schedule pods in a cluster (the scheduler itself)")
    d = Settings()
    le = d.leader_election
    run.add_argument(
        "--scheduler-name",
        default=d.scheduler_name,
        help="pods whose spec.schedulerName is this are scheduled (vscheduler)",
    )
    run.add_argument("--kubeconfig", default="", help="kubeconfig file (default: in-cluster)")
    run.add_argument(
        "--policy-configmap",
        default="",
        metavar="NAMESPACE/NAME",
        help="watch the policy in this ConfigMap (hot reload)",
    )
    run.add_argument(
        "--policy-key",
        default=DEFAULT_POLICY_KEY,
        help=f"the ConfigMap key holding the policy ({DEFAULT_POLICY_KEY})",
    )
    run.add_argument(
        "--policy-file", default="", help="read the policy from this file, re-read when it changes"
    )
    run.add_argument(
        "--schedule-period",
        type=float,
        default=d.period,
        metavar="SECONDS",
        help="seconds between cycles when nothing changes (1)",
    )
    run.add_argument("--kube-api-qps", type=float, default=d.qps, help="client QPS (2000)")
    run.add_argument("--kube-api-burst", type=int, default=d.burst, help="client burst (2000)")
    run.add_argument(
        "--bind-workers",
        type=int,
        default=d.bind_workers,
        help="threads carrying out binds, evictions and status writes (16)",
    )
    run.add_argument(
        "--listen-address",
        default=d.listen_address,
        help="address of /metrics, /healthz, /readyz (0.0.0.0:8080)",
    )
    run.add_argument(
        "--unready-after-failed-cycles",
        type=_at_least_one,
        default=d.unready_after_failed_cycles,
        metavar="N",
        help="/readyz answers 503 after N consecutive failed scheduling cycles (3)",
    )
    run.add_argument(
        "--leader-elect",
        default="true",
        choices=("true", "false"),
        help="elect a leader through a Lease before scheduling (true)",
    )
    run.add_argument("--leader-elect-lease-duration", type=float, default=le.lease_duration)
    run.add_argument("--leader-elect-renew-deadline", type=float, default=le.renew_deadline)
    run.add_argument("--leader-elect-retry-period", type=float, default=le.retry_period)
    run.add_argument("--leader-elect-resource-name", default=le.resource_name)
    run.add_argument(
        "--leader-elect-resource-namespace",
        default=os.environ.get("POD_NAMESPACE", le.resource_namespace),
    )
    run.add_argument(
        "--leader-elect-identity",
        default="",
        help="this replica's identity in the Lease (default: hostname_uuid)",
    )
    run.add_argument(
        "--log-level", default=d.log_level, choices=("debug", "info", "warning", "error")
    )
    run.add_argument("--log-format", default=d.log_format, choices=("text", "json"))


def _at_least_one(text: str) -> int:
    """An integer of at least 1 (a usage error otherwise, naming the flag)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _settings(args: argparse.Namespace) -> Settings:
    namespace, _, name = args.policy_configmap.partition("/")
    if args.policy_configmap and not name:
        raise InputError("--policy-configmap: give it as NAMESPACE/NAME")
    return Settings(
        scheduler_name=args.scheduler_name,
        kubeconfig=args.kubeconfig,
        policy=PolicySource(
            configmap_namespace=namespace,
            configmap_name=name,
            configmap_key=args.policy_key,
            file=args.policy_file,
        ),
        period=args.schedule_period,
        qps=args.kube_api_qps,
        burst=args.kube_api_burst,
        bind_workers=args.bind_workers,
        listen_address=args.listen_address,
        unready_after_failed_cycles=args.unready_after_failed_cycles,
        leader_election=LeaderElection(
            enabled=args.leader_elect == "true",
            lease_duration=args.leader_elect_lease_duration,
            renew_deadline=args.leader_elect_renew_deadline,
            retry_period=args.leader_elect_retry_period,
            resource_name=args.leader_elect_resource_name,
            resource_namespace=args.leader_elect_resource_namespace,
            identity=args.leader_elect_identity,
        ),
        log_level=args.log_level,
        log_format=args.log_format,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "simulate":
            return _simulate(args)
        if args.command == "validate-config":
            return _validate(args.file)
        if args.command == "run":
            from vscheduler import app  # the runtime and the kubernetes client load only here

            return app.run(_settings(args))
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
