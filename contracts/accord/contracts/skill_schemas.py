"""The skill schema document an agent serves next to its card (``skillSchemas``): what it holds,
built from the agent contract alone, so that the server that serves it (accord.protocol's
card_schemas) and the contract test kit that compares it with the contract build the same
document.

It holds each skill's input and output JSON Schema exactly as the agent contract states them
(draft 2020-12), its ``access`` and ``envelope`` sections (contract 1.3), plus the contract's
error and status schemas, which every agent's status metadata follows.
"""

from __future__ import annotations

from typing import Any, Final

from accord.contracts.agents import AgentContract, Skill
from accord.contracts.export import schema_documents
from accord.contracts.keys import CONTRACT_VERSION

SHARED_SCHEMAS: Final = {"error": "error.schema.json", "status": "status.schema.json"}
"""Document key -> the contract export's schema of that name (one truth for both)."""


def skill_schema_document(contract: AgentContract) -> dict[str, Any]:
    shared = schema_documents()
    return {
        "agent": contract.name,
        "version": contract.version,
        "contractVersion": CONTRACT_VERSION,
        "skills": {skill.id: _skill_entry(skill) for skill in contract.skills},
        "schemas": {key: shared[name] for key, name in SHARED_SCHEMAS.items()},
    }


def _skill_entry(skill: Skill) -> dict[str, Any]:
    """A skill's schemas, and (contract 1.3) who may ask for it and what of the envelope it
    honours, so that a caller in any language knows before it sends (AGENT-009, ENV-007)."""
    entry: dict[str, Any] = {
        "input": skill.input_schema,
        "output": skill.output_schema,
        "envelope": skill.envelope.model_dump(mode="json", exclude_none=True),
    }
    if skill.access is not None:
        entry["access"] = skill.access.model_dump(mode="json")
    return entry
