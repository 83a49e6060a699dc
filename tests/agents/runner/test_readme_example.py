"""The README's embedding example, extracted from README.md and run as written in a fresh
interpreter: no mesh running, no ``with``, no ``in_process=True``. It must answer, exit 0 and
shut down cleanly (before: UNAVAILABLE without a mesh; "Task was destroyed but it is pending!"
at exit)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.processes import free_port

pytestmark = pytest.mark.timeout(180)

README = Path(__file__).resolve().parents[3] / "README.md"
MARKER = "Embedding instead of serving"


def readme_example() -> str:
    text = README.read_text()
    after = text[text.index(MARKER) :]
    found = re.search(r"```python\n(.*?)```", after, re.DOTALL)
    assert found is not None, "the README's embedding example is a ```python block"
    return found.group(1)


def test_the_readme_example_is_one_call() -> None:
    code = readme_example()
    assert "Runner().run(" in code
    assert "in_process" not in code


def test_the_readme_example_runs_as_written_and_exits_cleanly(
    data_dir: Path, tmp_path: Path
) -> None:
    script = tmp_path / "readme_example.py"
    script.write_text(readme_example())
    # Nothing listens at the configured URLs (free ports), whatever runs on this machine's
    # default ports: the Runner must find no mesh and serve it in process.
    nothing = {f"ACCORD_{n}_URL": f"http://127.0.0.1:{free_port()}" for n in _SERVICES}
    done = subprocess.run(
        [sys.executable, str(script)],
        env={**os.environ, "ACCORD_DATA_DIR": str(data_dir), **nothing},
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "订单 O-1001 的退款（US$59.99）已办理" in done.stdout
    assert "Task was destroyed" not in done.stderr
    assert "Exception ignored" not in done.stderr
    assert "Traceback" not in done.stderr


_SERVICES = ("POLICY", "RISK", "COMMERCE", "PAYMENTS")
