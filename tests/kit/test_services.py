"""The kit passes against Accord's own services, run as real processes with real tokens."""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from pathlib import Path

import pytest

from accord.kit import Credential, KitOptions, Report, Verdict, run_kit
from accord.protocol.auth import mint_token
from tests.support.policy_versions import policy_1_0, policy_2_0, write_contracts
from tests.support.processes import run_service
from tests.support.service_keys import TEST_SERVICE, sign_as
from tests.support.tool_auth import ALL_TOOLS, SKILL_GRANTS
from tests.support.tool_servers import run_commerce

SECRET = "contract-test-secret-0123456789-0123456789"


def _env(tmp_path: Path) -> dict[str, str]:
    return {"ACCORD_DATA_DIR": str(tmp_path), "ACCORD_JWT_SECRET": SECRET}


def _kit(url: str, *, other: bool = False) -> Report:
    # A service granted every shipped tool (the tool servers check the grant per tool) and
    # every shipped skill (the agents check theirs: AGENT-009).
    token = sign_as(TEST_SERVICE, scopes=ALL_TOOLS + SKILL_GRANTS)
    options = KitOptions(
        credential=Credential(token=token),
        other=Credential(token=mint_token("C-02", ["customer"], secret=SECRET) if other else None),
        timeout_s=15.0,
    )
    return asyncio.run(run_kit([url], options))


def _passed(report: Report) -> set[str]:
    return {r.requirement for r in report.results if r.outcome is Verdict.PASS}


def test_policy_agent_keeps_the_contract(tmp_path: Path, log_dir: Path) -> None:
    with run_service(
        "policy", ["serve", "policy"], env=_env(tmp_path), log_dir=log_dir, deadline_s=90
    ) as svc:
        report = _kit(svc.url, other=True)
    assert report.ok, "\n\n".join(r.failure_message() for r in report.failures)
    assert {
        "AGENT-004",
        "AGENT-005",
        "AGENT-006",
        "ENV-004",
        "ENV-005",
        "STATUS-003",
        "STATUS-005",
        "STATUS-007",
        "ERR-002",
    } <= _passed(report)
    passed = {r.check for r in report.results if r.outcome is Verdict.PASS}
    assert {
        "card names its skills' input and output schemas, public and cacheable",
        "the skill's answer follows the output schema its card names",
    } <= passed


@pytest.mark.parametrize(
    ("name", "must_pass"),
    [
        (
            "payments",
            {"TOOL-004", "TOOL-005", "TOOL-006", "TOOL-007", "TOOL-008", "ERR-005"}
            | {"TOOL-010", "TOOL-011", "TOOL-012", "TOOL-013"},
        ),
        (
            "commerce",
            {"TOOL-004", "TOOL-005", "TOOL-008", "TOOL-009", "ERR-005", "TOOL-010", "TOOL-012"},
        ),
    ],
)
def test_tool_servers_keep_the_contract(
    tmp_path: Path, log_dir: Path, name: str, must_pass: set[str]
) -> None:
    with ExitStack() as stack:
        if name == "commerce":  # commerce reads refunds from the payments ledger
            svc, _ = stack.enter_context(run_commerce(_env(tmp_path), log_dir))
        else:
            svc = stack.enter_context(
                run_service(
                    name, ["serve", name], env=_env(tmp_path), log_dir=log_dir, deadline_s=90
                )
            )
        report = _kit(svc.url + "/mcp", other=True)  # a customer: refused by the write tools
    assert report.ok, "\n\n".join(r.failure_message() for r in report.failures)
    assert must_pass <= _passed(report)
    if name == "payments":  # one TOOL-013 check per stated version, named for it
        stated = {r.check for r in report.results if r.requirement == "TOOL-013"}
        assert "a stated contract version agrees with its contract: refunds.issue 1.2.0" in stated


def test_the_kit_checks_each_contract_version_an_agent_states(
    tmp_path: Path, log_dir: Path
) -> None:
    contracts = write_contracts(tmp_path / "contracts", policy_2_0(["1.0.0"]), policy_1_0())
    with run_service(
        "policy",
        ["serve", "policy"],
        env={**_env(tmp_path), **contracts},
        log_dir=log_dir,
        deadline_s=90,
    ) as svc:
        report = _kit(svc.url)
    assert report.ok, "\n\n".join(r.failure_message() for r in report.failures)
    versions = {r.check: r.outcome for r in report.results if r.requirement == "AGENT-008"}
    served = "a task naming a stated contract version is answered in it"
    assert versions == {
        f"{served}: 2.0.0": Verdict.PASS,
        f"{served}: 1.0.0": Verdict.PASS,
        "a task naming a major the agent does not serve is VERSION_UNSUPPORTED": Verdict.PASS,
    }
