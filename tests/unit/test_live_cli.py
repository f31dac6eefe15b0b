"""The live tools' command lines, `vscheduler` and the kubectl plugin alike, and `run --dry-run`'s
flags (parsing and dispatch only: the tools themselves run on a real cluster in
integration/test_live_tools.py and on fakes in tests/unit/live)."""

from __future__ import annotations

import argparse
import importlib.metadata
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from vscheduler import cli
from vscheduler.live import commands

ROOT = Path(__file__).resolve().parents[2]


def record(monkeypatch: pytest.MonkeyPatch) -> list[argparse.Namespace]:
    seen: list[argparse.Namespace] = []

    def fake(args: argparse.Namespace, warn: Callable[[str], None]) -> int:
        seen.append(args)
        return 0

    for name in ("run_snapshot", "run_explain", "run_queues", "run_compare"):
        monkeypatch.setattr(commands, name, fake)
    return seen


@pytest.mark.parametrize("entry", [cli.main, cli.kubectl_main], ids=["vscheduler", "kubectl"])
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["snapshot", "-o", "snap.yaml"], {"command": "snapshot", "output": "snap.yaml"}),
        (["explain", "team/big"], {"command": "explain", "pod": "team/big", "output": "table"}),
        (
            ["queues", "-o", "wide", "--policy-configmap", "ns/policy"],
            {"command": "queues", "output": "wide", "policy_configmap": "ns/policy"},
        ),
        (
            ["compare-decisions", "a.jsonl", "b.jsonl"],
            {"command": "compare-decisions", "files": ["a.jsonl", "b.jsonl"]},
        ),
    ],
)
def test_the_kubectl_plugin_dispatches_every_live_tool_as_vscheduler_does(
    monkeypatch: pytest.MonkeyPatch,
    entry: Callable[[list[str]], int],
    argv: list[str],
    expected: dict[str, object],
) -> None:
    seen = record(monkeypatch)
    assert entry(argv) == 0
    [args] = seen
    assert {key: getattr(args, key) for key in expected} == expected


def test_the_kubectl_plugin_names_itself_in_usage_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.kubectl_main(["queues", "-o", "csv"]) == 2
    assert capsys.readouterr().err == (
        "kubectl vscheduler queues: error: argument --output/-o: invalid choice: 'csv' "
        "(choose from 'table', 'wide', 'json', 'yaml') (see kubectl vscheduler queues --help)\n"
    )


def test_the_kubectl_plugin_is_a_console_script_of_the_package() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl-vscheduler"] == "vscheduler.cli:kubectl_main"
    installed = importlib.metadata.entry_points(group="console_scripts")
    [plugin] = [e for e in installed if e.name == "kubectl-vscheduler"]
    assert plugin.load() is cli.kubectl_main


def test_a_policy_file_and_a_policy_config_map_are_exclusive(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["explain", "a/b", "--config", "p.yaml", "--policy-configmap", "n/c"]) == 2
    assert capsys.readouterr().err == (
        "vscheduler explain: error: argument --policy-configmap: not allowed with argument "
        "--config (see vscheduler explain --help)\n"
    )


def test_a_cluster_that_cannot_be_reached_is_one_line_and_exit_code_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "
        '"http://127.0.0.1:9"}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: c\n'
        "  context: {cluster: c, user: u}\ncurrent-context: c\n"
    )
    assert cli.main(["queues", f"--kubeconfig={kubeconfig}"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("vscheduler: connection failed (/api/v1/namespaces): ")
    assert len(err.splitlines()) == 1


def run_settings(*args: str) -> object:
    return cli._settings(cli._parser().parse_args(["run", *args]))


def test_a_dry_run_never_elects_and_takes_a_decisions_file() -> None:
    settings = run_settings("--dry-run", "--decisions-file=d.jsonl", "--leader-elect")
    assert settings.dry_run  # type: ignore[attr-defined]
    assert settings.decisions_file == "d.jsonl"  # type: ignore[attr-defined]
    assert not settings.leader_election.enabled  # type: ignore[attr-defined]


def test_a_decisions_file_without_a_dry_run_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["run", "--decisions-file=d.jsonl"]) == 2
    assert capsys.readouterr().err == (
        "vscheduler run: error: argument --decisions-file: only with --dry-run "
        "(see vscheduler run --help)\n"
    )
