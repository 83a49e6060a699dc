"""What the kit reports: one result per check, tagged with a requirement ID of the manifest.

A check either passes, fails with a :class:`Violation` (what was sent, what came back, what the
contract says), or is skipped with a reason (a credential or a probe it needs is missing, the
implementation does not claim the capability, or the user skipped the requirement).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from accord.contracts.manifest import requirement

TRIM: Final = 600  # characters of a request or an answer shown in a failure


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


class TargetKind(StrEnum):
    A2A = "a2a"
    MCP = "mcp"


def trim(value: Any, limit: int = TRIM) -> str:
    """A short, readable rendering of a wire value for a report."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Violation(Exception):  # noqa: N818 - a finding, not an error of the kit
    """A check found the implementation outside the contract."""

    def __init__(
        self, detail: str, *, sent: Any = None, received: Any = None, expected: str = ""
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.sent = sent
        self.received = received
        self.expected = expected


class Skipped(Exception):  # noqa: N818 - mirrors pytest.skip
    """A check cannot run here; the reason says why (and what would make it run)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class CheckResult:
    requirement: str
    check: str
    target: str
    outcome: Verdict
    detail: str = ""
    sent: str = ""
    received: str = ""
    expected: str = ""

    @property
    def requirement_text(self) -> str:
        return requirement(self.requirement).text

    @property
    def hint(self) -> str:
        """How to fix an implementation that breaks the requirement (the manifest's hint)."""
        return requirement(self.requirement).hint

    @property
    def link(self) -> str:
        """The porting guide's section on the requirement (docs/porting.md#...)."""
        return requirement(self.requirement).link

    @property
    def name(self) -> str:
        return f"{self.requirement} {self.check}"

    def failure_message(self) -> str:
        """Everything a reader needs to act on a violation, in one block of text: what was
        found, the exchange, the contract, and how to fix it (the table, JUnit and the pytest
        plugin all show this)."""
        lines = [f"{self.requirement}: {self.detail}"]
        if self.sent:
            lines.append(f"sent: {self.sent}")
        if self.received:
            lines.append(f"received: {self.received}")
        lines.append(f"contract: {self.expected or self.requirement_text}")
        lines.append(f"fix: {self.hint}")
        lines.append(f"see: {self.link}")
        return "\n".join(lines)


@dataclass
class Report:
    results: list[CheckResult] = field(default_factory=list)

    @property
    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if r.outcome is Verdict.FAIL]

    @property
    def ok(self) -> bool:
        return not self.failures

    def by_requirement(self, req_id: str) -> list[CheckResult]:
        return [r for r in self.results if r.requirement == req_id]

    def failed_requirements(self) -> set[str]:
        return {r.requirement for r in self.failures}
