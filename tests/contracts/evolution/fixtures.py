"""Small contracts for the evolution tests: one tool and one agent that every rule can change."""

from __future__ import annotations

import copy
from typing import Any

from accord.contracts.agents import AgentContract
from accord.contracts.tools import ToolContract

TOOL: dict[str, Any] = {
    "name": "demo.tool",
    "version": "1.0.0",
    "title": "Demo",
    "description": "A demo tool.",
    "side_effect": "reversible_write",
    "idempotency_key": "required",
    "errors": ["INVALID_INPUT", "PERMISSION_DENIED", "NOT_FOUND"],
    "access": {
        "customer_field": "customer_id",
        "allow": [{"role": "customer"}, {"role": "service", "scope": "demo.tool"}],
    },
    "input_schema": {
        "type": "object",
        "additionalProperties": False,
        "required": ["idempotency_key", "customer_id", "kind"],
        "properties": {
            "idempotency_key": {"type": "string", "maxLength": 128},
            "customer_id": {"type": "string", "pattern": "^C-[0-9]+$"},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "note": {"type": ["string", "null"], "maxLength": 100},
            "count": {"type": "integer", "minimum": 1},
            "meta": {"type": "object", "properties": {"k": {"type": "string"}}},
        },
    },
    "output_schema": {
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "state"],
        "properties": {
            "id": {"type": "string", "pattern": "^R-"},
            "state": {"type": "string", "enum": ["done", "queued"]},
            "amount": {"type": "integer", "maximum": 1000},
            "note": {"type": ["string", "null"]},
            "extra": {"type": "object", "properties": {"x": {"type": "string"}}},
        },
    },
}

SKILL: dict[str, Any] = {
    "id": "demo.ask",
    "name": "Ask",
    "description": "Answer a question.",
    "input_schema": {
        "type": "object",
        "required": ["q"],
        "properties": {"q": {"type": "string"}},
    },
    "output_schema": {
        "type": "object",
        "additionalProperties": False,
        "required": ["a"],
        "properties": {"a": {"type": "string"}},
    },
}

AGENT: dict[str, Any] = {
    "name": "demo-agent",
    "version": "1.0.0",
    "description": "A demo agent.",
    "default_port": 8799,
    "waiting_reasons": ["input"],
    "errors": ["INVALID_INPUT", "INTERNAL"],
    "skills": [SKILL, {**copy.deepcopy(SKILL), "id": "demo.other"}],
}


def tool(doc: dict[str, Any]) -> ToolContract:
    return ToolContract.model_validate(doc)


def agent(doc: dict[str, Any]) -> AgentContract:
    return AgentContract.model_validate(doc)
