"""A2A plumbing on a2a-sdk 1.3.0: the server factory, the contract executor, the task store,
and the wire helpers that server and client share."""

from accord.protocol.a2a.executor import (
    Completed,
    ContractExecutor,
    NeedsInput,
    Progress,
    Turn,
)
from accord.protocol.a2a.server import build_agent_app
from accord.protocol.a2a.store import AccordTaskStore

__all__ = [
    "AccordTaskStore",
    "Completed",
    "ContractExecutor",
    "NeedsInput",
    "Progress",
    "Turn",
    "build_agent_app",
]
