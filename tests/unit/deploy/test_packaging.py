"""What installing vscheduler pulls in: the runtime dependencies only, unless the dev tools are
asked for.

- pyproject.toml: the dev toolchain (test runner, linters, type checker) is only in the `dev`
  extra, so `pip install .` (and the image's pinned deploy/image/requirements.txt) has none of it.
- scripts/run installs vscheduler with its runtime dependencies only (`scripts/setup
  --runtime`); scripts/setup (what scripts/check runs) adds the `dev` extra to the same venv.
  Both run here for real against a stand-in interpreter that records what it is asked to do, so
  nothing is downloaded.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
DEV_TOOLS = {"pytest", "pytest-timeout", "hypothesis", "mypy", "ruff", "import-linter"}
FAKE_PYTHON = """#!/bin/sh
# A stand-in interpreter: records its arguments; `-m venv DIR` makes DIR/bin/python (itself) and
# a DIR/bin/vscheduler that records its arguments too.
echo "python $*" >> "$RECORD"
if [ "$1" = -m ] && [ "$2" = venv ]; then
  mkdir -p "$3/bin"
  cp "$0" "$3/bin/python"
  printf '#!/bin/sh\\necho "vscheduler $*" >> "$RECORD"\\n' > "$3/bin/vscheduler"
  chmod +x "$3/bin/vscheduler"
fi
"""


def name_of(requirement: str) -> str:
    """The normalised project name of a requirement (`mypy>=1.10` -> `mypy`)."""
    found = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert found, requirement
    return re.sub(r"[-_.]+", "-", found.group(0)).lower()


def project() -> dict[str, Any]:
    loaded: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return loaded


def test_the_dev_toolchain_is_only_in_the_dev_extra() -> None:
    meta = project()
    runtime = {name_of(r) for r in meta["dependencies"]}
    dev = {name_of(r) for r in meta["optional-dependencies"]["dev"]}
    assert dev >= DEV_TOOLS
    assert runtime & dev == set()
    assert list(meta["optional-dependencies"]) == ["dev"]


def test_the_images_pinned_requirements_hold_no_dev_tool() -> None:
    text = (ROOT / "deploy" / "image" / "requirements.txt").read_text()
    pinned = {name_of(line) for line in text.splitlines() if re.match(r"[A-Za-z]", line)}
    dev = {name_of(r) for r in project()["optional-dependencies"]["dev"]}
    assert pinned
    assert pinned & dev == set()


def run_script(tmp_path: Path, *argv: str) -> list[str]:
    """Run a script of scripts/ with the stand-in interpreter; the new lines of the record."""
    fake = tmp_path / "python3"
    if not fake.exists():
        fake.write_text(FAKE_PYTHON)
        fake.chmod(0o755)
    record = tmp_path / "record"
    before = record.read_text().splitlines() if record.exists() else []
    env = {
        "PATH": os.environ["PATH"],
        "PYTHON": str(fake),
        "VSCHEDULER_VENV": str(tmp_path / "venv"),
        "RECORD": str(record),
    }
    proc = subprocess.run(
        [str(ROOT / "scripts" / argv[0]), *argv[1:]],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return record.read_text().splitlines()[len(before) :]


def test_scripts_run_installs_the_runtime_dependencies_only_and_once(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    assert run_script(tmp_path, "run", "version") == [
        f"python -m venv {venv}",
        "python -m pip install --quiet -e .",
        "vscheduler version",
    ]
    assert run_script(tmp_path, "run", "version") == ["vscheduler version"]


def test_scripts_setup_adds_the_dev_extra_and_scripts_run_then_installs_nothing(
    tmp_path: Path,
) -> None:
    run_script(tmp_path, "run", "version")
    assert run_script(tmp_path, "setup") == [
        "python -m pip install --quiet --upgrade pip",
        "python -m pip install --quiet -e .[dev]",
    ]
    assert run_script(tmp_path, "run", "simulate", "examples/two-queues") == [
        "vscheduler simulate examples/two-queues"
    ]
    assert run_script(tmp_path, "setup") == []
