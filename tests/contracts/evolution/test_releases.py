"""Releases recorded in the repository: the history of baselines, `accord contracts compat` on
a copy with no git at all (what every CI clone is held to), and `accord contracts release`."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from accord.cli.main import app
from accord.contracts.errors import AccordError
from accord.contracts.evolution.baseline import baselines
from accord.contracts.evolution.release import Workspace, changelog_releases, check, history
from accord.contracts.evolution.sources import load_side
from accord.contracts.keys import CONTRACT_VERSION

ROOT = Path(__file__).resolve().parents[3]
WORKSPACE = Workspace.load(ROOT)


def test_every_release_announced_every_break_against_the_one_before() -> None:
    recorded = [b.record.version for b in baselines(WORKSPACE.releases)]
    assert recorded[:2] == ["0.1.0", "0.2.0"]
    steps = history(WORKSPACE)
    assert [(old.record.version, new.record.version) for old, new, _ in steps] == list(
        itertools.pairwise(recorded)
    )
    assert all(unannounced == [] for _, _, unannounced in steps)
    # v0.2 announced exactly the 16 breaks the 0.2 line reviewed against v0.1.0.
    _, new, _ = steps[0]
    report = load_side(str(new.folder))
    assert report.label == "v0.2.0"
    intended = yaml.safe_load(new.intended_breaks.read_text(encoding="utf-8"))
    assert (intended["against"], len(intended["breaks"])) == ("v0.1.0", 16)


def test_a_baseline_is_the_release_s_contracts_by_content() -> None:
    v02 = next(b for b in baselines(WORKSPACE.releases) if b.record.version == "0.2.0")
    assert v02.record.commit == "d09416dcc21274071f7d567de1b2a254c1eb90ad"
    contracts = v02.contracts()
    assert len(contracts.contracts) == 9
    assert contracts.registry is not None
    assert contracts.contracts["agent:orchestrator"].version == "1.2.0"


def test_this_working_tree_agrees_with_its_last_release() -> None:
    result = check(WORKSPACE)
    assert result.problems == []
    assert result.baseline.record.tag == result.intended.against


# -- a copy of the workspace with no .git: a tagless, shallow or git-less clone -------------

# Every distribution's pyproject.toml (the release table lists them), then what else it reads.
COPIED = (
    *(str(p.relative_to(ROOT)) for p in WORKSPACE.distributions),
    *(str(p.relative_to(ROOT)) for p in WORKSPACE.specs),
    "contracts/releases",
    "contracts/intended-breaks.yaml",
    "CHANGELOG.md",
)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for name in COPIED:
        source, target = ROOT / name, tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copyfile(source, target)
    assert not (tmp_path / ".git").exists()
    return tmp_path


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["contracts", *args])
    return result.exit_code, result.output


def _compat(root: Path) -> tuple[int, dict[str, Any]]:
    code, out = _cli("compat", "--root", str(root), "--json")
    return code, json.loads(out)


def _specs(root: Path) -> Path:
    """The refund application's contract folder in the copy (its own distribution's)."""
    return root / "contracts/refund/accord/refund_contracts/specs"


def _edit(path: Path, change: dict[str, Any]) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc.update(change)
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _drop_error(root: Path) -> None:
    """A breaking change: orders.lookup no longer declares NOT_FOUND (its version unbumped)."""
    path = _specs(root) / "tools/orders.lookup.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    _edit(path, {"errors": [e for e in doc["errors"] if e != "NOT_FOUND"]})


def test_compat_compares_against_the_last_release_without_git(copy: Path) -> None:
    code, out = _cli("compat", "--root", str(copy))
    assert code == 0, out
    last = baselines(copy / "contracts/releases")[-1].record
    assert f"against {last.tag}" in out
    assert "SKIPPED" not in out


def test_an_unannounced_break_fails_compat_naming_it(copy: Path) -> None:
    _drop_error(copy)
    code, document = _compat(copy)
    assert code == 1
    assert (
        "unannounced breaking change: tool:orders.lookup error.removed /errors/NOT_FOUND"
        in (document["problems"])
    )


def test_an_announced_break_passes_only_with_a_major_version(copy: Path) -> None:
    _drop_error(copy)
    ws = Workspace.load(copy)
    breaks = [
        {"contract": f.contract, "rule": f.rule, "path": f.path, "reason": "a test: it is meant"}
        for f in check(ws).report.findings
        if f.breaking
    ]
    # error.removed, and the version not bumped for it (beside the breaks already on the list)
    assert len([b for b in breaks if b["contract"] == "tool:orders.lookup"]) == 2
    against = yaml.safe_load(ws.intended_breaks.read_text(encoding="utf-8"))["against"]
    ws.intended_breaks.write_text(yaml.safe_dump({"against": against, "breaks": breaks}), "utf-8")
    (major, minor, patch) = baselines(ws.releases)[-1].record.key
    _set_version(ws, f"{major}.{minor}.{patch + 1}.dev0")
    assert any("need a major version" in p for p in check(ws).problems)
    # While the major is 0 the next minor is the major bump (semantic versioning's 0.x rule).
    _set_version(ws, f"0.{minor + 1}.0.dev0" if major == 0 else f"{major + 1}.0.0.dev0")
    assert check(ws).problems == []


def _set_version(ws: Workspace, version: str) -> None:
    for path in ws.distributions:
        text = path.read_text(encoding="utf-8")
        path.write_text(
            re.sub(r'(?m)^version = "[^"]*"', f'version = "{version}"', text, count=1), "utf-8"
        )


def test_versions_changelog_and_list_must_agree(copy: Path) -> None:
    ws = Workspace.load(copy)
    pyproject = copy / "tools/pyproject.toml"
    pyproject.write_text(
        re.sub(r'(?m)^version = "[^"]*"', 'version = "9.9.9"', pyproject.read_text()), "utf-8"
    )
    with pytest.raises(AccordError, match="disagree on their version"):
        check(ws)
    _set_version(ws, "0.0.1.dev0")
    assert any("is not after the last release" in p for p in check(ws).problems)
    _set_version(ws, "7.0.0")
    assert any("is not recorded as a release" in p for p in check(ws).problems)
    _set_version(ws, "7.0.0.dev0")
    text = ws.changelog.read_text(encoding="utf-8")
    ws.changelog.write_text(re.sub(r"(?m)^## \[0\.1\.0\].*$", "## [0.1.0]", text), "utf-8")
    assert any("CHANGELOG.md lists releases" in p for p in check(ws).problems)
    ws.changelog.write_text(text, "utf-8")
    ws.intended_breaks.write_text("against: v0.1.0\nbreaks: []\n", "utf-8")
    assert any("reviewed against v0.1.0" in p for p in check(ws).problems)


def _unreleased(ws: Workspace, entry: str | None) -> None:
    """The changelog's Unreleased section holds ``entry`` alone (nothing when None)."""
    text = ws.changelog.read_text(encoding="utf-8")
    start = text.index("## [Unreleased]") + len("## [Unreleased]")
    end = text.index("\n## [", start)
    body = f"\n\n### Added\n- {entry}\n" if entry else "\n"
    ws.changelog.write_text(text[:start] + body + text[end:], "utf-8")


def test_release_records_a_baseline_and_the_next_check_holds_against_it(copy: Path) -> None:
    ws = Workspace.load(copy)
    last = baselines(ws.releases)[-1].record
    version = f"{last.key[0]}.{last.key[1] + 1}.0"
    _unreleased(ws, "refunds.get describes itself better")
    _edit(_specs(copy) / "tools/refunds.get.yaml", {"description": "One refund, by order."})
    code, out = _cli("release", version, "--root", str(copy))
    assert code == 0, out
    [new] = [b for b in baselines(ws.releases) if b.record.version == version]
    assert new.record.date == dt.date.today()
    assert new.contracts().contracts["tool:refunds.get"].description == "One refund, by order."
    assert (new.folder / "intended-breaks.yaml").is_file()
    assert ws.version() == version
    sections = changelog_releases(ws.changelog.read_text(encoding="utf-8"))
    assert sections[:2] == [("Unreleased", None), (version, dt.date.today().isoformat())]
    assert yaml.safe_load(ws.intended_breaks.read_text(encoding="utf-8")) == {
        "against": f"v{version}",
        "breaks": [],
    }
    result = check(ws)
    assert (result.problems, result.baseline.record.version) == ([], version)
    assert [unannounced for _, _, unannounced in history(ws)][-1] == []


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("version", "prepare", "reason"),
    [
        ("0.2.0", "entry", "is not after the last release"),
        ("0.3.0.dev1", "entry", "X.Y.Z"),
        ("0.3.0", "nothing", "section is empty"),
        ("0.3.0", "break", "unannounced breaking change"),
    ],
)
def test_release_is_refused_and_writes_nothing(
    copy: Path, version: str, prepare: str, reason: str
) -> None:
    ws = Workspace.load(copy)
    _unreleased(ws, "something" if prepare in ("entry", "break") else None)
    if prepare == "break":
        _drop_error(copy)
    before = _snapshot(copy)
    code, out = _cli("release", version, "--root", str(copy))
    assert code == 1
    assert reason in out
    assert _snapshot(copy) == before


def test_accord_version_prints_the_package_and_mesh_contract_versions() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"accord {WORKSPACE.version()} (mesh contract {CONTRACT_VERSION})\n"


def test_compat_finds_its_workspace_from_a_subfolder_and_says_when_there_is_none(
    copy: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_specs(copy) / "tools")
    code, out = _cli("compat")
    assert code == 0, out
    assert str(copy / "contracts/releases") in out
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    code, out = _cli("compat")
    assert code == 2
    assert "no pyproject.toml with a [tool.accord.release] table" in out


@pytest.mark.parametrize(
    ("path", "text", "reason"),
    [
        ("contracts/releases/v0.2.0/release.yaml", "version: 0.2.0\ncommit: nope\n", "commit"),
        ("contracts/releases/v0.2.0/release.yaml", "version: [", "YAML"),
        ("contracts/intended-breaks.yaml", "against: v0.2.0\nbreaks: [{rule: x}]\n", "breaks"),
        ("pyproject.toml", "[tool.accord.release]\nspecs = 3\n", "[tool.accord.release]"),
    ],
)
def test_a_malformed_record_is_a_clear_error_and_nothing_is_written(
    copy: Path, path: str, text: str, reason: str
) -> None:
    (copy / path).write_text(text, encoding="utf-8")
    before = _snapshot(copy)
    code, out = _cli("compat", "--root", str(copy))
    assert code == 2, out
    assert reason in out
    code, out = _cli("release", "9.0.0", "--root", str(copy))
    assert code == 1, out
    assert _snapshot(copy) == before


def test_release_records_its_commit_and_refuses_uncommitted_contracts(copy: Path) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(copy), "-c", "user.email=t@example.org", "-c", "user.name=t", *args],
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()

    ws = Workspace.load(copy)
    _unreleased(ws, "refunds.get describes itself better")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "the workspace")
    _edit(_specs(copy) / "tools/refunds.get.yaml", {"description": "One refund, by order."})
    before = _snapshot(copy / "contracts/releases")
    (major, minor, _) = baselines(ws.releases)[-1].record.key
    version = f"{major}.{minor + 1}.0"
    code, out = _cli("release", version, "--root", str(copy))
    assert (code, "uncommitted changes" in out) == (1, True), out
    assert _snapshot(copy / "contracts/releases") == before
    git("commit", "-qam", "the contract change")
    code, out = _cli("release", version, "--root", str(copy))
    assert code == 0, out
    assert baselines(ws.releases)[-1].record.commit == git("rev-parse", "HEAD")
