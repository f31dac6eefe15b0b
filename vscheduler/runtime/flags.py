"""The `vscheduler run` command line: kube-scheduler's and Volcano's flags, with their syntax.

Flags keep the syntax Go's pflag gives them in kube-scheduler and in Volcano's `vc-scheduler`, so
a Volcano Deployment's arguments start vscheduler unchanged:
- durations are Go durations (`1s`, `1m30s`, `500ms`, `1h`; at most Go's longest, 2562047h); a
  plain number is seconds, as vscheduler's own flags always took;
- a boolean flag may stand alone (`--leader-elect`) or carry any spelling Go's strconv.ParseBool
  accepts (`--leader-elect=True`, `=false`, `=1`, `=f`);
- klog's verbosity `-v N` (`-v=3`, `--v=3`, `-v 3`) maps onto the log level: 0 to 3 is `info`
  (Volcano's charts run at 3), 4 and above is `debug`; the last of `-v` and `--log-level` wins;
- `--scheduler-conf FILE` is `--policy-file FILE`; `--lock-object-namespace` and
  `--lock-object-name` are `--leader-elect-resource-namespace` and `--leader-elect-resource-name`
  (their deprecated names);
- `--scheduler-name` may be repeated, as in Volcano: the first name is scheduled, the others are
  reported in a warning (this version schedules the pods of one scheduler name);
- the flags of Volcano and klog that have no counterpart here (`foreign_flags`) are accepted and
  each one given draws one warning saying so, unless its value is what vscheduler does anyway;
- `2>&1`, which Volcano's Helm chart passes as an argument, is ignored with a warning.

Ranges are checked while parsing, so a wrong value is a usage error naming the flag (exit 2):
`--schedule-period` and the leader-election durations above 0 (lease > renew deadline > retry
period, as kube's validation requires), `--bind-workers` from 1 to 1000, `--kube-api-burst` at
least 1,
`--kube-api-qps` at least 0 (0: no client-side limit), `--listen-address` a `host:port` with a
port up to 65535, `--unready-after-failed-cycles` at least 1, `--policy-configmap` a
NAMESPACE/NAME, and with leader election the Lease's
name and namespace not empty. `--policy-file` and `--policy-configmap` exclude each other.

Owns the flags and their translation into `Settings`; starts nothing.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable, Sequence
from typing import Final

from vscheduler import __version__
from vscheduler.conf.arguments import parse_go_bool, parse_go_duration
from vscheduler.errors import InputError
from vscheduler.model.duration import DurationOverflowError
from vscheduler.obs.http import parse_address
from vscheduler.runtime.foreign_flags import FOREIGN_FLAGS, ForeignFlag
from vscheduler.runtime.settings import (
    DEFAULT_POLICY_KEY,
    LeaderElection,
    PolicySource,
    Settings,
)

LOG_LEVELS: Final = ("debug", "info", "warning", "error")
MAX_BIND_WORKERS: Final = 1000
"""Each bind worker is a thread and a pooled connection to the API server."""
DEBUG_VERBOSITY: Final = 4
"""klog's `-v` from which vscheduler logs at `debug`."""
GO_LONGEST_DURATION: Final = (2**63 - 1) / 1e9
"""Seconds in Go's longest time.Duration (about 292 years); pflag refuses longer ones."""
_REDIRECTION: Final = re.compile(r"[0-9]*>&?[0-9]*")


class UsageError(InputError):
    """A flag combination argparse cannot check by itself; exit code 2, like argparse's."""


def go_bool(text: str) -> bool:
    """A pflag boolean value: Go's strconv.ParseBool spellings."""
    try:
        return parse_go_bool(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be true or false (or 1, 0, t, f, True, False), got {text!r}"
        ) from None


def duration(text: str) -> float:
    """A Go duration (`1m30s`) or a plain number of seconds; finite and above 0."""
    seconds: float | None
    try:
        seconds = parse_go_duration(text)
    except DurationOverflowError:  # a number beyond Go's range, either way: said below
        seconds = -math.inf if text.startswith("-") else math.inf
    except ValueError:
        seconds = _plain_seconds(text)
    if seconds is None:
        raise argparse.ArgumentTypeError(
            f"must be a duration like 1s, 500ms, 1m30s or a number of seconds, got {text!r}"
        )
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text!r}")
    if seconds > GO_LONGEST_DURATION:
        raise argparse.ArgumentTypeError(
            f"must be at most 2562047h (Go's longest duration), got {text!r}"
        )
    return seconds


def _plain_seconds(text: str) -> float | None:
    """A finite plain number of seconds ("1.5"), or None."""
    try:
        seconds = float(text)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) else None


def _number(text: str, convert: Callable[[str], float], noun: str) -> float:
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {noun}, got {text!r}") from None
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer too large for a float is finite still
        finite = True
    if not finite:
        raise argparse.ArgumentTypeError(f"must be {noun}, got {text!r}")
    return value


def _int_between(text: str, minimum: int, maximum: int) -> int:
    value = int(_number(text, int, "an integer"))
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {text!r}")
    if value > maximum:
        raise argparse.ArgumentTypeError(f"must be at most {maximum}, got {text!r}")
    return value


def burst(text: str) -> int:
    """An integer from 1 to Go's largest int."""
    return _int_between(text, 1, 2**63 - 1)


def bind_workers(text: str) -> int:
    """Threads (and connections) for the API writes: 1 to MAX_BIND_WORKERS."""
    return _int_between(text, 1, MAX_BIND_WORKERS)


def failed_cycles(text: str) -> int:
    """A count of consecutive failed cycles: 1 to 2^31-1."""
    return _int_between(text, 1, 2**31 - 1)


CONTENT_TYPES: Final = ("application/vnd.kubernetes.protobuf", "application/json")
"""`--kube-api-content-type`'s values (kube-scheduler's flag; JSON is the way out for a proxy
that does not pass protobuf through)."""


def qps(text: str) -> float:
    """Queries per second: a number of at least 0 (0: no client-side limit)."""
    value = _number(text, float, "a number")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    return value


def verbosity(text: str) -> str:
    """klog's `-v` level as a log level."""
    level = int(_number(text, int, "a verbosity level (an integer, 0 to 10)"))
    if level < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    return "debug" if level >= DEBUG_VERBOSITY else "info"


def listen_address(text: str) -> str:
    """`host:port`, `:port` or `[v6]:port`, with a port from 0 to 65535."""
    try:
        parse_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_run_flags(run: argparse.ArgumentParser) -> None:
    """Every flag of `vscheduler run`, each with its help and its default."""
    d = Settings()
    le = d.leader_election
    run.add_argument(
        "--version", action="version", version=f"vscheduler {__version__}", help="print the version"
    )
    run.add_argument(
        "--scheduler-name",
        action="append",
        metavar="NAME",
        help="pods whose spec.schedulerName is this are scheduled; repeatable as in Volcano, "
        f"but only the first is scheduled (default: {d.scheduler_name})",
    )
    run.add_argument(
        "--kubeconfig",
        default="",
        metavar="FILE",
        help="kubeconfig file (default: in-cluster, else $KUBECONFIG or ~/.kube/config)",
    )
    _policy_flags(run)
    run.add_argument(
        "--schedule-period",
        type=duration,
        default=d.period,
        metavar="DURATION",
        help="time between cycles when nothing changes: 1s, 500ms, or seconds (default: 1s)",
    )
    run.add_argument(
        "--kube-api-qps",
        type=qps,
        metavar="QPS",
        default=d.qps,
        help=f"client queries per second, 0 for no limit (default: {d.qps:g})",
    )
    run.add_argument(
        "--kube-api-burst",
        type=burst,
        metavar="N",
        default=d.burst,
        help=f"client burst (default: {d.burst})",
    )
    run.add_argument(
        "--kube-api-content-type",
        choices=CONTENT_TYPES,
        metavar="TYPE",
        default=d.content_type,
        help="how the pod watch, Bindings and Events go: application/vnd.kubernetes.protobuf "
        f"(as kube-scheduler's) or application/json (default: {d.content_type})",
    )
    run.add_argument(
        "--bind-workers",
        type=bind_workers,
        metavar="N",
        default=d.bind_workers,
        help=f"threads carrying out binds and evictions (status writes get a quarter as many, "
        f"at least 2), 1 to {MAX_BIND_WORKERS} "
        f"(default: {d.bind_workers})",
    )
    run.add_argument(
        "--listen-address",
        type=listen_address,
        default=d.listen_address,
        metavar="HOST:PORT",
        help="where /metrics, /healthz, /livez and /readyz are served "
        f"(default: {d.listen_address})",
    )
    run.add_argument(
        "--unready-after-failed-cycles",
        type=failed_cycles,
        metavar="N",
        default=d.unready_after_failed_cycles,
        help="/readyz answers 503 after N scheduling cycles in a row failed "
        f"(default: {d.unready_after_failed_cycles})",
    )
    _election_flags(run, le)
    _dry_run_flags(run)
    run.add_argument(
        "--log-level",
        default=d.log_level,
        choices=LOG_LEVELS,
        help=f"the lowest level logged (default: {d.log_level})",
    )
    run.add_argument(
        "-v",
        "--v",
        dest="log_level",
        type=verbosity,
        metavar="N",
        help="klog's verbosity: 0-3 log at info, 4 and more at debug (default: 0, as info)",
    )
    run.add_argument(
        "--log-format",
        default=d.log_format,
        choices=("text", "json"),
        help=f"log lines as text or JSON objects (default: {d.log_format})",
    )
    foreign = run.add_argument_group(
        "Volcano's and klog's flags without effect here",
        "accepted so a Volcano Deployment's arguments start vscheduler; each one given draws a "
        "warning, unless its value asks for what vscheduler does anyway",
    )
    for flag in FOREIGN_FLAGS:
        _add_foreign(foreign, flag)
    run.add_argument("stray", nargs="*", help=argparse.SUPPRESS)


def _policy_flags(run: argparse.ArgumentParser) -> None:
    source = run.add_mutually_exclusive_group()
    source.add_argument(
        "--policy-configmap",
        default="",
        metavar="NAMESPACE/NAME",
        help="watch the policy in this ConfigMap, hot reloaded (default: none, the built-in "
        "default policy)",
    )
    source.add_argument(
        "--policy-file",
        "--scheduler-conf",
        default="",
        metavar="FILE",
        help="read the policy from this file, re-read when it changes; --scheduler-conf is "
        "Volcano's name (default: none, the built-in default policy)",
    )
    run.add_argument(
        "--policy-key",
        default=DEFAULT_POLICY_KEY,
        metavar="KEY",
        help=f"the ConfigMap key holding the policy (default: {DEFAULT_POLICY_KEY})",
    )


def _dry_run_flags(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="shadow mode: decide every cycle, write nothing to the API server (no binds, "
        "evictions, status, Events or Lease; no leader election), only the log, the metrics "
        "and --decisions-file (default: off)",
    )
    run.add_argument(
        "--decisions-file",
        default="",
        metavar="FILE",
        help="with --dry-run, append each cycle's decisions to FILE as a JSON line, for "
        "`vscheduler compare-decisions` (default: none)",
    )


def _election_flags(run: argparse.ArgumentParser, le: LeaderElection) -> None:
    run.add_argument(
        "--leader-elect",
        type=go_bool,
        nargs="?",
        const=True,
        default=le.enabled,
        metavar="BOOL",
        help="elect a leader through a Lease before scheduling (default: true)",
    )
    for name, default, what in (
        ("lease-duration", le.lease_duration, "how long a standby waits before taking over"),
        ("renew-deadline", le.renew_deadline, "how long the leader tries to renew"),
        ("retry-period", le.retry_period, "time between attempts to acquire or renew"),
    ):
        run.add_argument(
            f"--leader-elect-{name}",
            type=duration,
            default=default,
            metavar="DURATION",
            help=f"{what} (default: {default:g}s)",
        )
    run.add_argument(
        "--leader-elect-resource-name",
        "--lock-object-name",
        default=le.resource_name,
        metavar="NAME",
        help="the Lease's name; --lock-object-name is kube-scheduler's deprecated name "
        f"(default: {le.resource_name})",
    )
    run.add_argument(
        "--leader-elect-resource-namespace",
        "--lock-object-namespace",
        default=os.environ.get("POD_NAMESPACE", le.resource_namespace),
        metavar="NAMESPACE",
        help="the Lease's namespace; --lock-object-namespace is Volcano's and kube-scheduler's "
        "deprecated name "
        f"(default: $POD_NAMESPACE, else {le.resource_namespace})",
    )
    run.add_argument(
        "--leader-elect-identity",
        default="",
        metavar="IDENTITY",
        help="this replica's identity in the Lease (default: hostname_uuid)",
    )


def _add_foreign(run: argparse._ArgumentGroup, flag: ForeignFlag) -> None:
    names = [f"--{name}" for name in flag.names]
    if flag.boolean:
        run.add_argument(
            *names,
            dest=flag.dest,
            type=go_bool,
            nargs="?",
            const=True,
            action="append",
            metavar="BOOL",
            help=flag.help,
        )
    else:
        run.add_argument(
            *names, dest=flag.dest, action="append", metavar=flag.metavar, help=flag.help
        )


def check(args: argparse.Namespace) -> None:
    """What argparse cannot check alone; raises UsageError."""
    for stray in args.stray:
        if not _REDIRECTION.fullmatch(stray):
            raise UsageError(f"unrecognized arguments: {' '.join(args.stray)}")
    namespace, _, name = args.policy_configmap.partition("/")
    if (args.policy_configmap and not (namespace and name)) or "/" in name:
        raise UsageError("argument --policy-configmap: give it as NAMESPACE/NAME")
    if args.decisions_file and not args.dry_run:
        raise UsageError("argument --decisions-file: only with --dry-run")
    if args.leader_elect and not args.dry_run:
        for flag in ("resource-name", "resource-namespace"):
            if not getattr(args, f"leader_elect_{flag.replace('-', '_')}"):
                raise UsageError(f"argument --leader-elect-{flag}: must not be empty")
    lease, renew, retry = (
        args.leader_elect_lease_duration,
        args.leader_elect_renew_deadline,
        args.leader_elect_retry_period,
    )
    if args.leader_elect and not lease > renew > retry:
        raise UsageError(
            "the leader-election durations must be --leader-elect-lease-duration > "
            f"--leader-elect-renew-deadline > --leader-elect-retry-period, got {lease:g}s, "
            f"{renew:g}s, {retry:g}s"
        )


def warnings(args: argparse.Namespace) -> list[str]:
    """One warning for each flag given that does nothing here (scheduler names, then the table)."""
    found: list[str] = []
    names: list[str] = args.scheduler_name or []
    if len(set(names)) > 1:
        ignored = ", ".join(repr(name) for name in dict.fromkeys(names[1:]) if name != names[0])
        found.append(
            f"--scheduler-name: this version schedules the pods of one scheduler name: "
            f"{names[0]!r}; the pods of {ignored} are left alone"
        )
    for flag in FOREIGN_FLAGS:
        given: list[object] | None = getattr(args, flag.dest)
        if given and any(value not in flag.harmless for value in given):
            found.append(f"--{flag.names[0]} has no effect here: {flag.reason}")
    if args.stray:
        found.append(f"ignored the argument(s) {' '.join(args.stray)}: a shell redirection")
    return found


def settings(args: argparse.Namespace) -> Settings:
    """The Settings the parsed flags ask for (after `check`)."""
    namespace, _, name = args.policy_configmap.partition("/")
    names: Sequence[str] = args.scheduler_name or [Settings().scheduler_name]
    return Settings(
        scheduler_name=names[0],
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
        content_type=args.kube_api_content_type,
        bind_workers=args.bind_workers,
        listen_address=args.listen_address,
        unready_after_failed_cycles=args.unready_after_failed_cycles,
        leader_election=LeaderElection(
            enabled=args.leader_elect and not args.dry_run,
            lease_duration=args.leader_elect_lease_duration,
            renew_deadline=args.leader_elect_renew_deadline,
            retry_period=args.leader_elect_retry_period,
            resource_name=args.leader_elect_resource_name,
            resource_namespace=args.leader_elect_resource_namespace,
            identity=args.leader_elect_identity,
        ),
        log_level=args.log_level,
        log_format=args.log_format,
        dry_run=args.dry_run,
        decisions_file=args.decisions_file,
    )
