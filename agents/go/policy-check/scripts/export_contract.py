"""Write policy-check's agent contract and its skill schema document as one JSON file, the
Go member's one source for its card and /accord/skill-schemas.json (the same documents
the Python agent serves, from the same contract). usage: python export_contract.py OUT"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from accord.contracts.agents import agent_contract
from accord.contracts.skill_schemas import skill_schema_document

contract = agent_contract("policy-check")
document = {
    "contract": contract.model_dump(mode="json"),
    "schemas": skill_schema_document(contract),
}
Path(sys.argv[1]).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
