"""Releases that agree: one package version, the changelog, the recorded baselines, the list of
intended breaks, and the contracts of the working tree against the last release.

A workspace says where each of these lives in its root ``pyproject.toml``::

    [tool.accord.release]
    distributions = ["pyproject.toml", "contracts/pyproject.toml", ...]  # one version for all
    specs = ["contracts/accord/contracts/specs"]   # the contracts the workspace ships
    releases = "contracts/releases"                # one baseline folder per release
    intended_breaks = "contracts/intended-breaks.yaml"
    changelog = "CHANGELOG.md"

``check`` is what `make compat` runs on every CI run; ``cut`` is what `make release` runs.
The rules are docs/contract-evolution.md's "Releases and versions".
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.evolution.baseline import Baseline, baselines, newest, record_baseline
from accord.contracts.evolution.diff import DiffReport, diff_sets
from accord.contracts.evolution.intended import IntendedBreaks, load_intended_breaks
from accord.contracts.evolution.release_record import (
    ReleaseRecord,
    breaking_bump,
    package_release,
)
from accord.contracts.evolution.sources import ContractSet, add_folder
from accord.contracts.keys import CONTRACT_VERSION

WORKING_TREE: Final = "working tree"
# `version = "..."` in a pyproject's [project] table: the one line a release rewrites.
_PROJECT_VERSION: Final = re.compile(r'(?m)^(version\s*=\s*")([^"]*)(")')
# Keep a Changelog headings: "## [Unreleased]" and "## [0.2.0] - 2026-12-02".
_SECTION: Final = re.compile(r"(?m)^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?\s*$")
UNRELEASED: Final = "Unreleased"


def _invalid(message: str, **details: Any) -> AccordError:
    return AccordError(ErrorCode.INVALID_INPUT, message, details)


@dataclass(frozen=True)
class Workspace:
    root: Path
    distributions: tuple[Path, ...]
    specs: tuple[Path, ...]
    releases: Path
    intended_breaks: Path
    changelog: Path

    @classmethod
    def find(cls, start: Path) -> Workspace:
        """The workspace ``start`` is in: the nearest folder, ``start`` or above, whose
        ``pyproject.toml`` has a [tool.accord.release] table (as git finds its repository)."""
        for folder in (start.resolve(), *start.resolve().parents):
            pyproject = folder / "pyproject.toml"
            if pyproject.is_file() and "[tool.accord.release]" in pyproject.read_text("utf-8"):
                return cls.load(folder)
        raise _invalid(
            f"no pyproject.toml with a [tool.accord.release] table in {start.resolve()} or "
            "above (--root names the workspace)",
            start=str(start),
        )

    @classmethod
    def load(cls, root: Path) -> Workspace:
        pyproject = root / "pyproject.toml"
        try:
            table = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["accord"][
                "release"
            ]
            return cls(
                root=root,
                distributions=tuple(root / p for p in table["distributions"]),
                specs=tuple(root / p for p in table["specs"]),
                releases=root / table["releases"],
                intended_breaks=root / table["intended_breaks"],
                changelog=root / table["changelog"],
            )
        except OSError as exc:
            raise _invalid(
                f"{pyproject}: cannot be read ({exc.strerror})", file=str(pyproject)
            ) from None
        except (KeyError, TypeError, tomllib.TOMLDecodeError) as exc:
            raise _invalid(
                f"{pyproject}: no usable [tool.accord.release] table ({exc!r})",
                file=str(pyproject),
            ) from None

    def working_tree(self) -> ContractSet:
        found = ContractSet(label=WORKING_TREE)
        for folder in self.specs:
            add_folder(found, folder)
        return found

    def versions(self) -> dict[Path, str]:
        found: dict[Path, str] = {}
        for path in self.distributions:
            match = _PROJECT_VERSION.search(path.read_text(encoding="utf-8"))
            if match is None:
                raise _invalid(f"{path}: no version line", file=str(path))
            found[path] = match[2]
        return found

    def version(self) -> str:
        """The one version of every distribution; INVALID_INPUT when they disagree."""
        versions = self.versions()
        if len(set(versions.values())) != 1:
            listing = ", ".join(f"{p.relative_to(self.root)}={v}" for p, v in versions.items())
            raise _invalid(f"the distributions disagree on their version: {listing}")
        return next(iter(versions.values()))


def changelog_releases(text: str) -> list[tuple[str, str | None]]:
    """The changelog's sections in order: (version or "Unreleased", date or None)."""
    return [(m[1], m[2]) for m in _SECTION.finditer(text)]


def _check_changelog(ws: Workspace, recorded: list[Baseline]) -> list[str]:
    problems: list[str] = []
    sections = changelog_releases(ws.changelog.read_text(encoding="utf-8"))
    if not sections or sections[0] != (UNRELEASED, None):
        problems.append(f"{ws.changelog.name} must start with a '## [{UNRELEASED}]' section")
    released = [s for s in sections if s[0] != UNRELEASED]
    expected = [(b.record.version, b.record.date.isoformat()) for b in reversed(recorded)]
    if released != expected:
        problems.append(
            f"{ws.changelog.name} lists releases {released}; the recorded baselines are "
            f"{expected} (newest first, each '## [X.Y.Z] - YYYY-MM-DD')"
        )
    return problems


@dataclass(frozen=True)
class ReleaseCheck:
    version: str
    baseline: Baseline
    report: DiffReport
    intended: IntendedBreaks
    problems: list[str]


def _unannounced(report: DiffReport, intended: IntendedBreaks) -> list[str]:
    return [
        f"{f.contract} {f.rule} {f.path}"
        for f in report.findings
        if f.breaking and intended.excuses(f) is None
    ]


def check(ws: Workspace) -> ReleaseCheck:
    """Everything a release promises, checked against the working tree (``make compat``)."""
    recorded = baselines(ws.releases)
    last = newest(ws.releases)
    problems: list[str] = []
    version = ws.version()
    (release, dev) = package_release(version)
    if release < last.record.key or (release == last.record.key and dev):
        problems.append(f"version {version} is not after the last release {last.record.version}")
    if release > last.record.key and not dev:
        problems.append(
            f"version {version} is not recorded as a release: `make release VERSION={version}` "
            f"records it (or use {version}.dev0 until then)"
        )
    problems += _check_changelog(ws, recorded)
    intended = load_intended_breaks(ws.intended_breaks)
    if intended.against != last.record.tag:
        problems.append(
            f"{ws.intended_breaks.name} is reviewed against {intended.against}; "
            f"the last release is {last.record.tag}"
        )
    report = diff_sets(last.contracts(), ws.working_tree())
    problems += [f"unannounced breaking change: {u}" for u in _unannounced(report, intended)]
    if intended.breaks and not breaking_bump(last.record.key, release):
        problems.append(
            f"{len(intended.breaks)} intended breaks since {last.record.tag} need a major version "
            f"(a minor while the major is 0): {version} is not one"
        )
    return ReleaseCheck(version, last, report, intended, problems)


def history(ws: Workspace) -> list[tuple[Baseline, Baseline, list[str]]]:
    """Each release against the one before, with the breaks it did not announce (none, ever)."""
    recorded = baselines(ws.releases)
    found = []
    for old, new in itertools.pairwise(recorded):
        intended = (
            load_intended_breaks(new.intended_breaks)
            if new.intended_breaks.is_file()
            else IntendedBreaks()
        )
        report = diff_sets(old.contracts(), new.contracts())
        found.append((old, new, _unannounced(report, intended)))
    return found


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _uncommitted_specs(ws: Workspace) -> str | None:
    """What git says is changed in the specs (None outside git): the commit a release records
    must hold exactly the contracts it records."""
    return _git(ws.root, "status", "--porcelain", "--", *(str(p) for p in ws.specs))


def cut(ws: Workspace, version: str, today: dt.date) -> Baseline:
    """Record release ``version``: the changelog's Unreleased section becomes it, the working
    tree's contracts become its baseline, the intended breaks move into it, every distribution
    says the version. Refused (nothing written) when any rule of ``check`` would fail after."""
    before = check(ws)
    (release, dev) = package_release(version)
    if dev:
        raise _invalid(f"a release version is X.Y.Z, not {version}")
    last = before.baseline.record
    blocking = [p for p in before.problems if "is not recorded as a release" not in p]
    if release <= last.key:
        blocking.append(f"{version} is not after the last release {last.version}")
    if before.intended.breaks and not breaking_bump(last.key, release):
        blocking.append(
            f"{len(before.intended.breaks)} intended breaks since {last.tag}: {version} must be "
            "a major version (a minor while the major is 0)"
        )
    text = ws.changelog.read_text(encoding="utf-8")
    unreleased = _unreleased_body(text)
    if not unreleased.strip("\n -#").strip():
        blocking.append(f"{ws.changelog.name}: the [{UNRELEASED}] section is empty")
    if _uncommitted_specs(ws):
        blocking.append("the contracts have uncommitted changes: commit them first")
    if blocking:
        raise _invalid("cannot release " + version + ": " + "; ".join(blocking))
    record = ReleaseRecord(
        version=version,
        commit=_git(ws.root, "rev-parse", "HEAD"),
        date=today,
        contract_version=CONTRACT_VERSION,
    )
    baseline = record_baseline(ws.working_tree(), record, ws.releases, ws.intended_breaks)
    ws.changelog.write_text(
        text.replace(
            f"## [{UNRELEASED}]",
            f"## [{UNRELEASED}]\n\n## [{version}] - {today.isoformat()}",
            1,
        ),
        encoding="utf-8",
    )
    ws.intended_breaks.write_text(_fresh_intended(ws.intended_breaks, record.tag), "utf-8")
    for path in ws.distributions:
        content = path.read_text(encoding="utf-8")
        path.write_text(_PROJECT_VERSION.sub(rf"\g<1>{version}\g<3>", content, 1), "utf-8")
    return baseline


def _unreleased_body(text: str) -> str:
    sections = list(_SECTION.finditer(text))
    for i, match in enumerate(sections):
        if match[1] == UNRELEASED:
            end = sections[i + 1].start() if i + 1 < len(sections) else len(text)
            return text[match.end() : end]
    return ""


def _fresh_intended(path: Path, tag: str) -> str:
    """The list emptied for the next release: its header comment kept, `against` the new tag."""
    header = []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if not line.startswith("#"):
            break
        header.append(line)
    return "".join(header) + yaml.safe_dump({"against": tag, "breaks": []}, sort_keys=False)
