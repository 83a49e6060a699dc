"""Language-neutral export: JSON Schema for every contract format, plus the shipped contracts.

A team writing an agent in Go or TypeScript implements the same contract from these files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from accord.contracts import keys
from accord.contracts.agents import AgentContract, shipped_agent_contracts
from accord.contracts.envelope import DelegationEnvelope
from accord.contracts.errors import (
    A2A_ERROR_DOMAIN,
    A2A_REASON_OF_JSONRPC,
    ERROR_DOMAIN,
    FOREIGN_JSONRPC_TO_CODE,
    HTTP_CLASS_TO_CODE,
    HTTP_STATUS_TO_CODE,
    REGISTRY,
    ErrorCode,
    RetryClass,
)
from accord.contracts.keys import (
    CONTRACT_EXTENSION_URI,
    CONTRACT_VERSION,
    DELEGATION_EXTENSION_URI,
    ERROR_DATA_KIND,
    MCP_ERROR_META_KEY,
    STATUS_META_KEY,
)
from accord.contracts.status import (
    DECLINED_A2A,
    DEFAULT_FAILURE_CODE,
    DEFAULT_WAITING_REASON,
    FROM_A2A,
    REJECTABLE,
    TERMINAL,
    TRANSITIONS,
    A2AState,
    ContractState,
    Status,
    WaitingReason,
    from_a2a,
    to_a2a,
)
from accord.contracts.status_meta import STATUS_META_FIELDS
from accord.contracts.tool_access import ToolDelegation
from accord.contracts.tools import ToolContract, shipped_tool_contracts

SCHEMA_BASE = "https://accord.dev/schemas/contract/v1/"


def _schema(model: type[BaseModel], name: str) -> dict[str, Any]:
    doc = model.model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_BASE + name,
        **doc,
    }


def status_document() -> dict[str, Any]:
    """Statuses, transitions and both directions of the A2A mapping, as data."""
    to_a2a_rows: list[dict[str, str | bool]] = []
    for status in Status:
        if status is Status.WAITING:
            for reason in WaitingReason:
                st = ContractState(status=status, waiting_reason=reason)
                to_a2a_rows.append(
                    {
                        "status": status.value,
                        "waiting_reason": reason.value,
                        "a2a": to_a2a(st).value,
                    }
                )
        elif status is Status.FAILED:
            for code in (ErrorCode.CANCELED, None):
                st = ContractState(status=status, error_code=code or ErrorCode.INTERNAL)
                to_a2a_rows.append(
                    {
                        "status": status.value,
                        "error_code": code.value if code else "*",
                        "a2a": to_a2a(st).value,
                    }
                )
            # A decline: any code of REJECTABLE (the document lists them as rejectable_codes).
            st = ContractState(status=status, error_code=ErrorCode.POLICY_DENIED, declined=True)
            to_a2a_rows.append(
                {
                    "status": status.value,
                    "error_code": "*",
                    "declined": True,
                    "a2a": to_a2a(st).value,
                }
            )
        else:
            to_a2a_rows.append(
                {"status": status.value, "a2a": to_a2a(ContractState(status=status)).value}
            )
    return {
        "contract_version": CONTRACT_VERSION,
        "statuses": [s.value for s in Status],
        "terminal": [s.value for s in Status if s in TERMINAL],
        "rejectable_codes": sorted(c.value for c in REJECTABLE),
        "waiting_reasons": [r.value for r in WaitingReason],
        "transitions": {s.value: sorted(t.value for t in ts) for s, ts in TRANSITIONS.items()},
        "to_a2a": to_a2a_rows,
        "from_a2a": {
            a.value: {
                "status": FROM_A2A[a].value,
                **({"declined": True} if a is DECLINED_A2A else {}),
                **(
                    {"default_waiting_reason": DEFAULT_WAITING_REASON[a].value}
                    if a in DEFAULT_WAITING_REASON
                    else {}
                ),
                **(
                    {"default_error_code": DEFAULT_FAILURE_CODE[a].value}
                    if a in DEFAULT_FAILURE_CODE
                    else {}
                ),
            }
            for a in A2AState
        },
        # Which qualifiers a peer sent each state keeps (any other reads as the default).
        "from_a2a_kept": _from_a2a_kept(),
        "metadata_keys": {"status": STATUS_META_KEY, "error_data_kind": ERROR_DATA_KIND},
        "metadata_fields": list(STATUS_META_FIELDS),
    }


def _from_a2a_kept() -> dict[str, dict[str, list[str]]]:
    """Per A2A state with a default qualifier: the waiting reasons or error codes a peer's
    status metadata may give it that :func:`from_a2a` keeps as sent."""
    kept: dict[str, dict[str, list[str]]] = {}
    for a2a in A2AState:
        if a2a in DEFAULT_WAITING_REASON:
            kept[a2a.value] = {
                "waiting_reasons": [
                    r.value
                    for r in WaitingReason
                    if from_a2a(a2a, waiting_reason=r).waiting_reason is r
                ]
            }
        if a2a in DEFAULT_FAILURE_CODE:
            kept[a2a.value] = {
                "error_codes": [
                    c.value for c in ErrorCode if from_a2a(a2a, error_code=c).error_code is c
                ]
            }
    return kept


def registry_document() -> dict[str, Any]:
    return {
        "contract_version": CONTRACT_VERSION,
        "retry_classes": [c.value for c in RetryClass],
        "error_domain": ERROR_DOMAIN,
        "a2a_error_domain": A2A_ERROR_DOMAIN,
        "a2a_reasons": {str(k): v for k, v in A2A_REASON_OF_JSONRPC.items()},
        "mcp_meta_key": MCP_ERROR_META_KEY,
        "codes": [spec.model_dump(mode="json") for spec in REGISTRY.values()],
        "foreign_jsonrpc_codes": {str(k): v.value for k, v in FOREIGN_JSONRPC_TO_CODE.items()},
        # How an HTTP error status without a contract body reads: the status, else its class.
        "http_status_codes": {str(k): v.value for k, v in HTTP_STATUS_TO_CODE.items()},
        "http_status_class_codes": {f"{k}xx": v.value for k, v in HTTP_CLASS_TO_CODE.items()},
    }


def keys_document() -> dict[str, str]:
    """Every name on the wire (accord.contracts.keys), by its constant's name."""
    return {
        name: value
        for name, value in vars(keys).items()
        if name.isupper() and isinstance(value, str) and name != "CONTRACT_VERSION"
    }


def extensions_document() -> dict[str, str]:
    return {
        "contract": CONTRACT_EXTENSION_URI,
        "delegation": DELEGATION_EXTENSION_URI,
        "contract_version": CONTRACT_VERSION,
    }


def _enum_schema(name: str, values: list[str]) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_BASE + name,
        "type": "string",
        "enum": values,
    }


def schema_documents() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema document."""
    error_payload = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_BASE + "error.schema.json",
        "type": "object",
        "required": ["code", "retry", "message"],
        "properties": {
            "code": {"enum": [c.value for c in ErrorCode]},
            "retry": {"enum": [c.value for c in RetryClass]},
            "message": {"type": "string"},
            "details": {"type": "object"},
        },
    }
    return {
        "status.schema.json": _enum_schema("status.schema.json", [s.value for s in Status]),
        "a2a-state.schema.json": _enum_schema("a2a-state.schema.json", [a.value for a in A2AState]),
        "contract-state.schema.json": _schema(ContractState, "contract-state.schema.json"),
        "error.schema.json": error_payload,
        "error-code.schema.json": _enum_schema(
            "error-code.schema.json", [c.value for c in ErrorCode]
        ),
        "envelope.schema.json": _schema(DelegationEnvelope, "envelope.schema.json"),
        "tool-contract.schema.json": _schema(ToolContract, "tool-contract.schema.json"),
        # params._meta[TOOL_DELEGATION_META_KEY] of a tools/call (who a service acts for).
        "tool-delegation.schema.json": _schema(ToolDelegation, "tool-delegation.schema.json"),
        "agent-contract.schema.json": _schema(AgentContract, "agent-contract.schema.json"),
    }


def export_all(directory: Path) -> list[Path]:
    """Write everything under ``directory``; return the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def write(rel: str, doc: Any) -> None:
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8"
        )
        written.append(path)

    for name, doc in schema_documents().items():
        write(f"schemas/{name}", doc)
    write("status.json", status_document())
    write("errors.json", registry_document())
    write("keys.json", keys_document())
    write("extensions.json", extensions_document())
    for name, tool in shipped_tool_contracts().items():
        write(f"tools/{name}.json", tool.model_dump(mode="json"))
    for name, agent in shipped_agent_contracts().items():
        write(f"agents/{name}.json", agent.model_dump(mode="json"))
    return written
