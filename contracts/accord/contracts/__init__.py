"""accord.contracts: the one contract every Accord service and client follows.

Task lifecycle, error registry with retry semantics, delegation envelope, tool and agent
contracts, the requirements manifest and a language-neutral export. Depends on pydantic,
PyYAML and jsonschema only: no protocol SDK.

The names below are loaded on first use (PEP 562): ``from accord.contracts.errors import
ErrorCode`` must not pay for jsonschema and PyYAML (the tool and agent contract loaders), which
the command line's start time cannot afford (#16).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accord.contracts.agents import AgentContract, Skill, agent_contract, load_agent_contract
    from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant, parse_envelope
    from accord.contracts.errors import REGISTRY, AccordError, ErrorCode, ErrorSpec, RetryClass
    from accord.contracts.keys import (
        CONTRACT_EXTENSION_URI,
        CONTRACT_VERSION,
        DELEGATION_EXTENSION_URI,
    )
    from accord.contracts.loading import ContractFileError
    from accord.contracts.retry import Action, Decision, RetryPolicy, decide
    from accord.contracts.status import (
        A2AState,
        ContractState,
        Status,
        WaitingReason,
        can_transition,
        check_transition,
        from_a2a,
        to_a2a,
    )
    from accord.contracts.tools import (
        IdempotencyKey,
        SideEffect,
        ToolContract,
        load_tool_contract,
        tool_contract,
    )

# Where each name lives (the same modules as the imports above).
_HOME: dict[str, str] = {
    "AgentContract": "accord.contracts.agents",
    "Skill": "accord.contracts.agents",
    "agent_contract": "accord.contracts.agents",
    "load_agent_contract": "accord.contracts.agents",
    "Budget": "accord.contracts.envelope",
    "DelegationEnvelope": "accord.contracts.envelope",
    "Tenant": "accord.contracts.envelope",
    "parse_envelope": "accord.contracts.envelope",
    "REGISTRY": "accord.contracts.errors",
    "AccordError": "accord.contracts.errors",
    "ErrorCode": "accord.contracts.errors",
    "ErrorSpec": "accord.contracts.errors",
    "RetryClass": "accord.contracts.errors",
    "CONTRACT_EXTENSION_URI": "accord.contracts.keys",
    "CONTRACT_VERSION": "accord.contracts.keys",
    "DELEGATION_EXTENSION_URI": "accord.contracts.keys",
    "ContractFileError": "accord.contracts.loading",
    "Action": "accord.contracts.retry",
    "Decision": "accord.contracts.retry",
    "RetryPolicy": "accord.contracts.retry",
    "decide": "accord.contracts.retry",
    "A2AState": "accord.contracts.status",
    "ContractState": "accord.contracts.status",
    "Status": "accord.contracts.status",
    "WaitingReason": "accord.contracts.status",
    "can_transition": "accord.contracts.status",
    "check_transition": "accord.contracts.status",
    "from_a2a": "accord.contracts.status",
    "to_a2a": "accord.contracts.status",
    "IdempotencyKey": "accord.contracts.tools",
    "SideEffect": "accord.contracts.tools",
    "ToolContract": "accord.contracts.tools",
    "load_tool_contract": "accord.contracts.tools",
    "tool_contract": "accord.contracts.tools",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once: later lookups are plain module attributes
    return value


__all__ = [
    "CONTRACT_EXTENSION_URI",
    "CONTRACT_VERSION",
    "DELEGATION_EXTENSION_URI",
    "REGISTRY",
    "A2AState",
    "AccordError",
    "Action",
    "AgentContract",
    "Budget",
    "ContractFileError",
    "ContractState",
    "Decision",
    "DelegationEnvelope",
    "ErrorCode",
    "ErrorSpec",
    "IdempotencyKey",
    "RetryClass",
    "RetryPolicy",
    "SideEffect",
    "Skill",
    "Status",
    "Tenant",
    "ToolContract",
    "WaitingReason",
    "agent_contract",
    "can_transition",
    "check_transition",
    "decide",
    "from_a2a",
    "load_agent_contract",
    "load_tool_contract",
    "parse_envelope",
    "to_a2a",
    "tool_contract",
]
