"""The Go policy-check (agents/go/policy-check) is a member of the mesh: the contract test kit,
run against it as a real process, finds no violation; and its rules answer as Python's.

The first test runs the member's own script (scripts/kit.sh, what `make go-member` runs): it
builds the member with the Go toolchain (the pinned modules fetched through the Go module proxy
when the module cache lacks them), starts payments and commerce (`accord serve`) and the member
in a fresh data directory, and runs `accord contract-test` against it with the kit's own token.
The kit's JUnit report is what this test judges: no failure, and only the skips listed below,
each for its reason. Skipped, saying so, only when the `go` command is absent.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

import pytest
from tests.interop.member_kit import run_member_kit
from tests.mesh.mesh_support import ROOT
from tests.support.ports import free_port

from accord.agents.policy_rules import EvidenceNeeded, PolicyRequest, evaluate
from accord.contracts.agents import agent_contract
from accord.contracts.errors import AccordError
from accord.protocol.a2a.server.skill_schemas import SkillSchemas

pytestmark = [pytest.mark.go, pytest.mark.timeout(300)]

MEMBER: Final = ROOT / "agents" / "go" / "policy-check"
USUAL_GO: Final = Path("/usr/local/go/bin/go")

# The checks the kit skips for this member, each for a reason of the member's scope (README.md,
# "What it does not do"), not for a fault. A new skip, or any failure, fails the test.
EXPECTED_SKIPS: Final = {
    # JSON-RPC is its one binding.
    "AGENT-003 HTTP+JSON without a credential is 401",
    "AGENT-004 unknown task is 404 over HTTP+JSON",
    "ERR-004 HTTP+JSON errors carry the registry status and one ErrorInfo with the code",
    # refund.policy never declines (as the Python agent).
    "STATUS-008 a declined request ends A2A REJECTED: failed, declined, with its code",
}


def _go() -> str:
    found = shutil.which("go") or (str(USUAL_GO) if USUAL_GO.is_file() else None)
    if found is None:
        pytest.skip("go is not installed: the Go member needs the Go toolchain")
    return found


def test_kit_finds_no_violation_in_the_go_policy_check(tmp_path: Path) -> None:
    go = _go()
    junit = tmp_path / "kit.xml"
    env = {
        **os.environ,
        "BIN": str(Path(sys.executable).parent),
        "GO": go,
        "COMMERCE_PORT": str(free_port()),
        "PAYMENTS_PORT": str(free_port()),
        "POLICY_PORT": str(free_port()),
    }
    run = run_member_kit(MEMBER / "scripts" / "kit.sh", env, junit, timeout_s=280)
    run.assert_clean(EXPECTED_SKIPS)
    passed = run.passed
    # The need-more-information turn, in the same task, and its cancel.
    assert "AGENT-005 a task waiting for input continues in the same task" in passed
    assert "AGENT-006 cancel of a waiting task ends it CANCELED" in passed
    # It answered the skill as its card's output schema says, and kept the status metadata.
    assert "AGENT-002 the skill's answer follows the output schema its card names" in passed
    assert "STATUS-007 every status update carries dev.accord/status" in passed
    # A budget too small, and another tenant (kit.sh's second credential) refused.
    assert "ENV-004 exhausted budget fails the task with BUDGET_EXHAUSTED" in passed
    assert "AGENT-009 a principal the skill's access does not admit is PERMISSION_DENIED" in passed
    assert "AGENT-004 another tenant's task is NOT_FOUND, with no data" in passed
    # It says what each task spent, and an answer to a task that has ended changes nothing.
    assert (
        "ENV-010 a task that worked reports what it spent, within its envelope's budget" in passed
    )
    assert (
        "ENV-009 an answer to a waiting task that has ended is refused and changes nothing"
        in passed
    )
    assert len(passed) >= 35


def _cases() -> list[dict[str, Any]]:
    """Around each rule's edge: delivery, 0 refundable, damage with and without evidence,
    final sale, 30 days, an amount above what is left."""
    cases = []
    for status, days, refundable, final_sale, reason, requested, evidence in itertools.product(
        ("delivered", "shipped"),
        (None, 0, 1, 30, 31),
        (0, 3500),
        (False, True),
        ("damaged", "wrong_size"),
        (None, 1, 3500, 3501),
        (None, "ok", " photo ref IMG-1 "),
    ):
        case: dict[str, Any] = {
            "order": {
                "order_id": "O-1005",
                "total_cents": 3500,
                "refunded_cents": 3500 - refundable,
                "refundable_cents": refundable,
                "final_sale": final_sale,
                "days_since_delivery": days,
                "status": status,
            },
            "reason": reason,
        }
        if requested is not None:
            case["requested_cents"] = requested
        if evidence is not None:
            case["evidence"] = evidence
        cases.append(case)
    return cases


# Inputs the skill's schema refuses, each a way to break it (one fault each: where several keys
# are wrong, Go names them sorted, Python as sent).
IDS: Final = {"order_id": "O-1001", "customer_id": "C-01"}
FACTS: Final = {
    "order_id": "O-1",
    "total_cents": 1,
    "refunded_cents": 0,
    "refundable_cents": 1,
    "final_sale": False,
    "days_since_delivery": 1,
    "status": "delivered",
}
INVALID: Final[list[Any]] = [
    {"reason": "damaged", **IDS, "x": 1},
    IDS,
    {},
    {"reason": "nope", **IDS},
    {"reason": 5, **IDS},
    {"reason": "damaged", "order_id": "bad", "customer_id": "C-01"},
    {"reason": "damaged", "order_id": "O-1001", "customer_id": "it's"},
    {"reason": "damaged"},
    {"reason": "damaged", "order_id": "O-1001"},
    {"reason": "damaged", **IDS, "requested_cents": 0},
    {"reason": "damaged", **IDS, "requested_cents": "5"},
    {"reason": "damaged", **IDS, "requested_cents": 1.5},
    {"reason": "damaged", **IDS, "requested_cents": True},
    {"reason": "damaged", **IDS, "evidence": "x" * 2001},
    {"reason": "damaged", **IDS, "evidence": 7},
    {"reason": "damaged", "order": {"order_id": "O-1"}},
    {"reason": "damaged", "order": {**FACTS, "total_cents": -1}},
    {"reason": "damaged", "order": {**FACTS, "days_since_delivery": "2"}},
    {"reason": "damaged", "order": {**FACTS, "final_sale": "no"}},
    {"reason": "damaged", "order": 5},
    # Accepted: nulls where the schema allows them, unknown order keys (the order is open).
    {"reason": "damaged", **IDS, "evidence": None, "requested_cents": None},
    {"reason": "other", "order": {**FACTS, "extra": 1}},
]


def _python_refusal(schemas: SkillSchemas, skill: Any, value: Any) -> Any:
    try:
        schemas.check_input(skill, value)
    except AccordError as error:
        return {"message": error.message, "details": error.details}
    return None


def test_the_go_rules_decide_as_python_does(tmp_path: Path) -> None:
    go = _go()
    cases = _cases()
    asked, answered = tmp_path / "cases.json", tmp_path / "answers.json"
    asked.write_text(json.dumps(cases), encoding="utf-8")
    invalid, refused = tmp_path / "invalid.json", tmp_path / "refused.json"
    invalid.write_text(json.dumps(INVALID), encoding="utf-8")
    exported = tmp_path / "policy-check.json"
    subprocess.run(
        [sys.executable, str(MEMBER / "scripts" / "export_contract.py"), str(exported)],
        check=True,
        timeout=60,
    )
    env = {
        **os.environ,
        "POLICY_CASES": str(asked),
        "POLICY_ANSWERS": str(answered),
        "POLICY_INVALID": str(invalid),
        "POLICY_INVALID_ANSWERS": str(refused),
        "POLICY_CONTRACT": str(exported),
    }
    done = subprocess.run(
        [go, "test", "-count=1", "./..."],
        cwd=MEMBER,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    go_answers = json.loads(answered.read_text(encoding="utf-8"))
    python = []
    for case in cases:
        outcome = evaluate(PolicyRequest.model_validate(case))
        python.append(
            {"question": outcome.question}
            if isinstance(outcome, EvidenceNeeded)
            else outcome.model_dump(mode="json")
        )
    assert len(go_answers) == len(cases) == 960
    assert go_answers == python
    # The skill's input schema refuses the same inputs with the same words, field and rule.
    contract = agent_contract("policy-check")
    schemas, [skill] = SkillSchemas(contract), contract.skills
    go_refusals = json.loads(refused.read_text(encoding="utf-8"))
    assert go_refusals == [_python_refusal(schemas, skill, value) for value in INVALID]
    assert go_refusals[-2:] == [None, None]
    assert {a.get("rule") for a in python} >= {
        "within_window",
        "outside_window",
        "final_sale",
        "already_refunded",
        "not_delivered",
        "amount_exceeds_refundable",
        "damage_with_evidence",
        None,
    }
