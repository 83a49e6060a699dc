"""What the A2A 1.0 specification fixes of an answer, and nothing the agent may choose: the
projection tests/interop/test_a2a_differential.py compares between a bare a2a-sdk agent and an
Accord agent. Its docstring says what is left out and why.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

Json = Any


def media_type(response: httpx.Response) -> str:
    """The Content-Type without parameters (``charset`` is the server's choice)."""
    return str(response.headers.get("content-type", "")).split(";")[0].strip()


def parts(message_or_artifact: Json) -> list[tuple[str, Json]]:
    """Each part as (its kind, its content): the text, the data, or the file's name and
    reference. ``mediaType`` of a text part and ``metadata`` are the agent's to give."""
    seen: list[tuple[str, Json]] = []
    for part in message_or_artifact.get("parts", []):
        for kind in ("text", "data", "raw", "url"):
            if kind in part:
                seen.append((kind, part[kind]))
    return seen


def message(m: Json) -> Json:
    """A Message: its role and parts; whether it names a task (a reply must not)."""
    return {"role": m.get("role"), "parts": parts(m), "has_task_id": bool(m.get("taskId"))}


def artifacts(task_or_event: Json) -> list[Json]:
    return [{"name": a.get("name"), "parts": parts(a)} for a in task_or_event.get("artifacts", [])]


def task(t: Json) -> Json:
    """A Task: its state, artifacts, the messages of its history that say something, the
    question of an input-required status, and whether every id in it agrees with the task's."""
    status = t.get("status", {})
    state = status.get("state")
    history = t.get("history", [])
    projected: Json = {
        "kind": "task",
        "state": state,
        "has_id": bool(t.get("id")),
        "has_context": bool(t.get("contextId")),
        "artifacts": artifacts(t),
        "history": [message(m) for m in history if m.get("parts")],
        "ids_agree": all(
            m.get("taskId") in (None, t.get("id")) and m.get("contextId") == t.get("contextId")
            for m in [*history, *([status["message"]] if "message" in status else [])]
            if m.get("role") == "ROLE_AGENT"
        ),
    }
    if state == "TASK_STATE_INPUT_REQUIRED":
        projected["question"] = message(status.get("message", {}))
    return projected


def result(r: Json) -> Json:
    """A SendMessage result (JSON-RPC ``result`` or HTTP+JSON body): a task or a message."""
    if "task" in r:
        return task(r["task"])
    if "message" in r:
        return {"kind": "message", **message(r["message"])}
    return {"kind": sorted(r)}


def error_info(details: list[Json]) -> list[tuple[str, str]]:
    return [
        (d.get("domain", ""), d.get("reason", ""))
        for d in details
        if str(d.get("@type", "")).endswith("google.rpc.ErrorInfo")
    ]


def rpc_error(e: Json) -> Json:
    """A JSON-RPC error: its code and its A2A ErrorInfo (domain, reason); message is free text."""
    data = e.get("data")
    return {"code": e.get("code"), "error_info": error_info(data if isinstance(data, list) else [])}


def rpc_envelope(response: httpx.Response, request_id: Json, project: Any = result) -> Json:
    """A JSON-RPC answer: HTTP status, media type, ``jsonrpc``, the echoed ``id``, and a
    result (projected by ``project``) or an error."""
    body = response.json()
    seen: Json = {
        "http": response.status_code,
        "media_type": media_type(response),
        "jsonrpc": body.get("jsonrpc"),
        "id_echoed": body.get("id") == request_id,
    }
    if "error" in body:
        seen["error"] = rpc_error(body["error"])
    else:
        seen["result"] = project(body["result"])
    return seen


def rest_error(response: httpx.Response) -> Json:
    """An HTTP+JSON error (AIP-193): HTTP status, media type, ``google.rpc.Status`` status and
    code, and its ErrorInfo."""
    error = response.json().get("error", {})
    return {
        "http": response.status_code,
        "media_type": media_type(response),
        "status": error.get("status"),
        "code": error.get("code"),
        "error_info": error_info(error.get("details", [])),
    }


def sse_events(response: httpx.Response) -> list[Json]:
    """The JSON of each ``data:`` line of a Server-Sent Events body."""
    return [
        json.loads(line.removeprefix("data:").strip())
        for line in response.text.splitlines()
        if line.startswith("data:")
    ]


def stream_event(event: Json) -> Json:
    """One StreamResponse: its kind, and what that kind fixes."""
    if "task" in event:
        return task(event["task"])
    if "message" in event:
        return {"kind": "message", **message(event["message"])}
    if "statusUpdate" in event:
        return {"kind": "statusUpdate", "state": event["statusUpdate"]["status"].get("state")}
    if "artifactUpdate" in event:
        update = event["artifactUpdate"]
        return {
            "kind": "artifactUpdate",
            "artifact": {
                "name": update["artifact"].get("name"),
                "parts": parts(update["artifact"]),
            },
            "append": bool(update.get("append")),
        }
    return {"kind": sorted(event)}


def stream_ids_agree(events: list[Json]) -> bool:
    """Every event of a task stream names the task (and context) its first event opened."""
    first = events[0].get("task") if events else None
    if first is None:
        return True
    for event in events[1:]:
        update = event.get("statusUpdate") or event.get("artifactUpdate") or {}
        if update.get("taskId") != first["id"] or update.get("contextId") != first["contextId"]:
            return False
    return True


def all_messages(body: Json) -> list[Json]:
    """Every Message anywhere in an answer: results, history, status messages, stream events."""
    found: list[Json] = []

    def walk(node: Json) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "message" and isinstance(v, dict):  # a result, a status, an event
                    found.append(v)
                if k == "history" and isinstance(v, list):
                    found.extend(m for m in v if isinstance(m, dict))
                walk(v)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(body)
    return found
