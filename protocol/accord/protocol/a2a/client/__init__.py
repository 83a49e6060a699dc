"""The A2A client of Accord (docs/a2a-client.md): any A2A 1.0 agent, over JSON-RPC or HTTP+JSON.

agent.py    A2AClient: send, stream, follow, get, cancel; retries by the contract's codes
card.py     an agent's card, fetched and checked (origin, contract extension, bindings)
view.py     TaskView: a task (or a Message reply) as the contract reads it
wire.py     the two bindings' requests and answers
schemas.py  the skills' schemas a card names, for checking answers
routes.py   an agent's extra JSON routes (``/approvals``, ``/stats``)

The names below are loaded on first use (PEP 562): reading a view must not pay for the client's
HTTP stack.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accord.protocol.a2a.client.agent import (
        DEFAULT_TIMEOUT,
        A2AClient,
        ResolvedCard,
        TaskView,
        new_traceparent,
    )

_AGENT = "accord.protocol.a2a.client.agent"
_WHERE = {
    "A2AClient": _AGENT,
    "DEFAULT_TIMEOUT": _AGENT,
    "ResolvedCard": _AGENT,
    "TaskView": _AGENT,
    "new_traceparent": _AGENT,
}

__all__ = ["DEFAULT_TIMEOUT", "A2AClient", "ResolvedCard", "TaskView", "new_traceparent"]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)
