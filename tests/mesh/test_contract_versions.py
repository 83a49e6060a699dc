"""A mesh of mixed contract versions: the orchestrator, built against the policy-check
contract shipped with it (1.1.0: it needs 1.x), talks to a policy-check process serving other
versions through ACCORD_CONTRACTS_DIR (the supported way, docs/contract-evolution.md):

* 1.3.0 (a compatible minor ahead): the refund works;
* 2.0.0 only (breaking): the policy check fails with VERSION_UNSUPPORTED naming both versions
  (in the workflow log; the customer reads a plain sentence), the refund fails cleanly and
  nothing is written to the payments ledger;
* 2.0.0 with 1.0.0 side by side: the card lists both, the orchestrator's task names 1.0.0 and
  policy-check answers in 1.0 (no ``params``): the refund works.

One mesh; policy-check and the orchestrator (which keeps a usable card) restart per case.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from accord.contracts.agents import agent_contract
from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from tests.mesh import matrix
from tests.mesh.money_support import ledger_sums
from tests.mesh.support import Mesh, ask, running_mesh
from tests.support.policy_versions import (
    policy_1_0,
    policy_2_0,
    policy_minor_ahead,
    write_contracts,
)

BUILT_AGAINST = agent_contract("policy-check").version


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with running_mesh(tmp_path_factory.mktemp("versions")) as running:
        yield running


def _serve_policy(mesh: Mesh, env: dict[str, str]) -> list[str]:
    """Restart policy-check with ``env`` (and the orchestrator, which keeps a usable card);
    the versions its card states."""
    mesh.services["policy"].stop()
    mesh.start("policy", env)
    mesh.restart_orchestrator(kill=False)
    card = httpx.get(f"{mesh.url('policy')}/.well-known/agent-card.json", timeout=10).json()
    [extension] = [
        e for e in card["capabilities"]["extensions"] if e["uri"].endswith("/ext/contract/v1")
    ]
    versions: list[str] = extension["params"]["agentContractVersions"]
    return versions


def _cell(serves: str, expected: str, note: str) -> Any:
    return matrix.version_cell(
        "policy",
        serves,
        client="orchestrator",
        built_against=f"policy-check {BUILT_AGAINST}",
        expected=expected,
        note=note,
    )


async def test_a_compatible_minor_ahead_works(mesh: Mesh, tmp_path: Path) -> None:
    with _cell("1.3.0", "refund works", "a minor ahead: one more optional input field"):
        await _minor_ahead(mesh, tmp_path)


async def _minor_ahead(mesh: Mesh, tmp_path: Path) -> None:
    assert _serve_policy(mesh, write_contracts(tmp_path / "c", policy_minor_ahead())) == ["1.3.0"]
    before = ledger_sums(mesh).get("O-1001", (0, 0))
    done = await ask(mesh, "C-01", "I changed my mind, refund $10 of order O-1001")
    assert done.status is Status.COMPLETED, done.error
    assert (done.data or {})["decision"] == "refunded"
    assert ledger_sums(mesh)["O-1001"] == (before[0] + 1, before[1] + 1000)


async def test_a_major_ahead_only_fails_cleanly_with_nothing_written(
    mesh: Mesh, tmp_path: Path
) -> None:
    expected = "refused: VERSION_UNSUPPORTED, the refund fails, nothing written"
    with _cell("2.0.0", expected, "the orchestrator refuses the card before it sends anything"):
        await _major_ahead(mesh, tmp_path)


async def _major_ahead(mesh: Mesh, tmp_path: Path) -> None:
    assert _serve_policy(mesh, write_contracts(tmp_path / "c", policy_2_0())) == ["2.0.0"]
    before = ledger_sums(mesh)
    done = await ask(mesh, "C-01", "I changed my mind, refund $11 of order O-1001")
    assert done.status is Status.FAILED, done
    error = done.error
    assert error is not None
    assert error.code is ErrorCode.VERSION_UNSUPPORTED, error
    # The customer reads a plain sentence; the workflow log names both versions (#30).
    [(_, finished)] = mesh.workflow_events(done.task_id, "workflow_finished")
    logged = str(finished["error"]["message"])
    assert "2.0.0" in logged, logged
    assert BUILT_AGAINST in logged, logged
    assert ledger_sums(mesh) == before  # nothing written


async def test_both_majors_side_by_side_work_in_the_older(mesh: Mesh, tmp_path: Path) -> None:
    note = "the task names 1.0.0; policy-check answers in 1.0 (no params)"
    with _cell("2.0.0, 1.0.0", "refund works", note):
        await _side_by_side(mesh, tmp_path)


async def _side_by_side(mesh: Mesh, tmp_path: Path) -> None:
    env = write_contracts(tmp_path / "c", policy_2_0(["1.0.0"]), policy_1_0())
    assert _serve_policy(mesh, env) == ["2.0.0", "1.0.0"]
    before = ledger_sums(mesh).get("O-1001", (0, 0))
    done = await ask(mesh, "C-01", "I changed my mind, refund $12 of order O-1001")
    assert done.status is Status.COMPLETED, done.error
    assert (done.data or {})["decision"] == "refunded"
    assert ledger_sums(mesh)["O-1001"] == (before[0] + 1, before[1] + 1200)
