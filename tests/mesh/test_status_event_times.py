"""Each status message of the orchestrator names the workflow log event it reports, with its
time from the log (issue #36: node timings for any reader, live and afterwards).

Real processes (the shared mesh), read as any A2A 1.0 client reads them: JSON-RPC over HTTP,
the stream as Server-Sent Events. A request that asks the customer a question, then the answer
that lets it finish (a denial: the shared mesh's data stays as it was): the facts every
streamed status message carried are the facts the task's history has when it is read back with
GetTask, in log order, and every node that ran has its start and end times.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any, Final

import httpx
import pytest

from accord.contracts.status import Status
from accord.runtime.workflow.event_facts import WORKFLOW_EVENT_KEY
from tests.mesh.support import Mesh, token, until

pytestmark = pytest.mark.timeout(120)

CUSTOMER: Final = "C-01"
HEADERS: Final = {"A2A-Version": "1.0", "Content-Type": "application/json"}
NOT_SHOWN: Final = {"checks"}  # the join: the refund's progress lines never name it


def _facts(message: dict[str, Any]) -> dict[str, Any] | None:
    for part in message.get("parts", []):
        data = part.get("data")
        if isinstance(data, dict) and WORKFLOW_EVENT_KEY in data:
            return dict(data[WORKFLOW_EVENT_KEY])
    return None


async def _stream(client: httpx.AsyncClient, url: str, message: dict[str, Any]) -> list[Any]:
    """SendStreamingMessage: the facts of every status update's message, as they came."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {"message": message},
    }
    seen: list[Any] = []
    async with client.stream("POST", url, json=body, headers={"Accept": "text/event-stream"}) as r:
        assert r.status_code == 200
        async for line in r.aiter_lines():
            if not line.startswith("data:"):
                continue
            event = json.loads(line.removeprefix("data:"))
            assert "error" not in event, event
            update = event["result"].get("statusUpdate")
            facts = _facts(update["status"].get("message") or {}) if update else None
            if facts is not None:
                seen.append((update["taskId"], facts))
    return seen


def _log(mesh: Mesh, task_id: str) -> list[tuple[int, str, str | None, float]]:
    with sqlite3.connect(mesh.data_dir / "orchestrator-workflows.db") as conn:
        rows = conn.execute(
            "SELECT seq, type, node, at FROM workflow_events WHERE workflow_id = ? ORDER BY seq",
            (task_id,),
        ).fetchall()
    return [(int(s), str(t), n, float(a)) for s, t, n, a in rows]


def _time(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


async def test_status_messages_carry_the_log_events_times_live_and_read_back(mesh: Mesh) -> None:
    bearer = {"Authorization": f"Bearer {token(CUSTOMER)}", **HEADERS}
    async with httpx.AsyncClient(headers=bearer, timeout=60) as client:
        first = {
            "messageId": "times-1",
            "role": "ROLE_USER",
            "parts": [{"text": "我想退款"}],
            "metadata": {"skill": "refund.request"},
        }
        live = await _stream(client, mesh.orchestrator, first)
        assert live, "no status message carried workflow facts"
        task_id = live[0][0]
        waiting = await until(mesh, CUSTOMER, task_id, Status.WAITING, Status.COMPLETED)
        assert waiting.status is Status.WAITING  # it asked which order
        answer = {
            "messageId": "times-2",
            "role": "ROLE_USER",
            "taskId": task_id,
            "parts": [{"text": "订单 O-1002 鞋码不合适"}],
        }
        live += await _stream(client, mesh.orchestrator, answer)
        done = await until(mesh, CUSTOMER, task_id, Status.COMPLETED, Status.FAILED)
        assert done.status is Status.COMPLETED, done
        got = await client.post(
            mesh.orchestrator,
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "GetTask",
                "params": {"id": task_id, "historyLength": 200},
            },
        )
    task = got.json()["result"]
    messages = [*task.get("history", []), task["status"].get("message") or {}]
    read = [f for m in messages if (f := _facts(m)) is not None]

    streamed = [facts for tid, facts in live if tid == task_id]
    # The same facts, live and read back, in the log's order.
    assert read == streamed
    seqs = [f["seq"] for f in read]
    assert seqs == sorted(set(seqs)), seqs
    # Every fact is its log event: type, node and time (to the millisecond).
    log = {seq: (kind, node, at) for seq, kind, node, at in _log(mesh, task_id)}
    for f in read:
        kind, node, at = log[f["seq"]]
        assert (f["event"], f["node"]) == (kind, node)
        assert abs(_time(f["at"]) - at) < 0.001, (f, at)
    # Every node that ran has its start and end: a line when it ended, with when it started.
    ran = {node for _, kind, node, _ in _log(mesh, task_id) if kind == "node_output"}
    ended = {f["node"]: f for f in read if f["event"] == "node_output"}
    assert ran - NOT_SHOWN == set(ended), (ran, set(ended))
    assert {"intake", "order", "policy", "risk", "decide"} <= set(ended)  # decide: no start line
    for node, f in ended.items():
        assert _time(f["started"]) <= _time(f["at"]), (node, f)
