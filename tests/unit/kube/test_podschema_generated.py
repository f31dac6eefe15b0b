"""`vscheduler/kube/podschema.py` is what `scripts/protobuf_schema.py` writes from the Go sources.

The generator reads k8s.io/api and k8s.io/apimachinery at its `VERSION` from the Go module
cache, which `scripts/controlplane build` fills (the check runs that build before these tests).
Where the sources are not there (a machine whose control plane came from the cache alone), the
test says so and skips: the checked-in table is then only held by the reader's own tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "protobuf_schema.py"
SCHEMA = ROOT / "vscheduler" / "kube" / "podschema.py"


def _module_cache() -> Path:
    if cache := os.environ.get("GOMODCACHE"):
        return Path(cache)
    go = shutil.which("go")
    if go:
        out = subprocess.run([go, "env", "GOMODCACHE"], check=False, capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip():
            return Path(out.stdout.strip())
    return Path.home() / "go" / "pkg" / "mod"


def _version() -> str:
    for line in SCRIPT.read_text(encoding="utf-8").splitlines():
        if line.startswith("VERSION = "):
            return line.split("=", 1)[1].strip().strip('"')
    raise AssertionError(f"{SCRIPT} names no VERSION")


def test_the_checked_in_schema_is_what_the_generator_writes() -> None:
    cache, version = _module_cache(), _version()
    sources = [cache / "k8s.io" / f"{module}@{version}" for module in ("api", "apimachinery")]
    missing = [str(s) for s in sources if not s.is_dir()]
    if missing:
        pytest.skip(f"the Go sources are not in the module cache: {', '.join(missing)}")
    written = subprocess.run(
        [sys.executable, str(SCRIPT), str(cache)], capture_output=True, text=True, check=True
    ).stdout
    ruff = Path(sys.executable).with_name("ruff")
    formatted = subprocess.run(
        [str(ruff), "format", f"--stdin-filename={SCHEMA}", "-"],
        input=written,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout

    assert formatted == SCHEMA.read_text(encoding="utf-8"), (
        f"{SCHEMA.name} is not what {SCRIPT.name} writes: run"
        f" `python scripts/protobuf_schema.py > {SCHEMA.relative_to(ROOT)} && ruff format`"
    )
