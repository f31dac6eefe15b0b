"""`vscheduler run`'s flags keep kube-scheduler's and Volcano's syntax; Volcano's chart starts it.

Parsing only (nothing is started), except the last tests, which start `vscheduler run` in a
subprocess and see it refuse a port already in use or a policy file that is not UTF-8.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from vscheduler import __version__, cli
from vscheduler.runtime import flags
from vscheduler.runtime.foreign_flags import FOREIGN_FLAGS
from vscheduler.runtime.settings import Settings

VOLCANO_CHART_ARGS = [
    "--logtostderr",
    "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf",
    "--schedule-period=1s",
    "--enable-healthz=true",
    "--enable-metrics=true",
    "--node-worker-threads=20",
    "-v=3",
    "--leader-elect",
    "--kube-api-qps=2000",
    "--kube-api-burst=2000",
    "--listen-address=:8080",
    "--healthz-address=:11251",
    "--percentage-nodes-to-find=100",
    "--default-queue=default",
    "--scheduler-name=volcano",
    "--scheduler-name=vscheduler",
    "2>&1",
]
"""Volcano's Helm chart's scheduler arguments (installer/helm/chart/volcano/templates/
scheduler.yaml, rendered with its values), a second scheduler name and the chart's `2>&1`."""


def parsed(*args: str) -> argparse.Namespace:
    return cli._parser().parse_args(["run", *args])


def settings(*args: str) -> Settings:
    return cli._settings(parsed(*args))


def warnings(*args: str) -> list[str]:
    return flags.warnings(parsed(*args))


def usage_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert cli.main(["run", *args]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.count("\n") == 1
    assert "Traceback" not in out.err
    return out.err.rstrip("\n")


def test_the_content_type_is_kube_schedulers_flag_protobuf_unless_told_json() -> None:
    assert settings().content_type == "application/vnd.kubernetes.protobuf"
    told = settings("--kube-api-content-type=application/json")
    assert told.content_type == "application/json"
    assert Settings().content_type == flags.CONTENT_TYPES[0]


def test_volcanos_chart_arguments_start_the_scheduler_with_a_warning_for_each_unused_flag() -> None:
    run = settings(*VOLCANO_CHART_ARGS)
    assert run.policy.file == "/volcano.scheduler/volcano-scheduler.conf"
    assert not run.policy.uses_configmap
    assert run.scheduler_name == "volcano"
    assert run.period == 1.0
    assert run.leader_election.enabled is True
    assert (run.qps, run.burst) == (2000.0, 2000)
    assert run.listen_address == ":8080"
    assert run.log_level == "info"
    assert warnings(*VOLCANO_CHART_ARGS) == [
        "--scheduler-name: this version schedules the pods of one scheduler name: 'volcano'; "
        "the pods of 'vscheduler' are left alone",
        "--healthz-address has no effect here: /metrics, /healthz, /livez and /readyz are "
        "always served on --listen-address",
        "--node-worker-threads has no effect here: node events are applied by the node "
        "informer's thread",
        "ignored the argument(s) 2>&1: a shell redirection",
    ]


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("1s", 1.0),
        ("500ms", 0.5),
        ("1m30s", 90.0),
        ("1h", 3600.0),
        ("1.5s", 1.5),
        ("2", 2.0),
        ("0.25", 0.25),
    ],
)
def test_schedule_period_takes_a_go_duration_or_seconds(value: str, seconds: float) -> None:
    assert settings(f"--schedule-period={value}").period == seconds
    assert settings("--schedule-period", value).period == seconds


def test_leader_election_durations_take_go_durations_with_a_space_or_an_equals_sign() -> None:
    election = settings(
        "--leader-elect-lease-duration",
        "1m",
        "--leader-elect-renew-deadline=30s",
        "--leader-elect-retry-period=5000ms",
    ).leader_election
    assert (election.lease_duration, election.renew_deadline, election.retry_period) == (
        60.0,
        30.0,
        5.0,
    )


@pytest.mark.parametrize(
    ("args", "enabled"),
    [
        ((), True),
        (("--leader-elect",), True),
        (("--leader-elect=True",), True),
        (("--leader-elect=true",), True),
        (("--leader-elect=TRUE",), True),
        (("--leader-elect=1",), True),
        (("--leader-elect=t",), True),
        (("--leader-elect=false",), False),
        (("--leader-elect=False",), False),
        (("--leader-elect=0",), False),
        (("--leader-elect=f",), False),
        (("--leader-elect", "false"), False),
    ],
)
def test_leader_elect_is_a_go_boolean_flag(args: tuple[str, ...], enabled: bool) -> None:
    assert settings(*args).leader_election.enabled is enabled


@pytest.mark.parametrize(
    ("args", "level"),
    [
        (("-v=3",), "info"),
        (("--v=3",), "info"),
        (("-v", "3"), "info"),
        (("-v3",), "info"),
        (("-v=0",), "info"),
        (("-v=4",), "debug"),
        (("--v=10",), "debug"),
        (("--log-level=error", "-v=5"), "debug"),
        (("-v=5", "--log-level=error"), "error"),
        ((), "info"),
    ],
)
def test_klog_verbosity_maps_onto_the_log_level_and_the_last_one_wins(
    args: tuple[str, ...], level: str
) -> None:
    assert settings(*args).log_level == level


def test_the_deprecated_lock_object_flags_name_the_lease() -> None:
    election = settings(
        "--lock-object-namespace=volcano-system", "--lock-object-name=volcano"
    ).leader_election
    assert (election.resource_namespace, election.resource_name) == ("volcano-system", "volcano")


@pytest.mark.parametrize("argv", [["--version"], ["run", "--version"]])
def test_version_prints_the_version_and_exits_0(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert cli.main(argv) == 0
    assert capsys.readouterr().out == f"vscheduler {__version__}\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--bind-workers", "0"],
            "argument --bind-workers: must be at least 1, got '0'",
        ),
        (
            ["--kube-api-qps=-5"],
            "argument --kube-api-qps: must not be negative, got '-5'",
        ),
        (
            ["--kube-api-qps=fast"],
            "argument --kube-api-qps: must be a number, got 'fast'",
        ),
        (
            ["--bind-workers=1001"],
            "argument --bind-workers: must be at most 1000, got '1001'",
        ),
        (
            ["--bind-workers=1" + "0" * 400],
            f"argument --bind-workers: must be at most 1000, got '1{'0' * 400}'",
        ),
        (
            ["--kube-api-burst=1" + "0" * 30],
            f"argument --kube-api-burst: must be at most 9223372036854775807, got '1{'0' * 30}'",
        ),
        (
            ["--kube-api-qps=1" + "0" * 400],
            f"argument --kube-api-qps: must be a number, got '1{'0' * 400}'",
        ),
        (
            ["--kube-api-burst=0"],
            "argument --kube-api-burst: must be at least 1, got '0'",
        ),
        (
            ["--kube-api-content-type=application/yaml"],
            "argument --kube-api-content-type: invalid choice: 'application/yaml' (choose from "
            "'application/vnd.kubernetes.protobuf', 'application/json')",
        ),
        (
            ["--schedule-period", "0"],
            "argument --schedule-period: must be above 0, got '0'",
        ),
        (
            ["--schedule-period=0s"],
            "argument --schedule-period: must be above 0, got '0s'",
        ),
        (
            ["--schedule-period=-1s"],
            "argument --schedule-period: must be above 0, got '-1s'",
        ),
        (
            ["--schedule-period=soon"],
            "argument --schedule-period: must be a duration like 1s, 500ms, 1m30s or a number "
            "of seconds, got 'soon'",
        ),
        (
            ["--schedule-period=1e300"],
            "argument --schedule-period: must be at most 2562047h (Go's longest duration), "
            "got '1e300'",
        ),
        (
            ["--leader-elect-retry-period=3000000h"],
            "argument --leader-elect-retry-period: must be at most 2562047h (Go's longest "
            "duration), got '3000000h'",
        ),
        (
            ["--listen-address", "notanaddress"],
            "argument --listen-address: listen address 'notanaddress': expected host:port",
        ),
        (
            ["--listen-address", "127.0.0.1:65536"],
            "argument --listen-address: listen address '127.0.0.1:65536': port 65536 is above "
            "65535",
        ),
        (
            ["--leader-elect=maybe"],
            "argument --leader-elect: must be true or false (or 1, 0, t, f, True, False), "
            "got 'maybe'",
        ),
        (
            ["-v=loud"],
            "argument -v/--v: must be a verbosity level (an integer, 0 to 10), got 'loud'",
        ),
        (
            ["--policy-file=p.yaml", "--policy-configmap=ns/name"],
            "argument --policy-configmap: not allowed with argument --policy-file/--scheduler-conf",
        ),
        (
            ["--scheduler-conf=p.yaml", "--policy-configmap=ns/name"],
            "argument --policy-configmap: not allowed with argument --policy-file/--scheduler-conf",
        ),
        (
            ["--policy-configmap=name-only"],
            "argument --policy-configmap: give it as NAMESPACE/NAME",
        ),
        (
            ["--policy-configmap=/name"],
            "argument --policy-configmap: give it as NAMESPACE/NAME",
        ),
        (
            ["--policy-configmap=ns/a/b"],
            "argument --policy-configmap: give it as NAMESPACE/NAME",
        ),
        (
            ["--leader-elect-resource-namespace="],
            "argument --leader-elect-resource-namespace: must not be empty",
        ),
        (
            ["--leader-elect-resource-name="],
            "argument --leader-elect-resource-name: must not be empty",
        ),
        (
            ["--leader-elect-lease-duration=5s"],
            "the leader-election durations must be --leader-elect-lease-duration > "
            "--leader-elect-renew-deadline > --leader-elect-retry-period, got 5s, 10s, 2s",
        ),
        (["stray"], "unrecognized arguments: stray"),
    ],
)
def test_a_bad_flag_is_one_usage_line_naming_it_and_exit_code_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert usage_error(capsys, *args) == (
        f"vscheduler run: error: {message} (see vscheduler run --help)"
    )


def test_an_unknown_flag_is_one_usage_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "--no-such-flag") == (
        "vscheduler: error: unrecognized arguments: --no-such-flag (see vscheduler --help)"
    )


def test_durations_out_of_order_are_fine_without_leader_election() -> None:
    election = settings("--leader-elect=false", "--leader-elect-lease-duration=1s").leader_election
    assert (election.enabled, election.lease_duration) == (False, 1.0)


def test_every_flag_of_run_has_help_and_shows_its_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = cli._parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    run = sub.choices["run"]
    options = [a for a in run._actions if a.option_strings and a.dest not in ("help", "version")]
    assert len(options) > 40
    assert [a.option_strings[0] for a in options if "(default: " not in (a.help or "")] == []
    assert cli.main(["run", "--help"]) == 0
    text = "".join(capsys.readouterr().out.split())  # argparse wraps lines, at hyphens too
    for action in options:
        for option in action.option_strings:
            assert option in text
        assert "".join(str(action.help).split()) in text


@pytest.mark.parametrize("command", ["simulate", "validate-config", "version"])
def test_every_flag_of_the_other_commands_has_help_and_shows_its_default(command: str) -> None:
    parser = cli._parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    options = [a for a in sub.choices[command]._actions if a.option_strings and a.dest != "help"]
    assert [a.option_strings[0] for a in options if "(default: " not in (a.help or "")] == []


def test_a_flag_that_changes_nothing_warns_once_even_when_repeated() -> None:
    assert warnings("--node-selector=a:b", "--node-selector=c:d") == [
        "--node-selector has no effect here: every node is considered"
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["--enable-healthz", "--enable-metrics=True", "--logtostderr=true"],
        ["--percentage-nodes-to-find=100", "--default-queue=default", "--priority-class"],
        ["--leader-elect-resource-lock=leases", "--enable-pprof=false", "--resync-period=0s"],
        ["--log_dir=", "--skip-headers=false", "--scheduler-name=vscheduler"],
    ],
)
def test_a_volcano_flag_asking_for_what_vscheduler_does_anyway_draws_no_warning(
    args: list[str],
) -> None:
    assert warnings(*args) == []


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--enable-metrics=false"], "--enable-metrics"),
        (["--log_dir=/var/log"], "--log-dir"),
        (["--leader-elect-resource-lock=endpoints"], "--leader-elect-resource-lock"),
        (["--feature-gates=A=true,B=false"], "--feature-gates"),
        (["--percentage-nodes-to-find=50"], "--percentage-nodes-to-find"),
    ],
)
def test_a_volcano_flag_asking_for_something_else_names_itself_in_its_warning(
    args: list[str], flag: str
) -> None:
    [warning] = warnings(*args)
    assert warning.startswith(f"{flag} has no effect here: ")


def test_every_volcano_flag_without_effect_is_accepted() -> None:
    args = [
        f"--{flag.names[0]}=true" if flag.boolean else f"--{flag.names[0]}=x"
        for flag in FOREIGN_FLAGS
    ]
    assert len(warnings(*args)) == len(
        [flag for flag in FOREIGN_FLAGS if not (flag.boolean and True in flag.harmless)]
    )


def run_options() -> list[str]:
    [sub] = [a for a in cli._parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(
        o
        for a in sub.choices["run"]._actions
        for o in a.option_strings
        if o not in ("-h", "--help")
    )


ODD_VALUES = st.sampled_from(
    [
        "",
        "0",
        "-1",
        "1s",
        "1e400",
        "nan",
        "inf",
        "true",
        "T",
        "maybe",
        ":8080",
        "[::1]:9",
        "a/b",
        "/",
        "ns/",
        "99999999999999999999",
        "1" + "0" * 400,
        "1h1h",
        "0.0.0.0:65536",
        "ü",
        "2>&1",
        "-v",
    ]
)
TOKENS = st.one_of(
    st.builds(lambda o, v: f"{o}={v}", st.sampled_from(run_options()), ODD_VALUES),
    st.sampled_from(run_options()),
    ODD_VALUES,
)


def outcome(argv: list[str]) -> tuple[int, str]:
    """The exit code `vscheduler run ARGV` would end with before starting anything (-1: it
    would start), and what it printed on stderr."""
    err = io.StringIO()
    code = -1
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            args = cli._parser().parse_args(["run", *argv])
            cli._settings(args)
            for warning in flags.warnings(args):
                err.write(warning + "\n")
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 99
        except flags.UsageError as exc:
            err.write(f"{exc}\n")
            code = 2
    return code, err.getvalue()


@hypothesis_settings(deadline=None)
@given(argv=st.lists(TOKENS, max_size=6))
def test_any_run_command_line_gives_settings_or_a_one_line_usage_error(argv: list[str]) -> None:
    code, err = outcome(argv)
    assert code in (-1, 0, 2)
    if code == 2:
        assert err.count("\n") == 1
    assert all(line.strip() for line in err.splitlines())


# --- `vscheduler run` refusing to start, in a subprocess -----------------------------------------
def kubeconfig(tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    cluster = {"server": "https://127.0.0.1:1"}
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": cluster}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    return path


def run_scheduler(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "vscheduler", "run", "--kubeconfig", str(kubeconfig(tmp_path))]
    return subprocess.run(
        [*command, "--leader-elect=false", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.timeout(90)
def test_a_listen_port_already_in_use_is_one_line_naming_the_flag_and_exit_code_1(
    tmp_path: Path,
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_scheduler(tmp_path, f"--listen-address=127.0.0.1:{port}")
    assert done.returncode == 1
    assert done.stderr == (
        f"vscheduler: --listen-address: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    )


@pytest.mark.timeout(90)
def test_a_policy_file_that_is_not_utf8_stops_run_with_one_line_naming_the_file(
    tmp_path: Path,
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_bytes(b"actions: allocate\n\xff\xfe\n")
    done = run_scheduler(tmp_path, f"--policy-file={policy}", "--listen-address=127.0.0.1:0")
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.endswith(
        f"ERROR   vscheduler.app: policy file rejected: {policy}: not UTF-8 text "
        "(invalid start byte at byte 18)"
    )
    assert "Traceback" not in done.stderr


def test_the_chart_example_of_the_migration_guide_draws_the_warnings_it_names() -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "migrating-from-volcano.md").read_text()
    quoted = guide.split("For example those of Volcano's chart,\n`", 1)[1].split("`, run the", 1)[0]
    args = parsed(*quoted.split())
    assert cli._settings(args).policy.file == "/volcano.scheduler/volcano-scheduler.conf"
    assert [warning.split(" ")[0] for warning in flags.warnings(args)] == [
        "--healthz-address",
        "--node-worker-threads",
        "ignored",
    ]
