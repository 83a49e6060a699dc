"""The kit catches real breakage: each deliberately broken server is reported under the
requirement it breaks, and the same requirement passes against the control (mode "correct")."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from accord.agents.refund.kit_probes import PROBES
from accord.kit import Credential, KitOptions, Report, Verdict, run_kit
from accord.kit.probes import Probes
from tests.kit.conftest import run_module

AGENT = "tests.kit.broken_agent"
TOOLS = "tests.kit.broken_tools"
# The broken agent declines a DataPart {"decline": true} (STATUS-008's probe).
_POLICY = PROBES.agents["refund.policy"].model_copy(update={"decline": {"decline": True}})
OPTIONS = KitOptions(
    credential=Credential(token="tenant-a"),
    other=Credential(token="tenant-b"),
    timeout_s=15.0,
    probes=PROBES.merged(Probes(agents={"refund.policy": _POLICY})),
)

# mode -> the requirements its breakage must be reported under
AGENT_BREAKAGE = {
    "mapping": {"STATUS-005"},
    "illegal": {"STATUS-003"},
    "no-code": {"ERR-002", "ENV-004", "ENV-005"},
    "leak": {"AGENT-004"},
    "schemas": {"AGENT-002"},
    "fail-decline": {"STATUS-008"},
    "late-answer": {"ENV-009"},
    "no-spent": {"ENV-010"},
}
TOOL_BREAKAGE = {
    "not-idempotent": {"TOOL-006"},
    "annotations": {"TOOL-004", "TOOL-005"},
    "structured-error": {"ERR-005", "TOOL-009"},
    "open": {"TOOL-010", "TOOL-011", "TOOL-012"},
}


def _report(module: str, mode: str, logs: Path) -> Report:
    with run_module(module, mode, logs) as url:
        return asyncio.run(run_kit([url], OPTIONS))


class Reports(dict[tuple[str, str], Report]):
    """Kit reports by (module, mode), each server started once per test module."""

    def __init__(self, logs: Path) -> None:
        super().__init__()
        self.logs = logs

    def __missing__(self, key: tuple[str, str]) -> Report:
        self[key] = _report(*key, self.logs)
        return self[key]


@pytest.fixture(scope="module")
def reports(kit_logs: Path) -> Reports:
    return Reports(kit_logs)


def _failed(report: Report) -> set[str]:
    return report.failed_requirements()


@pytest.mark.parametrize(("mode", "broken"), sorted(AGENT_BREAKAGE.items()))
def test_broken_agent_is_reported(reports: Reports, mode: str, broken: set[str]) -> None:
    report = reports[(AGENT, mode)]
    assert broken <= _failed(report), [r.failure_message() for r in report.failures]
    for r in report.failures:
        if r.requirement in broken:
            assert r.detail
            assert r.requirement_text in r.failure_message() or r.expected


@pytest.mark.parametrize(("mode", "broken"), sorted(TOOL_BREAKAGE.items()))
def test_broken_tool_server_is_reported(reports: Reports, mode: str, broken: set[str]) -> None:
    report = reports[(TOOLS, mode)]
    assert broken <= _failed(report), [r.failure_message() for r in report.failures]


@pytest.mark.parametrize("mode", ["correct", "v0.2"])
def test_control_agent_passes_what_the_broken_ones_fail(reports: Reports, mode: str) -> None:
    """Mode v0.2 writes status metadata as Accord 0.2 did (``rejected``, ``waiting_reason``):
    the kit of 0.3 still reads it (until 0.4.0, accord.contracts.compat)."""
    report = reports[(AGENT, mode)]
    every = set().union(*AGENT_BREAKAGE.values())
    assert not every & _failed(report), [r.failure_message() for r in report.failures]
    ran = {r.requirement for r in report.results if r.outcome is Verdict.PASS}
    assert every <= ran  # really checked, not skipped


def test_control_tool_server_passes_everything(reports: Reports) -> None:
    report = reports[(TOOLS, "correct")]
    assert report.ok, [r.failure_message() for r in report.failures]
    ran = {r.requirement for r in report.results if r.outcome is Verdict.PASS}
    assert set().union(*TOOL_BREAKAGE.values()) | {"TOOL-007", "TOOL-008"} <= ran


def test_without_credentials_authenticated_checks_skip_with_a_reason(kit_logs: Path) -> None:
    with run_module(AGENT, "correct", kit_logs) as url:
        report = asyncio.run(run_kit([url], KitOptions(timeout_s=15.0)))
    skipped = [r for r in report.results if r.outcome is Verdict.SKIP]
    assert any(r.requirement == "AGENT-005" and "--token" in r.detail for r in skipped)
    assert any(r.requirement == "AGENT-003" and r.outcome is Verdict.PASS for r in report.results)


SCHEMAS_CHECK = "card names its skills' input and output schemas, public and cacheable"


def test_skill_schemas_are_checked_against_the_cards_digest(reports: Reports) -> None:
    def outcome(mode: str) -> Verdict:
        (found,) = [r for r in reports[(AGENT, mode)].results if r.check == SCHEMAS_CHECK]
        return found.outcome

    assert outcome("correct") is Verdict.PASS
    assert outcome("schemas") is Verdict.FAIL
