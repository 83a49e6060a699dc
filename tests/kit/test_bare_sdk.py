"""A tool server on the bare mcp SDK (tests/kit/bare_sdk_tools.py, a real process) with its own
contract file: `accord tools check --contract` and the kit's TOOL-005 agree that the SDK's
`title` keys are no difference (issue #33), and the kit tells its authors how a bare SDK puts a
tool error in `_meta`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from accord.contracts.tools import load_tool_contract
from accord.kit import KitOptions, Report, Verdict, run_kit
from accord.kit.model import TargetKind
from accord.kit.probes import Probes, ToolProbe
from accord.kit.run_checks import checks_for
from tests.kit.conftest import ROOT, run_module
from tests.support import forked

MODULE = "tests.kit.bare_sdk_tools"
CONTRACT = Path(__file__).parent / "contracts" / "stock.check.yaml"
PROBES = Probes(
    tools={
        "stock.check": ToolProbe(
            valid={"sku": "S-1", "quantity": 1}, not_found={"sku": "S-404", "quantity": 1}
        )
    }
)


def _kit(url: str) -> Report:
    options = KitOptions(probes=PROBES, contracts=(load_tool_contract(CONTRACT),), timeout_s=15)
    return asyncio.run(run_kit([url], options))


def _outcomes(report: Report, req: str) -> dict[str, Verdict]:
    return {r.check: r.outcome for r in report.by_requirement(req)}


@pytest.fixture(scope="module")
def meta_errors(kit_logs: Path) -> Iterator[str]:
    with run_module(MODULE, "meta-errors", kit_logs) as url:
        yield url + "/mcp"


def test_tools_check_and_the_kit_agree_the_sdk_schemas_are_the_contracts(
    meta_errors: str,
) -> None:
    done = forked.run(
        ["tools", "check", meta_errors, "--contract", str(CONTRACT), "--json"],
        forked.bare_env(),
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["findings"] == []
    report = _kit(meta_errors)
    mcp_checks = {c.name for c in checks_for(TargetKind.MCP) if c.requirement == "TOOL-005"}
    assert _outcomes(report, "TOOL-005") == dict.fromkeys(mcp_checks, Verdict.PASS)
    assert set(_outcomes(report, "TOOL-004").values()) == {Verdict.PASS}
    assert set(_outcomes(report, "TOOL-008").values()) == {Verdict.PASS}


def test_an_error_in_meta_passes_and_the_sdks_own_errors_say_how_to_fix_them(
    meta_errors: str,
) -> None:
    report = _kit(meta_errors)
    tool_009 = _outcomes(report, "TOOL-009")
    assert tool_009["an unknown or foreign resource is NOT_FOUND"] is Verdict.PASS
    # Bad arguments reach the SDK's own validation: text, no code.
    [invalid] = [r for r in report.failures if r.check == "invalid input is INVALID_INPUT"]
    [shape] = report.by_requirement("ERR-005")
    assert shape.outcome is Verdict.FAIL
    for failure in (invalid, shape):
        text = failure.failure_message()
        assert "CallToolResult" in text, text
        assert '_meta={"dev.accord/error": E}' in text, text
        assert "see: docs/porting.md#tool-errors" in text


def test_a_tool_error_raised_as_text_is_not_found_only_in_words(kit_logs: Path) -> None:
    with run_module(MODULE, "text-errors", kit_logs) as url:
        report = _kit(url + "/mcp")
    [missing] = [r for r in report.failures if r.check.endswith("is NOT_FOUND")]
    assert "no code in _meta" in missing.detail
    assert "raise ToolError" in missing.detail  # the way it was done, and why it carries no code
