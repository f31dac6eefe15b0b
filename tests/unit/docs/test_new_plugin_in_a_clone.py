"""A new plugin is one module and one registry line: proven on a fresh copy of the repository.

The test copies the tracked files of this working tree to a temporary directory, adds the
worked example of docs/writing-a-plugin.md as `vscheduler/plugins/smallfirst.py`, and registers
it in the module that defines `builtin_registry()`: the guide's one line, added to its
`PLUGINS` tuple. Nothing else changes. Then, in the copy,
with this interpreter's virtualenv: ruff, mypy --strict, lint-imports and the whole unit and
scenario suite must pass (the copy skips this test, so it does not copy itself again). Last,
the plugin is made to import another plugin: lint-imports must then fail.

It takes about as long as the unit suite, so it runs when `scripts/check` runs everything, and
is deselected otherwise (`-m "not clone"` in pyproject's addopts; `scripts/check` selects it).
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vscheduler.catalog import builtin_registry

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "writing-a-plugin.md"
IN_CLONE = "VSCHEDULER_IN_CLONE"
BIN = Path(sys.executable).parent

pytestmark = [
    pytest.mark.clone,
    pytest.mark.timeout(900),
    pytest.mark.skipif(IN_CLONE in os.environ, reason="already in the copy"),
]


def fenced_python() -> list[str]:
    text = GUIDE.read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```$", text, re.DOTALL | re.MULTILINE)


def copy_tracked_files(target: Path) -> None:
    """The working tree's tracked files as they are now (edits included), without .git."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def register(registry_file: Path, line: str) -> None:
    """Add `line` (the guide's registry line) at the end of the file's `PLUGINS` tuple."""
    text = registry_file.read_text(encoding="utf-8")
    table = re.search(r"^PLUGINS: Final = \(\n.*?^(?=\)\n)", text, re.S | re.M)
    assert table is not None, f"{registry_file}: no `PLUGINS: Final = (` tuple"
    registry_file.write_text(text[: table.end()] + line + text[table.end() :], encoding="utf-8")


def run(args: list[str], cwd: Path, *, passes: bool = True) -> str:
    env = {**os.environ, IN_CLONE: "1", "PYTHONPATH": str(cwd)}
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    tail = "\n".join((done.stdout + done.stderr).splitlines()[-40:])
    assert (done.returncode == 0) is passes, f"{' '.join(args)} in the copy:\n{tail}"
    return done.stdout + done.stderr


def test_a_new_plugin_file_and_its_registry_entry_pass_every_check(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    copy_tracked_files(clone)
    module, block = fenced_python()[:2]
    line = [each for each in block.splitlines(keepends=True) if each.strip().startswith('"')][-1]
    name = re.search(r'^NAME: Final = "([a-z]+)"$', module, re.M)
    assert name is not None
    plugin_file = clone / "vscheduler" / "plugins" / f"{name.group(1)}.py"
    plugin_file.write_text(module, encoding="utf-8")
    registry_file = Path(inspect.getfile(builtin_registry)).relative_to(ROOT)
    register(clone / registry_file, line)

    python = str(BIN / "python")
    registered = (
        f"import vscheduler, {builtin_registry.__module__} as r\n"
        f"assert vscheduler.__file__.startswith({str(clone)!r}), vscheduler.__file__\n"
        f"assert {name.group(1)!r} in r.builtin_registry().plugins\n"
    )
    run([python, "-c", registered], clone)
    run([str(BIN / "ruff"), "format", "--check", "."], clone)
    run([str(BIN / "ruff"), "check", "."], clone)
    run([str(BIN / "mypy"), "--cache-dir", str(tmp_path / "mypy-cache")], clone)
    run([str(BIN / "lint-imports"), "--no-cache"], clone)
    run([python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "tests"], clone)

    # and the same plugin importing another plugin breaks an import contract
    plugin_file.write_text(module + "\nfrom vscheduler.plugins import gang  # noqa\n")
    out = run([str(BIN / "lint-imports"), "--no-cache"], clone, passes=False)
    assert f"vscheduler.plugins.{name.group(1)} is not allowed to import" in out
