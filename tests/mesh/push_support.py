"""Push config calls as any A2A client makes them: JSON-RPC and HTTP+JSON over plain httpx."""

from __future__ import annotations

from typing import Any

import httpx

from tests.mesh.support import Mesh, token


def _headers(subject: str, *roles: str) -> dict[str, str]:
    return {"A2A-Version": "1.0", "Authorization": f"Bearer {token(subject, *roles)}"}


async def rpc(mesh: Mesh, subject: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC call to the orchestrator as ``subject`` (a customer); the whole answer."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(mesh.orchestrator + "/", json=body, headers=_headers(subject))
    answer: dict[str, Any] = response.json()
    return answer


async def rest(
    mesh: Mesh, subject: str, method: str, path: str, body: dict[str, Any] | None = None
) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.request(
            method, mesh.orchestrator + path, json=body, headers=_headers(subject)
        )


async def create_config(
    mesh: Mesh,
    subject: str,
    task_id: str,
    url: str,
    push_token: str = "",
    authentication: dict[str, str] | None = None,
) -> dict[str, Any]:
    """CreateTaskPushNotificationConfig; ``push_token`` and ``authentication`` optional, as in
    A2A 1.0.1 (an empty token is not sent)."""
    params: dict[str, Any] = {"taskId": task_id, "url": url}
    if push_token:
        params["token"] = push_token
    if authentication is not None:
        params["authentication"] = authentication
    return await rpc(mesh, subject, "CreateTaskPushNotificationConfig", params)
