"""policy-check contract files of other versions, served through ACCORD_CONTRACTS_DIR (the
supported way, docs/contract-evolution.md) by the mesh and kit tests of mixed versions."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from accord.contracts.agents import agent_contract


def _policy_doc(version: str, also_serves: list[str] | None = None) -> dict[str, Any]:
    doc = copy.deepcopy(agent_contract("policy-check").model_dump(mode="json", exclude_none=True))
    doc.update(version=version, also_serves=also_serves or [])
    return doc


def _skill(doc: dict[str, Any]) -> dict[str, Any]:
    skill: dict[str, Any] = doc["skills"][0]
    return skill


def policy_minor_ahead() -> dict[str, Any]:
    """A compatible minor ahead: one more optional input field."""
    doc = _policy_doc("1.3.0")
    _skill(doc)["input_schema"]["properties"]["channel"] = {"type": "string", "maxLength": 40}
    return doc


def policy_2_0(also_serves: list[str] | None = None) -> dict[str, Any]:
    """Breaking: the deprecated English ``explanation`` is gone from the answer."""
    doc = _policy_doc("2.0.0", also_serves)
    del _skill(doc)["output_schema"]["properties"]["explanation"]
    return doc


def policy_1_0() -> dict[str, Any]:
    """As 1.0 was: ``explanation`` required, no ``params``."""
    doc = _policy_doc("1.0.0")
    output = _skill(doc)["output_schema"]
    del output["properties"]["params"]
    output["required"] = [*output["required"], "explanation"]
    return doc


def write_contracts(folder: Path, *docs: dict[str, Any]) -> dict[str, str]:
    folder.mkdir(parents=True)
    for doc in docs:
        (folder / f"policy-check-{doc['version']}.yaml").write_text(yaml.safe_dump(doc))
    return {"ACCORD_CONTRACTS_DIR": str(folder)}
