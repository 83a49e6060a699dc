"""External conformance for the agents: a2a-proof (PyPI, black-box A2A 1.0 contract tests)
against each of the three agents of a running mesh, authenticated with a bearer token.

Each agent gets a contract of its own (written here as a2a-proof YAML): the Agent Card, a
completed answer with its structured data, an input-required task continued in the same task,
and the task lifecycle (cancel, get). The approval step needs a second principal, which one
a2a-proof contract cannot have (its headers are per agent): the approval is driven by the
Python, JavaScript and curl clients instead (docs/conformance.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from tests.mesh import matrix
from tests.mesh.mesh_support import Mesh, declared, mesh_for_module, token

from accord.contracts.status import A2AState

__all__ = ["mesh_for_module"]

pytestmark = pytest.mark.timeout(240)

A2A_PROOF: Final = Path(sys.executable).parent / "a2a-proof"


def _state(state: A2AState) -> str:
    """a2a-proof names A2A states in lower case without the prefix (input_required)."""
    return state.value.removeprefix("TASK_STATE_").lower()


_ORDER: Final = {
    "order_id": "O-1001",
    "total_cents": 5999,
    "refunded_cents": 0,
    "refundable_cents": 5999,
    "final_sale": False,
    "days_since_delivery": 5,
    "status": "delivered",
}


def _cancel_and_get(first: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {**first, "expect": {"state": _state(A2AState.INPUT_REQUIRED)}},
        {"action": "cancel", "expect": {"state": _state(A2AState.CANCELED)}},
        {"action": "get_task", "expect": {"state": _state(A2AState.CANCELED)}},
    ]


SCENARIOS: Final[dict[str, tuple[list[str], list[dict[str, Any]]]]] = {
    "orchestrator": (
        ["refund.request", "refund.approve"],
        [
            {
                "name": "outside the return window",
                "message": "The shoes from order O-1002 are too small, refund please",
                "expect": {
                    "state": _state(A2AState.COMPLETED),
                    "states": {
                        "contains_in_order": [_state(A2AState.WORKING), _state(A2AState.COMPLETED)]
                    },
                    "data": [
                        {"path": "/decision", "equals": "not_eligible"},
                        {"path": "/rule", "equals": "outside_window"},
                    ],
                },
            },
            {
                "name": "evidence asked and answered in the same task",
                "turns": [
                    {
                        "message": "my mug arrived broken, order O-1005",
                        "expect": {
                            "state": _state(A2AState.INPUT_REQUIRED),
                            "text": {"contains": ["photo"]},
                        },
                    },
                    {
                        "message": "the handle snapped off, photo IMG_2291.jpg",
                        "expect": {
                            "state": _state(A2AState.COMPLETED),
                            "data": [
                                {"path": "/decision", "equals": "refunded"},
                                {"path": "/rule", "equals": "damage_with_evidence"},
                            ],
                        },
                    },
                ],
            },
            {
                "name": "a waiting task is canceled",
                "turns": _cancel_and_get({"message": "I want a refund, the shoes do not fit"}),
            },
        ],
    ),
    "policy": (
        ["refund.policy"],
        [
            {
                "name": "within the return window",
                "data": [{"order": _ORDER, "reason": "wrong_size"}],
                "expect": {
                    "state": _state(A2AState.COMPLETED),
                    "data": [
                        {"path": "/eligible", "equals": True},
                        {"path": "/rule", "equals": "within_window"},
                        {"path": "/max_refund_cents", "equals": 5999},
                    ],
                },
            },
            {
                "name": "damage needs evidence, given in the same task",
                "turns": [
                    {
                        "data": [{"order": _ORDER, "reason": "damaged"}],
                        "expect": {
                            "state": _state(A2AState.INPUT_REQUIRED),
                            "text": {"contains": ["photo"]},
                        },
                    },
                    {
                        "message": "the lid is cracked, photo IMG-42",
                        "expect": {
                            "state": _state(A2AState.COMPLETED),
                            "data": [{"path": "/rule", "equals": "damage_with_evidence"}],
                        },
                    },
                ],
            },
            {
                "name": "a waiting task is canceled",
                "turns": _cancel_and_get({"data": [{"order": _ORDER, "reason": "damaged"}]}),
            },
        ],
    ),
    "risk": (
        ["refund.risk"],
        [
            {
                "name": "a small refund of a good customer",
                "data": [{"order_id": "O-1001", "customer_id": "C-01", "amount_cents": 1000}],
                "expect": {
                    "state": _state(A2AState.COMPLETED),
                    "data": [
                        {"path": "/risk", "equals": "low"},
                        {"path": "/score", "gte": 0, "lte": 1},
                    ],
                },
            },
        ],
    ),
}


def contract(url: str, skills: list[str], scenarios: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "version": 1,
        # The token stays in the environment: a2a-proof expands ${VAR} and redacts it in reports.
        "agent": {
            "url": url,
            "timeout": 60,
            "transport": "JSONRPC",
            "headers": {"Authorization": "Bearer ${ACCORD_TOKEN}"},
        },
        "card": {"skills": {"contains": skills}, "capabilities": {"streaming": True}},
        "invariants": {"text": {"not_contains": ["Traceback"]}},
        "scenarios": scenarios,
    }


@pytest.mark.parametrize("agent", ["orchestrator", "policy", "risk"])
def test_a2a_proof_passes_against_the_agent(
    mesh_for_module: Mesh, tmp_path: Path, agent: str
) -> None:
    said = declared(mesh_for_module, agent)
    skills, scenarios = SCENARIOS[agent]
    with matrix.cell(
        agent,
        "a2a-proof",
        client_version=f"a2a-proof {version('a2a-proof')}",
        contract=said.contract,
        service_contract=said.service_contract,
        note=f"Agent Card and scenarios {', '.join(s['name'] for s in scenarios)}; bearer token",
    ):
        config = tmp_path / "a2a-proof.yaml"
        config.write_text(yaml.safe_dump(contract(mesh_for_module.url(agent), skills, scenarios)))
        report = tmp_path / "report.json"
        run = subprocess.run(
            [str(A2A_PROOF), "run", str(config), "--format", "json", "--output", str(report)],
            env={"ACCORD_TOKEN": token("C-01"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert report.is_file(), run.stdout[-2000:] + run.stderr[-2000:]
        suite = json.loads(report.read_text())
        failures = [
            (s["name"], [t.get("failures") or t.get("error") for t in s["trials"]])
            for s in suite["scenarios"]
            if not s["passed"]
        ]
        assert suite["card"]["passed"], suite["card"]["failures"]
        assert not failures, json.dumps(failures, indent=1, ensure_ascii=False)[:3000]
        assert [s["name"] for s in suite["scenarios"]] == [s["name"] for s in scenarios]
        assert suite["passed"]
        assert run.returncode == 0, run.stderr[-2000:]
