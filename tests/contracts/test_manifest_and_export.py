from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from accord.contracts import REGISTRY, ErrorCode, Status
from accord.contracts.errors import HTTP_STATUS_TO_CODE
from accord.contracts.export import export_all, keys_document
from accord.contracts.manifest import load_manifest, render_markdown, requirement_ids

ROOT = Path(__file__).resolve().parents[2]


def test_docs_contract_md_is_generated_and_fresh() -> None:
    on_disk = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    assert on_disk == render_markdown(), "docs/contract.md is stale: run `make docs`"


def test_manifest_ids_are_unique_and_cover_every_area() -> None:
    reqs = load_manifest().requirements
    assert len(requirement_ids()) == len(reqs)
    assert {r.area for r in reqs} >= {"status", "errors", "envelope", "tools", "agents"}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export")
    export_all(out)
    return out


def load(exported: Path, rel: str) -> Any:
    return json.loads((exported / rel).read_text(encoding="utf-8"))


def validator(exported: Path, name: str) -> jsonschema.Draft202012Validator:
    schema = load(exported, f"schemas/{name}")
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_exported_schemas_validate_samples(exported: Path) -> None:
    envelope = {
        "goal": "check refund",
        "budget": {"units": 3, "tool_calls": 2, "deadline": "2030-01-01T00:00:00Z"},
        "tenant": {"app": "accord", "user": "C-01", "session": "s1"},
    }
    validator(exported, "envelope.schema.json").validate(envelope)
    assert not validator(exported, "envelope.schema.json").is_valid({"goal": "x"})
    validator(exported, "status.schema.json").validate("waiting")
    assert not validator(exported, "status.schema.json").is_valid("paused")
    err = {"code": "NOT_FOUND", "retry": "stop", "message": "no such task"}
    validator(exported, "error.schema.json").validate(err)
    assert not validator(exported, "error.schema.json").is_valid({**err, "code": "OOPS"})
    state = {"status": "failed", "error_code": "CANCELED"}
    validator(exported, "contract-state.schema.json").validate(state)


def test_shipped_contracts_validate_against_exported_formats(exported: Path) -> None:
    tool_v = validator(exported, "tool-contract.schema.json")
    agent_v = validator(exported, "agent-contract.schema.json")
    tools = sorted((exported / "tools").glob("*.json"))
    agents = sorted((exported / "agents").glob("*.json"))
    assert len(tools) == 6
    assert len(agents) == 3
    for path in tools:
        tool_v.validate(json.loads(path.read_text()))
    for path in agents:
        agent_v.validate(json.loads(path.read_text()))
    assert not tool_v.is_valid({"name": "x"})


def test_exported_tables_are_complete(exported: Path) -> None:
    errors = load(exported, "errors.json")
    assert {c["code"] for c in errors["codes"]} == {c.value for c in ErrorCode}
    assert {int(s) for s in errors["http_status_codes"]} == set(HTTP_STATUS_TO_CODE)
    assert load(exported, "keys.json") == keys_document()
    assert len(errors["codes"]) == len(REGISTRY)
    status = load(exported, "status.json")
    assert status["statuses"] == [s.value for s in Status]
    assert set(status["from_a2a"]) == {
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_AUTH_REQUIRED",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_REJECTED",
    }
