"""A2A 1.0 on the wire, spoken with plain httpx: JSON-RPC, its SSE stream, and HTTP+JSON.

The kit does not use an A2A client library so that what it checks is what any implementation,
in any language, puts on the wire. Every answer is kept as received (HTTP status, headers, JSON)
for the report.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import httpx
from a2a.utils.constants import PROTOCOL_VERSION_1_0, VERSION_HEADER

from accord.contracts.errors import (
    FOREIGN_JSONRPC_TO_CODE,
    JSONRPC_TO_CODE,
    ErrorCode,
    error_info_code,
)
from accord.contracts.keys import ERROR_DATA_KIND, STATUS_META_KEY

CARD_PATH: Final = "/.well-known/agent-card.json"
VERSION_HEADERS: Final = {VERSION_HEADER: PROTOCOL_VERSION_1_0}
JSONRPC_BINDING: Final = "JSONRPC"
REST_BINDING: Final = "HTTP+JSON"


@dataclass
class Exchange:
    """One HTTP exchange as the kit saw it."""

    sent: dict[str, Any]
    status: int
    headers: Mapping[str, str]
    body: Any  # parsed JSON, or the text when it was not JSON
    events: list[dict[str, Any]] = field(default_factory=list)  # SSE data payloads

    @property
    def error(self) -> dict[str, Any] | None:
        """The JSON-RPC ``error`` object (or the REST ``error`` object)."""
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), dict):
            return dict(self.body["error"])
        return None

    @property
    def result(self) -> Any:
        return self.body.get("result") if isinstance(self.body, dict) else None

    def shown(self) -> dict[str, Any]:
        out: dict[str, Any] = {"http": self.status}
        if self.events:
            out["events"] = self.events
        else:
            out["body"] = self.body
        return out


def error_code_of(error: Mapping[str, Any] | None) -> ErrorCode | None:
    """The contract code of a JSON-RPC error: Accord's ErrorInfo first, then error.code."""
    if error is None:
        return None
    reason = accord_reason(error.get("data"))
    if reason is not None:
        return reason
    raw = error.get("code")
    if isinstance(raw, int) and not isinstance(raw, bool):
        return JSONRPC_TO_CODE.get(raw) or FOREIGN_JSONRPC_TO_CODE.get(raw)
    return None


def accord_reason(infos: object) -> ErrorCode | None:
    """The contract code of the first ErrorInfo that carries one (ours by its reason, A2A's by
    the code in its metadata)."""
    if not isinstance(infos, list):
        return None
    for info in infos:
        code = error_info_code(info)
        if code is not None:
            return code
    return None


def user_message(
    data: Mapping[str, Any] | None,
    *,
    text: str | None = None,
    task_id: str | None = None,
    context_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if text:
        parts.append({"text": text})
    if data is not None:
        parts.append({"data": dict(data), "mediaType": "application/json"})
    message: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": parts,
    }
    if task_id:
        message["taskId"] = task_id
    if context_id:
        message["contextId"] = context_id
    if metadata:
        message["metadata"] = dict(metadata)
    return message


# -- reading tasks and status updates (wire JSON) -----------------------------------------------


def task_of(result: Any) -> dict[str, Any] | None:
    """The Task of a SendMessage result (``{"task": ...}``) or a GetTask result (the Task)."""
    if not isinstance(result, dict):
        return None
    if isinstance(result.get("task"), dict):
        return dict(result["task"])
    if "status" in result and "id" in result:
        return dict(result)
    return None


CARRIED_META: Final = "metadataOfTaskOrUpdate"
"""Where the kit keeps, beside a TaskStatus it observed, the :data:`STATUS_META_KEY` entry of the
Task's or TaskStatusUpdateEvent's metadata that carried it (where an agent of 0.3 writes it): a
TaskStatus has no metadata of its own. Not a wire field; a report shows it as the kit's."""


def status_of(carrier: Mapping[str, Any]) -> dict[str, Any] | None:
    """The TaskStatus of a Task or a TaskStatusUpdateEvent, with the status metadata of its
    carrier under :data:`CARRIED_META` (when there is one)."""
    status = carrier.get("status")
    if not isinstance(status, dict):
        return None
    meta = carrier.get("metadata")
    found = meta.get(STATUS_META_KEY) if isinstance(meta, Mapping) else None
    if not isinstance(found, Mapping):
        return status
    return {**status, CARRIED_META: {STATUS_META_KEY: dict(found)}}


def _entry(meta: Any) -> dict[str, Any] | None:
    found = meta.get(STATUS_META_KEY) if isinstance(meta, Mapping) else None
    return dict(found) if isinstance(found, Mapping) else None


def status_meta(status: Mapping[str, Any]) -> dict[str, Any] | None:
    """The status metadata of an observed status: its carrier's, else its message's."""
    found = _entry(status.get(CARRIED_META))
    if found is None:
        # compat.STATUS_META_IN_MESSAGE: agents of 0.1 and 0.2 wrote it there only.
        message = status.get("message")
        found = _entry(message.get("metadata") if isinstance(message, Mapping) else None)
    return found


def meta_error_code(status: Mapping[str, Any]) -> str | None:
    meta = status_meta(status) or {}
    error = meta.get("error")
    code = error.get("code") if isinstance(error, Mapping) else None
    return code if isinstance(code, str) else None


def data_part_error_code(status: Mapping[str, Any]) -> str | None:
    message = status.get("message")
    parts = message.get("parts") if isinstance(message, Mapping) else None
    for part in parts if isinstance(parts, list) else []:
        data = part.get("data") if isinstance(part, Mapping) else None
        if isinstance(data, Mapping) and data.get("kind") == ERROR_DATA_KIND:
            code = data.get("code")
            return code if isinstance(code, str) else None
    return None


def status_updates(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every TaskStatus a stream carried, in order (the initial Task's status first)."""
    out: list[dict[str, Any]] = []
    for event in events:
        result = event.get("result") if isinstance(event, dict) else None
        if not isinstance(result, dict):
            continue
        carrier = result.get("task") or result.get("statusUpdate")
        status = status_of(carrier) if isinstance(carrier, dict) else None
        if status is not None:
            out.append(status)
    return out


def stream_task_id(events: list[dict[str, Any]]) -> str | None:
    for event in events:
        result = event.get("result") if isinstance(event, dict) else None
        if not isinstance(result, dict):
            continue
        for key in ("task", "statusUpdate", "artifactUpdate"):
            item = result.get(key)
            if isinstance(item, dict):
                found = item.get("id") if key == "task" else item.get("taskId")
                if isinstance(found, str):
                    return found
    return None


# -- the client ---------------------------------------------------------------------------------


class A2AWire:
    """JSON-RPC and HTTP+JSON calls against one agent, with the kit's timeout."""

    def __init__(self, client: httpx.AsyncClient, rpc_url: str, rest_url: str | None) -> None:
        self.client = client
        self.rpc_url = rpc_url
        self.rest_url = rest_url.rstrip("/") if rest_url else None

    async def rpc(
        self, method: str, params: Mapping[str, Any], headers: Mapping[str, str]
    ) -> Exchange:
        payload = {
            "jsonrpc": "2.0",
            "id": uuid.uuid4().hex[:8],
            "method": method,
            "params": dict(params),
        }
        response = await self.client.post(
            self.rpc_url, json=payload, headers={**VERSION_HEADERS, **headers}
        )
        return Exchange(payload, response.status_code, response.headers, _json(response.text))

    async def stream(
        self, method: str, params: Mapping[str, Any], headers: Mapping[str, str]
    ) -> Exchange:
        """A streaming method: every SSE ``data:`` payload until the server ends the stream."""
        payload = {
            "jsonrpc": "2.0",
            "id": uuid.uuid4().hex[:8],
            "method": method,
            "params": dict(params),
        }
        events: list[dict[str, Any]] = []
        body: Any = None
        request_headers = {**VERSION_HEADERS, **headers, "Accept": "text/event-stream"}
        async with self.client.stream(
            "POST", self.rpc_url, json=payload, headers=request_headers
        ) as response:
            if not response.headers.get("content-type", "").startswith("text/event-stream"):
                body = _json((await response.aread()).decode(errors="replace"))
                return Exchange(payload, response.status_code, response.headers, body)
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    parsed = _json(line[5:].strip())
                    if isinstance(parsed, dict):
                        events.append(parsed)
        return Exchange(payload, response.status_code, response.headers, body, events)

    async def rest(
        self, method: str, path: str, headers: Mapping[str, str], body: Any = None
    ) -> Exchange | None:
        if self.rest_url is None:
            return None
        response = await self.client.request(
            method,
            self.rest_url + path,
            headers={**VERSION_HEADERS, **headers},
            json=body if body is not None else None,
        )
        sent = {"method": method, "path": path, **({"body": body} if body is not None else {})}
        return Exchange(sent, response.status_code, response.headers, _json(response.text))


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
