"""Contracts served side by side: which files a folder serves, their agreement, the version a
request gets, and an answer given in an older version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.contracts.agents import AgentContract, agent_contract
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.loading import ContractFileError
from accord.contracts.served import ServedContracts, answer_in, served_agent_contracts

SHIPPED = agent_contract("policy-check")


def _doc(version: str, also_serves: list[str] | None = None) -> dict[str, Any]:
    doc = SHIPPED.model_dump(mode="json")
    doc.update(version=version, also_serves=also_serves or [])
    return doc


def _write(folder: Path, name: str, doc: dict[str, Any]) -> None:
    (folder / name).write_text(yaml.safe_dump(doc))


def test_without_a_folder_or_a_file_of_its_name_the_shipped_contract_is_served(
    tmp_path: Path,
) -> None:
    assert served_agent_contracts("policy-check", None).versions == [SHIPPED.version]
    _write(tmp_path, "risk.yaml", {**agent_contract("risk-check").model_dump(mode="json")})
    (tmp_path / "notes.yaml").write_text("just: notes\n")
    assert served_agent_contracts("policy-check", tmp_path).primary == SHIPPED


def test_a_folder_serves_every_file_of_the_agent_newest_first(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", _doc("1.0.0"))
    _write(tmp_path, "b.yaml", _doc("2.0.0", ["1.0.0"]))
    served = served_agent_contracts("policy-check", tmp_path)
    assert served.versions == ["2.0.0", "1.0.0"]
    assert served.primary.version == "2.0.0"
    assert served.speaking(None).version == "2.0.0"
    assert served.speaking("1.1.0").version == "1.0.0"  # the caller's major
    with pytest.raises(AccordError) as caught:
        served.speaking("3.0.0")
    assert caught.value.code is ErrorCode.VERSION_UNSUPPORTED
    assert caught.value.details["served"] == ["2.0.0", "1.0.0"]
    with pytest.raises(AccordError) as bad:
        served.speaking("latest")
    assert bad.value.code is ErrorCode.INVALID_INPUT


def test_the_files_must_agree(tmp_path: Path) -> None:
    one = AgentContract.model_validate(_doc("1.0.0"))
    with pytest.raises(ValueError, match="also_serves"):
        ServedContracts.of([one, AgentContract.model_validate(_doc("2.0.0"))])
    with pytest.raises(ValueError, match="one contract per major"):
        ServedContracts.of([one, AgentContract.model_validate(_doc("1.2.0"))])
    # A broken file of the agent's name is an error, never skipped.
    _write(tmp_path, "broken.yaml", {**_doc("1.0.0"), "skills": "none"})
    with pytest.raises(ContractFileError):
        served_agent_contracts("policy-check", tmp_path)


def test_an_answer_in_an_older_version_leaves_out_what_it_does_not_know() -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "a": {"type": "integer"},
            "inner": {"type": "object", "additionalProperties": False, "properties": {"b": {}}},
            "open": {"type": "object", "properties": {"c": {}}},
        },
    }
    data = {"a": 1, "new": 2, "inner": {"b": 3, "new": 4}, "open": {"c": 5, "extra": 6}}
    assert answer_in(schema, data) == {"a": 1, "inner": {"b": 3}, "open": {"c": 5, "extra": 6}}
    assert answer_in({"type": "string"}, "x") == "x"
