"""Every command README.md and docs/ show is run here, run by a named test, or exempt with a
reason (docs/testing.md "Commands in the docs"), so a page cannot drift from the product."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.docs.covered import COVERED
from tests.docs.doc_commands import ROOT, DocCommand, doc_commands, untagged_command_lines

pytestmark = pytest.mark.timeout(120)

EXEMPT: dict[str, str] = yaml.safe_load(
    (Path(__file__).parent / "doc_commands_exempt.yaml").read_text(encoding="utf-8")
)
# Commands cheap and safe enough to run as written: no mesh, no network, a fresh folder.
# Pattern -> the exit status the page promises (2: a refused configuration, docs/configuration.md);
# a failing one's documented output is its error, compared below.
RUN_HERE: dict[str, int] = {
    r"accord --version$": 0,
    r"accord contracts show$": 0,
    r"accord contracts export DIR$": 0,
    r"((export )?[A-Z_]+=\$\()?accord token --user ": 0,
    r"((export )?[A-Z_]+=\$\()?accord keys token ": 0,
    r"ACCORD_WORKFLOW_LEASE_TTL_S=abc accord serve triage$": 2,
    r"ACCORD_MODE=production ACCORD_JWT_SECRET=a accord serve policy$": 2,
}
ASSIGNMENT = re.compile(r"^(export )?[A-Z_]+=\$\((?P<inner>.*)\)$")
COMMANDS = doc_commands()


def _matching(pattern: str) -> list[DocCommand]:
    return [command for command in COMMANDS if re.match(pattern, command.text)]


def test_no_command_hides_in_an_untagged_block() -> None:
    found = untagged_command_lines()
    assert not found, "tag these blocks ```sh, ```console or ```text:\n" + "\n".join(found)


def test_every_command_is_run_covered_or_exempt() -> None:
    patterns = [*RUN_HERE, *(entry[0] for entry in COVERED), *EXEMPT]
    loose = [c for c in COMMANDS if not any(re.match(p, c.text) for p in patterns)]
    assert not loose, "run, cover (tests/docs/covered.py) or exempt these:\n" + "\n".join(
        f"{c.where}: {c.text}" for c in loose
    )


def test_no_entry_is_stale() -> None:
    patterns = [*RUN_HERE, *(entry[0] for entry in COVERED), *EXEMPT]
    stale = [pattern for pattern in patterns if not _matching(pattern)]
    assert not stale, f"these match no documented command any more: {stale}"


def test_exemptions_give_a_reason() -> None:
    assert all(isinstance(why, str) and len(why.split()) >= 4 for why in EXEMPT.values())


@pytest.mark.parametrize(("pattern", "test_file", "evidence"), COVERED, ids=lambda v: str(v))
def test_the_named_test_still_runs_the_command(pattern: str, test_file: str, evidence: str) -> None:
    source = ROOT / test_file
    assert source.is_file(), f"{pattern}: {test_file} does not exist"
    assert evidence in source.read_text(encoding="utf-8"), f"{test_file} lost {evidence!r}"


@pytest.fixture(scope="module")
def only_accord(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a reader who put `accord` on PATH and nothing else of the venv's."""
    bin_dir = tmp_path_factory.mktemp("bin")
    (bin_dir / "accord").symlink_to(ROOT / ".venv" / "bin" / "accord")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCORD_", "VIRTUAL_ENV"))}
    system = [d for d in env.get("PATH", "").split(os.pathsep) if ".venv" not in d]
    return {**env, "PATH": os.pathsep.join([str(bin_dir), *system]), "COLUMNS": "200"}


def _normalised(text: str) -> str:
    return " ".join(text.split())


RUN_COMMANDS = [c for c in COMMANDS if any(re.match(p, c.text) for p in RUN_HERE)]


@pytest.mark.parametrize("command", RUN_COMMANDS, ids=lambda c: c.where)
def test_runs_as_written(command: DocCommand, only_accord: dict[str, str], tmp_path: Path) -> None:
    status = next(code for p, code in RUN_HERE.items() if re.match(p, command.text))
    assigned = ASSIGNMENT.match(command.text)
    # `export X=$(cmd)` exits 0 whatever cmd does: run cmd itself.
    text = assigned.group("inner") if assigned else command.text
    text = text.replace(" DIR", f" {tmp_path / 'out'}")
    # The data directory named: found by walking up, a stray .accord above /tmp would be used.
    env = {**only_accord, "ACCORD_DATA_DIR": str(tmp_path / ".accord")}
    done = subprocess.run(
        ["bash", "-c", text],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    said = done.stdout + done.stderr
    assert done.returncode == status, f"{command.where}: {text}\n{said}"
    if assigned:
        assert done.stdout.strip(), f"{command.where}: {text} printed nothing"
    shown = [line for line in command.output if line.strip()]
    if shown and not any("..." in line or "…" in line for line in shown):
        assert _normalised("\n".join(shown)) in _normalised(said), f"{command.where}:\n{said}"
