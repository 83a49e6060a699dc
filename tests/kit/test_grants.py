"""A credential that lacks a grant the probe needs is the run's problem, not the target's: the
kit skips those checks, naming the grant and how to mint a credential with it (issue #33: the
example of docs/contract-test.md once reported Accord's own servers as violating the contract).
Real services, real service tokens signed by the test service's own key."""

from __future__ import annotations

import asyncio
from pathlib import Path

from accord.kit import Credential, KitOptions, Report, Verdict, run_kit
from tests.support.processes import run_service
from tests.support.service_keys import TEST_SERVICE, sign_as
from tests.support.tool_auth import ALL_TOOLS

SECRET = "contract-test-secret-0123456789-0123456789"
ENV = {"ACCORD_JWT_SECRET": SECRET}


def _kit(url: str, scopes: tuple[str, ...]) -> Report:
    token = sign_as(TEST_SERVICE, scopes=scopes)
    return asyncio.run(run_kit([url], KitOptions(credential=Credential(token=token))))


def _skips_naming(report: Report, grant: str) -> list[str]:
    return [
        r.detail
        for r in report.results
        if r.outcome is Verdict.SKIP and "PERMISSION_DENIED" in r.detail and grant in r.detail
    ]


def test_a_tool_grant_the_token_lacks_is_a_skip_naming_it(tmp_path: Path, log_dir: Path) -> None:
    reads = tuple(t for t in ALL_TOOLS if t != "refunds.issue")
    env = {**ENV, "ACCORD_DATA_DIR": str(tmp_path)}
    with run_service(
        "payments", ["serve", "payments"], env=env, log_dir=log_dir, deadline_s=90
    ) as svc:
        report = _kit(svc.url + "/mcp", reads)
    assert report.ok, "\n\n".join(r.failure_message() for r in report.failures)
    skips = _skips_naming(report, "refunds.issue")
    assert skips, [(r.name, r.outcome, r.detail) for r in report.results]
    assert all(f"accord keys token {TEST_SERVICE} --scope refunds.issue" in s for s in skips)
    idempotent = report.by_requirement("TOOL-006")
    assert {r.outcome for r in idempotent} == {Verdict.SKIP}
    # What the token may do is still checked.
    assert any(r.outcome is Verdict.PASS for r in report.by_requirement("TOOL-008"))


def test_a_skill_grant_the_token_lacks_is_a_skip_naming_it(tmp_path: Path, log_dir: Path) -> None:
    env = {**ENV, "ACCORD_DATA_DIR": str(tmp_path)}
    with run_service("policy", ["serve", "policy"], env=env, log_dir=log_dir, deadline_s=90) as svc:
        report = _kit(svc.url, ALL_TOOLS)  # every tool, but not the skill refund.policy
    assert report.ok, "\n\n".join(r.failure_message() for r in report.failures)
    skips = _skips_naming(report, "refund.policy")
    assert skips, [(r.name, r.outcome, r.detail) for r in report.results]
    assert all("--scope refund.policy" in s for s in skips)
    # The refusal the kit expects of a principal the skill does not admit still passes.
    refused = "a principal the skill's access does not admit is PERMISSION_DENIED"
    assert [r.outcome for r in report.results if r.check == refused] == [Verdict.PASS]
