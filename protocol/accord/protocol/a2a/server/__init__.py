"""The A2A server side of an Accord agent (docs/a2a-server.md).

app.py               build_agent_app: the Starlette app, its gate, stores and routes
gate.py              what every request passes before the SDK sees it (auth, limits, access)
errors.py            contract errors as JSON-RPC and HTTP+JSON answers
executor.py          ContractExecutor: a turn in, a reply out, statuses as the contract says
turn.py              one turn of a task: its message, skill, principal and envelope
parts.py             building a reply's parts and artifacts
status_emitter.py    status updates with the contract's metadata
skill_gate.py        a skill's access and envelope use, checked before any work
skill_schemas.py     a skill's input and output schemas
delegation.py        the delegation envelope a caller sends, and acting on behalf
card.py              the agent card from the agent's contract; card_schemas.py its schemas
store.py             the durable task store; store_tables.py its tables
derived_store.py     a task store derived from another record (an agent's workflow log)
task_view.py         a task as the server reads it back
send_*.py            idempotent send: the key, its claim, the handler that honours it
cors.py              browser origins; principal_routes.py the extra JSON routes

The names below are loaded on first use (PEP 562), as in the other packages.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accord.protocol.a2a.server.app import (
        build_agent_app,
        push_store_ref,
        send_keys_ref,
        task_store_ref,
        task_store_url,
    )

_APP = "accord.protocol.a2a.server.app"
_WHERE = {
    "build_agent_app": _APP,
    "push_store_ref": _APP,
    "send_keys_ref": _APP,
    "task_store_ref": _APP,
    "task_store_url": _APP,
}

__all__ = ["build_agent_app", "push_store_ref", "send_keys_ref", "task_store_ref", "task_store_url"]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)
