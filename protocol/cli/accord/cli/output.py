"""Where the CLI's rich output goes, and the rules it keeps (issue #36).

- Piped (stdout not a terminal, no ``COLUMNS``), rich would lay everything out in 80 columns;
  the output is for another program or a file then, so nothing is wrapped: the width is
  unbounded in practice and a table is as wide as its contents.
- A command printed for the user to run (``answer with: accord call URL --task ...``) is one line,
  never wrapped or cut, whatever the width: the terminal may fold it on screen, but a copy of
  it is the command.
- A task id, the handle every other command takes, is never cut in a table (``id_column``).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from rich.console import Console
from rich.table import Column

PIPED_WIDTH: Final = 10_000  # "no wrapping": tables do not expand, so this is only a bound


def out_console() -> Console:
    """The console for a command's stdout: the terminal's width, ``COLUMNS`` when set, else
    (piped) no wrapping."""
    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return Console()
    return Console(width=PIPED_WIDTH)


def hint(console: Console, text: str) -> None:
    """A command for the user to run, as one line (markup-free: it is printed as written)."""
    console.print(text, soft_wrap=True, markup=False, highlight=False)


def whole_column(header: str, values: Iterable[str]) -> Column:
    """A column whose cells are never wrapped or cut (task ids, amounts): at least as wide as
    its longest value; the other columns give way."""
    width = max((len(v) for v in values), default=0)
    return Column(header, no_wrap=True, min_width=max(width, len(header)))


def accord_command(argv0: str | None = None) -> str:
    """How the user can run ``accord`` again, for a printed hint: ``accord`` when that name on
    ``PATH`` is this very program, else the path this one was started by (``.venv/bin/accord``
    with the venv not active: a bare ``accord`` in the hint would be "command not found")."""
    started = Path(argv0 if argv0 is not None else sys.argv[0])
    if started.name != "accord":
        return "accord"  # python -m accord.cli.main, a test harness: nothing better to say
    on_path = shutil.which("accord")
    if on_path is not None and Path(on_path).resolve() == started.resolve():
        return "accord"
    try:
        return str(started.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(started.resolve())
