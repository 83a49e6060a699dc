"""The TypeScript risk-check (agents/ts/risk-check) is a member of the mesh: the contract test
kit, run against it as a real process, finds no violation.

The test runs the member's own script (scripts/kit.sh, what `make ts-member` runs): it builds
@accord/contract and the member, starts payments and commerce (`accord serve`) and the member
(`node dist/server.js`) in a fresh data directory, and runs `accord contract-test` against it
with the kit's own token. The kit's JUnit report is what this test judges: no failure, and
only the skips listed below, each for its reason. Skipped locally when the npm packages are
not installed (`make npm`); on CI (CI set) it must run.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest
from tests.interop.member_kit import run_member_kit
from tests.mesh.mesh_support import ROOT, node_env
from tests.support.ports import free_port

from accord.agents.risk_rules import CustomerHistory, assess

pytestmark = [pytest.mark.node, pytest.mark.timeout(240)]

MEMBER: Final = ROOT / "agents" / "ts" / "risk-check"

# The checks the kit skips for this member, each for a reason of the member's scope (README.md,
# "What it does not do"), not for a fault. A new skip, or any failure, fails the test.
EXPECTED_SKIPS: Final = {
    # JSON-RPC is its one binding.
    "AGENT-003 HTTP+JSON without a credential is 401",
    "AGENT-004 unknown task is 404 over HTTP+JSON",
    "ERR-004 HTTP+JSON errors carry the registry status and one ErrorInfo with the code",
    # refund.risk never waits and never declines (as the Python agent).
    "AGENT-005 a task waiting for input continues in the same task",
    "STATUS-008 a declined request ends A2A REJECTED: failed, declined, with its code",
    "AGENT-006 cancel of a waiting task ends it CANCELED",
    "ENV-009 an answer to a waiting task that has ended is refused and changes nothing",
}


def _member_ready() -> dict[str, str]:
    env = node_env()  # skips locally (fails on CI) without the interop npm packages
    if not (MEMBER / "node_modules").is_dir():
        if os.environ.get("CI"):
            pytest.fail("agents/ts/risk-check/node_modules is missing on CI (make npm)")
        pytest.skip("the TypeScript member's npm packages are not installed (make npm)")
    return env


def test_kit_finds_no_violation_in_the_typescript_risk_check(tmp_path: Path) -> None:
    env = _member_ready()
    junit = tmp_path / "kit.xml"
    env.update(
        BIN=str(Path(sys.executable).parent),
        COMMERCE_PORT=str(free_port()),
        PAYMENTS_PORT=str(free_port()),
        RISK_PORT=str(free_port()),
    )
    run = run_member_kit(MEMBER / "scripts" / "kit.sh", env, junit, timeout_s=200)
    run.assert_clean(EXPECTED_SKIPS)
    passed = run.passed
    # It answered the skill as its card's output schema says, and kept the status metadata.
    assert "AGENT-002 the skill's answer follows the output schema its card names" in passed
    assert "STATUS-007 every status update carries dev.accord/status" in passed
    # A trusted service whose token lacks refund.risk is refused before any task, and it does
    # not see the kit's tasks (kit.sh's second credential).
    assert "AGENT-009 a principal the skill's access does not admit is PERMISSION_DENIED" in passed
    assert "AGENT-004 another tenant's task is NOT_FOUND, with no data" in passed
    assert len(passed) >= 31


# Around each rule's edge: the threshold, 3 refunds, a chargeback, 30 days, 100,000 cents.
THRESHOLD: Final = 50_000
CASES: Final = [
    {
        "amount": amount,
        "refunds_90d": refunds,
        "chargebacks": chargebacks,
        "account_age_days": age,
        "refunded_cents_90d": refunded,
    }
    for amount, refunds, chargebacks, age, refunded in itertools.product(
        (0, THRESHOLD - 1, THRESHOLD), (2, 3), (0, 1), (29, 30), (100_000, 100_001)
    )
]
ASSESS_ALL: Final = """
import { assess } from "./dist/rules.js";
const cases = JSON.parse(process.argv[1]);
const history = (c) => ({ customer_id: "C-01", orders_total: 9, orders_90d: 3, ...c });
const threshold = Number(process.argv[2]);
console.log(JSON.stringify(cases.map((c) => assess(c.amount, history(c), threshold))));
"""


def test_the_typescript_rules_score_as_python_does() -> None:
    env = _member_ready()
    subprocess.run(
        ["npm", "run", "--silent", "build"],
        cwd=ROOT / "contracts" / "ts",
        env=env,
        check=True,
        timeout=120,
    )
    subprocess.run(
        ["npm", "run", "--silent", "build"], cwd=MEMBER, env=env, check=True, timeout=120
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", ASSESS_ALL, json.dumps(CASES), str(THRESHOLD)],
        cwd=MEMBER,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    typescript = json.loads(done.stdout)
    python = [
        assess(
            c["amount"],
            CustomerHistory(
                customer_id="C-01",
                orders_total=9,
                orders_90d=3,
                **{k: v for k, v in c.items() if k != "amount"},
            ),
            THRESHOLD,
        ).model_dump(mode="json")
        for c in CASES
    ]
    assert len(typescript) == len(CASES) == 48
    assert typescript == python
    assert {a["risk"] for a in python} == {"low", "high"}
