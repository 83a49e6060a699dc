"""Sides of a diff (a file, a folder, a git revision), the CLI's output and exit codes, the
reviewed list of intended breaks."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from accord.cli.main import app
from accord.contracts.errors import AccordError
from accord.contracts.evolution.diff import diff_sets
from accord.contracts.evolution.intended import load_intended_breaks
from accord.contracts.evolution.sources import SPECS_IN_REPO, load_side
from accord.contracts.loading import ContractFileError

from .fixtures import AGENT, TOOL

BREAK = ("tool:demo.tool", "error.removed", "/errors/NOT_FOUND")


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _broken_tool() -> dict[str, Any]:
    doc = copy.deepcopy(TOOL)
    doc["errors"].remove("NOT_FOUND")
    doc["version"] = "2.0.0"
    return doc


def _diff(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["contracts", "diff", *args])
    return result.exit_code, result.output


def test_files_compatible_change_exits_zero(tmp_path: Path) -> None:
    old = _write(tmp_path / "old.yaml", TOOL)
    new = _write(tmp_path / "new.yaml", {**copy.deepcopy(TOOL), "version": "1.0.1"})
    code, out = _diff(str(old), str(new), "--json")
    assert code == 0
    assert json.loads(out)["findings"] == [
        {
            "contract": "tool:demo.tool",
            "rule": "version.bumped",
            "compatibility": "compatible",
            "path": "/version",
            "old": "1.0.0",
            "new": "1.0.1",
            "description": "The version went up.",
            "intended": False,
        }
    ]


def test_breaking_change_exits_one_in_text_and_json(tmp_path: Path) -> None:
    old = _write(tmp_path / "old.yaml", TOOL)
    new = _write(tmp_path / "new.yaml", _broken_tool())
    code, out = _diff(str(old), str(new))
    assert code == 1
    assert "error.removed" in out
    assert "breaking" in out
    code, out = _diff(str(old), str(new), "--json")
    document = json.loads(out)
    assert (code, document["breaking"], document["unannounced"]) == (1, 1, 1)
    [row] = [r for r in document["findings"] if r["compatibility"] == "breaking"]
    assert (row["contract"], row["rule"], row["path"]) == BREAK


def test_intended_break_passes_and_needs_a_reason(tmp_path: Path) -> None:
    old = _write(tmp_path / "old.yaml", TOOL)
    new = _write(tmp_path / "new.yaml", _broken_tool())
    entry = dict(zip(("contract", "rule", "path"), BREAK, strict=True))
    listed = _write(tmp_path / "ok.yaml", {"breaks": [{**entry, "reason": "NOT_FOUND is gone"}]})
    code, out = _diff(str(old), str(new), "--intended", str(listed), "--json")
    assert code == 0
    assert json.loads(out)["unannounced"] == 0
    # A list reviewed against another release excuses nothing.
    other = _write(
        tmp_path / "other.yaml",
        {"against": "v9.9.9", "breaks": [{**entry, "reason": "NOT_FOUND is gone"}]},
    )
    code, out = _diff(str(old), str(new), "--intended", str(other), "--json")
    assert code == 1
    assert any("reviewed against v9.9.9" in n for n in json.loads(out)["notes"])
    bare = _write(tmp_path / "bare.yaml", {"breaks": [entry]})
    code, _ = _diff(str(old), str(new), "--intended", str(bare))
    assert code == 2
    typo = {**entry, "rule": "error.gone", "reason": "x" * 10}
    _write(tmp_path / "typo.yaml", {"breaks": [typo]})
    with pytest.raises(ContractFileError, match="unknown rules"):
        load_intended_breaks(tmp_path / "typo.yaml")


def test_folders_pair_contracts_by_kind_and_name(tmp_path: Path) -> None:
    _write(tmp_path / "old" / "tools" / "demo.yaml", TOOL)
    _write(tmp_path / "old" / "agents" / "demo.yaml", AGENT)
    _write(tmp_path / "new" / "tools" / "renamed-file.yaml", TOOL)
    _write(tmp_path / "new" / "other.yaml", {"requirements": []})  # not a contract: skipped
    report = diff_sets(load_side(str(tmp_path / "old")), load_side(str(tmp_path / "new")))
    assert [(f.contract, f.rule) for f in report.findings] == [
        ("agent:demo-agent", "contract.removed")
    ]
    report = diff_sets(load_side(str(tmp_path / "new")), load_side(str(tmp_path / "old")))
    assert [(f.contract, f.rule, f.breaking) for f in report.findings] == [
        ("agent:demo-agent", "contract.added", False)
    ]


def test_unreadable_sides_exit_two(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [", encoding="utf-8")
    assert _diff(str(bad), str(bad))[0] == 2
    assert _diff("no-such-revision-or-path", str(bad))[0] == 2
    with pytest.raises(AccordError, match="neither"):
        load_side("--upload-pack=evil", tmp_path)
    invalid = _write(tmp_path / "invalid.yaml", {**TOOL, "side_effect": "sometimes"})
    with pytest.raises(ContractFileError, match="side_effect"):
        load_side(str(invalid))


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def test_git_revisions_are_read_without_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    specs = repo / SPECS_IN_REPO
    _write(specs / "tools" / "demo.yaml", TOOL)
    _git(repo.parent, "init", "-q", str(repo))
    _git(repo, "-c", "user.email=t@example.org", "-c", "user.name=t", "add", ".")
    _git(repo, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-qm", "one")
    _git(repo, "tag", "v1")
    _write(specs / "tools" / "demo.yaml", _broken_tool())
    _git(repo, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-qam", "two")
    _write(specs / "tools" / "demo.yaml", TOOL)  # the working tree, not committed
    for old, new in (("v1", "HEAD"), ("HEAD~1", "HEAD")):
        report = diff_sets(load_side(old, repo), load_side(new, repo))
        assert [(f.contract, f.rule, f.path) for f in report.findings if f.breaking] == [BREAK]
    # The worktree folder is the working tree, unchanged by reading revisions.
    assert diff_sets(load_side("v1", repo), load_side(str(repo))).findings == []
    assert _git(repo, "status", "--porcelain").strip() == f"M {SPECS_IN_REPO}/tools/demo.yaml"
