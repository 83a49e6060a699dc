"""A2A plumbing on a2a-sdk 1.3.0: the server factory, the contract executor, the task store,
and the wire helpers that server and client share.

The names below are loaded on first use (PEP 562): importing the client side
(`accord.protocol.a2a.client`) must not pay for the server side (SQLAlchemy, the SDK's request
handlers), which costs seconds of CPU in every CLI command.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accord.protocol.a2a.server.app import build_agent_app
    from accord.protocol.a2a.server.executor import (
        Completed,
        ContractExecutor,
        NeedsInput,
        Progress,
        Rejected,
        Reply,
        Turn,
    )
    from accord.protocol.a2a.server.store import AccordTaskStore

_WHERE = {
    "AccordTaskStore": "accord.protocol.a2a.server.store",
    "Completed": "accord.protocol.a2a.server.executor",
    "ContractExecutor": "accord.protocol.a2a.server.executor",
    "NeedsInput": "accord.protocol.a2a.server.executor",
    "Progress": "accord.protocol.a2a.server.executor",
    "Rejected": "accord.protocol.a2a.server.executor",
    "Reply": "accord.protocol.a2a.server.executor",
    "Turn": "accord.protocol.a2a.server.executor",
    "build_agent_app": "accord.protocol.a2a.server",
}

__all__ = [
    "AccordTaskStore",
    "Completed",
    "ContractExecutor",
    "NeedsInput",
    "Progress",
    "Rejected",
    "Reply",
    "Turn",
    "build_agent_app",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)
