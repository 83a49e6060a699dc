"""The reviewed list of intended breaks: a breaking change named here does not fail the check.

Each entry names the contract, the rule and the path of one finding exactly, and says why the
break is meant (a reviewer reads the reason, so it is required). An entry that matches nothing
is reported, so the list does not outlive the breaks it excuses.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from accord.contracts.evolution.findings import Finding
from accord.contracts.evolution.rules import RULES
from accord.contracts.loading import read_yaml, validate_model


class IntendedBreak(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    contract: str = Field(min_length=1, max_length=200)
    rule: str = Field(min_length=1, max_length=100)
    path: str = Field(max_length=1000)
    reason: str = Field(min_length=10, max_length=2000)

    def matches(self, finding: Finding) -> bool:
        return (self.contract, self.rule, self.path) == (
            finding.contract,
            finding.rule,
            finding.path,
        )


class IntendedBreaks(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # The release the entries were reviewed against; a list for another release excuses
    # nothing, so that an old reason never covers a new break at the same path.
    against: str | None = Field(default=None, max_length=200)
    breaks: list[IntendedBreak] = Field(default_factory=list, max_length=1000)

    def model_post_init(self, _context: object) -> None:
        unknown = sorted({b.rule for b in self.breaks} - RULES.keys())
        if unknown:
            raise ValueError(f"unknown rules: {', '.join(unknown)}")

    def applies_to(self, old: str) -> bool:
        return self.against is None or self.against == old

    def excuses(self, finding: Finding) -> IntendedBreak | None:
        return next((b for b in self.breaks if b.matches(finding)), None)

    def unused(self, findings: list[Finding]) -> list[IntendedBreak]:
        return [b for b in self.breaks if not any(b.matches(f) for f in findings)]


def load_intended_breaks(path: Path | str) -> IntendedBreaks:
    p = Path(path)
    return validate_model(IntendedBreaks, read_yaml(p), p)
