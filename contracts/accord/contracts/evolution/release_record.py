"""What one release promised, as recorded in its baseline folder (``release.yaml``).

A release baseline (``contracts/releases/v0.2.0/``) holds this record beside the release's agent
and tool contracts and its registry snapshot (accord.contracts.evolution.baseline). The record
names the release by version, the commit it was cut from (for people and for tests that install
the old code; the comparison itself never needs git), the day, and the mesh contract's version.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from accord.contracts.loading import read_yaml, validate_model
from accord.contracts.versions import SEMVER, semver

RELEASE_FILE: Final = "release.yaml"
COMMIT: Final = r"^[0-9a-f]{40}$"
# A package version on the way to a release: the release's own X.Y.Z, or X.Y.Z.devN before it
# (PEP 440, which is what the distributions' metadata holds).
PACKAGE_VERSION: Final = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:\.dev(\d+))?$")


class ReleaseRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str = Field(pattern=SEMVER, max_length=64)
    commit: str | None = Field(default=None, pattern=COMMIT)
    date: dt.date
    contract_version: str = Field(pattern=SEMVER, max_length=64)

    @field_validator("version")
    @classmethod
    def _plain(cls, value: str) -> str:
        if "-" in value:
            raise ValueError("a release version has no pre-release part")
        return value

    @property
    def tag(self) -> str:
        return f"v{self.version}"

    @property
    def key(self) -> tuple[int, int, int]:
        return semver(self.version)


def read_release(path: Path) -> ReleaseRecord:
    return validate_model(ReleaseRecord, read_yaml(path), path)


def package_release(version: str) -> tuple[tuple[int, int, int], bool]:
    """(X, Y, Z) of a package version and whether it is a development version before it."""
    match = PACKAGE_VERSION.match(version)
    if match is None:
        raise ValueError(f"not a package version (X.Y.Z or X.Y.Z.devN): {version!r}")
    return (int(match[1]), int(match[2]), int(match[3])), match[4] is not None


def breaking_bump(old: tuple[int, int, int], new: tuple[int, int, int]) -> bool:
    """Whether ``new`` is a major bump of ``old`` by semantic versioning's rules: the major
    goes up, or, while the major is 0 (anything may change), the minor does."""
    if old[0] == 0:
        return new[:2] > old[:2]
    return new[0] > old[0]
