"""A deliberately plain A2A client for the server tests: httpx, both transports, wire JSON.

It maps every error answer to an AccordError with the contract's own readers, so the tests
check what any client would see on the wire.
"""

from __future__ import annotations

import json
import uuid
from types import TracebackType
from typing import Any

import httpx

from accord.contracts.errors import AccordError

VERSION = {"A2A-Version": "1.0"}


class Answer:
    def __init__(self, status: int, body: Any, error: AccordError | None) -> None:
        self.status = status
        self.body = body
        self.error = error

    @property
    def task(self) -> dict[str, Any]:
        assert self.error is None, f"expected a task, got {self.error!r}"
        body = self.body
        task: dict[str, Any] = body.get("task", body)
        return task

    @property
    def state(self) -> str:
        return str(self.task["status"]["state"])


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **VERSION}


def message(
    data: dict[str, Any] | None = None,
    *,
    text: str | None = None,
    task_id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts.append({"text": text})
    if data is not None:
        parts.append({"data": data})
    msg: dict[str, Any] = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": parts}
    if task_id:
        msg["taskId"] = task_id
    if metadata:
        msg["metadata"] = metadata
    return msg


class AgentClient:
    def __init__(self, url: str, transport: str) -> None:
        self.url = url
        self.transport = transport
        self.http = httpx.Client(base_url=url, timeout=30.0)

    def __enter__(self) -> AgentClient:
        return self

    def __exit__(self, *exc: object | TracebackType) -> None:
        self.http.close()

    # -- raw --------------------------------------------------------------------------------
    def rpc(self, method: str, params: dict[str, Any], headers: dict[str, str]) -> Answer:
        r = self.http.post(
            "/",
            json={"jsonrpc": "2.0", "id": 7, "method": method, "params": params},
            headers=headers,
        )
        return _rpc_answer(r)

    def rest(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        body: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
    ) -> Answer:
        r = self.http.request(method, path, json=body, headers=headers, params=params)
        return _rest_answer(r)

    # -- operations -------------------------------------------------------------------------
    def send(
        self, headers: dict[str, str], msg: dict[str, Any], *, blocking: bool = True
    ) -> Answer:
        params: dict[str, Any] = {"message": msg}
        if not blocking:
            params["configuration"] = {"returnImmediately": True}
        if self.transport == "jsonrpc":
            return self.rpc("SendMessage", params, headers)
        return self.rest("POST", "/message:send", headers, params)

    def get(self, headers: dict[str, str], task_id: str) -> Answer:
        if self.transport == "jsonrpc":
            return self.rpc("GetTask", {"id": task_id}, headers)
        return self.rest("GET", f"/tasks/{task_id}", headers)

    def cancel(self, headers: dict[str, str], task_id: str) -> Answer:
        if self.transport == "jsonrpc":
            return self.rpc("CancelTask", {"id": task_id}, headers)
        return self.rest("POST", f"/tasks/{task_id}:cancel", headers, {})

    def list(self, headers: dict[str, str]) -> Answer:
        if self.transport == "jsonrpc":
            return self.rpc("ListTasks", {}, headers)
        return self.rest("GET", "/tasks", headers)

    def subscribe(self, headers: dict[str, str], task_id: str) -> Answer:
        """The first event of a subscription, or the error that refused it."""
        if self.transport == "jsonrpc":
            request = self.http.build_request(
                "POST",
                "/",
                headers=headers,
                json={
                    "jsonrpc": "2.0",
                    "id": 9,
                    "method": "SubscribeToTask",
                    "params": {"id": task_id},
                },
            )
        else:
            request = self.http.build_request("GET", f"/tasks/{task_id}:subscribe", headers=headers)
        r = self.http.send(request, stream=True)
        try:
            if "text/event-stream" not in r.headers.get("content-type", ""):
                r.read()
                return _rpc_answer(r) if self.transport == "jsonrpc" else _rest_answer(r)
            for line in r.iter_lines():
                if line.startswith("data:"):
                    event = json.loads(line[5:])
                    if "error" in event:
                        return Answer(
                            r.status_code, event, AccordError.from_jsonrpc_error(event["error"])
                        )
                    return Answer(r.status_code, event.get("result", event), None)
            return Answer(r.status_code, None, None)
        finally:
            r.close()


def _rpc_answer(r: httpx.Response) -> Answer:
    body = r.json()
    if "error" in body:
        return Answer(r.status_code, body, AccordError.from_jsonrpc_error(body["error"]))
    return Answer(r.status_code, body["result"], None)


def _rest_answer(r: httpx.Response) -> Answer:
    body = r.json() if r.content else None
    if r.status_code >= 400:
        return Answer(r.status_code, body, AccordError.from_rest(r.status_code, body))
    return Answer(r.status_code, body, None)
