"""The shell commands the documentation shows, read from its fenced blocks.

What counts as a command (docs/testing.md "Commands in the docs"):
- a block fenced ```sh, ```bash or ```shell: every line that is not blank or a comment, a line
  ending in a backslash or inside an open quote joined with the next ones, a trailing
  ``  # comment`` dropped;
- a block fenced ```console: the lines starting with ``$ `` (the rest is the output shown);
- an untagged block must not hold anything that looks like a command: it would escape the check,
  so it is tagged (```sh, ```console, or ```text for a synopsis, a tree or an output).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL_TAGS = frozenset({"sh", "bash", "shell"})
FENCE = re.compile(r"^\s*```(\S*)")
# The words a command line starts with; an untagged block with such a line is a finding.
COMMAND_START = re.compile(
    r"^\s*(\$ |(\.venv/bin/|kit/bin/)?(accord|make|curl|kubectl|docker|npm|node|python|pytest|"
    r"export|cd|git|echo|jq)( |$)|[A-Z_]+=\S* +(\.venv/bin/)?accord )"
)
COMMENT = re.compile(r"\s+#( .*)?$")


@dataclass(frozen=True)
class DocCommand:
    """One command as the docs show it, where it is, and its text made comparable."""

    page: str
    line: int
    text: str
    output: tuple[str, ...] = ()  # what a ```console block shows it print

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def doc_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(path: Path) -> list[tuple[str, int, list[str]]]:
    """Each fenced block: its tag, the line number of its first line, its lines."""
    blocks: list[tuple[str, int, list[str]]] = []
    current: tuple[str, int, list[str]] | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = FENCE.match(line)
        if fence and current is None:
            current = (fence.group(1), number + 1, [])
        elif fence and current is not None:
            blocks.append(current)
            current = None
        elif current is not None:
            current[2].append(line)
    return blocks


def _complete(text: str) -> bool:
    """Whether ``text`` is a whole shell line: no trailing backslash, no open quote."""
    if text.endswith("\\"):
        return False
    try:
        shlex.split(text, comments=True)
    except ValueError:
        return False
    return True


def _strip_comment(text: str) -> str:
    """The line without a trailing comment; a ``#`` inside quotes stays."""
    for found in COMMENT.finditer(text):
        head = text[: found.start()]
        try:
            shlex.split(head)
        except ValueError:
            continue
        return head.rstrip()
    return text.rstrip()


def _normalise(text: str) -> str:
    text = re.sub(r"\\\n\s*", " ", text)
    text = re.sub(r"^(\.venv/bin/)(accord|python|pytest)\b", r"\2", text)
    return text.strip()


def _commands(lines: list[str], console: bool) -> list[tuple[int, str, tuple[str, ...]]]:
    found: list[tuple[int, str, tuple[str, ...]]] = []
    pending: tuple[int, str] | None = None
    for offset, raw in enumerate(lines):
        if pending is not None:
            start, text = pending
            text = f"{text}\n{raw}"
        elif console:
            if not raw.startswith("$ "):
                if found and found[-1][0] >= 0:
                    start, text, shown = found[-1]
                    found[-1] = (start, text, (*shown, raw))
                continue
            start, text = offset, raw[2:]
        else:
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            start, text = offset, raw
        if _complete(text):
            found.append((start, _normalise(_strip_comment(text)), ()))
            pending = None
        else:
            pending = (start, text)
    assert pending is None, f"unfinished command: {pending[1]!r}"
    return found


def doc_commands() -> list[DocCommand]:
    commands: list[DocCommand] = []
    for path in doc_pages():
        page = path.relative_to(ROOT).as_posix()
        for tag, first, lines in _blocks(path):
            if tag in SHELL_TAGS or tag == "console":
                for offset, text, shown in _commands(lines, console=tag == "console"):
                    commands.append(DocCommand(page, first + offset, text, shown))
    return commands


def untagged_command_lines() -> list[str]:
    """``page:line: text`` for each command-like line in a block with no language tag."""
    found: list[str] = []
    for path in doc_pages():
        page = path.relative_to(ROOT).as_posix()
        for tag, first, lines in _blocks(path):
            if tag:
                continue
            for offset, line in enumerate(lines):
                if COMMAND_START.match(line):
                    found.append(f"{page}:{first + offset}: {line.strip()}")
    return found
