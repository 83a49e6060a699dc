"""`accord new NAME` from a clean folder, then exactly what its README says: `accord up` there
serves it, `accord contract-test` there passes it (issue #31: a second application proves the
framework). Nothing of the test process's ACCORD_* environment reaches the commands."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

import pytest

from tests.support.new_app import NAME, accord, env_for, serve_and_check
from tests.support.ports import free_port

BIN: Final = Path(sys.executable).parent


def _env(home: Path) -> dict[str, str]:
    return env_for(home, BIN)


_accord = accord


@pytest.fixture
def made(tmp_path: Path) -> tuple[Path, dict[str, str], int, int]:
    env = _env(tmp_path)
    agent_port, tool_port = free_port(), free_port()
    new = _accord(
        ["new", NAME, "--agent-port", str(agent_port), "--tool-port", str(tool_port)],
        tmp_path,
        env,
    )
    assert new.returncode == 0, new.stderr
    return tmp_path / NAME, env, agent_port, tool_port


def test_the_new_app_is_served_and_passes_the_contract_test(
    made: tuple[Path, dict[str, str], int, int],
) -> None:
    serve_and_check(*made)


def test_the_new_app_uses_the_framework_only(
    made: tuple[Path, dict[str, str], int, int],
) -> None:
    folder = made[0]
    text = {p: p.read_text() for p in folder.rglob("*") if p.is_file()}
    for path, body in text.items():
        for word in ("accord.agents", "accord.tools", "refund", "orchestrator"):
            assert word not in body.lower(), f"{path} names {word}"
    assert {p.relative_to(folder).as_posix() for p in text} >= {
        "accord.yaml",
        "README.md",
        "hello_desk/agent.py",
        "hello_desk/faq_server.py",
        "contracts/agents/hello-desk.yaml",
        "contracts/tools/faq.lookup.yaml",
    }


def test_a_new_app_is_not_made_over_files_or_under_a_bad_name(tmp_path: Path) -> None:
    env = _env(tmp_path)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    for name, said in (
        ("taken", "not empty"),
        ("Bad_Name", "lower-case"),
        ("kit", "already"),
        ("risk", "already"),  # an installed service's name (entry points accord.services)
    ):
        made = _accord(["new", name], tmp_path, env)
        assert made.returncode == 2, made.stdout
        assert said in made.stderr
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine"
