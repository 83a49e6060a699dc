"""A small push notification receiver: checks each request's signature, hands on the body.

What ``accord webhook`` serves, and what a receiver of your own must do (signing.py): take the
body as bytes, recompute the signature with the token you gave in the push config, refuse a
wrong or stale one (401), drop a notification id seen before (retries are at least once), and
answer 2xx quickly (the agent waits a few seconds at most, then retries later).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from accord.contracts.keys import HEALTH_PATH, PUSH_ID_HEADER, PUSH_SIGNATURE_HEADER
from accord.protocol.push.signing import verify

SEEN_CAPACITY: Final = 10_000


@dataclass(frozen=True, slots=True)
class Notification:
    id: str
    path: str
    body: dict[str, Any]

    @property
    def task(self) -> dict[str, Any]:
        """The task (or status update) the notification carries."""
        for key in ("task", "statusUpdate", "artifactUpdate"):
            if isinstance(self.body.get(key), dict):
                value: dict[str, Any] = self.body[key]
                return value
        return {}

    @property
    def task_id(self) -> str:
        task = self.task
        return str(task.get("id") or task.get("taskId") or "")

    @property
    def state(self) -> str:
        return str(self.task.get("status", {}).get("state", ""))


def build_receiver_app(token: str, on_notification: Callable[[Notification], None]) -> Starlette:
    """POST any path: a verified notification goes to ``on_notification`` once per id."""
    seen: OrderedDict[str, None] = OrderedDict()

    async def receive(request: Request) -> Response:
        body = await request.body()
        nid = request.headers.get(PUSH_ID_HEADER, "")
        signature = request.headers.get(PUSH_SIGNATURE_HEADER, "")
        if not nid or not verify(token, nid, body, signature):
            return JSONResponse({"error": "bad or missing signature"}, status_code=401)
        if nid in seen:
            return JSONResponse({"status": "duplicate"})
        seen[nid] = None
        if len(seen) > SEEN_CAPACITY:
            seen.popitem(last=False)
        try:
            parsed = json.loads(body)
        except ValueError:
            return JSONResponse({"error": "not JSON"}, status_code=400)
        on_notification(
            Notification(nid, request.url.path, parsed if isinstance(parsed, dict) else {})
        )
        return JSONResponse({"status": "ok"})

    async def healthz(_: Request) -> Response:
        return JSONResponse({"status": "ok", "service": "webhook"})

    return Starlette(
        routes=[
            Route(HEALTH_PATH, healthz, methods=["GET"]),
            Route("/{path:path}", receive, methods=["POST"]),
        ]
    )
