"""Valid requests for each service and wire, built from the exported contracts: the seeds."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from typing import Any, Final

from accord.contracts.agents import shipped_agent_contracts
from accord.contracts.keys import SKILL_META_KEY
from accord.contracts.tools import shipped_tool_contracts
from tests.hostile.fuzz.generate import example

AGENT_CONTRACTS: Final = {
    "orchestrator": "orchestrator",
    "policy": "policy-check",
    "risk": "risk-check",
}
TOOLS: Final = {
    "commerce": ("orders.lookup", "customers.history", "orders.customer_history"),
    "payments": ("refunds.get", "refunds.issue", "refunds.list"),
}
MCP_PROTOCOL_VERSION: Final = "2025-11-25"


@dataclass(frozen=True)
class Seed:
    """One valid request: the HTTP method and path, and its JSON body (None: no body)."""

    method: str
    path: str
    body: Any
    wire: str  # "jsonrpc", "rest" or "mcp"


def _message(skill: str, data: Any, rnd: random.Random) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"data": data}]
    if rnd.random() < 0.5:
        parts.append(
            {"text": rnd.choice(["鞋码不合适，想退款，订单 O-1001", "refund O-1001", "hi"])}
        )
    return {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": parts,
        "metadata": {SKILL_META_KEY: skill},
    }


def a2a_seed(service: str, rnd: random.Random) -> Seed:
    contract = shipped_agent_contracts()[AGENT_CONTRACTS[service]]
    skill = rnd.choice(contract.skills)
    message = _message(skill.id, example(skill.input_schema, rnd), rnd)
    task_id = uuid.uuid4().hex
    kind = rnd.randrange(8)
    if kind < 3:
        rpc = {
            "jsonrpc": "2.0",
            "id": rnd.randint(1, 1000),
            "method": "SendMessage",
            "params": {"message": message, "configuration": {"returnImmediately": True}},
        }
        return Seed("POST", "/", rpc, "jsonrpc")
    if kind == 3:
        return Seed("POST", "/message:send", {"message": message}, "rest")
    if kind == 4:
        rpc = {
            "jsonrpc": "2.0",
            "id": "l",
            "method": "ListTasks",
            "params": {"pageSize": rnd.randint(1, 100)},
        }
        return Seed("POST", "/", rpc, "jsonrpc")
    if kind == 5:
        rpc = {"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": task_id}}
        return Seed("POST", "/", rpc, "jsonrpc")
    if kind == 6:
        rpc = {"jsonrpc": "2.0", "id": 8, "method": "CancelTask", "params": {"id": task_id}}
        return Seed("POST", "/", rpc, "jsonrpc")
    return Seed("POST", f"/tasks/{task_id}:cancel", {}, "rest")


def mcp_seed(service: str, rnd: random.Random) -> Seed:
    tools = shipped_tool_contracts()
    kind = rnd.randrange(6)
    if kind == 0:
        return Seed("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "mcp")
    if kind == 1:
        init = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "initialize",
            "params": {
                "protocolVersion": MCP_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "0"},
            },
        }
        return Seed("POST", "/mcp", init, "mcp")
    contract = tools[rnd.choice(TOOLS[service])]
    arguments = example(contract.input_schema, rnd)
    call = {
        "jsonrpc": "2.0",
        "id": rnd.randint(1, 10_000),
        "method": "tools/call",
        "params": {"name": contract.name, "arguments": arguments},
    }
    return Seed("POST", "/mcp", call, "mcp")


def health_check(wire: str) -> Seed:
    """A correct request that must still succeed on the same connection."""
    if wire == "mcp":
        return Seed("POST", "/mcp", {"jsonrpc": "2.0", "id": 99, "method": "tools/list"}, "mcp")
    return Seed(
        "POST", "/", {"jsonrpc": "2.0", "id": 99, "method": "ListTasks", "params": {}}, "jsonrpc"
    )
