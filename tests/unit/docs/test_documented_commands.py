"""Every `vscheduler` command the README and the docs show runs, and prints what they quote.

A ```console block holds `$ command` lines, each followed by its output; its `vscheduler` (or
`scripts/run`) commands are run through the CLI and their output compared, line for line (the
measured `(N ms)` of a cycle aside). `$ echo $?` checks the previous command's exit code. A
`validate-config` of a file that is not in the repository reads the ```yaml block before it.
Commands in ```sh and unlabelled blocks that name a shipped example or config are run and must
succeed. Every example directory must be simulated by some documented command, and the links
of the docs this suite owns must resolve. An error's `available: ...` list of plugins is quoted
as the plugins docs/policy.md documents (a section each): a new plugin does not change the docs.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from vscheduler import cli
from vscheduler.catalog import builtin_registry

ROOT = Path(__file__).resolve().parents[3]
DOCUMENTS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "examples").glob("*/README.md")),
]
LINK_CHECKED = [
    ROOT / "README.md",
    ROOT / "docs" / "pending.md",
    ROOT / "docs" / "migrating-from-volcano.md",
    ROOT / "docs" / "policy.md",
    ROOT / "docs" / "metrics.md",
    ROOT / "docs" / "live-tools.md",
    ROOT / "examples" / "gang-job" / "README.md",
    ROOT / "examples" / "queues" / "README.md",
]
PROGRAMS = ("vscheduler", "scripts/run")
TIMING = re.compile(r"\(\d+(?:\.\d+)? ms\)")
SHELL_LANGS = ("", "sh", "bash", "shell")
DOCUMENTED_PLUGINS = sorted(
    re.findall(
        r"^### 5\.\d+ `([a-z-]+)`",
        (ROOT / "docs" / "policy.md").read_text(encoding="utf-8"),
        re.MULTILINE,
    )
)
AVAILABLE = (
    "available: " + ", ".join(sorted(builtin_registry().plugins)),
    "available: " + ", ".join(DOCUMENTED_PLUGINS),
)
"""How a printed list of every plugin reads, and how the docs quote it."""


@dataclasses.dataclass(frozen=True)
class Block:
    """A fenced code block: its document, info string, lines, and the blocks before it."""

    doc: Path
    lang: str
    lines: tuple[str, ...]
    before: tuple[Block, ...]


@dataclasses.dataclass(frozen=True)
class Command:
    """One `$ command` of a console block and the output quoted under it."""

    block: Block
    line: str
    output: tuple[str, ...]
    previous: Command | None

    @property
    def name(self) -> str:
        return f"{self.block.doc.relative_to(ROOT)}: {self.line}"


def blocks(doc: Path) -> list[Block]:
    found: list[Block] = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = re.match(r"^```(\S*)\s*$", lines[i])
        if opening is None:
            i += 1
            continue
        end = lines.index("```", i + 1)
        found.append(Block(doc, opening.group(1), tuple(lines[i + 1 : end]), tuple(found)))
        i = end + 1
    return found


def console_commands() -> Iterator[Command]:
    for doc in DOCUMENTS:
        for block in blocks(doc):
            if block.lang != "console":
                continue
            previous: Command | None = None
            current: list[str] | None = None
            line = ""
            for text in [*block.lines, "$ "]:
                if text.startswith("$ "):
                    if current is not None:
                        previous = Command(block, line, tuple(current), previous)
                        yield previous
                    line, current = text[2:], []
                elif current is not None:
                    current.append(text)


def shell_commands() -> Iterator[tuple[Block, str]]:
    for doc in DOCUMENTS:
        for block in blocks(doc):
            if block.lang not in SHELL_LANGS:
                continue
            joined = "\n".join(block.lines).replace("\\\n", " ")
            for text in joined.splitlines():
                if text.split(" ")[0] in PROGRAMS and re.search(r"\b(examples|config)/", text):
                    yield block, text


def cli_args(command: str) -> list[str] | None:
    words = shlex.split(command, comments=True)
    if not words or words[0] not in PROGRAMS or len(words) == 1:
        return None
    return words[1:]


def normalised(text: str) -> list[str]:
    return [TIMING.sub("(… ms)", line).rstrip() for line in text.rstrip("\n").split("\n")]


def run(
    command: Command, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp: Path
) -> tuple[int, str]:
    args = cli_args(command.line)
    assert args is not None
    monkeypatch.chdir(ROOT)
    if args[0] == "validate-config" and not (ROOT / args[1]).exists():
        yaml_blocks = [b for b in command.block.before if b.lang == "yaml"]
        assert yaml_blocks, f"{command.name}: no yaml block before it to write {args[1]} from"
        (tmp / args[1]).write_text("\n".join(yaml_blocks[-1].lines) + "\n")
        monkeypatch.chdir(tmp)
    code = cli.main(args)
    out = capsys.readouterr()
    return code, out.out + out.err


CONSOLE = [c for c in console_commands() if cli_args(c.line) or c.line == "echo $?"]


@pytest.mark.parametrize("command", CONSOLE, ids=[c.name for c in CONSOLE])
def test_a_quoted_command_prints_what_the_doc_quotes(
    command: Command,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    if command.line == "echo $?":
        assert command.previous is not None
        code, _ = run(command.previous, capsys, monkeypatch, tmp_path)
        assert [str(code)] == list(command.output)
        return
    _, out = run(command, capsys, monkeypatch, tmp_path)
    assert normalised(out.replace(*AVAILABLE)) == normalised("\n".join(command.output))


SHELL = list(shell_commands())


@pytest.mark.parametrize(
    ("block", "line"),
    SHELL,
    ids=[
        f"{b.doc.relative_to(ROOT)}: {' '.join(shlex.split(line, comments=True))}"
        for b, line in SHELL
    ],
)
def test_a_shown_command_on_a_shipped_example_succeeds(
    block: Block, line: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = cli_args(line)
    assert args is not None
    monkeypatch.chdir(ROOT)
    code = cli.main(args)
    out = capsys.readouterr()
    assert code == 0, out.err


def test_every_example_directory_is_simulated_by_a_documented_command() -> None:
    lines = [c.line for c in console_commands()] + [line for _, line in SHELL]
    simulated = {
        m.group(1)
        for line in lines
        if " simulate " in f" {line} "
        for m in re.finditer(r"\bexamples/([\w-]+)", line)
    }
    assert simulated == {p.name for p in (ROOT / "examples").iterdir() if p.is_dir()}


def test_the_rescheduling_walkthrough_prints_what_docs_rescheduling_md_quotes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    found = blocks(ROOT / "docs" / "rescheduling.md")
    [(i, command)] = [
        (i, b) for i, b in enumerate(found) if b.lines[0].startswith("vscheduler simulate")
    ]
    quoted = next(b for b in found[i + 1 :] if b.lines[0].startswith("cycle 1:"))
    args = cli_args(" ".join(command.lines).replace("\\", " "))
    assert args is not None
    monkeypatch.chdir(ROOT)
    assert cli.main(args) == 0
    printed = [TIMING.sub("", line).rstrip() for line in capsys.readouterr().out.splitlines()]
    assert printed[: len(quoted.lines)] == [line.rstrip() for line in quoted.lines]


def slug(heading: str) -> str:
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    text = doc.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.MULTILINE)}


def links(doc: Path) -> Iterator[str]:
    text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.DOTALL)
    for match in re.finditer(r"\]\(([^)\s]+)\)", text):
        target = match.group(1)
        if not re.match(r"^[a-z]+:", target):
            yield target


@pytest.mark.parametrize("doc", LINK_CHECKED, ids=[str(d.relative_to(ROOT)) for d in LINK_CHECKED])
def test_every_relative_link_and_anchor_resolves(doc: Path) -> None:
    broken = []
    for target in links(doc):
        path_part, _, anchor = target.partition("#")
        path = (doc.parent / path_part).resolve() if path_part else doc
        if not path.exists() or (anchor and path.suffix == ".md" and anchor not in anchors(path)):
            broken.append(target)
    assert broken == []


def test_the_readme_links_every_doc() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    docs = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert {d for d in docs if f"]({d})" not in text} == set()
