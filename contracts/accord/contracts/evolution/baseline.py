"""Release baselines: what each release promised, recorded in the repository.

A baseline is one folder per release (``contracts/releases/v0.2.0/``):

- ``release.yaml``: version, commit, date, mesh contract version (release_record.py);
- ``agents/NAME.yaml`` and ``tools/NAME.yaml``: every agent and tool contract of the release,
  named by contract, not by where the specs lived, so a baseline survives the specs moving;
- ``registry.json``: the error registry and status mapping snapshot, when the release had one;
- ``intended-breaks.yaml``: the reviewed breaks this release announced against the one before.

The compatibility check compares the working tree with the newest baseline by content: it needs
no git tag, no history and no network, so it runs the same on every clone (issue #29).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import yaml

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.evolution.release_record import RELEASE_FILE, ReleaseRecord, read_release
from accord.contracts.evolution.sources import REGISTRY_SNAPSHOT, ContractSet, load_side

INTENDED_FILE: Final = "intended-breaks.yaml"
_KIND_FOLDER: Final = {"agent": "agents", "tool": "tools"}


@dataclass(frozen=True)
class Baseline:
    folder: Path
    record: ReleaseRecord

    def contracts(self) -> ContractSet:
        return load_side(str(self.folder))

    @property
    def intended_breaks(self) -> Path:
        return self.folder / INTENDED_FILE


def baselines(releases: Path) -> list[Baseline]:
    """Every recorded release under ``releases``, oldest first."""
    if not releases.is_dir():
        return []
    found = [
        Baseline(folder=record.parent, record=read_release(record))
        for record in sorted(releases.glob(f"*/{RELEASE_FILE}"))
    ]
    for baseline in found:
        if baseline.folder.name != baseline.record.tag:
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                f"{baseline.folder}: the folder of release {baseline.record.version} must be "
                f"named {baseline.record.tag}",
                {"folder": str(baseline.folder)},
            )
    return sorted(found, key=lambda b: b.record.key)


def newest(releases: Path) -> Baseline:
    found = baselines(releases)
    if not found:
        raise AccordError(
            ErrorCode.NOT_FOUND,
            f"no release is recorded under {releases} (a folder per release with {RELEASE_FILE})",
            {"releases": str(releases)},
        )
    return found[-1]


def record_baseline(
    contracts: ContractSet, record: ReleaseRecord, releases: Path, intended_breaks: Path | None
) -> Baseline:
    """Write a new baseline folder for ``record`` holding ``contracts`` (their text as read)."""
    folder = releases / record.tag
    if folder.exists():
        raise AccordError(
            ErrorCode.IDEMPOTENCY_CONFLICT,
            f"release {record.version} is already recorded in {folder}",
            {"folder": str(folder)},
        )
    if not contracts.contracts:
        raise AccordError(ErrorCode.INVALID_INPUT, f"{contracts.label}: no contracts to record", {})
    folder.mkdir(parents=True)
    for cid, text in sorted(contracts.texts.items()):
        kind, name = cid.split(":", 1)
        path = folder / _KIND_FOLDER[kind] / f"{name}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if contracts.registry is not None:
        (folder / REGISTRY_SNAPSHOT).write_text(
            json.dumps(contracts.registry, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    if intended_breaks is not None and intended_breaks.is_file():
        shutil.copyfile(intended_breaks, folder / INTENDED_FILE)
    (folder / RELEASE_FILE).write_text(
        yaml.safe_dump(record.model_dump(mode="json", exclude_none=True), sort_keys=False),
        encoding="utf-8",
    )
    return Baseline(folder=folder, record=record)
