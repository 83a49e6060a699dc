"""The contract test kit against all five services of one running mesh: zero violations.

The kit skips a check only when the service does not claim the capability; those skips are
listed below with the reason, and the test fails if the kit skips anything else (a check that
silently stopped running is as bad as one that fails). On the session's shared mesh
(tests/mesh/conftest.py): the kit's one write is a cent of its own order O-9001 under a key of
each run, and its orchestrator probe ends on O-1002, which pays nothing.
"""

from __future__ import annotations

import asyncio
from typing import Final

import pytest

from accord.kit import Credential, KitOptions, Verdict, run_kit
from accord.kit.probes import load_probes
from tests.mesh import matrix
from tests.mesh.mesh_support import (
    Mesh,
    declared,
    endpoint,
    kit_version,
    token,
)
from tests.support.service_keys import TEST_SERVICE, sign_as
from tests.support.tool_auth import SKILL_GRANTS

pytestmark = pytest.mark.timeout(300)

TOOL_GRANTS: Final = (
    "orders.lookup",
    "customers.history",
    "orders.customer_history",
    "refunds.issue",
    "refunds.get",
    "refunds.list",
)

# (service, requirement, check) -> why the kit cannot run it against that service.
SKIPS: Final[dict[tuple[str, str, str], str]] = {
    ("risk", "AGENT-005", "a task waiting for input continues in the same task"): (
        "risk-check declares no 'input' waiting reason: it always answers at once"
    ),
    ("risk", "AGENT-006", "cancel of a waiting task ends it CANCELED"): (
        "risk-check never leaves a task waiting, so there is nothing to cancel mid-way"
    ),
    (
        "risk",
        "ENV-009",
        "an answer to a waiting task that has ended is refused and changes nothing",
    ): ("risk-check never leaves a task waiting, so no answer can come after its task ended"),
    **{
        (
            agent,
            "STATUS-008",
            "a declined request ends A2A REJECTED: failed, declined, with its code",
        ): ("the shipped agents decline nothing (docs/refund-assistant.md): no decline probe")
        for agent in ("orchestrator", "policy", "risk")
    },
    ("commerce", "TOOL-007", "a write tool refuses a call without its idempotency key"): (
        "commerce serves read-only tools (orders.lookup, customers.history, ...)"
    ),
    ("commerce", "TOOL-006", "the same key twice has one effect and replays the receipt"): (
        "commerce serves read-only tools"
    ),
    ("commerce", "TOOL-006", "the same key with other arguments is IDEMPOTENCY_CONFLICT"): (
        "commerce serves read-only tools"
    ),
    ("commerce", "TOOL-011", "a write tool refuses a principal its contract does not allow"): (
        "commerce serves read-only tools"
    ),
}


def _options(service: str) -> KitOptions:
    # Refunds are requested by customers, so the orchestrator is probed as customer C-01;
    # the other services are called by services (the kit sends a valid delegation envelope).
    own = (
        token("C-01")
        if service == "orchestrator"
        # granted every tool and skill: the tool servers and agents check the grant (TOOL-011,
        # AGENT-009)
        else sign_as(TEST_SERVICE, scopes=TOOL_GRANTS + SKILL_GRANTS)
    )
    # Another tenant (AGENT-004) the skills' access does not admit (AGENT-009): a customer
    # may not approve refunds; a service granted nothing may not ask policy-check or risk-check.
    # The service's token says so (an empty scope claim: it asks for no grant), since the kit
    # predicts a refusal only from what a token claims, not from the verifier's table.
    other = sign_as("cli", scope="") if service in ("policy", "risk") else token("C-02")
    probes = load_probes(None)
    return KitOptions(
        credential=Credential(token=own),
        other=Credential(token=other),
        timeout_s=30.0,
        probes=probes,  # the refund application's: the orchestrator's lifecycle runs without a file
    )


@pytest.mark.parametrize("service", ["orchestrator", "policy", "risk", "commerce", "payments"])
def test_the_kit_finds_no_violation(mesh: Mesh, service: str) -> None:
    said = declared(mesh, service)
    with matrix.cell(
        service,
        "kit",
        client_version=f"accord contract-test ({kit_version()})",
        contract=said.contract,
        service_contract=said.service_contract,
        note="zero violations; skips only where the capability is not claimed",
    ):
        report = asyncio.run(run_kit([endpoint(mesh, service)], _options(service)))
        assert report.ok, "\n\n".join(r.failure_message() for r in report.failures)
        skipped = {
            (service, r.requirement, r.check): r.detail
            for r in report.results
            if r.outcome is Verdict.SKIP
        }
        expected = {k: v for k, v in SKIPS.items() if k[0] == service}
        assert set(skipped) == set(expected), f"unexpected skips: {skipped}"
        assert sum(r.outcome is Verdict.PASS for r in report.results) >= 7  # commerce: 7
