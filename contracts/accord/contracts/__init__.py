"""accord.contracts: the one contract every Accord service and client follows.

Task lifecycle, error registry with retry semantics, delegation envelope, tool and agent
contracts, the requirements manifest and a language-neutral export. Depends on pydantic,
PyYAML and jsonschema only: no protocol SDK.
"""

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
